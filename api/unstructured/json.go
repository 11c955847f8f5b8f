package unstructured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// maxDepth bounds the nesting of objects and arrays, as in Kubernetes' JSON
// decoder, whatever the options of a caller's jsontext.Decoder or Encoder; it
// keeps the recursive decoder and encoder within a bounded stack.
const maxDepth = 10000

// maxPooledBytes is the largest byte buffer, and maxPooledItems the longest
// stack, kept for reuse after decoding or encoding.
const (
	maxPooledBytes = 1 << 20
	maxPooledItems = 1 << 14
)

// Decode decodes a JSON object of any kind. Like Kubernetes, it returns an
// *UnstructuredList when the object has an "items" field, whatever its kind,
// and an *Unstructured otherwise. Decoding is as described in the package
// documentation; an object without a "kind" string is an error wrapping
// [ErrMissingKind].
func Decode(data []byte) (Interface, error) {
	m, err := unmarshalObject(data)
	if err != nil {
		return nil, err
	}
	var obj Interface
	if _, ok := m["items"]; ok {
		list := new(UnstructuredList)
		if err := list.fromMap(m); err != nil {
			return nil, err
		}
		obj = list
	} else {
		obj = &Unstructured{Object: m}
	}
	if obj.GetKind() == "" {
		return nil, missingKind(data)
	}
	return obj, nil
}

// UnmarshalJSON decodes a JSON object into u, replacing Object. The JSON must
// be an object; see the package documentation for the Go types of values. As
// in Kubernetes, a list decodes into an Unstructured as one object, with its
// items in an "items" []any.
//
// Like Kubernetes' UnstructuredJSONScheme, UnmarshalJSON requires a "kind":
// without one it returns an error wrapping [ErrMissingKind], after setting
// Object to the decoded object. On any other error u is unchanged.
func (u *Unstructured) UnmarshalJSON(data []byte) error {
	m, err := unmarshalObject(data)
	if err != nil {
		return err
	}
	u.Object = m
	if u.GetKind() == "" {
		return missingKind(data)
	}
	return nil
}

// UnmarshalJSONFrom is [Unstructured.UnmarshalJSON] reading the next value of
// dec, for github.com/go-json-experiment/json.
func (u *Unstructured) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	m, err := decodeObjectFrom(dec)
	if err != nil {
		return err
	}
	u.Object = m
	if u.GetKind() == "" {
		return ErrMissingKind
	}
	return nil
}

// UnmarshalJSON decodes a JSON list into u, replacing Object and Items. Items
// come from the "items" array (missing or null gives no items; anything else
// but an array is an error), and Object holds the other fields. Items with
// neither kind nor apiVersion get the list's apiVersion and its kind without
// the "List" suffix, as Kubernetes does for typed lists like PodList whose
// items carry no kind. An item that is null becomes an empty object (which
// then gets a kind the same way), as in Kubernetes.
//
// As for [Unstructured.UnmarshalJSON], the list itself must have a "kind":
// without one, u is set and an error wrapping [ErrMissingKind] is returned. On
// any other error u is unchanged.
func (u *UnstructuredList) UnmarshalJSON(data []byte) error {
	m, err := unmarshalObject(data)
	if err != nil {
		return err
	}
	if err := u.fromMap(m); err != nil {
		return err
	}
	if u.GetKind() == "" {
		return missingKind(data)
	}
	return nil
}

// UnmarshalJSONFrom is [UnstructuredList.UnmarshalJSON] reading the next value
// of dec, for github.com/go-json-experiment/json.
func (u *UnstructuredList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	m, err := decodeObjectFrom(dec)
	if err != nil {
		return err
	}
	if err := u.fromMap(m); err != nil {
		return err
	}
	if u.GetKind() == "" {
		return ErrMissingKind
	}
	return nil
}

// fromMap sets u from the decoded JSON object m, moving m["items"] to Items.
func (u *UnstructuredList) fromMap(m map[string]any) error {
	var raw []any
	switch v := m["items"].(type) {
	case nil:
	case []any:
		raw = v
	default:
		return fmt.Errorf("unstructured: cannot decode items: JSON %s, want an array", jsonKindOf(v))
	}
	apiVersion := getString(m, "apiVersion")
	itemKind := strings.TrimSuffix(getString(m, "kind"), "List")
	items := make([]Unstructured, len(raw))
	for i, v := range raw {
		obj, ok := v.(map[string]any)
		if !ok {
			if v != nil {
				return fmt.Errorf("unstructured: cannot decode items[%d]: JSON %s, want an object", i, jsonKindOf(v))
			}
			obj = make(map[string]any, 2)
		}
		item := &items[i]
		item.Object = obj
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(itemKind)
			item.SetAPIVersion(apiVersion)
		}
	}
	delete(m, "items")
	u.Object = m
	u.Items = items
	return nil
}

func missingKind(data []byte) error {
	const max = 120
	if len(data) > max {
		return fmt.Errorf("%w in '%s...'", ErrMissingKind, data[:max])
	}
	return fmt.Errorf("%w in '%s'", ErrMissingKind, data)
}

// jsonKindOf names the JSON type of a decoded value, for errors.
func jsonKindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Decoding.

// decodeState walks the tokens of a jsontext.Decoder into JSON values.
type decodeState struct {
	dec     *jsontext.Decoder
	depth   int
	scratch []byte   // unquoted strings with escapes
	values  []any    // members of the arrays being decoded, innermost last
	members []member // members of the objects being decoded, innermost last
	cache   *stringCache
}

// stringCache holds recently decoded short strings, so that the names and
// values that repeat in Kubernetes objects ("metadata", "name", "v1",
// "True") are allocated once rather than at each occurrence, and string
// values once boxed in an interface. It is a direct-mapped cache indexed by a
// hash of the bytes; a pooled decodeState keeps it from one document to the
// next.
type stringCache struct {
	names  [cacheSize]string
	values [cacheSize]any
}

const (
	cacheSize      = 1024 // a power of two
	maxCachedBytes = 40
)

func cacheSlot(b []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h & (cacheSize - 1)
}

// name returns the string of b, from the cache when it is there.
func (c *stringCache) name(b []byte) string {
	if len(b) > maxCachedBytes {
		return string(b)
	}
	slot := &c.names[cacheSlot(b)]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}

// value returns the string of b boxed in an interface, from the cache when it
// is there.
func (c *stringCache) value(b []byte) any {
	if len(b) > maxCachedBytes {
		return string(b)
	}
	slot := &c.values[cacheSlot(b)]
	if s, ok := (*slot).(string); !ok || s != string(b) {
		*slot = string(b)
	}
	return *slot
}

type member struct {
	name  string
	value any
}

// bytesDecoder decodes a byte slice through a bytes.Buffer, which jsontext
// reads in place without copying.
type bytesDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
	decodeState
}

var (
	bytesDecoderPool = sync.Pool{New: func() any {
		return &bytesDecoder{decodeState: decodeState{cache: new(stringCache)}}
	}}
	decodeStatePool = sync.Pool{New: func() any { return &decodeState{cache: new(stringCache)} }}
)

// reset drops the references a pooled decodeState holds to decoded values,
// and the buffers that a large document made large.
func (d *decodeState) reset() {
	d.dec = nil
	d.depth = 0
	clear(d.values[:cap(d.values)])
	clear(d.members[:cap(d.members)])
	d.values, d.members = d.values[:0], d.members[:0]
	if cap(d.values) > maxPooledItems {
		d.values = nil
	}
	if cap(d.members) > maxPooledItems {
		d.members = nil
	}
	if cap(d.scratch) > maxPooledBytes {
		d.scratch = nil
	}
}

// unmarshalObject decodes data, which must hold exactly one JSON object.
func unmarshalObject(data []byte) (map[string]any, error) {
	var m map[string]any
	err := withDecoder(data, func(d *decodeState) (err error) {
		m, err = d.topObject()
		return err
	})
	return m, err
}

// unmarshalValue decodes data, which must hold exactly one JSON value.
func unmarshalValue(data []byte) (any, error) {
	var v any
	err := withDecoder(data, func(d *decodeState) (err error) {
		v, err = d.value()
		return err
	})
	return v, err
}

// withDecoder runs fn with a pooled decoder reading data, then checks that
// nothing but whitespace follows the value fn read.
func withDecoder(data []byte, fn func(*decodeState) error) error {
	p := bytesDecoderPool.Get().(*bytesDecoder)
	p.buf = *bytes.NewBuffer(data)
	p.dec.Reset(&p.buf, kjson.Options)
	p.decodeState.dec = &p.dec
	err := fn(&p.decodeState)
	if err == nil {
		err = checkEOF(&p.dec)
	}
	p.decodeState.reset()
	p.buf = bytes.Buffer{}
	p.dec.Reset(&p.buf)
	bytesDecoderPool.Put(p)
	return err
}

func checkEOF(dec *jsontext.Decoder) error {
	if dec.PeekKind() != jsontext.KindInvalid {
		return errors.New("unstructured: invalid data after top-level JSON value")
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return err
	}
	return nil
}

// decodeObjectFrom decodes the next value of a caller's decoder, which must be
// a JSON object.
func decodeObjectFrom(dec *jsontext.Decoder) (map[string]any, error) {
	d := decodeStatePool.Get().(*decodeState)
	d.dec = dec
	m, err := d.topObject()
	d.reset()
	decodeStatePool.Put(d)
	return m, err
}

// topObject decodes a value that must be an object.
func (d *decodeState) topObject() (map[string]any, error) {
	switch k := d.dec.PeekKind(); k {
	case '{':
		return d.object()
	case jsontext.KindInvalid:
		_, err := d.dec.ReadToken()
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	default:
		return nil, fmt.Errorf("unstructured: cannot decode JSON %s into an object", kindName(k))
	}
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return k.String()
}

// value decodes the next JSON value.
func (d *decodeState) value() (any, error) {
	switch d.dec.PeekKind() {
	case '{':
		return d.object()
	case '[':
		return d.array()
	case '"':
		raw, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return d.cache.value(d.stringBytes(raw)), nil
	case '0':
		raw, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return d.number(raw)
	}
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	}
	// Unreachable: the decoder's state machine allows only a value here.
	return nil, fmt.Errorf("unstructured: unexpected JSON %v", tok.Kind())
}

func (d *decodeState) push() error {
	if d.depth++; d.depth > maxDepth {
		return fmt.Errorf("unstructured: JSON nesting exceeds the maximum depth of %d", maxDepth)
	}
	return nil
}

// object decodes an object. Members are gathered on the members stack so that
// the map is allocated once at its final size; a repeated name keeps its last
// value, as in Kubernetes.
func (d *decodeState) object() (map[string]any, error) {
	if err := d.push(); err != nil {
		return nil, err
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, err
	}
	start := len(d.members)
	for d.dec.PeekKind() != '}' {
		raw, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		name := d.cache.name(d.stringBytes(raw))
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		d.members = append(d.members, member{name, v})
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, err
	}
	members := d.members[start:]
	m := make(map[string]any, len(members))
	for _, mb := range members {
		m[mb.name] = mb.value
	}
	clear(members)
	d.members = d.members[:start]
	d.depth--
	return m, nil
}

// array decodes an array, gathering its members on the values stack so that
// the slice is allocated once. An empty array is an empty, non-nil slice.
func (d *decodeState) array() ([]any, error) {
	if err := d.push(); err != nil {
		return nil, err
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, err
	}
	start := len(d.values)
	for d.dec.PeekKind() != ']' {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		d.values = append(d.values, v)
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, err
	}
	values := d.values[start:]
	s := make([]any, len(values))
	copy(s, values)
	clear(values)
	d.values = d.values[:start]
	d.depth--
	return s, nil
}

// stringBytes returns the contents of a raw JSON string the decoder has
// validated, unquoted. They alias raw when it has no escapes and is valid
// UTF-8, and d.scratch otherwise; invalid UTF-8 becomes U+FFFD, as in
// encoding/json.
func (d *decodeState) stringBytes(raw jsontext.Value) []byte {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return s
	}
	// The only error left for a validated string is invalid UTF-8, which
	// AppendUnquote replaces.
	d.scratch, _ = jsontext.AppendUnquote(d.scratch[:0], raw)
	return d.scratch
}

// number converts a raw JSON number as Kubernetes does: an integer that fits
// is an int64; a number with a fraction or an exponent, or an integer beyond
// int64, is a float64; a number beyond float64 is an error.
func (d *decodeState) number(raw jsontext.Value) (any, error) {
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) <= 18 { // no int64 overflow possible
		var n int64
		i := 0
		for ; i < len(digits); i++ {
			c := digits[i]
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int64(c-'0')
		}
		if i == len(digits) {
			if raw[0] == '-' {
				n = -n
			}
			return n, nil
		}
	}
	if bytes.IndexAny(raw, ".eE") < 0 {
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, fmt.Errorf("unstructured: cannot decode number %s at %q: out of the range of float64", raw, d.dec.StackPointer())
	}
	return f, nil
}

// Encoding.

// encodeState writes JSON values as tokens of a jsontext.Encoder.
type encodeState struct {
	enc     *jsontext.Encoder
	depth   int
	members []member // members of the objects being encoded, innermost last
}

// bytesEncoder encodes into a reusable buffer.
type bytesEncoder struct {
	buf bytes.Buffer
	enc jsontext.Encoder
	encodeState
}

var (
	bytesEncoderPool = sync.Pool{New: func() any { return new(bytesEncoder) }}
	encodeStatePool  = sync.Pool{New: func() any { return new(encodeState) }}
)

func (e *encodeState) reset() {
	e.enc = nil
	e.depth = 0
	clear(e.members[:cap(e.members)])
	e.members = e.members[:0]
	if cap(e.members) > maxPooledItems {
		e.members = nil
	}
}

// listItems stands for the items of an UnstructuredList among the members of
// its object.
type listItems []Unstructured

// MarshalJSON encodes u.Object as JSON with the object keys sorted, and "null"
// for a nil Object. As Kubernetes' encoder it escapes <, > and & (\u003c
// ...); unlike it, it writes no trailing newline.
func (u Unstructured) MarshalJSON() ([]byte, error) {
	return marshal(func(e *encodeState) error { return e.object(u.Object, nil) })
}

// MarshalJSONTo is [Unstructured.MarshalJSON] writing to enc, for
// github.com/go-json-experiment/json.
func (u Unstructured) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, func(e *encodeState) error { return e.object(u.Object, nil) })
}

// MarshalJSON encodes the list as JSON: the fields of Object, with "items"
// written from Items (each item's Object, null for a nil one) in place of any
// "items" in Object, all with keys sorted.
func (u UnstructuredList) MarshalJSON() ([]byte, error) {
	return marshal(func(e *encodeState) error { return e.list(&u) })
}

// MarshalJSONTo is [UnstructuredList.MarshalJSON] writing to enc, for
// github.com/go-json-experiment/json.
func (u UnstructuredList) MarshalJSONTo(enc *jsontext.Encoder) error {
	return encodeTo(enc, func(e *encodeState) error { return e.list(&u) })
}

// marshalValue encodes a JSON value.
func marshalValue(v any) ([]byte, error) {
	return marshal(func(e *encodeState) error { return e.value(v) })
}

func marshal(fn func(*encodeState) error) ([]byte, error) {
	p := bytesEncoderPool.Get().(*bytesEncoder)
	p.enc.Reset(&p.buf, kjson.Options)
	p.encodeState.enc = &p.enc
	err := fn(&p.encodeState)
	var out []byte
	if err == nil {
		// The encoder ends a top-level value with a newline.
		out = bytes.Clone(bytes.TrimSuffix(p.buf.Bytes(), []byte{'\n'}))
	}
	p.encodeState.reset()
	p.buf.Reset()
	p.enc.Reset(&p.buf)
	if p.buf.Cap() <= maxPooledBytes {
		bytesEncoderPool.Put(p)
	}
	return out, err
}

func encodeTo(enc *jsontext.Encoder, fn func(*encodeState) error) error {
	e := encodeStatePool.Get().(*encodeState)
	e.enc = enc
	err := fn(e)
	e.reset()
	encodeStatePool.Put(e)
	return err
}

func (e *encodeState) push() error {
	if e.depth++; e.depth > maxDepth {
		return fmt.Errorf("unstructured: JSON nesting exceeds the maximum depth of %d", maxDepth)
	}
	return nil
}

// value writes a JSON value.
func (e *encodeState) value(v any) error {
	switch v := v.(type) {
	case nil:
		return e.enc.WriteToken(jsontext.Null)
	case string:
		return e.enc.WriteToken(jsontext.String(v))
	case bool:
		return e.enc.WriteToken(jsontext.Bool(v))
	case int64:
		return e.enc.WriteToken(jsontext.Int(v))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("unstructured: cannot encode %v as JSON at %q", v, e.enc.StackPointer())
		}
		return e.enc.WriteToken(jsontext.Float(v))
	case map[string]any:
		return e.object(v, nil)
	case []any:
		if v == nil {
			return e.enc.WriteToken(jsontext.Null)
		}
		if err := e.push(); err != nil {
			return err
		}
		if err := e.enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, x := range v {
			if err := e.value(x); err != nil {
				return err
			}
		}
		e.depth--
		return e.enc.WriteToken(jsontext.EndArray)
	case listItems:
		if err := e.push(); err != nil {
			return err
		}
		if err := e.enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for i := range v {
			if err := e.object(v[i].Object, nil); err != nil {
				return err
			}
		}
		e.depth--
		return e.enc.WriteToken(jsontext.EndArray)
	case int:
		return e.enc.WriteToken(jsontext.Int(int64(v)))
	case int8:
		return e.enc.WriteToken(jsontext.Int(int64(v)))
	case int16:
		return e.enc.WriteToken(jsontext.Int(int64(v)))
	case int32:
		return e.enc.WriteToken(jsontext.Int(int64(v)))
	case uint:
		return e.enc.WriteToken(jsontext.Uint(uint64(v)))
	case uint8:
		return e.enc.WriteToken(jsontext.Uint(uint64(v)))
	case uint16:
		return e.enc.WriteToken(jsontext.Uint(uint64(v)))
	case uint32:
		return e.enc.WriteToken(jsontext.Uint(uint64(v)))
	case uint64:
		return e.enc.WriteToken(jsontext.Uint(v))
	case json.Number:
		if v == "" { // as encoding/json does
			return e.enc.WriteToken(jsontext.Int(0))
		}
		if !isJSONNumber(string(v)) {
			return fmt.Errorf("unstructured: invalid json.Number %q at %q", string(v), e.enc.StackPointer())
		}
		return e.enc.WriteValue(jsontext.Value(v))
	}
	// Anything else (float32, []string, structs, ...) is encoded as
	// Kubernetes JSON would encode it.
	return jsonv2.MarshalEncode(e.enc, v, kjson.Options)
}

func isJSONNumber(s string) bool {
	k := jsontext.Value(s)
	return k.IsValid() && k.Kind() == '0'
}

// object writes m with its members sorted by name, or null for a nil map.
// items, when not nil, is written as "items" in place of any "items" in m.
func (e *encodeState) object(m map[string]any, items listItems) error {
	if m == nil && items == nil {
		return e.enc.WriteToken(jsontext.Null)
	}
	if err := e.push(); err != nil {
		return err
	}
	if err := e.enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	start := len(e.members)
	for k, v := range m {
		if items != nil && k == "items" {
			continue
		}
		e.members = append(e.members, member{k, v})
	}
	if items != nil {
		e.members = append(e.members, member{"items", items})
	}
	if n := len(e.members) - start; n > 1 {
		slices.SortFunc(e.members[start:], func(a, b member) int { return strings.Compare(a.name, b.name) })
	}
	// Nested objects may reallocate e.members (restoring its length before
	// they return): index it afresh.
	for i, end := start, len(e.members); i < end; i++ {
		mb := e.members[i]
		if err := e.enc.WriteToken(jsontext.String(mb.name)); err != nil {
			return err
		}
		if err := e.value(mb.value); err != nil {
			return err
		}
	}
	clear(e.members[start:])
	e.members = e.members[:start]
	e.depth--
	return e.enc.WriteToken(jsontext.EndObject)
}

// list writes an UnstructuredList: Object with Items as "items".
func (e *encodeState) list(u *UnstructuredList) error {
	items := listItems(u.Items)
	if items == nil {
		items = listItems{}
	}
	return e.object(u.Object, items)
}
