package registry

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// autoscaling/v2 HorizontalPodAutoscalers, defaulted and checked as
// kube-apiserver v1.37 does. autoscaling/v1 shares their storage: its
// objects convert to v2 and go through DefaultHorizontalPodAutoscaler and
// ValidateHorizontalPodAutoscaler, which take the v2 type for that reason.

// autoscalingKinds are autoscaling/v2 HorizontalPodAutoscalers.
func autoscalingKinds(Options, services) []*Resource {
	return []*Resource{
		kind[autoscalingv2.HorizontalPodAutoscaler]("autoscaling", "v2", "horizontalpodautoscalers", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Default: func(o Object) { DefaultHorizontalPodAutoscaler(o.(*autoscalingv2.HorizontalPodAutoscaler)) },
			Validate: func(o, old Object) metav1.FieldErrors {
				var oh *autoscalingv2.HorizontalPodAutoscaler
				if old != nil {
					oh = old.(*autoscalingv2.HorizontalPodAutoscaler)
				}
				return ValidateHorizontalPodAutoscaler(o.(*autoscalingv2.HorizontalPodAutoscaler), oh)
			},
			PrepareForCreate: func(o Object) {
				DefaultHorizontalPodAutoscaler(o.(*autoscalingv2.HorizontalPodAutoscaler))
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { DefaultHorizontalPodAutoscaler(o.(*autoscalingv2.HorizontalPodAutoscaler)) },
			Printer:          hpaPrinter}),
		hpaV1Kind(),
	}
}

// DefaultHorizontalPodAutoscaler applies autoscaling/v2's defaults: at
// least one replica, a target of 80% average CPU utilization when no
// metric is given, and, when a behavior is given, the default scale-up
// (no stabilization; the larger of 4 pods or 100% per 15 s) and scale-down
// (300 s stabilization; 100% per 15 s) rules under what it sets.
func DefaultHorizontalPodAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) {
	s := &h.Spec
	if s.MinReplicas == nil {
		s.MinReplicas = new(int32(1))
	}
	if len(s.Metrics) == 0 {
		s.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(80))}},
		}}
	}
	if b := s.Behavior; b != nil {
		b.ScaleUp = mergeScalingRules(b.ScaleUp, autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: new(int32(0)), SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
				{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
			}})
		b.ScaleDown = mergeScalingRules(b.ScaleDown, autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: new(int32(300)), SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}})
	}
}

// mergeScalingRules returns def with what given sets.
func mergeScalingRules(given *autoscalingv2.HPAScalingRules, def autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if given == nil {
		return &def
	}
	if given.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = given.StabilizationWindowSeconds
	}
	if given.SelectPolicy != nil {
		def.SelectPolicy = given.SelectPolicy
	}
	if given.Policies != nil {
		def.Policies = given.Policies
	}
	if given.Tolerance != nil {
		def.Tolerance = given.Tolerance
	}
	return &def
}

// ValidateHorizontalPodAutoscaler checks an autoscaler (old is nil on
// create) as v1.37.2 does: replica bounds, the target reference (kind,
// name, an apiVersion with its group), then its metrics; a missing or
// non-positive maxReplicas (a declarative rule there) comes last.
func ValidateHorizontalPodAutoscaler(h, old *autoscalingv2.HorizontalPodAutoscaler) metav1.FieldErrors {
	s := &h.Spec
	var errs metav1.FieldErrors
	if s.MinReplicas != nil && *s.MinReplicas < 0 {
		errs = append(errs, metav1.FieldInvalid("spec.minReplicas", *s.MinReplicas, "must be greater than or equal to 0"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, metav1.FieldInvalid("spec.maxReplicas", s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	if refErrs := validateScaleTargetRef(s.ScaleTargetRef, "spec.scaleTargetRef"); len(refErrs) > 0 {
		errs = append(errs, refErrs...)
	} else {
		errs = append(errs, validateHPAMetrics(s)...)
	}
	switch {
	case s.MaxReplicas == 0:
		errs = append(errs, metav1.FieldRequired("spec.maxReplicas", ""))
	case s.MaxReplicas < 0:
		errs = append(errs, metav1.FieldInvalid("spec.maxReplicas", s.MaxReplicas, "must be greater than or equal to 1"))
	}
	return errs
}

// validateScaleTargetRef checks a reference to the object an autoscaler
// scales: a kind and name that can be path segments, an apiVersion naming
// its group (or v1, the legacy core group).
func validateScaleTargetRef(ref autoscalingv2.CrossVersionObjectReference, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, f := range []struct{ name, v string }{{"kind", ref.Kind}, {"name", ref.Name}} {
		if f.v == "" {
			errs = append(errs, metav1.FieldRequired(path+"."+f.name, ""))
			continue
		}
		for _, msg := range ValidatePathSegment(f.v) {
			errs = append(errs, metav1.FieldInvalid(path+"."+f.name, f.v, msg))
		}
	}
	if g, _, ok := strings.Cut(ref.APIVersion, "/"); (!ok && ref.APIVersion != "v1") || (ok && g == "") {
		errs = append(errs, metav1.FieldInvalid(path+".apiVersion", ref.APIVersion, "apiVersion must specify API group"))
	}
	return errs
}

// validateHPAMetrics checks that an autoscaler that may scale to zero has
// an Object or External metric to scale back up by.
func validateHPAMetrics(s *autoscalingv2.HorizontalPodAutoscalerSpec) metav1.FieldErrors {
	if s.MinReplicas == nil || *s.MinReplicas != 0 {
		return nil
	}
	for _, m := range s.Metrics {
		if m.Type == autoscalingv2.ObjectMetricSourceType || m.Type == autoscalingv2.ExternalMetricSourceType {
			return nil
		}
	}
	return metav1.FieldErrors{metav1.FieldForbidden("spec.metrics", "must specify at least one Object or External metric to support scaling to zero replicas")}
}

var hpaPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Reference", "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."),
		col("Targets", "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization."),
		col("MinPods", "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."),
		col("MaxPods", "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."),
		col("Replicas", "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		h := o.(*autoscalingv2.HorizontalPodAutoscaler)
		minPods := "<unset>"
		if h.Spec.MinReplicas != nil {
			minPods = fmt.Sprintf("%d", *h.Spec.MinReplicas)
		}
		ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
		return []any{h.Name, ref, hpaTargets(h.Spec.Metrics, h.Status.CurrentMetrics), minPods, int64(h.Spec.MaxReplicas),
			int64(h.Status.CurrentReplicas), Age(h.CreationTimestamp, now)}, nil
	},
}

// hpaTargets prints an autoscaler's metrics as kubectl does: for each, the
// current value (from the status at the same index, "<unknown>" without
// one) against the target, the first two, and how many more there are.
func hpaTargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	list := make([]string, 0, len(specs))
	for i, spec := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, hpaTarget(spec, st))
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

// hpaTarget prints one metric against its target.
func hpaTarget(spec autoscalingv2.MetricSpec, st *autoscalingv2.MetricStatus) string {
	const unknown = "<unknown>"
	switch spec.Type {
	case autoscalingv2.ExternalMetricSourceType, autoscalingv2.ObjectMetricSourceType:
		var target autoscalingv2.MetricTarget
		var cur *autoscalingv2.MetricValueStatus
		if spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil {
			target = spec.External.Target
			if st != nil && st.External != nil {
				cur = &st.External.Current
			}
		} else if spec.Object != nil {
			target = spec.Object.Target
			if st != nil && st.Object != nil {
				cur = &st.Object.Current
			}
		}
		if target.AverageValue != nil {
			current := unknown
			if cur != nil && cur.AverageValue != nil {
				current = cur.AverageValue.String()
			}
			return fmt.Sprintf("%s/%s (avg)", current, target.AverageValue.String())
		}
		current := unknown
		if cur != nil {
			current = quantityString(cur.Value)
		}
		return fmt.Sprintf("%s/%s", current, quantityString(target.Value))
	case autoscalingv2.PodsMetricSourceType:
		current := unknown
		if st != nil && st.Pods != nil {
			current = quantityString(st.Pods.Current.AverageValue)
		}
		target := "<nil>"
		if spec.Pods != nil {
			target = quantityString(spec.Pods.Target.AverageValue)
		}
		return fmt.Sprintf("%s/%s", current, target)
	case autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType:
		var name corev1.ResourceName
		var target autoscalingv2.MetricTarget
		var cur *autoscalingv2.MetricValueStatus
		if spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil {
			name, target = spec.Resource.Name, spec.Resource.Target
			if st != nil && st.Resource != nil {
				cur = &st.Resource.Current
			}
		} else if spec.ContainerResource != nil {
			name, target = spec.ContainerResource.Name, spec.ContainerResource.Target
			if st != nil && st.ContainerResource != nil {
				cur = &st.ContainerResource.Current
			}
		}
		if target.AverageValue != nil {
			current := unknown
			if cur != nil {
				current = quantityString(cur.AverageValue)
			}
			return fmt.Sprintf("%s: %s/%s", name, current, target.AverageValue.String())
		}
		current, want := unknown, "<auto>"
		if cur != nil && cur.AverageUtilization != nil {
			current = fmt.Sprintf("%d%%", *cur.AverageUtilization)
		}
		if target.AverageUtilization != nil {
			want = fmt.Sprintf("%d%%", *target.AverageUtilization)
		}
		return fmt.Sprintf("%s: %s/%s", name, current, want)
	}
	return "<unknown type>"
}

// quantityString prints a quantity the way Go prints a nil *Quantity's
// String in kube-apiserver's printer: "<nil>" when it is missing.
func quantityString(q *resource.Quantity) string {
	if q == nil {
		return "<nil>"
	}
	return q.String()
}
