package conformance

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updatePatchInvalid = flag.Bool("update-patch-invalid", false,
	"rewrite testdata/patch-invalid.json from the server's answers (with -kubeconfig of kube-apiserver)")

// patchInvalidCases are patches whose result has a value of the wrong type
// for the object's Go type, per patch type, on a ConfigMap, a Secret and a
// PodTemplate named "existing".
var patchInvalidCases = []struct{ name, path, ctype, body string }{
	{"cm-merge-data", "configmaps/existing", "merge-patch+json", `{"data":{"a":1}}`},
	{"cm-merge-labels", "configmaps/existing", "merge-patch+json", `{"metadata":{"labels":{"x":1}}}`},
	{"cm-merge-new-object", "configmaps/existing", "merge-patch+json", `{"data":{"z":{"q":1,"b":[{"y":1,"a":2}]}}}`},
	{"cm-merge-time", "configmaps/existing", "merge-patch+json", `{"metadata":{"creationTimestamp":5}}`},
	{"cm-smp-data", "configmaps/existing", "strategic-merge-patch+json", `{"data":{"a":1}}`},
	{"cm-smp-labels", "configmaps/existing", "strategic-merge-patch+json", `{"metadata":{"labels":{"x":1}}}`},
	{"cm-smp-bool", "configmaps/existing", "strategic-merge-patch+json", `{"data":{"a":true}}`},
	{"cm-smp-float", "configmaps/existing", "strategic-merge-patch+json", `{"data":{"a":1.5}}`},
	{"cm-smp-list-for-map", "configmaps/existing", "strategic-merge-patch+json", `{"data":["x"]}`},
	{"cm-smp-string-for-struct", "configmaps/existing", "strategic-merge-patch+json", `{"metadata":"x"}`},
	{"cm-smp-time-string", "configmaps/existing", "strategic-merge-patch+json", `{"metadata":{"creationTimestamp":"yesterday"}}`},
	{"cm-smp-time-number", "configmaps/existing", "strategic-merge-patch+json", `{"metadata":{"creationTimestamp":5}}`},
	{"cm-json-replace", "configmaps/existing", "json-patch+json", `[{"op":"replace","path":"/data/a","value":1}]`},
	{"cm-json-add-object", "configmaps/existing", "json-patch+json", `[{"op":"add","path":"/metadata/labels","value":{"z":"1","b":2}}]`},
	{"cm-json-test", "configmaps/existing", "json-patch+json", `[{"op":"test","path":"/metadata","value":{}},{"op":"replace","path":"/data/a","value":1}]`},
	{"secret-merge-data", "secrets/existing", "merge-patch+json", `{"data":{"a":1}}`},
	{"secret-smp-data", "secrets/existing", "strategic-merge-patch+json", `{"data":{"a":1}}`},
	{"secret-smp-base64", "secrets/existing", "strategic-merge-patch+json", `{"data":{"a":"!!"}}`},
	{"secret-json-base64", "secrets/existing", "json-patch+json", `[{"op":"replace","path":"/data/a","value":"!!"}]`},
	{"pt-merge-image", "podtemplates/existing", "merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","image":5}]}}}`},
	{"pt-merge-intorstring", "podtemplates/existing", "merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","image":"i","livenessProbe":{"httpGet":{"port":true}}}]}}}`},
	{"pt-merge-bool", "podtemplates/existing", "merge-patch+json", `{"template":{"spec":{"hostNetwork":"yes","nodeSelector":{"k":"v"}}}}`},
	{"pt-smp-image", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","image":5}]}}}`},
	{"pt-smp-port-string", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}}}`},
	{"pt-smp-named-string", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"protocol":5}]}]}}}`},
	{"pt-smp-float-int64", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"terminationGracePeriodSeconds":1.5}}}`},
	{"pt-smp-quantity", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"lots"}}}]}}}`},
	{"pt-smp-intorstring-bool", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","livenessProbe":{"httpGet":{"port":true}}}]}}}`},
	{"pt-smp-intorstring-float", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":[{"name":"c","livenessProbe":{"httpGet":{"port":1.5}}}]}}}`},
	{"pt-smp-object-for-list", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"containers":{"name":"c"}}}}`},
	{"pt-smp-string-for-pointer", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"securityContext":"x"}}}`},
	{"pt-smp-string-for-bool", "podtemplates/existing", "strategic-merge-patch+json", `{"template":{"spec":{"hostNetwork":"yes"}}}`},
	{"pt-json-image", "podtemplates/existing", "json-patch+json", `[{"op":"replace","path":"/template/spec/containers/0/image","value":5}]`},
	{"pt-json-port", "podtemplates/existing", "json-patch+json", `[{"op":"replace","path":"/template/spec/containers/0/ports/0/containerPort","value":"80"}]`},
	{"pt-json-add-test", "podtemplates/existing", "json-patch+json", `[{"op":"add","path":"/template/spec/nodeSelector","value":{"z":"1","b":2}},{"op":"test","path":"/template/metadata","value":{"labels":{"app":"x"}}}]`},
	{"pt-json-copy", "podtemplates/existing", "json-patch+json", `[{"op":"copy","from":"/template/spec/containers/0","path":"/template/spec/initContainers"}]`},
	{"pt-json-move", "podtemplates/existing", "json-patch+json", `[{"op":"move","from":"/metadata/labels","path":"/template/spec/containers/0/image"}]`},
}

// patchInvalidVolatile matches what differs from run to run in the answers:
// UIDs, times and resource versions.
var patchInvalidVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UID"},
	{regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`), "TIME"},
	{regexp.MustCompile(`(resourceVersion[\\"]+:[\\"]+)[0-9]+`), "${1}RV"},
}

// TestPatchInvalidResult checks the 422 of a JSON, merge or strategic merge
// patch whose result does not decode (a value of the wrong type) against
// kube-apiserver's answers (testdata/patch-invalid.json, captured from
// v1.37.2): no kind and no name (` "" is invalid`); for a JSON or merge
// patch the whole patched object with the members of the objects the patch
// walked through sorted and the decode error; for a strategic merge patch
// the patch as a Go map and the error of the unstructured conversion
// ("cannot convert int64 to string", "unrecognized type: int32", ...).
func TestPatchInvalidResult(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	expect(t, e.post(t, cmPath(ns), configMap("existing", nil, map[string]string{"a": "b"})), http.StatusCreated)
	expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/secrets", obj{"apiVersion": "v1", "kind": "Secret",
		"metadata": obj{"name": "existing"}, "data": obj{"a": "Yg=="}}), http.StatusCreated)
	expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/podtemplates", obj{"apiVersion": "v1", "kind": "PodTemplate",
		"metadata": obj{"name": "existing", "labels": obj{"app": "x"}},
		"template": obj{"metadata": obj{"labels": obj{"app": "x"}}, "spec": obj{"containers": []any{
			obj{"name": "c", "image": "nginx", "ports": []any{obj{"containerPort": 80}}}}}}}), http.StatusCreated)

	const golden = "testdata/patch-invalid.json"
	want := map[string]json.RawMessage{}
	if !*updatePatchInvalid {
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]json.RawMessage{}
	for _, c := range patchInvalidCases {
		r := e.do(t, http.MethodPatch, "/api/v1/namespaces/"+ns+"/"+c.path, c.body, "Content-Type", "application/"+c.ctype)
		var st any
		if err := json.Unmarshal(r.Body, &st); err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, r)
			continue
		}
		b, _ := json.Marshal(st)
		s := strings.ReplaceAll(string(b), ns, "NS")
		for _, v := range patchInvalidVolatile {
			s = v.re.ReplaceAllString(s, v.with)
		}
		got[c.name] = json.RawMessage(s)
		if r.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s: HTTP %d, want 422", c.name, r.Code)
		}
		if w := compact(want[c.name]); !*updatePatchInvalid && s != w {
			t.Errorf("%s: %s %s\n got %s\nwant %s", c.name, c.ctype, c.body, s, w)
		}
	}
	if *updatePatchInvalid {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
