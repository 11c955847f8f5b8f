package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// capsa is the service account the captures of testdata/rbac were made
// with, as its token authenticates.
var capsa = User{Name: "system:serviceaccount:rbac-i17-cap:capsa",
	Groups: []string{"system:serviceaccounts", "system:serviceaccounts:rbac-i17-cap", "system:authenticated"}}

// capsaPolicy is the policy capsa had on the real server when the
// captures were made: it may create and update Roles and RoleBindings in
// its namespace, create ClusterRoles and ClusterRoleBindings, and has the
// bootstrap policy's rights of every authenticated user.
func capsaPolicy(t *testing.T, srv *Server) {
	t.Helper()
	const rbac = "/apis/rbac.authorization.k8s.io/v1/"
	rbacPolicy(t, srv,
		[2]string{"/api/v1/namespaces", `{"metadata":{"name":"rbac-i17-cap"}}`},
		[2]string{rbac + "namespaces/rbac-i17-cap/roles", `{"metadata":{"name":"rbac-writer"},"rules":[{"verbs":["create","update","get"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles","rolebindings"]}]}`},
		[2]string{rbac + "namespaces/rbac-i17-cap/rolebindings", `{"metadata":{"name":"capsa-writer"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"rbac-writer"},"subjects":[{"kind":"ServiceAccount","name":"capsa","namespace":"rbac-i17-cap"}]}`},
		[2]string{rbac + "clusterroles", `{"metadata":{"name":"rbac-i17-cr-writer"},"rules":[{"verbs":["create"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles","clusterrolebindings"]}]}`},
		[2]string{rbac + "clusterrolebindings", `{"metadata":{"name":"rbac-i17-capsa-crw"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"rbac-i17-cr-writer"},"subjects":[{"kind":"ServiceAccount","name":"capsa","namespace":"rbac-i17-cap"}]}`},
	)
}

// createAs creates the object body of the collection path as user,
// through the store's write pipeline (the request's user is the
// authenticator's, and these tests have none).
func createAs(t *testing.T, srv *Server, user User, path, body string) *metav1.Status {
	t.Helper()
	ri, ok := parsePath(path)
	if !ok {
		t.Fatalf("bad path %s", path)
	}
	res := srv.reg.Get(ri.Group, ri.Version, ri.Resource)
	obj := res.New()
	if err := json.Unmarshal([]byte(body), obj); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ri.Namespace)
	if _, err := srv.storeOf(res).Create(t.Context(), obj, &writeOptions{Manager: "test", User: &user}); err != nil {
		return errorStatus(err)
	}
	return nil
}

// Escalation is refused with kube-apiserver v1.37.2's bodies
// (testdata/rbac/escalation.json): Roles and ClusterRoles granting rights
// their writer does not hold (resources, resourceNames, subresources,
// non-resource URLs), an aggregationRule without every right, bindings to
// roles whose rules the writer does not hold (the aggregated edit role:
// its rules in the cluster's order), and bindings to missing roles (404).
func TestEscalationRefused(t *testing.T) {
	raw, err := os.ReadFile("testdata/rbac/escalation.json")
	if err != nil {
		t.Fatal(err)
	}
	var captures []struct {
		Path    string
		Request json.RawMessage
		Code    int
		Body    json.RawMessage
	}
	if err := json.Unmarshal(raw, &captures); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{AuthorizationMode: AuthorizationRBAC})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	capsaPolicy(t, srv)
	for _, c := range captures {
		st := createAs(t, srv, capsa, c.Path, string(c.Request))
		if st == nil {
			t.Errorf("%s %s: created", c.Path, c.Request)
			continue
		}
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		got, _ := json.Marshal(st)
		if int(st.Code) != c.Code || !equalJSON(t, got, c.Body) {
			t.Errorf("%s %s:\n got %s\nwant %s", c.Path, c.Request, got, c.Body)
		}
	}

	// What capsa holds it may grant; the escalate and bind verbs lift the
	// checks; system:masters skips them.
	const rbac = "/apis/rbac.authorization.k8s.io/v1/"
	if st := createAs(t, srv, capsa, rbac+"namespaces/rbac-i17-cap/roles", `{"metadata":{"name":"held"},"rules":[{"verbs":["get"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"]}]}`); st != nil {
		t.Errorf("a role of rights held: %s", st.Message)
	}
	if st := createAs(t, srv, capsa, rbac+"namespaces/rbac-i17-cap/rolebindings", `{"metadata":{"name":"held"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"rbac-writer"},"subjects":[{"kind":"User","name":"x"}]}`); st != nil {
		t.Errorf("a binding of rights held: %s", st.Message)
	}
	if st := createAs(t, srv, User{Name: "root", Groups: []string{"system:masters"}}, captures[0].Path, string(captures[0].Request)); st != nil {
		t.Errorf("system:masters: %s", st.Message)
	}
	rbacPolicy(t, srv,
		[2]string{rbac + "namespaces/rbac-i17-cap/roles", `{"metadata":{"name":"escalator"},"rules":[
			{"verbs":["escalate"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"]},
			{"verbs":["bind"],"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles"],"resourceNames":["edit"]}]}`},
		[2]string{rbac + "namespaces/rbac-i17-cap/rolebindings", `{"metadata":{"name":"escalator"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"escalator"},"subjects":[{"kind":"ServiceAccount","name":"capsa","namespace":"rbac-i17-cap"}]}`},
	)
	if st := createAs(t, srv, capsa, captures[0].Path, strings.Replace(string(captures[0].Request), "esc1", "esc1b", 1)); st != nil {
		t.Errorf("escalate: %s", st.Message)
	}
	if st := createAs(t, srv, capsa, captures[1].Path, strings.Replace(string(captures[1].Request), "esc2", "esc2b", 1)); st != nil {
		t.Errorf("bind: %s", st.Message)
	}
	// Updates are checked too: capsa may not change a binding (made by
	// the admin) of a role whose rules it does not hold, but may change
	// the owner references alone.
	rbacPolicy(t, srv,
		[2]string{rbac + "namespaces/rbac-i17-cap/roles", `{"metadata":{"name":"cm-reader"},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["configmaps"]}]}`},
		[2]string{rbac + "namespaces/rbac-i17-cap/rolebindings", `{"metadata":{"name":"readers"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"x"}]}`},
	)
	update := func(edit func(*rbacv1.RoleBinding)) *metav1.Status {
		res := srv.reg.Get(rbacGroup, "v1", "rolebindings")
		_, _, err := srv.storeOf(res).Update(t.Context(), "rbac-i17-cap", "readers", func(cur storage.Object) (registry.Object, *metav1.Status) {
			b := cur.(*rbacv1.RoleBinding).DeepCopy()
			edit(b)
			return b, nil
		}, false, &writeOptions{Manager: "test", User: &capsa})
		if err != nil {
			return errorStatus(err)
		}
		return nil
	}
	st := update(func(b *rbacv1.RoleBinding) { b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: "User", Name: "y"}) })
	if st == nil || st.Code != http.StatusForbidden || !strings.Contains(st.Message, `{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "list"]}`) {
		t.Errorf("an update naming more subjects: %+v", st)
	}
	if st := update(func(b *rbacv1.RoleBinding) {
		b.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u"}}
	}); st != nil {
		t.Errorf("an update of owner references: %s", st.Message)
	}
}

// With AlwaysAllow every user may escalate and bind: nothing is refused.
// With an authorizer that allows neither, the rules it lists for the
// writer decide, but for members of system:masters.
func TestEscalationOtherAuthorizers(t *testing.T) {
	const all = `{"metadata":{"name":"all"},"rules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]}`
	const crs = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
	srv, err := New(Config{SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if st := createAs(t, srv, capsa, crs, all); st != nil {
		t.Errorf("AlwaysAllow: %s", st.Message)
	}

	deny, err := New(Config{SkipSystemNamespaces: true, Authorizer: denyAll{}})
	if err != nil {
		t.Fatal(err)
	}
	defer deny.Close()
	if st := createAs(t, deny, capsa, crs, all); st == nil || st.Code != http.StatusForbidden {
		t.Errorf("an authorizer allowing nothing: %+v", st)
	}
	if st := createAs(t, deny, User{Name: "root", Groups: []string{"system:masters"}}, crs, all); st != nil {
		t.Errorf("system:masters: %s", st.Message)
	}
}

// ruleCovers and uncoveredRules: what an owner's rule grants of a
// requested rule, right by right (names, "*/sub", URL prefixes, verbs).
func TestRuleCovers(t *testing.T) {
	r := func(verbs, groups, resources, names, urls []string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names, NonResourceURLs: urls}
	}
	s := func(v ...string) []string { return v }
	for _, tt := range []struct {
		owner, req rbacv1.PolicyRule
		missing    int
	}{
		{r(s("get"), s(""), s("pods"), s("a"), nil), r(s("get"), s(""), s("pods"), s("a"), nil), 0},
		{r(s("get"), s(""), s("pods"), s("a"), nil), r(s("get"), s(""), s("pods"), nil, nil), 1},
		{r(s("get"), s(""), s("pods"), s("a"), nil), r(s("get"), s(""), s("pods"), s("a", "b"), nil), 1},
		{r(s("get"), s(""), s("pods"), nil, nil), r(s("get"), s(""), s("pods"), s("a", "b"), nil), 0},
		{r(s("get"), s("apps"), s("*/scale"), nil, nil), r(s("get"), s("apps"), s("deployments/scale", "statefulsets/scale"), nil, nil), 0},
		{r(s("get"), s("apps"), s("*/scale"), nil, nil), r(s("get"), s("apps"), s("deployments/status"), nil, nil), 1},
		{r(s("get"), s("apps"), s("*/scale"), nil, nil), r(s("get"), s("apps"), s("deployments"), nil, nil), 1},
		{r(s("*"), s("*"), s("*"), nil, nil), r(s("get", "escalate"), s("x", ""), s("a/b", "c"), s("n"), nil), 0},
		{r(s("get", "list"), s(""), s("pods"), nil, nil), r(s("get", "list", "watch"), s(""), s("pods"), nil, nil), 1},
		{r(s("get"), nil, nil, nil, s("/logs/*")), r(s("get"), nil, nil, nil, s("/logs/x", "/logs/")), 0},
		{r(s("get"), nil, nil, nil, s("/logs/*")), r(s("get"), nil, nil, nil, s("/logs")), 1},
		{r(s("get"), s("*"), s("*"), nil, nil), r(s("get"), nil, nil, nil, s("/healthz")), 1},
	} {
		if got := uncoveredRules([]rbacv1.PolicyRule{tt.owner}, []rbacv1.PolicyRule{tt.req}); len(got) != tt.missing {
			t.Errorf("%+v over %+v: missing %v, want %d", tt.owner, tt.req, got, tt.missing)
		}
	}
}
