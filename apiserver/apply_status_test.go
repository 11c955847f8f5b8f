package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"
)

// applyReq sends a server-side apply of body to path as manager.
func applyReq(t *testing.T, srv *Server, path, manager, body string) map[string]any {
	t.Helper()
	rec := crdServe(t, srv, http.MethodPatch, path+"?fieldManager="+manager, body, "Content-Type", "application/apply-patch+yaml")
	if rec.Code != http.StatusOK && rec.Code != http.StatusCreated {
		t.Fatalf("apply %s: %d %s", path, rec.Code, rec.Body)
	}
	return decodeMap(t, rec)
}

// managedBy returns the fieldsV1 of manager's entry for subresource sub, as
// JSON.
func managedBy(t *testing.T, obj map[string]any, manager, sub string) string {
	t.Helper()
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if s, _ := m["subresource"].(string); m["manager"] == manager && s == sub {
			b, err := json.Marshal(m["fieldsV1"])
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	return ""
}

// A server-side apply to /status records what it applied under the
// subresource "status", as kube-apiserver does.
func TestApplyStatusRecordsManagedFields(t *testing.T) {
	srv := newTestServer(t)
	const path = "/apis/apps/v1/namespaces/t/deployments/web"
	applyReq(t, srv, path, "cd", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)
	got := applyReq(t, srv, path+"/status", "ctrl", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"observedGeneration":1}}`)
	if f := managedBy(t, got, "ctrl", "status"); f != `{"f:status":{"f:observedGeneration":{}}}` {
		t.Errorf("ctrl's status entry: %q", f)
	}
	if f := managedBy(t, got, "cd", ""); f == "" {
		t.Error("cd's entry lost")
	}
}

// A write that changes nothing once encoded is not stored: the
// resourceVersion stays, as kube-apiserver compares the encoded objects.
// Here another manager owns an empty map the object does not hold, and the
// merged object of a re-apply holds it empty where the stored one has none.
func TestNoOpWriteKeepsResourceVersion(t *testing.T) {
	srv := newTestServer(t)
	const path = "/api/v1/namespaces/t/configmaps/c"
	const a = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`
	applyReq(t, srv, path, "a", a)
	before := applyReq(t, srv, path, "b", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{}}}`)
	again := applyReq(t, srv, path, "a", a)
	rv := func(o map[string]any) any { return o["metadata"].(map[string]any)["resourceVersion"] }
	if rv(before) != rv(again) {
		t.Errorf("re-applying the same configuration moved the resourceVersion from %v to %v", rv(before), rv(again))
	}
}
