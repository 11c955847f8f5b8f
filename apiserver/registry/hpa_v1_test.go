package registry

import (
	"reflect"
	"testing"

	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// A v2 HPA read through autoscaling/v1 says what v1 can (the CPU target)
// and carries the rest in annotations worded as kube-apiserver v1.37.2
// words them (read off a real server), and converts back to the same v2
// object.
func TestHPAV1Conversion(t *testing.T) {
	var v2 autoscalingv2.HorizontalPodAutoscaler
	if err := kjson.Unmarshal([]byte(`{"metadata":{"name":"v2mem","namespace":"ns","annotations":{"team":"a"}},
		"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"minReplicas":1,"maxReplicas":3,
		"metrics":[{"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"100Mi"}}},
			{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":70}}}],
		"behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},
			"scaleDown":{"stabilizationWindowSeconds":60,"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}},
		"status":{"desiredReplicas":2,"currentReplicas":2,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageValue":"50m","averageUtilization":40}}}],
		"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-11-24T10:00:00Z","reason":"ReadyForNewScale","message":"ok"}]}}`), &v2); err != nil {
		t.Fatal(err)
	}
	v1 := hpaV2ToV1(&v2).(*autoscalingv1.HorizontalPodAutoscaler)
	if p := v1.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 70 {
		t.Errorf("targetCPUUtilizationPercentage %v", p)
	}
	if p := v1.Status.CurrentCPUUtilizationPercentage; p == nil || *p != 40 {
		t.Errorf("currentCPUUtilizationPercentage %v", p)
	}
	for k, want := range map[string]string{
		hpaMetricsAnnotation: `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]`,
		hpaBehaviorAnnotation: `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},` +
			`"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}`,
		"team": "a",
	} {
		if got := v1.Annotations[k]; got != want {
			t.Errorf("annotation %s:\n got %s\nwant %s", k, got, want)
		}
	}
	back := hpaV1ToV2(v1).(*autoscalingv2.HorizontalPodAutoscaler)
	// v1 lists the CPU target first: the order of the metrics is v1's.
	want := v2.DeepCopy()
	want.Spec.Metrics[0], want.Spec.Metrics[1] = want.Spec.Metrics[1], want.Spec.Metrics[0]
	if !reflect.DeepEqual(back, want) {
		b, _ := kjson.Marshal(back)
		w, _ := kjson.Marshal(want)
		t.Errorf("round trip:\n got %s\nwant %s", b, w)
	}
	if v2.Annotations["team"] != "a" || len(v2.Annotations) != 1 {
		t.Errorf("the conversion changed its input: %v", v2.Annotations)
	}

	// A v1 object without a target gets v2's default, 80% of CPU.
	bare := hpaV1ToV2(&autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}}).(*autoscalingv2.HorizontalPodAutoscaler)
	if m := bare.Spec.Metrics; len(m) != 1 || *m[0].Resource.Target.AverageUtilization != 80 || m[0].Resource.Name != "cpu" {
		t.Errorf("default metrics %+v", m)
	}
}
