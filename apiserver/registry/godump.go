package registry

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// goDump is a rejected value shown as kube-apiserver shows the values of
// its internal API types in "field is immutable" messages: JSON whose
// struct members carry their Go field names ({"Name":"x","NodeID":"y",
// "TopologyKeys":null}), because the internal types have no JSON tags.
// Types shared with the versioned API (ObjectMeta, GroupResource, Time,
// Quantity) keep their JSON names, and an embedded struct's members are
// inlined, as encoding/json does.
//
// It relies on kapi's versioned types having the internal types' fields in
// the same order, which holds for the kinds that use it (their captures in
// testdata/golden-1.37/kinds show it).
type goDump struct{ v any }

// String renders the dump.
func (d goDump) String() string {
	var b strings.Builder
	writeGoDump(&b, reflect.ValueOf(d.v))
	return b.String()
}

// metaPkg is the import path of the meta types, whose JSON names the
// internal types share.
const metaPkg = "github.com/kapi-dev/kapi/api/meta/v1"

func writeGoDump(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("null")
		return
	}
	t := v.Type()
	if t.PkgPath() == metaPkg || (v.CanInterface() && implementsMarshaler(t)) {
		if j, err := kjson.Marshal(v.Interface()); err == nil {
			b.Write(j)
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		writeGoDump(b, v.Elem())
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		writeGoFields(b, v, &first)
		b.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			b.WriteString(strconv.Quote(base64.StdEncoding.EncodeToString(v.Bytes())))
			return
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeGoDump(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Map:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(k.String())
			b.Write(q)
			b.WriteByte(':')
			writeGoDump(b, v.MapIndex(k))
		}
		b.WriteByte('}')
	default:
		j, err := json.Marshal(v.Interface())
		if err != nil {
			b.WriteString("null")
			return
		}
		b.Write(j)
	}
}

// writeGoFields writes v's exported fields by their Go names, inlining
// embedded structs (an embedded meta type by its JSON members).
func writeGoFields(b *strings.Builder, v reflect.Value, first *bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if f.Type.PkgPath() == metaPkg {
				writeInlinedJSON(b, v.Field(i), first)
			} else {
				writeGoFields(b, v.Field(i), first)
			}
			continue
		}
		if !*first {
			b.WriteByte(',')
		}
		*first = false
		b.WriteString(strconv.Quote(f.Name))
		b.WriteByte(':')
		writeGoDump(b, v.Field(i))
	}
}

// writeInlinedJSON writes the members of v's JSON object (an embedded
// ObjectMeta or TypeMeta, whose empty members are omitted).
func writeInlinedJSON(b *strings.Builder, v reflect.Value, first *bool) {
	j, err := kjson.Marshal(v.Interface())
	if err != nil || len(j) < 2 || string(j) == "{}" {
		return
	}
	if !*first {
		b.WriteByte(',')
	}
	*first = false
	b.Write(j[1 : len(j)-1])
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

func implementsMarshaler(t reflect.Type) bool {
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
}
