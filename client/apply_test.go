package client

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
)

// TestApplyAgainstServer runs typed and dynamic server-side apply and the
// three patch types against the reference server: ownership is recorded,
// a conflicting apply is a typed Conflict error naming the field, force
// takes the field over.
func TestApplyAgainstServer(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServer(t)
			c := s.client(t, enc.contentType)
			ctx := testContext(t)
			cms := For[corev1.ConfigMap](c)

			cfg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "alice"}}
			got, err := cms.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			if mf := got.ManagedFields; len(mf) != 1 || mf[0].Manager != "alice" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
				t.Errorf("managedFields after apply: %+v", mf)
			}

			bob := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "bob"}}
			_, err = cms.Apply(ctx, bob, metav1.ApplyOptions{FieldManager: "bob"})
			if !IsConflict(err) || !HasStatusCause(err, "FieldManagerConflict") {
				t.Fatalf("conflicting apply: %v, want a Conflict with a FieldManagerConflict cause", err)
			}
			if st, _ := statusOf(err); st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != ".data.k" {
				t.Errorf("conflict causes: %+v", st.Details)
			}
			got, err = cms.Apply(ctx, bob, metav1.ApplyOptions{FieldManager: "bob", Force: true})
			if err != nil || got.Data["k"] != "bob" {
				t.Fatalf("forced apply: %v %v", got, err)
			}

			// The three patch types, as the server applies them.
			for _, p := range []struct {
				pt   PatchType
				body string
			}{
				{JSONPatchType, `[{"op":"add","path":"/data/j","value":"1"}]`},
				{MergePatchType, `{"data":{"m":"2"}}`},
				{StrategicMergePatchType, `{"data":{"s":"3"}}`},
			} {
				if _, err := cms.Patch(ctx, "cfg", p.pt, []byte(p.body), metav1.PatchOptions{FieldManager: "patcher"}); err != nil {
					t.Fatalf("%s: %v", p.pt, err)
				}
			}
			got, err = cms.Get(ctx, "cfg", metav1.GetOptions{})
			if err != nil || len(got.Data) != 4 || got.Data["j"] != "1" || got.Data["m"] != "2" || got.Data["s"] != "3" {
				t.Fatalf("after patches: %v %v", got, err)
			}

			// Dynamic apply of the same kind, creating another object.
			dyn := Dynamic(c).Resource(GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("test")
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "dyn"}, "data": map[string]any{"a": "b"}}}
			out, err := dyn.Apply(ctx, u, metav1.ApplyOptions{FieldManager: "dynamic"})
			if err != nil {
				t.Fatal(err)
			}
			if v, _, _ := unstructured.NestedString(out.Object, "data", "a"); v != "b" || len(out.GetManagedFields()) != 1 || out.GetManagedFields()[0].Manager != "dynamic" {
				t.Errorf("dynamic apply answered %v", out.Object)
			}
		})
	}
}
