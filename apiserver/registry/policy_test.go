package registry

import (
	"fmt"
	"testing"
	"time"

	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

func TestDefaultHorizontalPodAutoscaler(t *testing.T) {
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	DefaultHorizontalPodAutoscaler(h)
	sameJSONValue(t, h.Spec.MinReplicas, 1)
	sameJSONValue(t, h.Spec.Metrics, []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
		"target": map[string]any{"type": "Utilization", "averageUtilization": 80}}}})
	if h.Spec.Behavior != nil {
		t.Errorf("behavior %+v without one given", h.Spec.Behavior)
	}

	h = &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: new(autoscalingv2.MinChangePolicySelect)},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: new(int32(120)),
			Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Percent", Value: 50, PeriodSeconds: 60}}},
	}}}
	DefaultHorizontalPodAutoscaler(h)
	sameJSONValue(t, h.Spec.Behavior, map[string]any{
		"scaleUp": map[string]any{"stabilizationWindowSeconds": 0, "selectPolicy": "Min", "policies": []any{
			map[string]any{"type": "Pods", "value": 4, "periodSeconds": 15}, map[string]any{"type": "Percent", "value": 100, "periodSeconds": 15}}},
		"scaleDown": map[string]any{"stabilizationWindowSeconds": 120, "selectPolicy": "Max", "policies": []any{
			map[string]any{"type": "Percent", "value": 50, "periodSeconds": 60}}},
	})
	h = &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}}}
	DefaultHorizontalPodAutoscaler(h)
	if d := h.Spec.Behavior.ScaleDown; d == nil || *d.StabilizationWindowSeconds != 300 || len(d.Policies) != 1 {
		t.Errorf("default scale down %+v", d)
	}
}

func TestValidateHorizontalPodAutoscaler(t *testing.T) {
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	cases := []struct {
		name string
		spec autoscalingv2.HorizontalPodAutoscalerSpec
		want []string
	}{
		{"valid", autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MinReplicas: new(int32(1)), MaxReplicas: 3}, nil},
		{"core group", autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "rc"},
			MinReplicas: new(int32(1)), MaxReplicas: 3}, nil},
		{"empty (invalid-autoscaling-horizontalpodautoscalers)", autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: new(int32(1))}, []string{
			"spec.maxReplicas|FieldValueInvalid|Invalid value: 0: must be greater than or equal to `minReplicas`",
			"spec.scaleTargetRef.kind|FieldValueRequired|Required value",
			"spec.scaleTargetRef.name|FieldValueRequired|Required value",
			`spec.scaleTargetRef.apiVersion|FieldValueInvalid|Invalid value: "": apiVersion must specify API group`,
			"spec.maxReplicas|FieldValueRequired|Required value"}},
		{"scale to zero without an object metric", autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, MinReplicas: new(int32(0)), MaxReplicas: -1}, []string{
			"spec.maxReplicas|FieldValueInvalid|Invalid value: -1: must be greater than or equal to `minReplicas`",
			"spec.metrics|FieldValueForbidden|Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
			"spec.maxReplicas|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 1"}},
		{"bad reference", autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "foo", Kind: "a/b", Name: "w"},
			MinReplicas: new(int32(1)), MaxReplicas: 3}, []string{
			`spec.scaleTargetRef.kind|FieldValueInvalid|Invalid value: "a/b": may not contain '/'`,
			`spec.scaleTargetRef.apiVersion|FieldValueInvalid|Invalid value: "foo": apiVersion must specify API group`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sameCauses(t, ValidateHorizontalPodAutoscaler(&autoscalingv2.HorizontalPodAutoscaler{Spec: c.spec}, nil), c.want...)
		})
	}
}

func TestHPATargets(t *testing.T) {
	q := func(s string) *resource.Quantity { return new(resource.MustParse(s)) }
	util := func(n int32) autoscalingv2.MetricTarget {
		return autoscalingv2.MetricTarget{Type: "Utilization", AverageUtilization: new(n)}
	}
	cpu := autoscalingv2.MetricSpec{Type: "Resource", Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: util(60)}}
	mem := autoscalingv2.MetricSpec{Type: "Resource", Resource: &autoscalingv2.ResourceMetricSource{Name: "memory",
		Target: autoscalingv2.MetricTarget{Type: "AverageValue", AverageValue: q("500Mi")}}}
	pods := autoscalingv2.MetricSpec{Type: "Pods", Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: q("1k")}}}
	obj := autoscalingv2.MetricSpec{Type: "Object", Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{Value: q("10k")}}}
	ext := autoscalingv2.MetricSpec{Type: "External", External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: q("30")}}}
	ctr := autoscalingv2.MetricSpec{Type: "ContainerResource", ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "cpu", Container: "app", Target: util(70)}}
	cases := []struct {
		specs    []autoscalingv2.MetricSpec
		statuses []autoscalingv2.MetricStatus
		want     string
	}{
		{nil, nil, "<none>"},
		{[]autoscalingv2.MetricSpec{cpu}, nil, "cpu: <unknown>/60%"},
		{[]autoscalingv2.MetricSpec{cpu}, []autoscalingv2.MetricStatus{{Type: "Resource", Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu",
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(42))}}}}, "cpu: 42%/60%"},
		{[]autoscalingv2.MetricSpec{cpu, mem, pods, obj, ext, ctr}, nil, "cpu: <unknown>/60%, memory: <unknown>/500Mi + 4 more..."},
		{[]autoscalingv2.MetricSpec{pods, obj}, nil, "<unknown>/1k, <unknown>/10k"},
		{[]autoscalingv2.MetricSpec{ext, ctr}, nil, "<unknown>/30 (avg), cpu: <unknown>/70%"},
		{[]autoscalingv2.MetricSpec{{Type: "Bogus"}}, nil, "<unknown type>"},
	}
	for _, c := range cases {
		if got := hpaTargets(c.specs, c.statuses); got != c.want {
			t.Errorf("targets %q, want %q", got, c.want)
		}
	}
}

func TestValidatePodDisruptionBudget(t *testing.T) {
	pdb := func(spec policyv1.PodDisruptionBudgetSpec) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{Spec: spec}
	}
	cases := []struct {
		name string
		spec policyv1.PodDisruptionBudgetSpec
		want []string
	}{
		{"valid", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromString("50%"))}, nil},
		{"invalid-policy-poddisruptionbudgets", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(-1)),
			MaxUnavailable: new(intstr.FromString("150%")), UnhealthyPodEvictionPolicy: new(policyv1.UnhealthyPodEvictionPolicyType("Sometimes"))}, []string{
			`spec|FieldValueInvalid|Invalid value: {"MinAvailable":-1,"Selector":null,"MaxUnavailable":"150%","UnhealthyPodEvictionPolicy":"Sometimes"}: minAvailable and maxUnavailable cannot be both set`,
			"spec.minAvailable|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 0",
			`spec.maxUnavailable|FieldValueInvalid|Invalid value: "150%": must not be greater than 100%`,
			`spec.unhealthyPodEvictionPolicy|FieldValueNotSupported|Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"`}},
		{"not a percentage, bad selector", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromString("1x")),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "-"}}}, []string{
			`spec.minAvailable|FieldValueInvalid|Invalid value: "1x": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
			`spec.selector.matchLabels|FieldValueInvalid|Invalid value: "-": ` + ValidateLabelValue("-")[0]}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { sameCauses(t, validatePodDisruptionBudget(pdb(c.spec), nil), c.want...) })
	}
}

func readyPod(name string, labels map[string]string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}}}
}

func TestDisruptionStatus(t *testing.T) {
	web := map[string]string{"app": "web"}
	pods := []*corev1.Pod{readyPod("a", web, true), readyPod("b", web, true), readyPod("c", web, false),
		readyPod("other", map[string]string{"app": "db"}, true)}
	gone := readyPod("d", web, true)
	gone.DeletionTimestamp = new(metav1.Now())
	pods = append(pods, gone)
	cases := []struct {
		name string
		spec policyv1.PodDisruptionBudgetSpec
		want string // expected desired healthy allowed
	}{
		{"minAvailable 1", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(1))}, "4 1 2 1"},
		{"minAvailable 50%", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromString("50%"))}, "4 2 2 0"},
		{"maxUnavailable 1", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(1))}, "4 3 2 0"},
		{"minAvailable 5", policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(5))}, "4 5 2 0"},
	}
	for _, c := range cases {
		c.spec.Selector = &metav1.LabelSelector{MatchLabels: web}
		b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", Generation: 2}, Spec: c.spec}
		st := DisruptionStatus(b, pods)
		if got := fmt.Sprint(st.ExpectedPods, st.DesiredHealthy, st.CurrentHealthy, st.DisruptionsAllowed); got != c.want || st.ObservedGeneration != 2 {
			t.Errorf("%s: expected desired healthy allowed %s (observed %d), want %s", c.name, got, st.ObservedGeneration, c.want)
		}
	}
}

func TestCheckEviction(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	budget := func(gen, observed int64, allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "block", Generation: gen},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: observed, DisruptionsAllowed: allowed, DesiredHealthy: 1, CurrentHealthy: 1}}
	}
	cases := []struct {
		name       string
		b          *policyv1.PodDisruptionBudget
		code       int32
		cause      string
		allowedNow int32
	}{
		{"allowed", budget(1, 1, 1), 0, "", 0},
		{"none allowed (subresource-core-pods-eviction-blocked)", budget(1, 1, 0), 429, "The disruption budget block needs 1 healthy pods and has 1 currently", 0},
		{"not observed yet", budget(2, 1, 1), 429, "The disruption budget block is still being processed by the server.", 1},
		{"negative", budget(1, 1, -1), 403, "", -1},
	}
	for _, c := range cases {
		st := CheckEviction(c.b, "p", now)
		switch {
		case c.code == 0 && st != nil:
			t.Errorf("%s: refused: %+v", c.name, st)
		case c.code != 0 && (st == nil || st.Code != c.code):
			t.Errorf("%s: status %+v, want code %d", c.name, st, c.code)
		case c.code == 429 && (st.Message != "Cannot evict pod as it would violate the pod's disruption budget." ||
			len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != "DisruptionBudget" || st.Details.Causes[0].Message != c.cause):
			t.Errorf("%s: status %+v", c.name, st)
		}
		if c.b.Status.DisruptionsAllowed != c.allowedNow {
			t.Errorf("%s: %d disruptions left, want %d", c.name, c.b.Status.DisruptionsAllowed, c.allowedNow)
		}
		if _, ok := c.b.Status.DisruptedPods["p"]; ok != (c.code == 0) {
			t.Errorf("%s: disrupted pods %v", c.name, c.b.Status.DisruptedPods)
		}
	}
}

func TestPolicyAndAutoscalingRows(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-4 * time.Second))
	cells, _ := pdbPrinter.Row(&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "full", CreationTimestamp: created},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromString("25%"))}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2}}, now)
	if got := fmt.Sprint(cells); got != "[full N/A 25% 2 4s]" {
		t.Errorf("budget cells %s", got)
	}
	cells, _ = hpaPrinter.Row(&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "min", CreationTimestamp: created},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 5}}, now)
	if got := fmt.Sprint(cells); got != "[min Deployment/web <none> <unset> 5 0 4s]" {
		t.Errorf("autoscaler cells %s", got)
	}
}
