package openapi

import (
	"encoding/json"
	"fmt"
	"strings"

	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// The metadata types every document refers to.
type (
	deleteOptions = metav1.DeleteOptions
	status        = metav1.Status
	objectMeta    = metav1.ObjectMeta
	listMeta      = metav1.ListMeta
	scale         = autoscalingv1.Scale
)

// customName names a custom kind's definition as kube-apiserver does: the
// group's labels reversed, then version and kind (widgets.example.com/v1
// Widget is com.example.v1.Widget).
func customName(group, version, kind string) string {
	labels := strings.Split(group, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	return strings.Join(labels, ".") + "." + version + "." + kind
}

// customSchemas returns the v2 and v3 definitions (neutral references) of a
// custom resource's kind: its version's openAPIV3Schema with apiVersion,
// kind and metadata added (a CRD without a schema gets an object that keeps
// unknown fields).
func customSchemas(r *registry.Resource) (v2, v3 schema, err error) {
	base := schema{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	if r.Schema != nil {
		raw, err := json.Marshal(r.Schema)
		if err != nil {
			return nil, nil, fmt.Errorf("openapi: encoding the schema of %s: %w", r.GroupResource(), err)
		}
		base = schema{}
		if err := json.Unmarshal(raw, &base); err != nil {
			return nil, nil, fmt.Errorf("openapi: decoding the schema of %s: %w", r.GroupResource(), err)
		}
	}
	props, _ := base["properties"].(map[string]any)
	if props == nil {
		props = schema{}
	}
	props["apiVersion"] = schema{"type": "string"}
	props["kind"] = schema{"type": "string"}
	props["metadata"] = ref(objectMetaName)
	base["properties"] = props
	base["x-kubernetes-group-version-kind"] = []any{schema{"group": r.Group, "version": r.Version, "kind": r.Kind}}
	v3 = cloneSchema(base)
	intOrStringV3(v3)
	v2 = cloneSchema(base)
	toV2Structural(v2)
	return v2, v3, nil
}

// walkSchemas calls f on s and every schema nested in it (properties,
// items, additionalProperties, the combinators).
func walkSchemas(s schema, f func(schema)) {
	f(s)
	for _, key := range []string{"properties", "patternProperties", "definitions"} {
		if m, ok := s[key].(map[string]any); ok {
			for _, v := range m {
				if c, ok := v.(map[string]any); ok {
					walkSchemas(c, f)
				}
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not", "additionalItems"} {
		switch v := s[key].(type) {
		case map[string]any:
			walkSchemas(v, f)
		case []any:
			for _, x := range v {
				if c, ok := x.(map[string]any); ok {
					walkSchemas(c, f)
				}
			}
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := s[key].([]any); ok {
			for _, x := range l {
				if c, ok := x.(map[string]any); ok {
					walkSchemas(c, f)
				}
			}
		}
	}
}

// intOrStringV3 spells x-kubernetes-int-or-string out as the anyOf
// kube-apiserver adds in v3 documents.
func intOrStringV3(s schema) {
	walkSchemas(s, func(c schema) {
		if c["x-kubernetes-int-or-string"] == true && c["anyOf"] == nil && c["oneOf"] == nil {
			c["anyOf"] = []any{schema{"type": "integer"}, schema{"type": "string"}}
		}
	})
}

// toV2Structural drops what Swagger 2.0 cannot say, as kube-apiserver does
// when it publishes a CRD's schema in /openapi/v2: the combinators and
// "not", "nullable" (and the type of a nullable field, since 2.0 has no
// null), and the type of fields that keep unknown fields or hold an int or
// a string.
func toV2Structural(s schema) {
	walkSchemas(s, func(c schema) {
		for _, k := range []string{"allOf", "anyOf", "oneOf", "not"} {
			delete(c, k)
		}
		if c["nullable"] == true {
			delete(c, "type")
		}
		delete(c, "nullable")
		if c["x-kubernetes-preserve-unknown-fields"] == true || c["x-kubernetes-int-or-string"] == true {
			delete(c, "type")
		}
	})
}
