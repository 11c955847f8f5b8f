package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// noOpinion is an Authorizer that allows nothing, with no reason.
type noOpinion struct{ AlwaysAllow }

func (noOpinion) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionNoOpinion, "", nil
}

// The 403 bodies of requests the authorizer does not allow are
// kube-apiserver v1.37.2's (testdata/rbac/forbidden.json, captured with a
// service account's token): resource requests of every verb, subresources,
// namespaces' own subresources, watch and proxy paths, field selectors on
// names, unknown groups, and non-resource paths.
func TestForbiddenBodies(t *testing.T) {
	raw, err := os.ReadFile("testdata/rbac/forbidden.json")
	if err != nil {
		t.Fatal(err)
	}
	var captures []struct {
		Method, Path string
		Code         int
		Body         json.RawMessage
	}
	if err := json.Unmarshal(raw, &captures); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Authorizer: noOpinion{}, SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const capturedUser = "system:serviceaccount:rbac-i17-cap:capsa"
	for _, c := range captures {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(c.Method, c.Path, strings.NewReader("{}")))
		want := strings.ReplaceAll(string(c.Body), capturedUser, AdminUser.Name)
		if rec.Code != c.Code || !equalJSON(t, rec.Body.Bytes(), []byte(want)) {
			t.Errorf("%s %s: %d %s\nwant %d %s", c.Method, c.Path, rec.Code, rec.Body, c.Code, want)
		}
	}
}

func equalJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// requestAttributes resolves paths as kube-apiserver's RequestInfo.
func TestRequestAttributes(t *testing.T) {
	for _, tt := range []struct {
		method, target string
		want           Attributes
	}{
		{"GET", "/api/v1/namespaces/n/pods", Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "pods"}},
		{"HEAD", "/api/v1/namespaces/n/pods/p", Attributes{Verb: "get", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "pods", Name: "p"}},
		{"GET", "/api/v1/pods?watch=1", Attributes{Verb: "watch", ResourceRequest: true, APIVersion: "v1", Resource: "pods"}},
		{"GET", "/api/v1/pods?watch=false", Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "pods"}},
		{"GET", "/apis/apps/v1/watch/namespaces/n/deployments/d", Attributes{Verb: "watch", ResourceRequest: true, APIGroup: "apps", APIVersion: "v1", Namespace: "n", Resource: "deployments", Name: "d"}},
		{"GET", "/api/v1/namespaces/n/configmaps?fieldSelector=metadata.name%3Dc", Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "configmaps", Name: "c"}},
		{"GET", "/api/v1/namespaces/n/configmaps?fieldSelector=metadata.name%3D..", Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "configmaps"}},
		{"DELETE", "/api/v1/namespaces/n/configmaps", Attributes{Verb: "deletecollection", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "configmaps"}},
		{"POST", "/api/v1/namespaces/n/pods/p/eviction", Attributes{Verb: "create", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "pods", Name: "p", Subresource: "eviction"}},
		{"PUT", "/api/v1/namespaces/n/finalize", Attributes{Verb: "update", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "namespaces", Name: "n", Subresource: "finalize"}},
		{"GET", "/api/v1/namespaces/n", Attributes{Verb: "get", ResourceRequest: true, APIVersion: "v1", Namespace: "n", Resource: "namespaces", Name: "n"}},
		{"GET", "/api/v1/namespaces", Attributes{Verb: "list", ResourceRequest: true, APIVersion: "v1", Resource: "namespaces"}},
		{"GET", "/api/v1/proxy/nodes/n/x", Attributes{Verb: "proxy", ResourceRequest: true, APIVersion: "v1", Resource: "nodes", Name: "n"}},
		{"OPTIONS", "/api/v1/pods", Attributes{ResourceRequest: true, APIVersion: "v1", Resource: "pods"}},
		{"GET", "/api/v1", Attributes{Verb: "get", Path: "/api/v1"}},
		{"GET", "/apis/apps/v1", Attributes{Verb: "get", Path: "/apis/apps/v1"}},
		{"GET", "/apis", Attributes{Verb: "get", Path: "/apis"}},
		{"GET", "/openapi/v3/apis/apps/v1", Attributes{Verb: "get", Path: "/openapi/v3/apis/apps/v1"}},
		{"POST", "/healthz", Attributes{Verb: "post", Path: "/healthz"}},
		{"GET", "/", Attributes{Verb: "get", Path: "/"}},
	} {
		got := requestAttributes(httptest.NewRequest(tt.method, tt.target, nil), User{})
		if tt.want.ResourceRequest {
			got.Path = "" // only non-resource requests are decided on their path
		}
		if got.User.Name != "" || !equalAttributes(got, tt.want) {
			t.Errorf("%s %s: %+v, want %+v", tt.method, tt.target, got, tt.want)
		}
	}
}

func equalAttributes(a, b Attributes) bool {
	a.User, b.User = User{}, User{}
	return a.Verb == b.Verb && a.ResourceRequest == b.ResourceRequest && a.Namespace == b.Namespace &&
		a.APIGroup == b.APIGroup && a.APIVersion == b.APIVersion && a.Resource == b.Resource &&
		a.Subresource == b.Subresource && a.Name == b.Name && a.Path == b.Path
}

// rbacPolicy creates objects through srv (as the admin) and waits until
// its authorizer sees the last of them.
func rbacPolicy(t *testing.T, srv *Server, objects ...[2]string) {
	t.Helper()
	for _, o := range objects {
		if code, body := serve(t, srv, "POST", o[0], o[1]); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", o[0], code, body)
		}
	}
	waitRBAC(t, srv)
}

// waitRBAC waits until srv's RBAC index has followed its store up to now.
func waitRBAC(t *testing.T, srv *Server) {
	t.Helper()
	// A binding of a fresh user, then a check that it is seen.
	probe := "probe-" + randomSuffix()
	if code, body := serve(t, srv, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		`{"metadata":{"name":"`+probe+`"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"`+probe+`"},"subjects":[{"kind":"User","name":"`+probe+`"}]}`); code != http.StatusCreated {
		t.Fatalf("probe: %d %v", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, reason, _ := srv.authorizer().Authorize(t.Context(), Attributes{User: User{Name: probe}, Verb: "get", Path: "/"})
		if strings.Contains(reason, probe) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the RBAC index did not follow the store")
		}
		time.Sleep(time.Millisecond) // polling a condition with a deadline
	}
	if code, body := serve(t, srv, "DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"+probe, ""); code != http.StatusOK {
		t.Fatalf("probe: %d %v", code, body)
	}
}

// The RBAC authorizer: system:masters, rules of Roles and ClusterRoles
// through RoleBindings and ClusterRoleBindings (users, groups, service
// accounts with the binding's namespace by default), verbs, groups,
// resources with subresources and "*/sub", resourceNames, non-resource
// URLs with a trailing "*", kube-apiserver's reasons, and missing roles
// as the reason of a denial.
func TestRBACAuthorize(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, err := New(Config{AuthorizationMode: AuthorizationRBAC, SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const rbac = "/apis/rbac.authorization.k8s.io/v1/"
	rbacPolicy(t, srv,
		[2]string{"/api/v1/namespaces", `{"metadata":{"name":"n"}}`},
		[2]string{rbac + "namespaces/n/roles", `{"metadata":{"name":"r"},"rules":[
			{"verbs":["get"],"apiGroups":[""],"resources":["configmaps"],"resourceNames":["one"]},
			{"verbs":["list","watch"],"apiGroups":["apps"],"resources":["deployments","deployments/scale"]},
			{"verbs":["*"],"apiGroups":["batch"],"resources":["*/status"]}]}`},
		[2]string{rbac + "namespaces/n/rolebindings", `{"metadata":{"name":"rb"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},
			"subjects":[{"kind":"ServiceAccount","name":"sa"},{"kind":"User","name":"alice"}]}`},
		[2]string{rbac + "namespaces/n/rolebindings", `{"metadata":{"name":"gone"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"missing"},
			"subjects":[{"kind":"User","name":"bob"}]}`},
		[2]string{rbac + "clusterroles", `{"metadata":{"name":"c"},"rules":[
			{"verbs":["get"],"nonResourceURLs":["/logs/*","/metrics"]},
			{"verbs":["get"],"apiGroups":["*"],"resources":["*"],"resourceNames":["special"]}]}`},
		[2]string{rbac + "clusterrolebindings", `{"metadata":{"name":"cb"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"c"},
			"subjects":[{"kind":"Group","name":"readers"},{"kind":"ServiceAccount","name":"sa","namespace":"other"}]}`},
	)
	sa := User{Name: "system:serviceaccount:n:sa", Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	reader := User{Name: "carol", Groups: []string{"readers"}}
	res := func(u User, verb, ns, group, resource, sub, name string) Attributes {
		return Attributes{User: u, ResourceRequest: true, Verb: verb, Namespace: ns, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
	}
	const rbByRole = `RBAC: allowed by RoleBinding "rb/n" of Role "r" to `
	for _, tt := range []struct {
		a      Attributes
		allow  bool
		reason string
	}{
		{res(User{Name: "root", Groups: []string{"system:masters"}}, "delete", "", "", "nodes", "", "x"), true, ""},
		{res(sa, "get", "n", "", "configmaps", "", "one"), true, rbByRole + `ServiceAccount "sa/n"`},
		{res(User{Name: "alice"}, "get", "n", "", "configmaps", "", "one"), true, rbByRole + `User "alice"`},
		{res(sa, "get", "n", "", "configmaps", "", "two"), false, ""},
		{res(sa, "list", "n", "", "configmaps", "", ""), false, ""},
		{res(sa, "get", "other", "", "configmaps", "", "one"), false, ""},
		{res(sa, "watch", "n", "apps", "deployments", "", ""), true, rbByRole + `ServiceAccount "sa/n"`},
		{res(sa, "list", "n", "apps", "deployments", "scale", ""), true, rbByRole + `ServiceAccount "sa/n"`},
		{res(sa, "list", "n", "apps", "deployments", "status", ""), false, ""},
		{res(sa, "list", "n", "", "deployments", "", ""), false, ""},
		{res(sa, "update", "n", "batch", "jobs", "status", "j"), true, rbByRole + `ServiceAccount "sa/n"`},
		{res(sa, "update", "n", "batch", "jobs", "", "j"), false, ""},
		{res(sa, "update", "n", "batch", "jobs", "statu", "j"), false, ""},
		{res(reader, "get", "n", "apps", "deployments", "scale", "special"), true, `RBAC: allowed by ClusterRoleBinding "cb" of ClusterRole "c" to Group "readers"`},
		{res(reader, "get", "", "", "nodes", "", "special"), true, `RBAC: allowed by ClusterRoleBinding "cb" of ClusterRole "c" to Group "readers"`},
		{res(reader, "get", "", "", "nodes", "", "other"), false, ""},
		{Attributes{User: reader, Verb: "get", Path: "/logs/kube.log"}, true, `RBAC: allowed by ClusterRoleBinding "cb" of ClusterRole "c" to Group "readers"`},
		{Attributes{User: reader, Verb: "get", Path: "/logs"}, false, ""},
		{Attributes{User: reader, Verb: "get", Path: "/metrics"}, true, `RBAC: allowed by ClusterRoleBinding "cb" of ClusterRole "c" to Group "readers"`},
		{Attributes{User: reader, Verb: "post", Path: "/metrics"}, false, ""},
		{Attributes{User: reader, Verb: "get", Path: "/metrics/x"}, false, ""},
		{Attributes{User: User{Name: "system:serviceaccount:other:sa"}, Verb: "get", Path: "/metrics"}, true, `RBAC: allowed by ClusterRoleBinding "cb" of ClusterRole "c" to ServiceAccount "sa/other"`},
		{res(User{Name: "bob"}, "get", "n", "", "configmaps", "", "one"), false, `RBAC: role.rbac.authorization.k8s.io "missing" not found`},
	} {
		d, reason, err := srv.authorizer().Authorize(t.Context(), tt.a)
		if err != nil || (d == DecisionAllow) != tt.allow || reason != tt.reason {
			t.Errorf("%+v: %v %q %v, want allowed %v %q", tt.a, d, reason, err, tt.allow, tt.reason)
		}
	}

	// A deleted binding no longer allows.
	if code, body := serve(t, srv, "DELETE", rbac+"namespaces/n/rolebindings/rb", ""); code != http.StatusOK {
		t.Fatalf("%d %v", code, body)
	}
	waitRBAC(t, srv)
	if d, _, _ := srv.authorizer().Authorize(t.Context(), res(sa, "get", "n", "", "configmaps", "", "one")); d == DecisionAllow {
		t.Error("allowed after its binding was deleted")
	}

	// RulesFor: what the reviews list.
	rr, nr, incomplete, err := srv.authorizer().RulesFor(t.Context(), reader, "n")
	if err != nil || incomplete || len(rr) != 1 || len(nr) != 1 || nr[0].NonResourceURLs[0] != "/logs/*" || rr[0].ResourceNames[0] != "special" {
		t.Errorf("RulesFor: %+v %+v %v %v", rr, nr, incomplete, err)
	}
	_, _, _, err = srv.authorizer().RulesFor(t.Context(), User{Name: "bob"}, "n")
	if err == nil || err.Error() != `role.rbac.authorization.k8s.io "missing" not found` {
		t.Errorf("RulesFor of a missing role: %v", err)
	}
}

// A decision (Authorize and RulesFor) waits until the index has followed
// the RBAC writes made through the server before it, and no longer; the
// server's writes of RBAC objects are noted.
func TestRBACWaitsForWrites(t *testing.T) {
	srv, err := New(Config{AuthorizationMode: AuthorizationRBAC, SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if code, body := serve(t, srv, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"metadata":{"name":"c"}}`); code != http.StatusCreated {
		t.Fatalf("%d %v", code, body)
	} else if rv := body["metadata"].(map[string]any)["resourceVersion"]; fmt.Sprint(srv.rbac.written.Load()) != rv {
		t.Errorf("the write of revision %v noted as %d", rv, srv.rbac.written.Load())
	}

	for _, decide := range []func(Authorizer){
		func(a Authorizer) {
			a.Authorize(t.Context(), Attributes{User: User{Name: "u"}, Verb: "get", Path: "/"})
		},
		func(a Authorizer) { a.RulesFor(t.Context(), User{Name: "u"}, "") },
	} {
		x := newRBACIndex()
		x.written.Store(7)
		done := make(chan struct{})
		go func() {
			decide(rbacAuthorizer{x})
			close(done)
		}()
		x.mu.Lock()
		x.advance(6)
		x.mu.Unlock()
		select {
		case <-done:
			t.Fatal("decided before the index reached the last write")
		case <-time.After(50 * time.Millisecond): // it must still be waiting
		}
		x.mu.Lock()
		x.advance(7)
		x.mu.Unlock()
		select {
		case <-done:
		case <-time.After(rbacWriteWait / 2): // well before it would give up waiting
			t.Fatal("still waiting once the index reached the last write")
		}
	}
}
