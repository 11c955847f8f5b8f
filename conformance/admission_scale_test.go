package conformance

import (
	"net/http"
	"strings"
	"testing"
)

// TestAdmissionScaleSubresource: a write of a deployment's scale
// subresource is admitted as kube-apiserver admits it: the webhooks and
// policies whose rules name deployments/scale are sent the Scale
// (autoscaling/v1) as object and oldObject, with the deployments resource
// and subResource scale.
func TestAdmissionScaleSubresource(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	deployments := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	expect(t, e.post(t, deployments, deployment("d", 1)), http.StatusCreated)
	scalePath := deployments + "/d/scale"

	w := startWebhook(t, func(req obj) obj {
		if n, _ := num(req, "object", "spec", "replicas"); n > 5 {
			return obj{"allowed": false, "status": obj{"message": "too many"}}
		}
		return allow(req)
	})
	h := w.hook("scale", ns, "/")
	h["rules"] = []any{
		obj{"operations": []any{"UPDATE"}, "apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "resources": []any{"deployments/scale"}},
		obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}},
	}
	e.createWebhookConfig(t, "validating", h)
	e.waitWebhooks(t, ns, nil)
	rule := obj{"namespaceSelector": nsSelector(ns), "resourceRules": []any{obj{
		"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"}, "operations": []any{"UPDATE"}, "resources": []any{"deployments/scale"}}}}
	p := e.denyPolicy(t, rule, []any{obj{"expression": "object.spec.replicas != 4",
		"messageExpression": "request.kind.group + '/' + request.kind.version + ' ' + request.kind.kind + ' ' + request.resource.group + '/' + request.resource.resource + '/' + request.subResource + ' ' + object.apiVersion + ' ' + object.kind + ' from ' + string(oldObject.spec.replicas)"}})
	scale := func(n int) obj {
		return obj{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": obj{"name": "d", "namespace": ns}, "spec": obj{"replicas": n}}
	}
	e.awaitDryRun(t, "PUT", scalePath, scale(4), func(r *response) bool { return strings.Contains(string(r.Body), "ValidatingAdmissionPolicy") })

	expect(t, e.put(t, scalePath, scale(2)), http.StatusOK)
	var req obj
	for _, r := range w.requests() {
		if str(r, "resource", "resource") == "deployments" && r["dryRun"] != true {
			req = r
		}
	}
	if req == nil {
		t.Fatal("the webhook was not called for the scale")
	}
	want := map[string]string{
		"kind": `{"group":"autoscaling","kind":"Scale","version":"v1"}`, "requestKind": `{"group":"autoscaling","kind":"Scale","version":"v1"}`,
		"resource": `{"group":"apps","resource":"deployments","version":"v1"}`, "requestResource": `{"group":"apps","resource":"deployments","version":"v1"}`,
		"subResource": `"scale"`, "requestSubResource": `"scale"`, "operation": `"UPDATE"`, "name": `"d"`,
	}
	for k, v := range want {
		if got := compact(req[k]); got != v {
			t.Errorf("request.%s = %s, want %s", k, got, v)
		}
	}
	if str(req, "object", "kind") != "Scale" || str(req, "object", "apiVersion") != "autoscaling/v1" || compact(field0(req, "object", "spec", "replicas")) != "2" ||
		str(req, "oldObject", "kind") != "Scale" || compact(field0(req, "oldObject", "spec", "replicas")) != "1" {
		t.Errorf("object %s\noldObject %s", compact(req["object"]), compact(req["oldObject"]))
	}
	webhookStatus(t, e.put(t, scalePath, scale(6)), http.StatusBadRequest, "", `admission webhook "scale.webhooks.i16.kapi.dev" denied the request: too many`)
	policyDenied(t, e.put(t, scalePath, scale(4)), p, "deployments.apps", "d", http.StatusUnprocessableEntity, "Invalid",
		"autoscaling/v1 Scale apps/deployments/scale autoscaling/v1 Scale from 2")
	got := expect(t, e.get(t, scalePath), http.StatusOK)
	if compact(field0(got, "spec", "replicas")) != "2" {
		t.Errorf("replicas after the refusals: %s", compact(got))
	}

	// A mutating webhook patches the Scale written.
	m := startWebhook(t, func(req obj) obj {
		if n, _ := num(req, "object", "spec", "replicas"); n == 7 && str(req, "object", "kind") == "Scale" {
			return patchAnswer(obj{"op": "replace", "path": "/spec/replicas", "value": 3})
		}
		return allow(req)
	})
	mh := m.hook("scale-m", ns, "/")
	mh["rules"] = h["rules"]
	e.createWebhookConfig(t, "mutating", mh)
	e.awaitDryRun(t, "PUT", scalePath, scale(7), func(r *response) bool {
		return r.Code == http.StatusOK && compact(field0(decode(t, r.Body), "spec", "replicas")) == "3"
	})
	got = expect(t, e.put(t, scalePath, scale(7)), http.StatusOK)
	if compact(field0(got, "spec", "replicas")) != "3" {
		t.Errorf("scaled to 7 through a webhook that makes it 3: %s", compact(got))
	}
}
