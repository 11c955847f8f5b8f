package apply

import (
	"errors"
	"fmt"
	"reflect"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kapi-dev/kapi/internal/smdschema"
)

// Claim returns a copy of c that also claims the field field points to, at
// whatever value it holds when the configuration is applied, zero included:
// the way to apply a non-pointer field at its zero value, which Of leaves
// out.
//
//	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
//	cfg, err := apply.Of(d).Claim(&d.Spec.Paused) // applies "paused": false
//
// field must point into c's object: a struct field, reached through
// struct fields, pointers and list items (not map values). The field is
// named as the server names it, a list item by its key (a container by its
// name), so the claim survives reordering the list; set the item's key
// fields before Claim. A field inside a list owned as a whole claims the
// whole list.
func (c Config[T]) Claim(field any) (Config[T], error) {
	if c.obj == nil {
		return c, errors.New("apply: Claim on a nil object")
	}
	fv := reflect.ValueOf(field)
	if fv.Kind() != reflect.Pointer || fv.IsNil() {
		return c, fmt.Errorf("apply: Claim takes a pointer to a field of the object, not %T", field)
	}
	steps, ok := findField(reflect.ValueOf(c.obj).Elem(), fv.Pointer(), fv.Type().Elem(), nil)
	if !ok {
		return c, fmt.Errorf("apply: Claim: %T does not point to a field of the %T", field, c.obj)
	}
	t := reflect.TypeFor[T]()
	s, err := schemaOf(t)
	if err != nil {
		return c, err
	}
	full, err := toJSON(c.obj)
	if err != nil {
		return c, err
	}
	p, err := fieldPath(s, full, steps)
	if err != nil {
		return c, fmt.Errorf("apply: Claim in %s: %w", t, err)
	}
	claimed := &fieldpath.Set{}
	if c.claimed != nil {
		claimed = c.claimed.Copy()
	}
	claimed.Insert(p)
	c.claimed = claimed
	return c, nil
}

// step is one step from a value to a field in it: a struct field (by its
// JSON name) or a list item (by index).
type step struct {
	name  string
	index int
}

// findField returns the steps from v to the addressable value of type typ
// at address addr inside it.
func findField(v reflect.Value, addr uintptr, typ reflect.Type, path []step) ([]step, bool) {
	if v.CanAddr() && v.Addr().Pointer() == addr && v.Type() == typ {
		return path, true
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return findField(v.Elem(), addr, typ, path)
		}
	case reflect.Struct:
		if smdschema.HasOwnJSON(v.Type()) {
			return nil, false
		}
		for _, f := range smdschema.JSONFields(v.Type()) {
			if fv, err := v.FieldByIndexErr(f.Index); err == nil {
				if p, ok := findField(fv, addr, typ, append(path, step{name: f.Name})); ok {
					return p, true
				}
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil, false
		}
		for i := range v.Len() {
			if p, ok := findField(v.Index(i), addr, typ, append(path, step{index: i})); ok {
				return p, true
			}
		}
	}
	return nil, false
}

// fieldPath converts steps through obj (the object's JSON) into the
// field path the schema gives them: field names, and list items by key
// (associative lists with keys), by value (sets), or not at all (atomic
// lists, owned whole).
func fieldPath(s *smdschema.Schema, obj any, steps []step) (fieldpath.Path, error) {
	parser := s.Parser()
	sc, tr := parser.Schema, parser.TypeRef
	var p fieldpath.Path
	j := obj
	for _, st := range steps {
		atom, ok := sc.Resolve(tr)
		if !ok {
			return nil, fmt.Errorf("%v: no schema", p)
		}
		if st.name != "" {
			if atom.Map == nil {
				return nil, fmt.Errorf("%v: not a struct", p)
			}
			f, ok := atom.Map.FindField(st.name)
			if !ok {
				return nil, fmt.Errorf("%v: no field %q", p, st.name)
			}
			name := st.name
			p = append(p, fieldpath.PathElement{FieldName: &name})
			m, _ := j.(map[string]any)
			j, tr = m[name], f.Type
			continue
		}
		l := atom.List
		if l == nil {
			return nil, fmt.Errorf("%v: not a list", p)
		}
		if l.ElementRelationship == schema.Atomic {
			return p, nil
		}
		items, _ := j.([]any)
		if st.index >= len(items) {
			return nil, fmt.Errorf("%v: no item %d", p, st.index)
		}
		item := items[st.index]
		if len(l.Keys) == 0 {
			p = append(p, fieldpath.PathElement{Value: new(value.NewValueInterface(item))})
		} else {
			key, err := itemKey(sc, l, item)
			if err != nil {
				return nil, fmt.Errorf("%v: %w", p, err)
			}
			p = append(p, fieldpath.PathElement{Key: key})
		}
		j, tr = item, l.ElementType
	}
	return p, nil
}

// itemKey returns the key of item in list l: its key fields' values, or
// their schema defaults.
func itemKey(sc *schema.Schema, l *schema.List, item any) (*value.FieldList, error) {
	m, _ := item.(map[string]any)
	elem, _ := sc.Resolve(l.ElementType)
	var kv []any
	for _, k := range l.Keys {
		v, ok := m[k]
		if !ok && elem.Map != nil {
			if f, found := elem.Map.FindField(k); found && f.Default != nil {
				v, ok = f.Default, true
			}
		}
		if !ok {
			return nil, fmt.Errorf("list item without its key field %q", k)
		}
		kv = append(kv, k, v)
	}
	return fieldpath.KeyByFields(kv...), nil
}
