package conformance

import (
	"net/http"
	"reflect"
	"testing"
	"time"
)

// patch sends a PATCH of the given media type.
func (e *env) patch(t testing.TB, path, contentType string, body any) *response {
	t.Helper()
	return e.do(t, http.MethodPatch, path, body, "Content-Type", contentType)
}

const (
	mergePatch     = "application/merge-patch+json"
	jsonPatch      = "application/json-patch+json"
	strategicPatch = "application/strategic-merge-patch+json"
	applyPatch     = "application/apply-patch+yaml"
)

// TestPatch checks the three patch types (golden 69–72) and their errors.
func TestPatch(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("merge", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "merge", map[string]string{"app": "web"}, map[string]string{"a": "1", "b": "2"})
		o := expect(t, e.patch(t, cmPath(ns, "merge"), mergePatch, `{"data":{"b":null,"c":"3"},"metadata":{"labels":{"tier":"front"}}}`), http.StatusOK)
		if d := o["data"]; !reflect.DeepEqual(d, obj{"a": "1", "c": "3"}) {
			t.Errorf("data after merge patch: %v", d)
		}
		if l, _ := field(o, "metadata", "labels"); !reflect.DeepEqual(l, obj{"app": "web", "tier": "front"}) {
			t.Errorf("labels after merge patch: %v", l)
		}
		if got := expect(t, e.get(t, cmPath(ns, "merge")), http.StatusOK); !reflect.DeepEqual(got, o) {
			t.Errorf("get differs from the patch response:\n%s\n%s", compact(got), compact(o))
		}
	})

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		before := e.createCM(t, ns, "json", nil, map[string]string{"a": "1"})
		o := expect(t, e.patch(t, cmPath(ns, "json"), jsonPatch, `[{"op":"add","path":"/metadata/labels","value":{"x":"y"}},{"op":"replace","path":"/data/a","value":"2"}]`), http.StatusOK)
		if str(o, "metadata", "labels", "x") != "y" || str(o, "data", "a") != "2" {
			t.Errorf("json patch result %s", compact(o))
		}
		if rvNum(t, rv(o)) <= rvNum(t, rv(before)) {
			t.Errorf("resourceVersion did not move: %s -> %s", rv(before), rv(o))
		}
		// A failing test operation changes nothing (golden 71).
		checkGoldenStatus(t, e.patch(t, cmPath(ns, "json"), jsonPatch, `[{"op":"test","path":"/data/a","value":"nope"}]`), "71-patch-json-test-fails")
		if got := expect(t, e.get(t, cmPath(ns, "json")), http.StatusOK); rv(got) != rv(o) {
			t.Errorf("a failed json patch moved the object to %s", rv(got))
		}
	})

	t.Run("strategic-containers-by-name", func(t *testing.T) {
		t.Parallel()
		path := "/apis/apps/v1/namespaces/" + ns + "/deployments"
		expect(t, e.post(t, path, deployment("web", 2)), http.StatusCreated)
		o := expect(t, e.patch(t, path+"/web", strategicPatch,
			`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"},{"name":"side","image":"busybox"}]}}}}`), http.StatusOK)
		cs, _ := field(o, "spec", "template", "spec", "containers")
		list, _ := cs.([]any)
		if len(list) != 2 {
			t.Fatalf("containers after strategic patch: %s", compact(cs))
		}
		app, side := list[0].(obj), list[1].(obj)
		if app["name"] != "app" || app["image"] != "nginx:1.28" || app["terminationMessagePath"] != "/dev/termination-log" {
			t.Errorf("patched container lost its other fields or changed place: %s", compact(app))
		}
		if side["name"] != "side" || side["imagePullPolicy"] != "Always" {
			t.Errorf("added container not defaulted: %s", compact(side))
		}
		if g, _ := num(o, "metadata", "generation"); g != 2 {
			t.Errorf("generation %d after a spec patch, want 2", g)
		}
		// Deleting a list element by key with the $patch directive.
		o = expect(t, e.patch(t, path+"/web", strategicPatch,
			`{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}`), http.StatusOK)
		cs, _ = field(o, "spec", "template", "spec", "containers")
		if list, _ := cs.([]any); len(list) != 1 || list[0].(obj)["name"] != "app" {
			t.Errorf("containers after $patch delete: %s", compact(cs))
		}
	})

	t.Run("unsupported-type", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "ctype", nil, nil)
		r := e.patch(t, cmPath(ns, "ctype"), "application/json", `{"data":{"a":"b"}}`)
		if r.Code != http.StatusUnsupportedMediaType {
			t.Errorf("patch as application/json: want 415, got\n%s", r)
		}
	})

	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		r := e.patch(t, cmPath(ns, "nope"), mergePatch, `{"data":{"a":"b"}}`)
		if r.Code != http.StatusNotFound || str(decode(t, r.Body), "reason") != "NotFound" {
			t.Errorf("patch of a missing object: want 404 NotFound, got\n%s", r)
		}
	})

	t.Run("stale-resourceVersion", func(t *testing.T) {
		t.Parallel()
		o := e.createCM(t, ns, "stale", nil, map[string]string{"a": "1"})
		e.updateData(t, ns, o, map[string]string{"a": "2"})
		r := e.patch(t, cmPath(ns, "stale"), mergePatch, obj{"metadata": obj{"resourceVersion": rv(o)}, "data": obj{"a": "3"}})
		if r.Code != http.StatusConflict {
			t.Errorf("merge patch carrying a stale resourceVersion: want 409, got\n%s", r)
		}
	})

	t.Run("status-subresource", func(t *testing.T) {
		t.Parallel()
		path := "/apis/apps/v1/namespaces/" + ns + "/deployments"
		expect(t, e.post(t, path, deployment("st", 1)), http.StatusCreated)
		// A patch of the main resource ignores status; one of /status changes only status.
		o := expect(t, e.patch(t, path+"/st", mergePatch, `{"status":{"replicas":5},"spec":{"replicas":2}}`), http.StatusOK)
		if n, _ := num(o, "status", "replicas"); n != 0 {
			t.Errorf("a patch of the resource set status.replicas to %d", n)
		}
		o = expect(t, e.patch(t, path+"/st/status", mergePatch, `{"status":{"replicas":5},"spec":{"replicas":7}}`), http.StatusOK)
		if n, _ := num(o, "status", "replicas"); n != 5 {
			t.Errorf("status.replicas %d after a status patch, want 5", n)
		}
		if n, _ := num(o, "spec", "replicas"); n != 2 {
			t.Errorf("a status patch changed spec.replicas to %d", n)
		}
	})
}

// TestApply checks server-side apply (golden 73–77): ownership, conflicts,
// force, removal of fields an applier drops, and resetting managedFields.
func TestApply(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	apply := func(t *testing.T, name, manager string, force bool, yaml string) *response {
		t.Helper()
		query := q("fieldManager", manager)
		if force {
			query = q("fieldManager", manager, "force", "true")
		}
		return e.patch(t, cmPath(ns, name)+query, applyPatch, yaml)
	}

	t.Run("golden-sequence", func(t *testing.T) {
		t.Parallel()
		o := expect(t, apply(t, "applied", "alice", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels:\n    owner: alice\ndata:\n  k1: v1\n  k2: v2\n"), http.StatusCreated)
		checkManagers(t, o, "73-apply-create")
		o = expect(t, e.patch(t, cmPath(ns, "applied")+q("fieldManager", "bob"), mergePatch, `{"data":{"k1":"bob"}}`), http.StatusOK)
		checkManagers(t, o, "74-update-takes-field")
		checkGoldenStatus(t, apply(t, "applied", "alice", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k1: alice-again\n"), "75-apply-conflict")
		o = expect(t, apply(t, "applied", "alice", true, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k1: alice-again\n"), http.StatusOK)
		checkManagers(t, o, "76-apply-force")
		// alice dropped k2 and the label, which no one else managed: both are gone.
		if d := o["data"]; !reflect.DeepEqual(d, obj{"k1": "alice-again"}) {
			t.Errorf("data after alice's forced apply: %v", d)
		}
		if has(o, "metadata", "labels", "owner") {
			t.Errorf("label alice stopped applying is still there: %v", o["metadata"])
		}
		checkGoldenStatus(t, e.patch(t, cmPath(ns, "applied"), applyPatch, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"), "77-apply-no-fieldmanager")
	})

	t.Run("shared-field-survives", func(t *testing.T) {
		t.Parallel()
		cfg := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  k: v\n"
		expect(t, apply(t, "shared", "a", false, cfg), http.StatusCreated)
		expect(t, apply(t, "shared", "b", false, cfg), http.StatusOK) // same value: no conflict
		o := expect(t, apply(t, "shared", "a", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"), http.StatusOK)
		if str(o, "data", "k") != "v" {
			t.Errorf("a field b still applies was removed when a dropped it: %s", compact(o))
		}
	})

	t.Run("reset-managedFields", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "reset", nil, map[string]string{"a": "1"})
		o := expect(t, e.patch(t, cmPath(ns, "reset"), mergePatch, `{"metadata":{"managedFields":[{}]}}`), http.StatusOK)
		if has(o, "metadata", "managedFields") {
			t.Errorf("managedFields after writing [{}]: %s", compact(o["metadata"]))
		}
		// Updates leave an untracked object untracked; an apply tracks again,
		// giving the fields it found to "before-first-apply".
		o = expect(t, e.patch(t, cmPath(ns, "reset"), mergePatch, `{"data":{"a":"2"}}`), http.StatusOK)
		if has(o, "metadata", "managedFields") {
			t.Errorf("an update of an untracked object tracked fields: %s", compact(o["metadata"]))
		}
		o = expect(t, apply(t, "reset", "m", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reset\n  labels:\n    l: v\n"), http.StatusOK)
		mf, _ := field(o, "metadata", "managedFields")
		var managers []string
		for _, m := range mf.([]any) {
			managers = append(managers, m.(obj)["manager"].(string)+"/"+m.(obj)["operation"].(string))
		}
		if want := []string{"m/Apply", "before-first-apply/Update"}; !reflect.DeepEqual(managers, want) {
			t.Errorf("managers after applying to an untracked object: %v, want %v", managers, want)
		}
	})

	t.Run("status-apply-recorded", func(t *testing.T) {
		t.Parallel()
		path := "/apis/apps/v1/namespaces/" + ns + "/deployments/applied-status"
		expect(t, e.patch(t, path+q("fieldManager", "cd"), applyPatch, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"applied-status"},"spec":{"selector":{"matchLabels":{"app":"s"}},"template":{"metadata":{"labels":{"app":"s"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`), http.StatusCreated)
		o := expect(t, e.patch(t, path+"/status"+q("fieldManager", "ctrl", "force", "true"), applyPatch, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"applied-status"},"status":{"observedGeneration":1}}`), http.StatusOK)
		mf, _ := field(o, "metadata", "managedFields")
		found := false
		for _, m := range mf.([]any) {
			m := m.(obj)
			if m["manager"] == "ctrl" && m["operation"] == "Apply" && m["subresource"] == "status" {
				found = reflect.DeepEqual(m["fieldsV1"], obj{"f:status": obj{"f:observedGeneration": obj{}}})
			}
		}
		if !found {
			t.Errorf("no Apply entry of ctrl for status owning .status.observedGeneration: %s", compact(mf))
		}
	})

	t.Run("no-op-reapply", func(t *testing.T) {
		t.Parallel()
		// Another manager owns an empty map the object does not hold; a
		// re-apply that changes nothing keeps the resourceVersion.
		cfg := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: noop\ndata:\n  k: v\n"
		expect(t, apply(t, "noop", "a", false, cfg), http.StatusCreated)
		before := expect(t, apply(t, "noop", "b", false, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: noop\n  labels: {}\n"), http.StatusOK)
		again := expect(t, apply(t, "noop", "a", false, cfg), http.StatusOK)
		if rv(again) != rv(before) {
			t.Errorf("a re-apply that changes nothing moved the resourceVersion from %s to %s", rv(before), rv(again))
		}
	})

	t.Run("kind-mismatch", func(t *testing.T) {
		t.Parallel()
		r := apply(t, "mismatch", "a", false, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: mismatch\n")
		if r.Code != http.StatusBadRequest {
			t.Errorf("apply of a Secret to configmaps: want 400, got\n%s", r)
		}
	})

	t.Run("not-matching-the-schema", func(t *testing.T) {
		t.Parallel()
		// kube-apiserver answers a configuration its schema rejects with a
		// 500 without reason, naming the configuration as it was sent.
		for _, tc := range []struct{ name, body, want string }{
			{"typed1", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed1\nbogus: 5\n",
				"failed to create typed patch object (/typed1; /v1, Kind=ConfigMap): .bogus: field not declared in schema"},
			{"typed2", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed2","namespace":"` + ns + `"},"data":{"a":5}}`,
				"failed to create typed patch object (" + ns + "/typed2; /v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:5}"},
		} {
			st := checkStatus(t, apply(t, tc.name, "a", false, tc.body), http.StatusInternalServerError, "", tc.want)
			if st == nil {
				continue
			}
			if m := str(st, "message"); m != tc.want {
				t.Errorf("%s: message %q, want %q", tc.name, m, tc.want)
			}
			if has(st, "details") {
				t.Errorf("%s: details %s, want none", tc.name, compact(st["details"]))
			}
		}
	})
}

// checkManagers compares the managers, operations and owned fields of o's
// managedFields with those of a capture (times differ).
func checkManagers(t testing.TB, o obj, goldenName string) {
	t.Helper()
	strip := func(o obj) any {
		mf, _ := field(o, "metadata", "managedFields")
		list, _ := mf.([]any)
		out := make([]any, 0, len(list))
		for _, m := range list {
			m := clone(m.(obj))
			delete(m, "time")
			out = append(out, m)
		}
		return out
	}
	if want, have := strip(goldenObject(t, goldenName)), strip(o); !reflect.DeepEqual(want, have) {
		t.Errorf("golden %s: managedFields\n got: %s\nwant: %s", goldenName, compact(have), compact(want))
	}
}

// TestDryRun checks dryRun=All on every write verb: the response is what
// would be stored, nothing is stored, no resourceVersion is used and no watch
// event is sent (golden 61, 62, 81).
func TestDryRun(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	o := e.createCM(t, ns, "base", nil, map[string]string{"a": "1"})
	w := e.watch(t, cmPath(ns)+q("watch", "1", "resourceVersion", rv(o)))
	defer w.close()
	dry := q("dryRun", "All")

	created := expect(t, e.post(t, cmPath(ns)+dry, configMap("dry", nil, map[string]string{"x": "y"})), http.StatusCreated)
	if rv(created) != "" || str(created, "metadata", "uid") == "" {
		t.Errorf("dry-run create: resourceVersion %q uid %q", rv(created), str(created, "metadata", "uid"))
	}
	expect(t, e.get(t, cmPath(ns, "dry")), http.StatusNotFound)

	next := clone(o)
	next["data"] = obj{"a": "2"}
	updated := expect(t, e.put(t, cmPath(ns, "base")+dry, next), http.StatusOK)
	if str(updated, "data", "a") != "2" || rv(updated) != rv(o) {
		t.Errorf("dry-run update returned %s", compact(updated))
	}
	patched := expect(t, e.patch(t, cmPath(ns, "base")+dry, mergePatch, `{"data":{"a":"3"}}`), http.StatusOK)
	if str(patched, "data", "a") != "3" {
		t.Errorf("dry-run patch returned %s", compact(patched))
	}
	applied := expect(t, e.patch(t, cmPath(ns, "applied")+q("dryRun", "All", "fieldManager", "m"), applyPatch,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n"), http.StatusCreated)
	if str(applied, "data", "k") != "v" {
		t.Errorf("dry-run apply returned %s", compact(applied))
	}
	expect(t, e.get(t, cmPath(ns, "applied")), http.StatusNotFound)
	expect(t, e.del(t, cmPath(ns, "base")+dry, nil), http.StatusOK)
	checkGoldenStatus(t, e.patch(t, cmPath(ns, "base")+q("dryRun", "Some"), mergePatch, `{}`), "62-dryrun-bad-value", "CreateOptions", "PatchOptions")

	got := expect(t, e.get(t, cmPath(ns, "base")), http.StatusOK)
	if !reflect.DeepEqual(got["data"], obj{"a": "1"}) || rv(got) != rv(o) {
		t.Errorf("dry runs changed the object: %s", compact(got))
	}
	// The first event after the dry runs is a real write's.
	real := e.createCM(t, ns, "real", nil, nil)
	if ev := w.nextChange(t, e.within(10*time.Second)); ev.Type != "ADDED" || name(ev.Object) != "real" {
		t.Errorf("first watch event after dry runs: %v (want ADDED real at %s)", ev, rv(real))
	}
}
