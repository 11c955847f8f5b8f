package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// hashRE is the form of the hashes of /openapi: an upper-case hex SHA-512.
var hashRE = regexp.MustCompile(`^[0-9A-F]{128}$`)

// getNoRedirect is get without following redirects.
func (e *env) getNoRedirect(t testing.TB, path string) *response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.within(30*time.Second))
	defer cancel()
	req, err := e.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *e.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{Method: http.MethodGet, Path: path, Code: resp.StatusCode, Header: resp.Header, Body: b}
}

// openAPIIndex reads /openapi/v3: each group version's serverRelativeURL.
func (e *env) openAPIIndex(t testing.TB) map[string]string {
	t.Helper()
	r := e.get(t, "/openapi/v3")
	expect(t, r, http.StatusOK)
	idx := decode(t, r.Body) // served as text/plain, as kube-apiserver does
	paths, ok := idx["paths"].(map[string]any)
	if !ok {
		t.Fatalf("/openapi/v3 without paths: %s", compact(idx))
	}
	out := map[string]string{}
	for k, v := range paths {
		m, _ := v.(map[string]any)
		u, _ := m["serverRelativeURL"].(string)
		out[k] = u
	}
	return out
}

// TestOpenAPI checks the OpenAPI documents kubectl and client-go read:
// /openapi/v2 (JSON, protobuf, ETag and 304), the /openapi/v3 index and a
// group version's document (the definitions and extensions kubectl explain
// and validation use, the PATCH operation that takes fieldValidation, the
// caching headers of a hashed URL, 304, the redirect of a stale hash), and a
// CRD's group version appearing in the index with its schema.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	e := target

	t.Run("v2", func(t *testing.T) {
		t.Parallel()
		r := e.get(t, "/openapi/v2")
		doc := expect(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		if str(doc, "swagger") != "2.0" {
			t.Errorf("swagger %q", str(doc, "swagger"))
		}
		pod, _ := field(doc, "definitions", "io.k8s.api.core.v1.Pod")
		if !hasKey(pod, "x-kubernetes-group-version-kind") {
			t.Errorf("Pod definition without its GVK: %v", pod)
		}
		containers, _ := field(doc, "definitions", "io.k8s.api.core.v1.PodSpec", "properties", "containers")
		c, _ := containers.(map[string]any)
		if c["x-kubernetes-patch-merge-key"] != "name" || c["x-kubernetes-patch-strategy"] != "merge" || c["x-kubernetes-list-type"] != "map" {
			t.Errorf("PodSpec.containers: %v", containers)
		}
		etag := r.Header.Get("ETag")
		if !hashRE.MatchString(strings.Trim(etag, `"`)) || !strings.HasPrefix(etag, `"`) {
			t.Errorf("ETag %q, want a quoted SHA-512", etag)
		}
		// The document changes whenever a CRD comes or goes (other cases
		// create some): a 200 with another ETag means it changed meanwhile.
		for attempt := 0; ; attempt++ {
			nm := e.get(t, "/openapi/v2", "If-None-Match", etag)
			if nm.Code == http.StatusOK && nm.Header.Get("ETag") != etag && attempt < 5 {
				etag = nm.Header.Get("ETag")
				continue
			}
			if nm.Code != http.StatusNotModified || len(nm.Body) != 0 {
				t.Errorf("If-None-Match %s: %s", etag, nm)
			}
			pb := e.get(t, "/openapi/v2", "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
			if pb.Code == http.StatusOK && pb.Header.Get("ETag") != etag && attempt < 5 {
				etag = pb.Header.Get("ETag")
				continue
			}
			if pb.Code != http.StatusOK || pb.Header.Get("Content-Type") != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" ||
				pb.Header.Get("ETag") != etag || len(pb.Body) == 0 {
				t.Errorf("protobuf: %d %s ETag %s (JSON's %s), %d bytes", pb.Code, pb.Header.Get("Content-Type"), pb.Header.Get("ETag"), etag, len(pb.Body))
			}
			break
		}
		if na := e.get(t, "/openapi/v2", "Accept", "application/xml"); na.Code != http.StatusNotAcceptable {
			t.Errorf("Accept application/xml: %d, want 406", na.Code)
		}
	})

	t.Run("v3", func(t *testing.T) {
		t.Parallel()
		idx := e.openAPIIndex(t)
		url := idx["api/v1"]
		hash, ok := strings.CutPrefix(url, "/openapi/v3/api/v1?hash=")
		if !ok || !hashRE.MatchString(hash) {
			t.Fatalf("index entry of api/v1: %q", url)
		}
		for _, gv := range []string{"apis/apps/v1", "apis/coordination.k8s.io/v1"} {
			if !strings.HasPrefix(idx[gv], "/openapi/v3/"+gv+"?hash=") {
				t.Errorf("index entry of %s: %q", gv, idx[gv])
			}
		}

		r := e.get(t, url)
		doc := expect(t, r, http.StatusOK)
		for k, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "public, immutable", "ETag": `"` + hash + `"`} {
			if got := r.Header.Get(k); got != want {
				t.Errorf("%s: %s %q, want %q", url, k, got, want)
			}
		}
		if exp, err := time.Parse(time.RFC1123, r.Header.Get("Expires")); err != nil || time.Until(exp) < 300*24*time.Hour {
			t.Errorf("Expires %q, want about a year ahead", r.Header.Get("Expires"))
		}
		if str(doc, "openapi") != "3.0.0" {
			t.Errorf("openapi %q", str(doc, "openapi"))
		}
		spec, _ := field(doc, "components", "schemas", "io.k8s.api.core.v1.PodSpec")
		if req, _ := field(spec.(map[string]any), "required"); !slices.Contains(anyStrings(req), "containers") {
			t.Errorf("PodSpec.required %v, want containers", req)
		}
		if q, _ := field(doc, "components", "schemas", "io.k8s.apimachinery.pkg.api.resource.Quantity"); q == nil {
			t.Error("no Quantity schema")
		}
		// kubectl leaves validation to the server when the PATCH operation of
		// the kind takes fieldValidation.
		patch, _ := field(doc, "paths", "/api/v1/namespaces/{namespace}/configmaps/{name}", "patch")
		p, _ := patch.(map[string]any)
		gvk, _ := p["x-kubernetes-group-version-kind"].(map[string]any)
		if gvk["kind"] != "ConfigMap" || gvk["version"] != "v1" || !slices.Contains(paramNames(p), "fieldValidation") {
			t.Errorf("PATCH of configmaps: GVK %v, parameters %v", gvk, paramNames(p))
		}

		if nm := e.get(t, url, "If-None-Match", `"`+hash+`"`); nm.Code != http.StatusNotModified || len(nm.Body) != 0 {
			t.Errorf("If-None-Match: %s", nm)
		}
		plain := e.get(t, "/openapi/v3/api/v1")
		if plain.Code != http.StatusOK || plain.Header.Get("Cache-Control") != "no-cache, private" || plain.Header.Get("ETag") != `"`+hash+`"` {
			t.Errorf("without a hash: %d Cache-Control %q ETag %q", plain.Code, plain.Header.Get("Cache-Control"), plain.Header.Get("ETag"))
		}
		stale := e.getNoRedirect(t, "/openapi/v3/api/v1?hash=0123")
		if stale.Code != http.StatusMovedPermanently || stale.Header.Get("Location") != url {
			t.Errorf("stale hash: %d Location %q, want 301 to %s", stale.Code, stale.Header.Get("Location"), url)
		}
		if nf := e.get(t, "/openapi/v3/apis/nothing.kapi.dev/v1"); nf.Code != http.StatusNotFound {
			t.Errorf("unknown group version: %d, want 404", nf.Code)
		}
	})

	t.Run("custom resource", func(t *testing.T) {
		t.Parallel()
		group, _ := e.createCRD(t)
		gv := "apis/" + group + "/v1"
		// kube-apiserver publishes a CRD's document shortly after it is
		// established.
		deadline := time.Now().Add(e.within(30 * time.Second))
		var url string
		for {
			if url = e.openAPIIndex(t)[gv]; url != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not in /openapi/v3 30s after its CRD was established", gv)
			}
			<-time.After(100 * time.Millisecond) // pacing a poll that has a deadline
		}
		doc := expect(t, e.get(t, url), http.StatusOK)
		labels := strings.Split(group, ".")
		slices.Reverse(labels)
		name := strings.Join(labels, ".") + ".v1.Widget"
		widget, _ := field(doc, "components", "schemas", name)
		w, _ := widget.(map[string]any)
		if w == nil {
			t.Fatalf("no %s in %s", name, url)
		}
		size, _ := field(w, "properties", "spec", "properties", "size")
		if s, _ := size.(map[string]any); s["type"] != "integer" {
			t.Errorf("spec.size: %v", size)
		}
		gvks, _ := w["x-kubernetes-group-version-kind"].([]any)
		if want := fmt.Sprint([]any{map[string]any{"group": group, "version": "v1", "kind": "Widget"}}); fmt.Sprint(gvks) != want {
			t.Errorf("GVK %v, want %v", gvks, want)
		}
		if _, ok := field(w, "properties", "metadata"); !ok {
			t.Error("no metadata property")
		}
	})
}

func hasKey(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[key]
	return ok
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func paramNames(op map[string]any) []string {
	var out []string
	ps, _ := op["parameters"].([]any)
	for _, p := range ps {
		m, _ := p.(map[string]any)
		s, _ := m["name"].(string)
		out = append(out, s)
	}
	return out
}
