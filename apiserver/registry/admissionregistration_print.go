package registry

import (
	"sort"
	"strings"
	"time"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The Tables of admissionregistration.k8s.io/v1, as kube-apiserver v1.37.2
// prints them (testdata/golden-1.37/kinds/table-admissionregistration.k8s.io-*).

var validatingWebhookConfigurationPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*admissionv1.ValidatingWebhookConfiguration)
		return []any{c.Name, int64(len(c.Webhooks)), Age(c.CreationTimestamp, now)}, nil
	},
}

var mutatingWebhookConfigurationPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*admissionv1.MutatingWebhookConfiguration)
		return []any{c.Name, int64(len(c.Webhooks)), Age(c.CreationTimestamp, now)}, nil
	},
}

var validatingAdmissionPolicyPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		p := o.(*admissionv1.ValidatingAdmissionPolicy)
		return []any{p.Name, int64(len(p.Spec.Validations)), paramKindCell(p.Spec.ParamKind), Age(p.CreationTimestamp, now)}, nil
	},
}

var validatingAdmissionPolicyBindingPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		b := o.(*admissionv1.ValidatingAdmissionPolicyBinding)
		return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), Age(b.CreationTimestamp, now)}, nil
	},
}

var mutatingAdmissionPolicyPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Mutations", Type: "integer", Description: "Mutation indicates the number of mutations rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		p := o.(*admissionv1.MutatingAdmissionPolicy)
		return []any{p.Name, int64(len(p.Spec.Mutations)), paramKindCell(p.Spec.ParamKind), Age(p.CreationTimestamp, now)}, nil
	},
}

var mutatingAdmissionPolicyBindingPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		b := o.(*admissionv1.MutatingAdmissionPolicyBinding)
		return []any{b.Name, b.Spec.PolicyName, paramRefCell(b.Spec.ParamRef), Age(b.CreationTimestamp, now)}, nil
	},
}

// paramKindCell is "apiVersion/kind", or <unset>.
func paramKindCell(k *admissionv1.ParamKind) string {
	if k == nil {
		return "<unset>"
	}
	return k.APIVersion + "/" + k.Kind
}

// paramRefCell is "namespace/name" (or "*/name" for any namespace), the
// selector as Go's generated String method prints it, or <unset>.
func paramRefCell(r *admissionv1.ParamRef) string {
	switch {
	case r == nil:
		return "<unset>"
	case r.Name != "":
		ns := r.Namespace
		if ns == "" {
			ns = "*"
		}
		return ns + "/" + r.Name
	case r.Selector != nil:
		return gogoLabelSelector(r.Selector)
	}
	return "<unset>"
}

// gogoLabelSelector prints a label selector as the String method gogo
// protobuf generates for Kubernetes' types does:
// &LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{},}.
func gogoLabelSelector(s *metav1.LabelSelector) string {
	var b strings.Builder
	b.WriteString("&LabelSelector{MatchLabels:map[string]string{")
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k + ": " + s.MatchLabels[k] + ",")
	}
	b.WriteString("},MatchExpressions:[]LabelSelectorRequirement{")
	for _, e := range s.MatchExpressions {
		b.WriteString("LabelSelectorRequirement{Key:" + e.Key + ",Operator:" + string(e.Operator) + ",Values:[" + strings.Join(e.Values, " ") + "],},")
	}
	b.WriteString("},}")
	return b.String()
}
