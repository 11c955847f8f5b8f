package conformance

import (
	"net/http"
	"testing"
	"time"
)

// fakeNode is a node name no kubelet runs: pods bound to it are never
// stopped, so their graceful deletion stays pending until a delete with a
// grace period of 0, on a real cluster as on kapi.
const fakeNode = "kapi-conformance-no-kubelet"

// TestPodGracefulDeletion checks kube-apiserver's graceful deletion of pods:
// a pod bound to a node is marked (deletionTimestamp in the future,
// deletionGracePeriodSeconds from the request or the pod's
// terminationGracePeriodSeconds) and kept; a later delete may only shorten
// the period; a delete with gracePeriodSeconds=0 removes it, watchers seeing
// the marked pod then its deletion. An unbound pod, or one that has
// finished, goes at once, watchers also seeing a MODIFIED first. A deleted
// pod is answered with the pod, not a Status.
func TestPodGracefulDeletion(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"

	// create makes a pod (bound to fakeNode when bound), with a watch on it
	// from its creation.
	create := func(t *testing.T, name string, bound bool, grace *int) (obj, *watchStream) {
		t.Helper()
		node := ""
		if bound {
			node = fakeNode
		}
		body := pod(name, node, nil)
		if grace != nil {
			body["spec"].(obj)["terminationGracePeriodSeconds"] = *grace
		}
		p := expect(t, e.post(t, pods, body), http.StatusCreated)
		t.Cleanup(func() { e.del(t, pods+"/"+name+"?gracePeriodSeconds=0", nil) })
		w := e.watch(t, pods+q("watch", "1", "resourceVersion", rv(p), "fieldSelector", "metadata.name="+name))
		return p, w
	}
	grace := func(t *testing.T, o obj) int64 {
		t.Helper()
		n, ok := num(o, "metadata", "deletionGracePeriodSeconds")
		if !ok {
			t.Fatalf("no deletionGracePeriodSeconds in %v", o["metadata"])
		}
		return n
	}
	deletionTime := func(t *testing.T, o obj) time.Time {
		t.Helper()
		ts, err := time.Parse(time.RFC3339, str(o, "metadata", "deletionTimestamp"))
		if err != nil {
			t.Fatalf("deletionTimestamp of %v: %v", o["metadata"], err)
		}
		return ts
	}
	// gone checks that the pod was removed, watchers seeing MODIFIED with
	// a grace period of 0, then DELETED.
	gone := func(t *testing.T, w *watchStream, name string) {
		t.Helper()
		ev := w.next(t, 5*time.Second)
		if ev.Type != "MODIFIED" || !has(ev.Object, "metadata", "deletionTimestamp") || grace(t, ev.Object) != 0 {
			t.Fatalf("event %v %v, want MODIFIED with deletionGracePeriodSeconds 0", ev, ev.Object["metadata"])
		}
		marked := ev
		ev = w.next(t, 5*time.Second)
		if ev.Type != "DELETED" || name != str(ev.Object, "metadata", "name") || rvNum(t, rv(ev.Object)) <= rvNum(t, rv(marked.Object)) {
			t.Fatalf("event %v, want DELETED %s after %v", ev, name, marked)
		}
		checkStatus(t, e.get(t, pods+"/"+name), http.StatusNotFound, "NotFound", `pods "`+name+`" not found`)
	}

	t.Run("unbound", func(t *testing.T) {
		t.Parallel()
		p, w := create(t, "unbound", false, nil)
		got := expect(t, e.del(t, pods+"/unbound", nil), http.StatusOK)
		if str(got, "kind") != "Pod" || str(got, "metadata", "uid") != str(p, "metadata", "uid") {
			t.Errorf("delete answered %s, want the pod", compact(got))
		}
		gone(t, w, "unbound")
	})

	t.Run("bound", func(t *testing.T) {
		t.Parallel()
		_, w := create(t, "bound", true, nil)
		before := time.Now().Truncate(time.Second)
		marked := expect(t, e.del(t, pods+"/bound", nil), http.StatusOK)
		if str(marked, "kind") != "Pod" || grace(t, marked) != 30 {
			t.Fatalf("delete answered %s, want the pod marked with the default terminationGracePeriodSeconds, 30", compact(marked))
		}
		if ts := deletionTime(t, marked); ts.Before(before.Add(29*time.Second)) || ts.After(time.Now().Add(32*time.Second)) {
			t.Errorf("deletionTimestamp %v, want about 30s from now", ts)
		}
		if ev := w.next(t, 5*time.Second); ev.Type != "MODIFIED" || rv(ev.Object) != rv(marked) || grace(t, ev.Object) != 30 {
			t.Fatalf("event %v, want MODIFIED at %s", ev, rv(marked))
		}
		got := expect(t, e.get(t, pods+"/bound"), http.StatusOK)
		if rv(got) != rv(marked) || str(got, "metadata", "deletionTimestamp") != str(marked, "metadata", "deletionTimestamp") {
			t.Errorf("the pod reads back as %v, want it kept as marked", got["metadata"])
		}

		// A delete that does not shorten the period changes nothing.
		for _, query := range []string{"", "?gracePeriodSeconds=30", "?gracePeriodSeconds=60"} {
			again := expect(t, e.del(t, pods+"/bound"+query, nil), http.StatusOK)
			if rv(again) != rv(marked) || grace(t, again) != 30 {
				t.Errorf("delete%s answered %v, want the pod unchanged at %s", query, again["metadata"], rv(marked))
			}
		}
		// A shorter period moves deletionTimestamp earlier by the
		// difference.
		shorter := expect(t, e.del(t, pods+"/bound?gracePeriodSeconds=10", nil), http.StatusOK)
		if grace(t, shorter) != 10 || rv(shorter) == rv(marked) {
			t.Fatalf("delete with gracePeriodSeconds=10 answered %v", shorter["metadata"])
		}
		if d := deletionTime(t, marked).Sub(deletionTime(t, shorter)); d != 20*time.Second {
			t.Errorf("deletionTimestamp moved by %v, want 20s", d)
		}
		if ev := w.next(t, 5*time.Second); ev.Type != "MODIFIED" || rv(ev.Object) != rv(shorter) {
			t.Fatalf("event %v, want MODIFIED at %s", ev, rv(shorter))
		}
		// gracePeriodSeconds=0 removes it.
		expect(t, e.del(t, pods+"/bound?gracePeriodSeconds=0", nil), http.StatusOK)
		gone(t, w, "bound")
	})

	t.Run("bound/terminationGracePeriodSeconds", func(t *testing.T) {
		t.Parallel()
		g := 7
		create(t, "own-grace", true, &g)
		if marked := expect(t, e.del(t, pods+"/own-grace", nil), http.StatusOK); grace(t, marked) != 7 {
			t.Errorf("deletionGracePeriodSeconds %d, want the pod's 7", grace(t, marked))
		}
	})

	t.Run("bound/requested-period", func(t *testing.T) {
		t.Parallel()
		create(t, "asked", true, nil)
		if marked := expect(t, e.del(t, pods+"/asked", obj{"gracePeriodSeconds": 5}), http.StatusOK); grace(t, marked) != 5 {
			t.Errorf("deletionGracePeriodSeconds %d, want the requested 5", grace(t, marked))
		}
	})

	t.Run("bound/negative-period", func(t *testing.T) {
		t.Parallel()
		create(t, "negative", true, nil)
		if marked := expect(t, e.del(t, pods+"/negative?gracePeriodSeconds=-5", nil), http.StatusOK); grace(t, marked) != 1 {
			t.Errorf("deletionGracePeriodSeconds %d, want 1 for a negative request", grace(t, marked))
		}
	})

	t.Run("bound/immediately", func(t *testing.T) {
		t.Parallel()
		_, w := create(t, "now", true, nil)
		expect(t, e.del(t, pods+"/now?gracePeriodSeconds=0", nil), http.StatusOK)
		gone(t, w, "now")
	})

	t.Run("bound/finished", func(t *testing.T) {
		t.Parallel()
		p, _ := create(t, "done", true, nil)
		status := clone(p)
		status["status"] = obj{"phase": "Succeeded"}
		done := expect(t, e.put(t, pods+"/done/status", status), http.StatusOK)
		w := e.watch(t, pods+q("watch", "1", "resourceVersion", rv(done), "fieldSelector", "metadata.name=done"))
		expect(t, e.del(t, pods+"/done", nil), http.StatusOK)
		gone(t, w, "done")
	})
}
