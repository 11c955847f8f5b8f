package admission

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// LimitRangerAnnotation records on a pod which requests and limits the
// LimitRanger plugin set.
const LimitRangerAnnotation = "kubernetes.io/limit-ranger"

// maxMilliValue is the largest value whose milli-units fit an int64.
const maxMilliValue = int64(((1 << 63) - 1) / 1000)

// containerDefaults is what a Container item gives containers: its default
// limits and default requests, as kube-apiserver defaults a LimitRange (a
// missing default limit is the max; a missing default request the default
// limit, else the min).
func containerDefaults(it corev1.LimitRangeItem) (limits, requests corev1.ResourceList) {
	limits, requests = corev1.ResourceList{}, corev1.ResourceList{}
	maps.Copy(limits, it.Default)
	maps.Copy(requests, it.DefaultRequest)
	for k, v := range it.Max {
		if _, ok := limits[k]; !ok {
			limits[k] = v
		}
	}
	for k, v := range limits {
		if _, ok := requests[k]; !ok {
			requests[k] = v
		}
	}
	for k, v := range it.Min {
		if _, ok := requests[k]; !ok {
			requests[k] = v
		}
	}
	return limits, requests
}

// LimitRangerDefaultPod gives a new pod's containers the default requests
// and limits of the Container items of ranges (the LimitRanges of its
// namespace) that they do not set, and records what it set in the
// kubernetes.io/limit-ranger annotation, as the LimitRanger plugin does.
// The first range with a default for a resource wins.
func LimitRangerDefaultPod(pod *corev1.Pod, ranges []*corev1.LimitRange) {
	limits, requests := corev1.ResourceList{}, corev1.ResourceList{}
	for _, lr := range ranges {
		for _, it := range lr.Spec.Limits {
			if it.Type != corev1.LimitTypeContainer {
				continue
			}
			l, r := containerDefaults(it)
			for k, v := range l {
				if _, ok := limits[k]; !ok {
					limits[k] = v
				}
			}
			for k, v := range r {
				if _, ok := requests[k]; !ok {
					requests[k] = v
				}
			}
		}
	}
	if len(limits) == 0 && len(requests) == 0 {
		return
	}
	var notes []string
	merge := func(c *corev1.Container, prefix string) {
		var setLimits, setRequests []string
		for _, k := range slices.Sorted(maps.Keys(limits)) {
			if _, ok := c.Resources.Limits[k]; !ok {
				if c.Resources.Limits == nil {
					c.Resources.Limits = corev1.ResourceList{}
				}
				c.Resources.Limits[k] = limits[k]
				setLimits = append(setLimits, string(k))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(requests)) {
			if _, ok := c.Resources.Requests[k]; !ok {
				if c.Resources.Requests == nil {
					c.Resources.Requests = corev1.ResourceList{}
				}
				c.Resources.Requests[k] = requests[k]
				setRequests = append(setRequests, string(k))
			}
		}
		if len(setRequests) > 0 {
			notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), prefix, c.Name))
		}
		if len(setLimits) > 0 {
			notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), prefix, c.Name))
		}
	}
	for i := range pod.Spec.Containers {
		merge(&pod.Spec.Containers[i], "container")
	}
	for i := range pod.Spec.InitContainers {
		merge(&pod.Spec.InitContainers[i], "init container")
	}
	if len(notes) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[LimitRangerAnnotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	}
}

// enforcedValues are the values a constraint compares, in milli-units when
// they all fit.
func enforcedValues(req, lim, enforced resource.Quantity) (r, l, e int64) {
	r, l, e = req.Value(), lim.Value(), enforced.Value()
	if r <= maxMilliValue && l <= maxMilliValue && e <= maxMilliValue {
		r, l, e = req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(kind string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[name]
	lim, limOK := limits[name]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !reqOK:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, kind, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	case limOK && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, kind, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(kind string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[name]
	lim, limOK := limits[name]
	r, l, e := enforcedValues(req, lim, enforced)
	switch {
	case !limOK:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, kind, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, kind, enforced.String(), lim.String())
	case reqOK && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, kind, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(kind string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, reqOK := requests[name]
	lim, limOK := limits[name]
	r, l, _ := enforcedValues(req, lim, enforced)
	if !reqOK || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, kind, enforced.String())
	}
	if !limOK || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, kind, enforced.String())
	}
	observed := float64(l) / float64(r)
	shown := observed
	max := float64(enforced.Value())
	if enforced.Value() <= maxMilliValue {
		observed *= 1000
		max = float64(enforced.MilliValue())
	}
	if observed > max {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, kind, enforced.String(), shown)
	}
	return nil
}

// checkItem checks requests and limits against an item's min, max and
// ratio, resources in name order.
func checkItem(kind string, it corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(it.Min)) {
		errs = appendErr(errs, minConstraint(kind, k, it.Min[k], requests, limits))
	}
	for _, k := range slices.Sorted(maps.Keys(it.Max)) {
		errs = appendErr(errs, maxConstraint(kind, k, it.Max[k], requests, limits))
	}
	for _, k := range slices.Sorted(maps.Keys(it.MaxLimitRequestRatio)) {
		errs = appendErr(errs, ratioConstraint(kind, k, it.MaxLimitRequestRatio[k], requests, limits))
	}
	return errs
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// PodRequests and PodLimits are a pod's effective requests or limits: the
// sum over its containers, at least the largest of any init container.
func podTotals(pod *corev1.Pod, of func(corev1.ResourceRequirements) corev1.ResourceList) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range pod.Spec.Containers {
		for k, v := range of(c.Resources) {
			q := sum[k]
			q.Add(v)
			sum[k] = q
		}
	}
	for _, c := range pod.Spec.InitContainers {
		for k, v := range of(c.Resources) {
			if q, ok := sum[k]; !ok || v.Cmp(q) > 0 {
				sum[k] = v
			}
		}
	}
	return sum
}

func requestsOf(r corev1.ResourceRequirements) corev1.ResourceList { return r.Requests }
func limitsOf(r corev1.ResourceRequirements) corev1.ResourceList   { return r.Limits }

// LimitRangerCheckPod checks a new pod against the Container and Pod items
// of ranges, as the LimitRanger plugin does; the error lists every
// violation ("[a, b]" when there are several).
func LimitRangerCheckPod(pod *corev1.Pod, ranges []*corev1.LimitRange) error {
	var errs []error
	for _, lr := range ranges {
		for _, it := range lr.Spec.Limits {
			switch it.Type {
			case corev1.LimitTypeContainer:
				for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
					for _, c := range cs {
						errs = append(errs, checkItem(string(it.Type), it, c.Resources.Requests, c.Resources.Limits)...)
					}
				}
			case corev1.LimitTypePod:
				errs = append(errs, checkItem(string(it.Type), it, podTotals(pod, requestsOf), podTotals(pod, limitsOf))...)
			}
		}
	}
	return aggregate(errs)
}

// LimitRangerCheckClaim checks a persistent volume claim's storage against
// the PersistentVolumeClaim items of ranges (min and max only).
func LimitRangerCheckClaim(pvc *corev1.PersistentVolumeClaim, ranges []*corev1.LimitRange) error {
	var errs []error
	for _, lr := range ranges {
		for _, it := range lr.Spec.Limits {
			if it.Type != corev1.LimitTypePersistentVolumeClaim {
				continue
			}
			// kube-apiserver compares the request with the min and, as a
			// limit, with the max.
			req := pvc.Spec.Resources.Requests
			for _, k := range slices.Sorted(maps.Keys(it.Min)) {
				errs = appendErr(errs, minConstraint(string(it.Type), k, it.Min[k], req, nil))
			}
			for _, k := range slices.Sorted(maps.Keys(it.Max)) {
				errs = appendErr(errs, maxConstraint(string(it.Type), k, it.Max[k], nil, req))
			}
		}
	}
	return aggregate(errs)
}

// aggregate words several errors as kube-apiserver's aggregate: one alone,
// several as "[a, b]".
func aggregate(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}
