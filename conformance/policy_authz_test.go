package conformance

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
)

// denyServiceAccounts is an authorizer that has no opinion on service
// accounts (which RBAC gives no rights by default) and allows everyone
// else, as the real server's RBAC does for its admin and a namespace's
// default service account.
type denyServiceAccounts struct{ apiserver.AlwaysAllow }

func (denyServiceAccounts) Authorize(_ context.Context, a apiserver.Attributes) (apiserver.Decision, string, error) {
	if strings.HasPrefix(a.User.Name, "system:serviceaccount:") {
		return apiserver.DecisionNoOpinion, "", nil
	}
	return apiserver.DecisionAllow, "", nil
}

// TestValidatingAdmissionPolicyAuthorizer: the authorizer library of
// policy expressions asks the server's authorizer what the request's user,
// or a service account, may do: the admin may create configmaps, the
// default service account may not; authorizer.requestResource is the
// request's resource; a path check.
func TestValidatingAdmissionPolicyAuthorizer(t *testing.T) {
	t.Parallel()
	e := withDefaults(t, func(c *apiserver.Config) { c.Authorizer = denyServiceAccounts{} })
	ns := e.namespace(t)
	sa := "authorizer.serviceAccount(request.namespace, 'default').group('').resource('configmaps').namespace(request.namespace)"
	// An authorizer check is costly: three in one expression exceed its
	// budget.
	costly := "!" + sa + ".check('create').errored() && " + sa + ".check('get').reason() == '' && " + sa + ".check('list').error() == ''"
	p := e.denyPolicyVars(t, vapRule("configmaps", ns), []any{obj{"name": "sa", "expression": sa + ".check('create')"}}, []any{
		obj{"expression": "authorizer.group('').resource('configmaps').namespace(request.namespace).name(object.metadata.name).check('create').allowed()",
			"message": "the user may not create it"},
		obj{"expression": "!object.metadata.name.startsWith('sa-') || " + sa + ".check('create').allowed() || " + sa + ".check('create').errored()",
			"message": "the default service account may not create configmaps"},
		obj{"expression": "authorizer.requestResource.check('delete').allowed() && authorizer.requestResource.subresource('status').check('update').allowed()",
			"message": "the user may not delete it"},
		obj{"expression": "authorizer.path('/healthz').check('get').allowed()", "message": "the user may not get /healthz"},
		obj{"expression": "!object.metadata.name.startsWith('never-') || " + sa + ".check('create').allowed()", "message": "probe"},
		// What a refusal answers, and a path check of a service account.
		obj{"expression": "!variables.sa.errored() && variables.sa.reason() == '' && variables.sa.error() == ''",
			"message": "a refusal is an error or has a reason"},
		obj{"expression": "!authorizer.serviceAccount(request.namespace, 'default').path('/healthz').check('get').allowed()",
			"message": "the default service account may get /healthz"},
		obj{"expression": "!object.metadata.name.startsWith('costly-') || " + costly},
	})
	e.awaitPolicy(t, cmPath(ns), configMap("never-probe", nil, nil), func(r *response) bool { return strings.Contains(string(r.Body), "denied request: probe") })
	expect(t, e.post(t, cmPath(ns), configMap("plain", nil, nil)), http.StatusCreated)
	policyDenied(t, e.post(t, cmPath(ns), configMap("sa-made", nil, nil)), p, "configmaps", "sa-made", http.StatusUnprocessableEntity, "Invalid",
		"the default service account may not create configmaps")

	policyDenied(t, e.post(t, cmPath(ns), configMap("costly-x", nil, nil)), p, "configmaps", "costly-x", http.StatusUnprocessableEntity, "Invalid",
		"expression '!object.metadata.name.startsWith('costly-') || "+costly+"' resulted in error: operation cancelled: actual cost limit exceeded")

	// A messageExpression cannot use the authorizer.
	r := e.post(t, policyBase+"validatingadmissionpolicies", obj{"metadata": obj{"name": p + "-msg"}, "spec": obj{
		"matchConstraints": vapRule("configmaps", ""),
		"validations":      []any{obj{"expression": "true", "messageExpression": "authorizer.path('/x').check('get').reason()"}}}})
	st := checkStatus(t, r, http.StatusUnprocessableEntity, "Invalid", "")
	want := "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"" + p + "-msg\" is invalid: spec.validations[0].messageExpression: Invalid value: \"authorizer.path('/x').check('get').reason()\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')\n | authorizer.path('/x').check('get').reason()\n | ^"
	if str(st, "message") != want {
		t.Errorf("a messageExpression with the authorizer: %q\nwant %q", str(st, "message"), want)
	}
}

// TestWebhookMatchConditionAuthorizer: a webhook's matchConditions have
// the authorizer library too: a condition that the request's user may
// create configmaps selects the request, one that the default service
// account may does not.
func TestWebhookMatchConditionAuthorizer(t *testing.T) {
	t.Parallel()
	e := withDefaults(t, func(c *apiserver.Config) { c.Authorizer = denyServiceAccounts{} })
	ns := e.namespace(t)
	w := startWebhook(t, func(req obj) obj { return obj{"allowed": false, "status": obj{"message": "matched"}} })
	user := w.hook("user", ns, "/")
	user["matchConditions"] = []any{obj{"name": "user-may", "expression": `object.metadata.name.startsWith('user-') && authorizer.group('').resource('configmaps').namespace(request.namespace).check('create').allowed()`}}
	sa := w.hook("sa", ns, "/")
	sa["matchConditions"] = []any{obj{"name": "sa-may", "expression": `object.metadata.name.startsWith('probe-') || object.metadata.name.startsWith('sa-') && authorizer.serviceAccount(request.namespace, 'default').group('').resource('configmaps').namespace(request.namespace).check('create').allowed()`}}
	e.createWebhookConfig(t, "validating", sa, user)
	e.waitWebhooks(t, ns, nil)
	expect(t, e.post(t, cmPath(ns), configMap("sa-1", nil, nil)), http.StatusCreated)
	webhookStatus(t, e.post(t, cmPath(ns), configMap("user-1", nil, nil)), 400, "", `admission webhook "user.webhooks.i16.kapi.dev" denied the request: matched`)
}
