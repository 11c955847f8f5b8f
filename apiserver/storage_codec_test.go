package apiserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// storedJSON returns the JSON of every object of srv's store, by key.
func storedJSON(t *testing.T, srv *Server) (map[string]string, uint64) {
	t.Helper()
	res, err := srv.Storage().List(context.Background(), "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range res.Items {
		b, err := kjson.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		key := o.GetNamespace() + "/" + o.GetName() + " " + strings.SplitN(string(b), `"metadata"`, 2)[0]
		out[key] = string(b)
	}
	return out, res.Revision
}

// TestDataDirRestart stops a server with a DataDir and starts another on
// the directory: every object (built-in kinds through protobuf, custom
// resources through JSON) reads back as it was, and the custom resources
// are served again.
func TestDataDirRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD},
		{"POST", "/apis/test.kapi.dev/v1/namespaces/default/gadgets", `{"apiVersion":"test.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"replicas":3,"tags":["a"]}}`},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"cm","labels":{"a":"b"}},"data":{"k":"v"},"binaryData":{"b":"AAEC"}}`},
		{"POST", "/api/v1/namespaces/default/secrets", `{"metadata":{"name":"s"},"type":"Opaque","data":{"k":"AAEC"}}`},
		{"POST", "/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"gone"}}`},
		{"DELETE", "/api/v1/namespaces/default/configmaps/gone", ``},
	} {
		if rec := crdServe(t, srv, w.method, w.path, w.body); rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", w.method, w.path, rec.Code, rec.Body)
		}
	}
	before, rev := storedJSON(t, srv)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, DataFile)); err != nil {
		t.Fatal(err)
	}

	srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	after, rev2 := storedJSON(t, srv)
	if rev2 < rev {
		t.Fatalf("revision %d after the restart, %d before", rev2, rev)
	}
	for k, b := range before {
		if after[k] != b {
			t.Errorf("%s after the restart:\n%s\nbefore:\n%s", k, after[k], b)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d objects after the restart, %d before", len(after), len(before))
	}
	rec := crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/namespaces/default/gadgets/g", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"replicas":3`) {
		t.Fatalf("custom resource after the restart: %d %s", rec.Code, rec.Body)
	}
	if rec := crdServe(t, srv, "GET", "/api/v1/namespaces/default/configmaps/gone", ""); rec.Code != http.StatusNotFound {
		t.Fatalf("deleted object after the restart: %d", rec.Code)
	}
}

// TestDataDirErrors: a data file New cannot read fails New.
func TestDataDirErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DataFile), []byte("not a database, not at all, really not"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Config{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), DataFile) {
		t.Fatalf("New on a damaged file: %v", err)
	}
}
