package apiserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// RBAC's escalation prevention, as kube-apiserver's RBAC storage does it
// on every create and update a user makes (the server's own writes are
// not checked: they are made as system:masters would):
//
//   - a Role or ClusterRole may grant only what its writer holds, unless
//     the writer may "escalate" it; an aggregationRule needs every right;
//   - a RoleBinding or ClusterRoleBinding may refer only to a role whose
//     rules its writer holds, unless the writer may "bind" the role.
//
// Members of system:masters skip the checks; with AlwaysAllow every user
// may escalate and bind, so nothing is refused. What the writer holds is
// what the authorizer's RulesFor lists in the object's namespace.

// checkEscalation refuses a write of obj (old is the stored object of an
// update, nil on a create) that would grant more than its writer holds.
func (s *Server) checkEscalation(ctx context.Context, res *registry.Resource, obj, old registry.Object, o *writeOptions) *metav1.Status {
	if o.User == nil || res.Group != rbacGroup || o.Subresource != "" || slices.Contains(o.User.Groups, mastersGroup) {
		return nil
	}
	if old != nil && onlyGCFieldsChange(obj, old) {
		return nil
	}
	user := *o.User
	ns := obj.GetNamespace()
	name := obj.GetName()
	allowed := func(verb, resource, resourceName string) bool {
		d, _, _ := s.authorizer().Authorize(ctx, Attributes{User: user, Verb: verb, ResourceRequest: true,
			APIGroup: rbacGroup, Resource: resource, Namespace: ns, Name: resourceName})
		return d == DecisionAllow
	}
	// The name of a create's request is none: kube-apiserver authorizes
	// the verb with the request's attributes.
	reqName := name
	if old == nil {
		reqName = ""
	}
	var rules []rbacv1.PolicyRule
	switch b := obj.(type) {
	case *rbacv1.Role:
		if allowed("escalate", res.Resource, reqName) {
			return nil
		}
		rules = b.Rules
	case *rbacv1.ClusterRole:
		if allowed("escalate", res.Resource, reqName) {
			return nil
		}
		if err := s.confirmNoEscalation(ctx, user, ns, b.Rules); err != nil {
			return metav1.NewForbidden(res.GroupResource(), name, err)
		}
		if b.AggregationRule != nil {
			if s.confirmNoEscalation(ctx, user, ns, []rbacv1.PolicyRule{fullAuthority}) != nil {
				return metav1.NewForbidden(res.GroupResource(), name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
			}
		}
		return nil
	case *rbacv1.RoleBinding:
		if st := s.checkBinding(ctx, res, user, ns, name, b.RoleRef, allowed); st != nil {
			return st
		}
		return nil
	case *rbacv1.ClusterRoleBinding:
		return s.checkBinding(ctx, res, user, "", name, b.RoleRef, allowed)
	default:
		return nil
	}
	if err := s.confirmNoEscalation(ctx, user, ns, rules); err != nil {
		return metav1.NewForbidden(res.GroupResource(), name, err)
	}
	return nil
}

// fullAuthority is every right: what an aggregationRule needs.
var fullAuthority = rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}

// checkBinding refuses a binding of ref in ns by user unless user may
// bind the role or holds its rules. A missing role is 404 (named as the
// binding's resource, as kube-apiserver names it).
func (s *Server) checkBinding(ctx context.Context, res *registry.Resource, user User, ns, name string, ref rbacv1.RoleRef, allowed func(verb, resource, name string) bool) *metav1.Status {
	var resource string
	switch ref.Kind {
	case "ClusterRole":
		resource = "clusterroles"
	case "Role":
		resource = "roles"
	}
	if resource != "" {
		d, _, _ := s.authorizer().Authorize(ctx, Attributes{User: user, Verb: "bind", ResourceRequest: true,
			APIGroup: ref.APIGroup, Resource: resource, Namespace: ns, Name: ref.Name})
		if d == DecisionAllow {
			return nil
		}
	}
	rules, err := s.roleRefRules(ctx, ref, ns)
	if err != nil {
		if errors.Is(err, errRoleNotFound) {
			return metav1.NewNotFound(res.GroupResource(), ref.Name)
		}
		return metav1.NewForbidden(res.GroupResource(), name, err)
	}
	if err := s.confirmNoEscalation(ctx, user, ns, rules); err != nil {
		return metav1.NewForbidden(res.GroupResource(), name, err)
	}
	return nil
}

var errRoleNotFound = errors.New("role not found")

// roleRefRules reads the rules of the role a binding in ns refers to,
// from the store (the RBAC index lags it and exists only in RBAC mode).
func (s *Server) roleRefRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	var resource string
	switch ref.Kind {
	case "ClusterRole":
		resource, ns = "clusterroles", ""
	case "Role":
		resource = "roles"
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
	res := s.reg.Get(rbacGroup, "v1", resource)
	if res == nil {
		return nil, errRoleNotFound
	}
	obj, err := s.storeOf(res).Get(ctx, ns, ref.Name, storage.ReadOptions{})
	if err != nil {
		return nil, errRoleNotFound
	}
	switch r := obj.(type) {
	case *rbacv1.ClusterRole:
		return r.Rules, nil
	case *rbacv1.Role:
		return r.Rules, nil
	}
	return nil, errRoleNotFound
}

// confirmNoEscalation is nil when user holds, in namespace, every right
// rules grant; otherwise its error lists the rights missing as
// kube-apiserver's message does.
func (s *Server) confirmNoEscalation(ctx context.Context, user User, namespace string, rules []rbacv1.PolicyRule) error {
	rr, nr, _, err := s.authorizer().RulesFor(ctx, user, namespace)
	owner := make([]rbacv1.PolicyRule, 0, len(rr)+len(nr))
	for _, r := range rr {
		owner = append(owner, rbacv1.PolicyRule{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
	}
	for _, r := range nr {
		owner = append(owner, rbacv1.PolicyRule{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
	}
	missing := uncoveredRules(owner, rules)
	if len(missing) == 0 {
		return nil
	}
	descriptions := make([]string, 0, len(missing))
	for _, m := range compactRules(missing) {
		descriptions = append(descriptions, compactString(m))
	}
	slices.Sort(descriptions)
	descriptions = slices.Compact(descriptions)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", user.Name, user.Groups, strings.Join(descriptions, "\n"))
	if err != nil {
		msg += fmt.Sprintf("; resolution errors: [%v]", err)
	}
	return errors.New(msg)
}

// uncoveredRules splits rules into rights of one verb on one resource of
// one group (and one name), or one verb on one URL, and returns those no
// owner rule covers.
func uncoveredRules(owner, rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var missing []rbacv1.PolicyRule
	check := func(sub rbacv1.PolicyRule) {
		if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return ruleCovers(&o, &sub) }) {
			missing = append(missing, sub)
		}
	}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					if len(r.ResourceNames) == 0 {
						check(rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
						continue
					}
					for _, n := range r.ResourceNames {
						check(rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
					}
				}
			}
		}
		for _, u := range r.NonResourceURLs {
			for _, v := range r.Verbs {
				check(rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
			}
		}
	}
	return missing
}

// ruleCovers reports whether owner grants the single right sub.
func ruleCovers(owner, sub *rbacv1.PolicyRule) bool {
	if !starOrAll(owner.Verbs, sub.Verbs) || !starOrAll(owner.APIGroups, sub.APIGroups) {
		return false
	}
	for _, r := range sub.Resources {
		if slices.Contains(owner.Resources, "*") || slices.Contains(owner.Resources, r) {
			continue
		}
		_, sr, isSub := strings.Cut(r, "/")
		if !isSub || !slices.Contains(owner.Resources, "*/"+sr) {
			return false
		}
	}
	for _, u := range sub.NonResourceURLs {
		if !slices.ContainsFunc(owner.NonResourceURLs, func(o string) bool {
			return o == u || strings.HasSuffix(o, "*") && strings.HasPrefix(u, strings.TrimRight(o, "*"))
		}) {
			return false
		}
	}
	if len(owner.ResourceNames) == 0 {
		return true
	}
	return len(sub.ResourceNames) > 0 && allIn(owner.ResourceNames, sub.ResourceNames)
}

// starOrAll reports whether have holds "*" or every one of want.
func starOrAll(have, want []string) bool {
	return slices.Contains(have, "*") || allIn(have, want)
}

func allIn(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// compactRules merges the rights that differ only in their verb (one
// group, one resource, at most one name, nothing else) into one rule
// with all their verbs, in the order met, as kube-apiserver's message
// lists them.
func compactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type simple struct{ group, resource, name string }
	var out []rbacv1.PolicyRule
	merged := map[simple]int{} // index in out
	for _, r := range rules {
		if len(r.APIGroups) != 1 || len(r.Resources) != 1 || len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 {
			out = append(out, r)
			continue
		}
		k := simple{r.APIGroups[0], r.Resources[0], ""}
		if len(r.ResourceNames) == 1 {
			k.name = "/" + r.ResourceNames[0] // apart from the rule without a name
		}
		if i, ok := merged[k]; ok {
			out[i].Verbs = append(slices.Clip(out[i].Verbs), r.Verbs...)
			continue
		}
		merged[k] = len(out)
		out = append(out, r)
	}
	return out
}

// compactString describes a rule as kube-apiserver's escalation message.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// onlyGCFieldsChange reports whether an update of old to obj changes
// nothing but what the garbage collector writes (owner references and
// finalizers): kube-apiserver lets such updates through unchecked.
func onlyGCFieldsChange(obj, old registry.Object) bool {
	payload := func(o registry.Object) any {
		switch o := o.(type) {
		case *rbacv1.Role:
			return []any{o.Labels, o.Annotations, o.Rules}
		case *rbacv1.ClusterRole:
			return []any{o.Labels, o.Annotations, o.Rules, o.AggregationRule}
		case *rbacv1.RoleBinding:
			return []any{o.Labels, o.Annotations, o.Subjects, o.RoleRef}
		case *rbacv1.ClusterRoleBinding:
			return []any{o.Labels, o.Annotations, o.Subjects, o.RoleRef}
		}
		return o
	}
	return reflect.DeepEqual(payload(obj), payload(old))
}
