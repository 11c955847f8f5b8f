package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const widgetCRDPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func widgetCRD(colorType string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.openapi.kapi.dev"},
"spec":{"group":"openapi.kapi.dev","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","properties":{"color":{"type":"` + colorType + `"}}}}}}}]}}`
}

// openAPIIndex returns the v3 index's group versions and their URLs.
func openAPIIndex(t *testing.T, srv http.Handler) map[string]string {
	t.Helper()
	rec := serveOpenAPIReq(srv, "/openapi/v3")
	if rec.Code != http.StatusOK {
		t.Fatalf("/openapi/v3: %d %s", rec.Code, rec.Body)
	}
	var idx struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range idx.Paths {
		out[k] = v.URL
	}
	return out
}

func serveOpenAPIReq(srv http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// TestOpenAPIServing checks the status codes and headers of /openapi/v2 and
// /openapi/v3 against what kube-apiserver v1.37.2 sends (captured with curl).
func TestOpenAPIServing(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	idx := openAPIIndex(t, srv)
	url := idx["api/v1"]
	hash := url[strings.Index(url, "hash=")+len("hash="):]
	etag := strconv.Quote(hash)
	const v2Proto = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	const v3Proto = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	v2 := serveOpenAPIReq(srv, "/openapi/v2")
	for _, tc := range []struct {
		name, path string
		header     []string
		code       int
		want       map[string]string // headers; "" means absent
	}{
		{"index", "/openapi/v3", nil, 200, map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache, private", "Etag": ""}},
		{"document with its hash", url, nil, 200, map[string]string{"Content-Type": "application/json", "Cache-Control": "public, immutable",
			"Etag": etag, "Vary": "Accept", "Accept-Ranges": "bytes"}},
		{"document without hash", "/openapi/v3/api/v1", nil, 200, map[string]string{"Cache-Control": "no-cache, private", "Etag": etag, "Expires": ""}},
		{"stale hash", "/openapi/v3/api/v1?hash=ABC", nil, 301, map[string]string{"Location": url, "Cache-Control": "no-cache, private",
			"Etag": etag}},
		{"not modified", url, []string{"If-None-Match", etag}, 304, map[string]string{"Cache-Control": "public, immutable", "Etag": etag, "Content-Type": ""}},
		{"v3 protobuf", url, []string{"Accept", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, 200, map[string]string{"Content-Type": v3Proto}},
		{"v3 not acceptable", url, []string{"Accept", "application/xml"}, 406, map[string]string{"Vary": "Accept"}},
		{"unknown group version", "/openapi/v3/apis/nope.example/v1", nil, 404, map[string]string{"Content-Type": ""}},
		{"v2", "/openapi/v2", nil, 200, map[string]string{"Content-Type": "application/json", "Cache-Control": "no-cache, private",
			"Etag": v2.Header().Get("Etag"), "Last-Modified": v2.Header().Get("Last-Modified")}},
		{"v2 protobuf", "/openapi/v2", []string{"Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}, 200,
			map[string]string{"Content-Type": v2Proto, "Etag": v2.Header().Get("Etag")}},
		{"v2 protobuf, kubectl's q-list", "/openapi/v2", []string{"Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json;q=0.9"}, 200,
			map[string]string{"Content-Type": v2Proto}},
		{"v2 not modified", "/openapi/v2", []string{"If-None-Match", v2.Header().Get("Etag")}, 304, map[string]string{"Etag": v2.Header().Get("Etag")}},
		{"v2 not acceptable", "/openapi/v2", []string{"Accept", "text/html"}, 406, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serveOpenAPIReq(srv, tc.path, tc.header...)
			if rec.Code != tc.code {
				t.Fatalf("%s: %d, want %d\n%s", tc.path, rec.Code, tc.code, rec.Body)
			}
			if tc.code != http.StatusOK && rec.Body.Len() != 0 {
				t.Errorf("%s: %d with a body %q, want none", tc.path, rec.Code, rec.Body)
			}
			for k, v := range tc.want {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %s %q, want %q", tc.path, k, got, v)
				}
			}
		})
	}
	if len(hash) != 128 {
		t.Errorf("hash %q", hash)
	}
	rec := serveOpenAPIReq(srv, url)
	exp, err := time.Parse(time.RFC1123, rec.Header().Get("Expires"))
	if err != nil || exp.Before(time.Now().AddDate(0, 11, 0)) || !strings.HasSuffix(rec.Header().Get("Expires"), " UTC") {
		t.Errorf("Expires %q (%v), want a year ahead, in UTC", rec.Header().Get("Expires"), err)
	}
}

// TestOpenAPICustomResources follows a CRD through create, update and
// delete: its group version enters the v3 index as soon as it is served,
// its schema (and hash) changes with it, and it leaves when deleted; the
// documents of other group versions keep their hashes.
func TestOpenAPICustomResources(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	const gv = "apis/openapi.kapi.dev/v1"
	before := openAPIIndex(t, srv)
	if _, ok := before[gv]; ok {
		t.Fatalf("index has %s before its CRD exists", gv)
	}
	if rec := crdServe(t, srv, http.MethodPost, widgetCRDPath, widgetCRD("string")); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	created := openAPIIndex(t, srv)
	if created[gv] == "" {
		t.Fatalf("index after the CRD's creation has no %s: %v", gv, created)
	}
	if created["api/v1"] != before["api/v1"] {
		t.Errorf("api/v1's URL changed with an unrelated CRD: %s -> %s", before["api/v1"], created["api/v1"])
	}
	colorType := func(url string) string {
		rec := serveOpenAPIReq(srv, url)
		var doc struct {
			Components struct {
				Schemas map[string]struct {
					Properties map[string]struct {
						Properties map[string]struct {
							Type string `json:"type"`
						} `json:"properties"`
					} `json:"properties"`
				} `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		return doc.Components.Schemas["dev.kapi.openapi.v1.Widget"].Properties["spec"].Properties["color"].Type
	}
	if got := colorType(created[gv]); got != "string" {
		t.Errorf("spec.color type %q, want string", got)
	}

	rec := crdServe(t, srv, http.MethodGet, widgetCRDPath+"/widgets.openapi.kapi.dev", "")
	var crd map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &crd); err != nil {
		t.Fatal(err)
	}
	rv := crd["metadata"].(map[string]any)["resourceVersion"].(string)
	update := strings.Replace(widgetCRD("integer"), `"name":"widgets.openapi.kapi.dev"`, `"name":"widgets.openapi.kapi.dev","resourceVersion":"`+rv+`"`, 1)
	if rec := crdServe(t, srv, http.MethodPut, widgetCRDPath+"/widgets.openapi.kapi.dev", update); rec.Code != http.StatusOK {
		t.Fatalf("updating the CRD: %d %s", rec.Code, rec.Body)
	}
	// The update is served once the CRD controller has seen it.
	deadline := time.Now().Add(10 * time.Second)
	var updated map[string]string
	for {
		updated = openAPIIndex(t, srv)
		if updated[gv] != created[gv] || time.Now().After(deadline) {
			break
		}
		waitBriefly()
	}
	if updated[gv] == created[gv] {
		t.Fatalf("%s's URL did not change with its schema", gv)
	}
	if got := colorType(updated[gv]); got != "integer" {
		t.Errorf("spec.color type after the update %q, want integer", got)
	}
	// The old hash now redirects to the new one.
	if rec := serveOpenAPIReq(srv, created[gv]); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != updated[gv] {
		t.Errorf("stale URL: %d Location %q, want 301 to %s", rec.Code, rec.Header().Get("Location"), updated[gv])
	}

	if rec := crdServe(t, srv, http.MethodDelete, widgetCRDPath+"/widgets.openapi.kapi.dev", ""); rec.Code != http.StatusOK {
		t.Fatalf("deleting the CRD: %d %s", rec.Code, rec.Body)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, ok := openAPIIndex(t, srv)[gv]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still in the index 10s after its CRD was deleted", gv)
		}
		waitBriefly()
	}
	if rec := serveOpenAPIReq(srv, "/openapi/v3/"+gv); rec.Code != http.StatusNotFound {
		t.Errorf("document of a deleted CRD: %d, want 404", rec.Code)
	}
}

// waitBriefly paces a poll of a condition that has its own deadline.
func waitBriefly() { <-time.After(10 * time.Millisecond) }

// TestOpenAPICachedPerGeneration checks that the documents are built once
// per registry state, not per request.
func TestOpenAPICachedPerGeneration(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	d1, _, err := srv.openAPIDocs()
	if err != nil {
		t.Fatal(err)
	}
	d2, _, _ := srv.openAPIDocs()
	if d1 != d2 {
		t.Error("documents rebuilt without a registry change")
	}
	if rec := crdServe(t, srv, http.MethodPost, widgetCRDPath, widgetCRD("string")); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	d3, _, _ := srv.openAPIDocs()
	if d3 == d1 {
		t.Error("documents not rebuilt after a CRD was served")
	}
}

func TestNegotiateOpenAPI(t *testing.T) {
	const proto, alt = "application/x-proto", "application/x-proto@v1"
	for _, tc := range []struct {
		accept, want string
		ok           bool
	}{
		{"", "application/json", true},
		{"*/*", "application/json", true},
		{"application/json", "application/json", true},
		{"application/x-proto@v1", proto, true},
		{"application/x-proto", proto, true},
		{"application/x-proto@v1, application/json;q=0.9", proto, true},
		{"application/json;q=0.5, application/x-proto", proto, true},
		{"application/x-proto;q=0, application/json;q=0.1", "application/json", true},
		{"text/html", "", false},
		{"application/x-proto;q=0", "", false},
		{",;;", "", false},
	} {
		got, ok := negotiateOpenAPI(tc.accept, proto, alt)
		if got != tc.want || ok != tc.ok {
			t.Errorf("negotiateOpenAPI(%q) = %q, %v; want %q, %v", tc.accept, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzNegotiateOpenAPI(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json;q=0.9, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", ";q=x,", "a/b;q=1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		mt, ok := negotiateOpenAPI(accept, "p", "p@1")
		if ok != (mt != "") {
			t.Errorf("negotiateOpenAPI(%q) = %q, %v", accept, mt, ok)
		}
	})
}

// BenchmarkOpenAPIV3 serves /openapi/v3/api/v1 as kubectl asks for it (the
// hashed URL of the index): the documents are built once, so a request costs
// a copy of the cached bytes.
func BenchmarkOpenAPIV3(b *testing.B) {
	srv, _ := newBenchServer(b)
	rec := serveOpenAPIReq(srv, "/openapi/v3")
	var idx struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil {
		b.Fatal(err)
	}
	url := idx.Paths["api/v1"].URL
	for _, bc := range []struct{ name, accept string }{
		{"json", "application/json"},
		{"protobuf", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := serveOpenAPIReq(srv, url, "Accept", bc.accept)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d", rec.Code)
				}
			}
		})
	}
}

// BenchmarkOpenAPIBuild is the cost of building every document, paid once
// per registry change (a CRD created, updated or deleted).
func BenchmarkOpenAPIBuild(b *testing.B) {
	srv, _ := newBenchServer(b)
	b.ReportAllocs()
	for b.Loop() {
		srv.openapi.mu.Lock()
		srv.openapi.docs = nil
		srv.openapi.mu.Unlock()
		if _, _, err := srv.openAPIDocs(); err != nil {
			b.Fatal(err)
		}
	}
}
