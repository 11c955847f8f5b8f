package conformance

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// Bodies kube-apiserver v1.37 answers on the routing error paths.
const (
	statusMethodNotAllowed = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}`
	statusNotFound         = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`
	pageNotFound           = "404 page not found\n"
)

// TestRouting checks what a server answers to requests its routes do not
// serve: other methods than GET on discovery paths, unknown groups,
// versions, resources and subresources, and verbs a path does not have. The
// answers are kube-apiserver v1.37.2's (found with curl): a JSON Status
// where it sends one, its plain-text 404 page for unknown groups, and, on
// /apis and /apis/GROUP, the discovery document whatever the method (its
// aggregator does not look at the method there).
func TestRouting(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.createCM(t, ns, "cm1", nil, nil)
	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	const (
		jsonCT = "application/json"
		textCT = "text/plain; charset=utf-8"
	)
	type tc struct {
		method, path string
		body         string // sent as application/json (merge patch for PATCH)
		code         int
		ctype        string
		want         string // the exact body (a JSON document is compared decoded); "" for none
		kind         string // or: the kind of the JSON document answered
	}
	var cases []tc
	for _, m := range []string{http.MethodDelete, http.MethodPost, http.MethodPut, http.MethodPatch} {
		cases = append(cases,
			tc{m, "/api", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
			tc{m, "/api/v1", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
			tc{m, "/apis/apps/v1", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
			tc{m, "/apis", "{}", 200, jsonCT, "", "APIGroupList"},
			tc{m, "/apis/apps", "{}", 200, jsonCT, "", "APIGroup"},
		)
	}
	cases = append(cases,
		tc{http.MethodHead, "/api", "", 405, jsonCT, "", ""},
		tc{http.MethodHead, "/api/v1", "", 405, jsonCT, "", ""},
		tc{http.MethodHead, "/apis/apps/v1", "", 405, jsonCT, "", ""},
		tc{http.MethodHead, "/apis", "", 200, jsonCT, "", ""},
		tc{http.MethodHead, "/apis/apps", "", 200, jsonCT, "", ""},
		tc{http.MethodOptions, "/api", "", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodOptions, "/apis/apps", "", 200, jsonCT, "", "APIGroup"},

		// unknown groups: the plain-text page of the server's mux.
		tc{http.MethodGet, "/apis/nope", "", 404, textCT, pageNotFound, ""},
		tc{http.MethodGet, "/apis/nope/v1", "", 404, textCT, pageNotFound, ""},
		tc{http.MethodGet, "/apis/nope.example.com/v1/widgets", "", 404, textCT, pageNotFound, ""},
		tc{http.MethodDelete, "/apis/nope.example.com/v1/widgets", "", 404, textCT, pageNotFound, ""},
		// unknown versions of a built-in group, unknown resources: a Status.
		tc{http.MethodGet, "/apis/apps/v9", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/api/v9", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/apis/apps/v9/deployments", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/api/v9/pods", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/apis/apps/v1/nopes", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/api/v1/nopes", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/api/v1/namespaces/" + ns + "/nopes", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodDelete, "/api/v1/nopes", "", 404, jsonCT, statusNotFound, ""},

		// verbs a collection does not have.
		tc{http.MethodPut, cms, `{"metadata":{"name":"x"}}`, 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodPatch, cms, "{}", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodPut, "/apis/apps/v1/namespaces/" + ns + "/deployments", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodPut, "/api/v1/configmaps", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodPatch, "/api/v1/configmaps", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodPost, "/api/v1/configmaps", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodDelete, "/api/v1/configmaps", "", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodPost, cms + "/cm1", "{}", 405, jsonCT, statusMethodNotAllowed, ""},
		tc{http.MethodHead, cms + "/cm1", "", 405, jsonCT, "", ""},
		tc{http.MethodHead, cms, "", 405, jsonCT, "", ""},

		// unknown subresources, and paths below one.
		tc{http.MethodGet, cms + "/cm1/nope", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, cms + "/cm1/status", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, cms + "/cm1/status/x", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, cms + "/cm1/a/b", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/api/v1/namespaces/" + ns + "/pods/p1/nope", "", 404, jsonCT, statusNotFound, ""},
		tc{http.MethodGet, "/api/v1/nodes/n1/nope", "", 404, jsonCT, statusNotFound, ""},
	)
	for _, c := range cases {
		t.Run(c.method+" "+strings.ReplaceAll(strings.ReplaceAll(c.path, ns, "NS"), "/", "_"), func(t *testing.T) {
			t.Parallel()
			var body any
			header := []string{}
			if c.body != "" {
				body = c.body
				if c.method == http.MethodPatch {
					header = append(header, "Content-Type", "application/merge-patch+json")
				}
			}
			r := e.do(t, c.method, c.path, body, header...)
			if r.Code != c.code || r.Header.Get("Content-Type") != c.ctype {
				t.Fatalf("want %d %s, got:\n%s", c.code, c.ctype, r)
			}
			if cc := r.Header.Get("Cache-Control"); cc != "no-cache, private" {
				t.Errorf("Cache-Control %q, want no-cache, private", cc)
			}
			switch {
			case c.method == http.MethodHead:
				if len(r.Body) != 0 {
					t.Errorf("HEAD answered with a body: %q", truncate(r.Body))
				}
			case c.kind != "":
				if k := str(decode(t, r.Body), "kind"); k != c.kind {
					t.Errorf("kind %q, want %q", k, c.kind)
				}
			case c.ctype == jsonCT:
				if have, want := decode(t, r.Body), decode(t, []byte(c.want)); !reflect.DeepEqual(have, want) {
					t.Errorf("body:\n got: %s\nwant: %s", compact(have), compact(want))
				}
			default:
				if string(r.Body) != c.want {
					t.Errorf("body %q, want %q", r.Body, c.want)
				}
			}
		})
	}
}
