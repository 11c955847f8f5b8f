package admission

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// testRange is the LimitRange the real server was given for the captures
// below.
func testRange(ratio string) []*corev1.LimitRange {
	return []*corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Default: rl("cpu", "500m", "memory", "256Mi"), DefaultRequest: rl("cpu", "100m"),
			Min: rl("cpu", "50m"), Max: rl("cpu", "1"), MaxLimitRequestRatio: rl("cpu", ratio)},
		{Type: corev1.LimitTypePod, Max: rl("memory", "1Gi")},
	}}}}
}

func TestLimitRangerDefaultPod(t *testing.T) {
	// Captured from kube-apiserver v1.37.2 (ratio 10).
	p := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i"}},
		Containers: []corev1.Container{{Name: "c"},
			{Name: "d", Resources: corev1.ResourceRequirements{Limits: rl("cpu", "200m"), Requests: rl("cpu", "200m")}}}}}
	LimitRangerDefaultPod(p, testRange("10"))
	want := "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; memory request for container d; memory limit for container d; cpu, memory request for init container i; cpu, memory limit for init container i"
	if got := p.Annotations[LimitRangerAnnotation]; got != want {
		t.Errorf("annotation\n got %s\nwant %s", got, want)
	}
	for _, c := range []struct {
		c        corev1.Container
		req, lim corev1.ResourceList
	}{
		{p.Spec.Containers[0], rl("cpu", "100m", "memory", "256Mi"), rl("cpu", "500m", "memory", "256Mi")},
		{p.Spec.Containers[1], rl("cpu", "200m", "memory", "256Mi"), rl("cpu", "200m", "memory", "256Mi")},
		{p.Spec.InitContainers[0], rl("cpu", "100m", "memory", "256Mi"), rl("cpu", "500m", "memory", "256Mi")},
	} {
		if !resourceListEqual(c.c.Resources.Requests, c.req) || !resourceListEqual(c.c.Resources.Limits, c.lim) {
			t.Errorf("container %s: %v %v", c.c.Name, c.c.Resources.Requests, c.c.Resources.Limits)
		}
	}
	if err := LimitRangerCheckPod(p, testRange("10")); err != nil {
		t.Errorf("defaulted pod refused: %v", err)
	}
	// No Container item: nothing set.
	q := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	LimitRangerDefaultPod(q, []*corev1.LimitRange{{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypePod, Max: rl("cpu", "1")}}}}})
	if q.Annotations != nil || q.Spec.Containers[0].Resources.Requests != nil {
		t.Errorf("pod changed: %+v", q)
	}
}

func TestLimitRangerCheck(t *testing.T) {
	pod := func(req, lim corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"within", pod(rl("cpu", "100m"), rl("cpu", "200m", "memory", "256Mi")), ""},
		// Captured from kube-apiserver v1.37.2 (lp2, lp3).
		{"everything", pod(rl("cpu", "10m", "memory", "2Gi"), rl("cpu", "2", "memory", "2Gi")),
			"[minimum cpu usage per Container is 50m, but request is 10m, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 200.000000, maximum memory usage per Pod is 1Gi, but limit is 2Gi]"},
		{"ratio", pod(rl("cpu", "100m"), rl("cpu", "800m", "memory", "256Mi")), "cpu max limit to request ratio per Container is 4, but provided ratio is 8.000000"},
		{"no request, no limit", pod(nil, nil),
			"[minimum cpu usage per Container is 50m.  No request is specified, maximum cpu usage per Container is 1.  No limit is specified, cpu max limit to request ratio per Container is 4, but no request is specified or request is 0, maximum memory usage per Pod is 1Gi.  No limit is specified]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := LimitRangerCheckPod(tt.pod, testRange("4"))
			if got := errString(err); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	claim := func(storage string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", storage)}}}
	}
	pvcRange := []*corev1.LimitRange{{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypePersistentVolumeClaim, Min: rl("storage", "1Gi"), Max: rl("storage", "2Gi")}}}}}
	for storage, want := range map[string]string{
		"1Gi":   "",
		"500Mi": "minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi",
		"3Gi":   "maximum storage usage per PersistentVolumeClaim is 2Gi, but limit is 3Gi",
	} {
		if got := errString(LimitRangerCheckClaim(claim(storage), pvcRange)); got != want {
			t.Errorf("claim of %s: %q, want %q", storage, got, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
