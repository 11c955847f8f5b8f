package registry

import (
	"strconv"
	"strings"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
)

// scheduling.k8s.io/v1: PriorityClasses, defaulted and validated as
// kube-apiserver v1.37 does. The Priority admission plugin (a pod's
// priority from its class, the single global default, the protection of
// the system classes from deletion) is not part of this registry.

// HighestUserDefinablePriority is the largest value a PriorityClass not
// named system-* may have.
const HighestUserDefinablePriority = 1_000_000_000

// SystemPriorityClassPrefix starts the names reserved for the system's
// PriorityClasses.
const SystemPriorityClassPrefix = "system-"

// SystemPriorityClasses are the PriorityClasses kube-apiserver creates at
// start, with their values: the only ones whose names may start with
// SystemPriorityClassPrefix.
var SystemPriorityClasses = map[string]int32{
	"system-node-critical":    2_000_001_000,
	"system-cluster-critical": 2_000_000_000,
}

func schedulingKinds(Options, services) []*Resource {
	return []*Resource{
		// The generation starts at 1 and never changes: a PriorityClass has
		// no spec.
		kind[schedulingv1.PriorityClass]("scheduling.k8s.io", "v1", "priorityclasses", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultPriorityClass, PrepareForCreate: defaultPriorityClass,
			PrepareForUpdate: func(o, _ Object) { defaultPriorityClass(o) }, Validate: validatePriorityClass, Printer: priorityClassPrinter}),
	}
}

// defaultPriorityClass lets a class preempt lower priorities unless it
// says otherwise.
func defaultPriorityClass(o Object) {
	pc := o.(*schedulingv1.PriorityClass)
	if pc.PreemptionPolicy == nil {
		p := corev1.PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

// validatePriorityClass checks the system- names (only the system classes,
// with their values, never the global default), the highest value of the
// others, the preemption policy, and on update that value and preemption
// policy did not change.
func validatePriorityClass(o, old Object) metav1.FieldErrors {
	pc := o.(*schedulingv1.PriorityClass)
	var errs metav1.FieldErrors
	if old != nil {
		prev := old.(*schedulingv1.PriorityClass)
		if pc.Value != prev.Value {
			errs = append(errs, metav1.FieldForbidden("value", "may not be changed in an update."))
		}
		if !equalPreemption(pc.PreemptionPolicy, prev.PreemptionPolicy) {
			errs = append(errs, metav1.FieldInvalid("preemptionPolicy", pc.PreemptionPolicy, "field is immutable"))
		}
		return errs
	}
	if strings.HasPrefix(pc.Name, SystemPriorityClassPrefix) {
		if msg := systemPriorityClassError(pc); msg != "" {
			errs = append(errs, metav1.FieldForbidden("metadata.name", "priority class names with '"+SystemPriorityClassPrefix+
				"' prefix are reserved for system use only. error: "+msg))
		}
	} else if pc.Value > HighestUserDefinablePriority {
		errs = append(errs, metav1.FieldForbidden("value", "maximum allowed value of a user defined priority is "+strconv.Itoa(HighestUserDefinablePriority)))
	}
	if p := pc.PreemptionPolicy; p != nil && *p != corev1.PreemptLowerPriority && *p != corev1.PreemptNever {
		errs = append(errs, metav1.FieldNotSupported("preemptionPolicy", string(*p), []string{"PreemptLowerPriority", "Never"}))
	}
	return errs
}

// systemPriorityClassError says why pc may not have its system- name, or
// "" when it is one of the system classes as the system defines it.
func systemPriorityClassError(pc *schedulingv1.PriorityClass) string {
	value, ok := SystemPriorityClasses[pc.Name]
	switch {
	case !ok:
		return pc.Name + " is not a known system priority class"
	case pc.Value != value:
		return "value of " + pc.Name + " PriorityClass must be " + strconv.Itoa(int(value))
	case pc.GlobalDefault:
		return "globalDefault of " + pc.Name + " PriorityClass must be false"
	}
	return ""
}

func equalPreemption(a, b *corev1.PreemptionPolicy) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

var priorityClassPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Value", Type: "integer", Description: "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."},
		{Name: "Global-Default", Type: "boolean", Description: "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."},
		ageColumn(),
		col("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		pc := o.(*schedulingv1.PriorityClass)
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return []any{pc.Name, int64(pc.Value), pc.GlobalDefault, Age(pc.CreationTimestamp, now), policy}, nil
	},
}

// systemPriorityClassDescriptions are the descriptions kube-apiserver gives
// its system PriorityClasses.
var systemPriorityClassDescriptions = map[string]string{
	"system-node-critical":    "Used for system critical pods that must not be moved from their current node.",
	"system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
}

// NewSystemPriorityClasses returns the PriorityClasses kube-apiserver
// creates at start, in its order: system-node-critical, then
// system-cluster-critical.
func NewSystemPriorityClasses() []*schedulingv1.PriorityClass {
	var out []*schedulingv1.PriorityClass
	for _, name := range []string{"system-node-critical", "system-cluster-critical"} {
		pc := &schedulingv1.PriorityClass{Value: SystemPriorityClasses[name], Description: systemPriorityClassDescriptions[name]}
		pc.Name = name
		defaultPriorityClass(pc)
		out = append(out, pc)
	}
	return out
}
