package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"testing"
)

// TestSystemPriorityClasses checks that the server starts with the
// PriorityClasses kube-apiserver v1.37.2 creates for itself, as captured
// (testdata/golden-1.37/cluster; but uid, resourceVersion and times), and
// that a server without system namespaces has none.
func TestSystemPriorityClasses(t *testing.T) {
	srv, err := New(Config{DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	// What varies between runs of the capture and of kapi.
	normalize := func(o map[string]any) {
		meta := o["metadata"].(map[string]any)
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
			if _, ok := meta[k]; !ok {
				t.Errorf("%s has no %s", meta["name"], k)
			}
			delete(meta, k)
		}
		for _, mf := range meta["managedFields"].([]any) {
			delete(mf.(map[string]any), "time")
		}
	}
	for _, name := range []string{"system-node-critical", "system-cluster-critical"} {
		b, err := os.ReadFile("../testdata/golden-1.37/cluster/priorityclass-" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		code, got := serve(t, srv, http.MethodGet, "/apis/scheduling.k8s.io/v1/priorityclasses/"+name, "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %v", name, code, got)
		}
		normalize(got)
		normalize(want)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s:\n got  %s\n want %s", name, g, w)
		}
	}

	bare, err := New(Config{SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bare.Close() })
	if code, _ := serve(t, bare, http.MethodGet, "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical", ""); code != http.StatusNotFound {
		t.Errorf("without system namespaces: %d, want 404", code)
	}
}
