package registry

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

func TestPodGracePeriod(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name      string
		node      string
		phase     corev1.PodPhase
		own, req  *int64
		wantGrace int64
	}{
		{"bound, pod's default", "n", "", p(30), nil, 30},
		{"bound, requested", "n", corev1.PodRunning, p(30), p(5), 5},
		{"bound, requested 0", "n", corev1.PodRunning, p(30), p(0), 0},
		{"bound, no period anywhere", "n", "", nil, nil, 0},
		{"bound, negative", "n", "", p(30), p(-3), 1},
		{"unbound", "", "", p(30), p(10), 0},
		{"succeeded", "n", corev1.PodSucceeded, p(30), nil, 0},
		{"failed", "n", corev1.PodFailed, p(30), p(10), 0},
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: tc.node, TerminationGracePeriodSeconds: tc.own}, Status: corev1.PodStatus{Phase: tc.phase}}
		if got := podGracePeriod(pod, tc.req); got != tc.wantGrace {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.wantGrace)
		}
	}
}
