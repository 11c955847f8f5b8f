package openapi

import (
	"encoding/json"
	"reflect"
	"strings"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// A schema is a JSON schema object, built in one neutral form for both
// editions: references are {"$ref": "#/definitions/NAME"}, possibly with
// siblings ("default"); render turns them into each edition's spelling.
type schema = map[string]any

// Definition names of the types every document refers to.
const (
	objectMetaName    = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaName      = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	statusName        = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	deleteOptionsName = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	patchName         = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
)

// special are the types whose JSON form is not their Go structure (they
// marshal themselves): their definitions are given here, per edition, as
// kube-apiserver's documents have them. v3 is nil when it is v2's.
var special = map[reflect.Type]struct {
	name   string
	v2, v3 schema
}{
	reflect.TypeFor[metav1.Time]():         {name: "io.k8s.apimachinery.pkg.apis.meta.v1.Time", v2: schema{"type": "string", "format": "date-time"}},
	reflect.TypeFor[metav1.MicroTime]():    {name: "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", v2: schema{"type": "string", "format": "date-time"}},
	reflect.TypeFor[metav1.FieldsV1]():     {name: "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", v2: schema{"type": "object"}},
	reflect.TypeFor[metav1.RawExtension](): {name: "io.k8s.apimachinery.pkg.runtime.RawExtension", v2: schema{"type": "object"}},
	reflect.TypeFor[resource.Quantity](): {name: "io.k8s.apimachinery.pkg.api.resource.Quantity", v2: schema{"type": "string"},
		v3: schema{"oneOf": []any{schema{"type": "string"}, schema{"type": "number"}}}},
	reflect.TypeFor[intstr.IntOrString](): {name: "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
		v2: schema{"type": "string", "format": "int-or-string"},
		v3: schema{"format": "int-or-string", "oneOf": []any{schema{"type": "integer"}, schema{"type": "string"}}}},
	// The JSON unions of CustomResourceDefinition schemas are untyped.
	reflect.TypeFor[apiextensionsv1.JSON]():                         {name: apiextensionsName + ".JSON", v2: schema{}},
	reflect.TypeFor[apiextensionsv1.JSONSchemaPropsOrArray]():       {name: apiextensionsName + ".JSONSchemaPropsOrArray", v2: schema{}},
	reflect.TypeFor[apiextensionsv1.JSONSchemaPropsOrBool]():        {name: apiextensionsName + ".JSONSchemaPropsOrBool", v2: schema{}},
	reflect.TypeFor[apiextensionsv1.JSONSchemaPropsOrStringArray](): {name: apiextensionsName + ".JSONSchemaPropsOrStringArray", v2: schema{}},
}

// inlineSpecial are self-marshalling types Kubernetes writes in place, without
// a definition of their own.
var inlineSpecial = map[reflect.Type]schema{
	reflect.TypeFor[metav1.Duration](): {"type": "string"},
}

const apiextensionsName = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"

const kapiAPI = "github.com/kapi-dev/kapi/api/"

// DefinitionName is the name Kubernetes gives the definition of a Go type:
// io.k8s.api.core.v1.Pod, io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta.
// kapi's api/<group>/<version> packages map onto k8s.io/api's; a type from
// another module (a user's custom resource struct) is named after its
// package path with the host reversed, as openapi-gen does
// (github.com/acme/api/v1.Widget is com.github.acme.api.v1.Widget).
func DefinitionName(t reflect.Type) string {
	if s, ok := special[t]; ok {
		return s.name
	}
	p := t.PkgPath()
	if rest, ok := strings.CutPrefix(p, kapiAPI); ok {
		switch rest {
		case "meta/v1":
			return "io.k8s.apimachinery.pkg.apis.meta.v1." + t.Name()
		case "apiextensions/v1":
			return apiextensionsName + "." + t.Name()
		case "apiregistration/v1":
			return "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1." + t.Name()
		case "resource":
			return "io.k8s.apimachinery.pkg.api.resource." + t.Name()
		case "intstr":
			return "io.k8s.apimachinery.pkg.util.intstr." + t.Name()
		}
		return "io.k8s.api." + strings.ReplaceAll(rest, "/", ".") + "." + t.Name()
	}
	parts := strings.Split(p, "/")
	host := strings.Split(parts[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	return strings.Join(append(host, parts[1:]...), ".") + "." + t.Name()
}

// definitions builds definitions from Go types by reflection, reading the
// struct tags schemagen writes (json, patchStrategy, patchMergeKey,
// listType, listMapKey, mapType, structType).
//
// Descriptions are left out: kapi's types carry no documentation text, and
// kapi does not copy Kubernetes'. Enum values come from the OpenAPIEnum
// methods schemagen writes for the types Kubernetes marks +enum.
type definitions struct {
	v2, v3 map[string]schema
	types  map[reflect.Type]string // struct types already defined
	// mapType holds the x-kubernetes-map-type a struct's declaration gives
	// it (schemagen copies it onto the fields that hold the struct as their
	// structType tag).
	mapType map[string]string
}

func newDefinitions() *definitions {
	d := &definitions{v2: map[string]schema{}, v3: map[string]schema{}, types: map[reflect.Type]string{}, mapType: map[string]string{}}
	d.v2[patchName] = schema{"type": "object"}
	d.v3[patchName] = schema{"type": "object"}
	return d
}

// ref defines t (a struct type) if needed and returns its name.
func (d *definitions) ref(t reflect.Type) string {
	if name, ok := d.types[t]; ok {
		return name
	}
	if s, ok := special[t]; ok {
		d.types[t] = s.name
		d.v2[s.name] = s.v2
		v3 := s.v3
		if v3 == nil {
			v3 = s.v2
		}
		d.v3[s.name] = v3
		return s.name
	}
	name := DefinitionName(t)
	d.types[t] = name
	def := schema{"type": "object"}
	props := schema{}
	var required []string
	d.fields(t, props, &required)
	if len(props) > 0 {
		def["properties"] = props
	}
	if len(required) > 0 {
		def["required"] = required // in field order, as Kubernetes lists them
	}
	d.v2[name] = def
	d.v3[name] = def // the same until render: only references differ
	return name
}

// fields adds the properties of struct type t, inlining embedded structs.
func (d *definitions) fields(t reflect.Type, props schema, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				d.fields(ft, props, required)
			}
			continue
		}
		if name == "" {
			if tag == "" && f.Tag.Get("protobuf") == "" {
				continue // not part of the wire form
			}
			name = f.Name
		}
		s := d.typeSchema(ft)
		if ft.Kind() == reflect.Struct && s["$ref"] != nil && special[ft].name == "" {
			// A struct held by value is serialised as at least {}: v3
			// documents say so with a default (v2 ones drop it).
			s = schema{"$ref": s["$ref"], "default": schema{}}
		}
		addTagExtensions(s, f.Tag)
		if st := f.Tag.Get("structType"); st == "granular" {
			// A field's own override of its type's atomic declaration
			// (PersistentVolumeSpec.claimRef): kube-apiserver puts it on
			// the property and keeps the definition atomic.
			s["x-kubernetes-map-type"] = st
		} else if st != "" {
			if ref, ok := s["$ref"].(string); ok {
				d.mapType[strings.TrimPrefix(ref, "#/definitions/")] = st
			} else if items, ok := s["items"].(schema); ok {
				if ref, ok := items["$ref"].(string); ok {
					d.mapType[strings.TrimPrefix(ref, "#/definitions/")] = st
				}
			}
		}
		props[name] = s
		omitempty := strings.Contains(","+opts+",", ",omitempty,")
		// Required unless omitempty, as kube-openapi infers it, except where
		// schemagen recorded a +optional or +required marker that says
		// otherwise.
		optional := omitempty
		switch f.Tag.Get("optional") {
		case "true":
			optional = true
		case "false":
			optional = false
		}
		if !optional {
			*required = append(*required, name)
		}
		// Defaults, which v3 documents carry (v2 ones drop them on
		// scalars): a +default marker's value, or else the zero value of a
		// scalar that is always written (no omitempty).
		if dv := f.Tag.Get("default"); dv != "" {
			var v any
			if err := json.Unmarshal([]byte(dv), &v); err == nil {
				s["default"] = v
			}
		} else if z, ok := zeroValue(ft); ok && !omitempty {
			s["default"] = z
		}
	}
}

// typeSchema is the schema of a value of type t.
func (d *definitions) typeSchema(t reflect.Type) schema {
	if s, ok := inlineSpecial[t]; ok {
		return cloneSchema(s)
	}
	if _, ok := special[t]; ok {
		return schema{"$ref": "#/definitions/" + d.ref(t)}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return d.typeSchema(t.Elem())
	case reflect.String:
		// schemagen gives the types Kubernetes marks +enum an OpenAPIEnum
		// method listing their values.
		if e, ok := reflect.Zero(t).Interface().(interface{ OpenAPIEnum() []string }); ok {
			return schema{"type": "string", "enum": e.OpenAPIEnum()}
		}
		return schema{"type": "string"}
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint16, reflect.Uint8, reflect.Int:
		return schema{"type": "integer", "format": "int32"}
	case reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return schema{"type": "integer", "format": "int64"}
	case reflect.Float32:
		return schema{"type": "number", "format": "float"}
	case reflect.Float64:
		return schema{"type": "number", "format": "double"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return schema{"type": "string", "format": "byte"}
		}
		return schema{"type": "array", "items": d.typeSchema(t.Elem())}
	case reflect.Map:
		return schema{"type": "object", "additionalProperties": d.typeSchema(t.Elem())}
	case reflect.Struct:
		return schema{"$ref": "#/definitions/" + d.ref(t)}
	}
	return schema{} // interfaces: any JSON value
}

// zeroValue is the JSON zero value of a scalar type held by value.
func zeroValue(t reflect.Type) (any, bool) {
	if _, ok := special[t]; ok {
		return nil, false
	}
	switch t.Kind() {
	case reflect.String:
		return "", true
	case reflect.Bool:
		return false, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 0, true
	}
	return nil, false
}

// addTagExtensions turns the merge tags of a field into the x-kubernetes-*
// extensions of its schema.
func addTagExtensions(s schema, tag reflect.StructTag) {
	if v := tag.Get("patchStrategy"); v != "" {
		s["x-kubernetes-patch-strategy"] = v
	}
	if v := tag.Get("patchMergeKey"); v != "" {
		s["x-kubernetes-patch-merge-key"] = v
	}
	if v := tag.Get("listType"); v != "" {
		s["x-kubernetes-list-type"] = v
	}
	if v := tag.Get("listMapKey"); v != "" {
		s["x-kubernetes-list-map-keys"] = strings.Split(v, ",")
	}
	if v := tag.Get("mapType"); v != "" {
		s["x-kubernetes-map-type"] = v
	}
}

// finish puts the declaration-level extensions gathered from the fields on
// their definitions.
func (d *definitions) finish() {
	for name, mt := range d.mapType {
		for _, m := range []map[string]schema{d.v2, d.v3} {
			if def := m[name]; def != nil {
				def["x-kubernetes-map-type"] = mt
			}
		}
	}
}

func cloneSchema(s schema) schema {
	out := make(schema, len(s))
	for k, v := range s {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneSchema(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneValue(x)
		}
		return out
	case []string:
		return append([]string(nil), v...)
	}
	return v
}
