package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// A verb the resource does not list in discovery is 405 MethodNotAllowed,
// as kube-apiserver answers a GET of tokenreviews or a deletecollection of
// namespaces.
func TestVerbsNotServed(t *testing.T) {
	reg := registry.Builtin()
	if err := reg.Add(registry.Typed[corev1.ConfigMap](&registry.Resource{Group: "example.com", Version: "v1", Resource: "reviews",
		Kind: "ConfigMap", Verbs: []string{"create"}})); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/apis/example.com/v1/reviews"},
		{http.MethodGet, "/apis/example.com/v1/reviews?watch=true"},
		{http.MethodGet, "/apis/example.com/v1/reviews/x"},
		{http.MethodDelete, "/apis/example.com/v1/reviews/x"},
		{http.MethodDelete, "/api/v1/namespaces"},
	} {
		// A deadline, so that a server serving the watch fails the case
		// instead of streaming forever.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, c.method, c.path, nil))
		cancel()
		if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), `"reason":"MethodNotAllowed"`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body)
		}
	}
}
