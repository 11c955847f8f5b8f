package codec

import (
	"fmt"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

// ProtoMarshaler is an object that writes its own protobuf encoding, with the
// method set gogo-protobuf generates (kapi's kinds and k8s.io/api's both have it).
type ProtoMarshaler interface {
	Size() int
	MarshalToSizedBuffer(b []byte) (int, error)
}

// ProtoUnmarshaler is an object that decodes its own protobuf encoding.
type ProtoUnmarshaler interface {
	Unmarshal(b []byte) error
}

// MarshalProtobuf encodes obj in the Kubernetes protobuf envelope under the given
// kind and apiVersion. The object is written straight into the envelope: one
// allocation, no copy of the encoded object.
func MarshalProtobuf(typ metav1.TypeMeta, obj ProtoMarshaler) ([]byte, error) {
	size := obj.Size()
	n := len(EnvelopeMagic) + 1 + protowire.SizeBytes(envTypeMetaSize(typ)) + 1 + protowire.SizeBytes(size) + len(envelopeTrailer)
	b := appendEnvelopeHeader(make([]byte, 0, n), typ, size)
	start := len(b)
	b = b[:start+size]
	written, err := obj.MarshalToSizedBuffer(b[start:])
	if err != nil {
		return nil, err
	}
	if written != size {
		return nil, fmt.Errorf("codec: %s marshalled %d bytes, Size said %d", typ.Kind, written, size)
	}
	return append(b, envelopeTrailer...), nil
}

// envelopeTrailer is the envelope's contentEncoding and contentType, empty, as
// Kubernetes always writes them after the raw object.
var envelopeTrailer = []byte{envFieldContentEncoding<<3 | 2, 0, envFieldContentType<<3 | 2, 0}

// appendEnvelopeHeader appends the envelope up to the start of a raw object of
// rawSize bytes: the magic, the type and the raw field's tag and length.
func appendEnvelopeHeader(b []byte, typ metav1.TypeMeta, rawSize int) []byte {
	b = append(b, EnvelopeMagic...)
	b = protowire.AppendTag(b, envFieldTypeMeta, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(envTypeMetaSize(typ)))
	b = protowire.AppendTag(b, envTypeMetaAPIVersion, protowire.BytesType)
	b = protowire.AppendString(b, typ.APIVersion)
	b = protowire.AppendTag(b, envTypeMetaKind, protowire.BytesType)
	b = protowire.AppendString(b, typ.Kind)
	b = protowire.AppendTag(b, envFieldRaw, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(rawSize))
}

// UnmarshalProtobuf decodes a protobuf envelope into obj and returns the kind and
// apiVersion the envelope names. A body without the `k8s\x00` prefix is an
// *EnvelopePrefixError; an envelope whose raw object is compressed or not
// protobuf is rejected rather than misread.
func UnmarshalProtobuf(b []byte, obj ProtoUnmarshaler) (metav1.TypeMeta, error) {
	u, err := DecodeEnvelope(b)
	if err != nil {
		return metav1.TypeMeta{}, err
	}
	if u.ContentEncoding != "" || (u.ContentType != "" && u.ContentType != MediaTypeProtobuf) {
		return u.TypeMeta, fmt.Errorf("codec: unsupported envelope content (encoding %q, type %q)", u.ContentEncoding, u.ContentType)
	}
	if err := obj.Unmarshal(u.Raw); err != nil {
		return u.TypeMeta, fmt.Errorf("codec: decoding %s: %w", u.TypeMeta.Kind, err)
	}
	return u.TypeMeta, nil
}
