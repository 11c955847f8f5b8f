package registry

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	"github.com/kapi-dev/kapi/selector"
)

// policy/v1 PodDisruptionBudgets, checked as kube-apiserver v1.37 does,
// and the arithmetic of a budget that the pods/eviction subresource and
// the disruption controller of a cluster apply (DisruptionStatus,
// CheckEviction).

// policyKinds are policy/v1 PodDisruptionBudgets.
func policyKinds(Options, services) []*Resource {
	return []*Resource{
		kind[policyv1.PodDisruptionBudget]("policy", "v1", "poddisruptionbudgets", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Validate: validatePodDisruptionBudget, PrepareForCreate: ResetStatus,
			Printer: pdbPrinter}),
	}
}

// unhealthyPodEvictionPolicies are the supported values of
// spec.unhealthyPodEvictionPolicy, sorted.
var unhealthyPodEvictionPolicies = []string{"AlwaysAllow", "IfHealthyBudget"}

// validatePodDisruptionBudget checks that a budget sets at most one of
// minAvailable and maxUnavailable, each a non-negative integer or a
// percentage up to 100%, its selector and its unhealthy pod eviction
// policy.
func validatePodDisruptionBudget(o, _ Object) metav1.FieldErrors {
	s := &o.(*policyv1.PodDisruptionBudget).Spec
	var errs metav1.FieldErrors
	if s.MinAvailable != nil && s.MaxUnavailable != nil {
		errs = append(errs, metav1.FieldInvalid("spec", goDump{s}, "minAvailable and maxUnavailable cannot be both set"))
	}
	if s.MinAvailable != nil {
		errs = append(errs, validateIntOrPercent(*s.MinAvailable, "spec.minAvailable")...)
	}
	if s.MaxUnavailable != nil {
		errs = append(errs, validateIntOrPercent(*s.MaxUnavailable, "spec.maxUnavailable")...)
	}
	errs = append(errs, labelSelectorErrors(s.Selector, "spec.selector")...)
	if p := s.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		errs = append(errs, metav1.FieldNotSupported("spec.unhealthyPodEvictionPolicy", string(*p), unhealthyPodEvictionPolicies))
	}
	return errs
}

var percentRE = regexp.MustCompile(`^[0-9]+%$`)

// intOrStringValue is v as a validation message shows it: a number, or a
// quoted string.
func intOrStringValue(v intstr.IntOrString) any {
	if v.Type == intstr.String {
		return v.StrVal
	}
	return int64(v.IntVal)
}

// validateIntOrPercent checks a count that is a non-negative integer or a
// percentage of at most 100%.
func validateIntOrPercent(v intstr.IntOrString, path string) metav1.FieldErrors {
	if v.Type == intstr.Int {
		return validateNonNegative(path, int64(v.IntVal))
	}
	if !percentRE.MatchString(v.StrVal) {
		return metav1.FieldErrors{metav1.FieldInvalid(path, v.StrVal,
			regexMessage("a valid percent string must be a numeric string followed by an ending '%'", "[0-9]+%", "1%", "93%"))}
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%")); err != nil || n > 100 {
		return metav1.FieldErrors{metav1.FieldInvalid(path, intOrStringValue(v), "must not be greater than 100%")}
	}
	return nil
}

var pdbPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Min Available", "The minimum number of pods that must be available."),
		col("Max Unavailable", "The maximum number of pods that may be unavailable."),
		intCol("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		p := o.(*policyv1.PodDisruptionBudget)
		minAvailable, maxUnavailable := "N/A", "N/A"
		if p.Spec.MinAvailable != nil {
			minAvailable = p.Spec.MinAvailable.String()
		}
		if p.Spec.MaxUnavailable != nil {
			maxUnavailable = p.Spec.MaxUnavailable.String()
		}
		return []any{p.Name, minAvailable, maxUnavailable, int64(p.Status.DisruptionsAllowed), Age(p.CreationTimestamp, now)}, nil
	},
}

// DisruptionStatus computes the status a cluster's disruption controller
// gives budget, for the pods of its namespace that it selects: how many
// are expected (the selected pods, as kapi runs no workload controllers
// whose scale would say), how many must stay healthy, how many are
// (Running and Ready, not being deleted), and so how many may be
// disrupted now. It keeps the pods the budget records as disrupted and
// marks the status as observing the budget's generation.
func DisruptionStatus(budget *policyv1.PodDisruptionBudget, pods []*corev1.Pod) policyv1.PodDisruptionBudgetStatus {
	sel, err := selector.FromLabelSelector(budget.Spec.Selector)
	var expected, healthy int32
	if err == nil && budget.Spec.Selector != nil {
		for _, p := range pods {
			if p.Namespace != budget.Namespace || !sel.Matches(selector.Set(p.Labels)) {
				continue
			}
			expected++
			if p.DeletionTimestamp == nil && podReady(p) {
				healthy++
			}
		}
	}
	var desired int32
	switch {
	case budget.Spec.MinAvailable != nil:
		n, err := budget.Spec.MinAvailable.ScaledValue(int(expected), true)
		if err == nil {
			desired = int32(n)
		}
	case budget.Spec.MaxUnavailable != nil:
		n, err := budget.Spec.MaxUnavailable.ScaledValue(int(expected), true)
		if err == nil {
			desired = max(expected-int32(n), 0)
		}
	}
	st := policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: budget.Generation,
		DisruptedPods:      budget.Status.DisruptedPods,
		DisruptionsAllowed: max(healthy-desired, 0),
		CurrentHealthy:     healthy,
		DesiredHealthy:     desired,
		ExpectedPods:       expected,
		Conditions:         budget.Status.Conditions,
	}
	return st
}

// podReady reports whether a pod is Running with its Ready condition True.
func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// CheckEviction decides whether budget lets pod podName be evicted at now,
// as kube-apiserver's eviction subresource does: a budget whose status is
// older than its spec, or that allows no disruption, refuses with 429
// TooManyRequests and a DisruptionBudget cause; a negative allowance is
// 403 Forbidden. When it allows the eviction, it takes one disruption
// from budget's status and records the pod as disrupted at now, and
// returns nil: the caller writes budget's status back (with its
// resourceVersion, so that two evictions cannot spend the same
// disruption) before deleting the pod.
func CheckEviction(budget *policyv1.PodDisruptionBudget, podName string, now time.Time) *metav1.Status {
	const refused = "Cannot evict pod as it would violate the pod's disruption budget."
	st := &budget.Status
	if st.ObservedGeneration < budget.Generation {
		return tooManyRequestsWithCause(refused, fmt.Sprintf("The disruption budget %s is still being processed by the server.", budget.Name))
	}
	if st.DisruptionsAllowed < 0 {
		return metav1.NewForbidden(metav1.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, budget.Name,
			fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if st.DisruptionsAllowed == 0 {
		return tooManyRequestsWithCause(refused, fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently",
			budget.Name, st.DesiredHealthy, st.CurrentHealthy))
	}
	st.DisruptionsAllowed--
	if st.DisruptedPods == nil {
		st.DisruptedPods = map[string]metav1.Time{}
	}
	st.DisruptedPods[podName] = metav1.NewTime(now)
	return nil
}

// tooManyRequestsWithCause is a 429 with a DisruptionBudget cause.
func tooManyRequestsWithCause(message, cause string) *metav1.Status {
	s := metav1.NewTooManyRequests(message, 0)
	if s.Details == nil {
		s.Details = &metav1.StatusDetails{}
	}
	s.Details.Causes = append(s.Details.Causes, metav1.StatusCause{Type: "DisruptionBudget", Message: cause})
	return s
}
