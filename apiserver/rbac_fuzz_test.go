package apiserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
)

// FuzzRequestAttributes: any method and request target resolve to
// attributes, and to a 403 body, without a panic. (Empty segments are
// kept, as kube-apiserver's resolver keeps them: /api///0 is a resource
// request of no version and no resource.)
func FuzzRequestAttributes(f *testing.F) {
	for _, s := range []string{"/api/v1/namespaces/n/pods/p/log", "/apis/apps/v1/watch/namespaces/n/deployments",
		"/api/v1/namespaces/n/configmaps?fieldSelector=metadata.name%3Dx", "/api/v1/proxy/nodes/n/x", "/apis", "//api//v1//", "/api/v1/watch", "/api/v1/namespaces"} {
		f.Add(http.MethodGet, s)
		f.Add(http.MethodDelete, s)
	}
	f.Fuzz(func(t *testing.T, method, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		r := &http.Request{Method: method, URL: u}
		a := requestAttributes(r, User{Name: "u"})
		if st := forbiddenStatus(a, ""); st.Code != http.StatusForbidden {
			t.Errorf("%s %s: the 403 of %+v is %d", method, target, a, st.Code)
		}
	})
}

// FuzzRBACRules: rule matching and the escalation check's coverage take
// any rules and attributes without a panic; a rule covers its own rights
// (no escalation in granting what one holds), and allows what it covers.
func FuzzRBACRules(f *testing.F) {
	f.Add(`{"verbs":["get"],"apiGroups":[""],"resources":["pods/log","*/scale"],"resourceNames":["a"]}`, "get", "", "pods", "log", "a", "/x")
	f.Add(`{"verbs":["*"],"nonResourceURLs":["/logs/*","*"]}`, "get", "apps", "deployments", "", "", "/logs/a")
	f.Fuzz(func(t *testing.T, ruleJSON, verb, group, resource, sub, name, path string) {
		var rule rbacv1.PolicyRule
		if json.Unmarshal([]byte(ruleJSON), &rule) != nil {
			return
		}
		if len(rule.Verbs)*(len(rule.APIGroups)*len(rule.Resources)*max(1, len(rule.ResourceNames))+len(rule.NonResourceURLs)) > 10000 {
			return // the breakdown of a huge rule is slow, not wrong
		}
		a := Attributes{Verb: verb, ResourceRequest: path == "", APIGroup: group, Resource: resource, Subresource: sub, Name: name, Path: path}
		allowed := ruleAllows(&a, &rule)
		if missing := uncoveredRules([]rbacv1.PolicyRule{rule}, []rbacv1.PolicyRule{rule}); len(missing) > 0 {
			t.Errorf("%s does not cover itself: %v", ruleJSON, missing)
		}
		// The single right a describes, when the rule covers it, is allowed.
		var right rbacv1.PolicyRule
		if a.ResourceRequest {
			res := resource
			if sub != "" {
				res += "/" + sub
			}
			right = rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{group}, Resources: []string{res}}
			if name != "" {
				right.ResourceNames = []string{name}
			}
		} else {
			right = rbacv1.PolicyRule{Verbs: []string{verb}, NonResourceURLs: []string{path}}
		}
		if ruleCovers(&rule, &right) && !allowed && verb != "*" && group != "*" && resource != "*" && name != "" && !strings.Contains(resource+sub, "/") {
			t.Errorf("%s covers %+v but does not allow %+v", ruleJSON, right, a)
		}
		_ = compactString(rule)
		_ = compactRules([]rbacv1.PolicyRule{rule, rule})
	})
}
