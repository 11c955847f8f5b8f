package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "github.com/kapi-dev/kapi/api/apidiscovery/v2"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/kjson"
)

func discovery137(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(golden.V137.Dir(), "discovery", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Discovery lists every resource kapi serves exactly as kube-apiserver
// v1.37.2 does (aggregated and legacy documents: names, scope, verbs, short
// names, categories, singular names, subresources, storage version hashes),
// in its group and version order.
func TestDiscoveryMatchesV137(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	missing := map[string]bool{}
	for _, path := range []string{"/api", "/apis"} {
		var want, got apidiscoveryv2.APIGroupDiscoveryList
		if err := kjson.Unmarshal(discovery137(t, "aggregated-"+strings.TrimPrefix(path, "/")+".json"), &want); err != nil {
			t.Fatal(err)
		}
		rec := aggregatedGet(t, srv, path)
		if err := kjson.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		var wantOrder, gotOrder []string
		served := map[string]apidiscoveryv2.APIResourceDiscovery{}
		for _, g := range got.Items {
			for _, v := range g.Versions {
				gotOrder = append(gotOrder, g.Name+"/"+v.Version)
				for _, r := range v.Resources {
					served[g.Name+"/"+v.Version+"/"+r.Resource] = r
				}
			}
		}
		for _, g := range want.Items {
			for _, v := range g.Versions {
				gv := g.Name + "/" + v.Version
				if slices.Contains(gotOrder, gv) {
					wantOrder = append(wantOrder, gv)
				}
				for _, r := range v.Resources {
					key := gv + "/" + r.Resource
					s, ok := served[key]
					delete(served, key)
					if !ok {
						missing[key] = true
						continue
					}
					if !reflect.DeepEqual(s, r) {
						w, _ := json.Marshal(r)
						g, _ := json.Marshal(s)
						t.Errorf("%s %s:\n got %s\nwant %s", path, key, g, w)
					}
				}
			}
		}
		if !slices.Equal(gotOrder, wantOrder) {
			t.Errorf("%s: group versions in order %v, kube-apiserver's %v", path, gotOrder, wantOrder)
		}
		for key := range served {
			t.Errorf("%s: kapi serves %s, kube-apiserver v1.37.2 does not", path, key)
		}
	}
	for key := range missing {
		t.Errorf("kapi does not serve %s, kube-apiserver v1.37.2 does", key)
	}

	// The legacy documents: every APIResourceList entry of a served resource
	// (and its subresources) as the capture has it.
	var legacy map[string]json.RawMessage
	if err := json.Unmarshal(discovery137(t, "legacy.json"), &legacy); err != nil {
		t.Fatal(err)
	}
	for path, raw := range legacy {
		if !strings.HasPrefix(path, "/api/") && strings.Count(path, "/") != 3 {
			continue // /api, /apis, /apis/<group>: lists of what is served
		}
		var want metav1.APIResourceList
		if err := kjson.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var got metav1.APIResourceList
		if rec.Code == http.StatusOK {
			if err := kjson.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
		}
		gotByName := map[string]metav1.APIResource{}
		for _, r := range got.APIResources {
			gotByName[r.Name] = r
		}
		gv := strings.TrimPrefix(strings.TrimPrefix(path, "/api"), "s")
		gv = strings.TrimPrefix(gv, "/")
		if !strings.Contains(gv, "/") {
			gv = "/" + gv
		}
		for _, r := range want.APIResources {
			parent, _, _ := strings.Cut(r.Name, "/")
			if missing[gv+"/"+parent] {
				continue
			}
			if g, ok := gotByName[r.Name]; !ok || !reflect.DeepEqual(g, r) {
				w, _ := json.Marshal(r)
				gj, _ := json.Marshal(g)
				t.Errorf("%s %s:\n got %s\nwant %s", path, r.Name, gj, w)
			}
		}
	}
}
