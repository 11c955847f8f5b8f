package apiserver

import (
	"net/http"
	"testing"
)

// The scale of a deployment: GET, PUT (only spec.replicas changes, the
// generation moves), stale resourceVersion 409, negative replicas 422.
func TestDeploymentScale(t *testing.T) {
	srv := newTestServer(t)
	mustServe(t, srv, "POST", "/apis/apps/v1/namespaces/t/deployments", deploymentJSON("web", 3), http.StatusCreated)
	const path = "/apis/apps/v1/namespaces/t/deployments/web/scale"
	sc := mustServe(t, srv, "GET", path, "", http.StatusOK)
	if sc["kind"] != "Scale" || sc["apiVersion"] != "autoscaling/v1" || sc["spec"].(map[string]any)["replicas"] != float64(3) ||
		sc["status"].(map[string]any)["selector"] != "app=web" {
		t.Fatalf("scale %v", sc)
	}
	rv := sc["metadata"].(map[string]any)["resourceVersion"].(string)
	got := mustServe(t, srv, "PUT", path, `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","resourceVersion":"`+rv+`"},"spec":{"replicas":5}}`, http.StatusOK)
	if got["spec"].(map[string]any)["replicas"] != float64(5) {
		t.Errorf("put answered %v", got)
	}
	d := mustServe(t, srv, "GET", "/apis/apps/v1/namespaces/t/deployments/web", "", http.StatusOK)
	if d["spec"].(map[string]any)["replicas"] != float64(5) || d["metadata"].(map[string]any)["generation"] != float64(2) {
		t.Errorf("deployment after scale %v", d)
	}
	st := mustServe(t, srv, "PUT", path, `{"metadata":{"name":"web","resourceVersion":"`+rv+`"},"spec":{"replicas":1}}`, http.StatusConflict)
	if st["reason"] != "Conflict" {
		t.Errorf("stale put %v", st)
	}
	st = mustServe(t, srv, "PUT", path, `{"metadata":{"name":"web"},"spec":{"replicas":-1}}`, http.StatusUnprocessableEntity)
	if st["message"] != `Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0` {
		t.Errorf("invalid put %v", st)
	}
	mustServe(t, srv, "PUT", path+"?dryRun=All", `{"metadata":{"name":"web"},"spec":{"replicas":9}}`, http.StatusOK)
	if d := mustServe(t, srv, "GET", path, "", http.StatusOK); d["spec"].(map[string]any)["replicas"] != float64(5) {
		t.Errorf("dry-run scale stored: %v", d)
	}
	mustServe(t, srv, "GET", "/apis/apps/v1/namespaces/t/deployments/nope/scale", "", http.StatusNotFound)
	mustServe(t, srv, "GET", "/api/v1/namespaces/t/configmaps/x/scale", "", http.StatusNotFound)
	mustServe(t, srv, "POST", path, `{}`, http.StatusMethodNotAllowed)
}

// The scale of a custom resource follows the paths of its CRD.
func TestCustomResourceScale(t *testing.T) {
	srv := newTestServer(t)
	widgets(t, srv)
	const path = "/apis/example.com/v1/namespaces/t/widgets"
	mustServe(t, srv, "POST", path, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2,"color":"red"},"status":{"replicas":1,"selector":"app=w"}}`, http.StatusCreated)
	sc := mustServe(t, srv, "GET", path+"/w/scale", "", http.StatusOK)
	if sc["spec"].(map[string]any)["replicas"] != float64(2) || sc["status"].(map[string]any)["replicas"] != float64(1) ||
		sc["status"].(map[string]any)["selector"] != "app=w" {
		t.Fatalf("scale %v", sc)
	}
	mustServe(t, srv, "PUT", path+"/w/scale", `{"metadata":{"name":"w"},"spec":{"replicas":4}}`, http.StatusOK)
	w := mustServe(t, srv, "GET", path+"/w", "", http.StatusOK)
	if spec := w["spec"].(map[string]any); spec["replicas"] != float64(4) || spec["color"] != "red" {
		t.Errorf("widget after scale %v", w)
	}
}
