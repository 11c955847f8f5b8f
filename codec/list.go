package codec

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/internal/pb"
	"google.golang.org/protobuf/encoding/protowire"
)

// ListHeader is everything in a list document but its items.
type ListHeader struct {
	metav1.TypeMeta
	ListMeta metav1.ListMeta
}

// ErrStop, returned by a list callback, ends decoding early without error.
var ErrStop = errors.New("codec: stop")

// DecodeJSONList reads a list document ({"kind":…,"metadata":{…},"items":[…]})
// from r and calls fn with each item as soon as it is decoded, in order. Items
// that do not fit T are skipped and reported in an *ItemErrors. It never
// holds more than one item: memory is bounded by the largest item, not the list.
// fn may keep the item (a new one is allocated for each call). Fields other than
// kind, apiVersion, metadata and items are skipped.
//
// The header is complete once DecodeJSONList returns; if fn returns ErrStop,
// decoding ends and the header holds what was read so far.
func DecodeJSONList[T any](r io.Reader, fn func(*T) error) (ListHeader, error) {
	return DecodeJSONListWith(r, DecodeOptions{}, fn)
}

// DecodeJSONListWith is DecodeJSONList with decode options for the items.
func DecodeJSONListWith[T any](r io.Reader, o DecodeOptions, fn func(*T) error) (ListHeader, error) {
	var h ListHeader
	err := DecodeJSONListInto(r, o, &h, fn)
	return h, err
}

// DecodeJSONListInto is DecodeJSONListWith filling *h as the header is read,
// so that fn sees what came before the items: servers write kind,
// apiVersion and metadata first, and a caller can complete items from them
// (such as the kind of a typed list's items, which servers leave out).
func DecodeJSONListInto[T any](r io.Reader, o DecodeOptions, h *ListHeader, fn func(*T) error) error {
	var skipped *ItemErrors
	dec := kjson.NewDecoder(r)
	tok, err := dec.ReadToken()
	if err != nil {
		return fmt.Errorf("codec: decoding list: %w", err)
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("codec: decoding list: want a JSON object, found %v", tok.Kind())
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return fmt.Errorf("codec: decoding list: %w", err)
		}
		name := tok.String()
		switch name {
		case "kind":
			err = kjson.UnmarshalDecode(dec, &h.Kind)
		case "apiVersion":
			err = kjson.UnmarshalDecode(dec, &h.APIVersion)
		case "metadata":
			err = kjson.UnmarshalDecode(dec, &h.ListMeta)
		case "items":
			err = decodeJSONItems(dec, o.jsonOptions(), fn)
			if errors.Is(err, ErrStop) {
				return nil
			}
			if errors.As(err, &skipped) {
				err = nil // reported at the end, once the rest is read
			}
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return fmt.Errorf("codec: decoding list %s: %w", name, err)
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return fmt.Errorf("codec: decoding list: %w", err)
	}
	if skipped != nil {
		return skipped
	}
	return nil
}

func decodeJSONItems[T any](dec *jsontext.Decoder, opts json.Options, fn func(*T) error) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '[' {
		return fmt.Errorf("want an array, found %v", tok.Kind())
	}
	// opts has v2 error semantics (see jsonOptions): an item that does not
	// fit T is skipped to its end here, and reported.
	depth := dec.StackDepth()
	var bad []ItemError
	for i := 0; dec.PeekKind() != ']'; i++ {
		item := new(T)
		before := dec.InputOffset()
		if err := json.UnmarshalDecode(dec, item, opts); err != nil {
			var se *jsontext.SyntacticError
			if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || skipItem(dec, depth, before) != nil {
				return fmt.Errorf("item %d: %w", i, err) // the stream itself is broken
			}
			bad = append(bad, ItemError{Index: i, Err: err})
			continue
		}
		if err := fn(item); err != nil {
			return err
		}
	}
	if _, err = dec.ReadToken(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return &ItemErrors{Items: bad}
	}
	return nil
}

// skipItem moves dec past the rest of an item whose decoding stopped at a
// semantic error: to the end of the value it was in, back at the depth of
// the list's items; an item not started at all (offset still before) is
// skipped whole.
func skipItem(dec *jsontext.Decoder, depth int, before int64) error {
	if dec.InputOffset() == before {
		return dec.SkipValue()
	}
	for dec.StackDepth() > depth {
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
	}
	return nil
}

// ItemErrors reports the items of a list that did not decode into the Go type
// (a custom resource whose stored data does not fit its struct, say). The
// list decoders skip such items, hand every other one to the callback, and
// return an *ItemErrors at the end: the list is complete but for these.
type ItemErrors struct {
	Items []ItemError
}

// ItemError is one item that did not decode.
type ItemError struct {
	// Index is the item's position in its list (or page).
	Index int
	Err   error
}

func (e *ItemErrors) Error() string {
	if len(e.Items) == 1 {
		return fmt.Sprintf("codec: list item %d skipped: %v", e.Items[0].Index, e.Items[0].Err)
	}
	return fmt.Sprintf("codec: %d list items skipped, the first (item %d): %v", len(e.Items), e.Items[0].Index, e.Items[0].Err)
}

// DecodeProtobufList reads a protobuf list (an envelope around a message with
// ListMeta in field 1 and repeated items in field 2) from r and calls fn with each
// item as soon as it is read, in order. Only one item's bytes are held at a time;
// maxItem bounds an item's size (0 means 64 MiB). PT is *T and must decode itself
// (kapi's kinds do).
func DecodeProtobufList[T any, PT interface {
	*T
	ProtoUnmarshaler
}](r io.Reader, maxItem int, fn func(*T) error) (ListHeader, error) {
	return DecodeProtobufListWith[T, PT](r, maxItem, DecodeOptions{}, fn)
}

// protoDecoder is a message that decodes itself with a shared pb.Decoder
// state (kapi's generated kinds are): the items of one list then share a
// string table.
type protoDecoder interface {
	UnmarshalFrom(d *pb.Decoder) error
}

// DecodeProtobufListWith is DecodeProtobufList with decode options for the
// items. Items whose type has kapi's UnmarshalFrom method share one
// pb.State; others are decoded with their Unmarshal method.
func DecodeProtobufListWith[T any, PT interface {
	*T
	ProtoUnmarshaler
}](r io.Reader, maxItem int, o DecodeOptions, fn func(*T) error) (ListHeader, error) {
	var h ListHeader
	var st *pb.State // made at the first item
	if maxItem <= 0 {
		maxItem = 64 << 20
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	env, raw, err := ReadEnvelopeHeader(br)
	if err != nil {
		return h, err
	}
	h.TypeMeta = env.TypeMeta
	if env.ContentEncoding != "" {
		return h, fmt.Errorf("codec: unsupported envelope content encoding %q", env.ContentEncoding)
	}
	lr := bufio.NewReaderSize(raw, 32<<10)
	var buf []byte
	var bad []ItemError
	for i := 0; ; {
		tag, err := readUvarint(lr)
		if err == io.EOF {
			if len(bad) > 0 {
				return h, &ItemErrors{Items: bad}
			}
			return h, nil
		}
		if err != nil {
			return h, fmt.Errorf("codec: decoding %s: %w", h.Kind, err)
		}
		num, typ := protowire.DecodeTag(tag)
		if typ != protowire.BytesType {
			if err := skipField(lr, typ); err != nil {
				return h, fmt.Errorf("codec: decoding %s: %w", h.Kind, err)
			}
			continue
		}
		n, err := readUvarint(lr)
		if err != nil {
			return h, fmt.Errorf("codec: decoding %s: %w", h.Kind, pb.ErrTruncated)
		}
		if n > uint64(maxItem) {
			return h, fmt.Errorf("codec: decoding %s: field %d of %d bytes exceeds the %d byte limit", h.Kind, num, n, maxItem)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(lr, buf); err != nil {
			return h, fmt.Errorf("codec: decoding %s: %w", h.Kind, pb.ErrTruncated)
		}
		switch num {
		case 1:
			if err := h.ListMeta.Unmarshal(buf); err != nil {
				return h, fmt.Errorf("codec: decoding %s metadata: %w", h.Kind, err)
			}
		case 2:
			item := PT(new(T))
			var err error
			if d, ok := any(item).(protoDecoder); ok {
				if st == nil {
					st = o.protoState()
				}
				err = d.UnmarshalFrom(pb.NewDecoderState(buf, h.Kind, st))
			} else {
				err = item.Unmarshal(buf)
			}
			if err != nil {
				// The frame is length-delimited: skip the item, go on.
				bad = append(bad, ItemError{Index: i, Err: fmt.Errorf("decoding %s item: %w", h.Kind, err)})
				i++
				continue
			}
			i++
			if err := fn((*T)(item)); err != nil {
				if errors.Is(err, ErrStop) {
					return h, nil
				}
				return h, err
			}
		}
	}
}

func readUvarint(r *bufio.Reader) (uint64, error) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c, err := r.ReadByte()
		if err != nil {
			if shift > 0 && err == io.EOF {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint overflows 64 bits")
}

func skipField(r *bufio.Reader, typ protowire.Type) error {
	var n int
	switch typ {
	case protowire.VarintType:
		_, err := readUvarint(r)
		return err
	case protowire.Fixed32Type:
		n = 4
	case protowire.Fixed64Type:
		n = 8
	default:
		return fmt.Errorf("unsupported wire type %d", typ)
	}
	_, err := r.Discard(n)
	return err
}

// EncodeJSONList writes a list document to w item by item: the items are
// encoded one at a time, never gathered into one buffer. Items are written as
// they are (without kind and apiVersion, as Kubernetes writes list items). The
// document ends with a newline, like kube-apiserver's.
func EncodeJSONList[T any](w io.Writer, typ metav1.TypeMeta, meta *metav1.ListMeta, items []T) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := kjson.NewEncoder(bw)
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, f := range [][2]string{{"kind", typ.Kind}, {"apiVersion", typ.APIVersion}} {
		if f[1] == "" {
			continue
		}
		if err := enc.WriteToken(jsontext.String(f[0])); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.String(f[1])); err != nil {
			return err
		}
	}
	if err := enc.WriteToken(jsontext.String("metadata")); err != nil {
		return err
	}
	if err := kjson.MarshalEncode(enc, meta); err != nil {
		return err
	}
	if err := enc.WriteToken(jsontext.String("items")); err != nil {
		return err
	}
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for i := range items {
		if err := kjson.MarshalEncode(enc, items[i]); err != nil {
			return fmt.Errorf("codec: encoding list item %d: %w", i, err)
		}
	}
	if err := enc.WriteToken(jsontext.EndArray); err != nil {
		return err
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return err
	}
	return bw.Flush() // the encoder ends the top-level value with a newline
}

// EncodeProtobufList writes a protobuf list (envelope, ListMeta in field 1, the
// items in field 2) to w, encoding one item at a time into a reused buffer.
func EncodeProtobufList[T ProtoMarshaler](w io.Writer, typ metav1.TypeMeta, meta *metav1.ListMeta, items []T) error {
	metaSize := meta.Size()
	size := 1 + protowire.SizeBytes(metaSize)
	sizes := make([]int, len(items))
	for i, it := range items {
		sizes[i] = it.Size()
		size += 1 + protowire.SizeBytes(sizes[i])
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	if _, err := bw.Write(appendEnvelopeHeader(nil, typ, size)); err != nil {
		return err
	}
	var buf []byte
	put := func(num protowire.Number, m ProtoMarshaler, n int) error {
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := m.MarshalToSizedBuffer(buf); err != nil {
			return err
		}
		hdr := protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.BytesType), uint64(n))
		if _, err := bw.Write(hdr); err != nil {
			return err
		}
		_, err := bw.Write(buf)
		return err
	}
	if err := put(1, meta, metaSize); err != nil {
		return err
	}
	for i, it := range items {
		if err := put(2, it, sizes[i]); err != nil {
			return err
		}
	}
	if _, err := bw.Write(envelopeTrailer); err != nil {
		return err
	}
	return bw.Flush()
}
