package conformance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Messages of kube-apiserver's validation, word for word.
const (
	msgSubdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
	msgLabel     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	msgNamePart  = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	msgValue     = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
	msgConfigKey = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
	msgNotStd    = "name is neither a standard finalizer name nor is it fully qualified"
)

// cause is one expected details.causes entry: field, reason, message.
type cause struct{ field, reason, message string }

func invalidValue(field, value, detail string) cause {
	return cause{field, "FieldValueInvalid", "Invalid value: " + value + ": " + detail}
}

// checkInvalid checks a 422 Invalid Status exactly: its message (built
// from the causes as kube-apiserver builds it), details and causes in
// order. kind is "ConfigMap" or "Widget.example.com".
func checkInvalid(t testing.TB, r *response, kind, name string, causes ...cause) {
	t.Helper()
	st := checkStatus(t, r, http.StatusUnprocessableEntity, "Invalid", "")
	if st == nil {
		return
	}
	var parts []string
	seen := map[string]bool{}
	for _, c := range causes {
		p := c.field + ": " + c.message
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	want := fmt.Sprintf("%s %q is invalid: %s", kind, name, strings.Join(parts, ", "))
	if len(parts) > 1 {
		want = fmt.Sprintf("%s %q is invalid: [%s]", kind, name, strings.Join(parts, ", "))
	}
	if m := str(st, "message"); m != want {
		t.Errorf("message\n got  %s\n want %s", m, want)
	}
	if n := str(st, "details", "name"); n != name {
		t.Errorf("details.name %q, want %q", n, name)
	}
	k, g, _ := strings.Cut(kind, ".")
	if str(st, "details", "kind") != k || str(st, "details", "group") != g {
		t.Errorf("details kind %q group %q, want %q %q", str(st, "details", "kind"), str(st, "details", "group"), k, g)
	}
	raw, _ := field(st, "details", "causes")
	list, _ := raw.([]any)
	var got []cause
	for _, x := range list {
		m := x.(map[string]any)
		f, _ := m["field"].(string)
		rs, _ := m["reason"].(string)
		ms, _ := m["message"].(string)
		got = append(got, cause{f, rs, ms})
	}
	if fmt.Sprint(got) != fmt.Sprint(causes) {
		t.Errorf("causes\n got  %q\n want %q", got, causes)
	}
}

// TestValidation checks object metadata validation on create: names by
// kind, generateName, labels, annotations, owner references, finalizers,
// ConfigMap and Secret data. Where kube-apiserver walks a map in random
// order, a case has one entry per map.
func TestValidation(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	cms := cmPath(ns)
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		name   string
		path   string
		body   obj
		kind   string
		obj    string // the name in the Status
		causes []cause
	}{
		{name: "configmap-name", path: cms, body: obj{"metadata": obj{"name": "Bad_Name"}}, kind: "ConfigMap", obj: "Bad_Name",
			causes: []cause{invalidValue("metadata.name", `"Bad_Name"`, msgSubdomain)}},
		{name: "generateName", path: cms, body: obj{"metadata": obj{"name": "ok", "generateName": "Bad-"}}, kind: "ConfigMap", obj: "ok",
			causes: []cause{invalidValue("metadata.generateName", `"Bad-"`, msgSubdomain)}},
		{name: "generateName-dash", path: cms, body: obj{"metadata": obj{"name": "ok", "generateName": "-"}}, kind: "ConfigMap", obj: "ok",
			causes: []cause{invalidValue("metadata.generateName", `"-"`, msgSubdomain)}},
		{name: "name-required", path: cms, body: obj{"metadata": obj{"labels": obj{"a": "b"}}}, kind: "ConfigMap", obj: "",
			causes: []cause{{"metadata.name", "FieldValueRequired", "Required value: name or generateName is required"}}},
		{name: "label", path: cms, body: obj{"metadata": obj{"name": "l", "labels": obj{"bad key": "bad value!"}}}, kind: "ConfigMap", obj: "l",
			causes: []cause{invalidValue("metadata.labels", `"bad key"`, msgNamePart), invalidValue("metadata.labels", `"bad value!"`, msgValue)}},
		{name: "label-prefix", path: cms, body: obj{"metadata": obj{"name": "l", "labels": obj{"Example.com/a/b": "x" + long}}}, kind: "ConfigMap", obj: "l",
			causes: []cause{
				invalidValue("metadata.labels", `"Example.com/a/b"`, "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
				invalidValue("metadata.labels", `"x`+long+`"`, "must be no more than 63 bytes"),
			}},
		{name: "lengths", path: cms, body: obj{"metadata": obj{"name": "l", "labels": obj{long: "x"}, "annotations": obj{strings.Repeat("b", 254) + "/x": ""}}},
			kind: "ConfigMap", obj: "l",
			causes: []cause{
				invalidValue("metadata.labels", `"`+long+`"`, "name part must be no more than 63 bytes"),
				invalidValue("metadata.annotations", `"`+strings.Repeat("b", 254)+`/x"`, "prefix part must be no more than 253 bytes"),
			}},
		{name: "name-length", path: "/api/v1/namespaces", body: obj{"metadata": obj{"name": long}}, kind: "Namespace", obj: long,
			// The kubernetes.io/metadata.name label the server adds is too long too.
			causes: []cause{invalidValue("metadata.name", `"`+long+`"`, "must be no more than 63 characters"),
				invalidValue("metadata.labels", `"`+long+`"`, "must be no more than 63 bytes")}},
		// A Service with a virtual IP needs a port (v1.37.2: invalid-core-services).
		{name: "service-ports", path: "/api/v1/namespaces/" + ns + "/services", body: obj{"metadata": obj{"name": "noports"}, "spec": obj{}},
			kind: "Service", obj: "noports", causes: []cause{{"spec.ports", "FieldValueRequired", "Required value"}}},
		{name: "label-empty-prefix", path: cms, body: obj{"metadata": obj{"name": "l", "labels": obj{"/a": ""}}}, kind: "ConfigMap", obj: "l",
			causes: []cause{invalidValue("metadata.labels", `"/a"`, "prefix part must be non-empty")}},
		{name: "annotation", path: cms, body: obj{"metadata": obj{"name": "a", "annotations": obj{"Bad Ann": "x"}}}, kind: "ConfigMap", obj: "a",
			causes: []cause{invalidValue("metadata.annotations", `"Bad Ann"`, msgNamePart)}},
		{name: "annotations-size", path: cms, body: obj{"metadata": obj{"name": "a", "annotations": obj{"abcd": strings.Repeat("a", 256*1024-3)}}}, kind: "ConfigMap", obj: "a",
			causes: []cause{{"metadata.annotations", "FieldValueTooLong", "Too long: may not be more than 262144 bytes"}}},
		{name: "ownerReferences", path: cms, kind: "ConfigMap", obj: "o",
			body: obj{"metadata": obj{"name": "o", "ownerReferences": []any{
				obj{"apiVersion": "", "kind": "", "name": "", "uid": "", "controller": true},
				obj{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u", "controller": true},
				obj{"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"},
				obj{"apiVersion": "g/", "kind": "K", "name": "n", "uid": "u"},
			}}},
			causes: []cause{
				{"metadata.ownerReferences[0].apiVersion", "FieldValueRequired", "Required value: must not be empty"},
				{"metadata.ownerReferences[0].kind", "FieldValueRequired", "Required value: must not be empty"},
				{"metadata.ownerReferences[0].name", "FieldValueRequired", "Required value: must not be empty"},
				{"metadata.ownerReferences[0].uid", "FieldValueRequired", "Required value: must not be empty"},
				invalidValue("metadata.ownerReferences[1]", `{"apiVersion":"v1","kind":"Event","name":"e","uid":"u","controller":true}`, "/v1, Kind=Event is disallowed from being an owner"),
				invalidValue("metadata.ownerReferences", `[{"apiVersion":"","kind":"","name":"","uid":"","controller":true},{"apiVersion":"v1","kind":"Event","name":"e","uid":"u","controller":true},{"apiVersion":"a/b/c","kind":"K","name":"n","uid":"u"},{"apiVersion":"g/","kind":"K","name":"n","uid":"u"}]`,
					`Only one reference can have Controller set to true. Found "true" in references for / and Event/e`),
				invalidValue("metadata.ownerReferences[2].apiVersion", `"a/b/c"`, "must be <group>/<version> or <version>"),
				invalidValue("metadata.ownerReferences[3].apiVersion", `"g/"`, "must be <group>/<version> or <version>"),
			}},
		{name: "finalizers", path: cms, kind: "ConfigMap", obj: "f",
			body: obj{"metadata": obj{"name": "f", "finalizers": []any{"foo", "bad finalizer", "orphan", "foregroundDeletion", "example.com/ok"}}},
			causes: []cause{
				invalidValue("metadata.finalizers", `"bad finalizer"`, msgNamePart),
				invalidValue("metadata.finalizers", `["foo","bad finalizer","orphan","foregroundDeletion","example.com/ok"]`, "finalizer orphan and foregroundDeletion cannot be both set"),
				invalidValue("metadata.finalizers[0]", `"foo"`, msgNotStd),
				invalidValue("metadata.finalizers[1]", `"bad finalizer"`, msgNotStd),
			}},
		{name: "data-keys", path: cms, kind: "ConfigMap", obj: "d",
			body:   obj{"metadata": obj{"name": "d"}, "data": obj{"dup": "1"}, "binaryData": obj{"dup": "AAE="}},
			causes: []cause{invalidValue("data[dup]", `"dup"`, "duplicate of key present in binaryData")}},
		{name: "data-key-format", path: cms, kind: "ConfigMap", obj: "d",
			body: obj{"metadata": obj{"name": "d"}, "data": obj{"bad key": "1"}, "binaryData": obj{"..x": "AAE="}},
			causes: []cause{
				invalidValue("data[bad key]", `"bad key"`, msgConfigKey),
				invalidValue("binaryData[..x]", `"..x"`, "must not start with '..'"),
			}},
		{name: "secret", path: "/api/v1/namespaces/" + ns + "/secrets", kind: "Secret", obj: "bad",
			body: obj{"metadata": obj{"name": "bad"}, "type": "kubernetes.io/tls", "data": obj{"bad key": "eA=="}},
			causes: []cause{
				invalidValue("data[bad key]", `"bad key"`, msgConfigKey),
				{"data[tls.crt]", "FieldValueRequired", "Required value"},
				{"data[tls.key]", "FieldValueRequired", "Required value"},
			}},
		{name: "configmap-size", path: cms, kind: "ConfigMap", obj: "big",
			body:   obj{"metadata": obj{"name": "big"}, "data": obj{"a": strings.Repeat("a", 1024*1024+1)}},
			causes: []cause{{"[]", "FieldValueTooLong", "Too long: may not be more than 1048576 bytes"}}},
		{name: "secret-size", path: "/api/v1/namespaces/" + ns + "/secrets", kind: "Secret", obj: "big",
			body:   obj{"metadata": obj{"name": "big"}, "stringData": obj{"a": strings.Repeat("a", 1024*1024+1)}},
			causes: []cause{{"data", "FieldValueTooLong", "Too long: may not be more than 1048576 bytes"}}},
		{name: "namespace-name", path: "/api/v1/namespaces", kind: "Namespace", obj: "a.b",
			body:   obj{"metadata": obj{"name": "a.b"}},
			causes: []cause{invalidValue("metadata.name", `"a.b"`, "must not contain dots")}},
		{name: "namespace-finalizers", path: "/api/v1/namespaces", kind: "Namespace", obj: "Kinds_Bad",
			body: obj{"metadata": obj{"name": "Kinds_Bad"}, "spec": obj{"finalizers": []any{"bad finalizer"}}},
			causes: []cause{
				invalidValue("metadata.name", `"Kinds_Bad"`, msgLabel),
				invalidValue("spec.finalizers", `"bad finalizer"`, msgNamePart),
				invalidValue("spec.finalizers", `"bad finalizer"`, msgNotStd),
			}},
		{name: "service-name", path: "/api/v1/namespaces/" + ns + "/services", kind: "Service", obj: "a.b",
			body:   obj{"metadata": obj{"name": "a.b"}, "spec": obj{"ports": []any{obj{"port": 80}}}},
			causes: []cause{invalidValue("metadata.name", `"a.b"`, "must not contain dots")}},
		{name: "event-name", path: "/api/v1/namespaces/" + ns + "/events", kind: "Event", obj: "a%b",
			body:   obj{"metadata": obj{"name": "a%b"}, "involvedObject": obj{"namespace": ns}},
			causes: []cause{invalidValue("metadata.name", `"a%b"`, "may not contain '%'")}},
		{name: "node-namespace", path: "/api/v1/nodes", kind: "Node", obj: "Abc",
			body:   obj{"metadata": obj{"name": "Abc", "namespace": "x"}},
			causes: []cause{invalidValue("metadata.name", `"Abc"`, msgSubdomain)}},
		{name: "crd", path: crdPath, kind: "CustomResourceDefinition.apiextensions.k8s.io", obj: "things.x.validation.kapi.dev",
			body: obj{"metadata": obj{"name": "things.x.validation.kapi.dev", "labels": obj{"bad key": "v"}, "finalizers": []any{"foo"}},
				"spec": obj{"group": "x.validation.kapi.dev", "scope": "Namespaced", "names": obj{"plural": "things", "kind": "Thing"},
					"versions": []any{obj{"name": "v1", "served": true, "storage": true, "schema": obj{"openAPIV3Schema": obj{"type": "object"}}}}}},
			causes: []cause{invalidValue("metadata.labels", `"bad key"`, msgNamePart)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkInvalid(t, e.post(t, tc.path+q("dryRun", "All"), tc.body), tc.kind, tc.obj, tc.causes...)
			checkInvalid(t, e.post(t, tc.path, tc.body), tc.kind, tc.obj, tc.causes...)
		})
	}

	// Names the stricter rules of other kinds would refuse.
	for _, tc := range []struct{ name, path string }{
		{"1abc", "/api/v1/namespaces/" + ns + "/services"},
		{"Abc_x! y", "/api/v1/namespaces/" + ns + "/events"},
	} {
		body := obj{"metadata": obj{"name": tc.name}, "spec": obj{"ports": []any{obj{"port": 80}}}}
		if strings.HasSuffix(tc.path, "events") {
			body = obj{"metadata": obj{"name": tc.name}, "involvedObject": obj{"namespace": ns}}
		}
		expect(t, e.post(t, tc.path+q("dryRun", "All"), body), http.StatusCreated)
	}

	t.Run("missing-namespace", func(t *testing.T) {
		t.Parallel()
		// The namespace is looked up before the object is validated.
		for _, dry := range []string{"", q("dryRun", "All")} {
			checkStatus(t, e.post(t, cmPath("missing-"+randomSuffix())+dry, obj{"metadata": obj{"name": "Bad_Name"}}),
				http.StatusNotFound, "NotFound", `namespaces "missing-`)
		}
	})
	t.Run("generateName", func(t *testing.T) {
		t.Parallel()
		// The prefix is cut to 58 characters; a masked trailing part is
		// not checked again.
		o := expect(t, e.post(t, cms, obj{"metadata": obj{"generateName": long + "-"}}), http.StatusCreated)
		if n := name(o); len(n) != 63 || !strings.HasPrefix(n, long[:58]) {
			t.Errorf("generated name %q", n)
		}
		r := e.post(t, cms+q("dryRun", "All"), obj{"metadata": obj{"generateName": "A-"}})
		st := checkStatus(t, r, http.StatusUnprocessableEntity, "Invalid", "metadata.name: Invalid value: \"A-")
		if c, _ := field(st, "details", "causes"); len(c.([]any)) != 1 {
			t.Errorf("causes %v", c)
		}
	})
}

// TestValidationUpdate checks that every write path validates metadata,
// with the causes of kube-apiserver's overlapping passes reported once.
func TestValidationUpdate(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	cur := e.createCM(t, ns, "u", nil, map[string]string{"a": "b"})
	badLabel := invalidValue("metadata.labels", `"bad key"`, msgNamePart)

	t.Run("update", func(t *testing.T) {
		next := clone(cur)
		meta := next["metadata"].(map[string]any)
		meta["labels"] = obj{"bad key": "v"}
		meta["finalizers"] = []any{"foo"}
		meta["generateName"] = "X_"
		next["data"] = obj{"bad key": "b"}
		checkInvalid(t, e.put(t, cmPath(ns, "u"), next), "ConfigMap", "u",
			badLabel,
			invalidValue("metadata.finalizers[0]", `"foo"`, msgNotStd),
			invalidValue("metadata.generateName", `"X_"`, msgSubdomain),
			invalidValue("data[bad key]", `"bad key"`, msgConfigKey))
	})
	for _, tc := range []struct{ name, ctype, body string }{
		{"merge-patch", mergePatch, `{"metadata":{"labels":{"bad key":"v"}}}`},
		{"strategic-merge-patch", strategicPatch, `{"metadata":{"labels":{"bad key":"v"}}}`},
		{"json-patch", "application/json-patch+json", `[{"op":"add","path":"/metadata/labels","value":{"bad key":"v"}}]`},
		{"apply", applyPatch, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u","labels":{"bad key":"v"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := cmPath(ns, "u") + q("fieldManager", "validation")
			checkInvalid(t, e.patch(t, path+"&dryRun=All", tc.ctype, tc.body), "ConfigMap", "u", badLabel)
			checkInvalid(t, e.patch(t, path, tc.ctype, tc.body), "ConfigMap", "u", badLabel)
		})
	}
	t.Run("apply-create", func(t *testing.T) {
		checkInvalid(t, e.patch(t, cmPath(ns, "new")+q("fieldManager", "validation"), applyPatch,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new","labels":{"bad key":"v"}}}`), "ConfigMap", "new", badLabel)
	})
	t.Run("finalizers-while-deleting", func(t *testing.T) {
		e.createCM(t, ns, "fin", nil, nil)
		expect(t, e.patch(t, cmPath(ns, "fin"), mergePatch, `{"metadata":{"finalizers":["example.com/a"]}}`), http.StatusOK)
		t.Cleanup(func() { e.removeFinalizers(t, ns, "fin") })
		expect(t, e.del(t, cmPath(ns, "fin"), nil), http.StatusOK)
		checkInvalid(t, e.patch(t, cmPath(ns, "fin"), mergePatch, `{"metadata":{"finalizers":["example.com/a","example.com/c","example.com/b"]}}`),
			"ConfigMap", "fin", cause{"metadata.finalizers", "FieldValueForbidden",
				`Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b", "example.com/c"}`})
	})
	t.Run("immutable", func(t *testing.T) {
		o := expect(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "frozen"}, "immutable": true, "data": obj{"a": "1"}}), http.StatusCreated)
		next := clone(o)
		next["data"] = obj{"a": "2"}
		delete(next, "immutable")
		checkInvalid(t, e.put(t, cmPath(ns, "frozen"), next), "ConfigMap", "frozen",
			cause{"immutable", "FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set"},
			cause{"data", "FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set"})
	})
}

// TestValidationStatus checks metadata on /status updates: built-in kinds
// take labels, annotations and finalizers from the request and validate
// them (deployments keep their labels); custom resources change no
// metadata there.
func TestValidationStatus(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	expect(t, e.post(t, pods, pod("p", "", nil)), http.StatusCreated)
	checkInvalid(t, e.patch(t, pods+"/p/status", mergePatch, `{"metadata":{"labels":{"bad key":"v"}}}`), "Pod", "p",
		invalidValue("metadata.labels", `"bad key"`, msgNamePart))
	o := expect(t, e.patch(t, pods+"/p/status", mergePatch, `{"metadata":{"labels":{"st":"x"},"annotations":{"sa":"y"}},"status":{"message":"m"}}`), http.StatusOK)
	if str(o, "metadata", "labels", "st") != "x" || str(o, "metadata", "annotations", "sa") != "y" || str(o, "status", "message") != "m" {
		t.Errorf("pod status update: %s", compact(o["metadata"]))
	}

	deploys := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	expect(t, e.post(t, deploys, deployment("d", 0)), http.StatusCreated)
	o = expect(t, e.patch(t, deploys+"/d/status", mergePatch, `{"metadata":{"labels":{"bad key":"v"},"annotations":{"sa":"y"}}}`), http.StatusOK)
	if has(o, "metadata", "labels", "bad key") || str(o, "metadata", "annotations", "sa") != "y" {
		t.Errorf("deployment status update: %s", compact(o["metadata"]))
	}

	group, gadgets := e.createGadgets(t, true)
	_ = group
	expect(t, e.post(t, gadgets, gadget(group, "g", 1)), http.StatusCreated)
	o = expect(t, e.patch(t, gadgets+"/g/status", mergePatch, `{"metadata":{"labels":{"bad key":"v","ok":"x"}},"status":{"n":1}}`), http.StatusOK)
	if has(o, "metadata", "labels") {
		t.Errorf("custom resource status update changed labels: %s", compact(o["metadata"]))
	}
}

// gadgetCRD is a schemaless namespaced kind Gadget in group, with or
// without a status subresource.
func gadgetCRD(group string, status bool) obj {
	v := obj{"name": "v1", "served": true, "storage": true,
		"schema": obj{"openAPIV3Schema": obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
	if status {
		v["subresources"] = obj{"status": obj{}}
	}
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": "gadgets." + group},
		"spec": obj{"group": group, "scope": "Namespaced",
			"names":    obj{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
			"versions": []any{v}},
	}
}

func gadget(group, name string, n int) obj {
	return obj{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": obj{"name": name}, "spec": obj{"n": n}}
}

// createGadgets creates gadgetCRD in a fresh group in a fresh namespace,
// waits until it serves, and returns the group and the collection path.
func (e *env) createGadgets(t *testing.T, status bool) (group, path string) {
	t.Helper()
	ns := e.namespace(t)
	group = "v" + randomSuffix() + ".conformance.kapi.dev"
	e.createCRDObject(t, gadgetCRD(group, status))
	return group, "/apis/" + group + "/v1/namespaces/" + ns + "/gadgets"
}

// TestValidationCustomResource checks a custom resource's metadata rules:
// DNS subdomain names, qualified finalizers, and a warning for a finalizer
// without a domain.
func TestValidationCustomResource(t *testing.T) {
	t.Parallel()
	e := target
	group, gadgets := e.createGadgets(t, true)
	bad := gadget(group, "Abc", 1)
	bad["metadata"].(map[string]any)["finalizers"] = []any{"foo", "bad finalizer"}
	checkInvalid(t, e.post(t, gadgets, bad), "Gadget."+group, "Abc",
		invalidValue("metadata.name", `"Abc"`, msgSubdomain),
		invalidValue("metadata.finalizers", `"bad finalizer"`, msgNamePart))

	g := gadget(group, "g", 1)
	g["metadata"].(map[string]any)["finalizers"] = []any{"foo", "example.com/ok"}
	r := e.post(t, gadgets, g)
	expect(t, r, http.StatusCreated)
	t.Cleanup(func() {
		e.patch(t, gadgets+"/g", mergePatch, `{"metadata":{"finalizers":null}}`)
	})
	const warn = `299 - "metadata.finalizers: \"foo\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"`
	if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != warn {
		t.Errorf("Warning headers %q, want %q", w, warn)
	}
}

// TestValidationGeneration checks metadata.generation as kube-apiserver's
// strategies keep it: pods start at 1 and move on spec changes only; kinds
// without a generation keep what the client sent; custom resources move on
// any change but metadata, and but status with a status subresource.
func TestValidationGeneration(t *testing.T) {
	t.Parallel()
	e := target
	gen := func(t *testing.T, o obj, want int64) {
		t.Helper()
		if g, _ := num(o, "metadata", "generation"); g != want {
			t.Errorf("generation %d, want %d: %s", g, want, compact(o["metadata"]))
		}
	}
	t.Run("pod", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		e.ensureDefaultServiceAccount(t, ns)
		pods := "/api/v1/namespaces/" + ns + "/pods"
		p := pod("p", "", nil)
		p["metadata"].(map[string]any)["generation"] = 5
		gen(t, expect(t, e.post(t, pods, p), http.StatusCreated), 1)
		gen(t, expect(t, e.patch(t, pods+"/p", mergePatch, `{"metadata":{"labels":{"a":"b"},"generation":9}}`), http.StatusOK), 1)
		gen(t, expect(t, e.patch(t, pods+"/p", mergePatch, `{"spec":{"activeDeadlineSeconds":100}}`), http.StatusOK), 2)
		gen(t, expect(t, e.patch(t, pods+"/p/status", mergePatch, `{"status":{"message":"m"}}`), http.StatusOK), 2)
		gen(t, expect(t, e.patch(t, pods+"/p", strategicPatch, `{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}`), http.StatusOK), 3)
	})
	t.Run("configmap", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		gen(t, expect(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "c", "generation": 5}}), http.StatusCreated), 5)
		gen(t, expect(t, e.patch(t, cmPath(ns, "c"), mergePatch, `{"metadata":{"generation":7},"data":{"a":"b"}}`), http.StatusOK), 5)
		checkInvalid(t, e.post(t, cmPath(ns), obj{"metadata": obj{"name": "neg", "generation": -1}}), "ConfigMap", "neg",
			cause{"metadata.generation", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"})
		// Marking it deleting moves a positive generation.
		expect(t, e.patch(t, cmPath(ns, "c"), mergePatch, `{"metadata":{"finalizers":["example.com/f"]}}`), http.StatusOK)
		t.Cleanup(func() { e.removeFinalizers(t, ns, "c") })
		gen(t, expect(t, e.del(t, cmPath(ns, "c"), nil), http.StatusOK), 6)
	})
	t.Run("endpointslice", func(t *testing.T) {
		// Anything but metadata moves it, and so do its labels.
		t.Parallel()
		ns := e.namespace(t)
		slices := "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices"
		gen(t, expect(t, e.post(t, slices, obj{"metadata": obj{"name": "s"}, "addressType": "IPv4", "endpoints": []any{}}), http.StatusCreated), 1)
		for _, step := range []struct {
			patch string
			want  int64
		}{
			{`{"metadata":{"annotations":{"a":"b"}}}`, 1},
			{`{"metadata":{"labels":{"a":"b"}}}`, 2},
			{`{"endpoints":[{"addresses":["10.1.1.1"]}]}`, 3},
			{`{"ports":[{"port":80}]}`, 4},
			{`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Service","name":"s","uid":"0c1f5e1c-0000-4000-8000-000000000001"}]}}`, 4},
		} {
			gen(t, expect(t, e.patch(t, slices+"/s", mergePatch, step.patch), http.StatusOK), step.want)
		}
	})
	for _, status := range []bool{true, false} {
		t.Run(fmt.Sprintf("custom-status-%v", status), func(t *testing.T) {
			t.Parallel()
			group, gadgets := e.createGadgets(t, status)
			gen(t, expect(t, e.post(t, gadgets, gadget(group, "g", 1)), http.StatusCreated), 1)
			gen(t, expect(t, e.patch(t, gadgets+"/g", mergePatch, `{"metadata":{"labels":{"a":"b"},"annotations":{"c":"d"}}}`), http.StatusOK), 1)
			gen(t, expect(t, e.patch(t, gadgets+"/g", mergePatch, `{"spec":{"n":2}}`), http.StatusOK), 2)
			gen(t, expect(t, e.patch(t, gadgets+"/g", mergePatch, `{"other":1}`), http.StatusOK), 3)
			want := int64(3)
			if status {
				gen(t, expect(t, e.patch(t, gadgets+"/g/status", mergePatch, `{"status":{"ready":true}}`), http.StatusOK), want)
			} else {
				want++
				gen(t, expect(t, e.patch(t, gadgets+"/g", mergePatch, `{"status":{"ready":true}}`), http.StatusOK), want)
			}
			// Finalizers change no generation; being marked deleting does.
			gen(t, expect(t, e.patch(t, gadgets+"/g", mergePatch, `{"metadata":{"finalizers":["example.com/f"]}}`), http.StatusOK), want)
			gen(t, expect(t, e.del(t, gadgets+"/g", nil), http.StatusOK), want+1)
			gen(t, expect(t, e.patch(t, gadgets+"/g", mergePatch, `{"metadata":{"finalizers":null}}`), http.StatusOK), want+1)
		})
	}
}

// TestValidationDryRunExisting checks that a dry-run create of a taken
// name fails as the create would.
func TestValidationDryRunExisting(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.createCM(t, ns, "taken", nil, nil)
	r := e.post(t, cmPath(ns)+q("dryRun", "All"), configMap("taken", nil, nil))
	st := checkStatus(t, r, http.StatusConflict, "AlreadyExists", `configmaps "taken" already exists`)
	if d := compact(st["details"]); d != `{"kind":"configmaps","name":"taken"}` {
		t.Errorf("details %s", d)
	}
	if m := str(st, "message"); m != `configmaps "taken" already exists` {
		t.Errorf("message %q", m)
	}
}

// TestValidationDuplicateFields checks fieldValidation on names an object
// repeats: Strict refuses them with unknown fields in document order,
// Warn warns (the last value wins), Ignore says nothing.
func TestValidationDuplicateFields(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	body := `{"metadata":{"name":"d1","name":"d2","labels":{"a":"1","a":"2"}},"data":{"k":"1","k":"2"},"bogus":1,"data":{"z":"1"}}`
	t.Run("strict", func(t *testing.T) {
		st := checkStatus(t, e.post(t, cmPath(ns)+q("fieldValidation", "Strict"), body), http.StatusBadRequest, "BadRequest", "")
		want := `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", duplicate field "metadata.labels.a", duplicate field "data.k", unknown field "bogus", duplicate field "data"`
		if m := str(st, "message"); m != want {
			t.Errorf("message\n got  %s\n want %s", m, want)
		}
	})
	t.Run("warn", func(t *testing.T) {
		r := e.post(t, cmPath(ns), body)
		o := expect(t, r, http.StatusCreated)
		want := []string{`299 - "duplicate field \"metadata.name\""`, `299 - "duplicate field \"metadata.labels.a\""`,
			`299 - "duplicate field \"data.k\""`, `299 - "unknown field \"bogus\""`, `299 - "duplicate field \"data\""`}
		if w := r.Header.Values("Warning"); fmt.Sprint(w) != fmt.Sprint(want) {
			t.Errorf("Warning headers\n got  %q\n want %q", w, want)
		}
		// A repeated object member is merged into the first.
		if name(o) != "d2" || str(o, "metadata", "labels", "a") != "2" || compact(o["data"]) != `{"k":"2","z":"1"}` {
			t.Errorf("last value does not win: %s", compact(o))
		}
	})
	t.Run("ignore", func(t *testing.T) {
		r := e.post(t, cmPath(ns)+q("fieldValidation", "Ignore"), strings.Replace(body, "d2", "d3", 1))
		expect(t, r, http.StatusCreated)
		if w := r.Header.Values("Warning"); len(w) != 0 {
			t.Errorf("Warning headers with Ignore: %q", w)
		}
	})
	t.Run("merge-patch", func(t *testing.T) {
		e.createCM(t, ns, "p", nil, nil)
		r := e.patch(t, cmPath(ns, "p"), mergePatch, `{"data":{"k":"1","k":"2"}}`)
		o := expect(t, r, http.StatusOK)
		if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != `299 - "duplicate field \"data.k\""` {
			t.Errorf("Warning headers %q", w)
		}
		if str(o, "data", "k") != "2" {
			t.Errorf("data %s", compact(o["data"]))
		}
		// A JSON patch carries its values as they are written.
		r = e.patch(t, cmPath(ns, "p"), "application/json-patch+json", `[{"op":"add","path":"/data","value":{"x":"1","x":"2"}}]`)
		o = expect(t, r, http.StatusOK)
		want := []string{`299 - "json patch duplicate field \"[0].value.x\""`, `299 - "duplicate field \"data.x\""`}
		if w := r.Header.Values("Warning"); fmt.Sprint(w) != fmt.Sprint(want) {
			t.Errorf("Warning headers\n got  %q\n want %q", w, want)
		}
		if str(o, "data", "x") != "2" {
			t.Errorf("data %s", compact(o["data"]))
		}
		st := checkStatus(t, e.patch(t, cmPath(ns, "p")+q("fieldValidation", "Strict"), mergePatch, `{"data":{"k":"1","k":"3"}}`),
			http.StatusUnprocessableEntity, "Invalid", "")
		if m := str(st, "message"); !strings.HasPrefix(m, ` "" is invalid: patch: Invalid value: "{`) ||
			!strings.HasSuffix(m, `}": strict decoding error: duplicate field "data.k"`) {
			t.Errorf("message %s", m)
		}
	})
}

// TestValidationDuplicateFieldsApply checks an apply configuration that
// repeats a key: Strict refuses it, Warn warns and the last value wins.
func TestValidationDuplicateFieldsApply(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"1","k":"2"}}`
	path := cmPath(ns, "a") + q("fieldManager", "validation")
	checkStatus(t, e.patch(t, path+"&fieldValidation=Strict", applyPatch, body), http.StatusBadRequest, "BadRequest",
		"error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 1: key \"k\" already set in map")
	r := e.patch(t, path, applyPatch, body)
	o := expect(t, r, http.StatusCreated)
	if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != `299 - "line 1: key \"k\" already set in map"` {
		t.Errorf("Warning headers %q", w)
	}
	if str(o, "data", "k") != "2" {
		t.Errorf("data %s", compact(o["data"]))
	}
}

// TestValidationUpdateKinds checks the order of the causes of an update
// whose metadata breaks several rules, kind by kind: kube-apiserver checks
// an update's metadata in passes whose order and rules differ by kind, and
// repeats a custom resource's causes.
func TestValidationUpdateKinds(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	group, gadgets := e.createGadgets(t, true)
	node := "validation-" + randomSuffix()
	nsp := "/api/v1/namespaces/" + ns
	creates := []struct {
		path string
		body obj
	}{
		{nsp + "/pods", pod("p", "", nil)},
		{"/apis/apps/v1/namespaces/" + ns + "/deployments", deployment("d", 0)},
		{"/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases", obj{"metadata": obj{"name": "l"}}},
		{nsp + "/services", obj{"metadata": obj{"name": "s"}, "spec": obj{"ports": []any{obj{"port": 80}}}}},
		{nsp + "/events", obj{"metadata": obj{"name": "ev"}, "involvedObject": obj{"namespace": ns}}},
		{nsp + "/serviceaccounts", obj{"metadata": obj{"name": "sa"}}},
		{nsp + "/secrets", obj{"metadata": obj{"name": "sec"}}},
		{"/api/v1/nodes", obj{"metadata": obj{"name": node}}},
		{gadgets, gadget(group, "g", 1)},
	}
	for _, c := range creates {
		expect(t, e.post(t, c.path, c.body), http.StatusCreated)
	}
	t.Cleanup(func() { e.del(t, "/api/v1/nodes/"+node, nil) })

	patch := `{"metadata":{"labels":{"bad key":"v"},"finalizers":["foo"],"generateName":"X_","annotations":{"Bad Ann":"x"}}}`
	label := invalidValue("metadata.labels", `"bad key"`, msgNamePart)
	ann := invalidValue("metadata.annotations", `"Bad Ann"`, msgNamePart)
	fin := invalidValue("metadata.finalizers[0]", `"foo"`, msgNotStd)
	genSub := invalidValue("metadata.generateName", `"X_"`, msgSubdomain)
	genLabel := invalidValue("metadata.generateName", `"X_"`, msgLabel)
	for _, tc := range []struct {
		path, kind, name string
		causes           []cause
	}{
		{nsp + "/pods/p", "Pod", "p", []cause{label, ann, fin, genSub}},
		{"/apis/apps/v1/namespaces/" + ns + "/deployments/d", "Deployment.apps", "d", []cause{label, ann, fin}},
		{"/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/l", "Lease.coordination.k8s.io", "l", []cause{label, ann}},
		{nsp + "/services/s", "Service", "s", []cause{label, ann, fin}},
		{nsp + "/events/ev", "Event", "ev", []cause{label, ann}},
		{nsp + "/serviceaccounts/sa", "ServiceAccount", "sa", []cause{label, ann, fin, genSub}},
		{nsp + "/secrets/sec", "Secret", "sec", []cause{label, ann, fin, genSub}},
		{"/api/v1/nodes/" + node, "Node", node, []cause{label, ann, genSub, fin}},
		{nsp, "Namespace", ns, []cause{label, ann, genLabel, fin}},
		{gadgets + "/g", "Gadget." + group, "g", []cause{label, ann, label, ann, label, ann}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			checkInvalid(t, e.patch(t, tc.path+q("dryRun", "All"), mergePatch, patch), tc.kind, tc.name, tc.causes...)
		})
	}
}

// TestCustomResourceMetadataTypes: a custom resource's metadata is read as
// an ObjectMeta, so a value of the wrong type in it is a 400 naming the
// ObjectMeta field, as for a built-in kind (the rest of a preserve-unknown
// object takes anything).
func TestCustomResourceMetadataTypes(t *testing.T) {
	t.Parallel()
	e := target
	_, path := e.createGadgets(t, false)
	for _, c := range []struct {
		name string
		meta obj
		msg  string
	}{
		{"label-value", obj{"name": "a", "labels": obj{"x": 1}}, "cannot unmarshal number into Go struct field ObjectMeta.labels of type string"},
		{"finalizers", obj{"name": "b", "finalizers": "x"}, "cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string"},
		{"generation", obj{"name": "c", "generation": "one"}, "cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := obj{"apiVersion": path[len("/apis/"):strings.Index(path, "/namespaces/")], "kind": "Gadget", "metadata": c.meta, "spec": obj{"n": 1}}
			st := expect(t, e.post(t, path, body), http.StatusBadRequest)
			want := `Gadget in version "v1" cannot be handled as a Gadget: json: ` + c.msg
			if st["reason"] != "BadRequest" || st["message"] != want {
				t.Errorf("got %s %q, want BadRequest %q", st["reason"], st["message"], want)
			}
		})
	}
}
