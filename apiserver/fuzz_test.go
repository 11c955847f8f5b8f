package apiserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// FuzzServeHTTP throws arbitrary requests at a server holding a few objects:
// every answer must be a deliberate one, never a recovered panic (500).
func FuzzServeHTTP(f *testing.F) {
	for _, seed := range []struct{ method, path, ct, body string }{
		{"POST", "/api/v1/namespaces/ns/configmaps", "application/json", `{"metadata":{"name":"a"}}`},
		{"PUT", "/api/v1/namespaces/ns/configmaps/cm", "application/json", `{"metadata":{"name":"cm","resourceVersion":"1"}}`},
		{"GET", "/api/v1/namespaces/ns/configmaps?limit=1&continue=x", "", ""},
		{"GET", "/api/v1/configmaps?watch=1&timeoutSeconds=0&resourceVersion=1&labelSelector=a%20in%20(b)", "", ""},
		{"DELETE", "/api/v1/namespaces/ns/configmaps/cm", "application/json", `{"preconditions":{"uid":"x"}}`},
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", "application/yaml", "metadata:\n  name: d\n"},
		{"POST", "/api/v1/namespaces/ns/pods", "application/vnd.kubernetes.protobuf", "k8s\x00\x0a\x00"},
		{"PUT", "/api/v1/namespaces/ns/status", "application/json", `{"metadata":{"name":"ns"}}`},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/ns/leases?fieldSelector=metadata.name%3Dx", "", ""},
	} {
		f.Add(seed.method, seed.path, seed.ct, []byte(seed.body))
	}
	srv, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxRequestBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	for _, body := range []string{`{"metadata":{"name":"ns"}}`} {
		mustDo(f, srv, "POST", "/api/v1/namespaces", body, http.StatusCreated)
	}
	mustDo(f, srv, "POST", "/api/v1/namespaces/ns/configmaps", `{"metadata":{"name":"cm"}}`, http.StatusCreated)
	f.Fuzz(func(t *testing.T, method, path, ct string, body []byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#") || strings.ContainsAny(method, " \r\n\t:/()<>@,;\\\"[]?={}") || method == "" {
			return // not a request line net/http would deliver
		}
		// Watches end when the request's context does.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, "http://kapi"+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s (%s) %q: 500 %s", method, path, ct, body, rec.Body)
		}
	})
}

// FuzzDiscovery throws arbitrary methods, paths and Accept headers at the
// discovery and routing paths: every answer is deliberate (never 500), and
// a JSON answer is a JSON document.
func FuzzDiscovery(f *testing.F) {
	for _, seed := range []struct{ method, path, accept string }{
		{"GET", "/api", acceptAggregatedJSON},
		{"GET", "/apis", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
		{"DELETE", "/apis", "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5, */*"},
		{"GET", "/apis/apps/v1", "text/plain"},
		{"PUT", "/api/v1", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"},
		{"HEAD", "/apis/apps", ""},
		{"GET", "/apis/nope/v1/x", "application/json"},
		{"PATCH", "/api/v1/configmaps", "application/json"},
		{"GET", "/api/v9/pods/a/b/c", ";;,"},
	} {
		f.Add(seed.method, seed.path, seed.accept)
	}
	srv, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, method, path, accept string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n\t#?") || strings.ContainsAny(method, " \r\n\t:/()<>@,;\\\"[]?={}") || method == "" ||
			strings.ContainsAny(accept, "\r\n") {
			return // not a request net/http would deliver (no query: no watches)
		}
		req, err := http.NewRequest(method, "http://kapi"+path, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s (Accept %q): 500 %s", method, path, accept, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") && rec.Body.Len() > 0 {
			var v any
			if err := kjson.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatalf("%s %s (Accept %q): %s answered with invalid JSON: %v", method, path, accept, ct, err)
			}
		}
	})
}
