package codec

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/internal/pb"
)

// DecodeOptions tune the decoding of a stream of objects (a list, a watch)
// for callers that keep many of them, such as an informer's cache. The zero
// value decodes every field into objects that share nothing but immutable
// strings.
//
// Whatever the options, the decoders of one stream share one table of the
// short strings they have decoded (pb.State for protobuf, go-json-experiment's
// own for JSON), so that a string repeated across objects — label keys and
// values, namespaces, image and node names, condition types — is allocated
// once. The table is bounded (see internal/pb) and lives as long as the
// stream; strings being immutable, sharing them is invisible.
type DecodeOptions struct {
	// SkipManagedFields leaves metadata.managedFields out: they are skipped
	// unread, which is cheaper than decoding them and dropping them after
	// (reflector.DropManagedFields). Objects then have nil ManagedFields.
	SkipManagedFields bool
	// ShareFieldsV1 lets the objects of one stream share the bytes of equal
	// managedFields sets (FieldsV1.Raw): pods of one ReplicaSet often carry
	// identical ones, a few KB each. The shared slices must be treated as
	// read-only, as the objects of a cache are; a deep copy owns its bytes.
	ShareFieldsV1 bool
}

// protoState returns the state the protobuf decoders of one stream share.
func (o DecodeOptions) protoState() *pb.State {
	return &pb.State{SkipManagedFields: o.SkipManagedFields, ShareBytes: o.ShareFieldsV1}
}

// jsonOptions returns the options to decode the items of one stream with:
// kjson.Options, plus type-specific unmarshalers for the options set.
//
// Objects of a stream are decoded with v2 error semantics: the first error
// ends an object's decoding, and an object is not checked whole beforehand
// (v1 semantics validate each value in a pass of their own, a fifth of the
// decoding time). A list skips an object that does not fit to its end
// itself (skipItem); a watch reports it.
func (o DecodeOptions) jsonOptions() json.Options {
	base := json.JoinOptions(kjson.Options, jsonv1.ReportErrorsWithLegacySemantics(false))
	if !o.SkipManagedFields && !o.ShareFieldsV1 {
		return base
	}
	var us []*json.Unmarshalers
	if o.SkipManagedFields {
		us = append(us, json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *[]metav1.ManagedFieldsEntry) error {
			*v = nil
			return dec.SkipValue()
		}))
	}
	if o.ShareFieldsV1 {
		var st pb.State
		us = append(us, json.UnmarshalFromFunc(func(dec *jsontext.Decoder, f *metav1.FieldsV1) error {
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			if v.Kind() == 'n' {
				f.Raw = nil
				return nil
			}
			f.Raw = st.Bytes(v)
			return nil
		}))
	}
	return json.JoinOptions(base, json.WithUnmarshalers(json.JoinUnmarshalers(us...)))
}

// StreamDecoder decodes the objects of one stream of single objects (the
// events of a watch) with DecodeOptions: protobuf objects share one string
// table, as the items of a list do. It is not safe for concurrent use.
type StreamDecoder struct {
	o     DecodeOptions
	st    *pb.State
	jopts json.Options
}

// NewStreamDecoder returns a decoder for one stream.
func NewStreamDecoder(o DecodeOptions) *StreamDecoder {
	return &StreamDecoder{o: o, jopts: o.jsonOptions()}
}

// DecodeProtobuf decodes one protobuf object of the stream, like
// UnmarshalProtobuf.
func (d *StreamDecoder) DecodeProtobuf(b []byte, obj ProtoUnmarshaler) (metav1.TypeMeta, error) {
	pd, ok := obj.(protoDecoder)
	if !ok {
		return UnmarshalProtobuf(b, obj)
	}
	u, err := DecodeEnvelope(b)
	if err != nil {
		return metav1.TypeMeta{}, err
	}
	if u.ContentEncoding != "" || (u.ContentType != "" && u.ContentType != MediaTypeProtobuf) {
		return u.TypeMeta, fmt.Errorf("codec: unsupported envelope content (encoding %q, type %q)", u.ContentEncoding, u.ContentType)
	}
	if d.st == nil {
		d.st = d.o.protoState()
	}
	if err := pd.UnmarshalFrom(pb.NewDecoderState(u.Raw, u.TypeMeta.Kind, d.st)); err != nil {
		return u.TypeMeta, fmt.Errorf("codec: decoding %s: %w", u.TypeMeta.Kind, err)
	}
	return u.TypeMeta, nil
}

// DecodeJSON decodes one JSON object of the stream into v, like UnmarshalJSON.
func (d *StreamDecoder) DecodeJSON(b []byte, v any) error {
	return json.Unmarshal(b, v, d.jopts)
}
