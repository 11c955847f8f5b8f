package conformance

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestGenerationOfCSIDriver checks kube-apiserver's CSIDriver strategy: no
// generation at create, none on a metadata change, and a bump on every
// change of the spec (the first makes it 1).
func TestGenerationOfCSIDriver(t *testing.T) {
	t.Parallel()
	e := target
	const path = "/apis/storage.k8s.io/v1/csidrivers"
	name := "c" + randomSuffix() + ".csi.conformance.kapi.dev"
	created := expect(t, e.post(t, path, obj{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
		"metadata": obj{"name": name}, "spec": obj{"attachRequired": true}}), http.StatusCreated)
	t.Cleanup(func() { e.del(t, path+"/"+name, nil) })
	if has(created, "metadata", "generation") {
		t.Errorf("generation %v at create, want none", compact(created["metadata"].(obj)["generation"]))
	}
	steps := []struct {
		what  string
		patch obj
		want  int64 // 0: none
	}{
		{"a label", obj{"metadata": obj{"labels": obj{"a": "b"}}}, 0},
		{"a spec change", obj{"spec": obj{"podInfoOnMount": true}}, 1},
		{"the same spec", obj{"spec": obj{"podInfoOnMount": true}}, 1},
		{"another spec change", obj{"spec": obj{"podInfoOnMount": false}}, 2},
		{"a generation from the client", obj{"metadata": obj{"generation": 9}}, 2},
	}
	for _, s := range steps {
		got := expect(t, e.do(t, http.MethodPatch, path+"/"+name, s.patch, "Content-Type", "application/merge-patch+json"), http.StatusOK)
		if g, _ := num(got, "metadata", "generation"); g != s.want {
			t.Errorf("after %s: generation %d, want %d", s.what, g, s.want)
		}
	}
}

// TestCRDDeletionWithFinalizer deletes a CustomResourceDefinition that
// carries a finalizer of its own: the delete answers it marked (the cleanup
// finalizer after the others, deletionTimestamp) without moving its
// generation, the cleanup finalizer goes once its objects are gone, the CRD
// stays with the other, and removing that one removes the CRD.
func TestCRDDeletionWithFinalizer(t *testing.T) {
	t.Parallel()
	e := target
	group := "c" + randomSuffix() + ".conformance.kapi.dev"
	crd := widgetCRD(group)
	const hold = "conformance.kapi.dev/hold"
	crd["metadata"].(obj)["finalizers"] = []any{hold}
	name := "widgets." + group
	item := crdPath + "/" + name
	created := expect(t, e.post(t, crdPath, crd), http.StatusCreated)
	t.Cleanup(func() {
		e.do(t, http.MethodPatch, item, obj{"metadata": obj{"finalizers": nil}}, "Content-Type", "application/merge-patch+json")
		e.del(t, item, nil)
	})
	if g, _ := num(created, "metadata", "generation"); g != 1 {
		t.Fatalf("generation %d at create, want 1", g)
	}
	marked := expect(t, e.del(t, item, nil), http.StatusOK)
	if g, _ := num(marked, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d in the delete's answer, want 1", g)
	}
	if f := toStrings(marked["metadata"].(obj)["finalizers"]); !slices.Equal(f, []string{hold, "customresourcecleanup.apiextensions.k8s.io"}) {
		t.Errorf("finalizers %q in the delete's answer", f)
	}
	if !has(marked, "metadata", "deletionTimestamp") {
		t.Errorf("no deletionTimestamp in the delete's answer")
	}
	var kept obj
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name="+name), "the cleanup finalizer to go", 30*time.Second,
		func(objs map[string]obj) bool {
			for _, o := range objs {
				kept = o
				return slices.Equal(toStrings(o["metadata"].(obj)["finalizers"]), []string{hold})
			}
			return false
		})
	if g, _ := num(kept, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d after the cleanup, want 1", g)
	}
	released := expect(t, e.do(t, http.MethodPatch, item, obj{"metadata": obj{"finalizers": nil}},
		"Content-Type", "application/merge-patch+json"), http.StatusOK)
	if g, _ := num(released, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d after removing the last finalizer, want 1", g)
	}
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name="+name), "the CRD to go", 30*time.Second,
		func(objs map[string]obj) bool { return len(objs) == 0 })
}
