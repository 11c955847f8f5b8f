package fieldmanager

import (
	"github.com/kapi-dev/kapi/internal/golden"
	"reflect"
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Test types carrying the merge tags the generated kapi types carry.
type gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              gadgetSpec `json:"spec,omitempty"`
}

type gadgetSpec struct {
	Items      []item              `json:"items" patchStrategy:"merge" patchMergeKey:"name"`
	Tags       []string            `json:"tags,omitempty" patchStrategy:"merge"`
	Args       []string            `json:"args,omitempty"`
	Ports      []port              `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"containerPort" listType:"map" listMapKey:"containerPort,protocol"`
	Set        []string            `json:"set,omitempty" listType:"set"`
	Atomic     []item              `json:"atomic,omitempty" listType:"atomic" patchStrategy:"merge" patchMergeKey:"name"`
	Labels     map[string]string   `json:"labels,omitempty"`
	Selector   map[string]string   `json:"selector,omitempty" mapType:"atomic"`
	Ref        *ref                `json:"ref,omitempty" structType:"atomic"`
	Granular   *ref                `json:"granular,omitempty"`
	Replicas   *int32              `json:"replicas,omitempty"`
	When       metav1.Time         `json:"when,omitempty"`
	Port       intstr.IntOrString  `json:"port,omitempty"`
	Size       resource.Quantity   `json:"size,omitempty"`
	Timeout    metav1.Duration     `json:"timeout,omitempty"`
	Raw        metav1.RawExtension `json:"raw,omitempty"`
	Data       []byte              `json:"data,omitempty"`
	Any        any                 `json:"any,omitempty"`
	Recursive  *node               `json:"recursive,omitempty"`
	unexported int
	Ignored    string `json:"-"`
}

type item struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type port struct {
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

type ref struct {
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
}

type node struct {
	Value string  `json:"value,omitempty"`
	Next  *node   `json:"next,omitempty"`
	Kids  []*node `json:"kids,omitempty"`
}

// fieldSet returns the FieldsV1 JSON of o's fields under s.
func fieldSet(t *testing.T, s *Schema, o map[string]any) string {
	t.Helper()
	tv, err := s.Parser().FromUnstructured(o)
	if err != nil {
		t.Fatalf("typed: %v", err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatalf("field set: %v", err)
	}
	b, err := set.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestForType(t *testing.T) {
	s, err := ForType(reflect.TypeFor[gadget]())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, obj, want string
	}{
		{"associative list by merge key", `{"spec":{"items":[{"name":"a","value":"1"},{"name":"b"}]}}`,
			`{"f:spec":{"f:items":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"b\"}":{".":{},"f:name":{}}}}}`},
		{"merge without key is a set", `{"spec":{"tags":["x","y"]}}`,
			`{"f:spec":{"f:tags":{"v:\"x\"":{},"v:\"y\"":{}}}}`},
		{"untagged list is atomic", `{"spec":{"args":["x","y"]}}`, `{"f:spec":{"f:args":{}}}`},
		{"listType map with two keys", `{"spec":{"ports":[{"containerPort":80,"protocol":"TCP"}]}}`,
			`{"f:spec":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}`},
		{"listType set", `{"spec":{"set":["a"]}}`, `{"f:spec":{"f:set":{"v:\"a\"":{}}}}`},
		{"explicit atomic wins over merge", `{"spec":{"atomic":[{"name":"a"}]}}`, `{"f:spec":{"f:atomic":{}}}`},
		{"granular map", `{"spec":{"labels":{"a":"1"}}}`, `{"f:spec":{"f:labels":{"f:a":{}}}}`},
		{"atomic map", `{"spec":{"selector":{"a":"1"}}}`, `{"f:spec":{"f:selector":{}}}`},
		{"atomic struct", `{"spec":{"ref":{"kind":"K","name":"n"}}}`, `{"f:spec":{"f:ref":{}}}`},
		{"granular struct", `{"spec":{"granular":{"kind":"K","name":"n"}}}`, `{"f:spec":{"f:granular":{"f:kind":{},"f:name":{}}}}`},
		{"scalars by hand-written JSON", `{"spec":{"when":"2026-01-01T00:00:00Z","port":"http","size":"1Gi","timeout":"1s","data":"AAE=","replicas":3}}`,
			`{"f:spec":{"f:data":{},"f:port":{},"f:replicas":{},"f:size":{},"f:timeout":{},"f:when":{}}}`},
		{"int-or-string as int", `{"spec":{"port":8080}}`, `{"f:spec":{"f:port":{}}}`},
		{"raw extension is atomic", `{"spec":{"raw":{"a":{"b":1}}}}`, `{"f:spec":{"f:raw":{}}}`},
		{"any is deduced", `{"spec":{"any":{"a":{"b":1}}}}`, `{"f:spec":{"f:any":{"f:a":{".":{},"f:b":{}}}}}`},
		{"recursive type", `{"spec":{"recursive":{"next":{"value":"x"}}}}`, `{"f:spec":{"f:recursive":{"f:next":{"f:value":{}}}}}`},
		{"inline type meta and object meta", `{"apiVersion":"v1","kind":"Gadget","metadata":{"name":"n","labels":{"a":"b"},"finalizers":["f"]}}`,
			`{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:finalizers":{"v:\"f\"":{}},"f:labels":{"f:a":{}},"f:name":{}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fieldSet(t, s, obj(t, c.obj)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}

	// Fields outside the type are rejected.
	if _, err := s.Parser().FromUnstructured(obj(t, `{"spec":{"nope":1}}`)); err == nil {
		t.Error("unknown field accepted")
	}
	if _, err := s.Parser().FromUnstructured(obj(t, `{"spec":{"Ignored":"x"}}`)); err == nil {
		t.Error(`field tagged "-" accepted`)
	}
}

func TestForTypeZero(t *testing.T) {
	s, err := ForType(reflect.TypeFor[gadget]())
	if err != nil {
		t.Fatal(err)
	}
	// Structs are present, non-omitempty nil lists are null, omitempty
	// fields absent, hand-written JSON written by its marshaler.
	want := `{"metadata":{"creationTimestamp":null},"spec":{"items":null,"port":0,"raw":null,"size":"0","timeout":"0s","when":null}}`
	mustEqualJSON(t, "zero", s.Zero(), obj(t, want))
}

func TestForTypeErrors(t *testing.T) {
	type badList struct {
		L []string `json:"l" listType:"map"`
	}
	type badMap struct {
		M map[int]string `json:"m"`
	}
	type badStrategy struct {
		L []string `json:"l" patchStrategy:"delete"`
	}
	for _, tt := range []reflect.Type{reflect.TypeFor[badList](), reflect.TypeFor[badMap](), reflect.TypeFor[badStrategy](), reflect.TypeFor[int]()} {
		if _, err := ForType(tt); err == nil {
			t.Errorf("ForType(%v) succeeded", tt)
		}
	}
}

func TestForTypePod(t *testing.T) {
	s, err := ForType(reflect.TypeFor[corev1.Pod]())
	if err != nil {
		t.Fatal(err)
	}
	o := obj(t, `
metadata:
  name: p
  finalizers: [a, b]
  ownerReferences:
  - {apiVersion: v1, kind: X, name: x, uid: u1}
spec:
  nodeSelector: {a: b}
  tolerations: [{key: k}]
  containers:
  - name: c
    image: i
    ports:
    - containerPort: 80
      protocol: TCP
    - containerPort: 81
    env:
    - {name: A, value: "1"}
`)
	want := `{"f:metadata":{"f:finalizers":{"v:\"a\"":{},"v:\"b\"":{}},"f:name":{},"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{}}},` +
		`"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:env":{"k:{\"name\":\"A\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},` +
		`"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}},"k:{\"containerPort\":81,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}},` +
		`"f:nodeSelector":{},"f:tolerations":{}}}`
	if got := fieldSet(t, s, o); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestForCRD(t *testing.T) {
	str := func(s string) *string { return &s }
	yes := true
	props := func(p map[string]apiextensionsv1.JSONSchemaProps) map[string]apiextensionsv1.JSONSchemaProps {
		return p
	}
	root := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props(map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: props(map[string]apiextensionsv1.JSONSchemaProps{
			"size":   {Type: "integer"},
			"list":   {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			"set":    {Type: "array", XListType: str("set"), Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			"byName": {Type: "array", XListType: str("map"), XListMapKeys: []string{"name"}, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props(map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}, "v": {Type: "string"}})}}},
			"labels": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			"atomic": {Type: "object", XMapType: str("atomic"), Properties: props(map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}})},
			"free":   {Type: "object", XPreserveUnknownFields: &yes},
			"port":   {XIntOrString: true},
			"tmpl":   {Type: "object", XEmbeddedResource: true, Properties: props(map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: &yes}})},
		})},
	})}
	s, err := ForCRD(root)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, obj, want string }{
		{"scalars and atomic list", `{"spec":{"size":1,"list":["a"],"port":"x"}}`, `{"f:spec":{"f:list":{},"f:port":{},"f:size":{}}}`},
		{"set and map lists", `{"spec":{"set":["a"],"byName":[{"name":"n","v":"1"}]}}`,
			`{"f:spec":{"f:byName":{"k:{\"name\":\"n\"}":{".":{},"f:name":{},"f:v":{}}},"f:set":{"v:\"a\"":{}}}}`},
		{"maps", `{"spec":{"labels":{"a":"1"},"atomic":{"a":"x"}}}`, `{"f:spec":{"f:atomic":{},"f:labels":{"f:a":{}}}}`},
		{"preserve unknown fields", `{"spec":{"free":{"x":{"y":[1]}}}}`, `{"f:spec":{"f:free":{"f:x":{".":{},"f:y":{}}}}}`},
		{"embedded resource", `{"spec":{"tmpl":{"apiVersion":"v1","kind":"K","metadata":{"labels":{"a":"b"}},"spec":{"z":1}}}}`,
			`{"f:spec":{"f:tmpl":{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:z":{}}}}}`},
		{"root metadata is ObjectMeta", `{"apiVersion":"e/v1","kind":"W","metadata":{"name":"w","ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u"}]}}`,
			`{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:name":{},"f:ownerReferences":{"k:{\"uid\":\"u\"}":{}}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fieldSet(t, s, obj(t, c.obj)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	if _, err := s.Parser().FromUnstructured(obj(t, `{"spec":{"nope":1}}`)); err == nil {
		t.Error("unknown field accepted")
	}

	// Invalid extensions are errors.
	for _, bad := range []*apiextensionsv1.JSONSchemaProps{
		{Type: "array", XListType: str("map")},
		{Type: "array", XListType: str("bag")},
		{Type: "object", XMapType: str("bag")},
		{Type: "tuple"},
	} {
		if _, err := ForCRD(&apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": *bad}}); err == nil {
			t.Errorf("ForCRD accepted %+v", bad)
		}
	}

	// No schema: everything deduced, maps granular (keys of a map are
	// members themselves, "."), lists atomic.
	d, err := ForCRD(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldSet(t, d, obj(t, `{"spec":{"a":{"b":1},"l":[1,2]}}`)), `{"f:spec":{".":{},"f:a":{".":{},"f:b":{}},"f:l":{}}}`; got != want {
		t.Errorf("deduced: got %s, want %s", got, want)
	}
}

// crdSchema returns the openAPIV3Schema of the first version of the CRD
// created in golden 84.
func crdSchema(t *testing.T) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	x := goldenObject(t, golden.V137, "84-create-crd") // a schema to build from, the same in both releases
	b, err := kjson.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := kjson.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}
