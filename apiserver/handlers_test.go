package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, srv *Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m
}

func newTestServer(t *testing.T) *Server {
	t.Helper()
	srv, err := New(Config{DisableServiceAccountController: true, DisableRootCAPublisher: true}) // namespaces as the tests make them
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if code, body := serve(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"t"}}`); code != http.StatusCreated {
		t.Fatalf("namespace: %d %v", code, body)
	}
	// Without a controller manager, pods need their service account made
	// for them (the ServiceAccount admission plugin refuses them otherwise).
	if code, body := serve(t, srv, "POST", "/api/v1/namespaces/t/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated {
		t.Fatalf("service account: %d %v", code, body)
	}
	return srv
}

// A name the client chose is never replaced by a generated one, even when
// generateName is also set: the create fails with 409.
func TestExplicitNameIsKept(t *testing.T) {
	srv := newTestServer(t)
	const body = `{"metadata":{"name":"taken","generateName":"gen-"}}`
	if code, _ := serve(t, srv, "POST", "/api/v1/namespaces/t/configmaps", body); code != http.StatusCreated {
		t.Fatalf("first create: %d", code)
	}
	code, st := serve(t, srv, "POST", "/api/v1/namespaces/t/configmaps", body)
	if code != http.StatusConflict || st["reason"] != "AlreadyExists" {
		t.Fatalf("second create: %d %v", code, st)
	}
}

// Defaults apply to update bodies too, and what the server allocated survives
// an update that leaves it out.
func TestUpdateDefaulting(t *testing.T) {
	srv := newTestServer(t)
	if code, b := serve(t, srv, "POST", "/api/v1/namespaces/t/secrets", `{"metadata":{"name":"s"},"stringData":{"a":"x"}}`); code != http.StatusCreated {
		t.Fatalf("create secret: %d %v", code, b)
	}
	code, got := serve(t, srv, "PUT", "/api/v1/namespaces/t/secrets/s", `{"metadata":{"name":"s"},"stringData":{"b":"y"}}`)
	if code != http.StatusOK {
		t.Fatalf("update secret: %d %v", code, got)
	}
	if data, _ := got["data"].(map[string]any); data["b"] != "eQ==" || got["stringData"] != nil {
		t.Errorf("stringData not folded into data on update: %v", got)
	}

	code, svc := serve(t, srv, "POST", "/api/v1/namespaces/t/services", `{"metadata":{"name":"web"},"spec":{"ports":[{"port":80}]}}`)
	if code != http.StatusCreated {
		t.Fatalf("create service: %d %v", code, svc)
	}
	ip := svc["spec"].(map[string]any)["clusterIP"]
	if ip == nil || ip == "" {
		t.Fatalf("no cluster IP allocated: %v", svc)
	}
	code, svc = serve(t, srv, "PUT", "/api/v1/namespaces/t/services/web", `{"metadata":{"name":"web"},"spec":{"ports":[{"port":81}]}}`)
	if code != http.StatusOK || svc["spec"].(map[string]any)["clusterIP"] != ip {
		t.Errorf("update lost the cluster IP %v: %d %v", ip, code, svc)
	}
	// Deleting the service frees its address for the next one.
	if code, _ := serve(t, srv, "DELETE", "/api/v1/namespaces/t/services/web", ""); code != http.StatusOK {
		t.Fatalf("delete: %d", code)
	}
	code, svc = serve(t, srv, "POST", "/api/v1/namespaces/t/services", `{"metadata":{"name":"web2"},"spec":{"ports":[{"port":80}],"clusterIP":"`+ip.(string)+`"}}`)
	if code != http.StatusCreated {
		t.Errorf("the freed address %v could not be reused: %d %v", ip, code, svc)
	}
}
