package registry

import (
	"reflect"

	"github.com/kapi-dev/kapi/api/unstructured"
)

// SemanticEqual reports whether a and b are equal as kube-apiserver's
// strategies compare objects (its "semantic" equality): as
// reflect.DeepEqual, except that a nil and an empty slice or map are equal
// (a body's `tolerations: []` is no change from a stored object without
// tolerations), and values of a type with an Equal method taking its own
// type (times, quantities) are compared with it.
func SemanticEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == b
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	return semanticEqual(va, vb)
}

func semanticEqual(a, b reflect.Value) bool {
	if eq, ok := equalMethod(a, b); ok {
		return eq
	}
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		if a.Len() == 0 || a.Pointer() == b.Pointer() {
			return true
		}
		for i := range a.Len() {
			if !semanticEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !semanticEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		if a.Len() == 0 || a.Pointer() == b.Pointer() {
			return true
		}
		it := a.MapRange()
		for it.Next() {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !semanticEqual(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Pointer() == b.Pointer() || semanticEqual(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Elem().Type() != b.Elem().Type() {
			return false
		}
		return semanticEqual(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !semanticEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil() || a.Pointer() == b.Pointer()
	}
	return a.Equal(b)
}

// equalMethod compares a and b with their type's Equal(T) bool method, if
// it has one and the values can be handed to it.
func equalMethod(a, b reflect.Value) (equal, ok bool) {
	if !a.CanInterface() || !b.CanInterface() || a.Kind() == reflect.Interface {
		return false, false
	}
	m, found := a.Type().MethodByName("Equal")
	if !found || m.Type.NumIn() != 2 || m.Type.In(1) != a.Type() || m.Type.NumOut() != 1 || m.Type.Out(0).Kind() != reflect.Bool {
		return false, false
	}
	if a.Kind() == reflect.Pointer && (a.IsNil() || b.IsNil()) {
		return a.IsNil() == b.IsNil(), true
	}
	return m.Func.Call([]reflect.Value{a, b})[0].Bool(), true
}

// StoredForm makes obj, a built-in object about to be stored, what
// kube-apiserver's storage gives back for it: built-in kinds are stored as
// protobuf, which cannot tell an empty list or map from an absent one, so
// every empty slice and map (but byte strings) becomes nil — a body's
// `tolerations: []`, `nodeSelector: {}` or ConfigMap `data: {}` is read
// back without them, and a list without `omitempty` as null. Custom
// resources are stored as JSON and keep them: StoredForm leaves them, and
// kinds not served as protobuf, alone.
func (r *Resource) StoredForm(obj Object) {
	if r.Custom || !r.Protobuf || obj == nil {
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	if nv, changed := cleared(v.Elem()); changed {
		v.Elem().Set(nv)
	}
}

// cleared returns v with every empty slice and map reachable from it (byte
// slices excepted) set to nil, and whether anything changed. It never
// writes into v: what it changes it copies first, along the path to the
// change, because an object being updated shares lists, maps and pointees
// with the stored object it was made from, which watchers are encoding.
func cleared(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v, false
		}
		if v.Len() == 0 {
			return reflect.Zero(v.Type()), !v.IsNil()
		}
		if !holdsContainers(v.Type().Elem()) {
			return v, false
		}
		var out reflect.Value
		for i := range v.Len() {
			e, changed := cleared(v.Index(i))
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				reflect.Copy(out, v)
			}
			out.Index(i).Set(e)
		}
		return orig(v, out)
	case reflect.Map:
		if v.Len() == 0 {
			return reflect.Zero(v.Type()), !v.IsNil()
		}
		if !holdsContainers(v.Type().Elem()) {
			return v, false
		}
		// An entry whose value is an empty list or map stays (protobuf
		// writes it); its value is read back as nil.
		var out reflect.Value
		for it := v.MapRange(); it.Next(); {
			e, changed := cleared(it.Value())
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeMapWithSize(v.Type(), v.Len())
				for c := v.MapRange(); c.Next(); {
					out.SetMapIndex(c.Key(), c.Value())
				}
			}
			out.SetMapIndex(it.Key(), e)
		}
		return orig(v, out)
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := cleared(v.Elem())
		if !changed {
			return v, false
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e)
		return p, true
	case reflect.Struct:
		var out reflect.Value
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			f, changed := cleared(v.Field(i))
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(v.Type()).Elem()
				out.Set(v)
			}
			out.Field(i).Set(f)
		}
		return orig(v, out)
	}
	return v, false
}

// orig returns out and true when cleared made a changed copy, v and false
// otherwise.
func orig(v, out reflect.Value) (reflect.Value, bool) {
	if out.IsValid() {
		return out, true
	}
	return v, false
}

// holdsContainers reports whether a value of type t may reach a slice or a
// map (the walk skips those that cannot).
func holdsContainers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8
	case reflect.Map, reflect.Pointer, reflect.Struct:
		return true
	}
	return false
}

// CompactCustomMetadata drops the empty lists and maps of a custom
// resource's metadata (annotations, labels, finalizers, ownerReferences,
// managedFields), as kube-apiserver's decoding of custom resources does: it
// reads their metadata as a typed ObjectMeta and writes it back, so a body's
// `annotations: {}` is neither stored nor recorded in managedFields. The
// rest of the object keeps its empty lists and maps (custom resources are
// stored as JSON). Objects other than *unstructured.Unstructured are left
// alone.
func CompactCustomMetadata(obj Object) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"annotations", "labels", "finalizers", "ownerReferences", "managedFields"} {
		switch v := md[k].(type) {
		case map[string]any:
			if len(v) == 0 {
				delete(md, k)
			}
		case []any:
			if len(v) == 0 {
				delete(md, k)
			}
		}
	}
}
