package conformance

import (
	"net/http"
	"testing"
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
