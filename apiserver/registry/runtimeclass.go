package registry

import (
	"slices"
	"strconv"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
)

// node.k8s.io/v1: RuntimeClasses, validated as kube-apiserver v1.37 does.
// The RuntimeClass admission plugin, which adds a class's overhead and
// scheduling to pods, is not part of this registry.

func nodeKinds(Options, services) []*Resource {
	return []*Resource{
		kind[nodev1.RuntimeClass]("node.k8s.io", "v1", "runtimeclasses", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateRuntimeClass, Printer: runtimeClassPrinter}),
	}
}

// validateRuntimeClass checks a RuntimeClass's overhead, node selector and
// tolerations, then (declaratively in v1.37, so last) its handler: a
// required DNS label that never changes.
func validateRuntimeClass(o, old Object) metav1.FieldErrors {
	rc := o.(*nodev1.RuntimeClass)
	var errs metav1.FieldErrors
	if rc.Overhead != nil {
		for _, name := range slices.Sorted(func(yield func(corev1.ResourceName) bool) {
			for k := range rc.Overhead.PodFixed {
				if !yield(k) {
					return
				}
			}
		}) {
			if q := rc.Overhead.PodFixed[name]; q.Sign() < 0 {
				errs = append(errs, metav1.FieldInvalid("overhead.limits["+string(name)+"]", q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	if s := rc.Scheduling; s != nil {
		errs = append(errs, ValidateLabels(s.NodeSelector, "scheduling.nodeSelector")...)
		errs = append(errs, tolerationErrors(s.Tolerations, "scheduling.tolerations")...)
	}
	if old != nil {
		if rc.Handler != old.(*nodev1.RuntimeClass).Handler {
			// kube-apiserver v1.37 shows no value here.
			errs = append(errs, metav1.FieldInvalid("handler", nil, "field is immutable"))
		}
		return errs
	}
	if rc.Handler == "" {
		return append(errs, metav1.FieldRequired("handler", ""))
	}
	for _, msg := range ValidateDNS1123Label(rc.Handler) {
		errs = append(errs, metav1.FieldInvalid("handler", rc.Handler, msg))
	}
	return errs
}

// tolerationErrors checks tolerations as kube-apiserver does for pods and
// runtime classes: a qualified key (or none, with operator Exists), a
// tolerationSeconds only for NoExecute, a known operator (no value with
// Exists) and effect.
func tolerationErrors(tols []corev1.Toleration, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for i, t := range tols {
		p := path + "[" + strconv.Itoa(i) + "]"
		if t.Key != "" {
			for _, msg := range ValidateQualifiedName(t.Key) {
				errs = append(errs, metav1.FieldInvalid(p+".key", t.Key, msg))
			}
		} else if t.Operator != corev1.TolerationOpExists {
			errs = append(errs, metav1.FieldInvalid(p+".operator", string(t.Operator), "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, metav1.FieldInvalid(p+".effect", string(t.Effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range ValidateLabelValue(t.Value) {
				errs = append(errs, metav1.FieldInvalid(p+".operator", t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, metav1.FieldInvalid(p+".operator", t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, metav1.FieldNotSupported(p+".operator", string(t.Operator), []string{"Equal", "Exists"}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, metav1.FieldNotSupported(p+".effect", string(t.Effect), []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	}
	return errs
}

var runtimeClassPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{nameColumn(), col("Handler", ""), ageColumn()},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		rc := o.(*nodev1.RuntimeClass)
		return []any{rc.Name, rc.Handler, Age(rc.CreationTimestamp, now)}, nil
	},
}
