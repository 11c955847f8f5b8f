package apiserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
)

// The JSON values of a CRD's schemas (default, example, enum) are stored as
// kube-apiserver stores them: it converts each to a Go value (integers as
// int64, other numbers as float64) and back with encoding/json, so they are
// compact, object members sorted by name, "<", ">", "&", U+2028 and U+2029
// escaped, and numbers rewritten (1.0 is 1, 1e3 is 1000, -0 is 0). A null or
// empty default or example is dropped; a null enum member stays. Both JSON
// and protobuf answers carry these bytes, so the normalisation is done once,
// on every write.

// normalizeCRDJSON rewrites the JSON values of every schema of crd. A value
// already in normal form is left untouched (no write to shared memory); one
// that is not JSON (which decoding prevents) is left as it is.
func normalizeCRDJSON(crd *apiextensionsv1.CustomResourceDefinition) {
	for i := range crd.Spec.Versions {
		if v := crd.Spec.Versions[i].Schema; v != nil {
			normalizeSchemaJSON(v.OpenAPIV3Schema)
		}
	}
}

func normalizeSchemaJSON(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Default = normalizeOptionalJSON(s.Default)
	s.Example = normalizeOptionalJSON(s.Example)
	for i := range s.Enum {
		if raw, ok := normalJSON(s.Enum[i].Raw); ok {
			s.Enum[i].Raw = raw
		}
	}
	if s.Items != nil {
		normalizeSchemaJSON(s.Items.Schema)
		for i := range s.Items.JSONSchemas {
			normalizeSchemaJSON(&s.Items.JSONSchemas[i])
		}
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range list {
			normalizeSchemaJSON(&list[i])
		}
	}
	normalizeSchemaJSON(s.Not)
	for _, m := range []map[string]apiextensionsv1.JSONSchemaProps{s.Properties, s.PatternProperties, s.Definitions} {
		for k, v := range m {
			before := v
			normalizeSchemaJSON(&v)
			if !sameJSONFields(&before, &v) {
				m[k] = v
			}
		}
	}
	for _, b := range []*apiextensionsv1.JSONSchemaPropsOrBool{s.AdditionalProperties, s.AdditionalItems} {
		if b != nil {
			normalizeSchemaJSON(b.Schema)
		}
	}
	for _, v := range s.Dependencies {
		normalizeSchemaJSON(v.Schema) // a pointer: changed in place
	}
}

// sameJSONFields reports whether a and b (a schema before and after
// normalizeSchemaJSON) have the same top-level default and example, so that
// a map entry needs no rewrite; nested schemas are pointers or slices, which
// normalizeSchemaJSON changed in place.
func sameJSONFields(a, b *apiextensionsv1.JSONSchemaProps) bool {
	return a.Default == b.Default && a.Example == b.Example
}

// normalizeOptionalJSON returns j in normal form: nil for nothing or null.
func normalizeOptionalJSON(j *apiextensionsv1.JSON) *apiextensionsv1.JSON {
	if j == nil || len(j.Raw) == 0 || string(j.Raw) == "null" {
		return nil
	}
	if raw, ok := normalJSON(j.Raw); ok {
		return &apiextensionsv1.JSON{Raw: raw}
	}
	return j
}

// normalJSON returns raw in normal form and true when that differs from raw.
// An empty or null raw value is nil.
func normalJSON(raw []byte) ([]byte, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, raw != nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw, false
	}
	out, err := json.Marshal(normalNumbers(v))
	if err != nil || bytes.Equal(out, raw) {
		return raw, false
	}
	return out, true
}

// normalNumbers turns the json.Numbers of v into what kube-apiserver decodes
// them to: an int64 when the number is an integer literal that fits, else a
// float64; a float64 zero is 0 (kube-apiserver writes no "-0").
func normalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return x
		}
		if f == 0 {
			return int64(0)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalNumbers(e)
		}
	}
	return v
}
