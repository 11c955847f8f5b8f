package conformance

import (
	"net/http"
	"reflect"
	"testing"
)

// TestSelectors checks label and field selectors on lists, the errors for bad
// ones (golden 42, 43), and the pod fields spec.nodeName and status.phase
// (golden 44).
func TestSelectors(t *testing.T) {
	t.Parallel()
	e := target

	t.Run("configmaps", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		// Every object of the case carries set=sel, and every selector
		// requires it, so that what a cluster puts in a namespace by itself
		// (kube-root-ca.crt) does not count.
		e.createCM(t, ns, "w", map[string]string{"set": "sel"}, nil)
		e.createCM(t, ns, "x", map[string]string{"set": "sel", "app": "web", "tier": "front"}, nil)
		e.createCM(t, ns, "y", map[string]string{"set": "sel", "app": "web", "tier": "back"}, nil)
		e.createCM(t, ns, "z", map[string]string{"set": "sel", "app": "db"}, nil)
		for _, tc := range []struct {
			label, field string
			want         []string
		}{
			{"app=web", "", []string{"x", "y"}},
			{"app==web", "", []string{"x", "y"}},
			{"app!=web", "", []string{"w", "z"}},
			{"app in (web,db)", "", []string{"x", "y", "z"}},
			{"app notin (web)", "", []string{"w", "z"}},
			{"tier", "", []string{"x", "y"}},
			{"!tier", "", []string{"w", "z"}},
			{"app=web,tier=back", "", []string{"y"}},
			{"app=nothing", "", []string{}},
			{"", "metadata.name=x", []string{"x"}},
			{"", "metadata.name==x", []string{"x"}},
			{"", "metadata.name!=x", []string{"w", "y", "z"}},
			{"", "metadata.namespace=" + ns, []string{"w", "x", "y", "z"}},
			{"", "metadata.namespace!=" + ns, []string{}},
			{"", "metadata.name=x,metadata.name=y", []string{}},
			{"app=web", "metadata.name!=x", []string{"y"}},
		} {
			t.Run(tc.label+"|"+tc.field, func(t *testing.T) {
				kv := []string{"labelSelector", "set=sel"}
				if tc.label != "" {
					kv[1] += "," + tc.label
				}
				if tc.field != "" {
					kv = append(kv, "fieldSelector", tc.field)
				}
				got := names(items(t, expect(t, e.get(t, cmPath(ns)+q(kv...)), http.StatusOK)))
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
		t.Run("bad-label-selector", func(t *testing.T) {
			checkGoldenStatus(t, e.get(t, cmPath(ns)+q("labelSelector", "a in (")), "42-list-bad-label-selector")
		})
		t.Run("bad-field-selector", func(t *testing.T) {
			checkGoldenStatus(t, e.get(t, cmPath(ns)+q("fieldSelector", "spec.nope=x")), "43-list-bad-field-selector")
		})
	})

	t.Run("pods", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		e.ensureDefaultServiceAccount(t, ns)
		// Node names unique to the case, so that the all-namespaces list of
		// golden 44 sees only this case's pods. No such nodes exist: a real
		// scheduler leaves pods with a nodeName alone.
		nodeA, nodeB := ns+"-node-a", ns+"-node-b"
		podsPath := "/api/v1/namespaces/" + ns + "/pods"
		expect(t, e.post(t, podsPath, pod("p1", nodeA, nil)), http.StatusCreated)
		p2 := expect(t, e.post(t, podsPath, pod("p2", nodeB, nil)), http.StatusCreated)
		expect(t, e.post(t, podsPath, pod("p3", nodeA, nil)), http.StatusCreated)
		for _, p := range []obj{p2} {
			if ph := str(p, "status", "phase"); ph != "Pending" {
				t.Fatalf("new pod %s has phase %q, want Pending", name(p), ph)
			}
		}
		running := clone(p2)
		running["status"].(map[string]any)["phase"] = "Running"
		expect(t, e.put(t, podsPath+"/p2/status", running), http.StatusOK)

		for _, tc := range []struct {
			path, field string
			want        []string
		}{
			{"/api/v1/pods", "spec.nodeName=" + nodeA, []string{"p1", "p3"}}, // golden 44's form
			{podsPath, "spec.nodeName=" + nodeB, []string{"p2"}},
			{podsPath, "spec.nodeName!=" + nodeA, []string{"p2"}},
			{podsPath, "spec.nodeName=", []string{}},
			{podsPath, "status.phase=Running", []string{"p2"}},
			{podsPath, "status.phase=Pending", []string{"p1", "p3"}},
			{podsPath, "status.phase!=Running,spec.nodeName=" + nodeA, []string{"p1", "p3"}},
			{podsPath, "status.phase=Running,metadata.name=p1", []string{}},
		} {
			t.Run(tc.field, func(t *testing.T) {
				list := expect(t, e.get(t, tc.path+q("fieldSelector", tc.field)), http.StatusOK)
				if got := names(items(t, list)); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s?fieldSelector=%s: got %v, want %v", tc.path, tc.field, got, tc.want)
				}
				if str(list, "kind") != "PodList" {
					t.Errorf("kind %q, want PodList", str(list, "kind"))
				}
			})
		}
		t.Run("unknown-pod-field", func(t *testing.T) {
			checkStatus(t, e.get(t, podsPath+q("fieldSelector", "spec.nope=x")), http.StatusBadRequest, "BadRequest",
				"field label not supported: spec.nope")
		})
	})
}
