package conformance

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

var uidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestCreate checks creation: system fields, generateName (golden 53), the
// errors for invalid names, namespaces and bodies (golden 46–49, 54–56, 62,
// 413), and dryRun (golden 61).
func TestCreate(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("system-fields", func(t *testing.T) {
		t.Parallel()
		r := e.post(t, cmPath(ns), configMap("sys", nil, map[string]string{"a": "1"}))
		o := expect(t, r, http.StatusCreated)
		if !uidPattern.MatchString(str(o, "metadata", "uid")) {
			t.Errorf("uid %q is not a UUID", str(o, "metadata", "uid"))
		}
		ts, err := time.Parse(time.RFC3339, str(o, "metadata", "creationTimestamp"))
		if err != nil || ts.Year() < 2000 {
			t.Errorf("creationTimestamp %q: %v", str(o, "metadata", "creationTimestamp"), err)
		}
		if rv(o) == "" || str(o, "metadata", "namespace") != ns {
			t.Errorf("created object metadata %v", o["metadata"])
		}
		if str(o, "kind") != "ConfigMap" || str(o, "apiVersion") != "v1" {
			t.Errorf("created object kind %q apiVersion %q", str(o, "kind"), str(o, "apiVersion"))
		}
		got := expect(t, e.get(t, cmPath(ns, "sys")), http.StatusOK)
		if !reflect.DeepEqual(got, o) {
			t.Errorf("get differs from the create response:\n%s\n%s", compact(got), compact(o))
		}
	})

	t.Run("generateName", func(t *testing.T) {
		t.Parallel()
		seen := map[string]bool{}
		for range 3 {
			o := expect(t, e.post(t, cmPath(ns), obj{"metadata": obj{"generateName": "gen-"}}), http.StatusCreated)
			n := name(o)
			if !regexp.MustCompile(`^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$`).MatchString(n) {
				t.Errorf("generated name %q", n)
			}
			if seen[n] {
				t.Errorf("generated name %q twice", n)
			}
			seen[n] = true
			if str(o, "metadata", "generateName") != "gen-" {
				t.Errorf("generateName not kept: %v", o["metadata"])
			}
			checkMetadataLike(t, o, "53-create-generatename")
			expect(t, e.get(t, cmPath(ns, n)), http.StatusOK)
		}
	})

	t.Run("invalid-name", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "Bad_Name"}}), "48-create-invalid-name")
	})

	t.Run("namespace-mismatch", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "x", "namespace": "other"}}), "49-create-name-mismatch-namespace")
	})

	t.Run("missing-namespace", func(t *testing.T) {
		t.Parallel()
		missing := ns + "-missing"
		checkGoldenStatus(t, e.post(t, cmPath(missing), obj{"metadata": obj{"name": "x"}}), "47-create-in-missing-namespace", "nope", missing)
	})

	t.Run("duplicate", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "dup", nil, nil)
		checkGoldenStatus(t, e.post(t, cmPath(ns), configMap("dup", nil, nil)), "46-create-duplicate", "cm1", "dup")
	})

	t.Run("dryRun", func(t *testing.T) {
		t.Parallel()
		o := expect(t, e.post(t, cmPath(ns)+"?dryRun=All", obj{"metadata": obj{"generateName": "dry-"}, "data": obj{"x": "y"}}), http.StatusCreated)
		checkMetadataLike(t, o, "61-dryrun-create")
		if !strings.HasPrefix(name(o), "dry-") || !uidPattern.MatchString(str(o, "metadata", "uid")) || str(o, "data", "x") != "y" {
			t.Errorf("dry-run create returned %s", compact(o))
		}
		checkStatus(t, e.get(t, cmPath(ns, name(o))), http.StatusNotFound, "NotFound", "not found")
		list := expect(t, e.get(t, cmPath(ns)+q("fieldSelector", "metadata.name="+name(o))), http.StatusOK)
		if len(items(t, list)) != 0 {
			t.Errorf("a dry-run create was stored")
		}
	})

	t.Run("bad-dryRun", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.post(t, cmPath(ns)+"?dryRun=Some", obj{"metadata": obj{"name": "dry2"}}), "62-dryrun-bad-value")
		checkStatus(t, e.get(t, cmPath(ns, "dry2")), http.StatusNotFound, "NotFound", "not found")
	})

	t.Run("unsupported-media-type", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.post(t, cmPath(ns), "name: x\n", "Content-Type", "text/plain"), "55-unsupported-media-type")
	})

	t.Run("not-acceptable", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "na", nil, nil)
		checkGoldenStatus(t, e.get(t, cmPath(ns, "na"), "Accept", "application/xml"), "54-not-acceptable")
	})

	t.Run("bad-json", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.post(t, cmPath(ns), "{not json"), "56-bad-json-body")
	})

	t.Run("body-too-large", func(t *testing.T) {
		t.Parallel()
		// kube-apiserver's (and kapi's default) limit is 3 MiB.
		big := strings.Repeat("x", 3<<20)
		r := e.post(t, cmPath(ns), `{"metadata":{"name":"big"},"data":{"k":"`+big+`"}}`)
		checkStatus(t, r, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")
		checkStatus(t, e.get(t, cmPath(ns, "big")), http.StatusNotFound, "NotFound", "not found")
	})
}

// TestUpdate checks updates: the resourceVersion moves, a no-op keeps it,
// stale and missing objects (golden 50, 52), the deployment generation, and
// the status subresource.
func TestUpdate(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("bumps-resourceVersion", func(t *testing.T) {
		t.Parallel()
		v1 := e.createCM(t, ns, "bump", nil, map[string]string{"v": "1"})
		v2 := e.updateData(t, ns, v1, map[string]string{"v": "2"})
		if rv(v2) == rv(v1) || str(v2, "data", "v") != "2" {
			t.Errorf("update returned rv %s (was %s) data %v", rv(v2), rv(v1), v2["data"])
		}
		if str(v2, "metadata", "uid") != str(v1, "metadata", "uid") || str(v2, "metadata", "creationTimestamp") != str(v1, "metadata", "creationTimestamp") {
			t.Errorf("update changed uid or creationTimestamp: %v -> %v", v1["metadata"], v2["metadata"])
		}
		got := expect(t, e.get(t, cmPath(ns, "bump")), http.StatusOK)
		if rv(got) != rv(v2) || str(got, "data", "v") != "2" {
			t.Errorf("get after update: rv %s data %v, want %s", rv(got), got["data"], rv(v2))
		}
	})

	t.Run("no-op-keeps-resourceVersion", func(t *testing.T) {
		t.Parallel()
		v1 := e.createCM(t, ns, "noop", nil, map[string]string{"v": "1"})
		w := e.watch(t, cmPath(ns)+q("watch", "1", "fieldSelector", "metadata.name=noop", "resourceVersion", rv(v1)))
		same := expect(t, e.put(t, cmPath(ns, "noop"), v1), http.StatusOK)
		if rv(same) != rv(v1) {
			t.Errorf("a no-op update moved the resourceVersion %s -> %s", rv(v1), rv(same))
		}
		v2 := e.updateData(t, ns, same, map[string]string{"v": "2"})
		if ev := w.next(t, 5*time.Second); ev.Type != "MODIFIED" || rv(ev.Object) != rv(v2) {
			t.Errorf("first event after a no-op and a change: %v, want MODIFIED at %s (the no-op makes no event)", ev, rv(v2))
		}
	})

	t.Run("unconditional", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "uncond", nil, map[string]string{"v": "1"})
		o := expect(t, e.put(t, cmPath(ns, "uncond"), configMap("uncond", nil, map[string]string{"v": "2"})), http.StatusOK)
		if str(o, "data", "v") != "2" {
			t.Errorf("unconditional update: %v", o["data"])
		}
	})

	t.Run("stale", func(t *testing.T) {
		t.Parallel()
		v1 := e.createCM(t, ns, "stale", nil, map[string]string{"v": "1"})
		e.updateData(t, ns, v1, map[string]string{"v": "2"})
		stale := clone(v1)
		stale["data"] = obj{"v": "3"}
		checkGoldenStatus(t, e.put(t, cmPath(ns, "stale"), stale), "50-update-stale-rv", "cm1", "stale")
	})

	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.put(t, cmPath(ns, "nope"), obj{"metadata": obj{"name": "nope"}}), "52-update-missing")
	})

	t.Run("name-mismatch", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "url-name", nil, nil)
		checkStatus(t, e.put(t, cmPath(ns, "url-name"), configMap("body-name", nil, nil)), http.StatusBadRequest, "BadRequest",
			"the name of the object (body-name) does not match the name on the URL (url-name)")
	})

	t.Run("deployment-generation", func(t *testing.T) {
		t.Parallel()
		path := "/apis/apps/v1/namespaces/" + ns + "/deployments"
		d := expect(t, e.post(t, path, deployment("web", 0)), http.StatusCreated)
		gen := func(o obj) int64 { n, _ := num(o, "metadata", "generation"); return n }
		if gen(d) != 1 {
			t.Fatalf("new deployment generation %d, want 1", gen(d))
		}
		// The spec changes: the generation moves.
		d = e.modify(t, path+"/web", false, func(o obj) { o["spec"].(map[string]any)["minReadySeconds"] = 5 })
		if gen(d) != 2 {
			t.Errorf("after a spec change generation %d, want 2", gen(d))
		}
		// Only metadata changes: it does not.
		d = e.modify(t, path+"/web", false, func(o obj) { o["metadata"].(map[string]any)["labels"] = obj{"x": "y"} })
		if gen(d) != 2 || str(d, "metadata", "labels", "x") != "y" {
			t.Errorf("after a label change generation %d labels %v, want 2 and x=y", gen(d), d["metadata"])
		}
		// A status update ignores the spec and keeps the generation.
		d = e.modify(t, path+"/web/status", false, func(o obj) {
			o["spec"].(map[string]any)["minReadySeconds"] = 99
			st, _ := o["status"].(map[string]any)
			if st == nil {
				st = obj{}
				o["status"] = st
			}
			st["collisionCount"] = 3
		})
		if gen(d) != 2 {
			t.Errorf("after a status update generation %d, want 2", gen(d))
		}
		if n, _ := num(d, "spec", "minReadySeconds"); n != 5 {
			t.Errorf("a status update changed spec.minReadySeconds to %d", n)
		}
		if n, _ := num(d, "status", "collisionCount"); n != 3 {
			t.Errorf("status update: status.collisionCount %d, want 3", n)
		}
	})

	t.Run("status-subresource", func(t *testing.T) {
		t.Parallel()
		e.ensureDefaultServiceAccount(t, ns)
		pods := "/api/v1/namespaces/" + ns + "/pods"
		// Bound to a node that does not exist, so that nothing on a real
		// cluster writes its status.
		p := expect(t, e.post(t, pods, pod("p", ns+"-no-node", nil)), http.StatusCreated)
		image := func(o obj) string {
			cs, _ := field(o, "spec", "containers")
			return str(cs.([]any)[0].(map[string]any), "image")
		}
		setImage := func(o obj, img string) {
			o["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = img
		}
		// Main resource: the spec changes, the status sent is ignored.
		next := clone(p)
		setImage(next, "registry.k8s.io/pause:3.9")
		next["status"].(map[string]any)["phase"] = "Running"
		main := expect(t, e.put(t, pods+"/p", next), http.StatusOK)
		if image(main) != "registry.k8s.io/pause:3.9" || str(main, "status", "phase") != "Pending" {
			t.Errorf("update of pods/p: image %q phase %q, want the new image and the old phase Pending", image(main), str(main, "status", "phase"))
		}
		// Status: the status changes, the spec sent is ignored.
		next = clone(main)
		setImage(next, "registry.k8s.io/pause:3.8")
		next["status"].(map[string]any)["phase"] = "Running"
		st := expect(t, e.put(t, pods+"/p/status", next), http.StatusOK)
		if image(st) != "registry.k8s.io/pause:3.9" || str(st, "status", "phase") != "Running" {
			t.Errorf("update of pods/p/status: image %q phase %q, want the old image and phase Running", image(st), str(st, "status", "phase"))
		}
		if rv(st) == rv(main) {
			t.Errorf("a status update kept the resourceVersion %s", rv(st))
		}
		got := expect(t, e.get(t, pods+"/p"), http.StatusOK)
		if rv(got) != rv(st) || str(got, "status", "phase") != "Running" {
			t.Errorf("get after the status update: rv %s phase %q", rv(got), str(got, "status", "phase"))
		}
	})
}

// TestDelete checks deletion: the Status answer (golden 81's shape),
// dryRun, missing objects and failed preconditions (golden 80, 82),
// finalizers (golden 78, 79) and deletecollection (golden 83).
func TestDelete(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("status", func(t *testing.T) {
		t.Parallel()
		o := e.createCM(t, ns, "del", nil, nil)
		st := checkGoldenStatus(t, e.del(t, cmPath(ns, "del"), nil), "81-delete-dryrun", "cm1", "del")
		if u := str(st, "details", "uid"); u != str(o, "metadata", "uid") {
			t.Errorf("details.uid %q, want the object's %q", u, str(o, "metadata", "uid"))
		}
		checkStatus(t, e.get(t, cmPath(ns, "del")), http.StatusNotFound, "NotFound", `configmaps "del" not found`)
	})

	t.Run("dryRun", func(t *testing.T) {
		t.Parallel()
		o := e.createCM(t, ns, "dry", nil, nil)
		checkGoldenStatus(t, e.del(t, cmPath(ns, "dry")+"?dryRun=All", nil), "81-delete-dryrun", "cm1", "dry")
		if got := expect(t, e.get(t, cmPath(ns, "dry")), http.StatusOK); rv(got) != rv(o) {
			t.Errorf("a dry-run delete changed the object: rv %s -> %s", rv(o), rv(got))
		}
	})

	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.del(t, cmPath(ns, "nope"), nil), "82-delete-missing")
	})

	t.Run("precondition", func(t *testing.T) {
		t.Parallel()
		o := e.createCM(t, ns, "pre", nil, nil)
		body := loadGolden(t, "80-delete-precondition-fails").RequestBody
		st := checkGoldenStatus(t, e.del(t, cmPath(ns, "pre"), body), "80-delete-precondition-fails", "cm1", "pre")
		if m := str(st, "message"); !strings.Contains(m, "in record ("+rv(o)+")") {
			t.Errorf("message %q does not name the current resourceVersion %s", m, rv(o))
		}
		expect(t, e.get(t, cmPath(ns, "pre")), http.StatusOK)
		// With the right preconditions the delete goes through.
		expect(t, e.del(t, cmPath(ns, "pre"), obj{"preconditions": obj{"resourceVersion": rv(o), "uid": str(o, "metadata", "uid")}}), http.StatusOK)
	})

	t.Run("finalizers", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "resourceVersion", rv(list)))
		created := expect(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "fin", "finalizers": []any{"example.com/hold"}}}), http.StatusCreated)
		t.Cleanup(func() { e.removeFinalizers(t, ns, "fin") })
		if ev := w.next(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(created) {
			t.Fatalf("event %v, want ADDED", ev)
		}

		// golden 78: the object is kept, marked for deletion.
		marked := expect(t, e.del(t, cmPath(ns, "fin"), nil), http.StatusOK)
		checkMetadataLike(t, marked, "78-delete-with-finalizer")
		if str(marked, "kind") != "ConfigMap" || !has(marked, "metadata", "deletionTimestamp") || rv(marked) == rv(created) {
			t.Errorf("delete with a finalizer returned %s", compact(marked))
		}
		if n, ok := num(marked, "metadata", "deletionGracePeriodSeconds"); !ok || n != 0 {
			t.Errorf("deletionGracePeriodSeconds %v, want 0 (golden 78)", marked["metadata"])
		}
		if f, _ := field(marked, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{"example.com/hold"}) {
			t.Errorf("finalizers %v", f)
		}
		// golden 79
		got := expect(t, e.get(t, cmPath(ns, "fin")), http.StatusOK)
		checkMetadataLike(t, got, "79-get-terminating")
		if !reflect.DeepEqual(got, marked) {
			t.Errorf("get of the terminating object differs from the delete answer:\n%s\n%s", compact(got), compact(marked))
		}
		ev := w.next(t, 5*time.Second)
		if ev.Type != "MODIFIED" || rv(ev.Object) != rv(marked) || !has(ev.Object, "metadata", "deletionTimestamp") {
			t.Fatalf("event %v, want MODIFIED with deletionTimestamp at %s", ev, rv(marked))
		}

		// No finalizer can be added to an object being deleted.
		t.Run("no-new-finalizers", func(t *testing.T) {
			more := clone(got)
			more["metadata"].(map[string]any)["finalizers"] = []any{"example.com/hold", "example.com/other"}
			checkStatus(t, e.put(t, cmPath(ns, "fin"), more), http.StatusUnprocessableEntity, "Invalid",
				`ConfigMap "fin" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}`)
		})

		// Removing the last finalizer deletes it without storing the update
		// (kube-apiserver's ShouldDeleteDuringUpdate): the watcher sees only
		// the deletion, carrying the last stored state, finalizer included;
		// the update is answered with the object it built.
		release := clone(got)
		delete(release["metadata"].(map[string]any), "finalizers")
		answer := expect(t, e.put(t, cmPath(ns, "fin"), release), http.StatusOK)
		if has(answer, "metadata", "finalizers") || !has(answer, "metadata", "deletionTimestamp") || name(answer) != "fin" {
			t.Errorf("the update answered %s, want the object without finalizers", compact(answer))
		}
		ev = w.next(t, 5*time.Second)
		if ev.Type != "DELETED" || name(ev.Object) != "fin" {
			t.Fatalf("event %v %v, want DELETED fin (and no MODIFIED)", ev, ev.Object["metadata"])
		}
		if f, _ := field(ev.Object, "metadata", "finalizers"); !reflect.DeepEqual(f, []any{"example.com/hold"}) || !has(ev.Object, "metadata", "deletionTimestamp") {
			t.Errorf("DELETED carries %v, want the last stored state (finalizer and deletionTimestamp)", ev.Object["metadata"])
		}
		if rvNum(t, rv(ev.Object)) <= rvNum(t, rv(marked)) {
			t.Errorf("DELETED at %s, not after the last stored state at %s", rv(ev.Object), rv(marked))
		}
		checkStatus(t, e.get(t, cmPath(ns, "fin")), http.StatusNotFound, "NotFound", `configmaps "fin" not found`)
	})

	t.Run("deletecollection", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		base := e.baseline(t, ns)
		e.createCM(t, ns, "keep", map[string]string{"page": "no"}, nil)
		before := map[string]string{}
		for _, n := range []string{"page-0", "page-1", "page-2", "page-3"} {
			before[n] = rv(e.createCM(t, ns, n, map[string]string{"page": "yes"}, nil))
		}
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "resourceVersion", rv(list)))
		g := loadGolden(t, "83-deletecollection")
		r := e.del(t, cmPath(ns)+q("labelSelector", "page=yes"), nil)
		if r.Code != g.Status || r.Header.Get("Content-Type") != g.ResponseHeader["Content-Type"] {
			t.Fatalf("want %d %s, got:\n%s", g.Status, g.ResponseHeader["Content-Type"], r)
		}
		deleted := decode(t, r.Body)
		if str(deleted, "kind") != "ConfigMapList" || str(deleted, "apiVersion") != "v1" {
			t.Errorf("deletecollection answered kind %q apiVersion %q", str(deleted, "kind"), str(deleted, "apiVersion"))
		}
		if got := names(items(t, deleted)); !reflect.DeepEqual(got, []string{"page-0", "page-1", "page-2", "page-3"}) {
			t.Errorf("deletecollection items %v", got)
		}
		// golden 83: the items are the objects as they were when deleted.
		t.Run("items-at-last-state", func(t *testing.T) {
			if got := versions(items(t, deleted)); !reflect.DeepEqual(got, before) {
				t.Errorf("deletecollection items %v, want the deleted objects at their last resourceVersions %v", got, before)
			}
		})
		dels := map[string]string{}
		for len(dels) < 4 {
			ev := w.next(t, 5*time.Second)
			if ev.Type != "DELETED" {
				t.Fatalf("event %v, want DELETED", ev)
			}
			dels[name(ev.Object)] = rv(ev.Object)
		}
		for n := range dels {
			if _, ok := before[n]; !ok {
				t.Errorf("%s deleted", n)
			}
		}
		// golden 83: the list's resourceVersion is the one it was read at,
		// before the deletions.
		t.Run("list-resourceVersion-before-deletions", func(t *testing.T) {
			for n, r := range dels {
				if rvNum(t, rv(deleted)) >= rvNum(t, r) {
					t.Errorf("deletecollection list resourceVersion %s is not before the deletion of %s at %s", rv(deleted), n, r)
				}
			}
		})
		left := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		if got, want := names(items(t, left)), sortedKeys(withBaseline(map[string]string{"keep": ""}, base)); !reflect.DeepEqual(got, want) {
			t.Errorf("after deletecollection: %v, want %v", got, want)
		}
	})
}

// TestNamespaceDeletion deletes a namespace (golden 101): it goes
// Terminating, refuses new content (golden 102), its objects are removed
// (those with finalizers once the finalizers are gone), and then it
// disappears.
//
// While content remains, the namespace's status conditions say what and
// which finalizers hold it, as kube-controller-manager writes them.
//
// The cleanup is the work of a namespace controller (kube-controller-manager's
// on a cluster, the reference server's own in-process): on a cluster without
// one the namespace stays Terminating with its content, and the case skips,
// saying so, once nothing has moved for a short while.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	namespaceDeletion(t, target, namespaceProgress)
}

// namespaceProgress is how long a namespace controller may take to show it
// works on a deleted namespace before the case concludes there is none:
// kube-controller-manager's waits 5 seconds after a namespace's deletion
// before its first pass.
const namespaceProgress = 20 * time.Second

// TestNamespaceDeletionWithoutController checks that the namespace-deletion
// case skips, saying why, on a server without a namespace controller,
// instead of failing after long timeouts.
func TestNamespaceDeletionWithoutController(t *testing.T) {
	t.Parallel()
	if !target.inProcess {
		t.Skip("needs an in-process server without a namespace controller")
	}
	e := withDefaults(t, func(c *apiserver.Config) { c.DisableNamespaceController = true })
	start := time.Now()
	skipped := false
	// The in-process server's controller would show itself at once.
	const bound = 2 * time.Second
	t.Run("namespace-deletion", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		namespaceDeletion(t, e, bound)
	})
	if !skipped {
		t.Errorf("the case did not skip without a namespace controller")
	}
	if d := time.Since(start); d > bound+5*time.Second {
		t.Errorf("the case took %v to give up", d)
	}
}

func namespaceDeletion(t *testing.T, e *env, progress time.Duration) {
	ns := e.namespace(t)
	e.createCM(t, ns, "plain", nil, nil)
	expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/secrets", obj{"metadata": obj{"name": "s"}}), http.StatusCreated)
	expect(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "held", "finalizers": []any{"example.com/hold"}}}), http.StatusCreated)
	t.Cleanup(func() { e.removeFinalizers(t, ns, "held") })

	r := e.del(t, "/api/v1/namespaces/"+ns, nil)
	o := expect(t, r, http.StatusOK)
	t.Run("metadata-like-golden-101", func(t *testing.T) {
		checkMetadataLike(t, o, "101-namespace-delete")
	})
	if str(o, "kind") != "Namespace" || str(o, "status", "phase") != "Terminating" || !has(o, "metadata", "deletionTimestamp") {
		t.Errorf("namespace delete answered %s", compact(o))
	}
	if f, _ := field(o, "spec", "finalizers"); !reflect.DeepEqual(f, []any{"kubernetes"}) {
		t.Errorf("spec.finalizers %v, want [kubernetes]", f)
	}

	t.Run("create-in-terminating-namespace", func(t *testing.T) {
		checkGoldenStatus(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "late"}}), "102-create-in-terminating-namespace", "golden", ns)
	})

	// A namespace controller shows itself by reporting on the namespace's
	// status (its conditions), or by removing content (the secret has no
	// finalizer).
	if ok, _ := e.awaitCollection(t, "/api/v1/namespaces"+q("fieldSelector", "metadata.name="+ns), "the namespace's status conditions", progress,
		func(objs map[string]obj) bool { return has(objs["/"+ns], "status", "conditions") }); !ok {
		if r := e.get(t, "/api/v1/namespaces/"+ns+"/secrets/s"); r.Code == http.StatusOK {
			t.Skipf("%s has no namespace controller: %v after its deletion, namespace %s still holds its content and reports nothing on its status", e.name, e.within(progress), ns)
		}
	}

	// Everything goes but the object held by its finalizer, which is marked.
	e.waitCollection(t, cmPath(ns), "the namespace's configmaps to be deleted but held", 30*time.Second, func(objs map[string]obj) bool {
		h, ok := objs[ns+"/held"]
		return len(objs) == 1 && ok && has(h, "metadata", "deletionTimestamp")
	})
	e.waitCollection(t, "/api/v1/namespaces/"+ns+"/secrets", "the namespace's secrets to be deleted", 30*time.Second, func(objs map[string]obj) bool {
		return len(objs) == 0
	})
	got := expect(t, e.get(t, "/api/v1/namespaces/"+ns), http.StatusOK)
	if str(got, "status", "phase") != "Terminating" {
		t.Errorf("namespace phase %q while content remains, want Terminating", str(got, "status", "phase"))
	}
	// The controller reports on the namespace's status what remains and
	// which finalizers hold it.
	want := map[string]string{
		"NamespaceDeletionDiscoveryFailure/False":           "All resources successfully discovered",
		"NamespaceDeletionGroupVersionParsingFailure/False": "All legacy kube types successfully parsed",
		"NamespaceDeletionContentFailure/False":             "All content successfully deleted, may be waiting on finalization",
		"NamespaceContentRemaining/True":                    "Some resources are remaining: configmaps. has 1 resource instances",
		"NamespaceFinalizersRemaining/True":                 "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
	}
	var last map[string]string
	e.waitCollection(t, "/api/v1/namespaces"+q("fieldSelector", "metadata.name="+ns), "the namespace's status conditions", 30*time.Second, func(objs map[string]obj) bool {
		conds, _ := field(objs["/"+ns], "status", "conditions")
		last = map[string]string{}
		for _, c := range asList(conds) {
			last[str(c, "type")+"/"+str(c, "status")] = str(c, "message")
		}
		return reflect.DeepEqual(last, want)
	})
	// The controller writes the conditions through /status, as its field
	// manager.
	cur := expect(t, e.get(t, "/api/v1/namespaces/"+ns), http.StatusOK)
	mf, _ := field(cur, "metadata", "managedFields")
	statusManaged := false
	for _, m := range asList(mf) {
		if str(m, "manager") == "kube-controller-manager" && str(m, "subresource") == "status" && str(m, "operation") == "Update" {
			statusManaged = true
		}
	}
	if !statusManaged {
		t.Errorf("managedFields %v: no Update of the status by kube-controller-manager", mf)
	}

	// Finalizing the namespace removes it: the update of its spec.finalizers
	// deletes it (kube-apiserver's ShouldDeleteDuringUpdate), so watchers
	// see it go with its last stored state, "kubernetes" still in its
	// spec.finalizers, and never without them.
	w := e.watch(t, "/api/v1/namespaces"+q("watch", "1", "fieldSelector", "metadata.name="+ns, "resourceVersion", rv(cur)))
	e.removeFinalizers(t, ns, "held")
	for {
		ev := w.nextChange(t, 30*time.Second)
		if f, _ := field(ev.Object, "spec", "finalizers"); !reflect.DeepEqual(f, []any{"kubernetes"}) {
			t.Errorf("%s event of the namespace with spec.finalizers %v, want [kubernetes]", ev.Type, f)
		}
		if ev.Type == "DELETED" {
			break
		}
	}
	checkStatus(t, e.get(t, "/api/v1/namespaces/"+ns), http.StatusNotFound, "NotFound", `namespaces "`+ns+`" not found`)
}
