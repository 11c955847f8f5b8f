package registry

import (
	"encoding/json"
	"maps"
	"time"

	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// autoscaling/v1 HorizontalPodAutoscalers are v2 ones seen through v1's
// narrower shape, as kube-apiserver stores them (as v2): v1's
// targetCPUUtilizationPercentage is the v2 CPU utilization metric, and
// what v1 cannot say travels in annotations, so that a v2 object read and
// written back through v1 loses nothing:
//
//   - autoscaling.alpha.kubernetes.io/metrics: the other metrics, as
//     autoscaling/v1 MetricSpecs (v2beta1's shape);
//   - autoscaling.alpha.kubernetes.io/behavior: the scaling behavior, as
//     JSON with Go field names (kube-apiserver marshals its internal type);
//   - autoscaling.alpha.kubernetes.io/conditions and current-metrics: the
//     status conditions and resource metrics.
const (
	hpaMetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	hpaBehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	hpaConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	hpaCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	// hpaDefaultCPUUtilization is the target of an HPA without metrics.
	hpaDefaultCPUUtilization = 80
)

// hpaV1Kind is autoscaling/v1 horizontalpodautoscalers: stored as v2,
// defaulted by v1's rules (one replica at least; the CPU target comes with
// the conversion), validated, printed and hashed as v2 objects, as
// kube-apiserver handles its internal type.
func hpaV1Kind() *Resource {
	asV2 := func(o Object) *autoscalingv2.HorizontalPodAutoscaler {
		if o == nil {
			return nil
		}
		return hpaV1ToV2(o).(*autoscalingv2.HorizontalPodAutoscaler)
	}
	def := func(o Object) {
		if h := o.(*autoscalingv1.HorizontalPodAutoscaler); h.Spec.MinReplicas == nil {
			h.Spec.MinReplicas = new(int32(1))
		}
	}
	v2 := hpaPrinter
	return kind[autoscalingv1.HorizontalPodAutoscaler]("autoscaling", "v1", "horizontalpodautoscalers", Resource{Generation: true,
		Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
		StoredAs:       &StoredAs{Group: "autoscaling", Resource: "horizontalpodautoscalers", ToStorage: hpaV1ToV2, FromStorage: hpaV2ToV1},
		StorageVersion: "v2",
		Default:        def,
		PrepareForCreate: func(o Object) {
			def(o)
			ResetStatus(o)
		},
		PrepareForUpdate: func(o, _ Object) { def(o) },
		Validate: func(o, old Object) metav1.FieldErrors {
			var prev *autoscalingv2.HorizontalPodAutoscaler
			if old != nil {
				prev = asV2(old)
			}
			return ValidateHorizontalPodAutoscaler(asV2(o), prev)
		},
		Printer: &Printer{Columns: v2.Columns, Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			return v2.Row(asV2(o), now)
		}},
	})
}

var hpaRoundTripAnnotations = []string{hpaMetricsAnnotation, hpaBehaviorAnnotation, hpaConditionsAnnotation, hpaCurrentMetricsAnnotation}

// hpaV1ToV2 converts an autoscaling/v1 HPA to the v2 object it is stored as.
func hpaV1ToV2(o Object) Object {
	in := o.(*autoscalingv1.HorizontalPodAutoscaler)
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	ref := in.Spec.ScaleTargetRef
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion},
		MinReplicas:    clonePtr(in.Spec.MinReplicas),
		MaxReplicas:    in.Spec.MaxReplicas,
	}
	if p := in.Spec.TargetCPUUtilizationPercentage; p != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, cpuUtilizationMetric(*p))
	}
	ann := out.Annotations
	var other []autoscalingv1.MetricSpec
	if s, ok := ann[hpaMetricsAnnotation]; ok && json.Unmarshal([]byte(s), &other) == nil {
		for _, m := range other {
			out.Spec.Metrics = append(out.Spec.Metrics, metricSpecToV2(m))
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(hpaDefaultCPUUtilization)}
	}
	if s, ok := ann[hpaBehaviorAnnotation]; ok {
		var b autoscalingv2.HorizontalPodAutoscalerBehavior
		if json.Unmarshal([]byte(s), &b) == nil { // Go field names match case-insensitively
			out.Spec.Behavior = &b
		}
	}
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: clonePtr(in.Status.ObservedGeneration),
		LastScaleTime:      clonePtr(in.Status.LastScaleTime),
		CurrentReplicas:    in.Status.CurrentReplicas,
		DesiredReplicas:    in.Status.DesiredReplicas,
	}
	if s, ok := ann[hpaCurrentMetricsAnnotation]; ok {
		var cur []autoscalingv1.MetricStatus
		if json.Unmarshal([]byte(s), &cur) == nil {
			for _, m := range cur {
				if m.Resource != nil {
					out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType,
						Resource: &autoscalingv2.ResourceMetricStatus{Name: m.Resource.Name, Current: autoscalingv2.MetricValueStatus{
							AverageUtilization: clonePtr(m.Resource.CurrentAverageUtilization), AverageValue: clonePtr(&m.Resource.CurrentAverageValue)}}})
				}
			}
		}
	} else if p := in.Status.CurrentCPUUtilizationPercentage; p != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: clonePtr(p)}}}}
	}
	if s, ok := ann[hpaConditionsAnnotation]; ok {
		var conds []autoscalingv1.HorizontalPodAutoscalerCondition
		if json.Unmarshal([]byte(s), &conds) == nil {
			for _, c := range conds {
				out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: clonePtr(c.ObservedGeneration)})
			}
		}
	}
	out.Annotations = WithoutAnnotations(ann, hpaRoundTripAnnotations)
	return out
}

// hpaV2ToV1 converts a stored autoscaling/v2 HPA to v1.
func hpaV2ToV1(o Object) Object {
	in := o.(*autoscalingv2.HorizontalPodAutoscaler)
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: *in.ObjectMeta.DeepCopy()}
	ref := in.Spec.ScaleTargetRef
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: ref.Kind, Name: ref.Name, APIVersion: ref.APIVersion},
		MinReplicas:    clonePtr(in.Spec.MinReplicas),
		MaxReplicas:    in.Spec.MaxReplicas,
	}
	ann := WithoutAnnotations(out.Annotations, hpaRoundTripAnnotations)
	put := func(k, v string) {
		if ann == nil {
			ann = map[string]string{}
		}
		ann[k] = v
	}
	set := func(k string, v any) {
		if b, err := json.Marshal(v); err == nil {
			put(k, string(b))
		}
	}
	var other []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if r := m.Resource; m.Type == autoscalingv2.ResourceMetricSourceType && r != nil && r.Name == corev1.ResourceCPU &&
			r.Target.AverageUtilization != nil && out.Spec.TargetCPUUtilizationPercentage == nil {
			out.Spec.TargetCPUUtilizationPercentage = clonePtr(r.Target.AverageUtilization)
			continue
		}
		other = append(other, metricSpecToV1(m))
	}
	if len(other) > 0 {
		set(hpaMetricsAnnotation, other)
	}
	if b := in.Spec.Behavior; b != nil {
		put(hpaBehaviorAnnotation, goDump{b}.String())
	}
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: clonePtr(in.Status.ObservedGeneration),
		LastScaleTime:      clonePtr(in.Status.LastScaleTime),
		CurrentReplicas:    in.Status.CurrentReplicas,
		DesiredReplicas:    in.Status.DesiredReplicas,
	}
	var cur []autoscalingv1.MetricStatus
	for _, m := range in.Status.CurrentMetrics {
		if r := m.Resource; m.Type == autoscalingv2.ResourceMetricSourceType && r != nil {
			if r.Name == corev1.ResourceCPU && r.Current.AverageUtilization != nil {
				out.Status.CurrentCPUUtilizationPercentage = clonePtr(r.Current.AverageUtilization)
			}
			s := &autoscalingv1.ResourceMetricStatus{Name: r.Name, CurrentAverageUtilization: clonePtr(r.Current.AverageUtilization)}
			if r.Current.AverageValue != nil {
				s.CurrentAverageValue = *r.Current.AverageValue
			}
			cur = append(cur, autoscalingv1.MetricStatus{Type: autoscalingv1.ResourceMetricSourceType, Resource: s})
		}
	}
	if len(cur) > 0 {
		set(hpaCurrentMetricsAnnotation, cur)
	}
	if len(in.Status.Conditions) > 0 {
		conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
		for i, c := range in.Status.Conditions {
			conds[i] = autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
				Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message, ObservedGeneration: clonePtr(c.ObservedGeneration)}
		}
		set(hpaConditionsAnnotation, conds)
	}
	out.Annotations = ann
	return out
}

func cpuUtilizationMetric(p int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &p}}}
}

// metricSpecToV1 writes a v2 metric in autoscaling/v1's (v2beta1's) shape.
func metricSpecToV1(m autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
	switch {
	case m.Resource != nil:
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: m.Resource.Name,
			TargetAverageUtilization: clonePtr(m.Resource.Target.AverageUtilization), TargetAverageValue: clonePtr(m.Resource.Target.AverageValue)}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: c.Name, Container: c.Container,
			TargetAverageUtilization: clonePtr(c.Target.AverageUtilization), TargetAverageValue: clonePtr(c.Target.AverageValue)}
	case m.Pods != nil:
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector.DeepCopy()}
		if v := m.Pods.Target.AverageValue; v != nil {
			out.Pods.TargetAverageValue = *v
		}
	case m.Object != nil:
		o := m.Object
		out.Object = &autoscalingv1.ObjectMetricSource{MetricName: o.Metric.Name, Selector: o.Metric.Selector.DeepCopy(),
			AverageValue: clonePtr(o.Target.AverageValue), Target: autoscalingv1.CrossVersionObjectReference{
				Kind: o.DescribedObject.Kind, Name: o.DescribedObject.Name, APIVersion: o.DescribedObject.APIVersion}}
		if v := o.Target.Value; v != nil {
			out.Object.TargetValue = *v
		}
	case m.External != nil:
		e := m.External
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector.DeepCopy(),
			TargetValue: clonePtr(e.Target.Value), TargetAverageValue: clonePtr(e.Target.AverageValue)}
	}
	return out
}

// metricSpecToV2 is metricSpecToV1 the other way.
func metricSpecToV2(m autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	target := func(util *int32, avg, value *resource.Quantity) autoscalingv2.MetricTarget {
		t := autoscalingv2.MetricTarget{AverageUtilization: clonePtr(util), AverageValue: clonePtr(avg), Value: clonePtr(value)}
		switch {
		case util != nil:
			t.Type = autoscalingv2.UtilizationMetricType
		case avg != nil:
			t.Type = autoscalingv2.AverageValueMetricType
		default:
			t.Type = autoscalingv2.ValueMetricType
		}
		return t
	}
	switch {
	case m.Resource != nil:
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: m.Resource.Name,
			Target: target(m.Resource.TargetAverageUtilization, m.Resource.TargetAverageValue, nil)}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: c.Name, Container: c.Container,
			Target: target(c.TargetAverageUtilization, c.TargetAverageValue, nil)}
	case m.Pods != nil:
		avg := m.Pods.TargetAverageValue
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector.DeepCopy()},
			Target: target(nil, &avg, nil)}
	case m.Object != nil:
		o := m.Object
		value := o.TargetValue
		t := target(nil, o.AverageValue, &value)
		if o.AverageValue != nil {
			t.Value = nil
		}
		out.Object = &autoscalingv2.ObjectMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector.DeepCopy()},
			Target: t, DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: o.Target.Kind, Name: o.Target.Name, APIVersion: o.Target.APIVersion}}
	case m.External != nil:
		e := m.External
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector.DeepCopy()},
			Target: target(nil, e.TargetAverageValue, e.TargetValue)}
	}
	return out
}

// WithoutAnnotations returns a copy of ann without keys (nil when nothing
// is left); ann is not modified.
func WithoutAnnotations(ann map[string]string, keys []string) map[string]string {
	out := maps.Clone(ann)
	for _, k := range keys {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// clonePtr returns a pointer to a copy of *p (nil for nil).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
