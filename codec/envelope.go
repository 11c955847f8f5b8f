package codec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// EnvelopeMagic is the four-byte prefix of every Kubernetes protobuf envelope:
// "k8s" and a zero byte.
const EnvelopeMagic = "k8s\x00"

// Field numbers of runtime.Unknown and runtime.TypeMeta. Note that runtime.TypeMeta
// puts apiVersion first, unlike metav1.TypeMeta's struct tags.
const (
	envFieldTypeMeta        = 1
	envFieldRaw             = 2
	envFieldContentEncoding = 3
	envFieldContentType     = 4

	envTypeMetaAPIVersion = 1
	envTypeMetaKind       = 2
)

// maxEnvelopeHeaderField bounds the length of a TypeMeta, contentEncoding or
// contentType field that ReadEnvelopeHeader reads before raw.
const maxEnvelopeHeaderField = 64 << 10

// Unknown is the runtime.Unknown message that follows EnvelopeMagic in a
// protobuf body: the type of the object and its encoding.
type Unknown struct {
	// TypeMeta is the kind and apiVersion of the object in Raw.
	TypeMeta metav1.TypeMeta
	// Raw is the object's own protobuf encoding (without an envelope).
	Raw []byte
	// ContentEncoding is the encoding of Raw, such as "gzip"; empty means none.
	ContentEncoding string
	// ContentType is the media type of Raw; empty means protobuf.
	ContentType string
}

// EncodeEnvelope appends to dst the protobuf envelope of an object of type typ
// whose protobuf encoding is raw, and returns the extended slice. It is
// Unknown{TypeMeta: typ, Raw: raw}.AppendEnvelope(dst).
func EncodeEnvelope(dst []byte, typ metav1.TypeMeta, raw []byte) []byte {
	return Unknown{TypeMeta: typ, Raw: raw}.AppendEnvelope(dst)
}

// AppendEnvelope appends EnvelopeMagic and the encoding of u to dst and returns
// the extended slice. Like Kubernetes, it writes every field, empty or not, in
// field order: typeMeta (apiVersion, kind), raw, contentEncoding, contentType.
func (u Unknown) AppendEnvelope(dst []byte) []byte {
	tm := envTypeMetaSize(u.TypeMeta)
	n := len(EnvelopeMagic) +
		1 + protowire.SizeBytes(tm) +
		1 + protowire.SizeBytes(len(u.Raw)) +
		1 + protowire.SizeBytes(len(u.ContentEncoding)) +
		1 + protowire.SizeBytes(len(u.ContentType))
	dst = slices.Grow(dst, n)
	dst = append(dst, EnvelopeMagic...)
	dst = protowire.AppendTag(dst, envFieldTypeMeta, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(tm))
	dst = protowire.AppendTag(dst, envTypeMetaAPIVersion, protowire.BytesType)
	dst = protowire.AppendString(dst, u.TypeMeta.APIVersion)
	dst = protowire.AppendTag(dst, envTypeMetaKind, protowire.BytesType)
	dst = protowire.AppendString(dst, u.TypeMeta.Kind)
	dst = protowire.AppendTag(dst, envFieldRaw, protowire.BytesType)
	dst = protowire.AppendBytes(dst, u.Raw)
	dst = protowire.AppendTag(dst, envFieldContentEncoding, protowire.BytesType)
	dst = protowire.AppendString(dst, u.ContentEncoding)
	dst = protowire.AppendTag(dst, envFieldContentType, protowire.BytesType)
	dst = protowire.AppendString(dst, u.ContentType)
	return dst
}

func envTypeMetaSize(t metav1.TypeMeta) int {
	return 1 + protowire.SizeBytes(len(t.APIVersion)) + 1 + protowire.SizeBytes(len(t.Kind))
}

// ErrNotProtobufEnvelope is matched (with errors.Is) by every
// *EnvelopePrefixError.
var ErrNotProtobufEnvelope = errors.New("codec: not a Kubernetes protobuf envelope")

// EnvelopePrefixError reports data that does not start with EnvelopeMagic.
type EnvelopePrefixError struct {
	// Found holds the first bytes of the data (at most 16).
	Found []byte
}

// Error implements error. It names the expected prefix and, in hex, what was
// found instead.
func (e *EnvelopePrefixError) Error() string {
	return fmt.Sprintf("codec: data does not appear to be a protobuf message: expected prefix %x (%q), found %x",
		EnvelopeMagic, EnvelopeMagic, e.Found)
}

// Is reports whether target is ErrNotProtobufEnvelope.
func (e *EnvelopePrefixError) Is(target error) bool { return target == ErrNotProtobufEnvelope }

func envPrefixError(b []byte) error {
	return &EnvelopePrefixError{Found: slices.Clone(b[:min(len(b), 16)])}
}

// ErrMalformedEnvelope is matched (with errors.Is) by every *EnvelopeError.
var ErrMalformedEnvelope = errors.New("codec: malformed protobuf envelope")

// EnvelopeError reports an envelope whose Unknown message is truncated or
// malformed.
type EnvelopeError struct {
	// Offset is the byte offset, from the start of the envelope (the magic), of
	// the field where the problem was found.
	Offset int64
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any: io.ErrUnexpectedEOF when the data
	// ends inside a field.
	Err error
}

// Error implements error.
func (e *EnvelopeError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("codec: malformed protobuf envelope at offset %d: %s: %v", e.Offset, e.Reason, e.Err)
	}
	return fmt.Sprintf("codec: malformed protobuf envelope at offset %d: %s", e.Offset, e.Reason)
}

// Is reports whether target is ErrMalformedEnvelope.
func (e *EnvelopeError) Is(target error) bool { return target == ErrMalformedEnvelope }

// Unwrap returns Err.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// checkEnvelopeMagic reports a data slice without the magic: a proper prefix of
// it is a truncated envelope, anything else is not an envelope at all.
func checkEnvelopeMagic(b []byte) error {
	if len(b) >= len(EnvelopeMagic) {
		if string(b[:len(EnvelopeMagic)]) == EnvelopeMagic {
			return nil
		}
		return envPrefixError(b)
	}
	if string(b) == EnvelopeMagic[:len(b)] {
		return &EnvelopeError{Offset: 0, Reason: "envelope prefix cut short", Err: io.ErrUnexpectedEOF}
	}
	return envPrefixError(b)
}

// DecodeEnvelope decodes a protobuf envelope: EnvelopeMagic followed by an
// Unknown message, which extends to the end of b.
//
// Data that does not start with the magic yields an *EnvelopePrefixError; a
// message that ends inside a field or is otherwise malformed yields an
// *EnvelopeError. Unknown fields are skipped. As in protobuf, every field is
// optional (Raw is nil when absent) and the last occurrence of a repeated field
// wins. Raw aliases b. Strings are not checked for valid UTF-8.
func DecodeEnvelope(b []byte) (Unknown, error) {
	var u Unknown
	if err := checkEnvelopeMagic(b); err != nil {
		return u, err
	}
	off := len(EnvelopeMagic)
	for off < len(b) {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return Unknown{}, envParseError(off, "field tag", n)
		}
		field := off
		off += n
		switch num {
		case envFieldTypeMeta, envFieldRaw, envFieldContentEncoding, envFieldContentType:
			if typ != protowire.BytesType {
				return Unknown{}, &EnvelopeError{Offset: int64(field), Reason: fmt.Sprintf("field %d has wire type %d, want %d", num, typ, protowire.BytesType)}
			}
			v, n := protowire.ConsumeBytes(b[off:])
			if n < 0 {
				return Unknown{}, envParseError(field, envFieldName(num), n)
			}
			off += n
			switch num {
			case envFieldTypeMeta:
				if err := decodeEnvelopeTypeMeta(&u.TypeMeta, v, off-len(v)); err != nil {
					return Unknown{}, err
				}
			case envFieldRaw:
				u.Raw = v[:len(v):len(v)]
			case envFieldContentEncoding:
				u.ContentEncoding = string(v)
			case envFieldContentType:
				u.ContentType = string(v)
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b[off:])
			if n < 0 {
				return Unknown{}, envParseError(field, fmt.Sprintf("unknown field %d", num), n)
			}
			off += n
		}
	}
	return u, nil
}

// decodeEnvelopeTypeMeta merges the runtime.TypeMeta message b, found at offset
// base of the envelope, into t.
func decodeEnvelopeTypeMeta(t *metav1.TypeMeta, b []byte, base int) error {
	off := 0
	for off < len(b) {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return envParseError(base+off, "typeMeta field tag", n)
		}
		field := off
		off += n
		if num == envTypeMetaAPIVersion || num == envTypeMetaKind {
			if typ != protowire.BytesType {
				return &EnvelopeError{Offset: int64(base + field), Reason: fmt.Sprintf("typeMeta field %d has wire type %d, want %d", num, typ, protowire.BytesType)}
			}
			v, n := protowire.ConsumeBytes(b[off:])
			if n < 0 {
				return envParseError(base+field, "typeMeta string", n)
			}
			off += n
			if num == envTypeMetaAPIVersion {
				t.APIVersion = string(v)
			} else {
				t.Kind = string(v)
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b[off:])
		if n < 0 {
			return envParseError(base+field, fmt.Sprintf("unknown typeMeta field %d", num), n)
		}
		off += n
	}
	return nil
}

func envFieldName(num protowire.Number) string {
	switch num {
	case envFieldTypeMeta:
		return "field 1 (typeMeta)"
	case envFieldRaw:
		return "field 2 (raw)"
	case envFieldContentEncoding:
		return "field 3 (contentEncoding)"
	case envFieldContentType:
		return "field 4 (contentType)"
	}
	return fmt.Sprintf("field %d", num)
}

func envParseError(off int, what string, code int) error {
	err := protowire.ParseError(code)
	if err == io.ErrUnexpectedEOF {
		return &EnvelopeError{Offset: int64(off), Reason: what + " cut short", Err: err}
	}
	return &EnvelopeError{Offset: int64(off), Reason: "invalid " + what, Err: err}
}

// EnvelopeHeader is what ReadEnvelopeHeader finds before the raw object.
type EnvelopeHeader struct {
	// TypeMeta is the kind and apiVersion of the object.
	TypeMeta metav1.TypeMeta
	// ContentEncoding and ContentType are set only if they come before raw in
	// the envelope; Kubernetes writes them after it, with empty values.
	ContentEncoding, ContentType string
	// RawSize is the length of the raw object, or -1 if the envelope has no raw
	// field.
	RawSize int64
}

// ReadEnvelopeHeader reads an envelope from r up to the start of its raw object:
// the magic and the Unknown fields that precede raw. It returns them, and a
// reader over exactly the RawSize bytes of raw, so that a large object can be
// decoded without buffering it. The raw reader returns io.EOF after the last
// byte of raw, and io.ErrUnexpectedEOF if r ends before that; the fields that
// follow raw are left unread in r.
//
// Errors are those of DecodeEnvelope, or the error r returned. A typeMeta,
// contentEncoding or contentType field longer than 64 KiB is rejected; unknown
// fields are skipped without being buffered. An envelope that ends before any
// raw field yields RawSize -1 and an empty raw reader.
func ReadEnvelopeHeader(r *bufio.Reader) (EnvelopeHeader, io.Reader, error) {
	h := EnvelopeHeader{RawSize: -1}
	er := envReader{r: r}
	var magic [len(EnvelopeMagic)]byte
	n, err := io.ReadFull(r, magic[:])
	er.off = int64(n)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return EnvelopeHeader{}, nil, err
	}
	if err := checkEnvelopeMagic(magic[:n]); err != nil {
		return EnvelopeHeader{}, nil, err
	}
	for {
		field := er.off
		tag, err := er.varint()
		if err == io.EOF {
			return h, &envRawReader{}, nil // no raw field
		}
		if err != nil {
			return EnvelopeHeader{}, nil, er.fail(field, "field tag", err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num < protowire.MinValidNumber {
			return EnvelopeHeader{}, nil, &EnvelopeError{Offset: field, Reason: "invalid field tag", Err: errEnvFieldNumber}
		}
		switch num {
		case envFieldTypeMeta, envFieldRaw, envFieldContentEncoding, envFieldContentType:
			if typ != protowire.BytesType {
				return EnvelopeHeader{}, nil, &EnvelopeError{Offset: field, Reason: fmt.Sprintf("field %d has wire type %d, want %d", num, typ, protowire.BytesType)}
			}
			size, err := er.varint()
			if err != nil {
				return EnvelopeHeader{}, nil, er.fail(field, envFieldName(num), err)
			}
			if num == envFieldRaw {
				if size > math.MaxInt64 {
					return EnvelopeHeader{}, nil, &EnvelopeError{Offset: field, Reason: "raw length overflows"}
				}
				h.RawSize = int64(size)
				return h, &envRawReader{r: r, n: int64(size)}, nil
			}
			if size > maxEnvelopeHeaderField {
				return EnvelopeHeader{}, nil, &EnvelopeError{Offset: field, Reason: fmt.Sprintf("%s is %d bytes long, more than the %d allowed before raw", envFieldName(num), size, maxEnvelopeHeaderField)}
			}
			v := make([]byte, size)
			n, err := io.ReadFull(r, v)
			er.off += int64(n)
			if err != nil {
				return EnvelopeHeader{}, nil, er.fail(field, envFieldName(num), err)
			}
			switch num {
			case envFieldTypeMeta:
				if err := decodeEnvelopeTypeMeta(&h.TypeMeta, v, int(er.off)-len(v)); err != nil {
					return EnvelopeHeader{}, nil, err
				}
			case envFieldContentEncoding:
				h.ContentEncoding = string(v)
			case envFieldContentType:
				h.ContentType = string(v)
			}
		default:
			if err := er.skip(num, typ, 0); err != nil {
				return EnvelopeHeader{}, nil, er.fail(field, fmt.Sprintf("unknown field %d", num), err)
			}
		}
	}
}

// envReader reads protobuf wire elements from a bufio.Reader, counting bytes.
type envReader struct {
	r   *bufio.Reader
	off int64
}

var (
	errEnvVarintOverflow = errors.New("variable length integer overflow")
	errEnvGroup          = errors.New("mismatched or too deeply nested group")
	errEnvWireType       = errors.New("reserved wire type")
	errEnvFieldNumber    = errors.New("invalid field number")
)

func (er *envReader) fail(off int64, what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &EnvelopeError{Offset: off, Reason: what + " cut short", Err: io.ErrUnexpectedEOF}
	}
	if err == errEnvVarintOverflow || err == errEnvGroup || err == errEnvWireType || err == errEnvFieldNumber {
		return &EnvelopeError{Offset: off, Reason: "invalid " + what, Err: err}
	}
	return err // an error of the underlying reader
}

// varint reads a varint; it returns io.EOF only when r is at its end before the
// first byte.
func (er *envReader) varint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		c, err := er.r.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		er.off++
		if i == 9 && c > 1 {
			return 0, errEnvVarintOverflow
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
}

func (er *envReader) discard(n uint64) error {
	for n > 0 {
		chunk := int(min(n, 1<<30))
		d, err := er.r.Discard(chunk)
		er.off += int64(d)
		n -= uint64(d)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// skip skips the value of an unknown field.
func (er *envReader) skip(num protowire.Number, typ protowire.Type, depth int) error {
	switch typ {
	case protowire.VarintType:
		_, err := er.varint()
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	case protowire.Fixed32Type:
		return er.discard(4)
	case protowire.Fixed64Type:
		return er.discard(8)
	case protowire.BytesType:
		n, err := er.varint()
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		return er.discard(n)
	case protowire.StartGroupType:
		if depth >= 100 {
			return errEnvGroup
		}
		for {
			tag, err := er.varint()
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return err
			}
			num2, typ2 := protowire.DecodeTag(tag)
			if num2 < protowire.MinValidNumber {
				return errEnvFieldNumber
			}
			if typ2 == protowire.EndGroupType {
				if num2 != num {
					return errEnvGroup
				}
				return nil
			}
			if err := er.skip(num2, typ2, depth+1); err != nil {
				return err
			}
		}
	case protowire.EndGroupType:
		return errEnvGroup
	}
	return errEnvWireType
}

// envRawReader reads the n bytes of an envelope's raw field.
type envRawReader struct {
	r *bufio.Reader
	n int64
}

// Read implements io.Reader.
func (rr *envRawReader) Read(p []byte) (int, error) {
	if rr.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > rr.n {
		p = p[:rr.n]
	}
	n, err := rr.r.Read(p)
	rr.n -= int64(n)
	if err == io.EOF {
		if rr.n > 0 {
			return n, io.ErrUnexpectedEOF
		}
		err = nil
	}
	return n, err
}
