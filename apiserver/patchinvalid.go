package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/codec"
)

// patchInvalid is the 422 of a JSON, merge or strategic merge patch whose
// result does not decode as the resource's Go type (a value of the wrong
// type), as kube-apiserver words it: no kind and no name (` "" is invalid`)
// and one cause on field "patch".
//
// For a JSON or merge patch the value is the patched object as JSON, with
// the members of the objects the patch walked through (decoded by
// kube-apiserver's patch library) in sorted order and the others as they
// were stored; detail is the decode error. For a strategic merge patch the
// value is the patch itself printed as a Go map, and the detail says which
// conversion of the patched map failed (see unstructuredError).
func patchInvalid(ctype string, body, patched []byte, typ reflect.Type, decodeErr error) *metav1.Status {
	var value, detail string
	switch ctype {
	case codec.MediaTypeStrategicMergePatch:
		value, detail = goMapString(body), decodeErr.Error()
		if u, err := decodePreservingInts(patched); err == nil {
			if err := unstructuredError(u, reflect.New(typ).Elem()); err != nil {
				detail = err.Error()
			}
		}
	default:
		var walked *walkTree
		if ctype == codec.MediaTypeJSONPatch {
			walked = jsonPatchWalk(body)
		} else {
			walked = mergePatchWalk(patched, body)
		}
		value, detail = renderWalked(patched, walked), decodeErr.Error()
	}
	return metav1.NewInvalid(metav1.GroupKind{}, "", metav1.FieldErrors{metav1.FieldInvalid("patch", value, detail)})
}

// walkTree marks the parts of a patched document kube-apiserver's patch
// library decoded, and so writes back with their members sorted: sorted
// marks an object decoded one level (its members below are marked by
// children), deep one decoded all the way down.
type walkTree struct {
	sorted, deep bool
	children     map[string]*walkTree
}

func (w *walkTree) child(k string) *walkTree {
	if w.children == nil {
		w.children = map[string]*walkTree{}
	}
	c := w.children[k]
	if c == nil {
		c = &walkTree{}
		w.children[k] = c
	}
	return c
}

// mergePatchWalk marks what a JSON merge patch decodes: the document, each
// object the patch merges an object into, and, entirely, each value the
// patch adds or puts in place of a non-object.
func mergePatchWalk(patched, body []byte) *walkTree {
	root := &walkTree{sorted: true}
	var doc, p any
	if json.Unmarshal(patched, &doc) != nil || json.Unmarshal(body, &p) != nil {
		return root
	}
	var walk func(w *walkTree, doc, p map[string]any)
	walk = func(w *walkTree, doc, p map[string]any) {
		w.sorted = true
		for k, v := range p {
			if v == nil {
				continue
			}
			pv, isObj := v.(map[string]any)
			cur, curObj := doc[k].(map[string]any)
			switch {
			case isObj && curObj:
				walk(w.child(k), cur, pv)
			case !curObj:
				w.child(k).deep = true
			}
		}
	}
	d, _ := doc.(map[string]any)
	if po, ok := p.(map[string]any); ok {
		walk(root, d, po)
	}
	return root
}

// jsonPatchWalk marks what a JSON patch decodes: the document and every
// container on the way to an operation's path (and from), and, entirely,
// the value a test compares.
func jsonPatchWalk(body []byte) *walkTree {
	root := &walkTree{sorted: true}
	var ops []struct {
		Op   string `json:"op"`
		Path string `json:"path"`
		From string `json:"from"`
	}
	if json.Unmarshal(body, &ops) != nil {
		return root
	}
	mark := func(path string, deep bool) {
		if path == "" || path[0] != '/' {
			return
		}
		parts := strings.Split(path[1:], "/")
		w := root
		for i, part := range parts {
			w = w.child(strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~"))
			if i < len(parts)-1 {
				w.sorted = true
			} else if deep {
				w.deep = true
			}
		}
	}
	for _, op := range ops {
		mark(op.Path, op.Op == "test")
		if op.Op == "move" || op.Op == "copy" {
			mark(op.From, false)
		}
	}
	return root
}

// renderWalked writes the JSON document data compactly, in its members'
// order except where walked marks them sorted.
func renderWalked(data []byte, walked *walkTree) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b strings.Builder
	if err := renderValue(dec, &b, walked, false); err != nil {
		return string(bytes.TrimSpace(data))
	}
	return b.String()
}

func renderValue(dec *json.Decoder, b *strings.Builder, w *walkTree, deep bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if w != nil && w.deep {
		deep = true
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				var c *walkTree
				if w != nil {
					c = w.children[strconv.Itoa(i)]
				}
				if err := renderValue(dec, b, c, deep); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			b.WriteByte(']')
			return err
		}
		type member struct{ key, value string }
		var members []member
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			var c *walkTree
			if w != nil {
				c = w.children[k]
			}
			var vb strings.Builder
			if err := renderValue(dec, &vb, c, deep); err != nil {
				return err
			}
			members = append(members, member{k, vb.String()})
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		if deep || (w != nil && w.sorted) {
			slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		}
		b.WriteByte('{')
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(m.key)
			b.Write(kb)
			b.WriteByte(':')
			b.WriteString(m.value)
		}
		b.WriteByte('}')
		return nil
	case json.Number:
		b.WriteString(t.String())
	case nil:
		b.WriteString("null")
	default:
		vb, err := json.Marshal(t)
		if err != nil {
			return err
		}
		b.Write(vb)
	}
	return nil
}

// decodePreservingInts decodes JSON as kube-apiserver's unstructured
// values: objects, lists, strings, bools, nil, int64 for integers and
// float64 for other numbers.
func decodePreservingInts(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("apiserver: data after the JSON value")
	}
	return withInts(v), nil
}

func withInts(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = withInts(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withInts(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// goMapString prints a strategic merge patch as kube-apiserver quotes it in
// a 422: the decoded patch in Go's %v form (map[key:value ...]).
func goMapString(body []byte) string {
	v, err := decodePreservingInts(body)
	if err != nil {
		return string(bytes.TrimSpace(body))
	}
	return fmt.Sprintf("%v", v)
}

var jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unstructuredError is the first error kube-apiserver's conversion of an
// unstructured value u (as decodePreservingInts gives) into a value of
// dv's Go type meets, in the order it walks: struct fields in order, map
// members in key order (kube-apiserver's order there is Go's map order),
// list items in order. Types that decode themselves from JSON are given the
// value as JSON. Nil when the value converts.
func unstructuredError(u any, dv reflect.Value) error {
	if u == nil {
		return nil
	}
	sv := reflect.ValueOf(u)
	st, dt := sv.Type(), dv.Type()
	switch dt.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Struct, reflect.Interface:
	default:
		if st.AssignableTo(dt) {
			return nil
		}
		if st.ConvertibleTo(dt) {
			sk, dk := kindGroup(st.Kind()), kindGroup(dt.Kind())
			switch {
			case sk == dk && sk != 'i' && sk != 'f':
				return nil
			case sk == 'i' && (dk == 'i' || dk == 'f'), sk == 'f' && dk == 'f':
				return nil
			case sk == 'f' && sv.Float() == math.Trunc(sv.Float()):
				return nil
			}
			return fmt.Errorf("cannot convert %s to %s", st, dt)
		}
	}
	if reflect.PointerTo(dt).Implements(jsonUnmarshalerType) {
		data, err := json.Marshal(u)
		if err != nil {
			return fmt.Errorf("error encoding %s to json: %v", dt, err)
		}
		switch dt {
		case timeType, microTimeType:
			// As kube-apiserver's Time and MicroTime: a JSON string in
			// their layout.
			if string(data) == "null" {
				return nil
			}
			var str string
			if err := json.Unmarshal(data, &str); err != nil {
				return err
			}
			layout := time.RFC3339
			if dt == microTimeType {
				layout = metav1.RFC3339Micro
			}
			_, err := time.Parse(layout, str)
			return err
		case intOrStringType:
			// As kube-apiserver's IntOrString: a string or an int32.
			if data[0] == '"' {
				return nil
			}
			var i int32
			return json.Unmarshal(data, &i)
		}
		err = reflect.New(dt).Interface().(json.Unmarshaler).UnmarshalJSON(data)
		if dt == quantityType {
			// kube-apiserver's Quantity says what does not parse, no more.
			for _, q := range []error{resource.ErrFormatWrong, resource.ErrNumeric, resource.ErrSuffix} {
				if errors.Is(err, q) {
					return q
				}
			}
		}
		return err
	}
	switch dt.Kind() {
	case reflect.Map:
		m, ok := u.(map[string]any)
		if !ok {
			return fmt.Errorf("cannot restore map from %v", st.Kind())
		}
		if dt.Key().Kind() != reflect.String {
			return fmt.Errorf("cannot copy map with non-assignable keys: %v %v", st.Key(), dt.Key())
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := unstructuredError(m[k], reflect.New(dt.Elem()).Elem()); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if s, ok := u.(string); ok && dt.Elem().Kind() == reflect.Uint8 {
			if s == "" {
				return nil
			}
			data, _ := json.Marshal(s)
			var out []byte
			if err := json.Unmarshal(data, &out); err != nil {
				return fmt.Errorf("error decoding from json: %v", err)
			}
			return nil
		}
		list, ok := u.([]any)
		if !ok {
			return fmt.Errorf("cannot restore slice from %v", st.Kind())
		}
		for _, e := range list {
			if err := unstructuredError(e, reflect.New(dt.Elem()).Elem()); err != nil {
				return err
			}
		}
		return nil
	case reflect.Pointer:
		return unstructuredError(u, reflect.New(dt.Elem()).Elem())
	case reflect.Struct:
		m, ok := u.(map[string]any)
		if !ok {
			return fmt.Errorf("cannot restore struct from: %v", st.Kind())
		}
		for i := range dt.NumField() {
			f := dt.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, inline := jsonFieldName(f)
			if inline {
				if err := unstructuredError(u, reflect.New(f.Type).Elem()); err != nil {
					return err
				}
				continue
			}
			if v, ok := m[name]; ok {
				if err := unstructuredError(v, reflect.New(f.Type).Elem()); err != nil {
					return err
				}
			}
		}
		return nil
	case reflect.Interface:
		return nil
	}
	return fmt.Errorf("unrecognized type: %v", dt.Kind())
}

// jsonFieldName is the member name of a struct field as kube-apiserver's
// unstructured conversion reads its json tag; inline for an embedded
// struct whose members are the parent's.
func jsonFieldName(f reflect.StructField) (name string, inline bool) {
	tag, ok := f.Tag.Lookup("json")
	if !ok || tag == "" {
		return f.Name, f.Anonymous
	}
	items := strings.Split(tag, ",")
	if items[0] == "" && (f.Anonymous || slices.Contains(items[1:], "inline")) {
		return "", true
	}
	if items[0] == "" {
		return f.Name, false
	}
	return items[0], false
}

// kindGroup sorts the simple kinds in JSON's four groups: bool, integer,
// float and string.
func kindGroup(k reflect.Kind) byte {
	switch k {
	case reflect.Bool:
		return 'b'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 'i'
	case reflect.Float32, reflect.Float64:
		return 'f'
	case reflect.String:
		return 's'
	}
	return 0
}
