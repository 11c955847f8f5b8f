// Package pb holds the small protobuf wire helpers that kapi's generated
// (zz_generated.proto.go) and hand-written Marshal/Unmarshal methods share.
//
// Messages are written back to front into a buffer sized by Size(), as
// Kubernetes' gogo-generated code does: a nested message is written first and its
// length is then known, so the encoder never measures a subtree twice. Fields come
// out in ascending field-number order, byte for byte what kube-apiserver sends.
// Reading uses google.golang.org/protobuf/encoding/protowire.
package pb

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// SizeVarint is the encoded size of v as a varint.
func SizeVarint(v uint64) int { return protowire.SizeVarint(v) }

// SizeBytes is the size of a length-delimited field body of n bytes, tag excluded.
func SizeBytes(n int) int { return protowire.SizeVarint(uint64(n)) + n }

// SizeTag is the size of the tag of field num.
func SizeTag(num int) int { return protowire.SizeTag(protowire.Number(num)) }

// PutVarint writes v so that it ends at b[i-1] and returns the new start index.
func PutVarint(b []byte, i int, v uint64) int {
	i -= protowire.SizeVarint(v)
	j := i
	for v >= 0x80 {
		b[j] = byte(v) | 0x80
		v >>= 7
		j++
	}
	b[j] = byte(v)
	return i
}

// PutTag writes the tag of field num with wire type typ ending at b[i-1].
func PutTag(b []byte, i int, num int, typ protowire.Type) int {
	return PutVarint(b, i, protowire.EncodeTag(protowire.Number(num), typ))
}

// PutString writes a length-delimited string field ending at b[i-1].
func PutString(b []byte, i int, num int, s string) int {
	i -= len(s)
	copy(b[i:], s)
	i = PutVarint(b, i, uint64(len(s)))
	return PutTag(b, i, num, protowire.BytesType)
}

// PutBytes writes a length-delimited bytes field ending at b[i-1].
func PutBytes(b []byte, i int, num int, v []byte) int {
	i -= len(v)
	copy(b[i:], v)
	i = PutVarint(b, i, uint64(len(v)))
	return PutTag(b, i, num, protowire.BytesType)
}

// PutUvarint writes a varint field ending at b[i-1].
func PutUvarint(b []byte, i int, num int, v uint64) int {
	i = PutVarint(b, i, v)
	return PutTag(b, i, num, protowire.VarintType)
}

// PutFixed64 writes a fixed64 field ending at b[i-1].
func PutFixed64(b []byte, i int, num int, v uint64) int {
	i -= 8
	for k := 0; k < 8; k++ {
		b[i+k] = byte(v >> (8 * k))
	}
	return PutTag(b, i, num, protowire.Fixed64Type)
}

// PutMessageHeader writes the tag and length of a nested message whose body
// occupies b[i:end].
func PutMessageHeader(b []byte, i, end int, num int) int {
	i = PutVarint(b, i, uint64(end-i))
	return PutTag(b, i, num, protowire.BytesType)
}

// Bool converts a bool to its varint value.
func Bool(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// ErrTruncated reports a message that ends inside a field.
var ErrTruncated = errors.New("protobuf: truncated or malformed message")

// Decoder walks the fields of one message. The decoders of the nested
// messages of one decode (see Sub) share its *State, if it has one.
type Decoder struct {
	b    []byte
	msg  string
	num  protowire.Number
	typ  protowire.Type
	errv error
	st   *State
	// depth is how deep in nested messages the decoder is (see MaxDepth).
	depth int
}

// MaxDepth is how deeply messages may nest in one decode. Deeper input is an
// error (ErrTooDeep) rather than a recursion as deep as the input allows: a
// recursive message such as apiextensions' JSONSchemaProps costs three bytes
// per level, so a request body of a few megabytes could otherwise nest a
// million levels. JSON decoding has the same limit.
const MaxDepth = 10000

// ErrTooDeep reports messages nested more than MaxDepth levels.
var ErrTooDeep = errors.New("protobuf: messages nested too deeply")

// NewDecoder starts decoding b as the message named msg (used in errors).
func NewDecoder(b []byte, msg string) *Decoder { return &Decoder{b: b, msg: msg} }

// NewDecoderState is NewDecoder with the shared state st (nil: none): its
// string table and options apply to b and every message nested in it.
func NewDecoderState(b []byte, msg string, st *State) *Decoder {
	return &Decoder{b: b, msg: msg, st: st}
}

// Sub points sub at the current length-delimited field's value, a nested
// message, sharing d's state; the caller owns sub's storage, so that nested
// decoders live on the stack. Errors of sub are not d's: Wrap them.
func (d *Decoder) Sub(sub *Decoder) {
	*sub = Decoder{b: d.Bytes(), st: d.st, depth: d.depth + 1}
	sub.checkDepth()
}

// SubBytes points sub at b (a nested message already read, such as a map
// value), sharing d's state.
func (d *Decoder) SubBytes(sub *Decoder, b []byte) {
	*sub = Decoder{b: b, st: d.st, depth: d.depth + 1}
	sub.checkDepth()
}

// checkDepth fails a decoder nested deeper than MaxDepth: Next then reports
// no field and Err the error.
func (d *Decoder) checkDepth() {
	if d.depth > MaxDepth {
		d.errv = fmt.Errorf("decoding at depth %d: %w", d.depth, ErrTooDeep)
	}
}

// SetName names the message being decoded in errors. Generated decoders call
// it first, so that errors name the message whatever the caller passed.
func (d *Decoder) SetName(msg string) { d.msg = msg }

// SkipManagedFields reports whether metadata.managedFields are to be skipped
// rather than decoded (State.SkipManagedFields).
func (d *Decoder) SkipManagedFields() bool { return d.st != nil && d.st.SkipManagedFields }

// Count returns how many fields numbered like the current one, of its wire
// type, the rest of the message holds, the current one included: the exact
// length of a repeated field, so that its slice is allocated once, without
// the slack (up to half the capacity) and the copies of appending one element
// at a time. It reads only tags and lengths, and gives up at the first
// malformed field (the decoder reports it later).
func (d *Decoder) Count() int {
	n := 1
	num, typ := d.num, d.typ
	b := d.b
	if m := protowire.ConsumeFieldValue(num, typ, b); m >= 0 {
		b = b[m:]
	} else {
		return n
	}
	for len(b) > 0 {
		fnum, ftyp, m := protowire.ConsumeTag(b)
		if m < 0 {
			break
		}
		b = b[m:]
		if m = protowire.ConsumeFieldValue(fnum, ftyp, b); m < 0 {
			break
		}
		b = b[m:]
		if fnum == num && ftyp == typ {
			n++
		}
	}
	return n
}

// Next advances to the next field and reports whether there is one. Err tells
// whether decoding stopped on an error.
func (d *Decoder) Next() bool {
	if d.errv != nil || len(d.b) == 0 {
		return false
	}
	num, typ, n := protowire.ConsumeTag(d.b)
	if n < 0 {
		d.fail(n)
		return false
	}
	d.b = d.b[n:]
	d.num, d.typ = num, typ
	return true
}

// Rest returns the bytes not read yet, and consumes them: with no field read
// yet, the whole message.
func (d *Decoder) Rest() []byte {
	b := d.b
	d.b = nil
	return b
}

// Field is the number of the current field.
func (d *Decoder) Field() int { return int(d.num) }

// Err is the first error met.
func (d *Decoder) Err() error { return d.errv }

func (d *Decoder) fail(n int) {
	if d.errv == nil {
		d.errv = fmt.Errorf("decoding %s field %d: %w (%v)", d.msg, d.num, ErrTruncated, protowire.ParseError(n))
	}
}

func (d *Decoder) wrongType(want protowire.Type) {
	if d.errv == nil {
		d.errv = fmt.Errorf("decoding %s field %d: wire type %d, want %d", d.msg, d.num, d.typ, want)
	}
}

// Skip discards the current field's value (an unknown field).
func (d *Decoder) Skip() {
	n := protowire.ConsumeFieldValue(d.num, d.typ, d.b)
	if n < 0 {
		d.fail(n)
		return
	}
	d.b = d.b[n:]
}

// Bytes returns the current length-delimited field's value. The slice aliases
// the input.
func (d *Decoder) Bytes() []byte {
	if d.typ != protowire.BytesType {
		d.wrongType(protowire.BytesType)
		return nil
	}
	v, n := protowire.ConsumeBytes(d.b)
	if n < 0 {
		d.fail(n)
		return nil
	}
	d.b = d.b[n:]
	return v
}

// String returns the current field as a string. With a State, short strings
// come from its table: strings that repeat across the objects of one decode
// (label keys and values, image names, namespaces, condition types, "True")
// are allocated once and shared.
func (d *Decoder) String() string {
	if d.st == nil {
		return string(d.Bytes())
	}
	return d.st.String(d.Bytes())
}

// BytesString returns b as a string, from d's State's table if it has one
// (see String).
func (d *Decoder) BytesString(b []byte) string {
	if d.st == nil {
		return string(b)
	}
	return d.st.String(b)
}

// SharedBytes returns the current field's bytes like CopyBytes, except that
// with a State whose ShareBytes is set, equal values decoded earlier are
// returned instead of a new copy: the slice may then be shared with other
// objects of the same decode and must be treated as read-only.
func (d *Decoder) SharedBytes() []byte {
	if d.st == nil || !d.st.ShareBytes {
		return d.CopyBytes()
	}
	v := d.Bytes()
	if d.errv != nil {
		return []byte{}
	}
	return d.st.Bytes(v)
}

// CopyBytes returns a copy of the current field's bytes, never nil.
func (d *Decoder) CopyBytes() []byte {
	v := d.Bytes()
	out := make([]byte, len(v))
	copy(out, v)
	return out
}

// Uvarint returns the current varint field.
func (d *Decoder) Uvarint() uint64 {
	if d.typ != protowire.VarintType {
		d.wrongType(protowire.VarintType)
		return 0
	}
	v, n := protowire.ConsumeVarint(d.b)
	if n < 0 {
		d.fail(n)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Fixed64 returns the current fixed64 field.
func (d *Decoder) Fixed64() uint64 {
	if d.typ != protowire.Fixed64Type {
		d.wrongType(protowire.Fixed64Type)
		return 0
	}
	v, n := protowire.ConsumeFixed64(d.b)
	if n < 0 {
		d.fail(n)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varints decodes a repeated varint field, accepting both the unpacked form
// Kubernetes writes and the packed form proto3 writers use.
func (d *Decoder) Varints(fn func(uint64)) {
	if d.typ == protowire.VarintType {
		fn(d.Uvarint())
		return
	}
	b := d.Bytes()
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			d.fail(n)
			return
		}
		fn(v)
		b = b[n:]
	}
}

// Wrap records err (from a nested message) as the decoder's error.
func (d *Decoder) Wrap(err error) {
	if err != nil && d.errv == nil {
		d.errv = err
	}
}

// MapEntry decodes a map entry message into its key and value bytes. The value
// is nil when the entry has none.
func MapEntry(b []byte, msg string) (key string, val []byte, hasVal bool, err error) {
	d := Decoder{b: b, msg: msg}
	return d.mapEntry()
}

// MapEntry decodes the current field, a map entry, like the function MapEntry,
// taking the key from d's State's string table if it has one.
func (d *Decoder) MapEntry(msg string) (key string, val []byte, hasVal bool, err error) {
	e := Decoder{b: d.Bytes(), msg: msg, st: d.st}
	return e.mapEntry()
}

func (d *Decoder) mapEntry() (key string, val []byte, hasVal bool, err error) {
	for d.Next() {
		switch d.Field() {
		case 1:
			key = d.String()
		case 2:
			val, hasVal = d.Bytes(), true
		default:
			d.Skip()
		}
	}
	return key, val, hasVal, d.Err()
}
