package registry

import corev1 "github.com/kapi-dev/kapi/api/core/v1"

// podGracePeriod is the grace period of a pod's deletion, as kube-apiserver's
// pod strategy decides it: the requested one, else the pod's
// terminationGracePeriodSeconds, else 0; 0 for a pod no node runs (no
// spec.nodeName) or that has finished (Succeeded, Failed), since nothing is
// left to stop; and 1 for a negative period.
func podGracePeriod(o Object, requested *int64) int64 {
	pod := o.(*corev1.Pod)
	var period int64
	switch {
	case requested != nil:
		period = *requested
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}
