package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// lastApplied is kubectl's client-side apply annotation.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TestApplyLastApplied checks the move between kubectl's client-side apply
// (an update by "kubectl-client-side-apply" recording its configuration in
// the last-applied-configuration annotation) and its server-side apply
// (field manager "kubectl"): the fields the annotation records and that
// still hold the recorded values are taken over without conflicts, only by
// the manager "kubectl"; its applies keep the annotation current (dropping
// it when the annotations would outgrow 256 KiB); kubectl's managedFields
// upgrade patch and a later client-side apply work.
func TestApplyLastApplied(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	// cfg is a configuration as kubectl writes it: keys sorted, a newline at
	// the end (the annotation's form).
	cfg := func(name, label string, annotations obj, data map[string]string) string {
		md := obj{"name": name, "namespace": ns, "labels": obj{"a": label}}
		if annotations != nil {
			md["annotations"] = annotations
		}
		b, err := json.Marshal(obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	// clientSideCreate creates name as `kubectl apply` does: the object with
	// its configuration in the annotation, by kubectl-client-side-apply.
	clientSideCreate := func(t *testing.T, name string) (obj, string) {
		t.Helper()
		data := map[string]string{"k1": "v1", "k2": "v2"}
		recorded := cfg(name, "1", obj{}, data)
		body := configMap(name, map[string]string{"a": "1"}, data)
		body["metadata"].(obj)["annotations"] = obj{lastApplied: recorded}
		o := expect(t, e.post(t, cmPath(ns)+q("fieldManager", "kubectl-client-side-apply"), body), http.StatusCreated)
		return o, recorded
	}
	apply := func(t *testing.T, name, manager, body string) *response {
		t.Helper()
		return e.patch(t, cmPath(ns, name)+q("fieldManager", manager, "force", "false"), applyPatch, body)
	}
	changed := func(name string) string {
		return cfg(name, "2", nil, map[string]string{"k1": "v1changed", "k3": "v3"})
	}
	csaEntry := `{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:data":{".":{},"f:k1":{},"f:k2":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:a":{}}}}}`

	t.Run("client-side-then-server-side", func(t *testing.T) {
		t.Parallel()
		created, _ := clientSideCreate(t, "migrate")
		checkEntries(t, "after the client-side create", created, "["+csaEntry+"]")

		// kubectl apply --server-side of a changed configuration: no
		// conflict; kubectl takes what it applies, the annotation becomes
		// the configuration applied.
		next := changed("migrate")
		o := expect(t, apply(t, "migrate", "kubectl", next), http.StatusOK)
		checkEntries(t, "after the server-side apply", o, `[
{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k1":{},"f:k3":{}},"f:metadata":{"f:labels":{"f:a":{}}}}},
{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k2":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{}}}}]`)
		if got := str(o, "metadata", "annotations", lastApplied); got != next {
			t.Errorf("annotation after the server-side apply:\n got %q\nwant %q", got, next)
		}
		if d := compact(o["data"]); d != `{"k1":"v1changed","k2":"v2","k3":"v3"}` {
			t.Errorf("data after the server-side apply: %s", d)
		}

		// kubectl then has the annotation applied by a manager of its own,
		// so that it survives the upgrade below...
		lastAppliedEntry := `{"manager":"kubectl-last-applied","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}}`
		only, _ := json.Marshal(obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "migrate", "namespace": ns, "annotations": obj{lastApplied: next}}})
		o = expect(t, e.patch(t, cmPath(ns, "migrate")+q("fieldManager", "kubectl-last-applied"), applyPatch, string(only)), http.StatusOK)
		checkEntries(t, "after applying the annotation", o, `[`+lastAppliedEntry+`,
{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k1":{},"f:k3":{}},"f:metadata":{"f:labels":{"f:a":{}}}}},
{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k2":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{}}}}]`)

		// ... moves the client-side fields to its own entry with a JSON
		// patch of managedFields (and resourceVersion, as a precondition)...
		tm := entryTime(o, "kubectl")
		merged := `{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k1":{},"f:k2":{},"f:k3":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:a":{}}}}}`
		withTime := strings.Replace(merged, `"apiVersion":"v1",`, `"apiVersion":"v1","time":"`+tm+`",`, 1)
		upgrade := `[{"op":"replace","path":"/metadata/managedFields","value":[` + lastAppliedEntry + `,` + withTime + `]},` +
			`{"op":"replace","path":"/metadata/resourceVersion","value":"` + rv(o) + `"}]`
		o = expect(t, e.patch(t, cmPath(ns, "migrate")+q("fieldManager", "kubectl"), jsonPatch, upgrade), http.StatusOK)
		checkEntries(t, "after the upgrade patch", o, `[`+lastAppliedEntry+`,`+merged+`]`)
		if got := entryTime(o, "kubectl"); got != tm {
			t.Errorf("time of kubectl's entry after the upgrade patch: %q, want %q", got, tm)
		}

		// ... and applies again, which drops what it no longer applies.
		o = expect(t, apply(t, "migrate", "kubectl", next), http.StatusOK)
		checkEntries(t, "after the second server-side apply", o, `[`+lastAppliedEntry+`,
{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k1":{},"f:k3":{}},"f:metadata":{"f:labels":{"f:a":{}}}}}]`)
		if d := compact(o["data"]); d != `{"k1":"v1changed","k3":"v3"}` {
			t.Errorf("data after the second server-side apply: %s", d)
		}
		if got := str(o, "metadata", "annotations", lastApplied); got != next {
			t.Errorf("annotation after the second server-side apply:\n got %q\nwant %q", got, next)
		}

		// Back to client-side apply: kubectl's strategic merge patch with
		// the new configuration in the annotation.
		third := cfg("migrate", "3", obj{}, map[string]string{"k1": "v1changed", "k4": "v4"})
		patch, _ := json.Marshal(obj{
			"data":     obj{"k3": nil, "k4": "v4"},
			"metadata": obj{"annotations": obj{lastApplied: third}, "labels": obj{"a": "3"}},
		})
		o = expect(t, e.patch(t, cmPath(ns, "migrate")+q("fieldManager", "kubectl-client-side-apply"), strategicPatch, string(patch)), http.StatusOK)
		checkEntries(t, "after the client-side apply", o, `[
{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k1":{}}}},
{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k4":{}},"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{"f:a":{}}}}}]`)
		if d := compact(o["data"]); d != `{"k1":"v1changed","k4":"v4"}` {
			t.Errorf("data after the client-side apply: %s", d)
		}

		// And server-side again, of the same configuration: the fields are
		// the client-side applier's and hold the recorded values.
		again := cfg("migrate", "3", nil, map[string]string{"k1": "v1changed", "k4": "v4"})
		o = expect(t, apply(t, "migrate", "kubectl", again), http.StatusOK)
		if got := str(o, "metadata", "annotations", lastApplied); got != again {
			t.Errorf("annotation after the last server-side apply:\n got %q\nwant %q", got, again)
		}
	})

	t.Run("other-manager-conflicts", func(t *testing.T) {
		t.Parallel()
		_, recorded := clientSideCreate(t, "other")
		checkStatus(t, apply(t, "other", "other", changed("other")), http.StatusConflict, "Conflict",
			"Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using v1:\n- .data.k1\n- .metadata.labels.a")
		// An apply by another manager neither takes over nor rewrites the
		// annotation.
		o := expect(t, apply(t, "other", "other", cfg("other", "1", nil, map[string]string{"k5": "v5"})), http.StatusOK)
		if got := str(o, "metadata", "annotations", lastApplied); got != recorded {
			t.Errorf("annotation after another manager's apply:\n got %q\nwant %q", got, recorded)
		}
	})

	t.Run("changed-since-recorded", func(t *testing.T) {
		t.Parallel()
		clientSideCreate(t, "changed")
		// bob changes k1: its live value is no longer the recorded one, so
		// it stays a conflict; the label, still as recorded, does not.
		expect(t, e.patch(t, cmPath(ns, "changed")+q("fieldManager", "bob"), mergePatch, `{"data":{"k1":"bob"}}`), http.StatusOK)
		checkStatus(t, apply(t, "changed", "kubectl", changed("changed")), http.StatusConflict, "Conflict",
			`Apply failed with 1 conflict: conflict with "bob" using v1: .data.k1`)
	})

	t.Run("recorded-field-shared-with-another-applier", func(t *testing.T) {
		t.Parallel()
		clientSideCreate(t, "shared")
		// bob applies the recorded label value too, and shares the field.
		expect(t, apply(t, "shared", "bob", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shared","labels":{"a":"1"}}}`), http.StatusOK)
		// The field holds its recorded value: kubectl takes it from every
		// owner, bob included.
		o := expect(t, apply(t, "shared", "kubectl", changed("shared")), http.StatusOK)
		checkEntries(t, "after kubectl's apply", o, `[
{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k1":{},"f:k3":{}},"f:metadata":{"f:labels":{"f:a":{}}}}},
{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k2":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{}}}}]`)
	})

	t.Run("annotation-kept-current", func(t *testing.T) {
		t.Parallel()
		// An apply by kubectl that itself carries the annotation (and other
		// annotations, with characters JSON may escape) records its
		// configuration without it.
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept","annotations":{"x":"<&>","` + lastApplied + `":"stale"}},"data":{"n":"1"}}`
		o := expect(t, apply(t, "kept", "kubectl", body), http.StatusCreated)
		want := `{"apiVersion":"v1","data":{"n":"1"},"kind":"ConfigMap","metadata":{"annotations":{"x":"\u003c\u0026\u003e"},"name":"kept"}}` + "\n"
		if got := str(o, "metadata", "annotations", lastApplied); got != want {
			t.Errorf("annotation after a create by apply:\n got %q\nwant %q", got, want)
		}
		// The annotation alone leaves an empty map in the record.
		body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept","annotations":{"` + lastApplied + `":"stale"}},"data":{"n":"1"}}`
		o = expect(t, apply(t, "kept", "kubectl", body), http.StatusOK)
		want = `{"apiVersion":"v1","data":{"n":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"kept"}}` + "\n"
		if got := str(o, "metadata", "annotations", lastApplied); got != want {
			t.Errorf("annotation after an apply of the annotation alone:\n got %q\nwant %q", got, want)
		}
		// Another manager's apply does not touch it.
		body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept"},"data":{"m":"2"}}`
		o = expect(t, apply(t, "kept", "alice", body), http.StatusOK)
		if got := str(o, "metadata", "annotations", lastApplied); got != want {
			t.Errorf("annotation after alice's apply:\n got %q\nwant %q", got, want)
		}
	})

	t.Run("unusable-annotation", func(t *testing.T) {
		t.Parallel()
		// An annotation that is not JSON, or records another kind, allows
		// nothing; a forced apply still rewrites it.
		for name, recorded := range map[string]string{
			"not-json":      "not json",
			"other-kind":    `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"other-kind","labels":{"a":"1"}},"data":{"k1":"djE="}}`,
			"no-kind":       `{"apiVersion":"v1","metadata":{"name":"no-kind","labels":{"a":"1"}},"data":{"k1":"v1","k2":"v2"}}`,
			"other-version": `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"other-version","labels":{"a":"1"}},"data":{"k1":"v1","k2":"v2"}}`,
		} {
			body := configMap(name, map[string]string{"a": "1"}, map[string]string{"k1": "v1", "k2": "v2"})
			body["metadata"].(obj)["annotations"] = obj{lastApplied: recorded}
			expect(t, e.post(t, cmPath(ns)+q("fieldManager", "kubectl-client-side-apply"), body), http.StatusCreated)
			checkStatus(t, apply(t, name, "kubectl", changed(name)), http.StatusConflict, "Conflict",
				"Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using v1:\n- .data.k1\n- .metadata.labels.a")
			o := expect(t, e.patch(t, cmPath(ns, name)+q("fieldManager", "kubectl", "force", "true"), applyPatch, changed(name)), http.StatusOK)
			if got := str(o, "metadata", "annotations", lastApplied); got != changed(name) {
				t.Errorf("%s: annotation after a forced apply:\n got %q\nwant %q", name, got, changed(name))
			}
		}
	})

	t.Run("no-annotation-no-record", func(t *testing.T) {
		t.Parallel()
		o := expect(t, apply(t, "plain", "kubectl", cfg("plain", "1", nil, map[string]string{"k": "v"})), http.StatusCreated)
		if has(o, "metadata", "annotations") {
			t.Errorf("kubectl's apply without the annotation added annotations: %s", compact(o["metadata"]))
		}
	})

	t.Run("too-large-annotation-dropped", func(t *testing.T) {
		t.Parallel()
		clientSideCreate(t, "large")
		big := cfg("large", "1", nil, map[string]string{"k1": "v1", "k2": "v2", "big": strings.Repeat("x", 256<<10-200)})
		o := expect(t, apply(t, "large", "kubectl", big), http.StatusOK)
		if has(o, "metadata", "annotations", lastApplied) {
			t.Errorf("annotation of %d bytes kept", len(str(o, "metadata", "annotations", lastApplied)))
		}
		checkEntries(t, "after the apply that outgrew the annotation", o, `[
{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:big":{},"f:k1":{},"f:k2":{}},"f:metadata":{"f:labels":{"f:a":{}}}}},
`+csaEntry+`]`)
	})
}

// checkEntries compares o's managedFields, without times, with want (JSON).
func checkEntries(t testing.TB, what string, o obj, want string) {
	t.Helper()
	mf, _ := field(o, "metadata", "managedFields")
	list, _ := mf.([]any)
	have := make([]any, 0, len(list))
	for _, m := range list {
		m := clone(m.(obj))
		delete(m, "time")
		have = append(have, m)
	}
	var w []any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if compact(have) != compact(w) {
		t.Errorf("%s: managedFields\n got: %s\nwant: %s", what, compact(have), compact(w))
	}
}

// entryTime returns the time of manager's managedFields entry in o.
func entryTime(o obj, manager string) string {
	mf, _ := field(o, "metadata", "managedFields")
	list, _ := mf.([]any)
	for _, m := range list {
		if m, _ := m.(obj); m["manager"] == manager {
			s, _ := m["time"].(string)
			return s
		}
	}
	return ""
}
