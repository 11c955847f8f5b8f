package conformance

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// RBAC (issue 17): decisions of kube-apiserver's RBAC authorizer on
// resource and non-resource requests (subresources, resourceNames, URL
// prefixes), its 403 bodies, the four access reviews, ClusterRole
// aggregation, escalation prevention and the bootstrap policy. The
// identity without rights is a service account's token from TokenRequest;
// in-process each case runs on a fresh server configured as realk8s'
// (authEnv: a static token for the admin, service account tokens, RBAC).
// A real server's authorizer sees a new binding a moment after it is
// written: the cases poll until it applies.

const rbacAPI = "/apis/rbac.authorization.k8s.io/v1/"

// rbacCreate creates a cluster-scoped RBAC object (resource
// "clusterroles" or "clusterrolebindings") deleted when the case ends.
func rbacCreate(t *testing.T, e *env, resource string, body obj) {
	t.Helper()
	expect(t, e.post(t, rbacAPI+resource, body), http.StatusCreated)
	name := str(body, "metadata", "name")
	t.Cleanup(func() { e.del(t, rbacAPI+resource+"/"+name, nil) })
}

// roleRef and subject build the parts of a binding.
func roleRef(kind, name string) obj {
	return obj{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}
}

func saSubject(ns, name string) obj {
	return obj{"kind": "ServiceAccount", "name": name, "namespace": ns}
}

func rule(verbs, groups, resources []any, names ...any) obj {
	r := obj{"verbs": verbs, "apiGroups": groups, "resources": resources}
	if len(names) > 0 {
		r["resourceNames"] = names
	}
	return r
}

func list(s ...string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// checkForbidden checks a 403 body whole: kube-apiserver's Status with
// message and details.
func checkForbidden(t *testing.T, r *response, message string, details obj) {
	t.Helper()
	want := obj{"kind": "Status", "apiVersion": "v1", "metadata": obj{}, "status": "Failure", "reason": "Forbidden",
		"message": message, "details": details, "code": http.StatusForbidden}
	if r.Code != http.StatusForbidden {
		t.Errorf("%s %s: HTTP %d, want 403:\n%s", r.Method, r.Path, r.Code, r)
		return
	}
	if got := decode(t, r.Body); compact(got) != compact(want) { // numbers compared as JSON
		t.Errorf("%s %s: 403 body\n got %s\nwant %s", r.Method, r.Path, compact(got), compact(want))
	}
}

// allowedSoon polls until the request r makes is no longer refused with
// 403 (a new binding applies).
func allowedSoon(t *testing.T, e *env, what string, r func() *response) {
	t.Helper()
	poll(t, e.within(30*time.Second), what, func() bool { return r().Code != http.StatusForbidden })
}

// TestRBACDecisions checks what a service account may do through a Role
// and a ClusterRole bound to it: verbs, a resource's subresources
// (pods/log, */scale), resourceNames, non-resource URLs with a "*"
// prefix; and kube-apiserver's 403 bodies for what it may not.
func TestRBACDecisions(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	ns := e.namespace(t)
	token, _ := serviceAccountToken(t, e, ns, "reader", obj{})
	sa := e.as(token)
	user := "system:serviceaccount:" + ns + ":reader"

	// Before any binding: nothing in the namespace, nothing outside the
	// bootstrap policy's discovery paths.
	checkForbidden(t, sa.get(t, "/api/v1/namespaces/"+ns+"/configmaps"),
		`configmaps is forbidden: User "`+user+`" cannot list resource "configmaps" in API group "" in the namespace "`+ns+`"`,
		obj{"kind": "configmaps"})
	checkForbidden(t, sa.get(t, "/apis/apps/v1/deployments?watch=true"),
		`deployments.apps is forbidden: User "`+user+`" cannot watch resource "deployments" in API group "apps" at the cluster scope`,
		obj{"kind": "deployments", "group": "apps"})
	checkForbidden(t, sa.get(t, "/metrics"), `forbidden: User "`+user+`" cannot get path "/metrics"`, obj{})
	for _, p := range []string{"/api", "/apis", "/version", "/healthz", "/api/v1", "/apis/apps/v1"} {
		if r := sa.get(t, p); r.Code != http.StatusOK {
			t.Errorf("GET %s by a service account without rights: %d, want 200 (system:discovery)", p, r.Code)
		}
	}

	name := "kapi-conformance-rbac-" + randomSuffix()
	expect(t, e.post(t, rbacAPI+"namespaces/"+ns+"/roles", obj{"metadata": obj{"name": "reader"}, "rules": []any{
		rule(list("get"), list(""), list("configmaps"), "one"),
		rule(list("get"), list(""), list("pods/log")),
		rule(list("get", "update"), list("apps"), list("*/scale")),
		rule(list("list", "watch"), list("apps"), list("deployments")),
	}}), http.StatusCreated)
	expect(t, e.post(t, rbacAPI+"namespaces/"+ns+"/rolebindings", obj{"metadata": obj{"name": "reader"},
		"roleRef": roleRef("Role", "reader"), "subjects": []any{obj{"kind": "ServiceAccount", "name": "reader"}}}), http.StatusCreated)
	rbacCreate(t, e, "clusterroles", obj{"metadata": obj{"name": name}, "rules": []any{
		obj{"verbs": list("get"), "nonResourceURLs": list("/logs/*", "/metrics")},
	}})
	rbacCreate(t, e, "clusterrolebindings", obj{"metadata": obj{"name": name}, "roleRef": roleRef("ClusterRole", name),
		"subjects": []any{saSubject(ns, "reader")}})

	cms := "/api/v1/namespaces/" + ns + "/configmaps"
	allowedSoon(t, e, "the role binding to apply", func() *response { return sa.get(t, cms+"/one") })
	allowedSoon(t, e, "the cluster role binding to apply", func() *response { return sa.get(t, "/metrics") })
	expect(t, sa.get(t, cms+"/one"), http.StatusNotFound) // allowed, and there is none
	checkForbidden(t, sa.get(t, cms+"/two"),
		`configmaps "two" is forbidden: User "`+user+`" cannot get resource "configmaps" in API group "" in the namespace "`+ns+`"`,
		obj{"kind": "configmaps", "name": "two"})
	checkForbidden(t, sa.get(t, cms+"?fieldSelector=metadata.name%3Done"),
		`configmaps "one" is forbidden: User "`+user+`" cannot list resource "configmaps" in API group "" in the namespace "`+ns+`"`,
		obj{"kind": "configmaps", "name": "one"})
	checkForbidden(t, sa.put(t, cms+"/one", obj{"metadata": obj{"name": "one"}}),
		`configmaps "one" is forbidden: User "`+user+`" cannot update resource "configmaps" in API group "" in the namespace "`+ns+`"`,
		obj{"kind": "configmaps", "name": "one"})
	// Subresources: pods/log is granted, pods is not; */scale covers the
	// scale of every resource of the group, not its status.
	expect(t, sa.get(t, "/api/v1/namespaces/"+ns+"/pods/p/log"), http.StatusNotFound)
	checkForbidden(t, sa.get(t, "/api/v1/namespaces/"+ns+"/pods/p"),
		`pods "p" is forbidden: User "`+user+`" cannot get resource "pods" in API group "" in the namespace "`+ns+`"`,
		obj{"kind": "pods", "name": "p"})
	expect(t, sa.get(t, "/apis/apps/v1/namespaces/"+ns+"/statefulsets/s/scale"), http.StatusNotFound)
	checkForbidden(t, sa.get(t, "/apis/apps/v1/namespaces/"+ns+"/deployments/d/status"),
		`deployments.apps "d" is forbidden: User "`+user+`" cannot get resource "deployments/status" in API group "apps" in the namespace "`+ns+`"`,
		obj{"kind": "deployments", "group": "apps", "name": "d"})
	expect(t, sa.get(t, "/apis/apps/v1/namespaces/"+ns+"/deployments"), http.StatusOK)
	checkForbidden(t, sa.get(t, "/apis/apps/v1/deployments"),
		`deployments.apps is forbidden: User "`+user+`" cannot list resource "deployments" in API group "apps" at the cluster scope`,
		obj{"kind": "deployments", "group": "apps"})
	// Non-resource URLs: the path itself, or below a "*" prefix.
	if r := sa.get(t, "/logs/x"); r.Code == http.StatusForbidden {
		t.Errorf("GET /logs/x under /logs/*: %s", r)
	}
	checkForbidden(t, sa.get(t, "/logs"), `forbidden: User "`+user+`" cannot get path "/logs"`, obj{})
	checkForbidden(t, sa.post(t, "/metrics", obj{}), `forbidden: User "`+user+`" cannot post path "/metrics"`, obj{})

	// Deleting the binding takes the rights away.
	expect(t, e.del(t, rbacAPI+"namespaces/"+ns+"/rolebindings/reader", nil), http.StatusOK)
	poll(t, e.within(30*time.Second), "the deleted binding to stop applying", func() bool {
		return sa.get(t, cms+"/one").Code == http.StatusForbidden
	})
}

// review creates an access review as e and returns its status.
func review(t *testing.T, e *env, path string, spec obj) obj {
	t.Helper()
	kind := map[string]string{"subjectaccessreviews": "SubjectAccessReview", "localsubjectaccessreviews": "LocalSubjectAccessReview",
		"selfsubjectaccessreviews": "SelfSubjectAccessReview", "selfsubjectrulesreviews": "SelfSubjectRulesReview"}[path[strings.LastIndex(path, "/")+1:]]
	r := expect(t, e.post(t, "/apis/authorization.k8s.io/v1/"+path, obj{"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec}), http.StatusCreated)
	st, _ := field(r, "status")
	m, _ := st.(map[string]any)
	return m
}

// TestRBACAccessReviews checks the four access reviews answered by the
// RBAC authorizer: SubjectAccessReview and LocalSubjectAccessReview (by
// the admin, about a service account: kube-apiserver's reasons),
// SelfSubjectAccessReview and SelfSubjectRulesReview (by the service
// account itself: kubectl auth can-i, and can-i --list).
func TestRBACAccessReviews(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	ns := e.namespace(t)
	token, _ := serviceAccountToken(t, e, ns, "asker", obj{})
	sa := e.as(token)
	user := "system:serviceaccount:" + ns + ":asker"
	groups := list("system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated")
	expect(t, e.post(t, rbacAPI+"namespaces/"+ns+"/roles", obj{"metadata": obj{"name": "r"}, "rules": []any{
		rule(list("get", "list"), list(""), list("secrets"), "s1"),
	}}), http.StatusCreated)
	expect(t, e.post(t, rbacAPI+"namespaces/"+ns+"/rolebindings", obj{"metadata": obj{"name": "rb"},
		"roleRef": roleRef("Role", "r"), "subjects": []any{saSubject(ns, "asker")}}), http.StatusCreated)
	expect(t, e.post(t, rbacAPI+"namespaces/"+ns+"/rolebindings", obj{"metadata": obj{"name": "viewers"},
		"roleRef": roleRef("ClusterRole", "view"), "subjects": []any{obj{"kind": "Group", "name": "kapi-viewers-" + ns}}}), http.StatusCreated)

	secret := func(name string) obj {
		return obj{"namespace": ns, "verb": "get", "resource": "secrets", "name": name}
	}
	poll(t, e.within(30*time.Second), "the role binding to apply", func() bool {
		return review(t, e, "subjectaccessreviews", obj{"user": user, "groups": groups, "resourceAttributes": secret("s1")})["allowed"] == true
	})
	want := obj{"allowed": true, "reason": `RBAC: allowed by RoleBinding "rb/` + ns + `" of Role "r" to ServiceAccount "asker/` + ns + `"`}
	if got := review(t, e, "subjectaccessreviews", obj{"user": user, "groups": groups, "resourceAttributes": secret("s1")}); !reflect.DeepEqual(got, want) {
		t.Errorf("SubjectAccessReview of s1: %s, want %s", compact(got), compact(want))
	}
	if got := review(t, e, "subjectaccessreviews", obj{"user": user, "groups": groups, "resourceAttributes": secret("s2")}); !reflect.DeepEqual(got, obj{"allowed": false}) {
		t.Errorf("SubjectAccessReview of s2: %s", compact(got))
	}
	viewer := obj{"user": "someone", "groups": list("kapi-viewers-" + ns), "resourceAttributes": obj{"namespace": ns, "verb": "list", "resource": "pods"}}
	poll(t, e.within(30*time.Second), "the group binding to apply", func() bool {
		return review(t, e, "subjectaccessreviews", viewer)["allowed"] == true
	})
	want = obj{"allowed": true, "reason": `RBAC: allowed by RoleBinding "viewers/` + ns + `" of ClusterRole "view" to Group "kapi-viewers-` + ns + `"`}
	if got := review(t, e, "subjectaccessreviews", viewer); !reflect.DeepEqual(got, want) {
		t.Errorf("SubjectAccessReview of a group: %s, want %s", compact(got), compact(want))
	}
	want = obj{"allowed": true, "reason": `RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"`}
	if got := review(t, e, "subjectaccessreviews", obj{"user": user, "groups": groups, "nonResourceAttributes": obj{"verb": "get", "path": "/apis"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("SubjectAccessReview of /apis: %s, want %s", compact(got), compact(want))
	}
	if got := review(t, e, "subjectaccessreviews", obj{"user": "root", "groups": list("system:masters"), "resourceAttributes": obj{"verb": "delete", "resource": "nodes"}}); !reflect.DeepEqual(got, obj{"allowed": true}) {
		t.Errorf("SubjectAccessReview of system:masters: %s", compact(got))
	}

	lsar := "namespaces/" + ns + "/localsubjectaccessreviews"
	if got := review(t, e, lsar, obj{"user": user, "groups": groups, "resourceAttributes": secret("s1")}); got["allowed"] != true {
		t.Errorf("LocalSubjectAccessReview of s1: %s", compact(got))
	}
	if got := review(t, e, lsar, obj{"user": user, "groups": groups, "resourceAttributes": obj{"namespace": ns, "verb": "delete", "resource": "secrets", "name": "s1"}}); got["allowed"] != false {
		t.Errorf("LocalSubjectAccessReview of deleting s1: %s", compact(got))
	}

	// The service account asks for itself.
	if got := review(t, sa, "selfsubjectaccessreviews", obj{"resourceAttributes": secret("s1")}); !reflect.DeepEqual(got, obj{"allowed": true,
		"reason": `RBAC: allowed by RoleBinding "rb/` + ns + `" of Role "r" to ServiceAccount "asker/` + ns + `"`}) {
		t.Errorf("SelfSubjectAccessReview of s1: %s", compact(got))
	}
	if got := review(t, sa, "selfsubjectaccessreviews", obj{"resourceAttributes": obj{"verb": "list", "resource": "nodes"}}); !reflect.DeepEqual(got, obj{"allowed": false}) {
		t.Errorf("SelfSubjectAccessReview of nodes: %s", compact(got))
	}
	rules := review(t, sa, "selfsubjectrulesreviews", obj{"namespace": ns})
	if rules["incomplete"] != false {
		t.Errorf("SelfSubjectRulesReview incomplete: %s", compact(rules))
	}
	resourceRules, _ := rules["resourceRules"].([]any)
	nonResourceRules, _ := rules["nonResourceRules"].([]any)
	for _, want := range []any{
		obj{"verbs": list("get", "list"), "apiGroups": list(""), "resources": list("secrets"), "resourceNames": list("s1")},
		obj{"verbs": list("create"), "apiGroups": list("authorization.k8s.io"), "resources": list("selfsubjectaccessreviews", "selfsubjectrulesreviews")},
		obj{"verbs": list("create"), "apiGroups": list("authentication.k8s.io"), "resources": list("selfsubjectreviews")},
	} {
		if !slices.ContainsFunc(resourceRules, func(r any) bool { return reflect.DeepEqual(r, want) }) {
			t.Errorf("SelfSubjectRulesReview: no %s in %s", compact(want), compact(resourceRules))
		}
	}
	for _, want := range []any{
		obj{"verbs": list("get"), "nonResourceURLs": list("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/")},
		obj{"verbs": list("get"), "nonResourceURLs": list("/healthz", "/livez", "/readyz", "/version", "/version/")},
	} {
		if !slices.ContainsFunc(nonResourceRules, func(r any) bool { return reflect.DeepEqual(r, want) }) {
			t.Errorf("SelfSubjectRulesReview: no %s in %s", compact(want), compact(nonResourceRules))
		}
	}
	// In another namespace, the Role's rule is not there.
	other := review(t, sa, "selfsubjectrulesreviews", obj{"namespace": "default"})
	if rr, _ := other["resourceRules"].([]any); slices.ContainsFunc(rr, func(r any) bool { return strings.Contains(compact(r), `"s1"`) }) {
		t.Errorf("SelfSubjectRulesReview in default lists the role of %s: %s", ns, compact(rr))
	}
}

// TestRBACAggregation checks the clusterrole-aggregation controller: a
// ClusterRole with an aggregationRule gets the rules of the ClusterRoles
// its selector matches, kept current as they change.
func TestRBACAggregation(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	suffix := randomSuffix()
	label := "kapi-conformance.io/aggregate-" + suffix
	name := "kapi-conformance-agg-" + suffix
	rbacCreate(t, e, "clusterroles", obj{"metadata": obj{"name": name},
		"aggregationRule": obj{"clusterRoleSelectors": []any{obj{"matchLabels": obj{label: "true"}}}}})
	r1 := rule(list("get"), list(""), list("configmaps"))
	r2 := rule(list("list"), list("apps"), list("deployments"))
	rbacCreate(t, e, "clusterroles", obj{"metadata": obj{"name": name + "-b", "labels": obj{label: "true"}}, "rules": []any{r1}})
	rulesOf := func() []any {
		r := expect(t, e.get(t, rbacAPI+"clusterroles/"+name), http.StatusOK)
		rules, _ := r["rules"].([]any)
		return rules
	}
	eventually := func(what string, want []any) {
		t.Helper()
		poll(t, e.within(30*time.Second), what, func() bool { return reflect.DeepEqual(rulesOf(), want) })
	}
	eventually("the first role's rules", []any{r1})
	rbacCreate(t, e, "clusterroles", obj{"metadata": obj{"name": name + "-a", "labels": obj{label: "true"}}, "rules": []any{r2, r1}})
	eventually("the second role's rules (roles by name, a rule once)", []any{r2, r1})
	expect(t, e.del(t, rbacAPI+"clusterroles/"+name+"-a", nil), http.StatusOK)
	eventually("the deleted role's rules to go", []any{r1})
}

// TestRBACEscalation checks escalation prevention: a service account that
// may create Roles and RoleBindings may not grant what it does not hold
// (403 with kube-apiserver's message), may grant what it holds, and may
// do more with the escalate and bind verbs.
func TestRBACEscalation(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	ns := e.namespace(t)
	token, _ := serviceAccountToken(t, e, ns, "granter", obj{})
	sa := e.as(token)
	user := "system:serviceaccount:" + ns + ":granter"
	groups := `["system:serviceaccounts" "system:serviceaccounts:` + ns + `" "system:authenticated"]`
	roles, bindings := rbacAPI+"namespaces/"+ns+"/roles", rbacAPI+"namespaces/"+ns+"/rolebindings"
	expect(t, e.post(t, roles, obj{"metadata": obj{"name": "granter"}, "rules": []any{
		rule(list("create", "update", "get"), list("rbac.authorization.k8s.io"), list("roles", "rolebindings")),
		rule(list("get", "list"), list(""), list("configmaps")),
	}}), http.StatusCreated)
	expect(t, e.post(t, bindings, obj{"metadata": obj{"name": "granter"}, "roleRef": roleRef("Role", "granter"),
		"subjects": []any{saSubject(ns, "granter")}}), http.StatusCreated)
	held := obj{"metadata": obj{"name": "held"}, "rules": []any{rule(list("get"), list(""), list("configmaps"))}}
	allowedSoon(t, e, "the binding to apply", func() *response { return sa.post(t, roles, held) })

	more := obj{"metadata": obj{"name": "more"}, "rules": []any{
		rule(list("get", "list", "delete"), list(""), list("configmaps", "secrets")),
		rule(list("get"), list("apps"), list("deployments"), "a", "b"),
	}}
	checkForbidden(t, sa.post(t, roles, more), `roles.rbac.authorization.k8s.io "more" is forbidden: user "`+user+`" (groups=`+groups+`) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}
{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["get"]}
{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["b"], Verbs:["get"]}`,
		obj{"name": "more", "group": "rbac.authorization.k8s.io", "kind": "roles"})
	// A binding to a role whose rules it does not hold; to a missing role.
	expect(t, e.post(t, roles, obj{"metadata": obj{"name": "secrets"}, "rules": []any{rule(list("get"), list(""), list("secrets"))}}), http.StatusCreated)
	checkForbidden(t, sa.post(t, bindings, obj{"metadata": obj{"name": "secrets"}, "roleRef": roleRef("Role", "secrets"), "subjects": []any{obj{"kind": "User", "name": "x"}}}),
		`rolebindings.rbac.authorization.k8s.io "secrets" is forbidden: user "`+user+`" (groups=`+groups+`) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`,
		obj{"name": "secrets", "group": "rbac.authorization.k8s.io", "kind": "rolebindings"})
	checkStatus(t, sa.post(t, bindings, obj{"metadata": obj{"name": "nope"}, "roleRef": roleRef("Role", "nope"), "subjects": []any{obj{"kind": "User", "name": "x"}}}),
		http.StatusNotFound, "NotFound", `rolebindings.rbac.authorization.k8s.io "nope" not found`)
	// What it holds it may bind.
	expect(t, sa.post(t, bindings, obj{"metadata": obj{"name": "held"}, "roleRef": roleRef("Role", "held"), "subjects": []any{obj{"kind": "User", "name": "x"}}}), http.StatusCreated)

	// escalate on roles, bind on the "secrets" role: both go through.
	expect(t, e.post(t, roles, obj{"metadata": obj{"name": "escalator"}, "rules": []any{
		rule(list("escalate"), list("rbac.authorization.k8s.io"), list("roles")),
		rule(list("bind"), list("rbac.authorization.k8s.io"), list("roles"), "secrets"),
	}}), http.StatusCreated)
	expect(t, e.post(t, bindings, obj{"metadata": obj{"name": "escalator"}, "roleRef": roleRef("Role", "escalator"),
		"subjects": []any{saSubject(ns, "granter")}}), http.StatusCreated)
	allowedSoon(t, e, "the escalate verb to apply", func() *response { return sa.post(t, roles, more) })
	allowedSoon(t, e, "the bind verb to apply", func() *response {
		return sa.post(t, bindings, obj{"metadata": obj{"name": "secrets"}, "roleRef": roleRef("Role", "secrets"), "subjects": []any{obj{"kind": "User", "name": "x"}}})
	})

	// An aggregationRule needs every right.
	name := "kapi-conformance-esc-" + randomSuffix()
	rbacCreate(t, e, "clusterroles", obj{"metadata": obj{"name": name}, "rules": []any{
		rule(list("create"), list("rbac.authorization.k8s.io"), list("clusterroles")),
	}})
	rbacCreate(t, e, "clusterrolebindings", obj{"metadata": obj{"name": name}, "roleRef": roleRef("ClusterRole", name), "subjects": []any{saSubject(ns, "granter")}})
	aggregated := obj{"metadata": obj{"name": name + "-agg"}, "aggregationRule": obj{"clusterRoleSelectors": []any{obj{"matchLabels": obj{"x": "y"}}}}}
	poll(t, e.within(30*time.Second), "the cluster role binding to apply", func() bool {
		return strings.Contains(string(sa.post(t, rbacAPI+"clusterroles", aggregated).Body), "aggregationRule")
	})
	checkForbidden(t, sa.post(t, rbacAPI+"clusterroles", aggregated),
		`clusterroles.rbac.authorization.k8s.io "`+name+`-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`,
		obj{"name": name + "-agg", "group": "rbac.authorization.k8s.io", "kind": "clusterroles"})
}

// TestRBACBootstrapPolicy checks the roles and bindings every v1.37
// cluster starts with: cluster-admin for system:masters, the aggregated
// admin, edit and view, discovery and health for everyone.
func TestRBACBootstrapPolicy(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	get := func(resource, name string) obj {
		t.Helper()
		o := expect(t, e.get(t, rbacAPI+resource+"/"+name), http.StatusOK)
		if str(o, "metadata", "labels", "kubernetes.io/bootstrapping") != "rbac-defaults" || str(o, "metadata", "annotations", "rbac.authorization.kubernetes.io/autoupdate") != "true" {
			t.Errorf("%s %s: metadata %s", resource, name, compact(o["metadata"]))
		}
		return o
	}
	checkRules := func(name string, want []any) {
		t.Helper()
		if got := get("clusterroles", name)["rules"]; !reflect.DeepEqual(got, want) {
			t.Errorf("clusterrole %s: rules %s, want %s", name, compact(got), compact(want))
		}
	}
	checkRules("cluster-admin", []any{
		obj{"verbs": list("*"), "apiGroups": list("*"), "resources": list("*")},
		obj{"verbs": list("*"), "nonResourceURLs": list("*")},
	})
	checkRules("system:discovery", []any{
		obj{"verbs": list("get"), "nonResourceURLs": list("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/")},
	})
	checkRules("system:public-info-viewer", []any{
		obj{"verbs": list("get"), "nonResourceURLs": list("/healthz", "/livez", "/readyz", "/version", "/version/")},
	})
	checkRules("system:basic-user", []any{
		obj{"verbs": list("create"), "apiGroups": list("authorization.k8s.io"), "resources": list("selfsubjectaccessreviews", "selfsubjectrulesreviews")},
		obj{"verbs": list("create"), "apiGroups": list("authentication.k8s.io"), "resources": list("selfsubjectreviews")},
	})
	for _, name := range []string{"admin", "edit", "view"} {
		r := get("clusterroles", name)
		if rules, _ := r["rules"].([]any); len(rules) < 10 {
			t.Errorf("clusterrole %s: %d rules aggregated", name, len(rules))
		}
		if _, ok := r["aggregationRule"]; !ok {
			t.Errorf("clusterrole %s: no aggregationRule", name)
		}
	}
	view := get("clusterroles", "view")
	if !slices.ContainsFunc(view["rules"].([]any), func(r any) bool {
		return reflect.DeepEqual(r, obj{"verbs": list("get", "list", "watch"), "apiGroups": list("apps"), "resources": list("controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status")})
	}) {
		t.Errorf("view lacks its apps rule: %s", compact(view["rules"]))
	}
	for name, subjects := range map[string][]any{
		"cluster-admin":             {obj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}},
		"system:discovery":          {obj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"}},
		"system:basic-user":         {obj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"}},
		"system:public-info-viewer": {obj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"}, obj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:unauthenticated"}},
	} {
		b := get("clusterrolebindings", name)
		if !reflect.DeepEqual(b["subjects"], subjects) || !reflect.DeepEqual(b["roleRef"], roleRef("ClusterRole", name)) {
			t.Errorf("clusterrolebinding %s: %s", name, compact(b))
		}
	}
	// A Role and RoleBinding of kube-system.
	o := expect(t, e.get(t, rbacAPI+"namespaces/kube-system/rolebindings/system:controller:bootstrap-signer"), http.StatusOK)
	if !reflect.DeepEqual(o["roleRef"], roleRef("Role", "system:controller:bootstrap-signer")) {
		t.Errorf("kube-system's bootstrap-signer binding: %s", compact(o))
	}
	// Anonymous requests may read /version and /healthz.
	anon := e.as("")
	for _, p := range []string{"/version", "/healthz"} {
		if r := anon.get(t, p); r.Code != http.StatusOK {
			t.Errorf("anonymous GET %s: %d", p, r.Code)
		}
	}
}
