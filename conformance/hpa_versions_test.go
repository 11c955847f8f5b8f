package conformance

import (
	"net/http"
	"testing"
)

// TestHPAVersions checks that autoscaling/v1 and v2 HorizontalPodAutoscalers
// are one object seen in two shapes: v1's CPU target is v2's CPU
// utilization metric (80% when v1 gives none), and what v1 cannot say (other
// metrics, the scaling behavior) reaches a v1 reader in annotations worded
// as kube-apiserver words them.
func TestHPAVersions(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	v1 := "/apis/autoscaling/v1/namespaces/" + ns + "/horizontalpodautoscalers"
	v2 := "/apis/autoscaling/v2/namespaces/" + ns + "/horizontalpodautoscalers"
	ref := obj{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}

	expect(t, e.post(t, v1, obj{"metadata": obj{"name": "cpu"}, "spec": obj{"scaleTargetRef": ref, "maxReplicas": 3,
		"targetCPUUtilizationPercentage": 50}}), http.StatusCreated)
	got := expect(t, e.get(t, v2+"/cpu"), http.StatusOK)
	if m := compact(got["spec"]); m != `{"maxReplicas":3,"metrics":[{"resource":{"name":"cpu","target":{"averageUtilization":50,"type":"Utilization"}},"type":"Resource"}],"minReplicas":1,"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}` {
		t.Errorf("a v1 HPA read as v2: %s", m)
	}

	expect(t, e.post(t, v1, obj{"metadata": obj{"name": "bare"}, "spec": obj{"scaleTargetRef": ref, "maxReplicas": 3}}), http.StatusCreated)
	if got := expect(t, e.get(t, v1+"/bare"), http.StatusOK); cpuTarget(got) != "80" {
		t.Errorf("a v1 HPA without a target: %s", compact(got["spec"]))
	}

	expect(t, e.post(t, v2, obj{"metadata": obj{"name": "mem"}, "spec": obj{"scaleTargetRef": ref, "maxReplicas": 3,
		"metrics": []obj{
			{"type": "Resource", "resource": obj{"name": "memory", "target": obj{"type": "AverageValue", "averageValue": "100Mi"}}},
			{"type": "Resource", "resource": obj{"name": "cpu", "target": obj{"type": "Utilization", "averageUtilization": 70}}},
		},
		"behavior": obj{"scaleDown": obj{"stabilizationWindowSeconds": 60}}}}), http.StatusCreated)
	got = expect(t, e.get(t, v1+"/mem"), http.StatusOK)
	if p := cpuTarget(got); p != "70" {
		t.Errorf("targetCPUUtilizationPercentage %s", p)
	}
	for k, want := range map[string]string{
		"autoscaling.alpha.kubernetes.io/metrics": `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]`,
		"autoscaling.alpha.kubernetes.io/behavior": `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},` +
			`"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}`,
	} {
		if got := str(got, "metadata", "annotations", k); got != want {
			t.Errorf("annotation %s:\n got %s\nwant %s", k, got, want)
		}
	}
	// The annotations are v1's view only: v2 does not show them.
	if got := expect(t, e.get(t, v2+"/mem"), http.StatusOK); has(got, "metadata", "annotations") {
		t.Errorf("v2 shows annotations %s", compact(got["metadata"]))
	}
}

// cpuTarget is an autoscaling/v1 HPA's targetCPUUtilizationPercentage as
// JSON.
func cpuTarget(h obj) string {
	spec, _ := h["spec"].(map[string]any)
	return compact(spec["targetCPUUtilizationPercentage"])
}
