package conformance

import (
	"net/http"
	"strings"
	"testing"
)

// TestAdmissionConnect: a CONNECT request (pods' exec, attach,
// portforward, proxy) is admitted before the server connects: the
// webhooks whose rules name it are sent its options as object
// (PodExecOptions ... read from the query), operation CONNECT, no old
// object and no options, and their refusal is the answer; a policy sees
// the same request.
func TestAdmissionConnect(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	w := startWebhook(t, func(req obj) obj {
		if str(req, "subResource") == "proxy" {
			return allow(req)
		}
		return obj{"allowed": false, "status": obj{"message": "no " + str(req, "subResource")}}
	})
	h := w.hook("connect", ns, "/")
	h["rules"] = []any{
		obj{"operations": []any{"CONNECT"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"pods/exec", "pods/attach", "pods/portforward", "pods/proxy"}},
		obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}},
	}
	e.createWebhookConfig(t, "validating", h)
	e.waitWebhooks(t, ns, nil)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	expect(t, e.post(t, pods, pod("p", "", nil)), http.StatusCreated)

	want := map[string]string{
		"exec":        `{"apiVersion":"v1","command":["ls","-l"],"container":"app","kind":"PodExecOptions","stdout":true}`,
		"attach":      `{"apiVersion":"v1","kind":"PodAttachOptions","stdout":true}`,
		"portforward": `{"apiVersion":"v1","kind":"PodPortForwardOptions","ports":[80]}`,
	}
	for sub, query := range map[string]string{"exec": "?command=ls&command=-l&stdout=true&container=app", "attach": "?stdout=true&stdin=false", "portforward": "?ports=80"} {
		webhookStatus(t, e.post(t, pods+"/p/"+sub+query, nil), http.StatusBadRequest, "", `admission webhook "connect.webhooks.i16.kapi.dev" denied the request: no `+sub)
	}
	// Allowed by the webhook, the proxy then fails to reach the pod.
	if r := e.post(t, pods+"/p/proxy", nil); r.Code < 400 || strings.Contains(string(r.Body), "admission webhook") {
		t.Errorf("proxy of a pod on no node:\n%s", r)
	}
	got := map[string]string{}
	for _, req := range w.requests() {
		sub := str(req, "subResource")
		if str(req, "operation") != "CONNECT" || str(req, "resource", "resource") != "pods" || str(req, "requestSubResource") != sub ||
			str(req, "kind", "kind") != str(req, "object", "kind") || str(req, "requestKind", "kind") != str(req, "kind", "kind") ||
			str(req, "name") != "p" || str(req, "namespace") != ns || req["oldObject"] != nil || req["options"] != nil || req["dryRun"] != false {
			t.Errorf("%s request: %s", sub, compact(req))
		}
		got[sub] = compact(req["object"])
	}
	want["proxy"] = `{"apiVersion":"v1","kind":"PodProxyOptions"}`
	if compact(got) != compact(want) {
		t.Errorf("objects sent %s\nwant %s", compact(got), compact(want))
	}

	// A policy on CONNECT.
	p := e.denyPolicy(t, opsRule("pods/proxy", ns, "CONNECT"), []any{obj{"expression": "false",
		"messageExpression": "request.operation + ' ' + request.kind.kind + ' ' + request.subResource + ' ' + object.kind + ' ' + string(oldObject == null)"}})
	e.eventually(t, func() (bool, string) {
		r := e.post(t, pods+"/p/proxy", nil)
		return strings.Contains(string(r.Body), "ValidatingAdmissionPolicy"), "the policy did not take effect:\n" + r.String()
	})
	policyDenied(t, e.post(t, pods+"/p/proxy", nil), p, "pods", "p", http.StatusUnprocessableEntity, "Invalid", "CONNECT PodProxyOptions proxy PodProxyOptions true")
}
