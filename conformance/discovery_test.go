package conformance

import (
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
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

// Media types of aggregated discovery.
const (
	aggregatedJSON     = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	aggregatedProtobuf = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	aggregatedYAML     = "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	acceptAggregated   = aggregatedJSON + ",application/json"
)

// servedSubresources are the subresources every server under test must
// serve; the aggregated entries are compared with them only.
var servedSubresources = map[string]bool{"status": true, "scale": true}

// aggregatedGroups indexes an APIGroupDiscoveryList's groups by name, with
// their order.
func aggregatedGroups(t *testing.T, list obj) (map[string]obj, []string) {
	t.Helper()
	if str(list, "kind") != "APIGroupDiscoveryList" || str(list, "apiVersion") != "apidiscovery.k8s.io/v2" {
		t.Fatalf("not an APIGroupDiscoveryList: %s", truncate([]byte(compact(list))))
	}
	raw, _ := list["items"].([]any)
	out, order := map[string]obj{}, []string{}
	for _, g := range raw {
		m := g.(map[string]any)
		n := str(m, "metadata", "name")
		out[n] = m
		order = append(order, n)
	}
	return out, order
}

// aggregatedEntry is the entry of resource in group's version, with only the
// subresources of servedSubresources; nil if absent.
func aggregatedEntry(group obj, version, resource string) obj {
	versions, _ := group["versions"].([]any)
	for _, v := range versions {
		vm := v.(map[string]any)
		if str(vm, "version") != version {
			continue
		}
		resources, _ := vm["resources"].([]any)
		for _, r := range resources {
			rm := clone(r.(map[string]any))
			if str(rm, "resource") != resource {
				continue
			}
			var subs []any
			raw, _ := rm["subresources"].([]any)
			for _, s := range raw {
				if servedSubresources[str(s.(map[string]any), "subresource")] {
					subs = append(subs, s)
				}
			}
			delete(rm, "subresources")
			if len(subs) > 0 {
				rm["subresources"] = subs
			}
			return rm
		}
	}
	return nil
}

// TestAggregatedDiscovery checks /api and /apis asked for
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList: every resource served is
// described as kube-apiserver v1.37.2 describes it (captures
// aggregated-discovery-api and -apis), groups in its order, versions
// current; the headers (ETag, 304 on If-None-Match, Vary, Cache-Control);
// which Accept headers get the aggregated document, the legacy one or 406;
// and a CRD's group appearing and going with it.
func TestAggregatedDiscovery(t *testing.T) {
	t.Parallel()
	e := target

	for _, tc := range []struct{ path, golden string }{
		{"/api", "aggregated-discovery-api"},
		{"/apis", "aggregated-discovery-apis"},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			t.Parallel()
			r := e.get(t, tc.path, "Accept", acceptAggregated)
			if r.Code != http.StatusOK || r.Header.Get("Content-Type") != aggregatedJSON {
				t.Fatalf("want 200 %s, got:\n%s", aggregatedJSON, r)
			}
			for h, want := range map[string]string{"Vary": "Accept", "Cache-Control": "public"} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("%s %q, want %q", h, got, want)
				}
			}
			etag := r.Header.Get("Etag")
			if !regexp.MustCompile(`^"[0-9A-F]{128}"$`).MatchString(etag) {
				t.Errorf("ETag %q is not a quoted SHA-512 in upper-case hex", etag)
			}
			have, haveOrder := aggregatedGroups(t, decode(t, r.Body))
			want, wantOrder := aggregatedGroups(t, goldenObject(t, tc.golden))
			var served []string
			for gv, resources := range servedResources {
				group, version, ok := strings.Cut(gv, "/")
				if !ok {
					group, version = "", gv
				}
				if (group == "") != (tc.path == "/api") {
					continue
				}
				served = append(served, group)
				for _, res := range resources {
					h, w := aggregatedEntry(have[group], version, res), aggregatedEntry(want[group], version, res)
					if !reflect.DeepEqual(h, w) {
						t.Errorf("%s %s:\n got: %s\nwant: %s", gv, res, compact(h), compact(w))
					}
				}
				for _, g := range []obj{have[group], want[group]} {
					versions, _ := g["versions"].([]any)
					for _, v := range versions {
						if f := str(v.(map[string]any), "freshness"); f != "Current" {
							t.Errorf("%s freshness %q", gv, f)
						}
					}
				}
			}
			// The served groups in kube-apiserver's order.
			order := func(all []string) []string {
				var out []string
				for _, g := range all {
					if slices.Contains(served, g) {
						out = append(out, g)
					}
				}
				return out
			}
			if h, w := order(haveOrder), order(wantOrder); !reflect.DeepEqual(h, w) {
				t.Errorf("groups in the order %v, want %v", h, w)
			}

			nm := e.get(t, tc.path, "Accept", acceptAggregated, "If-None-Match", etag)
			if nm.Code != http.StatusNotModified || len(nm.Body) != 0 || nm.Header.Get("Etag") != etag {
				t.Errorf("If-None-Match with the ETag: want 304 without a body, got:\n%s", nm)
			}
			if other := e.get(t, tc.path, "Accept", acceptAggregated, "If-None-Match", `"0"`); other.Code != http.StatusOK {
				t.Errorf("If-None-Match with another ETag: want 200, got:\n%s", other)
			}
		})
	}

	// Which document an Accept header gets (kube-apiserver v1.37 no longer
	// serves v2beta1).
	const onlyFollowing = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	const notAcceptable = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	for _, tc := range []struct {
		name, method, path, accept string
		code                       int
		ctype, msg                 string // msg: the 406 message
	}{
		{"aggregated-first", "GET", "/apis", acceptAggregated, 200, aggregatedJSON, ""},
		{"protobuf", "GET", "/api", aggregatedProtobuf + ",application/json", 200, aggregatedProtobuf, ""},
		{"yaml", "GET", "/api", aggregatedYAML, 200, aggregatedYAML, ""},
		{"more-specific-wins", "GET", "/apis", "application/json, " + aggregatedJSON, 200, aggregatedJSON, ""},
		{"legacy-preferred-by-q", "GET", "/api", "application/json;q=0.5, " + aggregatedJSON, 200, aggregatedJSON, ""},
		{"v2beta1-falls-back", "GET", "/api", strings.Replace(aggregatedJSON, "v=v2", "v=v2beta1", 1) + ",application/json", 200, "application/json", ""},
		{"v2beta1-alone", "GET", "/api", strings.Replace(aggregatedJSON, "v=v2", "v=v2beta1", 1), 406, "application/json", onlyFollowing},
		{"v2beta1-alone-apis", "GET", "/apis", strings.Replace(aggregatedJSON, "v=v2", "v=v2beta1", 1), 406, "application/json", onlyFollowing},
		{"wildcard", "GET", "/api", "*/*", 200, "application/json", ""},
		{"legacy-protobuf", "GET", "/api", "application/vnd.kubernetes.protobuf", 200, "application/vnd.kubernetes.protobuf", ""},
		{"text-api", "GET", "/api", "text/plain", 406, "application/json", notAcceptable},
		{"text-api-v1", "GET", "/api/v1", "text/plain", 406, "application/json", notAcceptable},
		{"text-apis", "GET", "/apis", "text/plain", 406, "application/json", onlyFollowing},
		{"text-apis-apps", "GET", "/apis/apps", "text/plain", 406, "application/json", onlyFollowing},
		{"aggregated-on-group-version", "GET", "/apis/apps/v1", aggregatedJSON, 406, "application/json", onlyFollowing},
		{"any-method", "DELETE", "/apis", aggregatedJSON, 200, aggregatedJSON, ""},
		{"head", "HEAD", "/apis", aggregatedJSON, 200, aggregatedJSON, ""},
		{"head-api", "HEAD", "/api", aggregatedJSON, 405, "application/json", ""},
	} {
		t.Run("accept/"+tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(t, tc.method, tc.path, nil, "Accept", tc.accept)
			if r.Code != tc.code || r.Header.Get("Content-Type") != tc.ctype {
				t.Fatalf("want %d %s, got:\n%s", tc.code, tc.ctype, r)
			}
			if tc.msg != "" {
				checkStatus(t, r, tc.code, "NotAcceptable", tc.msg)
				if st := decode(t, r.Body); str(st, "message") != tc.msg {
					t.Errorf("message %q, want %q", str(st, "message"), tc.msg)
				}
			}
		})
	}

	t.Run("crd", func(t *testing.T) {
		t.Parallel()
		group, _ := e.createCRD(t)
		var entry obj
		e.waitCondition(t, "the CRD's group in aggregated discovery", func() bool {
			have, _ := aggregatedGroups(t, expect(t, e.get(t, "/apis", "Accept", acceptAggregated), http.StatusOK))
			g, ok := have[group]
			if !ok {
				return false
			}
			var vs []string
			for _, v := range g["versions"].([]any) {
				vs = append(vs, str(v.(map[string]any), "version"))
			}
			if !reflect.DeepEqual(vs, []string{"v1", "v1beta1"}) {
				t.Fatalf("%s versions %v, want v1 then v1beta1", group, vs)
			}
			entry = aggregatedEntry(g, "v1", "widgets")
			return true
		})
		want := decode(t, []byte(`{"resource":"widgets","responseKind":{"group":"`+group+`","version":"v1","kind":"Widget"},
			"scope":"Namespaced","singularResource":"widget","verbs":["delete","deletecollection","get","list","patch","create","update","watch"],
			"shortNames":["wd"],"subresources":[{"subresource":"status","responseKind":{"group":"`+group+`","version":"v1","kind":"Widget"},"verbs":["get","patch","update"]}]}`))
		if !reflect.DeepEqual(entry, want) {
			t.Errorf("widgets:\n got: %s\nwant: %s", compact(entry), compact(want))
		}
		// While the CRD is being deleted (an object with a finalizer holds
		// it), its resources are listed with the verbs they still have.
		ns := e.namespace(t)
		base := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets"
		held := widget("held", obj{"size": 1})
		held["apiVersion"] = group + "/v1"
		held["metadata"].(map[string]any)["finalizers"] = []any{"conformance.kapi.dev/hold"}
		expect(t, e.post(t, base, held), http.StatusCreated)
		expect(t, e.del(t, crdPath+"/widgets."+group, nil), http.StatusOK)
		terminating := []any{"delete", "deletecollection", "get", "list", "watch"}
		e.waitCondition(t, "the terminating CRD's verbs in aggregated discovery", func() bool {
			have, _ := aggregatedGroups(t, expect(t, e.get(t, "/apis", "Accept", acceptAggregated), http.StatusOK))
			g, ok := have[group]
			return ok && reflect.DeepEqual(aggregatedEntry(g, "v1", "widgets")["verbs"], terminating)
		})
		legacy := resourceEntries(t, expect(t, e.get(t, "/apis/"+group+"/v1"), http.StatusOK))["widgets"]
		if !reflect.DeepEqual(legacy["verbs"], terminating) {
			t.Errorf("legacy verbs of a terminating CRD's resource %v, want %v", legacy["verbs"], terminating)
		}
		e.modify(t, base+"/held", false, func(o obj) { o["metadata"].(map[string]any)["finalizers"] = nil })
		e.waitCondition(t, "the CRD's group to leave aggregated discovery", func() bool {
			have, _ := aggregatedGroups(t, expect(t, e.get(t, "/apis", "Accept", acceptAggregated), http.StatusOK))
			_, ok := have[group]
			return !ok
		})
	})
}

// waitCondition polls cond, which reads state that cannot be watched (such
// as discovery), until it holds or the deadline passes.
func (e *env) waitCondition(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(e.within(30 * time.Second))
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
