package conformance

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestCoreMoreKinds checks what kube-apiserver does to the rest of the core
// kinds beyond storing them: a claim's dataSource is copied to
// dataSourceRef; new claims and volumes carry the pvc-protection and
// pv-protection finalizers and start Pending; a claim's spec is immutable
// but for requests; a volume with the Recycle policy is written with a
// deprecation Warning; a replication controller's selector, labels and
// replicas default from its template, its generation follows its spec, not
// its status, whose counts are checked; a pod template's generation
// follows its template; a limit range's container defaults come from its
// max, and PUT creates one; a new quota's status is reset. Deleting a quota answers with the
// quota, deleting a limit range with a Status.
func TestCoreMoreKinds(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("persistentvolumeclaims", func(t *testing.T) {
		path := "/api/v1/namespaces/" + ns + "/persistentvolumeclaims"
		c := expect(t, e.post(t, path, obj{"metadata": obj{"name": "claim"}, "spec": obj{
			"accessModes": []any{"ReadWriteOnce"}, "resources": obj{"requests": obj{"storage": "1Gi"}},
			"dataSource": obj{"kind": "PersistentVolumeClaim", "name": "other"},
		}}), http.StatusCreated)
		t.Cleanup(func() {
			e.patch(t, path+"/claim", mergePatch, `{"metadata":{"finalizers":null}}`)
		})
		if f, _ := field(c, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{"kubernetes.io/pvc-protection"}) {
			t.Errorf("finalizers %v", f)
		}
		if str(c, "status", "phase") != "Pending" || str(c, "spec", "volumeMode") != "Filesystem" {
			t.Errorf("claim %s", compact(c))
		}
		ref, _ := field(c, "spec", "dataSourceRef")
		if want := (obj{"apiGroup": nil, "kind": "PersistentVolumeClaim", "name": "other"}); !reflect.DeepEqual(ref, map[string]any(want)) {
			t.Errorf("dataSourceRef %v, want %v", ref, want)
		}
		st := checkStatus(t, e.patch(t, path+"/claim", mergePatch, `{"spec":{"accessModes":["ReadWriteMany"]}}`),
			http.StatusUnprocessableEntity, "Invalid", "spec is immutable after creation")
		causes, _ := field(st, "details", "causes")
		if cs, _ := causes.([]any); len(cs) != 1 || str(cs[0].(map[string]any), "field") != "spec" ||
			!strings.Contains(str(cs[0].(map[string]any), "message"), "-  \"ReadWriteOnce\"\n+  \"ReadWriteMany\"\n") {
			t.Errorf("causes %v", causes)
		}
	})

	t.Run("persistentvolumes", func(t *testing.T) {
		// A dry run: nothing is left on a shared cluster.
		r := e.post(t, "/api/v1/persistentvolumes"+q("dryRun", "All"), obj{"metadata": obj{"name": "kapi-conformance-recycle"}, "spec": obj{
			"capacity": obj{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": obj{"path": "/tmp/x"},
			"persistentVolumeReclaimPolicy": "Recycle"}})
		pv := expect(t, r, http.StatusCreated)
		if want := `299 - "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning."`; r.Header.Get("Warning") != want {
			t.Errorf("Warning %q, want %q", r.Header.Get("Warning"), want)
		}
		if f, _ := field(pv, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{"kubernetes.io/pv-protection"}) || str(pv, "status", "phase") != "Pending" ||
			!has(pv, "status", "lastPhaseTransitionTime") || str(pv, "spec", "volumeMode") != "Filesystem" {
			t.Errorf("volume %s", compact(pv))
		}
	})

	t.Run("replicationcontrollers", func(t *testing.T) {
		path := "/api/v1/namespaces/" + ns + "/replicationcontrollers"
		rc := expect(t, e.post(t, path, obj{"metadata": obj{"name": "rc"}, "spec": obj{"replicas": 0, "template": obj{
			"metadata": obj{"labels": obj{"app": "rc"}},
			"spec":     obj{"containers": []any{obj{"name": "app", "image": "nginx"}}},
		}}}), http.StatusCreated)
		if sel, _ := field(rc, "spec", "selector"); !reflect.DeepEqual(sel, map[string]any{"app": "rc"}) || str(rc, "metadata", "labels", "app") != "rc" {
			t.Errorf("defaults %s", compact(rc))
		}
		if g, _ := num(rc, "metadata", "generation"); g != 1 {
			t.Errorf("generation %d, want 1", g)
		}
		st := expect(t, e.patch(t, path+"/rc/status", mergePatch, `{"spec":{"minReadySeconds":9},"status":{"replicas":0,"observedGeneration":1}}`), http.StatusOK)
		if n, _ := num(st, "spec", "minReadySeconds"); n != 0 {
			t.Errorf("a status patch changed spec.minReadySeconds to %d", n)
		}
		checkStatus(t, e.patch(t, path+"/rc/status", mergePatch, `{"status":{"replicas":0,"readyReplicas":1}}`), http.StatusUnprocessableEntity, "Invalid",
			"status.readyReplicas: Invalid value: 1: cannot be greater than status.replicas")
		up := expect(t, e.patch(t, path+"/rc", mergePatch, `{"spec":{"minReadySeconds":3}}`), http.StatusOK)
		if g, _ := num(up, "metadata", "generation"); g != 2 {
			t.Errorf("generation %d after a spec change, want 2", g)
		}
		checkStatus(t, e.post(t, path, obj{"metadata": obj{"name": "bad"}, "spec": obj{}}), http.StatusUnprocessableEntity, "Invalid",
			"spec.selector: Required value, spec.template: Required value")
	})

	t.Run("podtemplates", func(t *testing.T) {
		path := "/api/v1/namespaces/" + ns + "/podtemplates"
		pt := expect(t, e.post(t, path, obj{"metadata": obj{"name": "pt"}, "template": obj{
			"spec": obj{"containers": []any{obj{"name": "app", "image": "nginx"}}},
		}}), http.StatusCreated)
		if g, _ := num(pt, "metadata", "generation"); g != 1 || str(pt, "template", "spec", "restartPolicy") != "Always" {
			t.Errorf("pod template %s", compact(pt))
		}
		up := expect(t, e.patch(t, path+"/pt", mergePatch, `{"metadata":{"labels":{"a":"b"}}}`), http.StatusOK)
		if g, _ := num(up, "metadata", "generation"); g != 1 {
			t.Errorf("generation %d after a label change, want 1", g)
		}
		up = expect(t, e.patch(t, path+"/pt", mergePatch, `{"template":{"metadata":{"labels":{"a":"b"}}}}`), http.StatusOK)
		if g, _ := num(up, "metadata", "generation"); g != 2 {
			t.Errorf("generation %d after a template change, want 2", g)
		}
	})

	t.Run("limitranges", func(t *testing.T) {
		lr := expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/limitranges", obj{"metadata": obj{"name": "lr"}, "spec": obj{"limits": []any{
			obj{"type": "Container", "max": obj{"cpu": "2"}, "min": obj{"memory": "1Mi"}, "defaultRequest": obj{"cpu": "100m"}},
		}}}), http.StatusCreated)
		item, _ := field(lr, "spec", "limits")
		got := item.([]any)[0].(map[string]any)
		if !reflect.DeepEqual(got["default"], map[string]any{"cpu": "2"}) ||
			!reflect.DeepEqual(got["defaultRequest"], map[string]any{"cpu": "100m", "memory": "1Mi"}) {
			t.Errorf("limit range item %v", got)
		}
		// PUT creates a limit range that does not exist.
		expect(t, e.put(t, "/api/v1/namespaces/"+ns+"/limitranges/put", obj{"metadata": obj{"name": "put"}, "spec": obj{"limits": []any{}}}), http.StatusCreated)
		if del := expect(t, e.del(t, "/api/v1/namespaces/"+ns+"/limitranges/lr", nil), http.StatusOK); str(del, "kind") != "Status" {
			t.Errorf("deleting a limit range answered %s, want a Status", compact(del))
		}
	})

	t.Run("resourcequotas", func(t *testing.T) {
		rq := expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/resourcequotas", obj{"metadata": obj{"name": "rq"},
			"spec":   obj{"hard": obj{"pods": "3"}},
			"status": obj{"hard": obj{"pods": "100"}, "used": obj{"pods": "1"}}}), http.StatusCreated)
		if s, _ := field(rq, "status"); !reflect.DeepEqual(s, map[string]any{}) {
			t.Errorf("new quota's status %v, want {}", s)
		}
		if del := expect(t, e.del(t, "/api/v1/namespaces/"+ns+"/resourcequotas/rq", nil), http.StatusOK); str(del, "kind") != "ResourceQuota" {
			t.Errorf("deleting a quota answered %s, want the quota", compact(del))
		}
		checkStatus(t, e.post(t, "/api/v1/namespaces/"+ns+"/resourcequotas", obj{"metadata": obj{"name": "bad"},
			"spec": obj{"hard": obj{"requests.storage": "1Gi"}, "scopes": []any{"BestEffort"}}}),
			http.StatusUnprocessableEntity, "Invalid", `spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource`)
	})
}
