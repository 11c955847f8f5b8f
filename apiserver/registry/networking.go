package registry

import (
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	"github.com/kapi-dev/kapi/internal/namefmt"
)

// networking.k8s.io/v1: ingresses, ingress classes, network policies, IP
// addresses and service CIDRs, defaulted and validated as kube-apiserver
// v1.37 does. Where v1.37 validates a field declaratively, the errors of
// that validation (required fields, immutability) come after those of its
// own checks, as kube-apiserver lists them. The DefaultIngressClass
// admission plugin is not part of this registry.

const networkingGroup = "networking.k8s.io"

// The scopes of an IngressClass's parameters.
const (
	ingressClassScopeNamespace = "Namespace"
	ingressClassScopeCluster   = "Cluster"
)

func networkingKinds(Options, services) []*Resource {
	return []*Resource{
		kind[networkingv1.Ingress](networkingGroup, "v1", "ingresses", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			PrepareForCreate: ResetStatus, Validate: validateIngress, Printer: ingressPrinter}),
		kind[networkingv1.IngressClass](networkingGroup, "v1", "ingressclasses", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultIngressClass, PrepareForCreate: defaultIngressClass,
			PrepareForUpdate: func(o, _ Object) { defaultIngressClass(o) }, Validate: validateIngressClass, Printer: ingressClassPrinter}),
		kind[networkingv1.NetworkPolicy](networkingGroup, "v1", "networkpolicies", Resource{Generation: true,
			// kube-apiserver compares NetworkPolicy specs (as webhook
			// configurations) with reflect.DeepEqual, not semantically: a
			// body's `ingress: []` is a change from the stored spec without
			// ingress.
			SameSpec: func(a, b Object) bool {
				return reflect.DeepEqual(a.(*networkingv1.NetworkPolicy).Spec, b.(*networkingv1.NetworkPolicy).Spec)
			},
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultNetworkPolicy, PrepareForCreate: defaultNetworkPolicy,
			PrepareForUpdate: func(o, _ Object) { defaultNetworkPolicy(o) }, Validate: validateNetworkPolicy, Printer: networkPolicyPrinter}),
		kind[networkingv1.IPAddress](networkingGroup, "v1", "ipaddresses", Resource{
			Meta: builtinMeta(NameIsIP), Validate: validateIPAddress, Printer: ipAddressPrinter}),
		kind[networkingv1.ServiceCIDR](networkingGroup, "v1", "servicecidrs", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			PrepareForCreate: ResetStatus, Validate: validateServiceCIDR, Printer: serviceCIDRPrinter}),
	}
}

// defaultNetworkPolicy gives every port a protocol (TCP) and a policy
// without policyTypes the types its rules imply: Ingress always, Egress
// when it has egress rules.
func defaultNetworkPolicy(o Object) {
	np := o.(*networkingv1.NetworkPolicy)
	for i := range np.Spec.Ingress {
		defaultNetworkPolicyPorts(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		defaultNetworkPolicyPorts(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) > 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultNetworkPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[i].Protocol = &tcp
		}
	}
}

// defaultIngressClass scopes parameters without a scope to the cluster.
func defaultIngressClass(o Object) {
	ic := o.(*networkingv1.IngressClass)
	if p := ic.Spec.Parameters; p != nil && p.Scope == nil {
		scope := ingressClassScopeCluster
		p.Scope = &scope
	}
}

func validateNetworkPolicy(o, _ Object) metav1.FieldErrors {
	spec := &o.(*networkingv1.NetworkPolicy).Spec
	errs := labelSelectorErrors(&spec.PodSelector, "spec.podSelector")
	var required metav1.FieldErrors
	rules := func(kind, peers string, n int, ports func(int) []networkingv1.NetworkPolicyPort, peer func(int) []networkingv1.NetworkPolicyPeer) {
		for i := 0; i < n; i++ {
			path := "spec." + kind + "[" + strconv.Itoa(i) + "]"
			for j, p := range ports(i) {
				errs = append(errs, networkPolicyPortErrors(p, path+".ports["+strconv.Itoa(j)+"]")...)
			}
			for j, p := range peer(i) {
				e, r := networkPolicyPeerErrors(p, path+"."+peers+"["+strconv.Itoa(j)+"]")
				errs, required = append(errs, e...), append(required, r...)
			}
		}
	}
	rules("ingress", "from", len(spec.Ingress),
		func(i int) []networkingv1.NetworkPolicyPort { return spec.Ingress[i].Ports },
		func(i int) []networkingv1.NetworkPolicyPeer { return spec.Ingress[i].From })
	rules("egress", "to", len(spec.Egress),
		func(i int) []networkingv1.NetworkPolicyPort { return spec.Egress[i].Ports },
		func(i int) []networkingv1.NetworkPolicyPeer { return spec.Egress[i].To })
	if len(spec.PolicyTypes) > 2 {
		errs = append(errs, metav1.FieldInvalid("spec.policyTypes", spec.PolicyTypes, "may not specify more than two policyTypes"))
	} else {
		for i, t := range spec.PolicyTypes {
			if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
				errs = append(errs, metav1.FieldNotSupported("spec.policyTypes["+strconv.Itoa(i)+"]", string(t), []string{"Ingress", "Egress"}))
			}
		}
	}
	return append(errs, required...)
}

func networkPolicyPortErrors(p networkingv1.NetworkPolicyPort, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP && *p.Protocol != corev1.ProtocolUDP && *p.Protocol != corev1.ProtocolSCTP {
		errs = append(errs, metav1.FieldNotSupported(path+".protocol", string(*p.Protocol), []string{"TCP", "UDP", "SCTP"}))
	}
	switch {
	case p.Port == nil:
		if p.EndPort != nil {
			errs = append(errs, metav1.FieldInvalid(path+".endPort", int64(*p.EndPort), "may not be specified when `port` is not specified"))
		}
	case p.Port.Type == intstr.Int:
		if msg := portNumError(int64(p.Port.IntVal)); msg != "" {
			errs = append(errs, metav1.FieldInvalid(path+".port", int64(p.Port.IntVal), msg))
		}
		if p.EndPort != nil {
			if *p.EndPort < p.Port.IntVal {
				errs = append(errs, metav1.FieldInvalid(path+".endPort", int64(*p.EndPort), "must be greater than or equal to `port`"))
			}
			if msg := portNumError(int64(*p.EndPort)); msg != "" {
				errs = append(errs, metav1.FieldInvalid(path+".endPort", int64(*p.EndPort), msg))
			}
		}
	default:
		if p.EndPort != nil {
			errs = append(errs, metav1.FieldInvalid(path+".endPort", int64(*p.EndPort), "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range portNameErrors(p.Port.StrVal) {
			errs = append(errs, metav1.FieldInvalid(path+".port", p.Port.StrVal, msg))
		}
	}
	return errs
}

// portNumError is kube-apiserver's message for a port number out of range.
func portNumError(n int64) string {
	if n < 1 || n > 65535 {
		return "must be between 1 and 65535, inclusive"
	}
	return ""
}

var portNameLetterRe = regexp.MustCompile("[a-z]")
var portNameCharsRe = regexp.MustCompile("^[-a-z0-9]+$")

// portNameErrors are kube-apiserver's messages for a port name that is not
// an IANA service name.
func portNameErrors(name string) []string {
	var errs []string
	if len(name) > 15 {
		errs = append(errs, "must be no more than 15 characters")
	}
	if !portNameCharsRe.MatchString(name) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !portNameLetterRe.MatchString(name) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(name, "--") {
		errs = append(errs, "must not contain consecutive hyphens")
	}
	if len(name) > 0 && (name[0] == '-' || name[len(name)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	return errs
}

// networkPolicyPeerErrors checks one peer: its selectors, its ipBlock (a
// CIDR and strict subsets of it), and that it names something, an ipBlock
// alone. required holds the declaratively validated required ipBlock.cidr.
func networkPolicyPeerErrors(p networkingv1.NetworkPolicyPeer, path string) (errs, required metav1.FieldErrors) {
	n := 0
	if p.PodSelector != nil {
		n++
		errs = append(errs, labelSelectorErrors(p.PodSelector, path+".podSelector")...)
	}
	if p.NamespaceSelector != nil {
		n++
		errs = append(errs, labelSelectorErrors(p.NamespaceSelector, path+".namespaceSelector")...)
	}
	if b := p.IPBlock; b != nil {
		n++
		bp := path + ".ipBlock"
		if b.CIDR == "" {
			required = append(required, metav1.FieldRequired(bp+".cidr", ""))
		} else if msgs := ValidateCIDR(b.CIDR); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, metav1.FieldInvalid(bp+".cidr", b.CIDR, msg))
			}
		} else {
			cidr := netip.MustParsePrefix(b.CIDR)
			for i, x := range b.Except {
				xp := bp + ".except[" + strconv.Itoa(i) + "]"
				msgs := ValidateCIDR(x)
				for _, msg := range msgs {
					errs = append(errs, metav1.FieldInvalid(xp, x, msg))
				}
				if len(msgs) > 0 {
					continue
				}
				except := netip.MustParsePrefix(x)
				if !cidr.Contains(except.Addr()) || cidr.Bits() >= except.Bits() {
					errs = append(errs, metav1.FieldInvalid(xp, x, "must be a strict subset of `cidr`"))
				}
			}
		}
	}
	if n == 0 {
		errs = append(errs, metav1.FieldRequired(path, "must specify a peer"))
	} else if n > 1 && p.IPBlock != nil {
		errs = append(errs, metav1.FieldForbidden(path, "may not specify both ipBlock and another peer"))
	}
	return errs, required
}

var (
	ingressInvalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	ingressInvalidPathSuffixes  = []string{"/..", "/."}
)

// validateIngress checks an Ingress's backends, rules, TLS hosts and class
// name in kube-apiserver's order, then its load balancer status: IPs
// (those the stored status already has are kept as they are) and host
// names.
func validateIngress(o, old Object) metav1.FieldErrors {
	in := o.(*networkingv1.Ingress)
	errs := ingressSpecErrors(&in.Spec)
	var known []string
	if old != nil {
		for _, lb := range old.(*networkingv1.Ingress).Status.LoadBalancer.Ingress {
			known = append(known, lb.IP)
		}
	}
	for i, lb := range in.Status.LoadBalancer.Ingress {
		path := "status.loadBalancer.ingress[" + strconv.Itoa(i) + "]"
		if lb.IP != "" && !slices.Contains(known, lb.IP) {
			for _, msg := range ValidateIP(lb.IP) {
				errs = append(errs, metav1.FieldInvalid(path+".ip", lb.IP, msg))
			}
		}
		if lb.Hostname != "" {
			for _, msg := range ValidateDNS1123Subdomain(lb.Hostname) {
				errs = append(errs, metav1.FieldInvalid(path+".hostname", lb.Hostname, msg))
			}
			if _, err := netip.ParseAddr(lb.Hostname); err == nil {
				errs = append(errs, metav1.FieldInvalid(path+".hostname", lb.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}

func ingressSpecErrors(spec *networkingv1.IngressSpec) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		var rules any = spec.Rules
		if spec.Rules == nil {
			rules = nil
		}
		errs = append(errs, metav1.FieldInvalid("spec", rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, ingressBackendErrors(spec.DefaultBackend, "spec.defaultBackend")...)
	}
	for i, r := range spec.Rules {
		path := "spec.rules[" + strconv.Itoa(i) + "]"
		if r.Host != "" {
			if _, err := netip.ParseAddr(r.Host); err == nil {
				errs = append(errs, metav1.FieldInvalid(path+".host", r.Host, "must be a DNS name, not an IP address"))
			}
			for _, msg := range hostErrors(r.Host) {
				errs = append(errs, metav1.FieldInvalid(path+".host", r.Host, msg))
			}
		}
		if r.HTTP == nil {
			continue
		}
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, metav1.FieldRequired(path+".http.paths", ""))
		}
		for j := range r.HTTP.Paths {
			errs = append(errs, ingressPathErrors(&r.HTTP.Paths[j], path+".http.paths["+strconv.Itoa(j)+"]")...)
		}
	}
	for i, tls := range spec.TLS {
		path := "spec.tls[" + strconv.Itoa(i) + "]"
		for j, h := range tls.Hosts {
			for _, msg := range hostErrors(h) {
				errs = append(errs, metav1.FieldInvalid(path+".hosts["+strconv.Itoa(j)+"]", h, msg))
			}
		}
		if tls.SecretName != "" {
			for _, msg := range ValidateDNS1123Subdomain(tls.SecretName) {
				errs = append(errs, metav1.FieldInvalid(path+".secretName", tls.SecretName, msg))
			}
		}
	}
	if spec.IngressClassName != nil {
		for _, msg := range ValidateDNS1123Subdomain(*spec.IngressClassName) {
			errs = append(errs, metav1.FieldInvalid("spec.ingressClassName", *spec.IngressClassName, msg))
		}
	}
	return errs
}

// hostErrors checks a host name, which may start with a "*." wildcard.
func hostErrors(host string) []string {
	if rest, ok := strings.CutPrefix(host, "*."); ok && !strings.Contains(rest, "*") {
		return dns1123Subdomain(rest, maxLen)
	}
	if strings.Contains(host, "*") {
		return []string{regexMessage("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
			"\\*\\."+namefmt.DNS1123Subdomain, "*.example.com")}
	}
	return ValidateDNS1123Subdomain(host)
}

func ingressPathErrors(p *networkingv1.HTTPIngressPath, path string) metav1.FieldErrors {
	if p.PathType == nil {
		return metav1.FieldErrors{metav1.FieldRequired(path+".pathType", "pathType must be specified")}
	}
	var errs metav1.FieldErrors
	switch *p.PathType {
	case "Exact", "Prefix":
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, metav1.FieldInvalid(path+".path", p.Path, "must be an absolute path"))
		}
		for _, seq := range ingressInvalidPathSequences {
			if strings.Contains(p.Path, seq) {
				errs = append(errs, metav1.FieldInvalid(path+".path", p.Path, "must not contain '"+seq+"'"))
			}
		}
		for _, suffix := range ingressInvalidPathSuffixes {
			if strings.HasSuffix(p.Path, suffix) {
				errs = append(errs, metav1.FieldInvalid(path+".path", p.Path, "cannot end with '"+suffix+"'"))
			}
		}
	case "ImplementationSpecific":
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, metav1.FieldInvalid(path+".path", p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, metav1.FieldNotSupported(path+".pathType", string(*p.PathType), []string{"Exact", "ImplementationSpecific", "Prefix"}))
	}
	return append(errs, ingressBackendErrors(&p.Backend, path+".backend")...)
}

func ingressBackendErrors(b *networkingv1.IngressBackend, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	switch {
	case b.Resource != nil && b.Service != nil:
		return metav1.FieldErrors{metav1.FieldInvalid(path, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		r := b.Resource
		if r.APIGroup != nil {
			for _, msg := range ValidateDNS1123Subdomain(*r.APIGroup) {
				errs = append(errs, metav1.FieldInvalid(path+".resource.apiGroup", *r.APIGroup, msg))
			}
		}
		errs = append(errs, pathSegmentRequired(path+".resource.kind", r.Kind)...)
		errs = append(errs, pathSegmentRequired(path+".resource.name", r.Name)...)
	case b.Service != nil:
		s := b.Service
		if s.Name == "" {
			errs = append(errs, metav1.FieldRequired(path+".service.name", ""))
		} else {
			for _, msg := range ValidateDNS1123Label(s.Name) {
				errs = append(errs, metav1.FieldInvalid(path+".service.name", s.Name, msg))
			}
		}
		switch {
		case s.Port.Name != "" && s.Port.Number != 0:
			errs = append(errs, metav1.FieldInvalid(path, "", "cannot set both port name & port number"))
		case s.Port.Name != "":
			for _, msg := range portNameErrors(s.Port.Name) {
				errs = append(errs, metav1.FieldInvalid(path+".service.port.name", s.Port.Name, msg))
			}
		case s.Port.Number != 0:
			if msg := portNumError(int64(s.Port.Number)); msg != "" {
				errs = append(errs, metav1.FieldInvalid(path+".service.port.number", int64(s.Port.Number), msg))
			}
		default:
			errs = append(errs, metav1.FieldRequired(path, "port name or number is required"))
		}
	default:
		errs = append(errs, metav1.FieldInvalid(path, "", "resource or service backend is required"))
	}
	return errs
}

// pathSegmentRequired checks a required name that must fit in a URL path.
func pathSegmentRequired(path, value string) metav1.FieldErrors {
	if value == "" {
		return metav1.FieldErrors{metav1.FieldRequired(path, "")}
	}
	var errs metav1.FieldErrors
	for _, msg := range ValidatePathSegment(value) {
		errs = append(errs, metav1.FieldInvalid(path, value, msg))
	}
	return errs
}

// validateIngressClass checks the controller (a domain-prefixed path,
// immutable) and the parameters reference.
func validateIngressClass(o, old Object) metav1.FieldErrors {
	spec := &o.(*networkingv1.IngressClass).Spec
	var errs, required metav1.FieldErrors
	if spec.Controller == "" {
		required = append(required, metav1.FieldRequired("spec.controller", ""))
	} else {
		if len(spec.Controller) > 250 {
			required = append(required, metav1.FieldTooLong("spec.controller", 250))
		}
		errs = append(errs, domainPrefixedPathErrors("spec.controller", spec.Controller)...)
	}
	if old != nil {
		if prev := old.(*networkingv1.IngressClass).Spec.Controller; prev != spec.Controller {
			required = append(required, metav1.FieldInvalid("spec.controller", spec.Controller, "field is immutable"))
		}
	}
	if p := spec.Parameters; p != nil {
		path := "spec.parameters"
		if p.APIGroup != nil {
			for _, msg := range ValidateDNS1123Subdomain(*p.APIGroup) {
				errs = append(errs, metav1.FieldInvalid(path+".apiGroup", *p.APIGroup, msg))
			}
		}
		for _, f := range []struct{ name, value string }{{"kind", p.Kind}, {"name", p.Name}} {
			if f.value == "" {
				required = append(required, metav1.FieldRequired(path+"."+f.name, ""))
				continue
			}
			for _, msg := range ValidatePathSegment(f.value) {
				errs = append(errs, metav1.FieldInvalid(path+"."+f.name, f.value, msg))
			}
		}
		switch {
		case p.Scope == nil:
			required = append(required, metav1.FieldRequired(path+".scope", ""))
		case *p.Scope != ingressClassScopeNamespace && *p.Scope != ingressClassScopeCluster:
			errs = append(errs, metav1.FieldNotSupported(path+".scope", *p.Scope, []string{ingressClassScopeCluster, ingressClassScopeNamespace}))
		case *p.Scope == ingressClassScopeNamespace && p.Namespace == nil:
			errs = append(errs, metav1.FieldRequired(path+".namespace", "`parameters.scope` is set to 'Namespace'"))
		case *p.Scope == ingressClassScopeNamespace:
			for _, msg := range ValidateDNS1123Label(*p.Namespace) {
				errs = append(errs, metav1.FieldInvalid(path+".namespace", *p.Namespace, msg))
			}
		case p.Namespace != nil:
			errs = append(errs, metav1.FieldForbidden(path+".namespace", "`parameters.scope` is set to 'Cluster'"))
		}
	}
	return append(errs, required...)
}

var domainPathRe = regexp.MustCompile(`^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$`)

// domainPrefixedPathErrors checks a value such as "example.com/controller":
// a DNS subdomain, a slash and a path.
func domainPrefixedPathErrors(path, value string) metav1.FieldErrors {
	host, rest, found := strings.Cut(value, "/")
	if !found || rest == "" {
		return metav1.FieldErrors{metav1.FieldInvalid(path, value, "must be a domain-prefixed path (such as \"acme.io/foo\")")}
	}
	var errs metav1.FieldErrors
	for _, msg := range ValidateDNS1123Subdomain(host) {
		errs = append(errs, metav1.FieldInvalid(path, host, msg))
	}
	if !domainPathRe.MatchString(rest) {
		errs = append(errs, metav1.FieldInvalid(path, rest, "Invalid path"))
	}
	return errs
}

// validateIPAddress checks an IPAddress's parent reference (required,
// immutable).
func validateIPAddress(o, old Object) metav1.FieldErrors {
	ip := o.(*networkingv1.IPAddress)
	if old != nil {
		if prev := old.(*networkingv1.IPAddress).Spec.ParentRef; !parentRefEqual(prev, ip.Spec.ParentRef) {
			// kube-apiserver v1.37 shows no value here.
			return metav1.FieldErrors{metav1.FieldInvalid("spec.parentRef", nil, "field is immutable")}
		}
		return nil
	}
	ref := ip.Spec.ParentRef
	if ref == nil {
		return metav1.FieldErrors{metav1.FieldRequired("spec.parentRef", "")}
	}
	var errs, required metav1.FieldErrors
	path := "spec.parentRef"
	if ref.Group != "" {
		for _, msg := range ValidateDNS1123Subdomain(ref.Group) {
			errs = append(errs, metav1.FieldInvalid(path+".group", ref.Group, msg))
		}
	}
	for _, f := range []struct{ name, value string }{{"resource", ref.Resource}, {"name", ref.Name}, {"namespace", ref.Namespace}} {
		if f.value == "" {
			if f.name != "namespace" {
				required = append(required, metav1.FieldRequired(path+"."+f.name, ""))
			}
			continue
		}
		for _, msg := range ValidatePathSegment(f.value) {
			errs = append(errs, metav1.FieldInvalid(path+"."+f.name, f.value, msg))
		}
	}
	return append(errs, required...)
}

func parentRefEqual(a, b *networkingv1.ParentReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// validateServiceCIDR checks a ServiceCIDR's one or two CIDRs (one per IP
// family) and, on update, that the existing ones did not change (a second
// one may be added to a single-stack range).
func validateServiceCIDR(o, old Object) metav1.FieldErrors {
	cidrs := o.(*networkingv1.ServiceCIDR).Spec.CIDRs
	if old == nil {
		return serviceCIDRErrors(cidrs)
	}
	prev := old.(*networkingv1.ServiceCIDR).Spec.CIDRs
	var errs metav1.FieldErrors
	switch {
	case len(prev) == len(cidrs):
		for i := range prev {
			if prev[i] != cidrs[i] {
				errs = append(errs, metav1.FieldInvalid("spec.cidrs["+strconv.Itoa(i)+"]", cidrs[i], "field is immutable"))
			}
		}
	case len(prev) == 1 && len(cidrs) == 2:
		if prev[0] != cidrs[0] {
			errs = append(errs, metav1.FieldInvalid("spec.cidrs[0]", cidrs[0], "field is immutable"))
		}
		errs = append(errs, serviceCIDRErrors(cidrs)...)
	default:
		errs = append(errs, metav1.FieldInvalid("spec.cidrs", cidrs, "field is immutable"))
	}
	return errs
}

func serviceCIDRErrors(cidrs []string) metav1.FieldErrors {
	switch {
	case len(cidrs) == 0:
		return metav1.FieldErrors{metav1.FieldRequired("spec.cidrs", "at least one CIDR required")}
	case len(cidrs) > 2:
		// kube-apiserver shows the spec with its internal Go field name.
		return metav1.FieldErrors{metav1.FieldInvalid("spec.cidrs", struct{ CIDRs []string }{cidrs}, "may only hold up to 2 values")}
	}
	var errs metav1.FieldErrors
	for i, c := range cidrs {
		for _, msg := range ValidateCIDR(c) {
			errs = append(errs, metav1.FieldInvalid("spec.cidrs["+strconv.Itoa(i)+"]", c, msg))
		}
	}
	if len(cidrs) == 2 && cidrFamily(cidrs[0]) != 0 && cidrFamily(cidrs[0]) == cidrFamily(cidrs[1]) {
		errs = append(errs, metav1.FieldInvalid("spec.cidrs", cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
	}
	return errs
}

var ingressPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Class", "The name of the IngressClass resource that should be used for additional configuration"),
		col("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
		col("Address", "Address is a list containing ingress points for the load-balancer"),
		col("Ports", "Ports of TLS configurations that open"),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		in := o.(*networkingv1.Ingress)
		class := "<none>"
		if in.Spec.IngressClassName != nil {
			class = *in.Spec.IngressClassName
		}
		var hosts []string
		for _, r := range in.Spec.Rules {
			if r.Host != "" {
				hosts = append(hosts, r.Host)
			}
		}
		hostCell := "*"
		if len(hosts) > 4 {
			hostCell = strings.Join(hosts[:4], ",") + " + " + strconv.Itoa(len(hosts)-4) + " more..."
		} else if len(hosts) > 0 {
			hostCell = strings.Join(hosts, ",")
		}
		var addrs []string
		for _, lb := range in.Status.LoadBalancer.Ingress {
			if lb.IP != "" {
				addrs = append(addrs, lb.IP)
			} else if lb.Hostname != "" {
				addrs = append(addrs, lb.Hostname)
			}
		}
		ports := "80"
		if len(in.Spec.TLS) > 0 {
			ports = "80, 443"
		}
		return []any{in.Name, class, hostCell, strings.Join(addrs, ","), ports, Age(in.CreationTimestamp, now)}, nil
	},
}

var ingressClassPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Controller", "Controller that is responsible for handling this class"),
		col("Parameters", "A reference to a resource with additional parameters"),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		ic := o.(*networkingv1.IngressClass)
		params := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			params = p.Kind
			if p.APIGroup != nil {
				params += "." + *p.APIGroup
			}
			params += "/" + p.Name
		}
		return []any{ic.Name, ic.Spec.Controller, params, Age(ic.CreationTimestamp, now)}, nil
	},
}

var networkPolicyPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Pod-Selector", "podSelector selects the pods to which this NetworkPolicy object applies. The array of rules is applied to any pods selected by this field. An empty selector matches all pods in the policy's namespace. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is optional. If it is not specified, it defaults to an empty selector."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		np := o.(*networkingv1.NetworkPolicy)
		sel := LabelSelectorString(&np.Spec.PodSelector)
		if sel == "" {
			sel = "<none>"
		}
		return []any{np.Name, sel, Age(np.CreationTimestamp, now)}, nil
	},
}

// ipAddressPrinter declares two columns but prints the age as a third
// cell, as kube-apiserver v1.37 does.
var ipAddressPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("ParentRef", "parentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object."),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		ip := o.(*networkingv1.IPAddress)
		ref := ""
		if r := ip.Spec.ParentRef; r != nil {
			ref = strings.ToLower(r.Resource)
			if r.Group != "" {
				ref += "." + r.Group
			}
			if r.Namespace != "" {
				ref += "/" + r.Namespace
			}
			ref += "/" + r.Name
		}
		return []any{ip.Name, ref, Age(ip.CreationTimestamp, now)}, nil
	},
}

var serviceCIDRPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("CIDRs", "cidrs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		sc := o.(*networkingv1.ServiceCIDR)
		return []any{sc.Name, strings.Join(sc.Spec.CIDRs, ","), Age(sc.CreationTimestamp, now)}, nil
	},
}
