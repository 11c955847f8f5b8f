package client

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

func TestDiscovery(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	d := s.client(t, codec.MediaTypeProtobuf).Discovery()

	v, err := d.ServerVersion(ctx)
	if err != nil || v.Major != "1" || !strings.HasPrefix(v.GitVersion, "v1.") || v.String() != v.GitVersion {
		t.Errorf("ServerVersion %+v %v", v, err)
	}

	groups, err := d.ServerGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The groups this test knows, in the server's order (the others a
	// server serves come between them, by kube-apiserver's priorities).
	known := map[string]bool{"": true, "apps": true, "apiextensions.k8s.io": true, "coordination.k8s.io": true, "discovery.k8s.io": true}
	var names []string
	for _, g := range groups.Groups {
		if known[g.Name] {
			names = append(names, g.Name+"="+g.PreferredVersion.GroupVersion)
		}
	}
	if got := strings.Join(names, " "); got != "=v1 apps=apps/v1 apiextensions.k8s.io=apiextensions.k8s.io/v1 coordination.k8s.io=coordination.k8s.io/v1 discovery.k8s.io=discovery.k8s.io/v1" {
		t.Errorf("groups %q", got)
	}

	res, err := d.ServerResourcesForGroupVersion(ctx, "apps/v1")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, r := range res.APIResources {
		found[r.Name] = r.Namespaced
	}
	if !found["deployments"] || !found["deployments/status"] || res.GroupVersion != "apps/v1" {
		t.Errorf("apps/v1 resources %+v", res)
	}
	core, err := d.ServerResourcesForGroupVersion(ctx, "v1")
	if err != nil || core.GroupVersion != "v1" {
		t.Fatalf("v1 resources %+v %v", core, err)
	}
	if _, err := d.ServerResourcesForGroupVersion(ctx, "nope.example.com/v1"); !IsNotFound(err) {
		t.Errorf("unknown group version: %v", err)
	}
}

func TestRESTMapper(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	m := s.client(t, codec.MediaTypeJSON).RESTMapper()
	cases := []struct {
		gk   metav1.GroupKind
		want RESTMapping
	}{
		{metav1.GroupKind{Group: "apps", Kind: "Deployment"},
			RESTMapping{Resource: GroupVersionResource{"apps", "v1", "deployments"}, Kind: GroupVersionKind{"apps", "v1", "Deployment"}, Namespaced: true}},
		{metav1.GroupKind{Kind: "Pod"},
			RESTMapping{Resource: GroupVersionResource{"", "v1", "pods"}, Kind: GroupVersionKind{"", "v1", "Pod"}, Namespaced: true}},
		{metav1.GroupKind{Kind: "Node"},
			RESTMapping{Resource: GroupVersionResource{"", "v1", "nodes"}, Kind: GroupVersionKind{"", "v1", "Node"}}},
		{metav1.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"},
			RESTMapping{Resource: GroupVersionResource{"coordination.k8s.io", "v1", "leases"}, Kind: GroupVersionKind{"coordination.k8s.io", "v1", "Lease"}, Namespaced: true}},
	}
	for _, tc := range cases {
		got, err := m.RESTMapping(ctx, tc.gk)
		if err != nil || *got != tc.want {
			t.Errorf("RESTMapping(%v) = %+v, %v; want %+v", tc.gk, got, err, tc.want)
		}
	}
	for _, name := range []string{"pods", "pod", "po", "PODS"} {
		got, err := m.ResourceFor(ctx, GroupVersionResource{Resource: name})
		if err != nil || got.Resource.Resource != "pods" || got.Kind.Kind != "Pod" {
			t.Errorf("ResourceFor(%q) = %+v, %v", name, got, err)
		}
	}
	if k, err := m.KindFor(ctx, GroupVersionResource{Group: "apps", Version: "v1", Resource: "deploy"}); err != nil || k.Kind != "Deployment" {
		t.Errorf("KindFor(deploy) = %v, %v", k, err)
	}
	if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "apps", Kind: "Deployment"}, "v2"); !IsNoMatch(err) {
		t.Errorf("apps/v2 Deployment: %v", err)
	}
	_, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"})
	if !IsNoMatch(err) || err.Error() != "client: no matches for kind Widget.example.com" {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := m.ResourceFor(ctx, GroupVersionResource{Resource: "pods/status"}); !IsNoMatch(err) {
		t.Errorf("subresource: %v", err)
	}
}

// discoveryFake answers discovery requests in memory, counting them; the
// example.com group appears when installed is set.
type discoveryFake struct {
	installed atomic.Bool
	mu        sync.Mutex
	counts    map[string]int
	block     chan struct{} // if not nil, /apis waits for it
}

func (f *discoveryFake) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[path]
}

func (f *discoveryFake) RoundTrip(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[r.URL.Path]++
	f.mu.Unlock()
	body, code := "", http.StatusOK
	switch r.URL.Path {
	case "/api":
		body = `{"kind":"APIVersions","versions":["v1"]}`
	case "/api/v1":
		body = `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get"]}]}`
	case "/apis":
		if f.block != nil {
			<-f.block
		}
		groups := `{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}`
		if f.installed.Load() {
			groups += `,{"name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"},{"groupVersion":"example.com/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}}`
		}
		body = `{"kind":"APIGroupList","apiVersion":"v1","groups":[` + groups + `]}`
	case "/apis/apps/v1":
		body = `{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"]}]}`
	case "/apis/example.com/v1":
		body = `{"kind":"APIResourceList","groupVersion":"example.com/v1","resources":[{"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget","verbs":["get"]}]}`
	case "/apis/example.com/v1beta1":
		body = `{"kind":"APIResourceList","groupVersion":"example.com/v1beta1","resources":[{"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget","verbs":["get"]},{"name":"gizmos","singularName":"gizmo","namespaced":false,"kind":"Gizmo","verbs":["get"]}]}`
	default:
		code, body = http.StatusNotFound, "404 page not found"
	}
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "application/json")
	rec.WriteHeader(code)
	_, _ = io.Copy(rec, bytes.NewReader([]byte(body)))
	return rec.Result(), nil
}

// The mapper caches what it loaded, and refreshes on a miss: a kind
// installed after the cache was filled is found.
func TestRESTMapperRefreshOnMiss(t *testing.T) {
	f := &discoveryFake{}
	c := newTestClient(t, &Config{Host: "https://kapi.invalid", Transport: f})
	m := c.RESTMapper()
	ctx := testContext(t)
	if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil {
		t.Fatal(err)
	}
	if f.count("/apis") != 1 || f.count("/apis/apps/v1") != 1 {
		t.Errorf("cached lookups went to the server: /apis %d, /apis/apps/v1 %d", f.count("/apis"), f.count("/apis/apps/v1"))
	}
	if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"}); !IsNoMatch(err) {
		t.Fatalf("Widget before install: %v", err)
	}
	f.installed.Store(true)
	got, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"})
	if err != nil {
		t.Fatalf("Widget after install: %v", err)
	}
	if got.Resource != (GroupVersionResource{"example.com", "v1", "widgets"}) {
		t.Errorf("Widget mapping %+v", got)
	}
	// Not in the preferred version: the next version that has it.
	gizmo, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Gizmo"})
	if err != nil || gizmo.Resource.Version != "v1beta1" || gizmo.Namespaced {
		t.Errorf("Gizmo mapping %+v %v", gizmo, err)
	}
	beta, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"}, "v1beta1")
	if err != nil || beta.Resource.Version != "v1beta1" {
		t.Errorf("Widget in v1beta1 %+v %v", beta, err)
	}
	m.Reset()
	before := f.count("/apis")
	if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil || f.count("/apis") != before+1 {
		t.Errorf("after Reset: %v, /apis fetched %d times", err, f.count("/apis")-before)
	}
}

// Concurrent lookups on an empty cache share one discovery request.
func TestRESTMapperSingleflight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &discoveryFake{block: make(chan struct{})}
		c := newTestClient(t, &Config{Host: "https://kapi.invalid", Transport: f})
		m := c.RESTMapper()
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = m.RESTMapping(t.Context(), metav1.GroupKind{Group: "apps", Kind: "Deployment"})
			})
		}
		synctest.Wait() // every lookup is waiting, one of them on /apis
		close(f.block)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := f.count("/apis"); n != 1 {
			t.Errorf("/apis fetched %d times by concurrent lookups, want 1", n)
		}
		if n := f.count("/apis/apps/v1"); n != 1 {
			t.Errorf("/apis/apps/v1 fetched %d times, want 1", n)
		}
	})
}
