package admission

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

func quota(hard, used corev1.ResourceList, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard, Scopes: scopes},
		Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

func cpuPod(name string, cpu ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for i, c := range cpu {
		ctr := corev1.Container{Name: string(rune('c' + i))}
		if c != "" {
			ctr.Resources.Requests = rl("cpu", c)
		}
		p.Spec.Containers = append(p.Spec.Containers, ctr)
	}
	return p
}

func TestQuotaAdmit(t *testing.T) {
	hard := rl("pods", "1", "requests.cpu", "1", "configmaps", "3", "count/secrets", "5")
	zero := rl("pods", "0", "requests.cpu", "0", "configmaps", "0", "count/secrets", "0")
	tests := []struct {
		name     string
		quota    *corev1.ResourceQuota
		resource string
		obj      any
		want     string
		used     corev1.ResourceList // after the charge
	}{
		{"charged", quota(hard, zero), "pods", cpuPod("qp1", "200m"), "",
			rl("pods", "1", "requests.cpu", "200m", "configmaps", "0", "count/secrets", "0")},
		// Captured from kube-apiserver v1.37.2 (qp2, qp3, qp4).
		{"count exceeded", quota(hard, rl("pods", "1", "requests.cpu", "200m", "configmaps", "0", "count/secrets", "0")), "pods", cpuPod("qp2", "200m"),
			"exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1", nil},
		{"must specify", quota(hard, zero), "pods", cpuPod("qp3", "", ""), "failed quota: q: must specify requests.cpu for: c,d", nil},
		{"both exceeded", quota(hard, rl("pods", "1", "requests.cpu", "200m", "configmaps", "0", "count/secrets", "0")), "pods", cpuPod("qp4", "2"),
			"exceeded quota: q, requested: pods=1,requests.cpu=2, used: pods=1,requests.cpu=200m, limited: pods=1,requests.cpu=1", nil},
		{"cpu exceeded", quota(hard, zero), "pods", cpuPod("qp4", "2"),
			"exceeded quota: q, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1", nil},
		{"secrets counted", quota(hard, zero), "secrets", &corev1.Secret{}, "",
			rl("pods", "0", "requests.cpu", "0", "configmaps", "0", "count/secrets", "1")},
		{"not covered", quota(hard, zero), "services", &corev1.Service{}, "", nil},
		{"unknown usage", quota(hard, nil), "configmaps", &corev1.ConfigMap{}, "status unknown for quota: q, resources: configmaps", nil},
		{"scope excludes", quota(rl("pods", "0"), rl("pods", "0"), corev1.ResourceQuotaScopeNotBestEffort), "pods", cpuPod("p", ""), "", nil},
		{"scope includes", quota(rl("pods", "0"), rl("pods", "0"), corev1.ResourceQuotaScopeBestEffort), "pods", cpuPod("p", ""),
			"exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			charges, err := QuotaAdmit([]*corev1.ResourceQuota{tt.quota}, "", tt.resource, tt.obj, nil)
			if got := errString(err); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if tt.used == nil {
				if err == nil && len(charges) > 0 {
					t.Errorf("charged %v", charges[0].Used)
				}
				return
			}
			if len(charges) != 1 || !resourceListEqual(charges[0].Used, tt.used) {
				t.Errorf("charges %+v, want used %v", charges, tt.used)
			}
		})
	}
}

func TestQuotaRecount(t *testing.T) {
	q := quota(rl("pods", "5", "requests.cpu", "4", "limits.memory", "1Gi", "count/deployments.apps", "2", "services.nodeports", "3"), nil)
	done := cpuPod("done", "1")
	done.Status.Phase = corev1.PodSucceeded
	objects := map[[2]string][]any{
		{"", "pods"}:            {cpuPod("a", "100m", "200m"), cpuPod("b", "1"), done},
		{"apps", "deployments"}: {struct{}{}},
		{"", "services"}:        {&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 1}, {Port: 2}}}}, &corev1.Service{}},
	}
	used := QuotaRecount(q, func(g, r string) []any { return objects[[2]string{g, r}] })
	want := rl("pods", "2", "requests.cpu", "1300m", "limits.memory", "0", "count/deployments.apps", "1", "services.nodeports", "2")
	if !resourceListEqual(used, want) {
		t.Errorf("used %v, want %v", used, want)
	}
}

func TestQuotaCountedResource(t *testing.T) {
	for name, want := range map[corev1.ResourceName][3]string{
		"pods":                      {"", "pods", "true"},
		"count/deployments.apps":    {"apps", "deployments", "true"},
		"count/widgets.example.com": {"example.com", "widgets", "true"},
		"count/configmaps":          {"", "configmaps", "true"},
		"requests.cpu":              {"", "", "false"},
		"count/":                    {"", "", "false"},
	} {
		g, r, ok := QuotaCountedResource(name)
		if g != want[0] || r != want[1] || (ok != (want[2] == "true")) {
			t.Errorf("%s: %q %q %v", name, g, r, ok)
		}
	}
}
