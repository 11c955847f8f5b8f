package registry

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

func TestIPAllocatorBands(t *testing.T) {
	tests := []struct {
		cidr       string
		first      string // first dynamic address
		size, band uint32
	}{
		{"10.96.0.0/12", "10.96.1.1", 1<<20 - 2, 256}, // kube-apiserver's band: min(max(16, size/16), 256)
		{"10.0.0.0/24", "10.0.0.17", 254, 16},
		{"10.0.0.0/20", "10.0.1.1", 4094, 256},
		{"10.0.0.0/21", "10.0.0.129", 2046, 128},
		{"10.0.0.0/28", "10.0.0.1", 14, 0}, // too small for bands
		{"10.0.0.7/30", "10.0.0.5", 2, 0},  // masked
	}
	for _, tt := range tests {
		a, err := newIPAllocator(netip.MustParsePrefix(tt.cidr))
		if err != nil {
			t.Fatal(err)
		}
		if a.size != tt.size || a.band != tt.band {
			t.Errorf("%s: size %d band %d, want %d %d", tt.cidr, a.size, a.band, tt.size, tt.band)
		}
		if got, err := a.allocateNext("u"); err != nil || got.String() != tt.first {
			t.Errorf("%s: first %v %v, want %s", tt.cidr, got, err, tt.first)
		}
	}
	for _, bad := range []string{"fd00::/64", "10.0.0.0/31", "10.0.0.1/32"} {
		if _, err := BuiltinWith(Options{ServiceCIDR: netip.MustParsePrefix(bad)}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestIPAllocator(t *testing.T) {
	a, err := newIPAllocator(netip.MustParsePrefix("10.0.0.0/27")) // .1-.30, upper band from .17
	if err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	next := func(uid metav1.UID, want string) {
		t.Helper()
		if got, err := a.allocateNext(uid); err != nil || got.String() != want {
			t.Fatalf("allocateNext(%s) = %v, %v; want %s", uid, got, err, want)
		}
	}
	next("a", "10.0.0.17")
	next("a", "10.0.0.17") // a retried create keeps its address
	next("b", "10.0.0.18")
	if err := a.reserve("c", ip("10.0.0.19")); err != nil {
		t.Fatal(err)
	}
	next("d", "10.0.0.20") // skips the reserved one
	if err := a.reserve("e", ip("10.0.0.18")); !errors.Is(err, errIPAllocated) {
		t.Errorf("taken address: %v", err)
	}
	if err := a.reserve("b", ip("10.0.0.18")); err != nil {
		t.Errorf("own address: %v", err)
	}
	for _, out := range []string{"10.0.0.0", "10.0.0.31", "10.0.1.1", "fd00::1"} {
		err := a.reserve("e", ip(out))
		want := "the provided IP (" + out + ") is not in the valid range. The range of valid IPs is 10.0.0.0/27"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v", out, err)
		}
	}
	if err := a.check("b", ip("10.0.0.18")); err != nil {
		t.Errorf("check own: %v", err)
	}
	if err := a.check("a", ip("10.0.0.18")); !errors.Is(err, errIPAllocated) {
		t.Errorf("check other's: %v", err)
	}
	if err := a.check("a", ip("10.0.0.25")); !errors.Is(err, errNotHeld) {
		t.Errorf("check free: %v", err)
	}
	a.release("b")
	a.release("b") // idempotent
	if err := a.reserve("e", ip("10.0.0.18")); err != nil {
		t.Errorf("released address: %v", err)
	}
	// Fill the range: the upper band, then the lower band, then full.
	for i := 0; ; i++ {
		_, err := a.allocateNext(metav1.UID("fill-" + string(rune('a'+i))))
		if errors.Is(err, errRangeFull) {
			break
		}
		if err != nil || i > 30 {
			t.Fatalf("filling: %v after %d", err, i)
		}
	}
	if len(a.owner) != 30 {
		t.Errorf("%d addresses allocated, want 30", len(a.owner))
	}
	a.release("a")
	next("z", "10.0.0.17")
}

func TestIPAllocatorConcurrent(t *testing.T) {
	a, err := newIPAllocator(defaultServiceCIDR)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]netip.Addr, 100)
	for i := range got {
		wg.Go(func() {
			addr, err := a.allocateNext(metav1.UID(rune(i + 1000)))
			if err != nil {
				t.Error(err)
			}
			got[i] = addr
		})
	}
	wg.Wait()
	seen := map[netip.Addr]bool{}
	for _, addr := range got {
		if seen[addr] {
			t.Errorf("%s handed out twice", addr)
		}
		seen[addr] = true
	}
}

// newService returns a service with spec; one without ports gets port 80,
// which a service with a virtual IP needs to be valid (these tests are about
// its other fields).
func newService(uid, name string, spec corev1.ServiceSpec) *corev1.Service {
	if len(spec.Ports) == 0 {
		spec.Ports = []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}
	}
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: metav1.UID(uid)}, Spec: spec}
}

func TestServiceCreate(t *testing.T) {
	single, dual := new(corev1.IPFamilyPolicySingleStack), new(corev1.IPFamilyPolicyRequireDualStack)
	v4, v4v6 := []corev1.IPFamily{corev1.IPv4Protocol}, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	tests := []struct {
		name         string
		spec         corev1.ServiceSpec
		wantIPs      []string
		wantFamilies []corev1.IPFamily
		wantPolicy   *corev1.IPFamilyPolicy
		wantErr      string
	}{
		{name: "allocated (golden 18)",
			spec:    corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
			wantIPs: []string{"10.96.1.2"}, wantFamilies: v4, wantPolicy: single},
		{name: "requested", spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10"},
			wantIPs: []string{"10.96.0.10"}, wantFamilies: v4, wantPolicy: single},
		{name: "requested in both fields", spec: corev1.ServiceSpec{ClusterIP: "10.96.0.11", ClusterIPs: []string{"10.96.0.11"}},
			wantIPs: []string{"10.96.0.11"}, wantFamilies: v4, wantPolicy: single},
		{name: "prefer dual stack on a single-stack cluster", spec: corev1.ServiceSpec{IPFamilyPolicy: new(corev1.IPFamilyPolicyPreferDualStack)},
			wantIPs: []string{"10.96.1.3"}, wantFamilies: v4, wantPolicy: new(corev1.IPFamilyPolicyPreferDualStack)},
		{name: "headless", spec: corev1.ServiceSpec{ClusterIP: "None", Selector: map[string]string{"app": "web"}},
			wantIPs: []string{"None"}, wantFamilies: v4, wantPolicy: single},
		{name: "headless without selector", spec: corev1.ServiceSpec{ClusterIP: "None"},
			wantIPs: []string{"None"}, wantFamilies: v4v6, wantPolicy: dual},
		{name: "headless without selector, single stack", spec: corev1.ServiceSpec{ClusterIP: "None", IPFamilyPolicy: single},
			wantIPs: []string{"None"}, wantFamilies: v4, wantPolicy: single},
		{name: "external name", spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
		{name: "taken", spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10"},
			wantErr: `spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated`},
		{name: "out of range", spec: corev1.ServiceSpec{ClusterIP: "192.0.2.1"},
			wantErr: `spec.clusterIPs: Invalid value: ["192.0.2.1"]: failed to allocate IP 192.0.2.1: the provided IP (192.0.2.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12`},
		{name: "not an address", spec: corev1.ServiceSpec{ClusterIP: "ten"},
			wantErr: `spec.clusterIPs[0]: Invalid value: "ten": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{name: "clusterIPs without clusterIP", spec: corev1.ServiceSpec{ClusterIPs: []string{"10.96.0.12"}},
			wantErr: "spec.clusterIPs: Invalid value: [\"10.96.0.12\"]: must be empty when `clusterIP` is not specified"},
		{name: "clusterIPs disagree", spec: corev1.ServiceSpec{ClusterIP: "10.96.0.12", ClusterIPs: []string{"10.96.0.13"}},
			wantErr: "spec.clusterIPs: Invalid value: [\"10.96.0.13\"]: first value must match `clusterIP`"},
		{name: "IPv6 address", spec: corev1.ServiceSpec{ClusterIP: "fd00::1"},
			wantErr: `spec.clusterIPs[0]: Invalid value: ["fd00::1"]: IPv6 is not configured on this cluster`},
		{name: "IPv6 family", spec: corev1.ServiceSpec{IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol}},
			wantErr: `spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`},
		{name: "dual stack required", spec: corev1.ServiceSpec{IPFamilyPolicy: dual},
			wantErr: `spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{name: "unknown family", spec: corev1.ServiceSpec{IPFamilies: []corev1.IPFamily{"IPv5"}},
			wantErr: `spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"`},
	}
	res := Builtin().Get("", "v1", "services")
	// Something holds the first dynamic address already.
	first := newService("uid-first", "first", corev1.ServiceSpec{})
	res.PrepareForCreate(first)
	if first.Spec.ClusterIP != "10.96.1.1" {
		t.Fatalf("first service got %q", first.Spec.ClusterIP)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newService("uid-"+string(rune('a'+i)), "s", tt.spec)
			res.PrepareForCreate(s)
			errs := res.Validate(s, nil)
			if tt.wantErr != "" {
				if errs.Message() != tt.wantErr {
					t.Errorf("errors\n got  %s\n want %s", errs.Message(), tt.wantErr)
				}
				res.Release(s)
				return
			}
			if len(errs) > 0 {
				t.Fatalf("invalid: %s", errs.Message())
			}
			if want := strings.Join(tt.wantIPs, ","); strings.Join(s.Spec.ClusterIPs, ",") != want || len(tt.wantIPs) > 0 && s.Spec.ClusterIP != tt.wantIPs[0] {
				t.Errorf("clusterIP %q clusterIPs %q, want %s", s.Spec.ClusterIP, s.Spec.ClusterIPs, want)
			}
			sameJSON(t, s.Spec.IPFamilies, tt.wantFamilies)
			sameJSON(t, s.Spec.IPFamilyPolicy, tt.wantPolicy)
			if s.Status.LoadBalancer.Ingress != nil {
				t.Errorf("status kept")
			}
		})
	}
}

func TestServiceRelease(t *testing.T) {
	res := mustBuiltin(t, Options{ServiceCIDR: netip.MustParsePrefix("10.0.0.0/29")}).Get("", "v1", "services")
	var held []*corev1.Service
	for i := range 6 {
		s := newService("uid-"+string(rune('a'+i)), "s", corev1.ServiceSpec{})
		res.PrepareForCreate(s)
		if errs := res.Validate(s, nil); len(errs) > 0 {
			t.Fatal(errs.Message())
		}
		held = append(held, s)
	}
	full := newService("uid-full", "s", corev1.ServiceSpec{})
	res.PrepareForCreate(full)
	if got, want := res.Validate(full, nil).Message(), "spec.clusterIPs: Internal error: failed to allocate a serviceIP: range is full"; got != want {
		t.Errorf("full range: %s", got)
	}
	// A dry run or a failed create gives its address back; so does a delete.
	res.Release(held[2])
	again := newService("uid-again", "s", corev1.ServiceSpec{})
	res.PrepareForCreate(again)
	if again.Spec.ClusterIP != held[2].Spec.ClusterIP || len(res.Validate(again, nil)) > 0 {
		t.Errorf("got %q, want the released %q", again.Spec.ClusterIP, held[2].Spec.ClusterIP)
	}
	// Releasing an object that holds nothing frees nobody else's address.
	res.Release(newService("uid-other", "s", corev1.ServiceSpec{ClusterIP: again.Spec.ClusterIP}))
	res.Release(&corev1.Service{})
	if errs := res.Validate(again, nil); len(errs) > 0 {
		t.Errorf("after foreign release: %s", errs.Message())
	}
}

func TestServicePrepareForUpdate(t *testing.T) {
	created := func(spec corev1.ServiceSpec) *corev1.Service {
		s := newService("uid-old", "web", spec)
		s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80}}
		return s
	}
	tests := []struct {
		name    string
		old     corev1.ServiceSpec
		edit    func(next *corev1.Service)
		check   func(t *testing.T, next *corev1.Service)
		wantErr string
	}{
		{name: "cluster IP kept when left out",
			edit: func(s *corev1.Service) {
				s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = "", nil, nil, nil
			},
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "10.96.1.1" || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != "10.96.1.1" {
					t.Errorf("clusterIP %q %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
				}
				sameJSON(t, s.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol})
				sameJSON(t, s.Spec.IPFamilyPolicy, new(corev1.IPFamilyPolicySingleStack))
			}},
		{name: "old client sends clusterIP only",
			edit: func(s *corev1.Service) { s.Spec.ClusterIPs = nil },
			check: func(t *testing.T, s *corev1.Service) {
				sameJSON(t, s.Spec.ClusterIPs, []string{"10.96.1.1"})
			}},
		{name: "changed cluster IP refused",
			edit:    func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.50", []string{"10.96.0.50"} },
			wantErr: `spec.clusterIPs[0]: Invalid value: ["10.96.0.50"]: may not change once set`},
		{name: "changed clusterIP alone refused",
			edit:    func(s *corev1.Service) { s.Spec.ClusterIP = "10.96.0.50" },
			wantErr: `spec.clusterIPs[0]: Invalid value: ["10.96.0.50"]: may not change once set`},
		{name: "defaults applied",
			edit: func(s *corev1.Service) { s.Spec.SessionAffinity, s.Spec.Ports[0].Protocol = "", "" },
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.SessionAffinity != corev1.ServiceAffinityNone || s.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
					t.Errorf("not defaulted: %+v", s.Spec)
				}
			}},
		{name: "node ports kept by port name",
			old: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort},
			edit: func(s *corev1.Service) {
				s.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: 443}, {Name: "http", Port: 8080}}
			},
			check: func(t *testing.T, s *corev1.Service) {
				// The new port gets one of its own, from the range.
				if np := s.Spec.Ports[0].NodePort; np < 30000 || np > 32767 || np == 30080 || s.Spec.Ports[1].NodePort != 30080 {
					t.Errorf("node ports %+v", s.Spec.Ports)
				}
			}},
		{name: "to ExternalName drops the cluster IP and families",
			edit: func(s *corev1.Service) {
				s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
			},
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "" || s.Spec.ClusterIPs != nil || s.Spec.IPFamilies != nil || s.Spec.IPFamilyPolicy != nil {
					t.Errorf("kept %+v", s.Spec)
				}
			}},
		{name: "from ExternalName allocates",
			old:  corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"},
			edit: func(s *corev1.Service) { s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeClusterIP, "" },
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "10.96.1.1" || s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
					t.Errorf("got %+v", s.Spec)
				}
			}},
		{name: "load balancer to cluster IP",
			old: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
			edit: func(s *corev1.Service) {
				s.Spec.Type = corev1.ServiceTypeClusterIP
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}
			},
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.AllocateLoadBalancerNodePorts != nil || s.Spec.ExternalTrafficPolicy != "" || s.Spec.Ports[0].NodePort != 0 ||
					s.Status.LoadBalancer.Ingress != nil {
					t.Errorf("kept %+v %+v", s.Spec, s.Status)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Builtin().Get("", "v1", "services")
			old := created(tt.old)
			if needsNodePort(old) {
				old.Spec.Ports[0].NodePort = 30080
			}
			res.PrepareForCreate(old)
			if errs := res.Validate(old, nil); len(errs) > 0 {
				t.Fatal(errs.Message())
			}
			before := old.DeepCopy()
			next := old.DeepCopy()
			tt.edit(next)
			res.PrepareForUpdate(next, old)
			sameJSON(t, old, before) // old untouched
			errs := res.Validate(next, old)
			if errs.Message() != tt.wantErr {
				t.Fatalf("errors\n got  %s\n want %s", errs.Message(), tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, next)
			}
		})
	}
}

// A service with a virtual IP needs a port (kube-apiserver checks the ports
// before the IP fields); a headless or ExternalName one does not.
func TestServicePortsRequired(t *testing.T) {
	res := Builtin().Get("", "v1", "services")
	for _, tt := range []struct {
		name string
		spec corev1.ServiceSpec
		want string
	}{
		{"cluster IP", corev1.ServiceSpec{}, "spec.ports: Required value"},
		{"cluster IP and a bad family", corev1.ServiceSpec{IPFamilies: []corev1.IPFamily{"IPv5"}},
			`[spec.ports: Required value, spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"]`},
		{"headless", corev1.ServiceSpec{ClusterIP: "None"}, ""},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "uid-ports-" + metav1.UID(tt.name)}, Spec: tt.spec}
			res.PrepareForCreate(s)
			defer res.Release(s)
			if got := res.Validate(s, nil).Message(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestServiceValidateWithoutPrepare(t *testing.T) {
	res := Builtin().Get("", "v1", "services")
	s := newService("uid-s", "s", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP})
	want := "spec.clusterIPs: Internal error: failed to allocate a serviceIP: no address was allocated to the object"
	if got := res.Validate(s, nil).Message(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
