package openapi

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// The testdata files are captures from kube-apiserver v1.37.2 (default
// resources, no CRDs):
//
//   - v2-definitions.json: every /openapi/v2 definition, descriptions
//     removed (kapi writes none);
//   - v3-api-v1-schemas.json: the same for /openapi/v3/api/v1;
//   - crd-widget.yaml and crd-widget.json: a CRD and its kind's definitions
//     in both editions, as the server published them;
//   - real-v3-widget.json and .pb: that CRD's group version document, as JSON
//     and as the protobuf kubectl asks for.

// crdsResource is customresourcedefinitions, which a server adds to the
// built-in resources.
var crdsResource = &registry.Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
	Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList", StatusSubresource: true,
	New: func() registry.Object { return &apiextensionsv1.CustomResourceDefinition{} }}

func builtinDocs(t testing.TB) *Documents {
	t.Helper()
	res, _ := registry.Builtin().All()
	res = append(res, crdsResource)
	// The scalable kinds kapi serves (the server's hasScale).
	docs, err := Build(res, Options{Scale: func(r *registry.Resource) bool {
		return r.Group == "apps" && (r.Resource == "deployments" || r.Resource == "statefulsets" || r.Resource == "replicasets")
	}})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func readJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// normalise removes descriptions, and writes a reference wrapped
// in a one-element allOf (kube-apiserver's v3 spelling of a reference with
// a description beside it) as a plain reference, so that kapi's schemas,
// which have no descriptions, compare with the captures.
func normalise(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k != "description" {
				out[k] = normalise(x)
			}
		}
		if all, ok := out["allOf"].([]any); ok && len(all) == 1 {
			if r, ok := all[0].(map[string]any)["$ref"]; ok {
				delete(out, "allOf")
				out["$ref"] = r
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalise(x)
		}
		return out
	}
	return v
}

// knownDifferences removes what kapi leaves out on purpose: the
// x-kubernetes-unions of a few types (the Go types do not record them), and
// the kinds of groups kapi does not serve in a definition's GVK list.
func knownDifferences(name string, real, mine map[string]any) {
	delete(real, "x-kubernetes-unions")
	if gvks, ok := real["x-kubernetes-group-version-kind"].([]any); ok {
		have, _ := mine["x-kubernetes-group-version-kind"].([]any)
		real["x-kubernetes-group-version-kind"] = slices.DeleteFunc(gvks, func(g any) bool {
			return !slices.ContainsFunc(have, func(h any) bool { return reflect.DeepEqual(g, h) })
		})
		if len(have) == 0 && len(real["x-kubernetes-group-version-kind"].([]any)) == 0 {
			// A type kapi uses only inside another kind (a StatefulSet's
			// PersistentVolumeClaim templates) while not serving its own kind.
			delete(real, "x-kubernetes-group-version-kind")
		}
	}
}

func TestDefinitionsAsKubeAPIServer(t *testing.T) {
	docs := builtinDocs(t)
	for _, tc := range []struct {
		name, golden string
		defs         func(doc map[string]any) map[string]any
		doc          []byte
	}{
		{"v2", "testdata/v2-definitions.json", func(d map[string]any) map[string]any { return d["definitions"].(map[string]any) }, docs.V2.JSON},
		{"v3 api/v1", "testdata/v3-api-v1-schemas.json", func(d map[string]any) map[string]any {
			return d["components"].(map[string]any)["schemas"].(map[string]any)
		}, docs.V3["api/v1"].JSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden := readJSON(t, tc.golden)
			var doc map[string]any
			if err := json.Unmarshal(tc.doc, &doc); err != nil {
				t.Fatal(err)
			}
			defs := tc.defs(doc)
			for name := range required(golden, defs) {
				g := golden[name]
				m, ok := defs[name]
				if !ok {
					t.Errorf("%s: missing", name)
					continue
				}
				real, mine := normalise(g).(map[string]any), normalise(m).(map[string]any)
				knownDifferences(name, real, mine)
				if !reflect.DeepEqual(real, mine) {
					rj, _ := json.Marshal(real)
					mj, _ := json.Marshal(mine)
					t.Errorf("%s:\n got %s\nwant %s", name, mj, rj)
				}
			}
			for name := range defs {
				if _, ok := golden[name]; !ok {
					t.Errorf("%s: not in kube-apiserver's document", name)
				}
			}
		})
	}
}

// required are the definitions of real (kube-apiserver's document) that
// kapi's (mine) must have: those of the kinds kapi's document has, and
// everything they refer to.
func required(real, mine map[string]any) map[string]bool {
	need := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name := ref[strings.LastIndex(ref, "/")+1:]
				if !need[name] {
					need[name] = true
					walk(real[name])
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for name, def := range mine {
		if _, kind := def.(map[string]any)["x-kubernetes-group-version-kind"]; kind && real[name] != nil && !need[name] {
			need[name] = true
			walk(real[name])
		}
	}
	return need
}

func widgetCRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	y, err := os.ReadFile("testdata/crd-widget.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(js, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func TestCustomResourceDefinitions(t *testing.T) {
	r, err := registry.CustomResource(widgetCRD(t), "v1")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Build([]*registry.Resource{r}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden := readJSON(t, "testdata/crd-widget.json")
	var v2, v3 map[string]any
	if err := json.Unmarshal(docs.V2.JSON, &v2); err != nil {
		t.Fatal(err)
	}
	doc := docs.V3["apis/openapi.kapi.example/v1"]
	if doc == nil {
		t.Fatalf("no v3 document for the CRD's group version; index %s", docs.V3Index)
	}
	if err := json.Unmarshal(doc.JSON, &v3); err != nil {
		t.Fatal(err)
	}
	for _, ed := range []struct {
		name string
		defs map[string]any
	}{
		{"v2", v2["definitions"].(map[string]any)},
		{"v3", v3["components"].(map[string]any)["schemas"].(map[string]any)},
	} {
		for name, g := range golden[ed.name].(map[string]any) {
			if got, want := normalise(ed.defs[name]), normalise(g); !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Errorf("%s %s:\n got %s\nwant %s", ed.name, name, gj, wj)
			}
		}
	}
	// The paths kubectl's validation looks for: a PATCH operation of the
	// kind that takes fieldValidation.
	real := readJSON(t, "testdata/real-v3-widget.json")["paths"].(map[string]any)
	paths := v3["paths"].(map[string]any)
	for p, item := range real {
		mine, ok := paths[p].(map[string]any)
		if !ok {
			t.Errorf("path %s missing", p)
			continue
		}
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			got, ok := mine[method].(map[string]any)
			if !ok {
				t.Errorf("%s %s missing", method, p)
				continue
			}
			want := op.(map[string]any)
			for _, k := range []string{"operationId", "x-kubernetes-action", "x-kubernetes-group-version-kind", "tags"} {
				if !reflect.DeepEqual(normalise(got[k]), normalise(want[k])) {
					t.Errorf("%s %s %s = %v, want %v", method, p, k, got[k], want[k])
				}
			}
			if !reflect.DeepEqual(paramNames(got), paramNames(want)) {
				t.Errorf("%s %s parameters %v, want %v", method, p, paramNames(got), paramNames(want))
			}
		}
	}
	if len(paths) != len(real) {
		t.Errorf("%d paths, want %d", len(paths), len(real))
	}
}

func paramNames(op map[string]any) []string {
	var out []string
	ps, _ := op["parameters"].([]any)
	for _, p := range ps {
		out = append(out, p.(map[string]any)["name"].(string))
	}
	slices.Sort(out)
	return out
}

// TestProtobuf checks that Proto is what kube-apiserver sends: the capture
// of a v3 document in JSON, through Proto, gives the bytes the server sent
// for it as protobuf; and kapi's own documents decode as gnostic documents
// with their definitions.
func TestProtobuf(t *testing.T) {
	js, err := os.ReadFile("testdata/real-v3-widget.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/real-v3-widget.pb")
	if err != nil {
		t.Fatal(err)
	}
	got, err := (&Document{JSON: js, v3: true}).Proto()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("protobuf of the captured document: %d bytes, differs from the %d the server sent", len(got), len(want))
	}

	docs := builtinDocs(t)
	b, err := docs.V2.Proto()
	if err != nil {
		t.Fatal(err)
	}
	var v2 openapi_v2.Document
	if err := proto.Unmarshal(b, &v2); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range v2.GetDefinitions().GetAdditionalProperties() {
		if d.GetName() == "io.k8s.api.core.v1.Pod" {
			found = true
			if ext := d.GetValue().GetVendorExtension(); len(ext) == 0 || ext[0].GetName() != "x-kubernetes-group-version-kind" {
				t.Errorf("Pod's vendor extensions: %v", ext)
			}
		}
	}
	if !found || v2.GetSwagger() != "2.0" {
		t.Errorf("v2 protobuf: swagger %q, Pod found %v", v2.GetSwagger(), found)
	}
	b, err = docs.V3["apis/apps/v1"].Proto()
	if err != nil {
		t.Fatal(err)
	}
	var v3 openapi_v3.Document
	if err := proto.Unmarshal(b, &v3); err != nil {
		t.Fatal(err)
	}
	if v3.GetOpenapi() != "3.0.0" || len(v3.GetPaths().GetPath()) == 0 {
		t.Errorf("v3 protobuf of apps/v1: openapi %q, %d paths", v3.GetOpenapi(), len(v3.GetPaths().GetPath()))
	}
}

func TestDefinitionName(t *testing.T) {
	type Widget struct{}
	for _, tc := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[apiextensionsv1.CustomResourceDefinition](), "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"},
		{reflect.TypeFor[objectMeta](), "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		{reflect.TypeFor[Widget](), "com.github.kapi-dev.kapi.apiserver.openapi.Widget"},
	} {
		if got := DefinitionName(tc.t); got != tc.want {
			t.Errorf("DefinitionName(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
	if got := customName("openapi.kapi.example", "v1", "Widget"); got != "example.kapi.openapi.v1.Widget" {
		t.Errorf("customName = %q", got)
	}
}

// TestIndex checks the v3 index: one entry per group version, whose URL
// carries its document's hash.
func TestIndex(t *testing.T) {
	docs := builtinDocs(t)
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(docs.V3Index, &idx); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range idx.Paths {
		keys = append(keys, k)
		if want := "/openapi/v3/" + k + "?hash=" + docs.V3[k].Hash; v.ServerRelativeURL != want {
			t.Errorf("%s: %s, want %s", k, v.ServerRelativeURL, want)
		}
		if len(docs.V3[k].Hash) != 128 || strings.ToUpper(docs.V3[k].Hash) != docs.V3[k].Hash {
			t.Errorf("%s: hash %q is not an upper-case SHA-512", k, docs.V3[k].Hash)
		}
	}
	slices.Sort(keys)
	res, _ := registry.Builtin().All()
	var want []string
	for _, r := range append(res, crdsResource) {
		if gv := gvPath(r.Group, r.Version); !slices.Contains(want, gv) {
			want = append(want, gv)
		}
	}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("index %v, want the served group versions %v", keys, want)
	}
}

// TestPathsAsKubeAPIServer compares the core group's paths with
// kube-apiserver's (testdata/v3-api-v1-paths.json: operation ids, actions,
// kinds, parameter names, request and response media types of each path
// kapi serves; the deprecated /watch/ paths and the subresources kapi does
// not serve are not in it).
func TestPathsAsKubeAPIServer(t *testing.T) {
	docs := builtinDocs(t)
	for gv, file := range map[string]string{"api/v1": "testdata/v3-api-v1-paths.json", "apis/apps/v1": "testdata/v3-apps-v1-paths.json"} {
		var doc struct {
			Paths map[string]map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(docs.V3[gv].JSON, &doc); err != nil {
			t.Fatal(err)
		}
		golden := readJSON(t, file)
		for p, want := range golden {
			item, ok := doc.Paths[p]
			if !ok {
				t.Errorf("path %s missing", p)
				continue
			}
			want := normalise(want).(map[string]any)
			// kapi serves Scale as JSON and YAML only.
			if strings.HasSuffix(p, "/scale") {
				dropProtobuf(want)
			}
			if got := summarisePath(item); !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Errorf("%s:\n got %s\nwant %s", p, gj, wj)
			}
		}
		if len(doc.Paths) != len(golden) {
			t.Errorf("%s: %d paths, want %d", gv, len(doc.Paths), len(golden))
		}
	}
}

// dropProtobuf removes the protobuf media types from a summarised path.
func dropProtobuf(item map[string]any) {
	for _, op := range item {
		o, ok := op.(map[string]any)
		if !ok {
			continue
		}
		for code, r := range o["responses"].(map[string]any) {
			o["responses"].(map[string]any)[code] = slices.DeleteFunc(r.([]any), func(x any) bool { return strings.Contains(x.(string), "protobuf") })
		}
	}
}

// summarisePath is a path item as testdata/v3-api-v1-paths.json holds it.
func summarisePath(item map[string]any) any {
	names := func(v any) []any {
		out := []any{}
		ps, _ := v.([]any)
		for _, p := range ps {
			out = append(out, p.(map[string]any)["name"])
		}
		slices.SortFunc(out, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		return out
	}
	keys := func(v any) []any {
		out := []any{}
		m, _ := v.(map[string]any)
		for k := range m {
			out = append(out, k)
		}
		slices.SortFunc(out, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		return out
	}
	out := map[string]any{"parameters": names(item["parameters"])}
	for method, v := range item {
		if method == "parameters" {
			continue
		}
		op := v.(map[string]any)
		rb, _ := op["requestBody"].(map[string]any)
		responses := map[string]any{}
		for code, r := range op["responses"].(map[string]any) {
			responses[code] = keys(r.(map[string]any)["content"])
		}
		out[method] = map[string]any{"operationId": op["operationId"], "action": op["x-kubernetes-action"],
			"gvk": op["x-kubernetes-group-version-kind"], "parameters": names(op["parameters"]),
			"requestBody": keys(rb["content"]), "responses": responses}
	}
	return normalise(out)
}

// TestCRDKindDefinitions checks the definitions of apiextensions.k8s.io/v1,
// whose JSONSchemaProps has properties named like schema keywords ("$ref",
// "default", "type"), against kube-apiserver's v2 document.
func TestCRDKindDefinitions(t *testing.T) {
	docs, err := Build([]*registry.Resource{crdsResource}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(docs.V2.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	props, _ := doc["definitions"].(map[string]any)[apiextensionsName+".JSONSchemaProps"].(map[string]any)["properties"].(map[string]any)
	want := map[string]any{"$ref": "#/definitions/" + apiextensionsName + ".JSON"}
	if !reflect.DeepEqual(props["default"], want) {
		t.Errorf("JSONSchemaProps.default = %v, want %v", props["default"], want)
	}
	if !reflect.DeepEqual(props["$ref"], map[string]any{"type": "string"}) {
		t.Errorf("JSONSchemaProps.$ref = %v, want a string", props["$ref"])
	}
}
