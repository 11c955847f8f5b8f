package smdschema

import (
	"fmt"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
)

// ForCRD derives the Schema of a custom resource from the openAPIV3Schema of
// its CustomResourceDefinition version, following kube-openapi's conversion
// of the schema Kubernetes builds for the CRD:
//
//   - properties make a granular struct, additionalProperties a map (of the
//     given schema, or schemaless when true); x-kubernetes-map-type atomic
//     makes either atomic;
//   - a list is atomic unless x-kubernetes-list-type says set or map (keyed
//     by x-kubernetes-list-map-keys);
//   - x-kubernetes-preserve-unknown-fields makes unknown fields of that
//     object, and of every object below it, schemaless granular maps;
//     x-kubernetes-int-or-string is an untyped scalar; a schema without a
//     type may hold any value;
//   - the root, and every x-kubernetes-embedded-resource, gets string
//     apiVersion and kind and the standard ObjectMeta as metadata.
//
// A nil s gives Deduced().
func ForCRD(s *apiextensionsv1.JSONSchemaProps) (*Schema, error) {
	if s == nil {
		return Deduced(), nil
	}
	b := &crdBuilder{types: newTypeBuilder()}
	meta, err := b.types.structType(objectMetaType)
	if err != nil {
		return nil, fmt.Errorf("smdschema: ObjectMeta schema: %w", err)
	}
	b.metaName = meta
	root := b.atom(s, false, true)
	if len(b.errs) > 0 {
		return nil, fmt.Errorf("smdschema: invalid CRD schema: %v", b.errs[0])
	}
	const rootName = "kapi.crd.root"
	b.types.types = append(b.types.types, schema.TypeDef{Name: rootName, Atom: root})
	return &Schema{parser: typed.ParseableType{Schema: b.types.schema(), TypeRef: named(rootName)}, zero: map[string]any{}}, nil
}

// crdBuilder converts a CRD's JSON schema into inlined SMD atoms.
type crdBuilder struct {
	types    *typeBuilder
	metaName string
	errs     []error
}

func (b *crdBuilder) errorf(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf(format, args...))
}

// ref returns the inlined type of s; preserve says an ancestor preserves
// unknown fields.
func (b *crdBuilder) ref(s *apiextensionsv1.JSONSchemaProps, preserve bool) schema.TypeRef {
	tr := inlined(b.atom(s, preserve, false))
	tr.Nullable = s.Nullable
	return tr
}

// atom converts one schema node; resource says the node is an object with
// apiVersion, kind and metadata (the root or an embedded resource).
func (b *crdBuilder) atom(s *apiextensionsv1.JSONSchemaProps, preserve, resource bool) schema.Atom {
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		preserve = true
	}
	if s.XIntOrString {
		return scalarAtom(schema.Scalar("untyped"))
	}
	resource = resource || s.XEmbeddedResource
	switch s.Type {
	case "":
		return schema.Atom{
			Scalar: scalarAtom(schema.Scalar("untyped")).Scalar,
			List:   b.list(s, preserve),
			Map:    b.object(s, preserve, resource),
		}
	case "object":
		return schema.Atom{Map: b.object(s, preserve, resource)}
	case "array":
		return schema.Atom{List: b.list(s, preserve)}
	case "integer", "number":
		return scalarAtom(schema.Numeric)
	case "boolean":
		return scalarAtom(schema.Boolean)
	case "string":
		if s.Format == "" || s.Format == "byte" {
			return scalarAtom(schema.String)
		}
		return scalarAtom(schema.Scalar("untyped")) // int-or-string, date-time, ...
	}
	b.errorf("unrecognized type %q", s.Type)
	return scalarAtom(schema.Scalar("untyped"))
}

func (b *crdBuilder) object(s *apiextensionsv1.JSONSchemaProps, preserve, resource bool) *schema.Map {
	names := make([]string, 0, len(s.Properties)+3)
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	m := &schema.Map{}
	has := map[string]bool{}
	for _, name := range names {
		if resource && (name == "apiVersion" || name == "kind" || name == "metadata") {
			continue
		}
		p := s.Properties[name]
		has[name] = true
		m.Fields = append(m.Fields, schema.StructField{Name: name, Type: b.ref(&p, preserve)})
	}
	if resource {
		m.Fields = append(m.Fields,
			schema.StructField{Name: "apiVersion", Type: inlined(scalarAtom(schema.String))},
			schema.StructField{Name: "kind", Type: inlined(scalarAtom(schema.String))},
			schema.StructField{Name: "metadata", Type: named(b.metaName)},
		)
	}
	switch ap := s.AdditionalProperties; {
	case ap == nil:
		if preserve || len(s.Properties) == 0 {
			m.ElementType = named(untypedDeducedName)
		}
	case ap.Schema != nil:
		m.ElementType = b.ref(ap.Schema, preserve)
	case ap.Allows:
		m.ElementType = named(untypedDeducedName)
	}
	if s.XMapType != nil {
		rel, err := mapRelationship(*s.XMapType)
		if err != nil {
			b.errorf("x-kubernetes-map-type: %v", err)
		}
		m.ElementRelationship = rel
	}
	return m
}

func (b *crdBuilder) list(s *apiextensionsv1.JSONSchemaProps, preserve bool) *schema.List {
	l := &schema.List{ElementRelationship: schema.Atomic}
	if s.XListType != nil {
		switch *s.XListType {
		case "atomic":
		case "set":
			l.ElementRelationship = schema.Associative
		case "map":
			l.ElementRelationship = schema.Associative
			l.Keys = append([]string(nil), s.XListMapKeys...)
			if len(l.Keys) == 0 {
				b.errorf("x-kubernetes-list-type map without x-kubernetes-list-map-keys")
			}
		default:
			b.errorf("unknown x-kubernetes-list-type %q", *s.XListType)
		}
	}
	switch it := s.Items; {
	case it != nil && it.Schema != nil:
		l.ElementType = b.ref(it.Schema, preserve)
	case it != nil && len(it.JSONSchemas) == 1:
		l.ElementType = b.ref(&it.JSONSchemas[0], preserve)
	case it != nil && len(it.JSONSchemas) > 1:
		b.errorf("arrays must have exactly one item schema")
		l.ElementType = named(untypedDeducedName)
	default:
		l.ElementType = named(untypedAtomicName)
	}
	return l
}
