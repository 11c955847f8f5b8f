package registry

import (
	"net/netip"
	"reflect"
	"strconv"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Validation of the built-in kinds beyond their metadata, with the causes
// (field paths, messages, order) kube-apiserver v1.37.2 gives for them
// (testdata/golden-1.37/kinds: the invalid-* and update-immutable-*
// captures). Each function is a Resource.Validate: obj is the new object,
// old the stored one on update (nil on create).

var (
	taintEffects     = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
	portProtocols    = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	restartPolicies  = []string{string(corev1.RestartPolicyAlways), string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}
	sliceAddressType = []string{addressIPv4, addressIPv6, addressFQDN}
)

// The address types of EndpointSlices.
const (
	addressIPv4 = "IPv4"
	addressIPv6 = "IPv6"
	addressFQDN = "FQDN"
)

const (
	msgCIDR      = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
	msgIP        = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
	msgPortRange = "must be between 1 and 65535, inclusive"
	msgImmutable = "field is immutable"
)

// validateNode checks a Node's taints (under metadata.taints, the path
// kube-apiserver reports) and pod CIDRs, and on update that the pod CIDRs
// and provider ID, once set, do not change.
func validateNode(o, old Object) metav1.FieldErrors {
	n := o.(*corev1.Node)
	var errs metav1.FieldErrors
	for i, t := range n.Spec.Taints {
		path := "metadata.taints[" + strconv.Itoa(i) + "]"
		for _, msg := range ValidateQualifiedName(t.Key) {
			errs = append(errs, metav1.FieldInvalid(path+".key", t.Key, msg))
		}
		if t.Value != "" {
			for _, msg := range ValidateLabelValue(t.Value) {
				errs = append(errs, metav1.FieldInvalid(path+".value", t.Value, msg))
			}
		}
		switch {
		case t.Effect == "":
			errs = append(errs, metav1.FieldRequired(path+".effect", ""))
		case !containsString(taintEffects, string(t.Effect)):
			errs = append(errs, metav1.FieldNotSupported(path+".effect", t.Effect, taintEffects))
		}
	}
	for i, c := range n.Spec.PodCIDRs {
		if _, err := netip.ParsePrefix(c); err != nil {
			errs = append(errs, metav1.FieldInvalid("spec.podCIDRs["+strconv.Itoa(i)+"]", c, msgCIDR))
		}
	}
	if old == nil {
		return errs
	}
	prev := old.(*corev1.Node)
	if len(prev.Spec.PodCIDRs) > 0 && !reflect.DeepEqual(prev.Spec.PodCIDRs, n.Spec.PodCIDRs) {
		errs = append(errs, metav1.FieldForbidden("spec.podCIDRs", `node updates may not change podCIDR except from "" to valid`))
	}
	if prev.Spec.ProviderID != "" && prev.Spec.ProviderID != n.Spec.ProviderID {
		errs = append(errs, metav1.FieldForbidden("spec.providerID", `node updates may not change providerID except from "" to valid`))
	}
	return errs
}

// validateEvent is the validation of a core/v1 Event: only the checks
// every Event passes (legacyEventErrors), as kube-apiserver keeps the
// core API lenient.
func validateEvent(o, _ Object) metav1.FieldErrors {
	return legacyEventErrors(o.(*corev1.Event), "reportingComponent")
}

// validateLease checks that a Lease's duration is positive and its
// transition count not negative.
func validateLease(o, _ Object) metav1.FieldErrors {
	l := o.(*coordinationv1.Lease)
	var errs metav1.FieldErrors
	if d := l.Spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, metav1.FieldInvalid("spec.leaseDurationSeconds", *d, "must be greater than 0"))
	}
	if t := l.Spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, metav1.FieldInvalid("spec.leaseTransitions", *t, "must be greater than or equal to 0"))
	}
	return errs
}

// dropDisabledLeaseFields clears what the CoordinatedLeaderElection feature
// gate (beta, off by default in v1.37) guards: spec.strategy and
// spec.preferredHolder are dropped on create, and on update unless the
// stored lease already has them.
func dropDisabledLeaseFields(o, old Object) {
	l := o.(*coordinationv1.Lease)
	if old != nil {
		prev := old.(*coordinationv1.Lease)
		if prev.Spec.Strategy != nil || prev.Spec.PreferredHolder != nil {
			return
		}
	}
	l.Spec.Strategy = nil
	l.Spec.PreferredHolder = nil
}

// validateEndpoints checks the subsets of core/v1 Endpoints: their
// addresses are IPs that are not special, their ports in range with a known
// protocol, and named when there are several.
func validateEndpoints(o, _ Object) metav1.FieldErrors {
	ep := o.(*corev1.Endpoints)
	var errs metav1.FieldErrors
	for i, ss := range ep.Subsets {
		path := "subsets[" + strconv.Itoa(i) + "]"
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, metav1.FieldRequired(path, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j, a := range ss.Addresses {
			errs = append(errs, endpointAddressErrors(a, path+".addresses["+strconv.Itoa(j)+"]")...)
		}
		for j, a := range ss.NotReadyAddresses {
			errs = append(errs, endpointAddressErrors(a, path+".notReadyAddresses["+strconv.Itoa(j)+"]")...)
		}
		for j, p := range ss.Ports {
			pp := path + ".ports[" + strconv.Itoa(j) + "]"
			switch {
			case len(ss.Ports) > 1 && p.Name == "":
				errs = append(errs, metav1.FieldRequired(pp+".name", ""))
			case p.Name != "":
				for _, msg := range ValidateDNS1123Label(p.Name) {
					errs = append(errs, metav1.FieldInvalid(pp+".name", p.Name, msg))
				}
			}
			if p.Port < 1 || p.Port > 65535 {
				errs = append(errs, metav1.FieldInvalid(pp+".port", p.Port, msgPortRange))
			}
			switch {
			case p.Protocol == "":
				errs = append(errs, metav1.FieldRequired(pp+".protocol", ""))
			case !containsString(portProtocols, string(p.Protocol)):
				errs = append(errs, metav1.FieldNotSupported(pp+".protocol", p.Protocol, portProtocols))
			}
		}
	}
	return errs
}

// endpointAddressErrors checks one address of an Endpoints subset: a valid
// IP, then (kube-apiserver's second check) not an unspecified, loopback,
// link-local or link-local multicast one.
func endpointAddressErrors(a corev1.EndpointAddress, path string) metav1.FieldErrors {
	addr, err := netip.ParseAddr(a.IP)
	if err != nil {
		return metav1.FieldErrors{
			metav1.FieldInvalid(path+".ip", a.IP, msgIP),
			metav1.FieldInvalid(path+".ip", a.IP, "must be a valid IP address"),
		}
	}
	var errs metav1.FieldErrors
	switch {
	case addr.IsUnspecified():
		errs = append(errs, metav1.FieldInvalid(path+".ip", a.IP, "may not be unspecified (0.0.0.0)"))
	case addr.IsLoopback():
		errs = append(errs, metav1.FieldInvalid(path+".ip", a.IP, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	case addr.IsLinkLocalUnicast():
		errs = append(errs, metav1.FieldInvalid(path+".ip", a.IP, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	case addr.IsLinkLocalMulticast():
		errs = append(errs, metav1.FieldInvalid(path+".ip", a.IP, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// validateEndpointSlice checks an EndpointSlice in kube-apiserver's order:
// the ports' protocols, the address type, then every endpoint's addresses
// (on update, those that changed); and on update that the address type did
// not change (reported with a null value, as kube-apiserver does).
func validateEndpointSlice(o, old Object) metav1.FieldErrors {
	es := o.(*discoveryv1.EndpointSlice)
	var errs metav1.FieldErrors
	for i, p := range es.Ports {
		path := "ports[" + strconv.Itoa(i) + "]"
		if p.Name != nil && *p.Name != "" {
			for _, msg := range ValidateDNS1123Label(*p.Name) {
				errs = append(errs, metav1.FieldInvalid(path+".name", *p.Name, msg))
			}
		}
		switch {
		case p.Protocol == nil:
			errs = append(errs, metav1.FieldRequired(path+".protocol", ""))
		case !containsString(portProtocols, string(*p.Protocol)):
			errs = append(errs, metav1.FieldNotSupported(path+".protocol", *p.Protocol, portProtocols))
		}
	}
	switch {
	case es.AddressType == "":
		errs = append(errs, metav1.FieldRequired("addressType", ""))
	case !containsString(sliceAddressType, string(es.AddressType)):
		errs = append(errs, metav1.FieldNotSupported("addressType", es.AddressType, sliceAddressType))
	}
	// Endpoints an update leaves as they were are not checked again
	// (kube-apiserver ratchets them: a changed address type reports only
	// its immutability).
	var prev *discoveryv1.EndpointSlice
	if old != nil {
		prev = old.(*discoveryv1.EndpointSlice)
	}
	for i, e := range es.Endpoints {
		if prev != nil && i < len(prev.Endpoints) && reflect.DeepEqual(prev.Endpoints[i], e) {
			continue
		}
		path := "endpoints[" + strconv.Itoa(i) + "]"
		if len(e.Addresses) == 0 {
			errs = append(errs, metav1.FieldRequired(path+".addresses", ""))
			continue
		}
		for j, a := range e.Addresses {
			ap := path + ".addresses[" + strconv.Itoa(j) + "]"
			switch es.AddressType {
			case addressIPv4, addressIPv6:
				addr, err := netip.ParseAddr(a)
				if err != nil || addr.Is4() != (es.AddressType == addressIPv4) || addr.Zone() != "" {
					errs = append(errs, metav1.FieldInvalid(ap, a, "must be a valid "+string(es.AddressType)+" address"))
				}
			case addressFQDN:
				for _, msg := range ValidateDNS1123Subdomain(a) {
					errs = append(errs, metav1.FieldInvalid(ap, a, msg))
				}
			}
		}
	}
	if prev != nil && prev.AddressType != es.AddressType {
		errs = append(errs, metav1.FieldInvalid("addressType", nil, msgImmutable))
	}
	return errs
}

// validatePodSpec checks a Pod: containers are required, each with a name,
// an image and ports with a number and a known protocol; the restart policy
// is one kube-apiserver knows. On update the spec may change only where
// kube-apiserver lets it (podUpdateErrors).
func validatePodSpec(o, old Object) metav1.FieldErrors {
	p := o.(*corev1.Pod)
	errs := podSpecErrors(&p.Spec, "spec")
	if old != nil {
		errs = append(errs, podUpdateErrors(p, old.(*corev1.Pod))...)
	}
	return errs
}

// msgPodUpdate is kube-apiserver's refusal of a pod update that changes
// more than it may; a diff of the two specs (goDiff) follows it.
const msgPodUpdate = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`," +
	"`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations)," +
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"

// podUpdateErrors refuses an update of a pod's spec beyond the images of
// its containers, activeDeadlineSeconds, tolerations, the grace period and
// the removal of scheduling gates.
func podUpdateErrors(p, old *corev1.Pod) metav1.FieldErrors {
	next := p.Spec.DeepCopy()
	prev := old.Spec.DeepCopy()
	for _, cs := range [][2][]corev1.Container{{next.Containers, prev.Containers}, {next.InitContainers, prev.InitContainers}} {
		for i := range min(len(cs[0]), len(cs[1])) {
			cs[1][i].Image = cs[0][i].Image
		}
	}
	prev.ActiveDeadlineSeconds = next.ActiveDeadlineSeconds
	prev.Tolerations = next.Tolerations
	prev.TerminationGracePeriodSeconds = next.TerminationGracePeriodSeconds
	prev.SchedulingGates = next.SchedulingGates
	if reflect.DeepEqual(next, prev) {
		return nil
	}
	return metav1.FieldErrors{metav1.FieldForbidden("spec", msgPodUpdate+"\n"+goDiff(*prev, *next))}
}

func podSpecErrors(s *corev1.PodSpec, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if len(s.Containers) == 0 {
		errs = append(errs, metav1.FieldRequired(path+".containers", ""))
	}
	for i, c := range s.Containers {
		cp := path + ".containers[" + strconv.Itoa(i) + "]"
		if c.Name == "" {
			errs = append(errs, metav1.FieldRequired(cp+".name", ""))
		}
		if c.Image == "" {
			errs = append(errs, metav1.FieldRequired(cp+".image", ""))
		}
		for j, port := range c.Ports {
			pp := cp + ".ports[" + strconv.Itoa(j) + "]"
			switch {
			case port.ContainerPort == 0:
				errs = append(errs, metav1.FieldRequired(pp+".containerPort", ""))
			case port.ContainerPort < 0 || port.ContainerPort > 65535:
				errs = append(errs, metav1.FieldInvalid(pp+".containerPort", port.ContainerPort, msgPortRange))
			}
			switch {
			case port.Protocol == "":
				errs = append(errs, metav1.FieldRequired(pp+".protocol", ""))
			case !containsString(portProtocols, string(port.Protocol)):
				errs = append(errs, metav1.FieldNotSupported(pp+".protocol", port.Protocol, portProtocols))
			}
		}
	}
	if s.RestartPolicy != "" && !containsString(restartPolicies, string(s.RestartPolicy)) {
		errs = append(errs, metav1.FieldNotSupported(path+".restartPolicy", s.RestartPolicy, restartPolicies))
	}
	return errs
}

// validateDeploymentSpec checks a Deployment as kube-apiserver does: a
// non-negative replica count, a non-empty selector that matches the
// template's labels (a missing selector matches nothing, so the labels are
// reported too), a template with containers; and on update that the
// selector did not change.
func validateDeploymentSpec(o, old Object) metav1.FieldErrors {
	d := o.(*appsv1.Deployment)
	var errs metav1.FieldErrors
	if d.Spec.Replicas != nil && *d.Spec.Replicas < 0 {
		errs = append(errs, metav1.FieldInvalid("spec.replicas", *d.Spec.Replicas, "must be greater than or equal to 0"))
	}
	sel := d.Spec.Selector
	switch {
	case sel == nil:
		errs = append(errs, metav1.FieldRequired("spec.selector", ""))
	case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0:
		errs = append(errs, metav1.FieldInvalid("spec.selector", sel, "empty selector is invalid for deployment"))
	}
	if sel == nil || !selectorMatchesLabels(sel, d.Spec.Template.Labels) {
		errs = append(errs, metav1.FieldInvalid("spec.template.metadata.labels", d.Spec.Template.Labels,
			"`selector` does not match template `labels`"))
	}
	if len(d.Spec.Template.Spec.Containers) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.template.spec.containers", ""))
	}
	if old != nil {
		if prev := old.(*appsv1.Deployment); !reflect.DeepEqual(prev.Spec.Selector, sel) {
			errs = append(errs, metav1.FieldInvalid("spec.selector", sel, msgImmutable))
		}
	}
	return errs
}

// selectorMatchesLabels reports whether the label selector sel selects
// labels (matchLabels, and matchExpressions' In, NotIn, Exists and
// DoesNotExist).
func selectorMatchesLabels(sel *metav1.LabelSelector, labels map[string]string) bool {
	for k, v := range sel.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range sel.MatchExpressions {
		v, ok := labels[e.Key]
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			if !ok || !containsString(e.Values, v) {
				return false
			}
		case metav1.LabelSelectorOpNotIn:
			if ok && containsString(e.Values, v) {
				return false
			}
		case metav1.LabelSelectorOpExists:
			if !ok {
				return false
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}
