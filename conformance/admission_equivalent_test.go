package conformance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// matchPolicy Equivalent (the default) against Exact: a rule naming one
// version of a resource selects the requests made through another version
// of it; the webhook or policy is sent the object in the rule's version,
// with kind and resource of that version and requestKind and
// requestResource of the request's.

// twoVersionCRD is a CRD of gears served as v1 (stored) and v2, with no
// conversion (the objects are the same but for their apiVersion).
func twoVersionCRD(group string) obj {
	schema := obj{"openAPIV3Schema": obj{"type": "object", "properties": obj{
		"spec": obj{"type": "object", "properties": obj{"size": obj{"type": "integer"}}}}}}
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": "gears." + group},
		"spec": obj{
			"group": group, "scope": "Namespaced",
			"names": obj{"plural": "gears", "singular": "gear", "kind": "Gear", "listKind": "GearList"},
			"versions": []any{
				obj{"name": "v1", "served": true, "storage": true, "schema": schema},
				obj{"name": "v2", "served": true, "storage": false, "schema": schema},
			},
		},
	}
}

// admissionVersions summarises what an admission request says of versions.
func admissionVersions(req obj) string {
	return fmt.Sprintf("kind=%s resource=%s requestKind=%s requestResource=%s object=%s",
		str(req, "kind", "version"), str(req, "resource", "version"), str(req, "requestKind", "version"),
		str(req, "requestResource", "version"), str(req, "object", "apiVersion"))
}

func TestAdmissionMatchPolicyEquivalent(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	group := "eq" + randomSuffix() + ".adm16.i16.kapi.dev"
	e.createCRDObject(t, twoVersionCRD(group))
	e.waitCondition(t, "gears v2 to be served", func() bool { return e.get(t, gearPath(group, "v2", ns)).Code == http.StatusOK })

	equivalent, exact := startWebhook(t, allow), startWebhook(t, allow)
	hook := func(w *webhookServer, name, policy string) obj {
		h := w.hook(name, ns, "/")
		h["matchPolicy"] = policy
		h["rules"] = []any{
			obj{"operations": []any{"CREATE"}, "apiGroups": []any{group}, "apiVersions": []any{"v1"}, "resources": []any{"gears"}},
			obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}},
		}
		return h
	}
	e.createWebhookConfig(t, "validating", hook(equivalent, "equivalent", "Equivalent"), hook(exact, "exact", "Exact"))
	e.waitWebhooks(t, ns, nil)

	gears := func(w *webhookServer) map[string]string {
		out := map[string]string{}
		for _, req := range w.requests() {
			if str(req, "resource", "resource") == "gears" {
				out[str(req, "name")] = admissionVersions(req)
			}
		}
		return out
	}
	expect(t, e.post(t, gearPath(group, "v2", ns), gear(group, "v2", "g2", obj{"size": 2})), http.StatusCreated)
	expect(t, e.post(t, gearPath(group, "v1", ns), gear(group, "v1", "g1", obj{"size": 1})), http.StatusCreated)
	want := map[string]string{
		"g2": "kind=v1 resource=v1 requestKind=v2 requestResource=v2 object=" + group + "/v1",
		"g1": "kind=v1 resource=v1 requestKind=v1 requestResource=v1 object=" + group + "/v1",
	}
	if got := gears(equivalent); compact(got) != compact(want) {
		t.Errorf("the Equivalent webhook was sent %s\nwant %s", compact(got), compact(want))
	}
	delete(want, "g2")
	if got := gears(exact); compact(got) != compact(want) {
		t.Errorf("the Exact webhook was sent %s\nwant %s", compact(got), compact(want))
	}

	// A mutating webhook patches the object in its rule's version; the
	// object is converted back to the request's.
	mutating := startWebhook(t, func(req obj) obj {
		if str(req, "resource", "resource") != "gears" {
			return allow(req)
		}
		return patchAnswer(obj{"op": "add", "path": "/metadata/labels", "value": obj{"seen-as": str(req, "object", "apiVersion")[len(group)+1:]}},
			obj{"op": "replace", "path": "/spec/size", "value": 7})
	})
	m := hook(mutating, "mutate", "Equivalent")
	m["reinvocationPolicy"] = "Never"
	e.createWebhookConfig(t, "mutating", m)
	e.awaitDryRun(t, "POST", gearPath(group, "v2", ns), gear(group, "v2", "m-probe", obj{"size": 2}), func(r *response) bool {
		return r.Code == http.StatusCreated && strings.Contains(string(r.Body), "seen-as")
	})
	got := expect(t, e.post(t, gearPath(group, "v2", ns), gear(group, "v2", "mutated", obj{"size": 2})), http.StatusCreated)
	if str(got, "apiVersion") != group+"/v2" || str(got, "metadata", "labels", "seen-as") != "v1" || compact(field0(got, "spec", "size")) != "7" {
		t.Errorf("created through v2 with a mutating webhook of v1: %s", compact(got))
	}

	// A policy: Equivalent by default, Exact when asked.
	for _, mp := range []string{"Equivalent", "Exact"} {
		prefix := strings.ToLower(mp)
		rule := obj{"matchPolicy": mp, "namespaceSelector": nsSelector(ns), "resourceRules": []any{obj{
			"apiGroups": []any{group}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE"}, "resources": []any{"gears"}}}}
		p := e.denyPolicy(t, rule, []any{obj{"expression": "!object.metadata.name.startsWith('" + prefix + "')",
			"messageExpression": "'kind=' + request.kind.version + ' resource=' + request.resource.version + ' requestKind=' + request.requestKind.version + ' requestResource=' + request.requestResource.version + ' object=' + object.apiVersion"}})
		probe := gear(group, "v1", prefix+"-probe", obj{"size": 1})
		e.awaitPolicy(t, gearPath(group, "v1", ns), probe, func(r *response) bool { return strings.Contains(string(r.Body), "ValidatingAdmissionPolicy") })
		r := e.post(t, gearPath(group, "v2", ns), gear(group, "v2", prefix+"-v2", obj{"size": 2}))
		if mp == "Exact" {
			expect(t, r, http.StatusCreated)
			continue
		}
		st := checkStatus(t, r, http.StatusUnprocessableEntity, "Invalid", "")
		msg := "ValidatingAdmissionPolicy '" + p + "' with binding '" + p + "' denied request: kind=v1 resource=v1 requestKind=v2 requestResource=v2 object=" + group + "/v1"
		if want := `gears.` + group + ` "` + prefix + `-v2" is forbidden: ` + msg; str(st, "message") != want {
			t.Errorf("policy %s: %q\nwant %q", mp, str(st, "message"), want)
		}
	}
}
