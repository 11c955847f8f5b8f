package smdschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// Schema is the structured-merge-diff schema of one kind: how its fields
// merge (struct, granular or atomic map, associative or atomic list, scalar)
// and what an empty object of the kind looks like. Build it once per kind
// with ForType or ForCRD; it is immutable and safe for concurrent use.
type Schema struct {
	parser typed.ParseableType
	// zero is the JSON form of a new, empty object of the kind: the "live"
	// object of a create. Kubernetes compares a created object with it, so
	// fields that are present (null or empty) in it are not "added" by the
	// create and do not get a "." member of their own.
	zero map[string]any
	// kind is the Go type name for ForType schemas, "" for ForCRD.
	kind string
}

// Names of the two schema-less types every Schema carries, with the meaning
// Kubernetes gives its __untyped_atomic_ and __untyped_deduced_ types.
var (
	untypedAtomicName  = "kapi.untyped.atomic"
	untypedDeducedName = "kapi.untyped.deduced"
)

// untypedTypes returns the definitions of the untyped types: an atomic
// untyped value (scalar, or list or map owned as a whole), and a deduced one
// whose maps are granular all the way down and whose lists are atomic.
func untypedTypes() []schema.TypeDef {
	untyped := schema.Scalar("untyped")
	return []schema.TypeDef{
		{Name: untypedAtomicName, Atom: schema.Atom{
			Scalar: &untyped,
			List:   &schema.List{ElementType: schema.TypeRef{NamedType: &untypedAtomicName}, ElementRelationship: schema.Atomic},
			Map:    &schema.Map{ElementType: schema.TypeRef{NamedType: &untypedAtomicName}, ElementRelationship: schema.Atomic},
		}},
		{Name: untypedDeducedName, Atom: schema.Atom{
			Scalar: &untyped,
			List:   &schema.List{ElementType: schema.TypeRef{NamedType: &untypedAtomicName}, ElementRelationship: schema.Atomic},
			Map:    &schema.Map{ElementType: schema.TypeRef{NamedType: &untypedDeducedName}, ElementRelationship: schema.Separable},
		}},
	}
}

func scalarAtom(s schema.Scalar) schema.Atom { return schema.Atom{Scalar: &s} }

func inlined(a schema.Atom) schema.TypeRef { return schema.TypeRef{Inlined: a} }

func named(name string) schema.TypeRef { return schema.TypeRef{NamedType: &name} }

// Deduced returns a Schema that knows nothing about the kind: every map is
// granular, every list atomic, every other value a scalar. It is what
// ForCRD(nil) returns and what Kubernetes uses for custom resources without a
// schema.
func Deduced() *Schema {
	s := &schema.Schema{Types: untypedTypes()}
	return &Schema{parser: typed.ParseableType{Schema: s, TypeRef: named(untypedDeducedName)}, zero: map[string]any{}}
}

// Go types whose JSON form is written by hand, and how they merge. They
// follow the OpenAPI definitions Kubernetes publishes for them, converted
// the way kube-openapi's schemaconv converts them: date-time strings,
// quantities and int-or-strings are untyped scalars, a duration is a string,
// a RawExtension is an untyped value owned as a whole, and FieldsV1 (an
// object without properties) is a granular untyped map.
var (
	timeType         = reflect.TypeFor[metav1.Time]()
	microTimeType    = reflect.TypeFor[metav1.MicroTime]()
	durationType     = reflect.TypeFor[metav1.Duration]()
	quantityType     = reflect.TypeFor[resource.Quantity]()
	intOrStringType  = reflect.TypeFor[intstr.IntOrString]()
	rawExtensionType = reflect.TypeFor[metav1.RawExtension]()
	fieldsV1Type     = reflect.TypeFor[metav1.FieldsV1]()
	objectMetaType   = reflect.TypeFor[metav1.ObjectMeta]()
	marshalerType    = reflect.TypeFor[json.Marshaler]()
)

// keyDefaults are defaults Kubernetes declares (+default) on fields that are
// keys of associative lists. SMD needs them to key an applied item that
// leaves the field out, as kube-apiserver's OpenAPI schema provides them.
var keyDefaults = map[reflect.Type]map[string]any{
	reflect.TypeFor[corev1.ContainerPort](): {"protocol": "TCP"},
	reflect.TypeFor[corev1.ServicePort]():   {"protocol": "TCP"},
}

// fieldTags are the struct tags that decide how a field merges.
type fieldTags struct {
	listType      string   // listType: atomic, set or map
	listMapKeys   []string // listMapKey: "k1,k2"
	patchStrategy string   // patchStrategy: merge, retainKeys, "merge,retainKeys"
	patchMergeKey string   // patchMergeKey: name
	mapType       string   // mapType: atomic or granular
	structType    string   // structType: atomic or granular
}

// structField is one JSON field of a struct, inline members flattened.
type structField struct {
	name      string
	typ       reflect.Type
	index     []int // reflect.Value.FieldByIndex from the struct
	omitempty bool
	tags      fieldTags
}

// jsonFields lists the JSON fields of struct type t the way encoding/json
// sees them: the json tag's name (the Go name without one), fields tagged
// "-" and unexported fields left out, embedded structs without a name (or
// tagged ",inline") flattened into t. A field of t wins over an inlined one
// of the same name.
func jsonFields(t reflect.Type) []structField {
	var out []structField
	seen := map[string]bool{}
	type inlined struct {
		typ   reflect.Type
		index int
	}
	var inline []inlined
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				inline = append(inline, inlined{ft, i})
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sf := structField{name: name, typ: f.Type, index: []int{i}, omitempty: strings.Contains(","+opts+",", ",omitempty,")}
		sf.tags = fieldTags{
			listType:      f.Tag.Get("listType"),
			patchStrategy: f.Tag.Get("patchStrategy"),
			patchMergeKey: f.Tag.Get("patchMergeKey"),
			mapType:       f.Tag.Get("mapType"),
			structType:    f.Tag.Get("structType"),
		}
		if k := f.Tag.Get("listMapKey"); k != "" {
			for _, s := range strings.Split(k, ",") {
				if s = strings.TrimSpace(s); s != "" {
					sf.tags.listMapKeys = append(sf.tags.listMapKeys, s)
				}
			}
		}
		seen[name] = true
		out = append(out, sf)
	}
	for _, it := range inline {
		for _, sf := range jsonFields(it.typ) {
			if !seen[sf.name] {
				seen[sf.name] = true
				sf.index = append([]int{it.index}, sf.index...)
				out = append(out, sf)
			}
		}
	}
	return out
}

// typeBuilder converts Go types into SMD type definitions. Struct types
// become named types (so recursive types work); lists and maps are inlined
// because how they merge depends on the tags of the field holding them.
type typeBuilder struct {
	types []schema.TypeDef
	names map[reflect.Type]string
}

func newTypeBuilder() *typeBuilder {
	return &typeBuilder{types: untypedTypes(), names: map[reflect.Type]string{}}
}

func (b *typeBuilder) schema() *schema.Schema { return &schema.Schema{Types: b.types} }

func isMarshaler(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}

// ref returns the type reference for a value of Go type t held in a field
// with tags; path names the field in errors.
func (b *typeBuilder) ref(t reflect.Type, tags fieldTags, path string) (schema.TypeRef, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType, microTimeType, quantityType, intOrStringType:
		return inlined(scalarAtom(schema.Scalar("untyped"))), nil
	case durationType:
		return inlined(scalarAtom(schema.String)), nil
	case rawExtensionType:
		return named(untypedAtomicName), nil
	case fieldsV1Type:
		return named(untypedDeducedName), nil
	}
	if isMarshaler(t) {
		// Any other hand-written JSON (apiextensions' JSON and
		// JSONSchemaPropsOr* types): schemaless, as Kubernetes publishes
		// them without a type.
		return named(untypedDeducedName), nil
	}
	switch t.Kind() {
	case reflect.String:
		return inlined(scalarAtom(schema.String)), nil
	case reflect.Bool:
		return inlined(scalarAtom(schema.Boolean)), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return inlined(scalarAtom(schema.Numeric)), nil
	case reflect.Interface:
		return named(untypedDeducedName), nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return inlined(scalarAtom(schema.String)), nil // []byte is base64 text
		}
		rel, keys, err := listRelationship(tags)
		if err != nil {
			return schema.TypeRef{}, fmt.Errorf("%s: %w", path, err)
		}
		// structType on a list field is the marker of its element type.
		elem, err := b.ref(t.Elem(), fieldTags{structType: tags.structType}, path+"[]")
		if err != nil {
			return schema.TypeRef{}, err
		}
		return inlined(schema.Atom{List: &schema.List{ElementType: elem, ElementRelationship: rel, Keys: keys}}), nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return schema.TypeRef{}, fmt.Errorf("%s: map key type %v is not a string", path, t.Key())
		}
		rel, err := mapRelationship(tags.mapType)
		if err != nil {
			return schema.TypeRef{}, fmt.Errorf("%s: %w", path, err)
		}
		elem, err := b.ref(t.Elem(), fieldTags{structType: tags.structType}, path+"{}")
		if err != nil {
			return schema.TypeRef{}, err
		}
		return inlined(schema.Atom{Map: &schema.Map{ElementType: elem, ElementRelationship: rel}}), nil
	case reflect.Struct:
		name, err := b.structType(t)
		if err != nil {
			return schema.TypeRef{}, err
		}
		tr := named(name)
		st := tags.structType
		if st == "" {
			st = tags.mapType
		}
		rel, err := mapRelationship(st)
		if err != nil {
			return schema.TypeRef{}, fmt.Errorf("%s: %w", path, err)
		}
		if rel != "" {
			tr.ElementRelationship = &rel
		}
		return tr, nil
	}
	return schema.TypeRef{}, fmt.Errorf("%s: unsupported Go type %v", path, t)
}

// structType defines the named type of struct type t (once) and returns its
// name.
func (b *typeBuilder) structType(t reflect.Type) (string, error) {
	if name, ok := b.names[t]; ok {
		return name, nil
	}
	name := t.PkgPath() + "." + t.Name()
	if t.Name() == "" {
		name = fmt.Sprintf("anonymous.%d", len(b.names))
	}
	b.names[t] = name
	idx := len(b.types)
	b.types = append(b.types, schema.TypeDef{Name: name}) // reserve: recursion ends here
	m := &schema.Map{}
	defaults := keyDefaults[t]
	for _, f := range jsonFields(t) {
		tr, err := b.ref(f.typ, f.tags, t.Name()+"."+f.name)
		if err != nil {
			return "", err
		}
		sf := schema.StructField{Name: f.name, Type: tr}
		if d, ok := defaults[f.name]; ok {
			sf.Default = d
		}
		m.Fields = append(m.Fields, sf)
	}
	b.types[idx].Atom = schema.Atom{Map: m}
	return name, nil
}

// listRelationship decides how a list merges, as kube-openapi's schemaconv
// does from the OpenAPI extensions the tags stand for: an explicit listType
// wins (atomic; set; map keyed by listMapKey); otherwise patchStrategy merge
// makes an associative list keyed by patchMergeKey, or a set without one;
// retainKeys alone and no strategy at all make the list atomic.
func listRelationship(tags fieldTags) (schema.ElementRelationship, []string, error) {
	switch tags.listType {
	case "atomic":
		return schema.Atomic, nil, nil
	case "set":
		return schema.Associative, nil, nil
	case "map":
		keys := tags.listMapKeys
		if len(keys) == 0 && tags.patchMergeKey != "" {
			keys = []string{tags.patchMergeKey}
		}
		if len(keys) == 0 {
			return "", nil, fmt.Errorf("listType map without listMapKey")
		}
		return schema.Associative, keys, nil
	case "":
	default:
		return "", nil, fmt.Errorf("unknown listType %q", tags.listType)
	}
	switch tags.patchStrategy {
	case "merge", "merge,retainKeys", "retainKeys,merge":
		if tags.patchMergeKey != "" {
			return schema.Associative, []string{tags.patchMergeKey}, nil
		}
		return schema.Associative, nil, nil
	case "", "retainKeys", "replace":
		return schema.Atomic, nil, nil
	}
	return "", nil, fmt.Errorf("unknown patchStrategy %q", tags.patchStrategy)
}

// mapRelationship maps a mapType or structType value to SMD's: "" keeps the
// type's own (granular), atomic owns the map as a whole.
func mapRelationship(v string) (schema.ElementRelationship, error) {
	switch v {
	case "":
		return "", nil
	case "atomic":
		return schema.Atomic, nil
	case "granular":
		return schema.Separable, nil
	}
	return "", fmt.Errorf("unknown map or struct type %q", v)
}

// ForType derives the Schema of the kind whose Go type is t (a struct, such
// as corev1.Pod), from its json tags and the merge tags generated from
// Kubernetes' markers:
//
//	listType:"atomic|set|map"  listMapKey:"k1,k2"
//	patchStrategy:"merge"      patchMergeKey:"name"
//	mapType:"atomic|granular"  structType:"atomic|granular"
//
// Structs and map[string]X are granular unless tagged atomic (structType on
// a list or map field is about its struct elements, as the generator copies
// a type's +structType marker onto the fields using it); a list follows
// listRelationship's rules (atomic when untagged). metav1.Time, MicroTime,
// resource.Quantity and intstr.IntOrString are untyped scalars,
// metav1.Duration and []byte strings, metav1.RawExtension an atomic untyped
// value, metav1.FieldsV1 and any other type with its own MarshalJSON a
// schemaless (deduced) value.
func ForType(t reflect.Type) (*Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("smdschema: %v is not a struct type", t)
	}
	b := newTypeBuilder()
	name, err := b.structType(t)
	if err != nil {
		return nil, fmt.Errorf("smdschema: schema of %v: %w", t, err)
	}
	zero, _ := zeroJSON(t).(map[string]any)
	if zero == nil {
		zero = map[string]any{}
	}
	s := b.schema()
	return &Schema{parser: typed.ParseableType{Schema: s, TypeRef: named(name)}, zero: zero, kind: t.Name()}, nil
}

// zeroJSON returns the JSON form of the zero value of t as Kubernetes'
// unstructured converter writes it for a new object: struct fields that are
// not omitempty are present (nil pointers, maps and slices as null), struct
// values are always present (omitempty never omits a struct), and types with
// their own MarshalJSON are written by it.
func zeroJSON(t reflect.Type) any {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Map || t.Kind() == reflect.Slice || t.Kind() == reflect.Interface {
		return nil
	}
	if isMarshaler(t) {
		b, err := json.Marshal(reflect.New(t).Interface())
		if err != nil {
			return nil
		}
		v, err := DecodeJSON(b)
		if err != nil {
			return nil
		}
		return v
	}
	switch t.Kind() {
	case reflect.String:
		return ""
	case reflect.Bool:
		return false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(0)
	case reflect.Float32, reflect.Float64:
		return float64(0)
	case reflect.Array:
		out := make([]any, t.Len())
		for i := range out {
			out[i] = zeroJSON(t.Elem())
		}
		return out
	case reflect.Struct:
		m := map[string]any{}
		for _, f := range jsonFields(t) {
			if f.omitempty && f.typ.Kind() != reflect.Struct {
				continue
			}
			m[f.name] = zeroJSON(f.typ)
		}
		return m
	}
	return nil
}

// DecodeJSON decodes b into a JSON value with int64 and float64 numbers.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v, _ = Normalize(v)
	return v, nil
}

// Normalize returns v with json.Number values replaced by int64 (or float64
// when not an integer), copying only the maps and lists that change; changed
// reports whether anything did.
func Normalize(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		f, _ := x.Float64()
		return f, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if n, ok := Normalize(e); ok {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = n
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if n, ok := Normalize(e); ok {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = n
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// NormalizeObject is Normalize for an object.
func NormalizeObject(obj map[string]any) map[string]any {
	if n, ok := Normalize(obj); ok {
		return n.(map[string]any)
	}
	return obj
}

// Parser returns the parseable type of the kind: FromUnstructured turns an
// object (a JSON value as DecodeJSON returns it) into a typed value.
func (s *Schema) Parser() typed.ParseableType { return s.parser }

// Zero returns the JSON form of a new, empty object of the kind. It is
// shared: callers must not modify it.
func (s *Schema) Zero() map[string]any { return s.zero }

// Kind returns the Go type name of a ForType schema, "" for the others.
func (s *Schema) Kind() string { return s.kind }

// Field is one JSON field of a struct type, as JSONFields lists it.
type Field struct {
	// Name is the field's JSON name.
	Name string
	// Type is the field's Go type.
	Type reflect.Type
	// Index is the field's index sequence for reflect.Value.FieldByIndex
	// (more than one for a field of an inlined struct).
	Index []int
}

// JSONFields lists the JSON fields of struct type t as encoding/json and
// ForType see them: json tag names, fields tagged "-" and unexported ones
// left out, inlined structs flattened, a field of t winning over an inlined
// one of the same name.
func JSONFields(t reflect.Type) []Field {
	fs := jsonFields(t)
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = Field{Name: f.name, Type: f.typ, Index: f.index}
	}
	return out
}

// HasOwnJSON reports whether values of type t (or *t) encode themselves
// (metav1.Time, resource.Quantity, intstr.IntOrString, Unstructured …):
// their JSON is a scalar or a value owned as a whole, not a struct's fields.
func HasOwnJSON(t reflect.Type) bool { return isMarshaler(t) }
