package conformance

import (
	"net/http"
	"testing"
)

// Which requests the ValidatingAdmissionPolicies see, and how their
// messages fall back, as kube-apiserver v1.37.2 does.

// denyPolicy creates a policy failing closed with matchConstraints m and
// validations, bound with Deny (the caller waits for it to take effect).
func (e *env) denyPolicy(t *testing.T, m obj, validations []any) string {
	t.Helper()
	return e.denyPolicyVars(t, m, nil, validations)
}

// denyPolicyVars is denyPolicy with variables.
func (e *env) denyPolicyVars(t *testing.T, m obj, variables, validations []any) string {
	t.Helper()
	p := "vapreq-" + randomSuffix()
	spec := obj{"failurePolicy": "Fail", "matchConstraints": m, "validations": validations}
	if variables != nil {
		spec["variables"] = variables
	}
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": spec})
	e.createPolicyObject(t, "validatingadmissionpolicybindings", obj{"metadata": obj{"name": p}, "spec": obj{"policyName": p, "validationActions": []any{"Deny"}}})
	return p
}

// awaitDryRun repeats a dry-run request (method, path, body) until ok
// accepts its answer, failing the test at the deadline (a real server's
// policies and webhooks take effect a moment after they are written).
func (e *env) awaitDryRun(t *testing.T, method, path string, body any, ok func(*response) bool) {
	t.Helper()
	e.eventually(t, func() (bool, string) {
		r := e.do(t, method, path+"?dryRun=All", body)
		return ok(r), "the policy or webhook did not take effect:\n" + r.String()
	})
}

// code accepts an answer of HTTP status code.
func code(want int) func(*response) bool { return func(r *response) bool { return r.Code == want } }

// opsRule is vapRule for the operations ops.
func opsRule(resource, ns string, ops ...any) obj {
	rule := vapRule(resource, ns)
	rule["resourceRules"].([]any)[0].(obj)["operations"] = ops
	return rule
}

// policyDenied checks a refusal by policy p word for word.
func policyDenied(t *testing.T, r *response, p, kind, name string, code int, reason, msg string) {
	t.Helper()
	st := checkStatus(t, r, code, reason, "")
	full := "ValidatingAdmissionPolicy '" + p + "' with binding '" + p + "' denied request: " + msg
	if want := kind + ` "` + name + `" is forbidden: ` + full; str(st, "message") != want {
		t.Errorf("message %q\nwant    %q", str(st, "message"), want)
	}
}

// TestValidatingAdmissionPolicyMessageFallback: a messageExpression that
// fails at run time, or gives an empty or multi-line string, gives way to
// the message (or, without one, to the expression), with no warning; a
// message is trimmed.
func TestValidatingAdmissionPolicyMessageFallback(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	rule := opsRule("configmaps", ns, "UPDATE")
	v := func(value, message, messageExpression string) obj {
		o := obj{"expression": "object.data.a != '" + value + "'", "messageExpression": messageExpression}
		if message != "" {
			o["message"] = message
		}
		return o
	}
	p := e.denyPolicy(t, rule, []any{
		v("err", "static one", "'x' + request.subResource"),
		v("missing", "static two", "'x' + object.data.missing"),
		v("empty", "static three", "''"),
		v("multi", "static four", "'a\\nb'"),
		v("nomsg", "", "'a\\nb'"),
		v("spaces", "static six", "'  padded  '"),
	})
	cm := expect(t, e.post(t, cmPath(ns), configMap("c", nil, map[string]string{"a": "ok"})), http.StatusCreated)
	cm["data"] = obj{"a": "err"}
	e.awaitDryRun(t, "PUT", cmPath(ns, "c"), cm, code(http.StatusUnprocessableEntity))
	for value, msg := range map[string]string{
		"err": "static one", "missing": "static two", "empty": "static three", "multi": "static four",
		"nomsg": "failed expression: object.data.a != 'nomsg'", "spaces": "padded",
	} {
		cm["data"] = obj{"a": value}
		r := e.put(t, cmPath(ns, "c"), cm)
		policyDenied(t, r, p, "configmaps", "c", http.StatusUnprocessableEntity, "Invalid", msg)
		if w := r.Header.Values("Warning"); len(w) != 0 {
			t.Errorf("%s: warnings %q, want none", value, w)
		}
	}
}

// TestValidatingAdmissionPolicyNoOpUpdate: an update that changes nothing
// is still validated by the policies (and refused).
func TestValidatingAdmissionPolicyNoOpUpdate(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	rule := opsRule("configmaps", ns, "UPDATE")
	p := e.denyPolicy(t, rule, []any{obj{"expression": "false", "messageExpression": "'no ' + request.operation"}})
	cm := expect(t, e.post(t, cmPath(ns), configMap("c", nil, map[string]string{"a": "1"})), http.StatusCreated)
	e.awaitDryRun(t, "PUT", cmPath(ns, "c"), cm, code(http.StatusUnprocessableEntity))
	policyDenied(t, e.put(t, cmPath(ns, "c"), cm), p, "configmaps", "c", http.StatusUnprocessableEntity, "Invalid", "no UPDATE")
	got := expect(t, e.get(t, cmPath(ns, "c")), http.StatusOK)
	if str(got, "metadata", "resourceVersion") != str(cm, "metadata", "resourceVersion") {
		t.Errorf("the refused no-op update moved the resourceVersion")
	}
}

// TestValidatingAdmissionPolicySubresource: a rule naming a subresource
// (services/status) selects writes of it, which see request.subResource;
// the resource itself is not selected by it.
func TestValidatingAdmissionPolicySubresource(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	rule := opsRule("services/status", ns, "UPDATE")
	p := e.denyPolicy(t, rule, []any{obj{"expression": "!has(object.status.conditions)",
		"messageExpression": "'no ' + request.operation + ' of ' + request.resource.resource + '/' + request.subResource + ' (' + request.requestSubResource + ', ' + request.kind.kind + ')'"}})
	svcs := "/api/v1/namespaces/" + ns + "/services"
	svc := expect(t, e.post(t, svcs, obj{"metadata": obj{"name": "s"}, "spec": obj{"ports": []any{obj{"port": 80}}}}), http.StatusCreated)
	svc["status"] = obj{"conditions": []any{obj{"type": "Checked", "status": "True", "reason": "Test", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	e.awaitDryRun(t, "PUT", svcs+"/s/status", svc, code(http.StatusUnprocessableEntity))
	policyDenied(t, e.put(t, svcs+"/s/status", svc), p, "services", "s", http.StatusUnprocessableEntity, "Invalid", "no UPDATE of services/status (status, Service)")
	delete(svc, "status")
	svc["metadata"].(obj)["labels"] = obj{"updated": "yes"}
	svc = expect(t, e.put(t, svcs+"/s", svc), http.StatusOK) // the service itself is not selected
	svc["status"] = obj{"conditions": []any{}}
	expect(t, e.put(t, svcs+"/s/status", svc), http.StatusOK) // a status the policy admits
}
