package conformance

import (
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// servedResources are the built-in resources every server under test must
// serve (kapi's reference server serves exactly these), by group/version.
var servedResources = map[string][]string{
	"v1":                     {"namespaces", "configmaps", "secrets", "serviceaccounts", "pods", "services", "nodes", "events"},
	"apps/v1":                {"deployments"},
	"coordination.k8s.io/v1": {"leases"},
}

// resourceEntries indexes an APIResourceList's resources by name.
func resourceEntries(t *testing.T, list obj) map[string]obj {
	t.Helper()
	raw, ok := list["resources"].([]any)
	if !ok {
		t.Fatalf("APIResourceList without resources: %v", list)
	}
	out := map[string]obj{}
	for _, r := range raw {
		m := r.(map[string]any)
		out[str(m, "name")] = m
	}
	return out
}

func topKeys(o obj) []string {
	var k []string
	for key := range o {
		k = append(k, key)
	}
	sortStrings(k)
	return k
}

// TestDiscovery checks /api, /api/v1, /apis, /apis/apps, /apis/apps/v1,
// /apis/coordination.k8s.io/v1 (golden 01–04): document kinds and fields, and
// for every resource served, its entry and its status subresource's entry
// exactly as kube-apiserver v1.32 lists them.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	e := target

	t.Run("api", func(t *testing.T) {
		t.Parallel()
		have := expect(t, e.get(t, "/api"), http.StatusOK)
		want := goldenObject(t, "01-discovery-api")
		if !reflect.DeepEqual(topKeys(have), topKeys(want)) {
			t.Errorf("/api fields %v, want %v", topKeys(have), topKeys(want))
		}
		if str(have, "kind") != "APIVersions" || !reflect.DeepEqual(have["versions"], want["versions"]) {
			t.Errorf("/api = %s, want kind APIVersions and versions %v", compact(have), want["versions"])
		}
		addrs, _ := have["serverAddressByClientCIDRs"].([]any)
		if len(addrs) == 0 {
			t.Fatalf("/api has no serverAddressByClientCIDRs: %s", compact(have))
		}
		a := addrs[0].(map[string]any)
		if str(a, "clientCIDR") != "0.0.0.0/0" || str(a, "serverAddress") == "" {
			t.Errorf("/api serverAddressByClientCIDRs[0] = %v", a)
		}
	})

	// resource lists, against golden 02 (core) and 04 (apps).
	for _, tc := range []struct {
		path, groupVersion, golden string
	}{
		{"/api/v1", "v1", "02-discovery-api-v1"},
		{"/apis/apps/v1", "apps/v1", "04-discovery-apps-v1"},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			t.Parallel()
			have := expect(t, e.get(t, tc.path), http.StatusOK)
			want := goldenObject(t, tc.golden)
			for _, k := range []string{"kind", "apiVersion", "groupVersion"} {
				if have[k] != want[k] {
					t.Errorf("%s: %s = %v, want %v", tc.path, k, have[k], want[k])
				}
			}
			haveRes, wantRes := resourceEntries(t, have), resourceEntries(t, want)
			for _, r := range servedResources[tc.groupVersion] {
				for _, n := range []string{r, r + "/status"} {
					w, inGolden := wantRes[n]
					h, served := haveRes[n]
					switch {
					case !inGolden && served:
						t.Errorf("%s lists %s, which Kubernetes does not have", tc.path, n)
					case inGolden && !served:
						t.Errorf("%s does not list %s; Kubernetes lists %s", tc.path, n, compact(w))
					case inGolden && !reflect.DeepEqual(withoutHash(h), withoutHash(w)):
						t.Errorf("%s entry for %s:\n got: %s\nwant: %s", tc.path, n, compact(h), compact(w))
					}
				}
			}
			t.Run("storageVersionHash", func(t *testing.T) {
				for _, r := range servedResources[tc.groupVersion] {
					if h, w := str(haveRes[r], "storageVersionHash"), str(wantRes[r], "storageVersionHash"); h != w {
						t.Errorf("%s %s storageVersionHash %q, want %q", tc.path, r, h, w)
					}
				}
			})
		})
	}

	t.Run("apis/coordination.k8s.io/v1", func(t *testing.T) {
		t.Parallel()
		have := expect(t, e.get(t, "/apis/coordination.k8s.io/v1"), http.StatusOK)
		if str(have, "kind") != "APIResourceList" || str(have, "apiVersion") != "v1" || str(have, "groupVersion") != "coordination.k8s.io/v1" {
			t.Errorf("/apis/coordination.k8s.io/v1 = %s", compact(have))
		}
		// No capture of this group; the entry kube-apiserver v1.32 serves.
		want := decode(t, []byte(`{"name":"leases","singularName":"lease","namespaced":true,"kind":"Lease",
			"verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"gqkMMb/YqFM="}`))
		h := resourceEntries(t, have)["leases"]
		if !reflect.DeepEqual(withoutHash(h), withoutHash(want)) {
			t.Errorf("leases entry:\n got: %s\nwant: %s", compact(h), compact(want))
		}
		t.Run("storageVersionHash", func(t *testing.T) {
			if str(h, "storageVersionHash") != str(want, "storageVersionHash") {
				t.Errorf("leases storageVersionHash %q, want %q", str(h, "storageVersionHash"), str(want, "storageVersionHash"))
			}
		})
	})

	t.Run("apis", func(t *testing.T) {
		t.Parallel()
		have := expect(t, e.get(t, "/apis"), http.StatusOK)
		want := goldenObject(t, "03-discovery-apis")
		if !reflect.DeepEqual(topKeys(have), topKeys(want)) || str(have, "kind") != "APIGroupList" || str(have, "apiVersion") != "v1" {
			t.Errorf("/apis = %s, want an APIGroupList like golden 03", truncate([]byte(compact(have))))
		}
		groups := func(o obj) map[string]any {
			out := map[string]any{}
			raw, _ := o["groups"].([]any)
			for _, g := range raw {
				out[str(g.(map[string]any), "name")] = g
			}
			return out
		}
		hg, wg := groups(have), groups(want)
		if _, ok := hg[""]; ok {
			t.Errorf("/apis lists the core group")
		}
		for gv := range servedResources {
			g, _, ok := strings.Cut(gv, "/")
			if !ok {
				continue
			}
			if !reflect.DeepEqual(hg[g], wg[g]) {
				t.Errorf("/apis group %s:\n got: %s\nwant: %s", g, compact(hg[g]), compact(wg[g]))
			}
		}
	})

	t.Run("apis/apps", func(t *testing.T) {
		t.Parallel()
		have := expect(t, e.get(t, "/apis/apps"), http.StatusOK)
		// The APIGroup document is the group's entry in /apis with its own kind.
		want := decode(t, []byte(`{"kind":"APIGroup","apiVersion":"v1","name":"apps",
			"versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}`))
		if !reflect.DeepEqual(have, want) {
			t.Errorf("/apis/apps:\n got: %s\nwant: %s", compact(have), compact(want))
		}
	})

	t.Run("version", func(t *testing.T) {
		t.Parallel()
		r := e.get(t, "/version")
		have := expect(t, r, http.StatusOK)
		want := goldenObject(t, "05-version")
		if !reflect.DeepEqual(topKeys(have), topKeys(want)) {
			t.Errorf("/version fields %v, want %v", topKeys(have), topKeys(want))
		}
		for k, v := range have {
			if _, ok := v.(string); !ok {
				t.Errorf("/version %s is %T, want a string", k, v)
			}
		}
		gv := regexp.MustCompile(`^v([0-9]+)\.([0-9]+)\.[0-9]+`).FindStringSubmatch(str(have, "gitVersion"))
		if gv == nil {
			t.Fatalf("/version gitVersion %q is not a semantic version", str(have, "gitVersion"))
		}
		if str(have, "major") != gv[1] || strings.TrimSuffix(str(have, "minor"), "+") != gv[2] {
			t.Errorf("/version major/minor %q/%q disagree with gitVersion %q", str(have, "major"), str(have, "minor"), str(have, "gitVersion"))
		}
		if !regexp.MustCompile(`^[a-z0-9]+/[a-z0-9]+$`).MatchString(str(have, "platform")) {
			t.Errorf("/version platform %q is not os/arch", str(have, "platform"))
		}
	})

	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		t.Run(strings.TrimPrefix(p, "/"), func(t *testing.T) {
			t.Parallel()
			r := e.do(t, http.MethodGet, p, nil, "Accept", "*/*")
			if r.Code != http.StatusOK || string(r.Body) != "ok" {
				t.Errorf("want 200 ok, got:\n%s", r)
			}
			if ct := r.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q, want text/plain; charset=utf-8", ct)
			}
		})
	}
}

// withoutHash is a discovery entry without its storageVersionHash (checked
// separately).
func withoutHash(o obj) obj {
	if o == nil {
		return nil
	}
	c := clone(o)
	delete(c, "storageVersionHash")
	return c
}
