package registry

import (
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// gatePodScheduling gives a new pod that has scheduling gates the condition
// kube-apiserver gives it on create: PodScheduled False, reason
// SchedulingGated, since now (the pod's creation). It runs after the pod's
// status is reset.
func gatePodScheduling(p *corev1.Pod, now time.Time) {
	if len(p.Spec.SchedulingGates) == 0 {
		return
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
		Type:               corev1.PodScheduled,
		Status:             corev1.ConditionFalse,
		Reason:             "SchedulingGated",
		Message:            "Scheduling is blocked due to non-empty scheduling gates",
		LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
	})
}
