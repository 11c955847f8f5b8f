package schema

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// TestValidateListSetsAndMaps checks the Duplicate errors of list-type set
// and map, worded as kube-apiserver v1.37.2's (conformance/testdata/cel).
func TestValidateListSetsAndMaps(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
	  "tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
	  "atomic":{"type":"array","items":{"type":"string"}},
	  "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","proto"],
	    "items":{"type":"object","properties":{"name":{"type":"string"},"proto":{"type":"string"},"port":{"type":"integer"}}}},
	  "m":{"type":"object","additionalProperties":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"integer"}}}}}}}`)
	obj := mustObject(t, `{"kind":"X","apiVersion":"v1","spec":{"tags":["a","b","b","a"],"atomic":["x","x"],
	  "ports":[{"name":"a","proto":"TCP"},{"name":"a","proto":"UDP"},{"name":"a","proto":"TCP","port":1}],
	  "m":{"k":[1,1.0]}}}`)
	want := `[spec.m.k[1]: Duplicate value: 1, spec.ports[2]: Duplicate value: {"name":"a","proto":"TCP"}, ` +
		`spec.tags[2]: Duplicate value: "b", spec.tags[3]: Duplicate value: "a"]`
	if got := ValidateListSetsAndMaps(s, obj).Message(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestFormatErrors checks that a string not of its format is a wrong type,
// and an int32 out of range an error at no field, as kube-apiserver
// words them (conformance/testdata/cel/more-create-formats.json).
func TestFormatErrors(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
	  "f":{"type":"string","format":"uuid"},"i":{"type":"integer","format":"int32"}}}}}`)
	errs := Validate(s, mustObject(t, `{"kind":"X","apiVersion":"v1","spec":{"f":"x","i":3000000000}}`))
	want := `[spec.f: Invalid value: "x": spec.f in body must be of type uuid: "x", <nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.i]`
	if got := errs.Message(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if errs[0].Type != "FieldValueTypeInvalid" {
		t.Errorf("format error type %s", errs[0].Type)
	}
}

// TestPruneEmbeddedMetadata checks that an embedded resource's metadata
// keeps only the fields of ObjectMeta, and its defaults apply.
func TestPruneEmbeddedMetadata(t *testing.T) {
	s := mustSchema(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
	  "e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
	    "properties":{"kind":{"type":"string","default":"K"},"spec":{"type":"object","properties":{"d":{"type":"integer","default":5}}}}}}}}}`)
	obj := mustObject(t, `{"kind":"X","apiVersion":"v1","metadata":{"name":"n","odd":1},
	  "spec":{"e":{"metadata":{"name":"x","labels":{"a":"b"},"bogus":2},"spec":{},"other":1}}}`)
	Prune(s, obj)
	Default(s, obj)
	want := `{"kind":"K","metadata":{"labels":{"a":"b"},"name":"x"},"other":1,"spec":{"d":5}}`
	if got := compactOf(obj["spec"].(map[string]any)["e"]); got != want {
		t.Errorf("embedded\n got  %s\n want %s", got, want)
	}
}

func compactOf(x any) string {
	b, _ := kjson.Marshal(x)
	return string(b)
}
