package patch

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// shape is how the strategic merge treats a value of a Go type.
type shape int

const (
	shapeUnknown shape = iota // no Go type (unknown field, any): plain merge patch
	shapeOpaque               // hand-written JSON: replaced whole
	shapeScalar               // string, number, bool, []byte
	shapeStruct               // a JSON object with named fields
	shapeMap                  // a JSON object with free keys, values of one type
	shapeList                 // a JSON array
)

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// deref removes pointer levels.
func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// shapeOf classifies t (pointers removed).
func shapeOf(t reflect.Type) shape {
	t = deref(t)
	if t == nil {
		return shapeUnknown
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return shapeOpaque
	}
	switch t.Kind() {
	case reflect.Struct:
		return shapeStruct
	case reflect.Map:
		return shapeMap
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return shapeScalar // []byte is a base64 string
		}
		return shapeList
	case reflect.Interface:
		return shapeUnknown
	}
	return shapeScalar
}

// field is what the schema says about one key of an object.
type field struct {
	typ      reflect.Type // Go type of the value; nil when unknown
	strategy string       // the patchStrategy tag: "", "merge", "replace", "retainKeys", "merge,retainKeys"
	mergeKey string       // the patchMergeKey tag
}

func (f field) has(strategy string) bool {
	for s := range strings.SplitSeq(f.strategy, ",") {
		if s == strategy {
			return true
		}
	}
	return false
}

// object is the schema of a JSON object: a struct's fields, or a map's value
// type for every key. The zero object knows no keys.
type object struct {
	fields map[string]field // struct
	elem   reflect.Type     // map value type
	isMap  bool
}

func (o object) field(key string) field {
	if o.isMap {
		return field{typ: o.elem}
	}
	return o.fields[key] // zero field: unknown
}

// objectOf is the object schema of a value of type t (zero if t is not a
// struct or map type).
func objectOf(t reflect.Type) object {
	t = deref(t)
	switch shapeOf(t) {
	case shapeStruct:
		return object{fields: structFields(t)}
	case shapeMap:
		return object{elem: t.Elem(), isMap: true}
	}
	return object{}
}

// fieldCache holds the fields of the struct types seen so far
// (reflect.Type → map[string]field). Entries are computed from the type alone,
// so concurrent first uses may compute one twice but always store the same.
var fieldCache sync.Map

// structFields returns the JSON fields of struct type t, embedded structs
// inlined as encoding/json does.
func structFields(t reflect.Type) map[string]field {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]field)
	}
	fields := map[string]field{}
	addStructFields(fields, t, 0)
	fieldCache.Store(t, fields)
	return fields
}

func addStructFields(fields map[string]field, t reflect.Type, depth int) {
	if depth > 8 { // embedding cycles cannot happen through values, but be safe
		return
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if sf.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) {
			if et := deref(sf.Type); et.Kind() == reflect.Struct && shapeOf(et) == shapeStruct {
				addStructFields(fields, et, depth+1)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if !hasTag || name == "" {
			name = sf.Name
		}
		if _, dup := fields[name]; dup && depth > 0 {
			continue // the shallower field wins, as in encoding/json
		}
		fields[name] = field{
			typ:      sf.Type,
			strategy: sf.Tag.Get("patchStrategy"),
			mergeKey: sf.Tag.Get("patchMergeKey"),
		}
	}
}
