package conformance

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// restrictedPod is a pod the restricted Pod Security level admits.
func restrictedPod(name string, labels map[string]string) obj {
	p := pod(name, "", labels)
	spec := p["spec"].(obj)
	spec["securityContext"] = obj{"runAsNonRoot": true, "runAsUser": 1000, "seccompProfile": obj{"type": "RuntimeDefault"}}
	spec["containers"].([]any)[0].(obj)["securityContext"] = obj{
		"allowPrivilegeEscalation": false, "capabilities": obj{"drop": []any{"ALL"}}}
	return p
}

// TestAdmissionOrder: the validating phase runs in kube-apiserver's
// order: PodSecurity, then the ValidatingAdmissionPolicies, then the
// validating webhooks, then ResourceQuota. A pod PodSecurity or a policy
// refuses never reaches the webhook; one the webhook refuses is refused
// with its words, not the quota's; one it admits is refused by the quota.
func TestAdmissionOrder(t *testing.T) {
	t.Parallel()
	e := withQuotaKinds(t)
	ns := e.namespace(t)
	quotas := "/api/v1/namespaces/" + ns + "/resourcequotas"
	if !e.served(t, quotas) {
		t.Skipf("%s does not serve resourcequotas", e.name)
	}
	e.ensureDefaultServiceAccount(t, ns)
	expect(t, e.do(t, "PATCH", "/api/v1/namespaces/"+ns, obj{"metadata": obj{"labels": obj{"pod-security.kubernetes.io/enforce": "restricted"}}},
		"Content-Type", "application/merge-patch+json"), http.StatusOK)
	expect(t, e.post(t, quotas, obj{"metadata": obj{"name": "q"}, "spec": obj{"hard": obj{"pods": "0"}}}), http.StatusCreated)
	e.waitCollection(t, quotas, "quota usage", e.within(30*time.Second), func(objs map[string]obj) bool {
		return str(objs[ns+"/q"], "status", "used", "pods") == "0"
	})

	w := startWebhook(t, func(req obj) obj {
		if strings.HasPrefix(str(req, "name"), "deny-") {
			return obj{"allowed": false, "status": obj{"message": "webhook says no"}}
		}
		return allow(req)
	})
	h := w.hook("order", ns, "/")
	h["rules"] = []any{obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods", "configmaps"}}}
	e.createWebhookConfig(t, "validating", h)
	e.waitWebhooks(t, ns, nil)

	p := "order-" + randomSuffix()
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"failurePolicy":    "Fail",
		"matchConstraints": vapRule("pods", ns),
		"validations":      []any{obj{"expression": "!has(object.metadata.labels) || !('vap' in object.metadata.labels)", "message": "policy says no"}},
	}})
	e.createPolicyObject(t, "validatingadmissionpolicybindings", obj{"metadata": obj{"name": p}, "spec": obj{"policyName": p, "validationActions": []any{"Deny"}}})
	pods := "/api/v1/namespaces/" + ns + "/pods"
	e.awaitPolicy(t, pods, restrictedPod("await-vap", map[string]string{"vap": "x"}), func(r *response) bool {
		return strings.Contains(string(r.Body), "policy says no")
	})

	priv := pod("priv", "", map[string]string{"vap": "x"})
	priv["spec"].(obj)["containers"].([]any)[0].(obj)["securityContext"] = obj{"privileged": true}
	st := checkStatus(t, e.post(t, pods, priv), http.StatusForbidden, "Forbidden", "")
	if msg := str(st, "message"); !strings.HasPrefix(msg, `pods "priv" is forbidden: violates PodSecurity "restricted:latest": `) {
		t.Errorf("a privileged pod: %q, want PodSecurity's refusal", msg)
	}
	st = checkStatus(t, e.post(t, pods, restrictedPod("deny-vap", map[string]string{"vap": "x"})), http.StatusUnprocessableEntity, "Invalid", "")
	if want := `pods "deny-vap" is forbidden: ValidatingAdmissionPolicy '` + p + `' with binding '` + p + `' denied request: policy says no`; str(st, "message") != want {
		t.Errorf("a pod the policy refuses: %q\nwant %q", str(st, "message"), want)
	}
	webhookStatus(t, e.post(t, pods, restrictedPod("deny-hook", nil)), http.StatusBadRequest, "",
		`admission webhook "order.webhooks.i16.kapi.dev" denied the request: webhook says no`)
	st = checkStatus(t, e.post(t, pods, restrictedPod("admitted", nil)), http.StatusForbidden, "Forbidden", "")
	if want := `pods "admitted" is forbidden: exceeded quota: q, requested: pods=1, used: pods=0, limited: pods=0`; str(st, "message") != want {
		t.Errorf("a pod only the quota refuses: %q\nwant %q", str(st, "message"), want)
	}
	var called []string
	for _, req := range w.requests() {
		if str(req, "resource", "resource") == "pods" && req["dryRun"] != true { // not the probes awaiting the policy
			called = append(called, str(req, "name"))
		}
	}
	if want := []string{"deny-hook", "admitted"}; !slices.Equal(called, want) {
		t.Errorf("the webhook was called for pods %q, want %q (PodSecurity and the policy come before it, the quota after)", called, want)
	}
}

// TestAdmissionDeleteOrderAndWarnings: a delete is admitted by the
// mutating webhooks, then the ValidatingAdmissionPolicies, then the
// validating webhooks; the warnings of the webhooks and policies come back
// as Warning headers of the delete.
func TestAdmissionDeleteOrderAndWarnings(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	answer := func(who string) func(req obj) obj {
		return func(req obj) obj {
			if str(req, "operation") != "DELETE" {
				return allow(req)
			}
			return obj{"allowed": true, "warnings": []any{who + " sees the delete of " + str(req, "name")}}
		}
	}
	validating, mutating := startWebhook(t, answer("validating")), startWebhook(t, answer("mutating"))
	deletes := func(h obj) obj {
		h["rules"] = []any{obj{"operations": []any{"CREATE", "DELETE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}}
		return h
	}
	e.createWebhookConfig(t, "validating", deletes(validating.hook("vdel", ns, "/")))
	e.createWebhookConfig(t, "mutating", deletes(mutating.hook("mdel", ns, "/")))
	e.waitWebhooks(t, ns, nil)
	p := e.denyPolicy(t, opsRule("configmaps", ns, "DELETE"), []any{obj{"expression": "!has(oldObject.metadata.labels) || !('vap' in oldObject.metadata.labels)", "message": "policy says no"}})
	expect(t, e.post(t, cmPath(ns), configMap("await", map[string]string{"vap": "x"}, nil)), http.StatusCreated)
	e.awaitDryRun(t, "DELETE", cmPath(ns, "await"), nil, code(http.StatusUnprocessableEntity))
	mutatingSeen, validatingSeen := len(mutating.requests()), len(validating.requests())

	expect(t, e.post(t, cmPath(ns), configMap("kept", map[string]string{"vap": "x"}, nil)), http.StatusCreated)
	expect(t, e.post(t, cmPath(ns), configMap("gone", nil, nil)), http.StatusCreated)
	r := e.del(t, cmPath(ns, "kept"), nil)
	policyDenied(t, r, p, "configmaps", "kept", http.StatusUnprocessableEntity, "Invalid", "policy says no")
	if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != `299 - "mutating sees the delete of kept"` {
		t.Errorf("warnings of the refused delete %q, want the mutating webhook's", w)
	}
	r = e.del(t, cmPath(ns, "gone"), nil)
	expect(t, r, http.StatusOK)
	if w := r.Header.Values("Warning"); len(w) != 2 || w[0] != `299 - "mutating sees the delete of gone"` || w[1] != `299 - "validating sees the delete of gone"` {
		t.Errorf("warnings of the delete %q, want both webhooks'", w)
	}
	names := func(w *webhookServer, from int) []string {
		var out []string
		for _, req := range w.requests()[from:] {
			if str(req, "operation") == "DELETE" {
				out = append(out, str(req, "name"))
			}
		}
		return out
	}
	if got, want := names(mutating, mutatingSeen), []string{"kept", "gone"}; !slices.Equal(got, want) {
		t.Errorf("the mutating webhook saw the deletes of %q, want %q (it comes before the policy)", got, want)
	}
	if got, want := names(validating, validatingSeen), []string{"gone"}; !slices.Equal(got, want) {
		t.Errorf("the validating webhook saw the deletes of %q, want %q (it comes after the policy)", got, want)
	}
}
