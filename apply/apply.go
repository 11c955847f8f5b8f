package apply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/internal/smdschema"
)

// Config is a typed server-side apply configuration: an object of type T
// and the fields of it that applying claims. Build one with Of (the fields
// the object sets) or Extract (the fields a manager owns in a live object),
// and send it with client.Resource[T].ApplyConfig.
//
// A Config holds its object by pointer and reads it when it is encoded, so
// changes made to Object() after Of or Extract are applied. A Config is a
// small value; copies share the object.
type Config[T any] struct {
	obj *T
	// claimed are fields claimed whatever their Go value (zero included):
	// the fields a manager owned, for a Config from Extract, and those
	// named by Claim.
	claimed *fieldpath.Set
}

// Of returns the configuration that claims the fields obj sets: every
// pointer, slice, map and interface that is not nil (an empty but non-nil
// slice or map claims the field, empty), every struct field with a value
// other than its type's zero value, and every item of the lists and maps it
// claims. Fields left at their zero value are neither sent nor claimed,
// whatever their JSON tags say: Of(&appsv1.Deployment{Spec: {Replicas:
// new(int32(3))}}) claims .spec.replicas and nothing else of the spec.
//
// To apply a field that is not a pointer at its zero value (false, 0, ""),
// claim it with Config.Claim. A Config from Extract claims every field its
// manager owns, zero values included.
func Of[T any](obj *T) Config[T] {
	return Config[T]{obj: obj, claimed: &fieldpath.Set{}}
}

// Object returns the configuration's object. Changes to it change what is
// applied.
func (c Config[T]) Object() *T { return c.obj }

// Encode returns the apply configuration as a JSON object (numbers as int64
// or float64): the fields Of's rules select from the object, together with
// the fields Extract or Claim recorded, at their current values. It is
// what client.Resource[T].ApplyConfig sends (the client adds apiVersion and
// kind when the object has none).
func (c Config[T]) Encode() (map[string]any, error) {
	if c.obj == nil {
		return nil, errors.New("apply: nil object")
	}
	full, err := toJSON(c.obj)
	if err != nil {
		return nil, err
	}
	rv := reflect.ValueOf(c.obj).Elem()
	set, keep := prune(rv, full, true)
	out, _ := set.(map[string]any)
	if !keep || out == nil {
		out = map[string]any{}
	}
	if c.claimed == nil || c.claimed.Empty() {
		return out, nil
	}
	// Add the claimed fields: extract them from the whole object and merge
	// them into the set ones, by the kind's schema (so list items meet by
	// key).
	s, err := schemaOf(rv.Type())
	if err != nil {
		return nil, err
	}
	// The claimed fields a JSON tag omits at their zero value ("paused":
	// false) are put back, from the Go value.
	fillClaimed(rv, full, c.claimed)
	fullT, err := s.Parser().FromUnstructured(full)
	if err != nil {
		return nil, fmt.Errorf("apply: %s: %w", rv.Type(), err)
	}
	setT, err := s.Parser().FromUnstructured(out)
	if err != nil {
		return nil, fmt.Errorf("apply: %s: %w", rv.Type(), err)
	}
	// A claimed field the object now holds as nil (null in full) is unset,
	// as for Of: it is released rather than applied as null.
	claimed, _ := fullT.ExtractItems(c.claimed, typed.WithAppendKeyFields()).AsValue().Unstructured().(map[string]any)
	claimedT, err := s.Parser().FromUnstructured(dropNulls(claimed))
	if err != nil {
		return nil, fmt.Errorf("apply: %s: %w", rv.Type(), err)
	}
	merged, err := setT.Merge(claimedT)
	if err != nil {
		return nil, fmt.Errorf("apply: %s: %w", rv.Type(), err)
	}
	m, _ := merged.AsValue().Unstructured().(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// MarshalJSON encodes the configuration as Encode returns it.
func (c Config[T]) MarshalJSON() ([]byte, error) {
	m, err := c.Encode()
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// fillClaimed adds to j, the JSON encoding of v, the fields of set that j
// lacks (left out by omitempty at their zero value) but v holds: a struct
// field, not nil. It follows struct fields, pointers and list items by key.
func fillClaimed(v reflect.Value, j map[string]any, set *fieldpath.Set) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || smdschema.HasOwnJSON(v.Type()) {
		return
	}
	for _, f := range smdschema.JSONFields(v.Type()) {
		name := f.Name
		pe := fieldpath.PathElement{FieldName: &name}
		child, hasChild := set.Children.Get(pe)
		member := set.Members.Has(pe)
		if !member && !hasChild {
			continue
		}
		fv, err := v.FieldByIndexErr(f.Index)
		if err != nil {
			continue
		}
		if _, ok := j[name]; !ok && member && !isNil(fv) {
			if e, err := toJSONValue(fv.Interface()); err == nil {
				j[name] = e
			}
		}
		if !hasChild {
			continue
		}
		switch e := j[name].(type) {
		case map[string]any:
			fillClaimed(fv, e, child)
		case []any:
			fillItems(fv, e, child)
		case nil:
			if _, present := j[name]; !present && !isNil(fv) {
				m := map[string]any{}
				fillClaimed(fv, m, child)
				if len(m) > 0 {
					j[name] = m
				}
			}
		}
	}
}

// fillItems is fillClaimed for the items of list v (encoded as items) that
// set names by key.
func fillItems(v reflect.Value, items []any, set *fieldpath.Set) {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Slice || v.Len() != len(items) {
		return
	}
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		if pe.Key == nil {
			return
		}
		child, _ := set.Children.Get(pe)
		for i, it := range items {
			m, ok := it.(map[string]any)
			if ok && keyMatches(m, pe.Key) {
				fillClaimed(v.Index(i), m, child)
			}
		}
	})
}

// keyMatches reports whether the item m has the key fields of key.
func keyMatches(m map[string]any, key *value.FieldList) bool {
	for _, f := range *key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}

func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// toJSONValue encodes v as Kubernetes JSON and decodes it into a JSON value.
func toJSONValue(v any) (any, error) {
	b, err := kjson.Marshal(v)
	if err != nil {
		return nil, err
	}
	return smdschema.DecodeJSON(b)
}

// dropNulls removes the null members of m and of the objects in it, in
// place, and returns m (an empty object for nil).
func dropNulls(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(x)
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok {
					dropNulls(em)
				}
			}
		}
	}
	return m
}

// toJSON encodes v as Kubernetes JSON and decodes it into a JSON object.
func toJSON(v any) (map[string]any, error) {
	b, err := kjson.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("apply: encoding %T: %w", v, err)
	}
	j, err := smdschema.DecodeJSON(b)
	if err != nil {
		return nil, fmt.Errorf("apply: encoding %T: %w", v, err)
	}
	m, ok := j.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("apply: %T does not encode as a JSON object", v)
	}
	return m, nil
}

// prune returns the part of j, the JSON encoding of v, that Of's rules
// select, and whether it is selected at all. forced selects v even at its
// zero value: what a non-nil pointer points to, the items of a list or map.
func prune(v reflect.Value, j any, forced bool) (any, bool) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil, false
		}
		return prune(v.Elem(), j, true)
	case reflect.Interface:
		if v.IsNil() {
			return nil, false
		}
		return j, true
	case reflect.Map:
		if v.IsNil() {
			return nil, false
		}
		jm, ok := j.(map[string]any)
		if !ok || smdschema.HasOwnJSON(t) {
			return j, true
		}
		out := make(map[string]any, len(jm))
		for it := v.MapRange(); it.Next(); {
			k := fmt.Sprint(it.Key().Interface())
			if e, ok := jm[k]; ok {
				out[k], _ = prune(it.Value(), e, true)
			}
		}
		return out, true
	case reflect.Slice:
		if v.IsNil() {
			return nil, false
		}
		jl, ok := j.([]any)
		if !ok || len(jl) != v.Len() { // []byte (base64), or its own JSON
			return j, true
		}
		out := make([]any, len(jl))
		for i := range jl {
			out[i], _ = prune(v.Index(i), jl[i], true)
		}
		return out, true
	case reflect.Struct:
		if smdschema.HasOwnJSON(t) {
			return j, forced || !v.IsZero()
		}
		jm, ok := j.(map[string]any)
		if !ok {
			return j, forced || !v.IsZero()
		}
		out := map[string]any{}
		for _, f := range smdschema.JSONFields(t) {
			fv, err := v.FieldByIndexErr(f.Index)
			if err != nil { // inside a nil inlined pointer
				continue
			}
			e, ok := jm[f.Name]
			if !ok {
				// omitempty left out an empty slice or map: set when not nil.
				if k := fv.Kind(); (k == reflect.Slice || k == reflect.Map) && !fv.IsNil() {
					if k == reflect.Slice {
						out[f.Name] = []any{}
					} else {
						out[f.Name] = map[string]any{}
					}
				}
				continue
			}
			if p, keep := prune(fv, e, false); keep {
				out[f.Name] = p
			}
		}
		return out, forced || len(out) > 0
	}
	return j, forced || !v.IsZero()
}

// schemas caches the SMD schema of each Go type.
var schemas sync.Map // reflect.Type → schemaEntry

type schemaEntry struct {
	s   *smdschema.Schema
	err error
}

// schemaOf returns the SMD schema of Go type t, derived as the reference
// server derives it (smdschema.ForType).
func schemaOf(t reflect.Type) (*smdschema.Schema, error) {
	if e, ok := schemas.Load(t); ok {
		return e.(schemaEntry).s, e.(schemaEntry).err
	}
	if smdschema.HasOwnJSON(t) {
		err := fmt.Errorf("apply: %v encodes itself and has no schema: extract and claim need a Go type with fields", t)
		schemas.Store(t, schemaEntry{err: err})
		return nil, err
	}
	s, err := smdschema.ForType(t)
	if err != nil {
		err = fmt.Errorf("apply: %w", err)
	}
	schemas.Store(t, schemaEntry{s: s, err: err})
	return s, err
}

// Extract returns the configuration of the fields fieldManager owns in live
// through server-side apply (its Apply entry in metadata.managedFields,
// subresource none): a new object holding exactly those fields (with the
// key fields of the list items they are in, and live's name and namespace),
// claiming each of them, zero values included. Applying it as
// fieldManager changes nothing (but the time of fieldManager's entry, when
// the configuration holds an empty map or list, or a zero value omitempty
// leaves out, which the server does not store: structured-merge-diff counts
// applying it as a change, on kube-apiserver too); change its Object to change what
// fieldManager applies next, as client-go's ExtractDeployment is used:
// fields set anew are claimed as by Of, a field set to nil (pointer, slice,
// map) is released, and a claimed non-pointer field is sent at its value,
// zero included.
//
// What the server does not store cannot be extracted: a write-only field
// (a Secret's stringData) is released by applying the result.
//
// A manager that has no Apply entry gives a configuration with only the
// name and namespace. Fields written by Update or Patch (Update entries)
// are not extracted: only an applier owns fields it can apply again.
func Extract[T any](live *T, fieldManager string) (Config[T], error) {
	return extract(live, fieldManager, "")
}

// ExtractStatus is Extract for the fields fieldManager applied to the
// status subresource (client.Resource[T].ApplyConfigStatus); apply the
// result with ApplyConfigStatus.
func ExtractStatus[T any](live *T, fieldManager string) (Config[T], error) {
	return extract(live, fieldManager, "status")
}

func extract[T any](live *T, fieldManager, subresource string) (Config[T], error) {
	if live == nil {
		return Config[T]{}, errors.New("apply: nil object")
	}
	t := reflect.TypeFor[T]()
	s, err := schemaOf(t)
	if err != nil {
		return Config[T]{}, err
	}
	full, err := toJSON(live)
	if err != nil {
		return Config[T]{}, err
	}
	meta, _ := full["metadata"].(map[string]any)
	owned := &fieldpath.Set{}
	entries, _ := meta["managedFields"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if m["manager"] != fieldManager || m["operation"] != "Apply" || str(m["subresource"]) != subresource {
			continue
		}
		b, err := json.Marshal(m["fieldsV1"])
		if err != nil {
			return Config[T]{}, fmt.Errorf("apply: managedFields of %s: %w", fieldManager, err)
		}
		fs := &fieldpath.Set{}
		if err := fs.FromJSON(bytes.NewReader(b)); err != nil {
			return Config[T]{}, fmt.Errorf("apply: managedFields of %s: %w", fieldManager, err)
		}
		owned = owned.Union(fs)
	}
	if meta != nil {
		delete(meta, "managedFields")
	}
	liveT, err := s.Parser().FromUnstructured(full)
	if err != nil {
		return Config[T]{}, fmt.Errorf("apply: %s: %w", t, err)
	}
	// A list item or map owned with fields of its own ("." and children)
	// is extracted as those fields, not whole. Key fields the manager does
	// not own are left out: they were defaulted (a port's protocol), and
	// sending them would claim them.
	out, _ := liveT.ExtractItems(owned).AsValue().Unstructured().(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	addEmpty(out, full, t, owned)
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := full[k]; ok && v != "" {
			out[k] = v
		}
	}
	om, _ := out["metadata"].(map[string]any)
	if om == nil {
		om = map[string]any{}
	}
	for _, k := range []string{"name", "namespace"} {
		if v, ok := meta[k]; ok && v != "" {
			om[k] = v
		}
	}
	out["metadata"] = om
	b, err := json.Marshal(out)
	if err != nil {
		return Config[T]{}, fmt.Errorf("apply: %s: %w", t, err)
	}
	obj := new(T)
	if err := kjson.Unmarshal(b, obj); err != nil {
		return Config[T]{}, fmt.Errorf("apply: %s: %w", t, err)
	}
	return Config[T]{obj: obj, claimed: owned}, nil
}

// addEmpty adds to out, the object of Go type t extracted from live, the
// owned fields of structs that live does not hold: a map or list the
// manager applied empty, which the server does not store. They are added
// empty, so that applying the result claims them again. Fields inside list
// items, and below a field the live object lacks, are left alone.
func addEmpty(out, live map[string]any, t reflect.Type, owned *fieldpath.Set) {
	owned.Iterate(func(p fieldpath.Path) {
		m, l, typ := out, live, t
		for i, pe := range p {
			if pe.FieldName == nil {
				return
			}
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Struct || smdschema.HasOwnJSON(typ) {
				return
			}
			var ft reflect.Type
			for _, f := range smdschema.JSONFields(typ) {
				if f.Name == *pe.FieldName {
					ft = f.Type
				}
			}
			if ft == nil {
				return
			}
			name := *pe.FieldName
			if i == len(p)-1 {
				if _, ok := m[name]; ok {
					return
				}
				if _, ok := l[name]; ok {
					return // present (null): not an empty map or list
				}
				switch ft.Kind() {
				case reflect.Map:
					m[name] = map[string]any{}
				case reflect.Slice:
					if ft.Elem().Kind() != reflect.Uint8 {
						m[name] = []any{}
					}
				}
				return
			}
			liveNext, ok := l[name].(map[string]any)
			if !ok {
				return // a write-only field (a Secret's stringData): nothing to restore
			}
			next, ok := m[name].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[name] = next
			}
			m, l, typ = next, liveNext, ft
		}
	})
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
