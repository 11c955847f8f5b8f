package registry

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"sync"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Services: what kube-apiserver v1.32's service storage does on top of
// defaulting, for a single-stack IPv4 cluster — keep clusterIP and
// clusterIPs in sync, choose the IP family policy and families, allocate a
// cluster IP from the service CIDR, keep allocated values across updates that
// leave them out, drop fields a type change makes meaningless, and refuse
// cluster IPs that are malformed, outside the range, taken, or changed.
//
// Node ports of NodePort and LoadBalancer services come from a node port
// range (default 30000-32767): allocated when left out, reserved when asked
// for (422 when out of the range or taken), freed when a service drops them
// or goes.

// defaultServiceCIDR is the range cluster IPs come from unless
// Options.ServiceCIDR says otherwise (kubeadm's default).
var defaultServiceCIDR = netip.MustParsePrefix("10.96.0.0/12")

// clusterIPNone marks a headless service.
const clusterIPNone = "None"

// The allocator's errors, with kube-apiserver's texts, and errNotHeld: the
// address is free, but the object does not hold it.
var (
	errIPAllocated = errors.New("provided IP is already allocated")
	errRangeFull   = errors.New("range is full")
	errNotHeld     = errors.New("no address was allocated to the object")
)

// ipAllocator hands out the cluster IPs of one IPv4 range. Every reservation
// belongs to an object UID: a retried create keeps its address, Release
// frees exactly what an object holds, and nothing can free or take another
// object's address. A UID may hold more than one address (one it was given
// and one it asked for after a type change); all are freed together.
//
// Like kube-apiserver's allocator, it splits the range in two bands: clients
// asking for a specific address usually pick a low one (10.96.0.10 for DNS),
// so dynamic allocation takes addresses from the upper band first, in order.
// State is in memory: a server over a persistent store starts with every
// address free (see the package documentation).
type ipAllocator struct {
	prefix netip.Prefix
	base   uint32 // first usable address: the network address + 1
	size   uint32 // usable addresses: all but the network and broadcast ones
	band   uint32 // offset of the upper band

	mu    sync.Mutex
	next  uint32                // offset where the next dynamic scan starts
	owner map[uint32]metav1.UID // allocated offsets
	held  map[metav1.UID][]uint32
}

// newIPAllocator returns an allocator for an IPv4 range of at least 4
// addresses.
func newIPAllocator(p netip.Prefix) (*ipAllocator, error) {
	p = p.Masked()
	if !p.IsValid() || !p.Addr().Is4() || p.Bits() > 30 {
		return nil, fmt.Errorf("registry: service CIDR %s must be an IPv4 range of at least 4 addresses", p)
	}
	total := uint64(1) << (32 - p.Bits())
	a := &ipAllocator{
		prefix: p,
		base:   addrToUint(p.Addr()) + 1,
		size:   uint32(total - 2),
		owner:  map[uint32]metav1.UID{},
		held:   map[metav1.UID][]uint32{},
	}
	// min(max(16, total/16), 256), and no band in ranges of 16 or less.
	if total > 16 {
		a.band = uint32(min(max(16, total/16), 256))
	}
	a.next = a.band
	return a, nil
}

func addrToUint(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func uintToAddr(v uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// offset returns addr's offset in the usable range, or an error saying it is
// not in the range.
func (a *ipAllocator) offset(addr netip.Addr) (uint32, error) {
	if addr.Is4() && a.prefix.Contains(addr) {
		if off := addrToUint(addr) - a.base; addrToUint(addr) >= a.base && off < a.size {
			return off, nil
		}
	}
	return 0, fmt.Errorf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", addr, a.prefix)
}

// allocateNext returns an address for uid: one it already holds, or the next
// free one.
func (a *ipAllocator) allocateNext(uid metav1.UID) (netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h := a.held[uid]; len(h) > 0 {
		return uintToAddr(a.base + h[0]), nil
	}
	// The upper band from the cursor round to its start, then the lower band.
	upper := a.size - a.band
	for i := range upper {
		off := a.band + (a.next-a.band+i)%upper
		if _, taken := a.owner[off]; !taken {
			a.take(uid, off)
			a.next = off + 1
			if a.next >= a.size {
				a.next = a.band
			}
			return uintToAddr(a.base + off), nil
		}
	}
	for off := range a.band {
		if _, taken := a.owner[off]; !taken {
			a.take(uid, off)
			return uintToAddr(a.base + off), nil
		}
	}
	return netip.Addr{}, errRangeFull
}

// reserve gives addr to uid if it is in the range and free (or uid's).
func (a *ipAllocator) reserve(uid metav1.UID, addr netip.Addr) error {
	off, err := a.offset(addr)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch owner, taken := a.owner[off]; {
	case !taken:
		a.take(uid, off)
	case owner != uid:
		return errIPAllocated
	}
	return nil
}

func (a *ipAllocator) take(uid metav1.UID, off uint32) {
	a.owner[off] = uid
	a.held[uid] = append(a.held[uid], off)
}

// check reports why addr is not uid's: out of range, taken by another
// object (errIPAllocated) or free (errNotHeld).
func (a *ipAllocator) check(uid metav1.UID, addr netip.Addr) error {
	off, err := a.offset(addr)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch owner, taken := a.owner[off]; {
	case taken && owner == uid:
		return nil
	case taken:
		return errIPAllocated
	}
	return errNotHeld
}

// full reports whether every address is taken.
func (a *ipAllocator) full() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return uint32(len(a.owner)) == a.size
}

// retain frees the addresses uid holds but keep lacks.
func (a *ipAllocator) retain(uid metav1.UID, keep map[netip.Addr]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var kept []uint32
	for _, off := range a.held[uid] {
		if keep[uintToAddr(a.base+off)] {
			kept = append(kept, off)
		} else {
			delete(a.owner, off)
		}
	}
	if len(kept) == 0 {
		delete(a.held, uid)
	} else {
		a.held[uid] = kept
	}
}

// release frees every address uid holds.
func (a *ipAllocator) release(uid metav1.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, off := range a.held[uid] {
		delete(a.owner, off)
	}
	delete(a.held, uid)
}

// services is the service behaviour of one registry: its allocators.
type services struct {
	ips   *ipAllocator
	ports *portAllocator
}

// prepareForCreate defaults a new service, resets its status, syncs and
// completes its IP fields and allocates its cluster IP. Problems with the
// requested IP fields are left for validate to report.
func (sv services) prepareForCreate(o Object) {
	s := o.(*corev1.Service)
	defaultService(s)
	s.Status = corev1.ServiceStatus{}
	normalizeClusterIPs(s, nil)
	initIPFamilies(s, nil)
	sv.allocate(s)
	sv.allocateNodePorts(s, nil)
}

// prepareForUpdate defaults the spec of the next state of a service, keeps
// the allocated values the client left out, syncs its IP fields, allocates a
// cluster IP when it stops being an ExternalName service and drops what its
// new type makes meaningless.
func (sv services) prepareForUpdate(o, oldObj Object) {
	s, old := o.(*corev1.Service), oldObj.(*corev1.Service)
	defaultServiceSpec(s) // the status is the stored one
	patchAllocatedValues(s, old)
	normalizeClusterIPs(s, old)
	initIPFamilies(s, old)
	if old.Spec.Type == corev1.ServiceTypeExternalName {
		sv.allocate(s)
	}
	dropTypeDependentFields(s, old)
	sv.allocateNodePorts(s, old)
}

// allocate gives s a cluster IP: the next free one when it asks for none, the
// one it asks for when that is free. It does nothing for ExternalName and
// headless services, or when the IP fields are invalid.
func (sv services) allocate(s *corev1.Service) {
	spec := &s.Spec
	if spec.Type == corev1.ServiceTypeExternalName || len(serviceIPFieldErrors(s)) > 0 {
		return
	}
	switch {
	case spec.ClusterIP == "" && len(spec.ClusterIPs) == 0:
		addr, err := sv.ips.allocateNext(s.UID)
		if err != nil {
			return // validate reports the full range
		}
		spec.ClusterIP = addr.String()
		spec.ClusterIPs = []string{spec.ClusterIP}
	case spec.ClusterIP != clusterIPNone:
		if addr, err := netip.ParseAddr(spec.ClusterIP); err == nil {
			_ = sv.ips.reserve(s.UID, addr) // validate reports a failure
		}
	}
}

// release frees the cluster IPs and node ports of a deleted (or never
// stored) service.
func (sv services) release(o Object) {
	if uid := o.GetUID(); uid != "" {
		sv.ips.release(uid)
		sv.ports.release(uid)
	}
}

// retain frees the cluster IPs and node ports a service's UID holds that
// its stored state does not use: those an update dropped (a change to
// ExternalName, to ClusterIP), and those a failed update had reserved.
func (sv services) retain(o Object) {
	s := o.(*corev1.Service)
	if s.UID == "" {
		return
	}
	ips := map[netip.Addr]bool{}
	for _, ip := range s.Spec.ClusterIPs {
		if a, err := netip.ParseAddr(ip); err == nil {
			ips[a] = true
		}
	}
	sv.ips.retain(s.UID, ips)
	keep := map[int]bool{}
	for p := range nodePorts(s) {
		keep[int(p)] = true
	}
	if s.Spec.HealthCheckNodePort != 0 {
		keep[int(s.Spec.HealthCheckNodePort)] = true
	}
	sv.ports.retain(s.UID, keep)
}

// allocateNodePorts gives a NodePort or LoadBalancer service (unless it
// turned allocateLoadBalancerNodePorts off) a node port for every port that
// has none, and reserves the node ports it asks for that old (nil on create)
// did not have, as kube-apiserver's service storage does; on create, ports
// with the same port number (on different protocols) share one. A
// LoadBalancer with the Local traffic policy also gets its health check
// node port. Problems with requested ports are left for validate to report.
func (sv services) allocateNodePorts(s, old *corev1.Service) {
	if !needsNodePort(s) {
		return
	}
	had := map[int32]bool{}
	if old != nil && needsNodePort(old) {
		had = nodePorts(old)
		if old.Spec.HealthCheckNodePort != 0 {
			had[old.Spec.HealthCheckNodePort] = true
		}
	}
	allocate := s.Spec.Type == corev1.ServiceTypeNodePort ||
		s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	byPort := map[int32]int32{}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		switch {
		case p.NodePort != 0:
			if !had[p.NodePort] {
				_ = sv.ports.reserve(s.UID, int(p.NodePort))
			}
		case !allocate:
			continue
		case old == nil && requestedNodePort(s, p.Port) != 0:
			p.NodePort = requestedNodePort(s, p.Port)
		case old == nil && byPort[p.Port] != 0:
			p.NodePort = byPort[p.Port]
		default:
			if n, err := sv.ports.allocateNext(s.UID); err == nil {
				p.NodePort = int32(n)
			}
		}
		byPort[p.Port] = p.NodePort
	}
	if needsHealthCheckNodePort(s) {
		switch hc := s.Spec.HealthCheckNodePort; {
		case hc == 0:
			if n, err := sv.ports.allocateNext(s.UID); err == nil {
				s.Spec.HealthCheckNodePort = int32(n)
			}
		case !had[hc]:
			_ = sv.ports.reserve(s.UID, int(hc))
		}
	}
}

// admit refuses a NodePort or LoadBalancer service that asks for node ports
// none of which could be given (the range is full), as kube-apiserver does:
// 500, since nothing is wrong with the request.
// The same goes for a health check node port asked for that is taken or out
// of the range.
func (sv services) admit(o, oldObj Object) *metav1.Status {
	s := o.(*corev1.Service)
	if hc := s.Spec.HealthCheckNodePort; needsHealthCheckNodePort(s) && hc != 0 {
		old, _ := oldObj.(*corev1.Service)
		if old == nil || !needsHealthCheckNodePort(old) || old.Spec.HealthCheckNodePort != hc {
			if err := sv.ports.check(s.UID, int(hc)); err != nil {
				if errors.Is(err, errNotHeld) {
					err = errPortAllocated
				}
				return metav1.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: %w", hc, err))
			}
		}
	}
	if !needsNodePort(s) || s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.AllocateLoadBalancerNodePorts != nil && !*s.Spec.AllocateLoadBalancerNodePorts {
		return nil
	}
	for _, p := range s.Spec.Ports {
		if p.NodePort == 0 {
			return metav1.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", errRangeFull))
		}
	}
	return nil
}

// requestedNodePort is the node port another port of s with the same port
// number asks for, or 0.
func requestedNodePort(s *corev1.Service, port int32) int32 {
	for _, p := range s.Spec.Ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

// nodePortErrors reports the node ports a service asks for that old (nil
// on create) did not have and that are not its: out of the range, or taken
// by another service.
func (sv services) nodePortErrors(s, old *corev1.Service) metav1.FieldErrors {
	if !needsNodePort(s) {
		return nil
	}
	had := map[int32]bool{}
	if old != nil && needsNodePort(old) {
		had = nodePorts(old)
	}
	var errs metav1.FieldErrors
	for i, p := range s.Spec.Ports {
		if p.NodePort == 0 || had[p.NodePort] {
			continue
		}
		if err := sv.ports.check(s.UID, int(p.NodePort)); err != nil {
			if errors.Is(err, errNotHeld) {
				err = errPortAllocated // free now, but taken when it was asked for
			}
			errs = append(errs, metav1.FieldInvalid("spec.ports["+strconv.Itoa(i)+"].nodePort", p.NodePort, err.Error()))
			break // kube-apiserver stops at the first
		}
	}
	return errs
}

// validate checks a service's IP fields and, for a cluster IP that is new,
// that it was allocated to it; on update, that the cluster IP did not change.
func (sv services) validate(o, oldObj Object) metav1.FieldErrors {
	s := o.(*corev1.Service)
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	// kube-apiserver checks the ports before the IP fields: a service with
	// a virtual IP needs at least one.
	var errs metav1.FieldErrors
	if len(s.Spec.Ports) == 0 && !isHeadless(s) {
		errs = append(errs, metav1.FieldRequired("spec.ports", ""))
	}
	if errs = append(errs, serviceIPFieldErrors(s)...); len(errs) > 0 {
		return errs
	}
	var old *corev1.Service
	if oldObj != nil {
		old = oldObj.(*corev1.Service)
	}
	if old != nil && old.Spec.Type != corev1.ServiceTypeExternalName {
		if errs := clusterIPChangeErrors(s, old); len(errs) > 0 {
			return errs
		}
		return sv.nodePortErrors(s, old)
	}
	if isHeadless(s) {
		return sv.nodePortErrors(s, old)
	}
	ips := s.Spec.ClusterIPs
	if len(ips) == 0 {
		// PrepareForCreate (or PrepareForUpdate) found the range full, or
		// was not called.
		err := errNotHeld
		if sv.ips.full() {
			err = errRangeFull
		}
		return metav1.FieldErrors{metav1.FieldInternal("spec.clusterIPs", fmt.Errorf("failed to allocate a serviceIP: %w", err))}
	}
	addr, _ := netip.ParseAddr(ips[0]) // valid: serviceIPFieldErrors checked it
	if err := sv.ips.check(s.UID, addr); err != nil {
		if errors.Is(err, errNotHeld) {
			err = errIPAllocated // free now, but taken when PrepareForCreate asked for it
		}
		return metav1.FieldErrors{metav1.FieldInvalid("spec.clusterIPs", ips, fmt.Sprintf("failed to allocate IP %s: %v", ips[0], err))}
	}
	return sv.nodePortErrors(s, old)
}

// clusterIPChangeErrors refuses an update that changes the cluster IP of a
// service that has one. A client that leaves it out keeps it
// (PrepareForUpdate fills it in).
func clusterIPChangeErrors(s, old *corev1.Service) metav1.FieldErrors {
	if isHeadless(s) && isHeadless(old) || len(s.Spec.ClusterIPs) == 0 {
		return nil
	}
	var errs metav1.FieldErrors
	n := min(len(s.Spec.ClusterIPs), len(old.Spec.ClusterIPs))
	if len(s.Spec.ClusterIPs) > len(old.Spec.ClusterIPs) || len(s.Spec.ClusterIPs) < len(old.Spec.ClusterIPs) {
		n = min(n, 1) // an upgrade or downgrade may only keep the primary
	}
	for i := range n {
		if s.Spec.ClusterIPs[i] != old.Spec.ClusterIPs[i] {
			errs = append(errs, metav1.FieldInvalid("spec.clusterIPs["+strconv.Itoa(i)+"]", s.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

// serviceIPFieldErrors checks the IP fields of a service that is not
// ExternalName, as kube-apiserver does before allocating: clusterIP and
// clusterIPs agree, the addresses are valid, the families and policy are
// known, and the cluster (single-stack IPv4) supports them.
func serviceIPFieldErrors(s *corev1.Service) metav1.FieldErrors {
	spec := &s.Spec
	var errs metav1.FieldErrors
	switch {
	case spec.ClusterIP != "" && len(spec.ClusterIPs) == 0:
		errs = append(errs, metav1.FieldRequired("spec.clusterIPs", ""))
	case spec.ClusterIP != "" && spec.ClusterIPs[0] != spec.ClusterIP:
		errs = append(errs, metav1.FieldInvalid("spec.clusterIPs", spec.ClusterIPs, "first value must match `clusterIP`"))
	case spec.ClusterIP == "" && len(spec.ClusterIPs) != 0:
		errs = append(errs, metav1.FieldInvalid("spec.clusterIPs", spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := map[corev1.IPFamily]bool{}
	for i, f := range spec.IPFamilies {
		path := "spec.ipFamilies[" + strconv.Itoa(i) + "]"
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			errs = append(errs, metav1.FieldNotSupported(path, f, []string{string(corev1.IPv4Protocol), string(corev1.IPv6Protocol)}))
		}
		if seen[f] {
			errs = append(errs, metav1.FieldDuplicate(path, f))
		}
		seen[f] = true
	}
	if p := spec.IPFamilyPolicy; p != nil {
		switch *p {
		case corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack:
		default:
			errs = append(errs, metav1.FieldNotSupported("spec.ipFamilyPolicy", p, []string{
				string(corev1.IPFamilyPolicyPreferDualStack), string(corev1.IPFamilyPolicyRequireDualStack), string(corev1.IPFamilyPolicySingleStack)}))
		}
	}
	badIP := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == clusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				badIP = true
				errs = append(errs, metav1.FieldInvalid("spec.clusterIPs", spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		if _, err := netip.ParseAddr(ip); err != nil {
			badIP = true
			errs = append(errs, metav1.FieldInvalid("spec.clusterIPs["+strconv.Itoa(i)+"]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
		}
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, metav1.FieldInvalid("spec.clusterIPs", spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if badIP || len(errs) > 0 {
		return errs
	}
	// This cluster is single-stack IPv4.
	for i, ip := range spec.ClusterIPs {
		if ip == clusterIPNone {
			break
		}
		if addr, _ := netip.ParseAddr(ip); !addr.Is4() {
			errs = append(errs, metav1.FieldInvalid("spec.clusterIPs["+strconv.Itoa(i)+"]", spec.ClusterIPs, "IPv6 is not configured on this cluster"))
		}
	}
	if len(errs) > 0 || isHeadless(s) && len(spec.Selector) == 0 {
		return errs // headless services without selectors may list both families
	}
	if p := spec.IPFamilyPolicy; p != nil && *p == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, metav1.FieldInvalid("spec.ipFamilyPolicy", p, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol {
			errs = append(errs, metav1.FieldInvalid("spec.ipFamilies["+strconv.Itoa(i)+"]", f, "not configured on this cluster"))
		}
	}
	return errs
}

func isHeadless(s *corev1.Service) bool {
	return len(s.Spec.ClusterIPs) == 1 && s.Spec.ClusterIPs[0] == clusterIPNone
}

// normalizeClusterIPs reconciles clusterIP and clusterIPs the way an old
// client (one that knows only clusterIP) and a new one mean them: on create a
// lone clusterIP is copied into clusterIPs; on update, clusterIPs left out
// next to an unchanged clusterIP are kept, and a changed or cleared clusterIP
// next to unchanged clusterIPs carries them along.
func normalizeClusterIPs(s, old *corev1.Service) {
	spec := &s.Spec
	if old == nil {
		if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
			spec.ClusterIPs = []string{spec.ClusterIP}
		}
		return
	}
	if len(old.Spec.ClusterIPs) > 0 && len(spec.ClusterIPs) == 0 && old.Spec.ClusterIP == spec.ClusterIP {
		spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
	}
	if old.Spec.ClusterIP != spec.ClusterIP {
		if old.Spec.ClusterIP != "" && spec.ClusterIP == "" && slices.Equal(old.Spec.ClusterIPs, spec.ClusterIPs) {
			spec.ClusterIPs = nil
		}
		if slices.Equal(old.Spec.ClusterIPs, spec.ClusterIPs) {
			spec.ClusterIPs = []string{spec.ClusterIP}
		}
	}
}

// initIPFamilies chooses the IP family policy (the stored one on update;
// RequireDualStack for a headless service without selector; SingleStack
// otherwise) and fills the IP families from the cluster IPs, or with the
// cluster's family, IPv4 (and IPv6 for a headless service without selector
// that is not single-stack).
func initIPFamilies(s, old *corev1.Service) {
	spec := &s.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return
	}
	headlessSelectorless := spec.ClusterIP == clusterIPNone && len(spec.Selector) == 0
	if spec.IPFamilyPolicy == nil {
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			spec.IPFamilyPolicy = new(*old.Spec.IPFamilyPolicy)
		case headlessSelectorless:
			spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyRequireDualStack)
		default:
			spec.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
		}
	}
	for i, ip := range spec.ClusterIPs {
		if ip == clusterIPNone {
			break
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil || !addr.Is4() {
			break // validation reports it
		}
		if i >= len(spec.IPFamilies) {
			spec.IPFamilies = append(spec.IPFamilies, corev1.IPv4Protocol)
		}
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if headlessSelectorless && len(spec.IPFamilies) < 2 && *spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		other := corev1.IPv6Protocol
		if spec.IPFamilies[0] == corev1.IPv6Protocol {
			other = corev1.IPv4Protocol
		}
		spec.IPFamilies = append(spec.IPFamilies, other)
	}
}

// patchAllocatedValues fills in what the server allocated and an update left
// out, while the service still needs it: cluster IPs, node ports (by port
// name, unless another port now uses them) and the health check node port.
func patchAllocatedValues(s, old *corev1.Service) {
	spec, ospec := &s.Spec, &old.Spec
	if ospec.Type != corev1.ServiceTypeExternalName && spec.Type != corev1.ServiceTypeExternalName {
		if spec.ClusterIP == "" {
			spec.ClusterIP = ospec.ClusterIP
		}
		if len(spec.ClusterIPs) == 0 && len(ospec.ClusterIPs) > 0 {
			spec.ClusterIPs = slices.Clone(ospec.ClusterIPs)
		}
	}
	if needsNodePort(old) && needsNodePort(s) {
		used := map[int32]bool{}
		newPorts := nodePorts(s)
		for p := range nodePorts(old) {
			if newPorts[p] {
				used[p] = true
			}
		}
		byName := map[string]int32{}
		for _, p := range ospec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range spec.Ports {
			if p := &spec.Ports[i]; p.NodePort == 0 && !used[byName[p.Name]] {
				p.NodePort = byName[p.Name]
			}
		}
	}
	if needsHealthCheckNodePort(old) && needsHealthCheckNodePort(s) && spec.HealthCheckNodePort == 0 {
		spec.HealthCheckNodePort = ospec.HealthCheckNodePort
	}
}

// dropTypeDependentFields clears, on a type change, the fields the new type
// does not use, when the client did not change them itself (a changed value
// is the client's intent, and validation judges it).
func dropTypeDependentFields(s, old *corev1.Service) {
	spec, ospec := &s.Spec, &old.Spec
	if ospec.Type != corev1.ServiceTypeExternalName && spec.Type == corev1.ServiceTypeExternalName {
		if slices.Equal(ospec.ClusterIPs, spec.ClusterIPs) {
			spec.ClusterIP, spec.ClusterIPs = "", nil
		}
		if slices.Equal(ospec.IPFamilies, spec.IPFamilies) && equalPtr(ospec.IPFamilyPolicy, spec.IPFamilyPolicy) {
			spec.IPFamilies, spec.IPFamilyPolicy = nil, nil
		}
	}
	if needsNodePort(old) && !needsNodePort(s) && subset(nodePorts(s), nodePorts(old)) {
		for i := range spec.Ports {
			spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(old) && !needsHealthCheckNodePort(s) && ospec.HealthCheckNodePort == spec.HealthCheckNodePort {
		spec.HealthCheckNodePort = 0
	}
	if ospec.Type == corev1.ServiceTypeLoadBalancer && spec.Type != corev1.ServiceTypeLoadBalancer {
		if equalPtr(ospec.AllocateLoadBalancerNodePorts, spec.AllocateLoadBalancerNodePorts) {
			spec.AllocateLoadBalancerNodePorts = nil
		}
		if equalPtr(ospec.LoadBalancerClass, spec.LoadBalancerClass) {
			spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(s) && ospec.ExternalTrafficPolicy == spec.ExternalTrafficPolicy {
		spec.ExternalTrafficPolicy = ""
	}
	if spec.Type != corev1.ServiceTypeLoadBalancer {
		s.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

func needsNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func needsHealthCheckNodePort(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// nodePorts returns the node ports a service's ports use.
func nodePorts(s *corev1.Service) map[int32]bool {
	m := map[int32]bool{}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 {
			m[p.NodePort] = true
		}
	}
	return m
}

func subset(a, b map[int32]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func equalPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
