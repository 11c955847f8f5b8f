package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/apiserver/registry"
)

// roundTripFunc is an http.RoundTripper of a test.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// componentStatusServer is a server whose componentstatuses probes go
// through rt instead of the network.
func componentStatusServer(t *testing.T, rt roundTripFunc) *Server {
	t.Helper()
	reg, err := registry.BuiltinWith(registry.Options{ComponentClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Registry: reg, DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// refused answers every probe as a port nothing listens on does.
func refused(r *http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp " + r.URL.Host + ": connect: connection refused")
}

// componentstatuses answer as kube-apiserver v1.37.2 answers with no
// scheduler and no controller manager listening (the captures of
// testdata/golden-1.37/cluster/componentstatuses-*.json, byte for byte
// as JSON values; kube-apiserver lists the components in the order their
// probes end, which in the capture is kapi's), each with the deprecation
// Warning; the verbs it does
// not serve are 405 without it.
func TestComponentStatusesGolden(t *testing.T) {
	srv := componentStatusServer(t, refused)
	for _, tc := range []struct {
		golden, path, accept string
		code                 int
	}{
		{"list", "/api/v1/componentstatuses", "", http.StatusOK},
		{"get-etcd-0", "/api/v1/componentstatuses/etcd-0", "", http.StatusOK},
		{"get-missing", "/api/v1/componentstatuses/x", "", http.StatusNotFound},
		{"watch", "/api/v1/componentstatuses?watch=1", "", http.StatusMethodNotAllowed},
		{"table", "/api/v1/componentstatuses", "application/json;as=Table;v=v1;g=meta.k8s.io", http.StatusOK},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			want, err := os.ReadFile("../testdata/golden-1.37/cluster/componentstatuses-" + tc.golden + ".json")
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Errorf("code %d, want %d", rec.Code, tc.code)
			}
			if w := rec.Header().Values("Warning"); !reflect.DeepEqual(w, []string{`299 - "v1 ComponentStatus is deprecated in v1.19+"`}) {
				t.Errorf("Warning %q", w)
			}
			var g, w any
			if err := json.Unmarshal(rec.Body.Bytes(), &g); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got  %s\nwant %s", bytes.TrimSpace(rec.Body.Bytes()), want)
			}
		})
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		path := "/api/v1/componentstatuses/etcd-0"
		if method == http.MethodPost {
			path = "/api/v1/componentstatuses"
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Warning") != "" {
			t.Errorf("%s: %d, Warning %q", method, rec.Code, rec.Header().Get("Warning"))
		}
	}
}

// Each probe's answer becomes its component's condition as kube-apiserver's
// prober words it; a get probes the one component it names; selectors
// filter a list.
func TestComponentStatusesProbes(t *testing.T) {
	var mu sync.Mutex
	var probed []string
	srv := componentStatusServer(t, func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		probed = append(probed, r.URL.String())
		mu.Unlock()
		switch r.URL.Port() {
		case "10259":
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
		default:
			return &http.Response{StatusCode: http.StatusInternalServerError, Body: io.NopCloser(strings.NewReader("boom")), Request: r}, nil
		}
	})
	type cond struct{ status, message string }
	conds := func(body map[string]any) map[string]cond {
		out := map[string]cond{}
		items, _ := body["items"].([]any)
		if items == nil {
			items = []any{body}
		}
		for _, it := range items {
			o := it.(map[string]any)
			c := o["conditions"].([]any)[0].(map[string]any)
			out[o["metadata"].(map[string]any)["name"].(string)] = cond{c["status"].(string), c["message"].(string)}
		}
		return out
	}
	for _, tc := range []struct {
		name, path string
		probed     []string
		want       map[string]cond
	}{
		{"list", "/api/v1/componentstatuses", []string{"https://127.0.0.1:10257/healthz", "https://127.0.0.1:10259/healthz"}, map[string]cond{
			"scheduler":          {"True", "ok"},
			"controller-manager": {"False", "HTTP probe failed with statuscode: 500"},
			"etcd-0":             {"True", "ok"},
		}},
		{"get scheduler", "/api/v1/componentstatuses/scheduler", []string{"https://127.0.0.1:10259/healthz"}, map[string]cond{"scheduler": {"True", "ok"}}},
		{"get etcd-0", "/api/v1/componentstatuses/etcd-0", nil, map[string]cond{"etcd-0": {"True", "ok"}}},
		{"field selector", "/api/v1/componentstatuses?fieldSelector=metadata.name%3Dcontroller-manager",
			[]string{"https://127.0.0.1:10257/healthz", "https://127.0.0.1:10259/healthz"},
			map[string]cond{"controller-manager": {"False", "HTTP probe failed with statuscode: 500"}}},
		{"label selector", "/api/v1/componentstatuses?labelSelector=a%3Db",
			[]string{"https://127.0.0.1:10257/healthz", "https://127.0.0.1:10259/healthz"}, map[string]cond{}},
	} {
		probed = nil
		code, body := serve(t, srv, http.MethodGet, tc.path, "")
		if code != http.StatusOK {
			t.Errorf("%s: %d %v", tc.name, code, body)
			continue
		}
		if got := conds(body); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		slices.Sort(probed) // the probes run at once
		if !reflect.DeepEqual(probed, tc.probed) {
			t.Errorf("%s: probed %q, want %q", tc.name, probed, tc.probed)
		}
	}
	if code, body := serve(t, srv, http.MethodGet, "/api/v1/componentstatuses?fieldSelector=spec.x%3Db", ""); code != http.StatusBadRequest ||
		body["message"] != `"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("unknown field: %d %v", code, body)
	}
}
