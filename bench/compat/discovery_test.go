package compat

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/restmapper"
)

func hasVerbs(r metav1.APIResource, verbs ...string) bool {
	for _, v := range verbs {
		if !slices.Contains(r.Verbs, v) {
			return false
		}
	}
	return true
}

// TestDiscovery drives client-go's discovery client with its defaults: it
// asks /api and /apis for aggregated discovery (apidiscovery.k8s.io/v2) and
// needs no request per group version when the server serves it.
func TestDiscovery(t *testing.T) {
	cfg := restConfig(t)
	rec := &recorder{}
	cfg.WrapTransport = rec.wrap
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ServerGroupsAndResources", func(t *testing.T) {
		groups, resources, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatalf("ServerGroupsAndResources: %v", err)
		}
		var names []string
		for _, g := range groups {
			names = append(names, g.Name)
		}
		for _, want := range []string{"", "apps", "apiextensions.k8s.io"} {
			if !slices.Contains(names, want) {
				t.Errorf("groups %q lack %q", names, want)
			}
		}
		found := map[string]metav1.APIResource{}
		for _, rl := range resources {
			for _, r := range rl.APIResources {
				found[rl.GroupVersion+" "+r.Name] = r
			}
		}
		for _, c := range []struct {
			key, kind  string
			namespaced bool
			verbs      []string
		}{
			{"v1 configmaps", "ConfigMap", true, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}},
			{"v1 pods", "Pod", true, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}},
			{"v1 pods/status", "Pod", true, []string{"get", "patch", "update"}},
			{"v1 namespaces", "Namespace", false, []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
			{"apps/v1 deployments", "Deployment", true, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}},
			{"apps/v1 deployments/scale", "Scale", true, []string{"get", "patch", "update"}},
			{"apiextensions.k8s.io/v1 customresourcedefinitions", "CustomResourceDefinition", false, []string{"create", "get", "list", "watch"}},
		} {
			r, ok := found[c.key]
			if !ok {
				t.Errorf("no %s in discovery", c.key)
				continue
			}
			if r.Kind != c.kind || r.Namespaced != c.namespaced || !hasVerbs(r, c.verbs...) {
				t.Errorf("%s: kind %s namespaced %v verbs %v, want %s %v %v", c.key, r.Kind, r.Namespaced, r.Verbs, c.kind, c.namespaced, c.verbs)
			}
		}
	})

	t.Run("aggregated", func(t *testing.T) {
		// What the discovery client asked and got in the subtest above.
		ex := rec.exchanges()
		if len(ex) == 0 {
			t.Fatal("no requests recorded")
		}
		var perGV []string
		for _, e := range ex {
			switch {
			case e.path == "/api" || e.path == "/apis":
				if !strings.Contains(e.accept, "as=APIGroupDiscoveryList") {
					t.Errorf("GET %s asked %q, not aggregated discovery", e.path, e.accept)
				}
				if e.status != http.StatusOK || !strings.Contains(e.contentType, "g=apidiscovery.k8s.io") || !strings.Contains(e.contentType, "as=APIGroupDiscoveryList") {
					t.Errorf("GET %s: %d %q, want 200 with aggregated discovery (apidiscovery.k8s.io APIGroupDiscoveryList)", e.path, e.status, e.contentType)
				}
			default:
				perGV = append(perGV, e.path)
			}
		}
		if len(perGV) > 0 {
			t.Errorf("with aggregated discovery the client needs no request per group version; it made %d: %v", len(perGV), perGV[:min(len(perGV), 5)])
		}
	})

	t.Run("ServerPreferredResources", func(t *testing.T) {
		rls, err := dc.ServerPreferredResources()
		if err != nil {
			t.Fatalf("ServerPreferredResources: %v", err)
		}
		var ok bool
		for _, rl := range rls {
			for _, r := range rl.APIResources {
				ok = ok || (rl.GroupVersion == "apps/v1" && r.Name == "deployments")
			}
		}
		if !ok {
			t.Fatal("apps/v1 deployments not among the preferred resources")
		}
	})

	t.Run("RESTMapper", func(t *testing.T) {
		rm := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
		m, err := rm.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
		if err != nil {
			t.Fatalf("RESTMapping: %v", err)
		}
		if m.Resource != appsv1.SchemeGroupVersion.WithResource("deployments") || m.Scope.Name() != "namespace" {
			t.Fatalf("RESTMapping: %v scope %s", m.Resource, m.Scope.Name())
		}
		gvk, err := rm.KindFor(schema.GroupVersionResource{Resource: "configmaps"})
		if err != nil || gvk != corev1.SchemeGroupVersion.WithKind("ConfigMap") {
			t.Fatalf("KindFor configmaps: %v %v", gvk, err)
		}
	})

	t.Run("ServerVersion", func(t *testing.T) {
		v, err := dc.ServerVersion()
		if err != nil {
			t.Fatalf("ServerVersion: %v", err)
		}
		if v.Major != "1" || !strings.HasPrefix(v.GitVersion, "v1.") {
			t.Fatalf("ServerVersion: %+v", v)
		}
	})
}

// TestOpenAPI reads the OpenAPI documents as kubectl and client-go do:
// OpenAPISchema (v2, protobuf) and OpenAPIV3 (the index, then one document
// per group version).
func TestOpenAPI(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("v2", func(t *testing.T) {
		doc, err := dc.OpenAPISchema()
		if err != nil {
			t.Fatalf("OpenAPISchema: %v", err)
		}
		if doc.GetSwagger() != "2.0" {
			t.Fatalf("swagger %q, want 2.0", doc.GetSwagger())
		}
		var defs []string
		for _, p := range doc.GetDefinitions().GetAdditionalProperties() {
			defs = append(defs, p.GetName())
		}
		for _, want := range []string{"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.apps.v1.Deployment", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"} {
			if !slices.Contains(defs, want) {
				t.Errorf("no definition %s among %d", want, len(defs))
			}
		}
		var paths []string
		for _, p := range doc.GetPaths().GetPath() {
			paths = append(paths, p.GetName())
		}
		if !slices.Contains(paths, "/api/v1/namespaces/{namespace}/configmaps") {
			t.Errorf("no path /api/v1/namespaces/{namespace}/configmaps among %d", len(paths))
		}
	})
	t.Run("v3", func(t *testing.T) {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			t.Fatalf("OpenAPIV3().Paths: %v", err)
		}
		for _, want := range []string{"api/v1", "apis/apps/v1"} {
			if _, ok := paths[want]; !ok {
				t.Fatalf("no %s among the OpenAPI v3 paths (%d)", want, len(paths))
			}
		}
		b, err := paths["api/v1"].Schema("application/json")
		if err != nil {
			t.Fatalf("Schema of api/v1: %v", err)
		}
		var doc struct {
			OpenAPI    string `json:"openapi"`
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("api/v1 document: %v", err)
		}
		if !strings.HasPrefix(doc.OpenAPI, "3.") || doc.Components.Schemas["io.k8s.api.core.v1.ConfigMap"] == nil {
			t.Fatalf("api/v1 document: openapi %q, %d schemas, ConfigMap missing", doc.OpenAPI, len(doc.Components.Schemas))
		}
	})
	t.Run("v3-root", func(t *testing.T) {
		spec, err := openapi3.NewRoot(dc.OpenAPIV3()).GVSpec(appsv1.SchemeGroupVersion)
		if err != nil {
			t.Fatalf("GVSpec apps/v1: %v", err)
		}
		s, ok := spec.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
		if !ok {
			t.Fatal("no io.k8s.api.apps.v1.Deployment in apps/v1")
		}
		if _, ok := s.Properties["spec"]; !ok {
			t.Fatalf("Deployment schema has no spec property: %v", s.Properties)
		}
		if _, ok := spec.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]; !ok {
			t.Fatal("no path /apis/apps/v1/namespaces/{namespace}/deployments/{name}")
		}
	})
	t.Run("v3-group-versions", func(t *testing.T) {
		gvks, err := openapi3.NewRoot(dc.OpenAPIV3()).GroupVersions()
		if err != nil {
			t.Fatalf("GroupVersions: %v", err)
		}
		if !slices.Contains(gvks, corev1.SchemeGroupVersion) || !slices.Contains(gvks, appsv1.SchemeGroupVersion) {
			t.Fatalf("GroupVersions %v lack v1 or apps/v1", gvks)
		}
	})
}
