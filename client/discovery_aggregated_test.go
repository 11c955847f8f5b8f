package client

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apidiscoveryv2 "github.com/kapi-dev/kapi/api/apidiscovery/v2"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/builtin"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// paths returns the paths of the exchanges from the n-th on.
func (s *testServer) paths(from int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, x := range s.exchanges[from:] {
		out = append(out, x.Method+" "+x.Path)
	}
	return out
}

func (s *testServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.exchanges)
}

// withoutHash is a legacy entry as aggregated discovery describes it: no
// storageVersionHash.
func withoutHash(list []metav1.APIResource) []metav1.APIResource {
	out := make([]metav1.APIResource, len(list))
	for i, r := range list {
		r.StorageVersionHash = ""
		out[i] = r
	}
	return out
}

// On a server with aggregated discovery, every group and resource comes in
// two requests (in JSON or protobuf), and says what the legacy documents
// say.
func TestServerGroupsAndResourcesAggregated(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			d := s.client(t, ct).Discovery()
			from := s.count()
			groups, lists, err := d.ServerGroupsAndResources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.paths(from), ", "); got != "GET /api, GET /apis" {
				t.Errorf("requests %s, want GET /api, GET /apis", got)
			}
			s.mu.Lock()
			respCT := s.exchanges[from].RespContentType
			s.mu.Unlock()
			if want := ct + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"; respCT != want {
				t.Errorf("the server answered %s, want %s", respCT, want)
			}
			var names []string
			versions := 0
			for _, g := range groups.Groups {
				names = append(names, g.Name+"="+g.PreferredVersion.GroupVersion)
				versions += len(g.Versions)
			}
			// In kube-apiserver's order (internal/builtin lists its groups
			// in that order), the core group first.
			var want []string
			for _, g := range builtin.Groups() {
				if slices.Contains(names, g.Name+"="+joinGroupVersion(g.Name, g.Versions[0])) {
					want = append(want, g.Name+"="+joinGroupVersion(g.Name, g.Versions[0]))
				}
			}
			if !slices.Equal(names, want) || names[0] != "=v1" {
				t.Errorf("groups %q, want %q", names, want)
			}
			if len(lists) != versions {
				t.Fatalf("%d resource lists for %d group versions", len(lists), versions)
			}
			for _, list := range lists {
				legacy, err := d.ServerResourcesForGroupVersion(ctx, list.GroupVersion)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := compactJSON(list.APIResources), compactJSON(withoutHash(legacy.APIResources)); got != want {
					t.Errorf("%s from aggregated discovery:\n got: %s\nwant: %s", list.GroupVersion, got, want)
				}
			}
		})
	}
}

// On a server that only speaks the legacy documents, the same answer takes
// one request per group version.
func TestServerGroupsAndResourcesLegacy(t *testing.T) {
	f := &discoveryFake{}
	f.installed.Store(true)
	c := newTestClient(t, &Config{Host: "https://kapi.invalid", Transport: f})
	groups, lists, err := c.Discovery().ServerGroupsAndResources(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) != 3 || len(lists) != 4 {
		t.Fatalf("groups %+v, lists %+v", groups, lists)
	}
	var gvs []string
	for _, l := range lists {
		gvs = append(gvs, l.GroupVersion+":"+l.APIResources[0].Name)
	}
	if got := strings.Join(gvs, " "); got != "v1:pods apps/v1:deployments example.com/v1:widgets example.com/v1beta1:widgets" {
		t.Errorf("resources %s", got)
	}
	for _, p := range []string{"/api", "/apis", "/api/v1", "/apis/apps/v1", "/apis/example.com/v1", "/apis/example.com/v1beta1"} {
		if n := f.count(p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
}

// The mapper of a client of a server with aggregated discovery loads
// everything with two requests, and a refresh after a miss is two more.
func TestRESTMapperAggregated(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	m := s.client(t, codec.MediaTypeJSON).RESTMapper()
	from := s.count()
	for _, gk := range []metav1.GroupKind{{Kind: "Pod"}, {Group: "apps", Kind: "Deployment"}, {Group: "coordination.k8s.io", Kind: "Lease"},
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}} {
		if _, err := m.RESTMapping(ctx, gk); err != nil {
			t.Fatalf("%v: %v", gk, err)
		}
	}
	if sc, err := m.ResourceFor(ctx, GroupVersionResource{Group: "apps", Resource: "deploy"}); err != nil || sc.Resource.Resource != "deployments" || !sc.Namespaced {
		t.Errorf("deploy: %+v %v", sc, err)
	}
	if got := strings.Join(s.paths(from), ", "); got != "GET /api, GET /apis" {
		t.Errorf("requests %s, want GET /api, GET /apis", got)
	}
	from = s.count()
	if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"}); !IsNoMatch(err) {
		t.Fatalf("Widget: %v", err)
	}
	if got := strings.Join(s.paths(from), ", "); got != "GET /api, GET /apis" {
		t.Errorf("a miss refreshed with %s, want GET /api, GET /apis", got)
	}
}

// Misses refresh the cache at most MissRefreshBurst times in a row, then
// MissRefreshRate times per second: a loop asking for a kind that is not
// served does not turn into a loop of discovery requests.
func TestRESTMapperMissesAreRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &discoveryFake{}
		c := newTestClient(t, &Config{Host: "https://kapi.invalid", Transport: f})
		m := NewRESTMapperWithOptions(c.Discovery(), RESTMapperOptions{MissRefreshRate: 1, MissRefreshBurst: 2})
		ctx := t.Context()
		if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"}); !IsNoMatch(err) {
				t.Fatalf("Widget: %v", err)
			}
		}
		if n := f.count("/apis"); n != 1+2 {
			t.Errorf("/apis fetched %d times by 100 misses, want 1 + the burst of 2", n)
		}
		// Refreshes come back with time: a kind installed meanwhile is found.
		f.installed.Store(true)
		time.Sleep(time.Second) // the fake clock of the bubble: one more refresh allowed
		got, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"})
		if err != nil || got.Resource.Resource != "widgets" {
			t.Fatalf("Widget after install: %+v %v", got, err)
		}
		// Hits never refresh.
		before := f.count("/apis")
		for range 10 {
			if _, err := m.RESTMapping(ctx, metav1.GroupKind{Group: "example.com", Kind: "Widget"}); err != nil {
				t.Fatal(err)
			}
		}
		if f.count("/apis") != before {
			t.Errorf("cached lookups refreshed")
		}
	})
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// FuzzAggregatedDiscovery feeds arbitrary aggregated documents, in JSON
// and protobuf, to the discovery client's conversion: it never panics, and
// every resource list it makes belongs to a group it lists.
func FuzzAggregatedDiscovery(f *testing.F) {
	f.Add([]byte(`{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[{"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[{"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["get"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get"]}]}],"freshness":"Current"},{"version":"v1beta1","freshness":"Stale"}]}]}`))
	f.Add([]byte(`{"items":[{"versions":[{"version":"","resources":[{"resource":"a/b"}]}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, decode := range []func([]byte, *apidiscoveryv2.APIGroupDiscoveryList) error{
			func(b []byte, l *apidiscoveryv2.APIGroupDiscoveryList) error { return kjson.Unmarshal(b, l) },
			func(b []byte, l *apidiscoveryv2.APIGroupDiscoveryList) error {
				_, err := codec.UnmarshalProtobuf(b, l)
				return err
			},
		} {
			list := &apidiscoveryv2.APIGroupDiscoveryList{}
			if decode(b, list) != nil {
				continue
			}
			resources := map[string]*metav1.APIResourceList{}
			groups := fromAggregated(list, resources)
			for gv := range resources {
				found := false
				for _, g := range groups {
					for _, v := range g.Versions {
						found = found || v.GroupVersion == gv
					}
				}
				if !found {
					t.Fatalf("resources of %q, a group version no group lists", gv)
				}
			}
		}
	})
}
