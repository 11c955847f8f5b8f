package registry

import (
	"strconv"
	"strings"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PortRange
		err  string
	}{
		{"30000-32767", PortRange{30000, 2768}, ""},
		{" 30000-32767 ", PortRange{30000, 2768}, ""},
		{"20000+99", PortRange{20000, 100}, ""},
		{"8080", PortRange{8080, 1}, ""},
		{"1-65535", PortRange{1, 65535}, ""},
		{"", PortRange{}, "empty"},
		{"0-10", PortRange{}, "invalid port"},
		{"1-65536", PortRange{}, "invalid port"},
		{"32767-30000", PortRange{}, "before its start"},
		{"a-b", PortRange{}, "invalid port"},
		{"30000+", PortRange{}, "invalid offset"},
		{"65535+1", PortRange{}, "invalid offset"},
		{"30000-", PortRange{}, "invalid port"},
	} {
		got, err := ParsePortRange(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePortRange(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, err := ParsePortRange(got.String()); err != nil || back != got {
			t.Errorf("%v does not round-trip through %q: %v %v", got, got.String(), back, err)
		}
	}
}

func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"30000-32767", "20000+99", "8080", "", "-", "+", "1-65535", "99999999999999999999-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParsePortRange(s)
		if err != nil {
			return
		}
		if r.Base < 1 || r.Size < 1 || r.Base+r.Size-1 > 65535 {
			t.Fatalf("ParsePortRange(%q) = %v, outside 1-65535", s, r)
		}
		if _, err := newPortAllocator(r); err != nil {
			t.Fatalf("ParsePortRange(%q) = %v, which no allocator takes: %v", s, r, err)
		}
		if back, err := ParsePortRange(r.String()); err != nil || back != r {
			t.Fatalf("%v does not round-trip: %v %v", r, back, err)
		}
	})
}

func TestPortAllocator(t *testing.T) {
	a, err := newPortAllocator(PortRange{Base: 31000, Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.reserve("a", 31001); err != nil {
		t.Fatal(err)
	}
	if err := a.reserve("a", 31001); err != nil {
		t.Errorf("reserving a port again for its owner: %v", err)
	}
	if err := a.reserve("b", 31001); err != errPortAllocated {
		t.Errorf("taken port: %v", err)
	}
	if err := a.reserve("b", 80); err == nil || err.Error() != "provided port is not in the valid range. The range of valid ports is 31000-31002" {
		t.Errorf("out of range: %v", err)
	}
	var got []int
	for range 2 {
		p, err := a.allocateNext("b")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if got[0] != 31000 || got[1] != 31002 {
		t.Errorf("allocated %v, want the free 31000 and 31002", got)
	}
	if _, err := a.allocateNext("c"); err != errRangeFull {
		t.Errorf("full range: %v", err)
	}
	if err := a.check("b", 31001); err != errPortAllocated {
		t.Errorf("check of another's port: %v", err)
	}
	// retain keeps what is listed and frees the rest; release frees all.
	a.retain("b", map[int]bool{31002: true})
	if err := a.check("b", 31000); err != errNotHeld {
		t.Errorf("after retain, 31000: %v, want free", err)
	}
	if err := a.check("b", 31002); err != nil {
		t.Errorf("after retain, 31002: %v, want kept", err)
	}
	a.release("a")
	if p, err := a.allocateNext("c"); err != nil || p == 31002 {
		t.Errorf("after release: %d %v", p, err)
	}
}

// Node ports of services: allocated for NodePort and LoadBalancer services
// (not when a load balancer turns them off), shared by ports with the same
// number, reserved when asked for and refused with kube-apiserver's messages,
// kept across updates, freed by Release and Retain.
func TestServiceNodePorts(t *testing.T) {
	res := mustBuiltin(t, Options{NodePortRange: PortRange{Base: 30000, Size: 10}}).Get("", "v1", "services")
	create := func(uid, name string, spec corev1.ServiceSpec) (*corev1.Service, string) {
		s := newService(uid, name, spec)
		res.PrepareForCreate(s)
		if st := res.Admit(s, nil); st != nil {
			return s, st.Message
		}
		return s, res.Validate(s, nil).Message()
	}
	np := func(ports ...corev1.ServicePort) corev1.ServiceSpec {
		return corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}
	}

	a, msg := create("a", "a", np(corev1.ServicePort{Name: "tcp", Port: 80, Protocol: "TCP"}, corev1.ServicePort{Name: "udp", Port: 80, Protocol: "UDP"},
		corev1.ServicePort{Name: "other", Port: 81}))
	if msg != "" {
		t.Fatal(msg)
	}
	p := a.Spec.Ports
	if p[0].NodePort == 0 || p[1].NodePort != p[0].NodePort || p[2].NodePort == 0 || p[2].NodePort == p[0].NodePort {
		t.Errorf("node ports %+v: want one shared by port 80's protocols and another for 81", p)
	}
	if _, msg := create("b", "b", np(corev1.ServicePort{Port: 80, NodePort: p[0].NodePort})); msg != `spec.ports[0].nodePort: Invalid value: `+itoa(p[0].NodePort)+`: provided port is already allocated` {
		t.Errorf("taken: %q", msg)
	}
	if _, msg := create("c", "c", np(corev1.ServicePort{Port: 80, NodePort: 80})); msg != "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-30009" {
		t.Errorf("out of range: %q", msg)
	}
	lb, msg := create("d", "d", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, AllocateLoadBalancerNodePorts: new(false),
		Ports: []corev1.ServicePort{{Port: 80}}})
	if msg != "" || lb.Spec.Ports[0].NodePort != 0 {
		t.Errorf("allocateLoadBalancerNodePorts=false: %+v %q", lb.Spec.Ports, msg)
	}
	local, msg := create("e", "e", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
		Ports: []corev1.ServicePort{{Port: 80}}})
	if msg != "" || local.Spec.Ports[0].NodePort == 0 || local.Spec.HealthCheckNodePort == 0 {
		t.Errorf("load balancer with the Local policy: %+v health check %d %q", local.Spec.Ports, local.Spec.HealthCheckNodePort, msg)
	}

	// An update that leaves the node ports out keeps them; one that drops
	// a port frees its node port once Retain sees the stored state.
	next := a.DeepCopy()
	for i := range next.Spec.Ports {
		next.Spec.Ports[i].NodePort = 0
	}
	next.Spec.Ports = next.Spec.Ports[:2]
	res.PrepareForUpdate(next, a)
	if errs := res.Validate(next, a); len(errs) > 0 || next.Spec.Ports[0].NodePort != p[0].NodePort {
		t.Fatalf("update: %+v %s", next.Spec.Ports, errs.Message())
	}
	res.Retain(next)
	if f, msg := create("f", "f", np(corev1.ServicePort{Port: 80, NodePort: p[2].NodePort})); msg != "" || f.Spec.Ports[0].NodePort != p[2].NodePort {
		t.Errorf("the dropped port %d was not freed: %q", p[2].NodePort, msg)
	}
	// Release frees the rest.
	res.Release(next)
	if _, msg := create("g", "g", np(corev1.ServicePort{Port: 80, NodePort: p[0].NodePort})); msg != "" {
		t.Errorf("after Release: %q", msg)
	}

	// A full range is a 500.
	for i := range 10 {
		if _, msg := create("h"+itoa(int32(i)), "h", np(corev1.ServicePort{Port: 80})); msg != "" {
			if msg != "Internal error occurred: failed to allocate a nodePort: range is full" {
				t.Errorf("full range: %q", msg)
			}
			return
		}
	}
	t.Error("the range never filled up")
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// A service that becomes ExternalName gives its cluster IP back once the
// update is stored (Retain).
func TestServiceRetainClusterIP(t *testing.T) {
	res := Builtin().Get("", "v1", "services")
	a := newService("a", "a", corev1.ServiceSpec{ClusterIP: "10.96.0.20"})
	res.PrepareForCreate(a)
	if errs := res.Validate(a, nil); len(errs) > 0 {
		t.Fatal(errs.Message())
	}
	next := a.DeepCopy()
	next.Spec.Type, next.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	res.PrepareForUpdate(next, a)
	if next.Spec.ClusterIP != "" {
		t.Fatalf("ExternalName kept %q", next.Spec.ClusterIP)
	}
	b := newService("b", "b", corev1.ServiceSpec{ClusterIP: "10.96.0.20"})
	res.PrepareForCreate(b)
	if errs := res.Validate(b, nil); len(errs) == 0 {
		t.Fatal("the address was free before the update was stored")
	}
	res.Release(b)
	res.Retain(next)
	c := newService("c", "c", corev1.ServiceSpec{ClusterIP: "10.96.0.20"})
	res.PrepareForCreate(c)
	if errs := res.Validate(c, nil); len(errs) > 0 {
		t.Errorf("after Retain: %s", errs.Message())
	}
}
