package conformance

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Cases of the rbac.authorization.k8s.io, networking.k8s.io, node.k8s.io,
// scheduling.k8s.io and flowcontrol.apiserver.k8s.io kinds: the defaults
// kube-apiserver applies, their immutable fields and their generations.

// clusterObject creates the cluster-scoped object o at collection (its
// name drawn here, prefixed with prefix) and deletes it when the case
// ends. It returns the created object.
func (e *env) clusterObject(t *testing.T, collection, prefix string, o obj) obj {
	t.Helper()
	name := prefix + "-" + randomSuffix()
	o["metadata"] = obj{"name": name}
	created := expect(t, e.post(t, collection, o), http.StatusCreated)
	t.Cleanup(func() {
		if r := e.del(t, collection+"/"+name, nil); r.Code != http.StatusOK && r.Code != http.StatusNotFound {
			t.Errorf("deleting %s/%s:\n%s", collection, name, r)
		}
	})
	return created
}

// causeList is a 422 Status's causes as "field: message" lines.
func causeList(t testing.TB, r *response) []string {
	t.Helper()
	st := checkStatus(t, r, http.StatusUnprocessableEntity, "Invalid", "")
	details, _ := st["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	var out []string
	for _, c := range causes {
		c, _ := c.(map[string]any)
		f, _ := c["field"].(string)
		m, _ := c["message"].(string)
		out = append(out, f+": "+m)
	}
	return out
}

func sameCauses(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: causes\n got  %q\n want %q", what, got, want)
	}
}

// TestRBACBindings checks a binding's defaults (its roleRef's and its User
// subjects' API group), its immutable roleRef and the namespace a
// ClusterRoleBinding's ServiceAccount subject needs.
func TestRBACBindings(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings"
	b := expect(t, e.post(t, path, obj{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": obj{"name": "rb"},
		"roleRef":  obj{"kind": "ClusterRole", "name": "view"},
		"subjects": []obj{{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "default"}},
	}), http.StatusCreated)
	if g := str(b, "roleRef", "apiGroup"); g != "rbac.authorization.k8s.io" {
		t.Errorf("roleRef.apiGroup %q", g)
	}
	subjects, _ := b["subjects"].([]any)
	if len(subjects) != 2 || subjects[0].(map[string]any)["apiGroup"] != "rbac.authorization.k8s.io" || has(subjects[1].(map[string]any), "apiGroup") {
		t.Errorf("subjects %s", compact(subjects))
	}
	if has(b, "metadata", "generation") {
		t.Errorf("a RoleBinding has no generation: %s", compact(b["metadata"]))
	}

	r := e.do(t, http.MethodPatch, path+"/rb", `{"roleRef":{"name":"edit"}}`, "Content-Type", mergePatch)
	sameCauses(t, "roleRef change", causeList(t, r),
		[]string{`roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable`})
	// Subjects may change.
	expect(t, e.do(t, http.MethodPatch, path+"/rb", `{"subjects":[{"kind":"Group","name":"devs"}]}`, "Content-Type", mergePatch), http.StatusOK)

	r = e.post(t, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", obj{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": obj{"name": "kapi-conformance-bad-" + randomSuffix()},
		"roleRef":  obj{"kind": "Role", "name": "x"},
		"subjects": []obj{{"kind": "ServiceAccount", "name": "default"}},
	})
	sameCauses(t, "ClusterRoleBinding", causeList(t, r), []string{
		`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`,
		`subjects[0].namespace: Required value`,
	})

	r = e.post(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", obj{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": obj{"name": "bad"},
		"rules": []obj{{}, {"verbs": []string{"get"}, "nonResourceURLs": []string{"/healthz"}}},
	})
	sameCauses(t, "Role", causeList(t, r), []string{
		`rules[0].apiGroups: Required value: resource rules must supply at least one api group`,
		`rules[0].resources: Required value: resource rules must supply at least one resource`,
		`rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`,
		`rules[0].verbs: Required value`,
	})
}

// TestNetworkingDefaultsAndImmutability checks a NetworkPolicy's defaults
// (policyTypes from its rules, TCP ports) and generation, an Ingress's
// status subresource (a /status update changes only status, and its
// addresses are checked; a main update keeps it), a ServiceCIDR's immutable
// ranges and an IPAddress's canonical name.
func TestNetworkingDefaultsAndImmutability(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	base := "/apis/networking.k8s.io/v1"

	np := expect(t, e.post(t, base+"/namespaces/"+ns+"/networkpolicies", obj{
		"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": obj{"name": "np"},
		"spec": obj{"podSelector": obj{}, "egress": []obj{{"ports": []obj{{"port": 53}}}}},
	}), http.StatusCreated)
	if got := compact(np["spec"]); got != `{"egress":[{"ports":[{"port":53,"protocol":"TCP"}]}],"podSelector":{},"policyTypes":["Ingress","Egress"]}` {
		t.Errorf("defaulted spec %s", got)
	}
	if g, _ := num(np, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d on create", g)
	}
	np = expect(t, e.do(t, http.MethodPatch, base+"/namespaces/"+ns+"/networkpolicies/np", `{"metadata":{"labels":{"a":"b"}}}`, "Content-Type", mergePatch), http.StatusOK)
	if g, _ := num(np, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d after a label change", g)
	}
	np = expect(t, e.do(t, http.MethodPatch, base+"/namespaces/"+ns+"/networkpolicies/np", `{"spec":{"policyTypes":["Egress"]}}`, "Content-Type", mergePatch), http.StatusOK)
	if g, _ := num(np, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after a spec change", g)
	}

	ing := base + "/namespaces/" + ns + "/ingresses"
	in := expect(t, e.post(t, ing, obj{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": obj{"name": "in"},
		"spec":   obj{"defaultBackend": obj{"service": obj{"name": "web", "port": obj{"number": 80}}}},
		"status": obj{"loadBalancer": obj{"ingress": []obj{{"ip": "192.0.2.1"}}}},
	}), http.StatusCreated)
	if got := compact(in["status"]); got != `{"loadBalancer":{}}` {
		t.Errorf("status on create %s, want it reset", got)
	}
	in["status"] = obj{"loadBalancer": obj{"ingress": []obj{{"ip": "192.0.2.1"}}}}
	in["spec"] = obj{"defaultBackend": obj{"service": obj{"name": "other", "port": obj{"number": 81}}}}
	st := expect(t, e.put(t, ing+"/in/status", in), http.StatusOK)
	if got := compact(st["status"]); got != `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"}]}}` {
		t.Errorf("status after /status update %s", got)
	}
	if str(st, "spec", "defaultBackend", "service", "name") != "web" {
		t.Errorf("/status update changed spec: %s", compact(st["spec"]))
	}
	r := e.do(t, http.MethodPatch, ing+"/in/status", `{"status":{"loadBalancer":{"ingress":[{"ip":"bad"},{"hostname":"192.0.2.1"}]}}}`, "Content-Type", mergePatch)
	sameCauses(t, "Ingress status", causeList(t, r), []string{
		`status.loadBalancer.ingress[0].ip: Invalid value: "bad": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
		`status.loadBalancer.ingress[1].hostname: Invalid value: "192.0.2.1": must be a DNS name, not an IP address`,
	})
	st["status"] = obj{"loadBalancer": obj{}}
	main := expect(t, e.put(t, ing+"/in", st), http.StatusOK)
	if got := compact(main["status"]); got != `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"}]}}` {
		t.Errorf("status after a main update %s, want it kept", got)
	}

	cidrs := base + "/servicecidrs"
	sc := e.clusterObject(t, cidrs, "kapi-conformance", obj{"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
		"spec": obj{"cidrs": []string{"10.250.0.0/24"}}})
	r = e.do(t, http.MethodPatch, cidrs+"/"+name(sc), `{"spec":{"cidrs":["10.250.1.0/24"]}}`, "Content-Type", mergePatch)
	sameCauses(t, "ServiceCIDR change", causeList(t, r), []string{`spec.cidrs[0]: Invalid value: "10.250.1.0/24": field is immutable`})
	// A single-stack range may become dual-stack.
	expect(t, e.do(t, http.MethodPatch, cidrs+"/"+name(sc), `{"spec":{"cidrs":["10.250.0.0/24","fd00:250::/112"]}}`, "Content-Type", mergePatch), http.StatusOK)

	r = e.post(t, base+"/ipaddresses", obj{"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
		"metadata": obj{"name": "2001:DB8:0::250"}, "spec": obj{"parentRef": obj{"resource": "services", "name": "web"}}})
	sameCauses(t, "IPAddress name", causeList(t, r), []string{`metadata.name: Invalid value: "2001:DB8:0::250": must be in canonical form ("2001:db8::250")`})
}

// TestRuntimeClassHandlerImmutable checks that a RuntimeClass's handler is
// required and cannot change.
func TestRuntimeClassHandlerImmutable(t *testing.T) {
	t.Parallel()
	e := target
	path := "/apis/node.k8s.io/v1/runtimeclasses"
	rc := e.clusterObject(t, path, "kapi-conformance", obj{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "handler": "runc"})
	r := e.do(t, http.MethodPatch, path+"/"+name(rc), `{"handler":"crun"}`, "Content-Type", mergePatch)
	sameCauses(t, "handler change", causeList(t, r), []string{"handler: Invalid value: null: field is immutable"})
	r = e.post(t, path, obj{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": obj{"name": "kapi-conformance-bad"}})
	sameCauses(t, "no handler", causeList(t, r), []string{"handler: Required value"})
}

// TestPriorityClass checks a PriorityClass's default preemption policy and
// generation, its immutable value, the names reserved for the system, and
// the system classes the server creates for itself.
func TestPriorityClass(t *testing.T) {
	t.Parallel()
	e := target
	path := "/apis/scheduling.k8s.io/v1/priorityclasses"
	pc := e.clusterObject(t, path, "kapi-conformance", obj{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 1000})
	if p := str(pc, "preemptionPolicy"); p != "PreemptLowerPriority" {
		t.Errorf("preemptionPolicy %q", p)
	}
	if g, _ := num(pc, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d", g)
	}
	r := e.do(t, http.MethodPatch, path+"/"+name(pc), `{"value":2000}`, "Content-Type", mergePatch)
	sameCauses(t, "value change", causeList(t, r), []string{"value: Forbidden: may not be changed in an update."})
	pc = expect(t, e.do(t, http.MethodPatch, path+"/"+name(pc), `{"description":"changed"}`, "Content-Type", mergePatch), http.StatusOK)
	if g, _ := num(pc, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d after a description change", g)
	}

	for _, c := range []struct {
		name  string
		value int64
		want  string
	}{
		{"system-kapi-conformance", 5, "system-kapi-conformance is not a known system priority class"},
		{"system-node-critical", 5, "value of system-node-critical PriorityClass must be 2000001000"},
	} {
		r := e.post(t, path, obj{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": obj{"name": c.name}, "value": c.value})
		sameCauses(t, c.name, causeList(t, r), []string{"metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: " + c.want})
	}
	r = e.post(t, path, obj{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": obj{"name": "kapi-conformance-big"}, "value": 2000000000})
	sameCauses(t, "too high", causeList(t, r), []string{"value: Forbidden: maximum allowed value of a user defined priority is 1000000000"})

	// The server's own classes.
	for name, value := range map[string]int64{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
		pc := expect(t, e.get(t, path+"/"+name), http.StatusOK)
		if v, _ := num(pc, "value"); v != value || str(pc, "preemptionPolicy") != "PreemptLowerPriority" || str(pc, "description") == "" {
			t.Errorf("%s: %s", name, compact(pc))
		}
	}
}

// TestFlowControlObjects checks the defaults of API Priority and
// Fairness objects (a FlowSchema's matchingPrecedence, a limited priority
// level's shares and queuing), the rule that only the level named exempt
// is of type Exempt, and that a FlowSchema's generation follows its spec.
func TestFlowControlObjects(t *testing.T) {
	t.Parallel()
	e := target
	base := "/apis/flowcontrol.apiserver.k8s.io/v1"
	pl := e.clusterObject(t, base+"/prioritylevelconfigurations", "kapi-conformance", obj{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
		"spec": obj{"type": "Limited", "limited": obj{"limitResponse": obj{"type": "Queue", "queuing": obj{"queues": 16}}}},
	})
	if got := compact(pl["spec"]); got != `{"limited":{"lendablePercent":0,"limitResponse":{"queuing":{"handSize":8,"queueLengthLimit":50,"queues":16},"type":"Queue"},"nominalConcurrencyShares":30},"type":"Limited"}` {
		t.Errorf("defaulted spec %s", got)
	}
	r := e.post(t, base+"/prioritylevelconfigurations", obj{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
		"metadata": obj{"name": "kapi-conformance-exempt"}, "spec": obj{"type": "Exempt", "exempt": obj{}},
	})
	sameCauses(t, "Exempt", causeList(t, r), []string{"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'"})

	fsPath := base + "/flowschemas"
	fs := e.clusterObject(t, fsPath, "kapi-conformance", obj{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
		"spec": obj{"priorityLevelConfiguration": obj{"name": name(pl)}},
	})
	if p, _ := num(fs, "spec", "matchingPrecedence"); p != 1000 {
		t.Errorf("matchingPrecedence %d", p)
	}
	fs = expect(t, e.do(t, http.MethodPatch, fsPath+"/"+name(fs), `{"spec":{"matchingPrecedence":2000}}`, "Content-Type", mergePatch), http.StatusOK)
	if g, _ := num(fs, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after a spec change", g)
	}
	r = e.do(t, http.MethodPatch, fsPath+"/"+name(fs), `{"spec":{"matchingPrecedence":1}}`, "Content-Type", mergePatch)
	if got := causeList(t, r); len(got) != 1 || !strings.Contains(got[0], "only the schema named 'exempt' may have matchingPrecedence 1") {
		t.Errorf("matchingPrecedence 1: %q", got)
	}
}
