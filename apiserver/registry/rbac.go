package registry

import (
	"strconv"
	"strings"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
)

// rbac.authorization.k8s.io/v1: roles, cluster roles and their bindings,
// stored and validated as kube-apiserver v1.37 does. Nothing here enforces
// them (authorization is the server's, not the registry's), and a cluster
// role's aggregationRule is accepted as is: kube-controller-manager's
// aggregation controller, which fills in its rules, is not part of kapi.

// rbacGroup is the API group of RBAC, the only one a binding's roleRef and
// a User or Group subject may name.
const rbacGroup = "rbac.authorization.k8s.io"

// The subject kinds of a binding.
const (
	subjectServiceAccount = "ServiceAccount"
	subjectUser           = "User"
	subjectGroup          = "Group"
)

func rbacKinds(Options, services) []*Resource {
	meta := MetaRules{Name: NameIsPathSegment, Kube: true, NewFirst: true}
	return []*Resource{
		kind[rbacv1.Role](rbacGroup, "v1", "roles", Resource{Meta: meta,
			Validate: validateRole}),
		kind[rbacv1.ClusterRole](rbacGroup, "v1", "clusterroles", Resource{Meta: meta, Validate: validateClusterRole}),
		kind[rbacv1.RoleBinding](rbacGroup, "v1", "rolebindings", Resource{Meta: meta,
			Default: defaultRoleBinding, PrepareForCreate: defaultRoleBinding, PrepareForUpdate: func(o, _ Object) { defaultRoleBinding(o) },
			Validate: validateRoleBinding, Printer: bindingPrinter("roleBinding",
				"roleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
				func(o Object) (rbacv1.RoleRef, []rbacv1.Subject) {
					b := o.(*rbacv1.RoleBinding)
					return b.RoleRef, b.Subjects
				})}),
		kind[rbacv1.ClusterRoleBinding](rbacGroup, "v1", "clusterrolebindings", Resource{Meta: meta,
			Default: defaultClusterRoleBinding, PrepareForCreate: defaultClusterRoleBinding, PrepareForUpdate: func(o, _ Object) { defaultClusterRoleBinding(o) },
			Validate: validateClusterRoleBinding, Printer: bindingPrinter("clusterRoleBinding",
				"roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
				func(o Object) (rbacv1.RoleRef, []rbacv1.Subject) {
					b := o.(*rbacv1.ClusterRoleBinding)
					return b.RoleRef, b.Subjects
				})}),
	}
}

// defaultBinding fills in the API groups a binding may leave out: its
// roleRef's, and its User and Group subjects' (all RBAC's).
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacGroup
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == subjectUser || s.Kind == subjectGroup) {
			s.APIGroup = rbacGroup
		}
	}
}

func defaultRoleBinding(o Object) {
	b := o.(*rbacv1.RoleBinding)
	defaultBinding(&b.RoleRef, b.Subjects)
}

func defaultClusterRoleBinding(o Object) {
	b := o.(*rbacv1.ClusterRoleBinding)
	defaultBinding(&b.RoleRef, b.Subjects)
}

// policyRuleErrors checks a role's rules as kube-apiserver v1.37 does: a
// rule is about non-resource URLs (never in a namespaced role, never with
// resources) or about resources (with API groups and resources). The
// required verbs come apart (required), as v1.37's declarative validation
// reports them after the other checks.
func policyRuleErrors(rules []rbacv1.PolicyRule, namespaced bool) (errs, required metav1.FieldErrors) {
	for i, r := range rules {
		path := "rules[" + strconv.Itoa(i) + "]"
		if len(r.Verbs) == 0 {
			required = append(required, metav1.FieldRequired(path+".verbs", ""))
		}
		if len(r.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, metav1.FieldInvalid(path+".nonResourceURLs", r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
				errs = append(errs, metav1.FieldInvalid(path+".nonResourceURLs", r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(r.APIGroups) == 0 {
			errs = append(errs, metav1.FieldRequired(path+".apiGroups", "resource rules must supply at least one api group"))
		}
		if len(r.Resources) == 0 {
			errs = append(errs, metav1.FieldRequired(path+".resources", "resource rules must supply at least one resource"))
		}
	}
	return errs, required
}

func validateRole(o, _ Object) metav1.FieldErrors {
	errs, required := policyRuleErrors(o.(*rbacv1.Role).Rules, true)
	return append(errs, required...)
}

// validateClusterRole checks a cluster role's rules and the label
// selectors of its aggregationRule.
func validateClusterRole(o, _ Object) metav1.FieldErrors {
	r := o.(*rbacv1.ClusterRole)
	errs, required := policyRuleErrors(r.Rules, false)
	if r.AggregationRule != nil {
		if len(r.AggregationRule.ClusterRoleSelectors) == 0 {
			errs = append(errs, metav1.FieldRequired("aggregationRule.clusterRoleSelectors", "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		for i, sel := range r.AggregationRule.ClusterRoleSelectors {
			path := "aggregationRule.clusterRoleSelectors[" + strconv.Itoa(i) + "]"
			sErrs := labelSelectorErrors(&sel, path)
			errs = append(errs, sErrs...)
			if len(sErrs) > 0 {
				errs = append(errs, metav1.FieldInvalid(path, nil, "invalid label selector."))
			}
		}
	}
	return append(errs, required...)
}

// validateBinding checks a binding's roleRef (kinds lists the kinds it may
// name) and subjects, in kube-apiserver v1.37's order: its own checks, then
// the required names its declarative validation adds (subjects' first,
// then the roleRef's, as the fields are declared).
func validateRBACBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool, kinds []string) metav1.FieldErrors {
	var errs, required metav1.FieldErrors
	if ref.APIGroup != rbacGroup {
		errs = append(errs, metav1.FieldNotSupported("roleRef.apiGroup", ref.APIGroup, []string{rbacGroup}))
	}
	kindOK := false
	for _, k := range kinds {
		kindOK = kindOK || ref.Kind == k
	}
	if !kindOK {
		errs = append(errs, metav1.FieldNotSupported("roleRef.kind", ref.Kind, kinds))
	}
	if ref.Name != "" {
		for _, msg := range ValidatePathSegment(ref.Name) {
			errs = append(errs, metav1.FieldInvalid("roleRef.name", ref.Name, msg))
		}
	}
	for i, s := range subjects {
		path := "subjects[" + strconv.Itoa(i) + "]"
		if s.Name == "" {
			required = append(required, metav1.FieldRequired(path+".name", ""))
		}
		switch s.Kind {
		case subjectServiceAccount:
			if s.Name != "" {
				for _, msg := range ValidateDNS1123Subdomain(s.Name) {
					errs = append(errs, metav1.FieldInvalid(path+".name", s.Name, msg))
				}
			}
			if s.APIGroup != "" {
				errs = append(errs, metav1.FieldNotSupported(path+".apiGroup", s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, metav1.FieldRequired(path+".namespace", ""))
			}
		case subjectUser, subjectGroup:
			if s.APIGroup != rbacGroup {
				errs = append(errs, metav1.FieldNotSupported(path+".apiGroup", s.APIGroup, []string{rbacGroup}))
			}
		default:
			errs = append(errs, metav1.FieldNotSupported(path+".kind", s.Kind, []string{subjectServiceAccount, subjectUser, subjectGroup}))
		}
	}
	if ref.Name == "" {
		required = append(required, metav1.FieldRequired("roleRef.name", ""))
	}
	return append(errs, required...)
}

// roleRefImmutable is the error of an update that changes a binding's
// roleRef; kube-apiserver shows the value with the Go field names of its
// internal type.
func roleRefImmutable(ref, old rbacv1.RoleRef) metav1.FieldErrors {
	if ref == old {
		return nil
	}
	shown := struct{ APIGroup, Kind, Name string }{ref.APIGroup, ref.Kind, ref.Name}
	return metav1.FieldErrors{metav1.FieldInvalid("roleRef", shown, "field is immutable")}
}

func validateRoleBinding(o, old Object) metav1.FieldErrors {
	b := o.(*rbacv1.RoleBinding)
	errs := validateRBACBinding(b.RoleRef, b.Subjects, true, []string{"Role", "ClusterRole"})
	if old != nil {
		errs = append(errs, roleRefImmutable(b.RoleRef, old.(*rbacv1.RoleBinding).RoleRef)...)
	}
	return errs
}

func validateClusterRoleBinding(o, old Object) metav1.FieldErrors {
	b := o.(*rbacv1.ClusterRoleBinding)
	errs := validateRBACBinding(b.RoleRef, b.Subjects, false, []string{"ClusterRole"})
	if old != nil {
		errs = append(errs, roleRefImmutable(b.RoleRef, old.(*rbacv1.ClusterRoleBinding).RoleRef)...)
	}
	return errs
}

// bindingPrinter prints a binding as kube-apiserver does: its role as
// Kind/name, and (wide) its users, groups and service accounts
// (namespace/name). what names the kind in the column descriptions.
func bindingPrinter(what, roleDesc string, get func(Object) (rbacv1.RoleRef, []rbacv1.Subject)) *Printer {
	return &Printer{
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Role", roleDesc),
			ageColumn(),
			wideCol("Users", "Users in the "+what),
			wideCol("Groups", "Groups in the "+what),
			wideCol("ServiceAccounts", "ServiceAccounts in the "+what),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			ref, subjects := get(o)
			var users, groups, sas []string
			for _, s := range subjects {
				switch s.Kind {
				case subjectUser:
					users = append(users, s.Name)
				case subjectGroup:
					groups = append(groups, s.Name)
				case subjectServiceAccount:
					sas = append(sas, s.Namespace+"/"+s.Name)
				}
			}
			return []any{o.GetName(), ref.Kind + "/" + ref.Name, Age(o.GetCreationTimestamp(), now),
				strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}, nil
		},
	}
}
