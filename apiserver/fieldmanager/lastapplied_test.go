package fieldmanager

import (
	"encoding/json"
	"errors"
	"github.com/kapi-dev/kapi/internal/golden"
	"strings"
	"testing"
)

// clientSideApplied returns a ConfigMap as kubectl's client-side apply
// leaves it (created by kubectl-client-side-apply, recording its
// configuration), through m. recorded replaces the annotation's value
// unless empty.
func clientSideApplied(t testing.TB, m *Manager, recorded string) map[string]any {
	t.Helper()
	if recorded == "" {
		recorded = `{"apiVersion":"v1","data":{"k1":"v1","k2":"v2"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"a":"1"},"name":"cm","namespace":"ns"}}` + "\n"
	}
	o := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","uid":"u1","labels":{"a":"1"}},"data":{"k1":"v1","k2":"v2"}}`)
	o["metadata"].(map[string]any)["annotations"] = map[string]any{LastAppliedAnnotation: recorded}
	live, err := m.Update(nil, o, "kubectl-client-side-apply", "")
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// changedConfig is a changed configuration of clientSideApplied's object.
const changedConfig = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","labels":{"a":"2"}},"data":{"k1":"v1changed","k3":"v3"}}`

// TestApplyTakesOverClientSideApply checks which conflicts kubectl's
// server-side apply is allowed through by the last-applied annotation.
func TestApplyTakesOverClientSideApply(t *testing.T) {
	const bothConflicts = "Apply failed with 2 conflicts: conflicts with \"kubectl-client-side-apply\" using v1:\n- .data.k1\n- .metadata.labels.a"
	cases := []struct {
		name     string
		recorded string                                   // annotation ("" for the default record)
		prepare  func(live map[string]any) map[string]any // changes after the client-side apply
		manager  string
		wantErr  string // conflict message, "" for success
	}{
		{name: "kubectl takes over", manager: "kubectl"},
		{name: "another manager conflicts", manager: "other", wantErr: bothConflicts},
		{name: "kubectl-client-side-apply is not kubectl", manager: "kubectl-client-side-apply", wantErr: bothConflicts},
		{name: "annotation not JSON", recorded: "{", manager: "kubectl", wantErr: bothConflicts},
		{name: "annotation with trailing data", recorded: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"1"}},"data":{"k1":"v1"}} x`, manager: "kubectl", wantErr: bothConflicts},
		{name: "annotation not an object", recorded: `["a"]`, manager: "kubectl", wantErr: bothConflicts},
		{name: "annotation without kind", recorded: `{"apiVersion":"v1","metadata":{"name":"cm","labels":{"a":"1"}},"data":{"k1":"v1"}}`, manager: "kubectl", wantErr: bothConflicts},
		{name: "annotation of another kind", recorded: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cm","labels":{"a":"1"}}}`, manager: "kubectl", wantErr: bothConflicts},
		{name: "annotation of another apiVersion", recorded: `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"1"}},"data":{"k1":"v1"}}`, manager: "kubectl", wantErr: bothConflicts},
		{name: "annotation not matching the schema", recorded: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"1"}},"data":{"k1":"v1"},"nope":1}`, manager: "kubectl", wantErr: bothConflicts},
		{name: "only recorded fields are allowed", recorded: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"1"}}}`, manager: "kubectl",
			wantErr: `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.k1`},
		{name: "a recorded value no longer live is not allowed", recorded: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"1"}},"data":{"k1":"v0"}}`, manager: "kubectl",
			wantErr: `Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.k1`},
		{name: "a field changed by another manager since stays a conflict", manager: "kubectl",
			prepare: func(live map[string]any) map[string]any {
				o := deepCopy(live).(map[string]any)
				o["data"].(map[string]any)["k1"] = "bob"
				return o
			},
			wantErr: `Apply failed with 1 conflict: conflict with "bob" using v1: .data.k1`},
		{name: "no annotation", recorded: "-", manager: "kubectl", wantErr: bothConflicts},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := configMapManager(t, newClock())
			recorded := tc.recorded
			if recorded == "-" {
				recorded = ""
			}
			live := clientSideApplied(t, m, recorded)
			if tc.recorded == "-" {
				delete(live["metadata"].(map[string]any), "annotations")
			}
			if tc.prepare != nil {
				var err error
				if live, err = m.Update(live, tc.prepare(live), "bob", ""); err != nil {
					t.Fatal(err)
				}
			}
			got, err := m.Apply(live, obj(t, changedConfig), tc.manager, "", false)
			if tc.wantErr != "" {
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustEqualJSON(t, "data", got["data"], obj(t, `{"k1":"v1changed","k2":"v2","k3":"v3"}`))
			mustEqualJSON(t, "managedFields", withoutTimes(entries(t, got)), obj(t, `{"x":[
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k1":{},"f:k3":{}},"f:metadata":{"f:labels":{"f:a":{}}}},"manager":"`+tc.manager+`","operation":"Apply"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k2":{}},"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{}}},"manager":"kubectl-client-side-apply","operation":"Update"}]}`)["x"])
		})
	}
}

// TestApplyKeepsLastAppliedCurrent checks how kubectl's applies rewrite the
// annotation.
func TestApplyKeepsLastAppliedCurrent(t *testing.T) {
	m := configMapManager(t, newClock())
	cases := []struct {
		name    string
		live    string // "" for none
		applied string
		manager string
		want    string // the annotation after, "-" for none
	}{
		{name: "rewritten to the configuration", live: "old", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"b":"2","a":"<&>"}}`,
			want:    `{"apiVersion":"v1","data":{"a":"\u003c\u0026\u003e","b":"2"},"kind":"ConfigMap","metadata":{"name":"cm"}}` + "\n"},
		{name: "numbers kept as integers", live: "old", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","generation":12345678901},"data":{"a":"1"}}`,
			want:    `{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"generation":12345678901,"name":"cm"}}` + "\n"},
		{name: "other managers leave it", live: "old", manager: "alice",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1"}}`, want: "old"},
		{name: "not added when absent", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1"}}`, want: "-"},
		{name: "an empty one is absent", live: "-empty", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"1"}}`, want: ""},
		{name: "the configuration's own is not recorded", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","annotations":{"x":"y","kubectl.kubernetes.io/last-applied-configuration":"mine"}}}`,
			want:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"x":"y"},"name":"cm"}}` + "\n"},
		{name: "an annotations map of it alone stays, empty", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"mine"}}}`,
			want:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{},"name":"cm"}}` + "\n"},
		{name: "null annotations are left out", live: "old", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","annotations":null}}`,
			want:    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}` + "\n"},
		{name: "dropped when the annotations outgrow the limit", live: "old", manager: "kubectl",
			applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"` + strings.Repeat("x", TotalAnnotationSizeLimit) + `"}}`,
			want:    "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var live map[string]any
			if tc.live != "" {
				live = obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","uid":"u1"}}`)
				v := tc.live
				if v == "-empty" {
					v = ""
				}
				live["metadata"].(map[string]any)["annotations"] = map[string]any{LastAppliedAnnotation: v}
				var err error
				if live, err = m.Update(nil, live, "kubectl-client-side-apply", ""); err != nil {
					t.Fatal(err)
				}
			}
			applied := obj(t, tc.applied)
			before := canon(t, applied)
			got, err := m.Apply(live, applied, tc.manager, "", false)
			if err != nil {
				t.Fatal(err)
			}
			if canon(t, applied) != before {
				t.Error("Apply modified the applied configuration")
			}
			a, _ := got["metadata"].(map[string]any)["annotations"].(map[string]any)
			v, ok := a[LastAppliedAnnotation]
			switch {
			case tc.want == "-" && ok:
				t.Errorf("annotation %.100q, want none", v)
			case tc.want != "-" && v != tc.want:
				t.Errorf("annotation\n got %q\nwant %q", v, tc.want)
			}
		})
	}
}

// TestLastAppliedSizeLimit checks the limit at its edge: annotations of
// exactly TotalAnnotationSizeLimit bytes keep the record.
func TestLastAppliedSizeLimit(t *testing.T) {
	applied := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`)
	value, err := lastAppliedValue(applied)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pad  int
		kept bool
	}{{0, true}, {1, false}} {
		other := strings.Repeat("x", TotalAnnotationSizeLimit-len(value)-len(LastAppliedAnnotation)-1+tc.pad)
		out := map[string]any{"metadata": map[string]any{"annotations": map[string]any{LastAppliedAnnotation: "old", "o": other}}}
		if err := syncLastApplied(out, applied); err != nil {
			t.Fatal(err)
		}
		_, ok := out["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation]
		if ok != tc.kept {
			t.Errorf("%d bytes over the limit: kept = %v, want %v", tc.pad, ok, tc.kept)
		}
	}
}

// TestApplyTakesOverCustomResource checks the take-over for a kind the
// schema does not know (ForCRD): the record's kind is checked against the
// live object's.
func TestApplyTakesOverCustomResource(t *testing.T) {
	for _, r := range golden.Releases {
		t.Run(r.Name, func(t *testing.T) {
			s, err := ForCRD(crdSchema(t))
			if err != nil {
				t.Fatal(err)
			}
			m := New(s, "example.com/v1", newClock().now)
			x := goldenObject(t, r, "87-create-widget")
			delete(x["metadata"].(map[string]any), "managedFields")
			kind, apiVersion := x["kind"].(string), x["apiVersion"].(string)
			if apiVersion != "example.com/v1" {
				t.Skipf("golden 87 is of %s", apiVersion)
			}
			record := deepCopy(x).(map[string]any)
			md := record["metadata"].(map[string]any)
			for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation"} {
				delete(md, k)
			}
			b, _ := json.Marshal(record)
			x["metadata"].(map[string]any)["annotations"] = map[string]any{LastAppliedAnnotation: string(b)}
			live, err := m.Update(nil, x, "kubectl-client-side-apply", "")
			if err != nil {
				t.Fatal(err)
			}
			spec, _ := record["spec"].(map[string]any)
			if len(spec) == 0 {
				t.Skip("golden 87 has no spec")
			}
			// Change every recorded spec field that is a string or a number.
			applied := deepCopy(record).(map[string]any)
			changed := 0
			for k, v := range applied["spec"].(map[string]any) {
				switch v := v.(type) {
				case string:
					applied["spec"].(map[string]any)[k] = v + "-changed"
					changed++
				case int64:
					applied["spec"].(map[string]any)[k] = v + 1
					changed++
				}
			}
			if changed == 0 {
				t.Skip("no scalar in golden 87's spec")
			}
			if _, err := m.Apply(live, applied, "other", "", false); err == nil {
				t.Fatal("another manager's apply did not conflict")
			}
			got, err := m.Apply(live, applied, "kubectl", "", false)
			if err != nil {
				t.Fatalf("kubectl's apply: %v", err)
			}
			want, _ := json.Marshal(applied)
			if a := got["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation]; a != string(want)+"\n" {
				t.Errorf("annotation %q, want %q", a, string(want)+"\n")
			}
			// A record of another kind allows nothing.
			record["kind"] = kind + "X"
			b, _ = json.Marshal(record)
			live["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation] = string(b)
			if _, err := m.Apply(live, applied, "kubectl", "", false); err == nil {
				t.Error("a record of another kind allowed the take-over")
			}
		})
	}
}

// FuzzLastApplied feeds arbitrary annotations to kubectl's apply: it never
// panics, and either succeeds or reports conflicts.
func FuzzLastApplied(f *testing.F) {
	f.Add(`{"apiVersion":"v1","data":{"k1":"v1","k2":"v2"},"kind":"ConfigMap","metadata":{"labels":{"a":"1"},"name":"cm"}}`)
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","data":{"k1":1}}`)
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":null}} {}`)
	f.Add(`[]`)
	f.Add(`"`)
	m := configMapManager(f, newClock())
	live0 := clientSideApplied(f, m, "")
	f.Fuzz(func(t *testing.T, recorded string) {
		live := deepCopy(live0).(map[string]any)
		live["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation] = recorded
		_, err := m.Apply(live, obj(t, changedConfig), "kubectl", "", false)
		var ce *ConflictError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("err = %v", err)
		}
	})
}
