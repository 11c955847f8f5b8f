package conformance

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Admission policies (admissionregistration.k8s.io/v1), worded as
// kube-apiserver v1.37.2 answers them (captured with curl). A real server
// enforces a policy a moment after it is written: each case waits for its
// bindings to take effect by retrying a dry-run probe until it is refused
// (or warned about), with a deadline.

const policyBase = "/apis/admissionregistration.k8s.io/v1/"

// createPolicyObject creates a cluster-scoped policy object (a policy or
// a binding) and deletes it when the test ends.
func (e *env) createPolicyObject(t *testing.T, resource string, o obj) {
	t.Helper()
	expect(t, e.post(t, policyBase+resource, o), http.StatusCreated)
	t.Cleanup(func() {
		r := e.del(t, policyBase+resource+"/"+name(o), nil)
		if r.Code != http.StatusOK && r.Code != http.StatusNotFound {
			t.Errorf("deleting %s %s:\n%s", resource, name(o), r)
		}
	})
}

// awaitPolicy retries a dry-run create of o at path until ok accepts the
// answer, failing the test at the deadline.
func (e *env) awaitPolicy(t *testing.T, path string, o obj, ok func(*response) bool) *response {
	t.Helper()
	var r *response
	e.eventually(t, func() (bool, string) {
		r = e.post(t, path+"?dryRun=All", o)
		return ok(r), "the policy did not take effect:\n" + r.String()
	})
	return r
}

// eventually calls done until it reports true, failing the test with its
// message at the deadline (what a real server's controllers take a moment
// to do).
func (e *env) eventually(t *testing.T, done func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(e.within(30 * time.Second))
	for {
		ok, msg := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(50 * time.Millisecond): // polling interval, not a synchronisation
		}
	}
}

func refused(r *response) bool { return r.Code >= 400 }

func warned(r *response) bool {
	return r.Code == http.StatusCreated && len(r.Header.Values("Warning")) > 0
}

// vapRule selects the creates and updates of one core resource.
// vapRule matches creates and updates of a core resource in namespace ns
// only (anywhere for ns "", for a policy never bound): on a real server a policy that cannot be configured (its param
// kind not yet, or no longer, known) fails every request it matches,
// before bindings are looked at, so an unscoped one would fail other
// cases' requests running in parallel.
func vapRule(resource, ns string) obj {
	r := obj{"resourceRules": []any{obj{
		"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"}, "resources": []any{resource},
	}}}
	if ns != "" {
		r["namespaceSelector"] = nsSelector(ns)
	}
	return r
}

// nsSelector selects namespace ns by its name label.
func nsSelector(ns string) obj {
	return obj{"matchLabels": obj{"kubernetes.io/metadata.name": ns}}
}

// vapBinding binds policy to the objects of namespace ns labelled b=sel.
func vapBinding(name, policy, ns, sel string, actions []any, paramRef obj) obj {
	spec := obj{"policyName": policy, "validationActions": actions, "matchResources": obj{
		"namespaceSelector": obj{"matchLabels": obj{"kubernetes.io/metadata.name": ns}},
		"objectSelector":    obj{"matchLabels": obj{"b": sel}},
	}}
	if paramRef != nil {
		spec["paramRef"] = paramRef
	}
	return obj{"metadata": obj{"name": name}, "spec": spec}
}

// TestValidatingAdmissionPolicy: validationActions Deny (the first failure
// refuses the request, worded with the policy and binding names; reason
// and code from the validation's reason, Invalid by default), Warn (a
// Warning header per failure) and Audit (no visible effect); message,
// messageExpression and the expression itself as the message;
// matchConditions; variables; an evaluation error under failurePolicy Fail
// and Ignore; namespace and object selectors.
func TestValidatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	p := "vap-" + randomSuffix()
	ignore := p + "-ignore"
	cms := cmPath(ns)
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"failurePolicy":    "Fail",
		"matchConstraints": vapRule("configmaps", ns),
		"matchConditions":  []any{obj{"name": "labelled", "expression": "has(object.metadata.labels) && 'pol' in object.metadata.labels"}},
		"variables":        []any{obj{"name": "foo", "expression": "has(object.data) && 'foo' in object.data ? object.data.foo : ''"}},
		"validations": []any{
			obj{"expression": "variables.foo != 'bad'", "message": "foo must not be bad"},
			obj{"expression": "variables.foo != 'worse'", "messageExpression": "'foo is ' + variables.foo", "reason": "Forbidden"},
			obj{"expression": "variables.foo != 'teapot'"},
			obj{"expression": "variables.foo != 'err' || object.spec.replicas > 1"},
		},
		"auditAnnotations": []any{obj{"key": "foo", "valueExpression": "'foo=' + variables.foo"}},
	}})
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": ignore}, "spec": obj{
		"failurePolicy":    "Ignore",
		"matchConstraints": vapRule("configmaps", ns),
		"validations":      []any{obj{"expression": "object.spec.replicas > 1"}},
	}})
	e.createPolicyObject(t, "validatingadmissionpolicybindings", vapBinding(p+"-deny", p, ns, "deny", []any{"Deny"}, nil))
	e.createPolicyObject(t, "validatingadmissionpolicybindings", vapBinding(p+"-warn", p, ns, "warn", []any{"Warn", "Audit"}, nil))
	e.createPolicyObject(t, "validatingadmissionpolicybindings", vapBinding(ignore+"-b", ignore, ns, "deny", []any{"Deny"}, nil))

	cm := func(name, b, foo string, labelled bool) obj {
		labels := map[string]string{"b": b}
		if labelled {
			labels["pol"] = "x"
		}
		return configMap(name, labels, map[string]string{"foo": foo})
	}
	e.awaitPolicy(t, cms, cm("probe", "deny", "bad", true), refused)
	e.awaitPolicy(t, cms, cm("probe", "warn", "bad", true), warned)

	denied := func(name, foo string, code int, reason, msg string) {
		t.Helper()
		st := checkStatus(t, e.post(t, cms, cm(name, "deny", foo, true)), code, reason, "")
		full := "ValidatingAdmissionPolicy '" + p + "' with binding '" + p + "-deny' denied request: " + msg
		if want := `configmaps "` + name + `" is forbidden: ` + full; str(st, "message") != want {
			t.Errorf("message %q\nwant    %q", str(st, "message"), want)
		}
		want := obj{"name": name, "kind": "configmaps", "causes": []any{obj{"message": full}}}
		if got := st["details"]; compact(got) != compact(want) {
			t.Errorf("details %s\nwant    %s", compact(got), compact(want))
		}
	}
	denied("c-bad", "bad", http.StatusUnprocessableEntity, "Invalid", "foo must not be bad")
	denied("c-worse", "worse", http.StatusForbidden, "Forbidden", "foo is worse")
	denied("c-teapot", "teapot", http.StatusUnprocessableEntity, "Invalid", "failed expression: variables.foo != 'teapot'")
	denied("c-err", "err", http.StatusUnprocessableEntity, "Invalid",
		"expression 'variables.foo != 'err' || object.spec.replicas > 1' resulted in error: no such key: spec")
	// Updates are validated too.
	ok := expect(t, e.post(t, cms, cm("c-ok", "deny", "ok", true)), http.StatusCreated)
	ok["data"] = obj{"foo": "bad"}
	checkStatus(t, e.put(t, cmPath(ns, "c-ok"), ok), http.StatusUnprocessableEntity, "Invalid", "foo must not be bad")
	// matchConditions: an object without the label is not validated.
	expect(t, e.post(t, cms, cm("c-unlabelled", "deny", "bad", false)), http.StatusCreated)
	// Another namespace is not selected.
	other := e.namespace(t)
	expect(t, e.post(t, cmPath(other), cm("c-other", "deny", "bad", true)), http.StatusCreated)

	// Warn: the request succeeds with a warning per failure; Audit adds
	// nothing visible.
	r := e.post(t, cms, cm("w-bad", "warn", "worse", true))
	expect(t, r, http.StatusCreated)
	want := "299 - \"Validation failed for ValidatingAdmissionPolicy '" + p + "' with binding '" + p + "-warn': foo is worse\""
	if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q\nwant %q", w, want)
	}
	r = e.post(t, cms, cm("w-ok", "warn", "ok", true))
	expect(t, r, http.StatusCreated)
	if w := r.Header.Values("Warning"); len(w) != 0 {
		t.Errorf("warnings of a valid object: %q", w)
	}
}

// TestValidatingAdmissionPolicyParams: a binding's paramRef by name and by
// selector, found (params in the expressions) and not found, with
// parameterNotFoundAction Deny and Allow.
func TestValidatingAdmissionPolicyParams(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	p := "vapp-" + randomSuffix()
	// The params are custom resources: kube-apiserver v1.37.2 stops the
	// cache of a built-in param kind for good once no binding names it
	// (kubernetes/kubernetes#130887), after which selectors find nothing
	// until it restarts; custom param kinds are not affected.
	group := p + ".policy.i16.kapi.dev"
	e.createServedCRD(t, obj{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": "params." + group},
		"spec": obj{"group": group, "scope": "Namespaced",
			"names": obj{"plural": "params", "singular": "param", "kind": "Param", "listKind": "ParamList"},
			"versions": []any{obj{"name": "v1", "served": true, "storage": true, "schema": obj{"openAPIV3Schema": obj{
				"type": "object", "properties": obj{"data": obj{"type": "object", "additionalProperties": obj{"type": "string"}}}}}}}}})
	paramPath := "/apis/" + group + "/v1/namespaces/" + ns + "/params"
	expect(t, e.post(t, paramPath, obj{"apiVersion": group + "/v1", "kind": "Param",
		"metadata": obj{"name": "params", "labels": obj{"pp": "x"}}, "data": obj{"bad": "yes"}}), http.StatusCreated)
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"failurePolicy":    "Fail",
		"paramKind":        obj{"apiVersion": group + "/v1", "kind": "Param"},
		"matchConstraints": vapRule("secrets", ns),
		"validations": []any{obj{
			"expression":        "!has(object.metadata.labels) || !('bad' in object.metadata.labels) || object.metadata.labels.bad != params.data.bad",
			"messageExpression": "'label bad is ' + params.data.bad",
		}},
	}})
	ref := func(name string, sel obj, action string) obj {
		r := obj{"namespace": ns, "parameterNotFoundAction": action}
		if name != "" {
			r["name"] = name
		} else {
			r["selector"] = sel
		}
		return r
	}
	bindings := map[string]obj{
		"found":    ref("params", nil, "Deny"),
		"selected": ref("", obj{"matchLabels": obj{"pp": "x"}}, "Deny"),
		"missing":  ref("nope", nil, "Deny"),
		"none":     ref("", obj{"matchLabels": obj{"pp": "none"}}, "Deny"),
		"allow":    ref("nope", nil, "Allow"),
	}
	for b, pr := range bindings {
		e.createPolicyObject(t, "validatingadmissionpolicybindings", vapBinding(p+"-"+b, p, ns, b, []any{"Deny"}, pr))
	}
	secrets := "/api/v1/namespaces/" + ns + "/secrets"
	secret := func(name, b string, bad bool) obj {
		labels := obj{"b": b}
		if bad {
			labels["bad"] = "yes"
		}
		return obj{"metadata": obj{"name": name, "labels": labels}}
	}
	// A real server reads params from a cache that fills a moment after
	// the policy appears: the probes of bindings with params wait for a
	// denial that used them.
	for b := range bindings {
		switch b {
		case "found", "selected":
			e.awaitPolicy(t, secrets, secret("probe", b, true), func(r *response) bool {
				return refused(r) && strings.Contains(string(r.Body), "label bad is yes")
			})
		case "missing", "none":
			e.awaitPolicy(t, secrets, secret("probe", b, true), refused)
		}
	}
	deniedMsg := func(b, msg string) string {
		return "ValidatingAdmissionPolicy '" + p + "' with binding '" + p + "-" + b + "' denied request: " + msg
	}
	for _, b := range []string{"found", "selected"} {
		checkStatus(t, e.post(t, secrets, secret("s-"+b+"-bad", b, true)), http.StatusUnprocessableEntity, "Invalid",
			`secrets "s-`+b+`-bad" is forbidden: `+deniedMsg(b, "label bad is yes"))
		expect(t, e.post(t, secrets, secret("s-"+b+"-ok", b, false)), http.StatusCreated)
	}
	noParams := "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
	for _, b := range []string{"missing", "none"} {
		st := checkStatus(t, e.post(t, secrets, secret("s-"+b, b, false)), http.StatusUnprocessableEntity, "Invalid", "")
		if want := `secrets "s-` + b + `" is forbidden: ` + deniedMsg(b, noParams); str(st, "message") != want {
			t.Errorf("message %q\nwant    %q", str(st, "message"), want)
		}
	}
	expect(t, e.post(t, secrets, secret("s-allow", "allow", true)), http.StatusCreated)
	if t.Failed() {
		return
	}
	// The params are read on each request: once they say otherwise, the
	// same object passes.
	cur := expect(t, e.get(t, paramPath+"/params"), http.StatusOK)
	cur["data"] = obj{"bad": "no"}
	expect(t, e.put(t, paramPath+"/params", cur), http.StatusOK)
	r := e.awaitPolicy(t, secrets, secret("s-found-bad", "found", true), func(r *response) bool { return r.Code == http.StatusCreated })
	if !strings.Contains(string(r.Body), "s-found-bad") {
		t.Errorf("dry run: %s", r)
	}
}

// TestMutatingAdmissionPolicy: JSONPatch and ApplyConfiguration mutations
// applied in order (not recorded in managedFields), matchConditions, a
// test operation that fails (the object is left as it is), a patch that
// does not apply and an expression that fails under failurePolicy Fail,
// worded as kube-apiserver v1.37.2 words them (403, reason Invalid).
func TestMutatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	p := "map-" + randomSuffix()
	patches := "object.metadata.labels.m == 'err' ? [JSONPatch{op: \"add\", path: \"/data/x\", value: object.spec.x}] : " +
		"object.metadata.labels.m == 'badpath' ? [JSONPatch{op: \"add\", path: \"/nope/x\", value: \"v\"}] : " +
		"object.metadata.labels.m == 'test' ? [JSONPatch{op: \"test\", path: \"/data/a\", value: \"zzz\"}, JSONPatch{op: \"remove\", path: \"/data/a\"}] : " +
		"[JSONPatch{op: \"add\", path: \"/data/added\", value: \"by-\" + params.data.who}]"
	e.createCM(t, ns, "params", nil, map[string]string{"who": "jsonpatch"})
	e.createPolicyObject(t, "mutatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"failurePolicy":      "Fail",
		"reinvocationPolicy": "Never",
		"paramKind":          obj{"apiVersion": "v1", "kind": "ConfigMap"},
		"matchConstraints":   obj{"resourceRules": []any{obj{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"configmaps"}}}, "namespaceSelector": nsSelector(ns)},
		"matchConditions":    []any{obj{"name": "m", "expression": "has(object.metadata.labels) && 'm' in object.metadata.labels"}},
		"mutations": []any{
			obj{"patchType": "JSONPatch", "jsonPatch": obj{"expression": patches}},
			obj{"patchType": "ApplyConfiguration", "applyConfiguration": obj{"expression": `object.metadata.labels.m != 'ok' ? Object{} : Object{metadata: Object.metadata{annotations: {"applied": "yes"}}, data: {"applied": object.data.added}}`}},
		},
	}})
	e.createPolicyObject(t, "mutatingadmissionpolicybindings", obj{"metadata": obj{"name": p + "-b"}, "spec": obj{
		"policyName": p,
		"paramRef":   obj{"name": "params", "namespace": ns, "parameterNotFoundAction": "Deny"},
		"matchResources": obj{
			"namespaceSelector": obj{"matchLabels": obj{"kubernetes.io/metadata.name": ns}},
		},
	}})
	cms := cmPath(ns)
	cm := func(name, m string) obj {
		return configMap(name, map[string]string{"m": m}, map[string]string{"a": "b"})
	}
	e.awaitPolicy(t, cms, cm("probe", "ok"), func(r *response) bool {
		return r.Code == http.StatusCreated && str(decode(t, r.Body), "data", "added") != ""
	})

	got := expect(t, e.post(t, cms, cm("c-ok", "ok")), http.StatusCreated)
	if want := `{"a":"b","added":"by-jsonpatch","applied":"by-jsonpatch"}`; compact(got["data"]) != want {
		t.Errorf("data %s, want %s", compact(got["data"]), want)
	}
	if want := `{"applied":"yes"}`; compact(field0(got, "metadata", "annotations")) != want {
		t.Errorf("annotations %s, want %s", compact(field0(got, "metadata", "annotations")), want)
	}
	mf := compact(field0(got, "metadata", "managedFields"))
	if strings.Contains(mf, "added") || strings.Contains(mf, "applied") {
		t.Errorf("managedFields record the mutations: %s", mf)
	}
	// Not selected by the matchConditions: unchanged.
	plain := expect(t, e.post(t, cms, configMap("c-plain", nil, map[string]string{"a": "b"})), http.StatusCreated)
	if want := `{"a":"b"}`; compact(plain["data"]) != want {
		t.Errorf("data of an object the policy does not select: %s", compact(plain["data"]))
	}
	// A test operation that fails leaves the object as it is.
	tested := expect(t, e.post(t, cms, cm("c-test", "test")), http.StatusCreated)
	if want := `{"a":"b"}`; compact(tested["data"]) != want {
		t.Errorf("data after a failed test operation: %s", compact(tested["data"]))
	}
	denied := func(name, m, msg string) {
		t.Helper()
		full := "policy '" + p + "' with binding '" + p + "-b' denied request: " + msg
		st := checkStatus(t, e.post(t, cms, cm(name, m)), http.StatusForbidden, "Invalid", "")
		if str(st, "message") != full {
			t.Errorf("message %q\nwant    %q", str(st, "message"), full)
		}
		want := obj{"name": name, "kind": "configmaps", "causes": []any{obj{"message": full}}}
		if got := st["details"]; compact(got) != compact(want) {
			t.Errorf("details %s\nwant    %s", compact(got), compact(want))
		}
	}
	denied("c-badpath", "badpath", `JSON Patch: add operation does not apply: doc is missing path: "/nope/x": missing value`)
	denied("c-err", "err", "expression '"+patches+"' resulted in error: no such key: spec")
}

// TestValidatingAdmissionPolicyTypeChecking: the status controller fills
// status.observedGeneration and status.typeChecking: each validation's
// expression and messageExpression checked against the schemas of the
// kinds the policy matches (params of the paramKind's, variables typed),
// the issues listed per kind, as kube-controller-manager v1.37.2 words
// them; a policy that checks has an empty typeChecking.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	t.Parallel()
	e := target
	p := "vaptc-" + randomSuffix()
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"paramKind": obj{"apiVersion": "v1", "kind": "ConfigMap"},
		"matchConstraints": obj{"resourceRules": []any{obj{
			"apiGroups": []any{"", "apps"}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"},
			"resources": []any{"configmaps", "secrets", "deployments"},
		}}},
		"variables": []any{obj{"name": "v", "expression": "object.metadata.name.size()"}, obj{"name": "bad", "expression": "object.nope"}},
		"validations": []any{
			obj{"expression": "object.spec.replicas > 1", "messageExpression": "'x' + object.data.foo"},
			obj{"expression": "variables.v > 1 && params.data.x == 'y' && params.nope == 1"},
			obj{"expression": "object.metadata.name == 1"},
			obj{"expression": "object.metadata.creationTimestamp < timestamp('2030-01-01T00:00:00Z') || object.metadata.labels.a == 'b'"},
		},
		"auditAnnotations": []any{obj{"key": "k", "valueExpression": "'a' + object.foo"}},
		"matchConditions":  []any{obj{"name": "c", "expression": "object.bar == 'x'"}},
	}})
	want := `[{"fieldRef":"spec.validations[0].expression","warning":"/v1, Kind=ConfigMap: ERROR: \u003cinput\u003e:1:7: undefined field 'spec'\n | object.spec.replicas \u003e 1\n | ......^\n\n/v1, Kind=Secret: ERROR: \u003cinput\u003e:1:7: undefined field 'spec'\n | object.spec.replicas \u003e 1\n | ......^\n"},` +
		`{"fieldRef":"spec.validations[0].messageExpression","warning":"/v1, Kind=Secret: ERROR: \u003cinput\u003e:1:5: found no matching overload for '_+_' applied to '(string, bytes)'\n | 'x' + object.data.foo\n | ....^\n\napps/v1, Kind=Deployment: ERROR: \u003cinput\u003e:1:13: undefined field 'data'\n | 'x' + object.data.foo\n | ............^\n"},` +
		`{"fieldRef":"spec.validations[1].expression","warning":"/v1, Kind=ConfigMap: ERROR: \u003cinput\u003e:1:50: undefined field 'nope'\n | variables.v \u003e 1 \u0026\u0026 params.data.x == 'y' \u0026\u0026 params.nope == 1\n | .................................................^\n\n/v1, Kind=Secret: ERROR: \u003cinput\u003e:1:50: undefined field 'nope'\n | variables.v \u003e 1 \u0026\u0026 params.data.x == 'y' \u0026\u0026 params.nope == 1\n | .................................................^\n\napps/v1, Kind=Deployment: ERROR: \u003cinput\u003e:1:50: undefined field 'nope'\n | variables.v \u003e 1 \u0026\u0026 params.data.x == 'y' \u0026\u0026 params.nope == 1\n | .................................................^\n"},` +
		`{"fieldRef":"spec.validations[2].expression","warning":"/v1, Kind=ConfigMap: ERROR: \u003cinput\u003e:1:22: found no matching overload for '_==_' applied to '(string, int)'\n | object.metadata.name == 1\n | .....................^\n\n/v1, Kind=Secret: ERROR: \u003cinput\u003e:1:22: found no matching overload for '_==_' applied to '(string, int)'\n | object.metadata.name == 1\n | .....................^\n\napps/v1, Kind=Deployment: ERROR: \u003cinput\u003e:1:22: found no matching overload for '_==_' applied to '(string, int)'\n | object.metadata.name == 1\n | .....................^\n"}]`
	e.awaitTypeChecking(t, p, 1, want)

	// A policy that checks: an empty typeChecking.
	ok := p + "-ok"
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": ok}, "spec": obj{
		"matchConstraints": vapRule("configmaps", ""), // never bound
		"validations":      []any{obj{"expression": "object.data.size() < 3"}},
	}})
	e.awaitTypeChecking(t, ok, 1, "null")
	// A new generation is checked again.
	cur := expect(t, e.get(t, policyBase+"validatingadmissionpolicies/"+ok), http.StatusOK)
	cur["spec"].(obj)["validations"] = []any{obj{"expression": "object.spec == 1"}}
	expect(t, e.put(t, policyBase+"validatingadmissionpolicies/"+ok, cur), http.StatusOK)
	e.awaitTypeChecking(t, ok, 2, `[{"fieldRef":"spec.validations[0].expression","warning":"/v1, Kind=ConfigMap: ERROR: \u003cinput\u003e:1:7: undefined field 'spec'\n | object.spec == 1\n | ......^\n"}]`)
}

// awaitTypeChecking waits for the status of policy p to reach generation
// gen and compares its typeChecking.expressionWarnings (as JSON) with want.
func (e *env) awaitTypeChecking(t *testing.T, p string, gen int64, want string) {
	t.Helper()
	var got obj
	e.eventually(t, func() (bool, string) {
		got = expect(t, e.get(t, policyBase+"validatingadmissionpolicies/"+p), http.StatusOK)
		g, _ := num(got, "status", "observedGeneration")
		return g == gen, "status not observed: " + compact(got["status"])
	})
	if !has(got, "status", "typeChecking") {
		t.Errorf("no typeChecking: %s", compact(got["status"]))
	}
	if w := compact(field0(got, "status", "typeChecking", "expressionWarnings")); w != want {
		t.Errorf("expressionWarnings\n got: %s\nwant: %s", w, want)
	}
}

// TestValidatingAdmissionPolicyInvalidExpressions: a policy whose
// expressions do not compile, or give the wrong type, is refused when it
// is written, with kube-apiserver v1.37.2's Status (captured in
// testdata/policy/invalid-expressions.json): matchConditions first, then
// variables (declared in order: one the policy does not declare is an
// undefined field), validations and messageExpressions, auditAnnotations.
// readPolicyFixture reads testdata/policy/name.
func readPolicyFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "policy", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidatingAdmissionPolicyInvalidExpressions(t *testing.T) {
	t.Parallel()
	e := target
	read := func(name string) []byte { return readPolicyFixture(t, name) }
	r := e.post(t, policyBase+"validatingadmissionpolicies", read("invalid-expressions-request.json"))
	if r.Code == http.StatusCreated {
		e.del(t, policyBase+"validatingadmissionpolicies/vap-invalid", nil)
	}
	got, want := decode(t, r.Body), decode(t, read("invalid-expressions.json"))
	if compact(got) != compact(want) {
		t.Errorf("got  %s\nwant %s", compact(got), compact(want))
	}
}

// TestValidatingAdmissionPolicyDelete: policies matching DELETE see the
// deleted object as oldObject and a null object; a denial is worded as on
// the other operations.
func TestValidatingAdmissionPolicyDelete(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	p := "vapd-" + randomSuffix()
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"matchConstraints": obj{"resourceRules": []any{obj{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"DELETE"}, "resources": []any{"configmaps"}}}, "namespaceSelector": nsSelector(ns)},
		"validations": []any{obj{
			"expression":        "object == null && !('keep' in oldObject.metadata.labels) && request.operation == 'DELETE'",
			"messageExpression": "'keep ' + oldObject.metadata.name",
		}},
	}})
	e.createPolicyObject(t, "validatingadmissionpolicybindings", vapBinding(p+"-b", p, ns, "del", []any{"Deny"}, nil))
	e.createCM(t, ns, "keep", map[string]string{"b": "del", "keep": "y"}, nil)
	e.createCM(t, ns, "gone", map[string]string{"b": "del"}, nil)
	e.eventually(t, func() (bool, string) {
		r := e.del(t, cmPath(ns, "keep")+"?dryRun=All", nil)
		return r.Code != http.StatusOK, "the policy did not take effect:\n" + r.String()
	})
	full := "ValidatingAdmissionPolicy '" + p + "' with binding '" + p + "-b' denied request: keep keep"
	st := checkStatus(t, e.del(t, cmPath(ns, "keep"), nil), http.StatusUnprocessableEntity, "Invalid", `configmaps "keep" is forbidden: `+full)
	want := obj{"name": "keep", "kind": "configmaps", "causes": []any{obj{"message": full}}}
	if got := st["details"]; compact(got) != compact(want) {
		t.Errorf("details %s\nwant    %s", compact(got), compact(want))
	}
	expect(t, e.del(t, cmPath(ns, "gone"), nil), http.StatusOK)
	// Unlabel it so that the namespace can go.
	keep := expect(t, e.get(t, cmPath(ns, "keep")), http.StatusOK)
	keep["metadata"].(obj)["labels"] = obj{}
	expect(t, e.put(t, cmPath(ns, "keep"), keep), http.StatusOK)
}

// TestMutatingAdmissionPolicyInvalidExpressions: a MutatingAdmissionPolicy
// whose expressions do not compile, or whose mutations do not give an
// Object or a list(JSONPatch) (dyn included), is refused when written,
// word for word as kube-apiserver v1.37.2 refuses it.
func TestMutatingAdmissionPolicyInvalidExpressions(t *testing.T) {
	t.Parallel()
	e := target
	read := func(name string) []byte { return readPolicyFixture(t, name) }
	for _, c := range []struct{ resource, file string }{
		{"mutatingadmissionpolicies", "map-invalid-expressions"},
		// matchConditions are compiled and reported trimmed, audit
		// annotations compiled trimmed and reported as written.
		{"validatingadmissionpolicies", "vap-trim"},
	} {
		r := e.post(t, policyBase+c.resource+"?dryRun=All", read(c.file+"-request.json"))
		got, want := decode(t, r.Body), decode(t, read(c.file+".json"))
		if compact(got) != compact(want) {
			t.Errorf("%s: got  %s\nwant %s", c.file, compact(got), compact(want))
		}
	}
}
