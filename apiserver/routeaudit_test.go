package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The route audit: no request reaches a handler without passing
// authentication and authorization. The routes are every route the server
// serves, listed from what it serves (its registry, as discovery lists it,
// with custom resources, and its OpenAPI documents), not by hand, so that
// a resource, verb or subresource added later is audited too.

// auditRoute is a request of the audit and the attributes kube-apiserver
// authorizes it with.
type auditRoute struct {
	method, path string // path may have a query
	want         Attributes
}

func (r auditRoute) String() string { return r.method + " " + r.path }

// recordingAuthorizer records what it is asked and decides with allow
// (nil: deny everything).
type recordingAuthorizer struct {
	mu    sync.Mutex
	asked []Attributes
	allow func(Attributes) bool
}

func (a *recordingAuthorizer) Authorize(_ context.Context, attrs Attributes) (Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, attrs)
	if a.allow != nil && a.allow(attrs) {
		return DecisionAllow, "", nil
	}
	return DecisionDeny, "the audit denies everything", nil
}

func (a *recordingAuthorizer) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return nil, nil, false, nil
}

// setAllow replaces the decision.
func (a *recordingAuthorizer) setAllow(allow func(Attributes) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.allow = allow
}

// take returns what the authorizer was asked since the last take.
func (a *recordingAuthorizer) take() []Attributes {
	a.mu.Lock()
	defer a.mu.Unlock()
	asked := a.asked
	a.asked = nil
	return asked
}

// Names of the audit's objects and users.
const (
	auditNamespace  = "audit-ns"
	auditName       = "audit-object"
	auditAdminToken = "audit-admin-token"
	auditUserToken  = "audit-user-token"
	auditCRDGroup   = "audit.kapi.dev"
)

var auditUser = User{Name: "audit-user", UID: "audit-uid", Groups: []string{"audit-group"}}

// auditCRDs are custom resources the audit serves: one namespaced with the
// status and scale subresources, one cluster-scoped.
var auditCRDs = []string{
	`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.audit.kapi.dev"},
	 "spec":{"group":"audit.kapi.dev","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
	 "versions":[{"name":"v1","served":true,"storage":true,
	   "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
	   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`,
	`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.audit.kapi.dev"},
	 "spec":{"group":"audit.kapi.dev","scope":"Cluster","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
	 "versions":[{"name":"v1","served":true,"storage":true,
	   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`,
}

// auditServer is a server that authenticates (the audit's admin and user
// by token, no anonymous requests) and asks authz, which allows only the
// admin until the audit starts; it serves the audit's namespace and custom
// resources.
func auditServer(t *testing.T, authz *recordingAuthorizer) *Server {
	t.Helper()
	authz.setAllow(func(a Attributes) bool { return a.User.Name == AdminUser.Name })
	s, err := New(Config{
		Authentication: &Authentication{Tokens: map[string]User{auditAdminToken: AdminUser, auditUserToken: auditUser}},
		Authorizer:     authz,
		// Nothing but the audit's requests.
		DisableServiceAccountController: true, DisableRootCAPublisher: true, DisableGarbageCollector: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, c := range append([]string{`{"metadata":{"name":"` + auditNamespace + `"}}`}, auditCRDs...) {
		path := "/api/v1/namespaces"
		if strings.Contains(c, "CustomResourceDefinition") {
			path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
		}
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(c))
		r.Header.Set("Authorization", "Bearer "+auditAdminToken)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, w.Code, w.Body)
		}
	}
	for _, plural := range []string{"widgets", "gadgets"} {
		if s.reg.Get(auditCRDGroup, "v1", plural) == nil {
			t.Fatalf("%s.%s is not served", plural, auditCRDGroup)
		}
	}
	authz.setAllow(nil) // deny all from now on
	authz.take()
	return s
}

// auditRoutes lists every route s serves: the non-resource paths
// (version, health, discovery of every group and version, the OpenAPI
// documents) and, for every resource and subresource of every served
// group version, one request per verb discovery gives it (list and watch
// also across namespaces).
func auditRoutes(t *testing.T, s *Server) []auditRoute {
	t.Helper()
	var routes []auditRoute
	nonResource := func(p string) {
		routes = append(routes, auditRoute{http.MethodGet, p, Attributes{Verb: "get", Path: p}})
	}
	for _, p := range []string{"/version", "/healthz", "/livez", "/readyz", "/api", "/apis", "/openapi/v2", "/openapi/v3"} {
		nonResource(p)
	}
	docs, _, err := s.openAPIDocs()
	if err != nil {
		t.Fatal(err)
	}
	for key := range docs.V3 {
		nonResource("/openapi/v3/" + key)
	}
	for _, g := range s.orderedGroups() {
		if g.name != "" {
			nonResource("/apis/" + g.name)
		}
		for _, v := range g.versions {
			gvPath := "/apis/" + g.name + "/" + v.name
			if g.name == "" {
				gvPath = "/api/" + v.name
			}
			nonResource(gvPath)
			for _, e := range s.apiResources(s.reg.ForGroupVersion(g.name, v.name)) {
				res, sub, _ := strings.Cut(e.Name, "/")
				for _, verb := range e.Verbs {
					routes = append(routes, resourceRoutes(t, gvPath, g.name, v.name, res, sub, e.Namespaced, verb)...)
				}
			}
		}
	}
	return routes
}

// resourceRoutes are the requests of verb on a resource (or subresource)
// of a group version served at gvPath.
func resourceRoutes(t *testing.T, gvPath, group, version, res, sub string, namespaced bool, verb string) []auditRoute {
	t.Helper()
	base := Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, APIVersion: version, Resource: res, Subresource: sub}
	at := func(method string, ns, name, query string) auditRoute {
		a := base
		a.Namespace, a.Name = ns, name
		p := gvPath
		if ns != "" && !(group == "" && res == "namespaces") {
			p += "/namespaces/" + ns
		}
		p += "/" + res
		if name != "" {
			p += "/" + name
		}
		if sub != "" {
			p += "/" + sub
		}
		a.Path = p
		if query != "" {
			p += "?" + query
		}
		return auditRoute{method, p, a}
	}
	ns := ""
	if namespaced {
		ns = auditNamespace
	}
	// A namespace's requests are in the namespace they name.
	objectNS := ns
	if group == "" && res == "namespaces" {
		objectNS = auditName
	}
	object := func(method string) []auditRoute { return []auditRoute{at(method, objectNS, auditName, "")} }
	collection := func(method, query string) []auditRoute {
		rs := []auditRoute{at(method, ns, "", query)}
		if namespaced && method == http.MethodGet {
			rs = append(rs, at(method, "", "", query)) // across namespaces
		}
		return rs
	}
	objectMethods := map[string]string{"get": http.MethodGet, "update": http.MethodPut, "patch": http.MethodPatch, "delete": http.MethodDelete}
	if m, ok := objectMethods[verb]; ok {
		return object(m)
	}
	switch {
	case sub != "" && verb == "create": // eviction, token, binding, exec ...
		return object(http.MethodPost)
	case sub != "":
	case verb == "list":
		return collection(http.MethodGet, "")
	case verb == "watch":
		return collection(http.MethodGet, "watch=true")
	case verb == "create":
		return collection(http.MethodPost, "")
	case verb == "deletecollection":
		return collection(http.MethodDelete, "")
	}
	t.Fatalf("the audit does not know how to request verb %q of %s/%s %s %s: add it", verb, group, version, res, sub)
	return nil
}

// auditRequest makes the request of a route with token ("": none).
func auditRequest(s *Server, rt auditRoute, token string) *httptest.ResponseRecorder {
	var body *strings.Reader
	if rt.method == http.MethodPost || rt.method == http.MethodPut || rt.method == http.MethodPatch {
		body = strings.NewReader(`{"metadata":{"name":"` + auditName + `"}}`)
	} else {
		body = strings.NewReader("")
	}
	// A request that got past the filters by mistake (a watch) ends at
	// the deadline instead of hanging the audit.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := httptest.NewRequestWithContext(ctx, rt.method, rt.path, body)
	r.Header.Set("Content-Type", "application/json")
	if rt.method == http.MethodPatch {
		r.Header.Set("Content-Type", "application/merge-patch+json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestRouteAudit requests every route twice: without credentials from a
// server that lets no anonymous request in (401, and the authorizer, which
// stands before every handler, is never asked), and as an authenticated
// user the authorizer denies (403, the authorizer asked about that very
// request, with kube-apiserver's attributes).
func TestRouteAudit(t *testing.T) {
	authz := &recordingAuthorizer{}
	s := auditServer(t, authz)
	routes := auditRoutes(t, s)

	// The listing covers what it must: a built-in resource with its
	// subresources, discovery, OpenAPI, the custom resources'.
	seen := map[string]bool{}
	for _, rt := range routes {
		seen[rt.String()] = true
	}
	for _, want := range []string{
		"GET /api/v1/namespaces/" + auditNamespace + "/pods/" + auditName + "/log",
		"POST /api/v1/namespaces/" + auditNamespace + "/pods/" + auditName + "/eviction",
		"PUT /apis/apps/v1/namespaces/" + auditNamespace + "/deployments/" + auditName + "/scale",
		"GET /api/v1/pods?watch=true",
		"DELETE /api/v1/namespaces/" + auditNamespace + "/configmaps",
		"PUT /api/v1/namespaces/" + auditName + "/finalize",
		"POST /api/v1/namespaces/" + auditNamespace + "/serviceaccounts/" + auditName + "/token",
		"GET /apis/" + auditCRDGroup + "/v1/namespaces/" + auditNamespace + "/widgets/" + auditName + "/scale",
		"PATCH /apis/" + auditCRDGroup + "/v1/namespaces/" + auditNamespace + "/widgets/" + auditName + "/status",
		"DELETE /apis/" + auditCRDGroup + "/v1/gadgets/" + auditName,
		"GET /apis/" + auditCRDGroup + "/v1",
		"GET /apis/" + auditCRDGroup,
		"GET /openapi/v3/apis/" + auditCRDGroup + "/v1",
		"GET /openapi/v3/api/v1",
		"GET /openapi/v2",
		"GET /version",
		"GET /readyz",
	} {
		if !seen[want] {
			t.Errorf("the audit does not request %s", want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d routes", len(routes))

	// Past a few failures the audit stops: a route that gets through
	// (a watch) would run to its deadline.
	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
		if failures++; failures == 10 {
			t.Fatal("stopping the audit after 10 failures")
		}
	}
	for _, rt := range routes {
		w := auditRequest(s, rt, "")
		if w.Code != http.StatusUnauthorized {
			fail("%s without credentials: %d, want 401\n%s", rt, w.Code, w.Body)
		}
		if asked := authz.take(); len(asked) != 0 {
			fail("%s without credentials: the authorizer was asked %+v", rt, asked)
		}
	}

	for _, rt := range routes {
		w := auditRequest(s, rt, auditUserToken)
		if w.Code != http.StatusForbidden {
			fail("%s denied: %d, want 403\n%s", rt, w.Code, w.Body)
		}
		asked := authz.take()
		found := slices.ContainsFunc(asked, func(a Attributes) bool {
			u := a.User
			a.User = User{}
			return u.Name == auditUser.Name && fmt.Sprint(a) == fmt.Sprint(rt.want)
		})
		if !found {
			fail("%s: the authorizer was asked\n%+v\nnot\n%+v", rt, asked, rt.want)
		}
	}
}
