package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"
)

// Graceful deletion and finalizers together, as kube-apiserver combines
// them: a pod keeps waiting for its grace period when its finalizers go, and
// one deleted with a period of 0 waits for its finalizers.
func TestPodGracefulDeletionWithFinalizers(t *testing.T) {
	srv := newTestServer(t)
	const pods = "/api/v1/namespaces/t/pods"
	pod := func(name string) string {
		return `{"metadata":{"name":"` + name + `","finalizers":["example.com/hold"]},"spec":{"nodeName":"n","containers":[{"name":"c","image":"i"}]}}`
	}
	meta := func(o map[string]any) map[string]any { return o["metadata"].(map[string]any) }
	release := func(name string) map[string]any {
		_, cur := serve(t, srv, "GET", pods+"/"+name, "")
		delete(meta(cur), "finalizers")
		b, _ := json.Marshal(cur)
		return mustServe(t, srv, "PUT", pods+"/"+name, string(b), http.StatusOK)
	}

	mustServe(t, srv, "POST", pods, pod("graceful"), http.StatusCreated)
	if got := mustServe(t, srv, "DELETE", pods+"/graceful", "", http.StatusOK); meta(got)["deletionGracePeriodSeconds"] != 30.0 {
		t.Fatalf("marked %v", meta(got))
	}
	release("graceful")
	if code, got := serve(t, srv, "GET", pods+"/graceful", ""); code != http.StatusOK || meta(got)["finalizers"] != nil {
		t.Fatalf("a pod whose grace period is pending went with its finalizers: %d %v", code, got)
	}
	mustServe(t, srv, "DELETE", pods+"/graceful?gracePeriodSeconds=0", "", http.StatusOK)
	mustServe(t, srv, "GET", pods+"/graceful", "", http.StatusNotFound)

	mustServe(t, srv, "POST", pods, pod("now"), http.StatusCreated)
	if got := mustServe(t, srv, "DELETE", pods+"/now?gracePeriodSeconds=0", "", http.StatusOK); meta(got)["deletionGracePeriodSeconds"] != 0.0 {
		t.Fatalf("marked %v", meta(got))
	}
	mustServe(t, srv, "GET", pods+"/now", "", http.StatusOK) // held by its finalizer
	release("now")
	mustServe(t, srv, "GET", pods+"/now", "", http.StatusNotFound)

	// A dry run answers the marked pod and changes nothing.
	created := mustServe(t, srv, "POST", pods, pod("dry"), http.StatusCreated)
	if got := mustServe(t, srv, "DELETE", pods+"/dry?dryRun=All", "", http.StatusOK); meta(got)["deletionTimestamp"] == nil {
		t.Errorf("dry run answered %v", meta(got))
	}
	if got := mustServe(t, srv, "GET", pods+"/dry", "", http.StatusOK); meta(got)["resourceVersion"] != meta(created)["resourceVersion"] {
		t.Errorf("a dry run changed the pod")
	}
}
