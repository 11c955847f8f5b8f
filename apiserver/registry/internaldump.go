package registry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// internalValue is a value that a validation error shows as kube-apiserver
// shows a value of its internal (unversioned) types: JSON in which the
// fields of the API's own structs carry their Go names ("Spec",
// "MinAvailable"), embedded structs are inlined, nil pointers, slices and
// maps are null, and the types of meta.k8s.io (ObjectMeta, LabelSelector,
// Time) and the ones that encode themselves (Quantity, IntOrString,
// RawExtension) keep their JSON form. That is what the real server prints
// for an immutable pod template, a StatefulSet's update strategy or a
// PodDisruptionBudget's spec (encoding/json of its internal structs, which
// have no json tags). kapi's types are the versioned ones; where a kind's
// internal struct has the same fields in the same order, as for the pod
// spec and the kinds here, the text is the same.
type internalValue struct{ v any }

// String returns the JSON described on internalValue.
func (i internalValue) String() string {
	var b bytes.Buffer
	v := reflect.ValueOf(i.v)
	if v.IsValid() {
		p := reflect.New(v.Type()) // an addressable copy, for the encoders with pointer receivers
		p.Elem().Set(v)
		v = p.Elem()
	}
	writeInternal(&b, v)
	return b.String()
}

// metaPkgPath is the import path of meta/v1, whose types keep their JSON.
var metaPkgPath = reflect.TypeOf(metav1.ObjectMeta{}).PkgPath()

func writeInternal(b *bytes.Buffer, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("null")
		return
	}
	t := v.Type()
	if t.PkgPath() == metaPkgPath || t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) && t.Kind() == reflect.Struct {
		if (t.Kind() == reflect.Pointer || t.Kind() == reflect.Map || t.Kind() == reflect.Slice) && v.IsNil() {
			b.WriteString("null")
			return
		}
		if !v.CanAddr() && t.Kind() == reflect.Struct {
			p := reflect.New(t)
			p.Elem().Set(v)
			v = p
		} else if v.CanAddr() && t.Kind() == reflect.Struct {
			v = v.Addr()
		}
		raw, err := json.Marshal(v.Interface())
		if err != nil {
			b.WriteString("null")
			return
		}
		b.Write(raw)
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		writeInternal(b, v.Elem())
	case reflect.Struct:
		b.WriteByte('{')
		first := true
		writeInternalFields(b, v, &first)
		b.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			raw, _ := json.Marshal(v.Bytes())
			b.Write(raw)
			return
		}
		fallthrough
	case reflect.Array:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			writeInternal(b, v.Index(i))
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
			b.WriteString(strconv.Quote(k.String()))
			b.WriteByte(':')
			writeInternal(b, v.MapIndex(k))
		}
		b.WriteByte('}')
	case reflect.String:
		raw, _ := json.Marshal(v.String())
		b.Write(raw)
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	default:
		raw, err := json.Marshal(v.Interface())
		if err != nil {
			b.WriteString("null")
			return
		}
		b.Write(raw)
	}
}

// writeInternalFields writes v's fields, inlining embedded structs (whose
// JSON members, for ObjectMeta, are their json names).
func writeInternalFields(b *bytes.Buffer, v reflect.Value, first *bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if f.Type == reflect.TypeOf(metav1.TypeMeta{}) {
				continue // internal objects carry no kind
			}
			if f.Type.PkgPath() == metaPkgPath {
				// ObjectMeta inlines its JSON members.
				var x any = fv.Interface()
				if fv.CanAddr() {
					x = fv.Addr().Interface()
				}
				raw, err := json.Marshal(x)
				if err != nil || len(raw) <= 2 {
					continue
				}
				if !*first {
					b.WriteByte(',')
				}
				*first = false
				b.Write(raw[1 : len(raw)-1])
				continue
			}
			writeInternalFields(b, fv, first)
			continue
		}
		if !*first {
			b.WriteByte(',')
		}
		*first = false
		b.WriteString(strconv.Quote(f.Name))
		b.WriteByte(':')
		writeInternal(b, fv)
	}
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
