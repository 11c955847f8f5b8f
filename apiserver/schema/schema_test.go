package schema

import (
	"reflect"
	"strings"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/internal/kjson"
)

func mustSchema(t testing.TB, js string) *Schema {
	t.Helper()
	s := new(Schema)
	if err := kjson.Unmarshal([]byte(js), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustObject(t testing.TB, js string) map[string]any {
	t.Helper()
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatal(err)
	}
	return u.Object
}

// widgetSchema is golden 84's schema.
const widgetSchema = `{"type":"object","properties":{
  "spec":{"type":"object","required":["size"],"properties":{
    "color":{"type":"string","enum":["red","blue"]},"size":{"type":"integer","minimum":1}}},
  "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

func TestValidateMessages(t *testing.T) {
	widget := mustSchema(t, widgetSchema)
	rich := mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
	  "name":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-z]+$"},
	  "ratio":{"type":"number","maximum":1,"exclusiveMaximum":true,"multipleOf":0.25},
	  "count":{"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":10},
	  "list":{"type":"array","minItems":1,"maxItems":2,"uniqueItems":true,"items":{"type":"integer"}},
	  "map":{"type":"object","minProperties":1,"maxProperties":2,"additionalProperties":{"type":"string"}},
	  "port":{"x-kubernetes-int-or-string":true},
	  "opt":{"type":"string","nullable":true},
	  "when":{"type":"string","format":"date-time"},
	  "ip":{"type":"string","format":"ipv4"},
	  "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
	  "embedded":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},
	  "nested":{"type":"array","items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"}}}}
	}}}}`)
	cases := []struct {
		name   string
		schema *Schema
		obj    string
		want   string // FieldErrors.Message(); "" for valid
	}{
		{"golden 88", widget, `{"kind":"Widget","spec":{"size":0,"color":"green"}}`,
			`[spec.color: Unsupported value: "green": supported values: "red", "blue", spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1]`},
		{"type", widget, `{"kind":"Widget","spec":{"size":"string"}}`,
			`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`},
		{"required", widget, `{"kind":"Widget","spec":{}}`, `spec.size: Required value`},
		{"valid", widget, `{"kind":"Widget","apiVersion":"x/v1","metadata":{"name":"a"},"spec":{"size":2,"color":"red"},"status":{"ready":true}}`, ""},
		{"whole float is an integer", widget, `{"kind":"Widget","spec":{"size":2.0}}`, ""},
		{"null", widget, `{"kind":"Widget","spec":null}`, `spec: Invalid value: "null": spec in body must be of type object: "null"`},
		{"nullable", rich, `{"kind":"X","spec":{"opt":null}}`, ""},
		{"string bounds", rich, `{"kind":"X","spec":{"name":"A"}}`,
			`[spec.name: Invalid value: "A": spec.name in body should be at least 2 chars long, spec.name: Invalid value: "A": spec.name in body should match '^[a-z]+$']`},
		{"too long", rich, `{"kind":"X","spec":{"name":"abcde"}}`, `spec.name: Too long: may not be more than 4 bytes`},
		{"exclusive maximum", rich, `{"kind":"X","spec":{"ratio":1}}`, `spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1`},
		{"multipleOf", rich, `{"kind":"X","spec":{"ratio":0.3}}`, `spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25`},
		{"exclusive minimum", rich, `{"kind":"X","spec":{"count":0}}`, `spec.count: Invalid value: 0: spec.count in body should be greater than 0`},
		{"maximum", rich, `{"kind":"X","spec":{"count":11}}`, `spec.count: Invalid value: 11: spec.count in body should be less than or equal to 10`},
		{"minItems", rich, `{"kind":"X","spec":{"list":[]}}`, `spec.list: Invalid value: []: spec.list in body should have at least 1 items`},
		{"maxItems", rich, `{"kind":"X","spec":{"list":[1,2,3]}}`, `spec.list: Too many: 3: must have at most 2 items`},
		{"uniqueItems", rich, `{"kind":"X","spec":{"list":[1,1]}}`, `spec.list: Invalid value: [1,1]: spec.list in body shouldn't contain duplicates`},
		{"item type", rich, `{"kind":"X","spec":{"list":["a"]}}`, `spec.list[0]: Invalid value: "string": spec.list[0] in body must be of type integer: "string"`},
		{"additionalProperties", rich, `{"kind":"X","spec":{"map":{"a":1}}}`, `spec.map.a: Invalid value: "integer": spec.map.a in body must be of type string: "integer"`},
		{"maxProperties", rich, `{"kind":"X","spec":{"map":{"a":"1","b":"2","c":"3"}}}`, `spec.map: Too many: 3: must have at most 2 items`},
		{"int-or-string", rich, `{"kind":"X","spec":{"port":"http"}}`, ""},
		{"int-or-string int", rich, `{"kind":"X","spec":{"port":80}}`, ""},
		{"int-or-string bad", rich, `{"kind":"X","spec":{"port":true}}`, `spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"`},
		{"format", rich, `{"kind":"X","spec":{"when":"yesterday","ip":"10.0.0.1"}}`, `spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"`},
		{"format ok", rich, `{"kind":"X","spec":{"when":"2026-01-02T03:04:05Z"}}`, ""},
		{"ipv4", rich, `{"kind":"X","spec":{"ip":"::1"}}`, `spec.ip: Invalid value: "::1": spec.ip in body must be of type ipv4: "::1"`},
		{"preserve unknown", rich, `{"kind":"X","spec":{"free":{"anything":[1,{"a":null}]}}}`, ""},
		{"embedded", rich, `{"kind":"X","spec":{"embedded":{"metadata":{"name":"x"}}}}`,
			`[spec.embedded.apiVersion: Required value: must not be empty, spec.embedded.kind: Required value: must not be empty]`},
		{"embedded ok", rich, `{"kind":"X","spec":{"embedded":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{}}}}`, ""},
		{"nested", rich, `{"kind":"X","spec":{"nested":[{"k":"a"},{}]}}`, `spec.nested[1].k: Required value`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := Validate(c.schema, mustObject(t, c.obj))
			if got := errs.Message(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestValidateGolden88Causes(t *testing.T) {
	errs := Validate(mustSchema(t, widgetSchema), mustObject(t, `{"kind":"Widget","spec":{"size":0,"color":"green"}}`))
	st := metav1.NewInvalid(metav1.GroupKind{Group: "example.com", Kind: "Widget"}, "w2", errs)
	want := `Widget.example.com "w2" is invalid: [spec.color: Unsupported value: "green": supported values: "red", "blue", spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1]`
	if st.Message != want {
		t.Errorf("message\n got  %s\n want %s", st.Message, want)
	}
	if len(st.Details.Causes) != 2 || st.Details.Causes[0].Type != "FieldValueNotSupported" || st.Details.Causes[1].Type != "FieldValueInvalid" {
		t.Errorf("causes %+v", st.Details.Causes)
	}
}

func TestPrune(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{
	  "spec":{"type":"object","properties":{"a":{"type":"string"},
	    "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"known":{"type":"object","properties":{"x":{"type":"string"}}}}},
	    "m":{"type":"object","additionalProperties":{"type":"object","properties":{"v":{"type":"string"}}}},
	    "l":{"type":"array","items":{"type":"object","properties":{"n":{"type":"string"}}}},
	    "e":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object"}}}}}}}`)
	obj := mustObject(t, `{"apiVersion":"x/v1","kind":"X","metadata":{"name":"a"},"extra":1,
	  "spec":{"a":"1","b":2,"free":{"anything":1,"known":{"x":"1","y":2}},"m":{"k":{"v":"1","w":2}},"l":[{"n":"1","o":2}],
	  "e":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{},"zzz":1}}}`)
	pruned := Prune(s, obj)
	want := []string{"extra", "spec.b", "spec.e.zzz", "spec.free.known.y", "spec.l[0].o", "spec.m.k.w"}
	if !reflect.DeepEqual(pruned, want) {
		t.Errorf("pruned %v, want %v", pruned, want)
	}
	wantObj := mustObject(t, `{"apiVersion":"x/v1","kind":"X","metadata":{"name":"a"},
	  "spec":{"a":"1","free":{"anything":1,"known":{"x":"1"}},"m":{"k":{"v":"1"}},"l":[{"n":"1"}],
	  "e":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}}}}`)
	if !Equal(obj, wantObj) {
		t.Errorf("pruned object %v", obj)
	}
}

func TestDefault(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","default":{},"properties":{
	  "replicas":{"type":"integer","default":1},
	  "mode":{"type":"string","default":"slow"},
	  "opt":{"type":"string","nullable":true,"default":"x"},
	  "ports":{"type":"array","items":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"}}}},
	  "labels":{"type":"object","additionalProperties":{"type":"object","properties":{"on":{"type":"boolean","default":true}}}}}}}}`)
	obj := mustObject(t, `{"kind":"X","spec":{"mode":null,"opt":null,"ports":[{},{"protocol":"UDP"}],"labels":{"a":{}}}}`)
	Default(s, obj)
	want := mustObject(t, `{"kind":"X","spec":{"replicas":1,"mode":"slow","opt":null,"ports":[{"protocol":"TCP"},{"protocol":"UDP"}],"labels":{"a":{"on":true}}}}`)
	if !Equal(obj, want) {
		t.Errorf("defaulted %v", obj)
	}
	if _, ok := obj["spec"].(map[string]any)["replicas"].(int64); !ok {
		t.Errorf("integer default is %T, want int64", obj["spec"].(map[string]any)["replicas"])
	}
	empty := mustObject(t, `{"kind":"X"}`)
	Default(s, empty)
	if !Equal(empty, mustObject(t, `{"kind":"X","spec":{"replicas":1,"mode":"slow","opt":"x"}}`)) {
		t.Errorf("defaulted from nothing: %v", empty)
	}
}

// FuzzSchema runs Default, Prune and Validate on arbitrary schemas and
// objects: they must never panic.
func FuzzSchema(f *testing.F) {
	f.Add(widgetSchema, `{"kind":"Widget","spec":{"size":0,"color":"green"}}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}],"uniqueItems":true}},"additionalProperties":false}`, `{"kind":"X","a":[1,1,"x"],"b":{}}`)
	f.Add(`{"anyOf":[{"type":"integer"},{"pattern":"(("}],"oneOf":[{"minimum":1}],"not":{"enum":[null, 3]}}`, `{"kind":"X","v":null}`)
	f.Add(`{"type":"object","properties":{"x":{"default":{"a":[1,2]},"x-kubernetes-embedded-resource":true,"format":"date"}}}`, `{"kind":"X","x":null}`)
	f.Fuzz(func(t *testing.T, schemaJSON, objJSON string) {
		s := new(Schema)
		if kjson.Unmarshal([]byte(schemaJSON), s) != nil {
			return
		}
		var u unstructured.Unstructured
		if u.UnmarshalJSON([]byte(objJSON)) != nil {
			return
		}
		Default(s, u.Object)
		Prune(s, u.Object)
		errs := Validate(s, u.Object)
		_ = errs.Message()
		for _, v := range u.Object {
			_ = ValidateValue(s, "v", v)
		}
	})
}

func TestEqual(t *testing.T) {
	if !Equal(int64(1), float64(1)) || Equal(int64(1), "1") || !Equal([]any{map[string]any{"a": nil}}, []any{map[string]any{"a": nil}}) {
		t.Error("Equal")
	}
	if !strings.Contains(ValidateValue(mustSchema(t, `{"type":"string"}`), "", int64(1)).Message(), "body must be of type string") {
		t.Error("root path is named body")
	}
}
