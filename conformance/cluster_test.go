package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestKubernetesService checks what kube-apiserver creates for itself in the
// default namespace, which many controllers read: the kubernetes Service
// (ClusterIP, the first address of the service range; port 443 named https
// to the server's port), its Endpoints and its EndpointSlice pointing at
// the server, with the labels kube-apiserver gives them.
func TestKubernetesService(t *testing.T) {
	t.Parallel()
	e := target
	svc := expect(t, e.get(t, "/api/v1/namespaces/default/services/kubernetes"), http.StatusOK)
	if l, _ := field(svc, "metadata", "labels"); !reflect.DeepEqual(l, map[string]any{"component": "apiserver", "provider": "kubernetes"}) {
		t.Errorf("service labels %v", l)
	}
	ip := str(svc, "spec", "clusterIP")
	// The first address of a range: its network address plus one.
	if str(svc, "spec", "type") != "ClusterIP" || !strings.HasSuffix(ip, ".1") || str(svc, "spec", "sessionAffinity") != "None" {
		t.Errorf("service spec %v, want a ClusterIP service on the first address of the range", svc["spec"])
	}
	ports, _ := field(svc, "spec", "ports")
	pl, _ := ports.([]any)
	if len(pl) != 1 {
		t.Fatalf("service ports %v, want one", ports)
	}
	p := pl[0].(map[string]any)
	target, ok := p["targetPort"].(json.Number)
	if p["name"] != "https" || fmt.Sprint(p["port"]) != "443" || p["protocol"] != "TCP" || !ok {
		t.Fatalf("service port %v, want https 443/TCP to a port number", p)
	}

	ep := expect(t, e.get(t, "/api/v1/namespaces/default/endpoints/kubernetes"), http.StatusOK)
	if l, _ := field(ep, "metadata", "labels"); !reflect.DeepEqual(l, map[string]any{"endpointslice.kubernetes.io/skip-mirror": "true"}) {
		t.Errorf("endpoints labels %v", l)
	}
	subsets, _ := ep["subsets"].([]any)
	if len(subsets) != 1 {
		t.Fatalf("endpoints subsets %v, want one", ep["subsets"])
	}
	ss := subsets[0].(map[string]any)
	addrs, _ := ss["addresses"].([]any)
	eports, _ := ss["ports"].([]any)
	if len(addrs) != 1 || len(eports) != 1 {
		t.Fatalf("endpoints subset %v, want one address and one port", ss)
	}
	addr := addrs[0].(map[string]any)["ip"]
	if want := map[string]any{"name": "https", "port": target, "protocol": "TCP"}; !reflect.DeepEqual(eports[0], want) {
		t.Errorf("endpoints port %v, want %v (the service's target port)", eports[0], want)
	}

	slice := expect(t, e.get(t, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"), http.StatusOK)
	if l, _ := field(slice, "metadata", "labels"); !reflect.DeepEqual(l, map[string]any{"kubernetes.io/service-name": "kubernetes"}) {
		t.Errorf("endpointslice labels %v", l)
	}
	want := []any{map[string]any{"addresses": []any{addr}, "conditions": map[string]any{"ready": true}}}
	if str(slice, "addressType") != "IPv4" || !reflect.DeepEqual(slice["endpoints"], want) {
		t.Errorf("endpointslice %v %v, want IPv4 endpoints %v", slice["addressType"], slice["endpoints"], want)
	}
	if want := []any{map[string]any{"name": "https", "port": target, "protocol": "TCP"}}; !reflect.DeepEqual(slice["ports"], want) {
		t.Errorf("endpointslice ports %v, want %v", slice["ports"], want)
	}
	// Endpoints is deprecated: every answer says so.
	if w := e.get(t, "/api/v1/namespaces/default/endpoints/kubernetes").Header.Get("Warning"); w != `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"` {
		t.Errorf("Warning %q", w)
	}
}

// TestServiceNodePorts checks node port allocation: a NodePort service gets
// one from the range (30000-32767 unless configured otherwise) when it asks
// for none, a requested port taken or out of the range is refused with
// kube-apiserver's message, and ports are freed when a create fails, when
// the service goes and when an update drops them.
func TestServiceNodePorts(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/api/v1/namespaces/" + ns + "/services"
	nodePort := func(name string, ports ...int) obj {
		var ps []any
		for i, p := range ports {
			port := obj{"port": 80 + i}
			if p != 0 {
				port["nodePort"] = p
			}
			ps = append(ps, port)
		}
		return obj{"metadata": obj{"name": name}, "spec": obj{"type": "NodePort", "ports": ps}}
	}
	portOf := func(o obj, i int) int {
		ps, _ := field(o, "spec", "ports")
		n, err := ps.([]any)[i].(map[string]any)["nodePort"].(json.Number).Int64()
		if err != nil {
			t.Fatalf("nodePort of %v: %v", o["spec"], err)
		}
		return int(n)
	}
	a := expect(t, e.post(t, path, nodePort("a", 0)), http.StatusCreated)
	pa := portOf(a, 0)
	if pa < 30000 || pa > 32767 {
		t.Errorf("allocated node port %d, outside 30000-32767", pa)
	}
	checkStatus(t, e.post(t, path, nodePort("b", pa)), http.StatusUnprocessableEntity, "Invalid",
		fmt.Sprintf(`Service "b" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated`, pa))
	checkStatus(t, e.post(t, path, nodePort("c", 80)), http.StatusUnprocessableEntity, "Invalid",
		`Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767`)

	// Deleting a frees its port (the answer is the service).
	if got := expect(t, e.del(t, path+"/a", nil), http.StatusOK); str(got, "kind") != "Service" {
		t.Errorf("delete answered %s, want the service", compact(got))
	}
	other := expect(t, e.post(t, path, nodePort("other", 0)), http.StatusCreated)
	po := portOf(other, 0)
	// A create refused for its second port gives back the first.
	checkStatus(t, e.post(t, path, nodePort("d", pa, po)), http.StatusUnprocessableEntity, "Invalid",
		fmt.Sprintf(`Service "d" is invalid: spec.ports[1].nodePort: Invalid value: %d: provided port is already allocated`, po))
	f := expect(t, e.post(t, path, nodePort("f", pa)), http.StatusCreated)
	if portOf(f, 0) != pa {
		t.Errorf("f got %d, want the freed %d", portOf(f, 0), pa)
	}
	// Dropping the port (type ClusterIP) frees it.
	e.modify(t, path+"/f", false, func(o obj) {
		spec := o["spec"].(map[string]any)
		spec["type"] = "ClusterIP"
		delete(spec, "externalTrafficPolicy")
		delete(spec["ports"].([]any)[0].(map[string]any), "nodePort")
	})
	expect(t, e.post(t, path, nodePort("g", pa)), http.StatusCreated)

	// A health check node port asked for is reserved too; a taken or
	// out-of-range one is a 500.
	healthCheck := func(name string, port int) obj {
		return obj{"metadata": obj{"name": name}, "spec": obj{"type": "LoadBalancer", "externalTrafficPolicy": "Local",
			"healthCheckNodePort": port, "ports": []any{obj{"port": 80}}}}
	}
	checkStatus(t, e.post(t, path, healthCheck("h1", po)), http.StatusInternalServerError, "InternalError",
		fmt.Sprintf("Internal error occurred: failed to allocate requested HealthCheck NodePort %d: provided port is already allocated", po))
	checkStatus(t, e.post(t, path, healthCheck("h2", 80)), http.StatusInternalServerError, "InternalError",
		"Internal error occurred: failed to allocate requested HealthCheck NodePort 80: provided port is not in the valid range. The range of valid ports is 30000-32767")
}

// TestNamespaceDefaults checks what a cluster's controllers put in every new
// namespace: the "default" ServiceAccount (kube-controller-manager's
// serviceaccount-controller) and the kube-root-ca.crt ConfigMap
// (root-ca-certificate-publisher-controller), each put back when deleted.
// Each part skips, saying so, on a cluster without the controller, which
// shows in kube-system lacking the object.
func TestNamespaceDefaults(t *testing.T) {
	t.Parallel()
	e := target

	t.Run("default-serviceaccount", func(t *testing.T) {
		t.Parallel()
		if r := e.get(t, "/api/v1/namespaces/kube-system/serviceaccounts/default"); r.Code == http.StatusNotFound {
			t.Skipf("%s runs no serviceaccount controller: kube-system has no default service account", e.name)
		}
		ns := e.namespace(t)
		path := "/api/v1/namespaces/" + ns + "/serviceaccounts"
		var uid string
		e.waitCollection(t, path, "the default service account", 30*time.Second, func(objs map[string]obj) bool {
			sa, ok := objs[ns+"/default"]
			uid = str(sa, "metadata", "uid")
			return ok
		})
		expect(t, e.del(t, path+"/default", nil), http.StatusOK)
		e.waitCollection(t, path, "the default service account to come back", 30*time.Second, func(objs map[string]obj) bool {
			sa, ok := objs[ns+"/default"]
			return ok && str(sa, "metadata", "uid") != uid
		})
	})

	t.Run("kube-root-ca.crt", func(t *testing.T) {
		t.Parallel()
		if r := e.get(t, cmPath("kube-system", rootCAName)); r.Code == http.StatusNotFound {
			t.Skipf("%s runs no root-ca-certificate-publisher controller: kube-system has no %s", e.name, rootCAName)
		}
		ns := e.namespace(t) // waits for it (settle)
		cm := expect(t, e.get(t, cmPath(ns, rootCAName)), http.StatusOK)
		if _, ok := field(cm, "data", "ca.crt"); !ok || str(cm, "metadata", "annotations", "kubernetes.io/description") == "" {
			t.Errorf("%s %s, want data ca.crt and a kubernetes.io/description annotation", rootCAName, compact(cm))
		}
		expect(t, e.del(t, cmPath(ns, rootCAName), nil), http.StatusOK)
		e.waitCollection(t, cmPath(ns), rootCAName+" to come back", 30*time.Second, func(objs map[string]obj) bool {
			c, ok := objs[ns+"/"+rootCAName]
			return ok && str(c, "metadata", "uid") != str(cm, "metadata", "uid")
		})
	})
}

// TestImmortalNamespaces checks that default, kube-system and kube-public
// may not be deleted (kube-apiserver's NamespaceLifecycle admission), while
// kube-node-lease may. Dry runs: nothing is deleted.
func TestImmortalNamespaces(t *testing.T) {
	t.Parallel()
	e := target
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		st := checkStatus(t, e.del(t, "/api/v1/namespaces/"+ns+"?dryRun=All", nil), http.StatusForbidden, "Forbidden",
			`namespaces "`+ns+`" is forbidden: this namespace may not be deleted`)
		if d, _ := field(st, "details"); !reflect.DeepEqual(d, map[string]any{"name": ns, "kind": "namespaces"}) {
			t.Errorf("details %v", d)
		}
	}
	if o := expect(t, e.del(t, "/api/v1/namespaces/kube-node-lease?dryRun=All", nil), http.StatusOK); str(o, "status", "phase") != "Terminating" {
		t.Errorf("dry-run delete of kube-node-lease answered %s", compact(o))
	}
	expect(t, e.get(t, "/api/v1/namespaces/kube-node-lease"), http.StatusOK)
}

// TestServiceClusterIPRelease checks that a service's cluster IP is given
// back when the service goes and when it becomes ExternalName: another
// service may then ask for it.
func TestServiceClusterIPRelease(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/api/v1/namespaces/" + ns + "/services"
	clusterIP := func(name, ip string) obj {
		spec := obj{"ports": []any{obj{"port": 80}}}
		if ip != "" {
			spec["clusterIP"] = ip
		}
		return obj{"metadata": obj{"name": name}, "spec": spec}
	}
	a := expect(t, e.post(t, path, clusterIP("a", "")), http.StatusCreated)
	ip := str(a, "spec", "clusterIP")
	// (How the list value is printed differs between kube-apiserver
	// versions: []string{"…"} in v1.32, ["…"] in v1.37.)
	st := checkStatus(t, e.post(t, path, clusterIP("b", ip)), http.StatusUnprocessableEntity, "Invalid", `Service "b" is invalid: spec.clusterIPs: Invalid value: `)
	if m := str(st, "message"); !strings.HasSuffix(m, fmt.Sprintf(": failed to allocate IP %s: provided IP is already allocated", ip)) {
		t.Errorf("message %q, want the address %s already allocated", m, ip)
	}
	e.modify(t, path+"/a", false, func(o obj) {
		spec := o["spec"].(map[string]any)
		spec["type"], spec["externalName"] = "ExternalName", "example.com"
		for _, k := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "internalTrafficPolicy"} {
			delete(spec, k)
		}
	})
	c := expect(t, e.post(t, path, clusterIP("c", ip)), http.StatusCreated)
	expect(t, e.del(t, path+"/c", nil), http.StatusOK)
	expect(t, e.post(t, path, clusterIP("d", str(c, "spec", "clusterIP"))), http.StatusCreated)
}
