package apiserver

import (
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
)

// The JSON values of CRD schemas as kube-apiserver v1.37.2 stored them
// (answers to dry-run creates of CRDs with these defaults, in JSON and in
// protobuf alike).
func TestNormalizeCRDJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{ "b" : 1.0, "a": "<x&y>", "c": 1e3, "d": 12345678901234567890, "e": -0.0, "f": 1.5e-7, "g": "\u00e9\/" , "h": 100000000000000000000000.0}`,
			`{"a":"\u003cx\u0026y\u003e","b":1,"c":1000,"d":12345678901234567000,"e":0,"f":1.5e-7,"g":"é/","h":1e+23}`},
		{`{"v":[-0.0, -0, 0.0, 1.5, -2.0, 1e20, 1e21, 123456789012345678, 1.0e-7, 0.000001, 9007199254740993.0, 9223372036854775807, 9223372036854775808, -9223372036854775809, 1E2, 0.1, 100000000000000000000.5, "\ud83d\ude00", "\u2028", "a\u0000b", "\/", {"z":{"y":1,"x":2}}]}`,
			`{"v":[0,0,0,1.5,-2,100000000000000000000,1e+21,123456789012345678,1e-7,0.000001,9007199254740992,9223372036854775807,9223372036854776000,-9223372036854776000,100,0.1,100000000000000000000,"😀","\u2028","a\u0000b","/",{"z":{"x":2,"y":1}}]}`},
		{`{"a": [1, 2.5, "x", null, true]}`, `{"a":[1,2.5,"x",null,true]}`},
		{`"red"`, `"red"`},
	}
	for _, c := range cases {
		crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Schema: &apiextensionsv1.CustomResourceValidation{
				OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"spec": {Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
						Default: &apiextensionsv1.JSON{Raw: []byte(c.in)},
						Enum:    []apiextensionsv1.JSON{{Raw: []byte(c.in)}, {Raw: []byte("null")}},
					}}},
				}}}}}}}
		normalizeCRDJSON(crd)
		s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Items.Schema
		if got := string(s.Default.Raw); got != c.want {
			t.Errorf("default %s\n got  %s\n want %s", c.in, got, c.want)
		}
		if got := string(s.Enum[0].Raw); got != c.want {
			t.Errorf("enum %s\n got  %s\n want %s", c.in, got, c.want)
		}
		if s.Enum[1].Raw != nil {
			t.Errorf("a null enum member is %q, want nil", s.Enum[1].Raw)
		}
	}
	// A null default or example is dropped (kube-apiserver answers the CRD
	// without it).
	s := &apiextensionsv1.JSONSchemaProps{Default: &apiextensionsv1.JSON{Raw: []byte("null")}, Example: &apiextensionsv1.JSON{}}
	normalizeSchemaJSON(s)
	if s.Default != nil || s.Example != nil {
		t.Errorf("null default and example kept: %+v", s)
	}
	// Values already normal are not rewritten (they may be shared with the
	// stored object).
	raw := []byte(`{"a":1}`)
	s = &apiextensionsv1.JSONSchemaProps{Default: &apiextensionsv1.JSON{Raw: raw}}
	before := s.Default
	normalizeSchemaJSON(s)
	if s.Default != before || &s.Default.Raw[0] != &raw[0] {
		t.Error("a normal default was replaced")
	}
}
