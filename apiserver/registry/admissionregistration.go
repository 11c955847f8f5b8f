package registry

import (
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// admissionregistration.k8s.io/v1: webhook configurations and admission
// policies with their bindings, stored, defaulted and validated as
// kube-apiserver v1.37.2 does (testdata/golden-1.37/kinds/
// *-admissionregistration.k8s.io-*). A ValidatingAdmissionPolicy's CEL
// expressions are compiled when it is written (admissionregistration_cel.go);
// the server enforces the policies (apiserver/policy*.go).

func admissionKinds(Options, services) []*Resource {
	const group = "admissionregistration.k8s.io"
	return []*Resource{
		kind[admissionv1.ValidatingWebhookConfiguration](group, "v1", "validatingwebhookconfigurations", Resource{Generation: true,
			// reflect.DeepEqual, as kube-apiserver's strategy, not
			// semantic equality: a body's `rules: []` is a change from the
			// stored webhook without rules.
			SameSpec: func(a, b Object) bool {
				return reflect.DeepEqual(a.(*admissionv1.ValidatingWebhookConfiguration).Webhooks, b.(*admissionv1.ValidatingWebhookConfiguration).Webhooks)
			},
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultValidatingWebhookConfiguration,
			PrepareForCreate: defaultValidatingWebhookConfiguration,
			PrepareForUpdate: func(o, _ Object) { defaultValidatingWebhookConfiguration(o) },
			Validate:         validateValidatingWebhookConfiguration, Printer: validatingWebhookConfigurationPrinter}),
		kind[admissionv1.MutatingWebhookConfiguration](group, "v1", "mutatingwebhookconfigurations", Resource{Generation: true,
			SameSpec: func(a, b Object) bool {
				return reflect.DeepEqual(a.(*admissionv1.MutatingWebhookConfiguration).Webhooks, b.(*admissionv1.MutatingWebhookConfiguration).Webhooks)
			},
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultMutatingWebhookConfiguration,
			PrepareForCreate: defaultMutatingWebhookConfiguration,
			PrepareForUpdate: func(o, _ Object) { defaultMutatingWebhookConfiguration(o) },
			Validate:         validateMutatingWebhookConfiguration, Printer: mutatingWebhookConfigurationPrinter}),
		kind[admissionv1.ValidatingAdmissionPolicy](group, "v1", "validatingadmissionpolicies", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultValidatingAdmissionPolicy,
			PrepareForCreate: func(o Object) {
				defaultValidatingAdmissionPolicy(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultValidatingAdmissionPolicy(o) },
			Validate:         validateValidatingAdmissionPolicy, Printer: validatingAdmissionPolicyPrinter}),
		kind[admissionv1.ValidatingAdmissionPolicyBinding](group, "v1", "validatingadmissionpolicybindings", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultValidatingAdmissionPolicyBinding,
			PrepareForCreate: defaultValidatingAdmissionPolicyBinding,
			PrepareForUpdate: func(o, _ Object) { defaultValidatingAdmissionPolicyBinding(o) },
			Validate:         validateValidatingAdmissionPolicyBinding, Printer: validatingAdmissionPolicyBindingPrinter}),
		kind[admissionv1.MutatingAdmissionPolicy](group, "v1", "mutatingadmissionpolicies", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultMutatingAdmissionPolicy,
			PrepareForCreate: defaultMutatingAdmissionPolicy,
			PrepareForUpdate: func(o, _ Object) { defaultMutatingAdmissionPolicy(o) },
			Validate:         validateMutatingAdmissionPolicy, Printer: mutatingAdmissionPolicyPrinter}),
		kind[admissionv1.MutatingAdmissionPolicyBinding](group, "v1", "mutatingadmissionpolicybindings", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultMutatingAdmissionPolicyBinding,
			PrepareForCreate: defaultMutatingAdmissionPolicyBinding,
			PrepareForUpdate: func(o, _ Object) { defaultMutatingAdmissionPolicyBinding(o) },
			Validate:         validateMutatingAdmissionPolicyBinding, Printer: mutatingAdmissionPolicyBindingPrinter}),
	}
}

// Defaults.

func setDefault[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

// defaultWebhook fills what a webhook of either kind leaves out: fail
// closed, equivalent matching, every namespace and object, 10 s, rules of
// any scope, and the service port 443.
func defaultWebhook(fp **admissionv1.FailurePolicyType, mp **admissionv1.MatchPolicyType, ns, obj **metav1.LabelSelector,
	timeout **int32, rules []admissionv1.RuleWithOperations, cc *admissionv1.WebhookClientConfig) {
	setDefault(fp, admissionv1.Fail)
	setDefault(mp, admissionv1.Equivalent)
	setDefault(ns, metav1.LabelSelector{})
	setDefault(obj, metav1.LabelSelector{})
	setDefault(timeout, 10)
	for i := range rules {
		setDefault(&rules[i].Scope, admissionv1.AllScopes)
	}
	if cc.Service != nil {
		setDefault(&cc.Service.Port, 443)
	}
}

func defaultValidatingWebhookConfiguration(o Object) {
	c := o.(*admissionv1.ValidatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
	}
}

func defaultMutatingWebhookConfiguration(o Object) {
	c := o.(*admissionv1.MutatingWebhookConfiguration)
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		defaultWebhook(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, w.Rules, &w.ClientConfig)
		setDefault(&w.ReinvocationPolicy, admissionv1.NeverReinvocationPolicy)
	}
}

// defaultMatchResources fills a policy's or binding's match: every
// namespace and object, equivalent matching, rules of any scope.
func defaultMatchResources(m *admissionv1.MatchResources) {
	if m == nil {
		return
	}
	setDefault(&m.NamespaceSelector, metav1.LabelSelector{})
	setDefault(&m.ObjectSelector, metav1.LabelSelector{})
	setDefault(&m.MatchPolicy, admissionv1.Equivalent)
	for i := range m.ResourceRules {
		setDefault(&m.ResourceRules[i].Scope, admissionv1.AllScopes)
	}
	for i := range m.ExcludeResourceRules {
		setDefault(&m.ExcludeResourceRules[i].Scope, admissionv1.AllScopes)
	}
}

func defaultValidatingAdmissionPolicy(o Object) {
	s := &o.(*admissionv1.ValidatingAdmissionPolicy).Spec
	setDefault(&s.FailurePolicy, admissionv1.Fail)
	defaultMatchResources(s.MatchConstraints)
}

func defaultMutatingAdmissionPolicy(o Object) {
	s := &o.(*admissionv1.MutatingAdmissionPolicy).Spec
	setDefault(&s.FailurePolicy, admissionv1.Fail)
	defaultMatchResources(s.MatchConstraints)
}

func defaultValidatingAdmissionPolicyBinding(o Object) {
	defaultMatchResources(o.(*admissionv1.ValidatingAdmissionPolicyBinding).Spec.MatchResources)
}

func defaultMutatingAdmissionPolicyBinding(o Object) {
	defaultMatchResources(o.(*admissionv1.MutatingAdmissionPolicyBinding).Spec.MatchResources)
}

// Validation.

var (
	failurePolicies = []string{"Fail", "Ignore"}
	matchPolicies   = []string{"Equivalent", "Exact"}
	sideEffects     = []string{"None", "NoneOnDryRun"}
	reinvocations   = []string{"IfNeeded", "Never"}
	operations      = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	scopes          = []string{"*", "Cluster", "Namespaced"}
)

// enumPtr reports an unsupported value of an optional enum.
func enumPtr[T ~string](p *T, path string, supported []string) metav1.FieldErrors {
	if p != nil && !slices.Contains(supported, string(*p)) {
		return metav1.FieldErrors{metav1.FieldNotSupported(path, string(*p), supported)}
	}
	return nil
}

// webhook is what the validation of both webhook kinds reads.
type webhook struct {
	name                    string
	clientConfig            admissionv1.WebhookClientConfig
	rules                   []admissionv1.RuleWithOperations
	failurePolicy           *admissionv1.FailurePolicyType
	matchPolicy             *admissionv1.MatchPolicyType
	sideEffects             *admissionv1.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	reinvocationPolicy      *admissionv1.ReinvocationPolicyType
	mutating                bool
}

func validateWebhooks(hooks []webhook) metav1.FieldErrors {
	var errs metav1.FieldErrors
	names := map[string]bool{}
	for i, w := range hooks {
		p := "webhooks[" + strconv.Itoa(i) + "]"
		if parts := strings.Split(w.name, "."); len(parts) < 3 {
			errs = append(errs, metav1.FieldInvalid(p+".name", w.name, "should be a domain with at least three segments separated by dots"))
		} else {
			for _, msg := range ValidateDNS1123Subdomain(w.name) {
				errs = append(errs, metav1.FieldInvalid(p+".name", w.name, msg))
			}
		}
		for j, r := range w.rules {
			errs = append(errs, validateRule(r, p+".rules["+strconv.Itoa(j)+"]")...)
		}
		errs = append(errs, enumPtr(w.failurePolicy, p+".failurePolicy", failurePolicies)...)
		errs = append(errs, enumPtr(w.matchPolicy, p+".matchPolicy", matchPolicies)...)
		if w.sideEffects == nil {
			errs = append(errs, metav1.FieldRequired(p+".sideEffects", "must specify one of None, NoneOnDryRun"))
		} else {
			errs = append(errs, enumPtr(w.sideEffects, p+".sideEffects", sideEffects)...)
		}
		if t := w.timeoutSeconds; t != nil && (*t < 1 || *t > 30) {
			errs = append(errs, metav1.FieldInvalid(p+".timeoutSeconds", *t, "the timeout value must be between 1 and 30 seconds"))
		}
		if w.mutating {
			errs = append(errs, enumPtr(w.reinvocationPolicy, p+".reinvocationPolicy", reinvocations)...)
		}
		errs = append(errs, validateClientConfig(w.clientConfig, p+".clientConfig")...)
		switch {
		case len(w.admissionReviewVersions) == 0:
			errs = append(errs, metav1.FieldRequired(p+".admissionReviewVersions", "must specify one of v1, v1beta1"))
		case !slices.Contains(w.admissionReviewVersions, "v1") && !slices.Contains(w.admissionReviewVersions, "v1beta1"):
			errs = append(errs, metav1.FieldInvalid(p+".admissionReviewVersions", w.admissionReviewVersions, "must include at least one of v1, v1beta1"))
		}
		if w.name != "" {
			if names[w.name] {
				errs = append(errs, metav1.FieldDuplicate(p+".name", w.name))
			}
			names[w.name] = true
		}
	}
	return errs
}

func validateRule(r admissionv1.RuleWithOperations, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if len(r.Operations) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".operations", ""))
	}
	for i, op := range r.Operations {
		if !slices.Contains(operations, string(op)) {
			errs = append(errs, metav1.FieldNotSupported(path+".operations["+strconv.Itoa(i)+"]", string(op), operations))
		}
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".apiGroups", ""))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".apiVersions", ""))
	}
	if len(r.Resources) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".resources", ""))
	}
	return append(errs, enumPtr(r.Scope, path+".scope", scopes)...)
}

func validateClientConfig(cc admissionv1.WebhookClientConfig, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, metav1.FieldRequired(path, "exactly one of url or service is required"))
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		switch {
		case err != nil:
			errs = append(errs, metav1.FieldInvalid(path+".url", *cc.URL, "must be a valid URL: "+err.Error()))
		case u.Scheme != "https":
			errs = append(errs, metav1.FieldInvalid(path+".url", u.Scheme, "'https' is the only allowed URL scheme; desired format: https://host[/path]"))
		case u.Host == "":
			errs = append(errs, metav1.FieldInvalid(path+".url", u.Host, "host must be specified"))
		}
	default:
		s := cc.Service
		if s.Name == "" {
			errs = append(errs, metav1.FieldRequired(path+".service.name", ""))
		}
		if s.Namespace == "" {
			errs = append(errs, metav1.FieldRequired(path+".service.namespace", ""))
		}
		if s.Port != nil && (*s.Port < 1 || *s.Port > 65535) {
			errs = append(errs, metav1.FieldInvalid(path+".service.port", *s.Port, "port is not valid: must be between 1 and 65535, inclusive"))
		}
	}
	return errs
}

func validateValidatingWebhookConfiguration(o, _ Object) metav1.FieldErrors {
	c := o.(*admissionv1.ValidatingWebhookConfiguration)
	hooks := make([]webhook, len(c.Webhooks))
	for i, w := range c.Webhooks {
		hooks[i] = webhook{name: w.Name, clientConfig: w.ClientConfig, rules: w.Rules, failurePolicy: w.FailurePolicy, matchPolicy: w.MatchPolicy,
			sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, admissionReviewVersions: w.AdmissionReviewVersions}
	}
	return validateWebhooks(hooks)
}

func validateMutatingWebhookConfiguration(o, _ Object) metav1.FieldErrors {
	c := o.(*admissionv1.MutatingWebhookConfiguration)
	hooks := make([]webhook, len(c.Webhooks))
	for i, w := range c.Webhooks {
		hooks[i] = webhook{name: w.Name, clientConfig: w.ClientConfig, rules: w.Rules, failurePolicy: w.FailurePolicy, matchPolicy: w.MatchPolicy,
			sideEffects: w.SideEffects, timeoutSeconds: w.TimeoutSeconds, admissionReviewVersions: w.AdmissionReviewVersions,
			reinvocationPolicy: w.ReinvocationPolicy, mutating: true}
	}
	return validateWebhooks(hooks)
}

// validateMatchConstraints checks a policy's spec.matchConstraints, which
// must list resource rules.
func validateMatchConstraints(m *admissionv1.MatchResources, path string) metav1.FieldErrors {
	if m == nil {
		return metav1.FieldErrors{metav1.FieldRequired(path, "")}
	}
	errs := validateMatchResources(m, path)
	if len(m.ResourceRules) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".resourceRules", ""))
	}
	return errs
}

func validateMatchResources(m *admissionv1.MatchResources, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if m.NamespaceSelector != nil {
		errs = append(errs, labelSelectorErrors(m.NamespaceSelector, path+".namespaceSelector")...)
	}
	if m.ObjectSelector != nil {
		errs = append(errs, labelSelectorErrors(m.ObjectSelector, path+".objectSelector")...)
	}
	errs = append(errs, enumPtr(m.MatchPolicy, path+".matchPolicy", matchPolicies)...)
	for i, r := range m.ResourceRules {
		errs = append(errs, validateRule(r.RuleWithOperations, path+".resourceRules["+strconv.Itoa(i)+"]")...)
	}
	for i, r := range m.ExcludeResourceRules {
		errs = append(errs, validateRule(r.RuleWithOperations, path+".excludeResourceRules["+strconv.Itoa(i)+"]")...)
	}
	return errs
}

func validateValidatingAdmissionPolicy(o, _ Object) metav1.FieldErrors {
	s := o.(*admissionv1.ValidatingAdmissionPolicy).Spec
	errs := enumPtr(s.FailurePolicy, "spec.failurePolicy", failurePolicies)
	errs = append(errs, validateMatchConstraints(s.MatchConstraints, "spec.matchConstraints")...)
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		errs = append(errs, metav1.FieldRequired("spec.validations", msg), metav1.FieldRequired("spec.auditAnnotations", msg))
	}
	for i, v := range s.Validations {
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, metav1.FieldRequired("spec.validations["+strconv.Itoa(i)+"].expression", "expression is not specified"))
		}
	}
	for i, a := range s.AuditAnnotations {
		p := "spec.auditAnnotations[" + strconv.Itoa(i) + "]"
		if a.Key == "" {
			errs = append(errs, metav1.FieldRequired(p+".key", ""))
		}
		if strings.TrimSpace(a.ValueExpression) == "" {
			errs = append(errs, metav1.FieldRequired(p+".valueExpression", "valueExpression is not specified"))
		}
	}
	return append(errs, policyExpressionErrors(&s)...)
}

var mutationPatchTypes = []string{"ApplyConfiguration", "JSONPatch"}

func validateMutatingAdmissionPolicy(o, _ Object) metav1.FieldErrors {
	s := o.(*admissionv1.MutatingAdmissionPolicy).Spec
	errs := enumPtr(s.FailurePolicy, "spec.failurePolicy", failurePolicies)
	errs = append(errs, validateMatchConstraints(s.MatchConstraints, "spec.matchConstraints")...)
	if len(s.Mutations) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.mutations", "mutations must contain at least one item"))
	}
	for i, m := range s.Mutations {
		p := "spec.mutations[" + strconv.Itoa(i) + "]"
		switch m.PatchType {
		case "":
			errs = append(errs, metav1.FieldRequired(p+".patchType", ""))
		case "ApplyConfiguration":
			if m.ApplyConfiguration == nil {
				errs = append(errs, metav1.FieldRequired(p+".applyConfiguration", "applyConfiguration is required when patchType is ApplyConfiguration"))
			}
		case "JSONPatch":
			if m.JSONPatch == nil {
				errs = append(errs, metav1.FieldRequired(p+".jsonPatch", "jsonPatch is required when patchType is JSONPatch"))
			}
		default:
			errs = append(errs, metav1.FieldNotSupported(p+".patchType", string(m.PatchType), mutationPatchTypes))
		}
	}
	if s.ReinvocationPolicy == "" {
		errs = append(errs, metav1.FieldRequired("spec.reinvocationPolicy", ""))
	} else {
		errs = append(errs, enumPtr(&s.ReinvocationPolicy, "spec.reinvocationPolicy", reinvocations)...)
	}
	return append(errs, mutatingExpressionErrors(&s)...)
}

var validationActions = []string{"Audit", "Deny", "Warn"}

// validateBinding checks what both binding kinds have: a policy name, a
// parameter reference and the resources they match.
func validateBinding(policy string, ref *admissionv1.ParamRef, match *admissionv1.MatchResources) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if policy == "" {
		errs = append(errs, metav1.FieldRequired("spec.policyName", ""))
	}
	if ref != nil {
		if ref.Name != "" && ref.Selector != nil {
			errs = append(errs, metav1.FieldForbidden("spec.paramRef.name", "name and selector are mutually exclusive"))
		}
		if ref.ParameterNotFoundAction == nil {
			errs = append(errs, metav1.FieldRequired("spec.paramRef.parameterNotFoundAction", ""))
		} else {
			errs = append(errs, enumPtr(ref.ParameterNotFoundAction, "spec.paramRef.parameterNotFoundAction", []string{"Allow", "Deny"})...)
		}
	}
	if match != nil {
		errs = append(errs, validateMatchResources(match, "spec.matchResources")...)
	}
	return errs
}

func validateValidatingAdmissionPolicyBinding(o, _ Object) metav1.FieldErrors {
	s := o.(*admissionv1.ValidatingAdmissionPolicyBinding).Spec
	errs := validateBinding(s.PolicyName, s.ParamRef, s.MatchResources)
	if len(s.ValidationActions) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.validationActions", ""))
	}
	seen := map[admissionv1.ValidationAction]bool{}
	for i, a := range s.ValidationActions {
		p := "spec.validationActions[" + strconv.Itoa(i) + "]"
		if seen[a] {
			errs = append(errs, metav1.FieldDuplicate(p, string(a)))
		}
		seen[a] = true
		if !slices.Contains(validationActions, string(a)) {
			errs = append(errs, metav1.FieldNotSupported(p, string(a), validationActions))
		}
	}
	if seen["Deny"] && seen["Warn"] {
		errs = append(errs, metav1.FieldInvalid("spec.validationActions", s.ValidationActions,
			"must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return errs
}

func validateMutatingAdmissionPolicyBinding(o, _ Object) metav1.FieldErrors {
	s := o.(*admissionv1.MutatingAdmissionPolicyBinding).Spec
	return validateBinding(s.PolicyName, s.ParamRef, s.MatchResources)
}
