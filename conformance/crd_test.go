package conformance

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// widgetCRD is golden 84's CRD in group, with a second served version
// (v1beta1, not stored) added.
func widgetCRD(group string) obj {
	schema := obj{"type": "object", "properties": obj{
		"spec": obj{"type": "object", "required": []any{"size"}, "properties": obj{
			"size":  obj{"type": "integer", "minimum": 1},
			"color": obj{"type": "string", "enum": []any{"red", "blue"}},
			"mode":  obj{"type": "string", "default": "slow"},
		}},
		"status": obj{"type": "object", "properties": obj{"ready": obj{"type": "boolean"}}},
	}}
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": "widgets." + group},
		"spec": obj{
			"group": group, "scope": "Namespaced",
			"names": obj{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": []any{"wd"}},
			"versions": []any{
				obj{"name": "v1", "served": true, "storage": true, "subresources": obj{"status": obj{}},
					"additionalPrinterColumns": []any{obj{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}},
					"schema":                   obj{"openAPIV3Schema": schema}},
				obj{"name": "v1beta1", "served": true, "storage": false, "schema": obj{"openAPIV3Schema": schema}},
			},
		},
	}
}

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// createCRD creates a CRD in a fresh group, waits for it to be Established,
// and deletes it when the case ends.
func (e *env) createCRD(t *testing.T) (group string, created obj) {
	t.Helper()
	group = "c" + randomSuffix() + ".conformance.kapi.dev"
	return group, e.createCRDObject(t, widgetCRD(group))
}

// createCRDObject creates crd, waits for it to be Established and deletes
// it when the case ends; it returns the create response.
func (e *env) createCRDObject(t *testing.T, crd obj) obj {
	t.Helper()
	created := expect(t, e.post(t, crdPath, crd), http.StatusCreated)
	name := str(crd, "metadata", "name")
	t.Cleanup(func() {
		if r := e.del(t, crdPath+"/"+name, nil); r.Code != http.StatusOK && r.Code != http.StatusNotFound {
			t.Errorf("deleting CRD %s:\n%s", name, r)
		}
	})
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name="+name), "the CRD to be Established", 30*time.Second,
		func(objs map[string]obj) bool {
			for _, o := range objs {
				if conditionStatus(o, "Established") == "True" {
					return true
				}
			}
			return false
		})
	return created
}

func conditionStatus(o obj, typ string) string {
	conds, _ := field(o, "status", "conditions")
	list, _ := conds.([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

func widget(name string, spec obj) obj {
	return obj{"apiVersion": "", "kind": "Widget", "metadata": obj{"name": name}, "spec": spec}
}

// TestCustomResourceDefinitions checks CRDs as kube-apiserver serves them:
// the CRD's status (golden 84, 85), discovery (86), validation, pruning and
// defaulting of custom resources (87, 88), JSON only (89, 90), several
// versions without conversion, the status subresource, and deletion of a
// CRD with its objects.
func TestCustomResourceDefinitions(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	group, created := e.createCRD(t)
	crdName := "widgets." + group
	base := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets"

	t.Run("create-response", func(t *testing.T) {
		// Golden 84: the create response has not been reconciled yet, or
		// already has; either way storedVersions and the conversion default
		// are there.
		if sv, _ := field(created, "status", "storedVersions"); compact(sv) != `["v1"]` {
			t.Errorf("storedVersions %s", compact(sv))
		}
		if str(created, "spec", "conversion", "strategy") != "None" {
			t.Errorf("conversion %v", created["spec"])
		}
	})

	t.Run("status", func(t *testing.T) {
		crd := expect(t, e.get(t, crdPath+"/"+crdName), http.StatusOK)
		if conditionStatus(crd, "NamesAccepted") != "True" || conditionStatus(crd, "Established") != "True" {
			t.Errorf("conditions %s", compact(crd["status"]))
		}
		an, _ := field(crd, "status", "acceptedNames")
		if compact(an) != `{"kind":"Widget","listKind":"WidgetList","plural":"widgets","shortNames":["wd"],"singular":"widget"}` {
			t.Errorf("acceptedNames %s", compact(an))
		}
	})

	t.Run("discovery", func(t *testing.T) {
		// A real server adds an Established CRD to discovery shortly after,
		// not at once.
		e.waitCondition(t, "discovery to list the CRD's group", func() bool {
			if e.get(t, "/apis/"+group+"/v1").Code != http.StatusOK {
				return false
			}
			apis := expect(t, e.get(t, "/apis"), http.StatusOK)
			groups, _ := apis["groups"].([]any)
			return slices.ContainsFunc(groups, func(x any) bool { return x.(map[string]any)["name"] == group })
		})
		list := expect(t, e.get(t, "/apis/"+group+"/v1"), http.StatusOK)
		entries := resourceEntries(t, list)
		w, ok := entries["widgets"]
		if !ok || entries["widgets/status"] == nil {
			t.Fatalf("resources %s", compact(list))
		}
		if compact(w["verbs"]) != `["delete","deletecollection","get","list","patch","create","update","watch"]` ||
			compact(w["shortNames"]) != `["wd"]` || w["namespaced"] != true || w["kind"] != "Widget" || str(w, "storageVersionHash") == "" {
			t.Errorf("widgets entry %s", compact(w))
		}
		g := expect(t, e.get(t, "/apis/"+group), http.StatusOK)
		if str(g, "preferredVersion", "version") != "v1" {
			t.Errorf("group %s", compact(g))
		}
		found := false
		for _, x := range expect(t, e.get(t, "/apis"), http.StatusOK)["groups"].([]any) {
			found = found || x.(map[string]any)["name"] == group
		}
		if !found {
			t.Errorf("/apis does not list %s", group)
		}
	})

	t.Run("create-prune-default", func(t *testing.T) {
		w := widget("w1", obj{"size": 3, "color": "red", "unknown": "pruned"})
		w["apiVersion"] = group + "/v1"
		r := e.post(t, base, w)
		o := expect(t, r, http.StatusCreated)
		if want := loadGolden(t, "87-create-widget").ResponseHeader["Warning"]; r.Header.Get("Warning") != want {
			t.Errorf("Warning %q, want %q (golden 87)", r.Header.Get("Warning"), want)
		}
		if str(o, "apiVersion") != group+"/v1" || str(o, "kind") != "Widget" {
			t.Errorf("type %s %s", str(o, "apiVersion"), str(o, "kind"))
		}
		if has(o, "spec", "unknown") || str(o, "spec", "mode") != "slow" {
			t.Errorf("spec %s", compact(o["spec"]))
		}
		if g, _ := num(o, "metadata", "generation"); g != 1 {
			t.Errorf("generation %d", g)
		}
		got := expect(t, e.get(t, base+"/w1"), http.StatusOK)
		if compact(got["spec"]) != compact(o["spec"]) {
			t.Errorf("get %s", compact(got))
		}
	})

	t.Run("invalid", func(t *testing.T) {
		w := widget("w2", obj{"size": 0, "color": "green"})
		w["apiVersion"] = group + "/v1"
		checkGoldenStatusAnyOrder(t, e.post(t, base, w), "88-create-widget-invalid", "example.com", group)
		w = widget("w3", obj{"size": "string"})
		w["apiVersion"] = group + "/v1"
		checkStatus(t, e.post(t, base, w), http.StatusUnprocessableEntity, "Invalid",
			`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`)
	})

	t.Run("json-only", func(t *testing.T) {
		w := widget("pb", obj{"size": 1})
		w["apiVersion"] = group + "/v1"
		expect(t, e.post(t, base, w), http.StatusCreated)
		if r := e.get(t, base+"/pb", "Accept", "application/vnd.kubernetes.protobuf"); r.Code != http.StatusNotAcceptable {
			t.Errorf("protobuf only: %s", r)
		}
		r := e.get(t, base+"/pb", "Accept", "application/vnd.kubernetes.protobuf, application/json")
		if r.Code != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("protobuf or JSON: %s", r)
		}
	})

	t.Run("versions", func(t *testing.T) {
		w := widget("multi", obj{"size": 2})
		w["apiVersion"] = group + "/v1beta1"
		o := expect(t, e.post(t, "/apis/"+group+"/v1beta1/namespaces/"+ns+"/widgets", w), http.StatusCreated)
		if str(o, "apiVersion") != group+"/v1beta1" {
			t.Errorf("v1beta1 create: %s", compact(o))
		}
		v1 := expect(t, e.get(t, base+"/multi"), http.StatusOK)
		if str(v1, "apiVersion") != group+"/v1" || str(v1, "metadata", "uid") != str(o, "metadata", "uid") || str(v1, "spec", "mode") != "slow" {
			t.Errorf("v1 read: %s", compact(v1))
		}
		// Lists and watches carry the version they are read in.
		w1 := e.watch(t, "/apis/"+group+"/v1beta1/namespaces/"+ns+"/widgets"+q("watch", "1", "resourceVersion", rv(v1)))
		defer w1.close()
		list := expect(t, e.get(t, "/apis/"+group+"/v1beta1/namespaces/"+ns+"/widgets"), http.StatusOK)
		for _, it := range items(t, list) {
			if str(it, "apiVersion") != group+"/v1beta1" {
				t.Errorf("v1beta1 list item %s has apiVersion %q", name(it), str(it, "apiVersion"))
			}
		}
		v1["spec"].(map[string]any)["size"] = 3
		expect(t, e.put(t, base+"/multi", v1), http.StatusOK)
		if ev := w1.nextChange(t, e.within(10*time.Second)); ev.Type != "MODIFIED" || str(ev.Object, "apiVersion") != group+"/v1beta1" {
			t.Errorf("v1beta1 watch event after a v1 update: %s %s", ev, compact(ev.Object))
		}
	})

	t.Run("status-subresource", func(t *testing.T) {
		w := widget("st", obj{"size": 1})
		w["apiVersion"] = group + "/v1"
		w["status"] = obj{"ready": true}
		o := expect(t, e.post(t, base, w), http.StatusCreated)
		if has(o, "status") {
			t.Errorf("status kept on create: %s", compact(o))
		}
		o["status"] = obj{"ready": true}
		o["spec"].(map[string]any)["size"] = 5
		s := expect(t, e.put(t, base+"/st/status", o), http.StatusOK)
		if n, _ := num(s, "spec", "size"); n != 1 || compact(s["status"]) != `{"ready":true}` {
			t.Errorf("status update: %s", compact(s))
		}
		s["status"] = obj{"ready": false}
		s["spec"].(map[string]any)["size"] = 4
		u := expect(t, e.put(t, base+"/st", s), http.StatusOK)
		if n, _ := num(u, "spec", "size"); n != 4 || compact(u["status"]) != `{"ready":true}` {
			t.Errorf("main update: %s", compact(u))
		}
		if g, _ := num(u, "metadata", "generation"); g != 2 {
			t.Errorf("generation %d after a spec change", g)
		}
	})

	t.Run("list-watch", func(t *testing.T) {
		list := expect(t, e.get(t, base), http.StatusOK)
		if str(list, "kind") != "WidgetList" || str(list, "apiVersion") != group+"/v1" {
			t.Errorf("list %s %s", str(list, "kind"), str(list, "apiVersion"))
		}
		ws := e.watch(t, base+q("watch", "1", "resourceVersion", rv(list)))
		w := widget("watched", obj{"size": 1})
		w["apiVersion"] = group + "/v1"
		expect(t, e.post(t, base, w), http.StatusCreated)
		ev := ws.nextChange(t, 10*time.Second)
		if ev.Type != "ADDED" || str(ev.Object, "metadata", "name") != "watched" || str(ev.Object, "kind") != "Widget" {
			t.Errorf("event %v %s", ev, compact(ev.Object))
		}
	})
}

// TestCustomResourceDefinitionDeletion checks that deleting a CRD deletes
// its objects (waiting for their finalizers), then the CRD, and stops
// serving the resource.
func TestCustomResourceDefinitionDeletion(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	group, _ := e.createCRD(t)
	name := "widgets." + group
	base := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets"
	w := widget("held", obj{"size": 1})
	w["apiVersion"] = group + "/v1"
	w["metadata"].(map[string]any)["finalizers"] = []any{"conformance.kapi.dev/hold"}
	expect(t, e.post(t, base, w), http.StatusCreated)
	w2 := widget("free", obj{"size": 1})
	w2["apiVersion"] = group + "/v1"
	expect(t, e.post(t, base, w2), http.StatusCreated)

	// The answer is the CRD marked for deletion, with the cleanup finalizer.
	marked := expect(t, e.del(t, crdPath+"/"+name, nil), http.StatusOK)
	if str(marked, "kind") != "CustomResourceDefinition" || !has(marked, "metadata", "deletionTimestamp") {
		t.Errorf("delete CRD answered %s", compact(marked))
	}
	// Terminating while an object is held.
	e.waitCollection(t, base, "the free widget to go and the held one to be marked", 30*time.Second, func(objs map[string]obj) bool {
		held, ok := objs[ns+"/held"]
		_, free := objs[ns+"/free"]
		return ok && !free && has(held, "metadata", "deletionTimestamp")
	})
	crd := expect(t, e.get(t, crdPath+"/"+name), http.StatusOK)
	fins, _ := field(crd, "metadata", "finalizers")
	if !has(crd, "metadata", "deletionTimestamp") || !slices.Contains(toStrings(fins), "customresourcecleanup.apiextensions.k8s.io") ||
		conditionStatus(crd, "Terminating") != "True" {
		t.Errorf("terminating CRD %s", compact(crd))
	}
	w3 := widget("late", obj{"size": 1})
	w3["apiVersion"] = group + "/v1"
	st := expect(t, e.post(t, base, w3), http.StatusForbidden)
	if want := "widgets." + group + ` "late" is forbidden: create not allowed while custom resource definition is terminating`; str(st, "reason") != "Forbidden" || str(st, "message") != want {
		t.Errorf("create while the CRD terminates: %s, want reason Forbidden and message %q", compact(st), want)
	}
	e.modify(t, base+"/held", false, func(o obj) { o["metadata"].(map[string]any)["finalizers"] = nil })
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name="+name), "the CRD to go", 30*time.Second,
		func(objs map[string]obj) bool { return len(objs) == 0 })
	// kube-apiserver drops the group from discovery shortly after the CRD
	// is gone, not at once.
	e.waitCondition(t, "discovery to drop the deleted CRD's group", func() bool {
		return e.get(t, "/apis/"+group+"/v1").Code == http.StatusNotFound
	})
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
