package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/encoding/protowire"
)

// Watch event types, as the "type" of a watch event.
const (
	// EventAdded reports an object that was created (or, in the initial events
	// of a watch, that exists).
	EventAdded = "ADDED"
	// EventModified reports an object that was changed.
	EventModified = "MODIFIED"
	// EventDeleted reports an object that was deleted; the object is its last
	// state.
	EventDeleted = "DELETED"
	// EventBookmark carries only a resourceVersion: every change up to it has
	// been sent.
	EventBookmark = "BOOKMARK"
	// EventError carries a Status object; the watch ends after it.
	EventError = "ERROR"
)

// DefaultMaxWatchFrameSize is the largest watch event the decoders accept when
// their MaxFrameSize is zero: 16 MiB, the limit client-go applies to protobuf
// watch frames. Objects stored in etcd are limited to about 1.5 MiB by default,
// so this leaves room for their larger JSON and Table forms.
const DefaultMaxWatchFrameSize = 16 << 20

// ErrWatchFrameTooLarge is matched (with errors.Is) by every
// *WatchFrameSizeError.
var ErrWatchFrameTooLarge = errors.New("codec: watch frame too large")

// WatchFrameSizeError reports a watch event larger than the decoder's
// MaxFrameSize. The decoder refuses it before reading or allocating it.
type WatchFrameSizeError struct {
	// Size is the frame size announced by a protobuf frame header, or -1 for a
	// JSON event (its size is unknown, only that it exceeds Max).
	Size int64
	// Max is the limit that was exceeded.
	Max int
}

// Error implements error.
func (e *WatchFrameSizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("codec: watch event larger than the limit of %d bytes", e.Max)
	}
	return fmt.Sprintf("codec: watch frame of %d bytes exceeds the limit of %d bytes", e.Size, e.Max)
}

// Is reports whether target is ErrWatchFrameTooLarge.
func (e *WatchFrameSizeError) Is(target error) bool { return target == ErrWatchFrameTooLarge }

// ErrMalformedWatchEvent is matched (with errors.Is) by every *WatchEventError.
var ErrMalformedWatchEvent = errors.New("codec: malformed watch event")

// WatchEventError reports a watch event that cannot be decoded, or that an
// encoder was asked to write and cannot.
type WatchEventError struct {
	// Offset is the offset in the stream at which the event starts, or -1 for
	// an error of an encoder.
	Offset int64
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *WatchEventError) Error() string {
	var s string
	if e.Offset < 0 {
		s = "codec: invalid watch event: " + e.Reason
	} else {
		s = fmt.Sprintf("codec: malformed watch event at offset %d: %s", e.Offset, e.Reason)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is ErrMalformedWatchEvent.
func (e *WatchEventError) Is(target error) bool { return target == ErrMalformedWatchEvent }

// Unwrap returns Err.
func (e *WatchEventError) Unwrap() error { return e.Err }

// watchEventType returns the event type named by b, without allocating for the
// standard types.
func watchEventType(b []byte) string {
	switch string(b) {
	case EventAdded:
		return EventAdded
	case EventModified:
		return EventModified
	case EventDeleted:
		return EventDeleted
	case EventBookmark:
		return EventBookmark
	case EventError:
		return EventError
	}
	return string(b)
}

func watchMaxFrameSize(n int) int {
	if n <= 0 {
		return DefaultMaxWatchFrameSize
	}
	return n
}

// JSONWatchEncoder writes a JSON watch stream: one document per event,
//
//	{"type":"ADDED","object":{...}}
//
// followed by a newline, exactly as Kubernetes writes it. It is not safe for
// concurrent use.
type JSONWatchEncoder struct {
	w   io.Writer
	buf []byte
}

// NewJSONWatchEncoder returns an encoder writing to w.
func NewJSONWatchEncoder(w io.Writer) *JSONWatchEncoder {
	return &JSONWatchEncoder{w: w}
}

var jsonWatchCompactOptions = []jsontext.Options{jsontext.AllowInvalidUTF8(false)}

// Encode writes one event with one call to the underlying writer. object is the
// JSON encoding of the event's object; it must be a valid JSON object (with
// valid UTF-8), and is written compacted (whitespace removed, nothing else
// changed). eventType must not be empty. Invalid input yields a
// *WatchEventError and writes nothing. Encode does not flush: an HTTP handler flushes after each event
// it wants delivered at once.
func (e *JSONWatchEncoder) Encode(eventType string, object []byte) error {
	if eventType == "" {
		return &WatchEventError{Offset: -1, Reason: "empty event type"}
	}
	b := append(e.buf[:0], `{"type":`...)
	b, err := jsontext.AppendQuote(b, eventType)
	if err != nil {
		return &WatchEventError{Offset: -1, Reason: "event type is not valid UTF-8", Err: err}
	}
	b = append(b, `,"object":`...)
	start := len(b)
	b = append(b, object...)
	v := jsontext.Value(b[start:])
	if err := v.Compact(jsonWatchCompactOptions...); err != nil {
		e.buf = b[:0]
		return &WatchEventError{Offset: -1, Reason: "object is not valid JSON", Err: err}
	}
	if v.Kind() != '{' {
		e.buf = b[:0]
		return &WatchEventError{Offset: -1, Reason: "object is not a JSON object"}
	}
	b = append(b[:start+len(v)], "}\n"...)
	e.buf = b[:0]
	_, err = e.w.Write(b)
	return err
}

// JSONWatchDecoder reads a JSON watch stream: a sequence of
// {"type":...,"object":{...}} documents, separated by any JSON whitespace
// (Kubernetes writes one per line) and possibly split across reads at any byte.
// Memory is bounded by the largest event. It is not safe for concurrent use.
type JSONWatchDecoder struct {
	// MaxFrameSize bounds the bytes an event (including the whitespace before
	// it) may take; zero means DefaultMaxWatchFrameSize. It may be changed
	// between calls to Next.
	MaxFrameSize int

	src     jsonWatchSource
	dec     *jsontext.Decoder
	obj     []byte
	scratch []byte
	err     error
}

// jsonWatchSource feeds the jsontext decoder, enforcing the frame size limit and
// keeping the reader's own errors.
type jsonWatchSource struct {
	r        io.Reader
	n        int64 // bytes handed to the decoder
	limit    int64 // stream offset it may not read beyond
	hitLimit bool
	err      error // first error of r other than io.EOF
}

var errJSONWatchLimit = errors.New("watch event size limit reached")

func (s *jsonWatchSource) Read(p []byte) (int, error) {
	if s.n >= s.limit {
		s.hitLimit = true
		return 0, errJSONWatchLimit
	}
	if room := s.limit - s.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// NewJSONWatchDecoder returns a decoder reading from r.
func NewJSONWatchDecoder(r io.Reader) *JSONWatchDecoder {
	d := &JSONWatchDecoder{src: jsonWatchSource{r: r}}
	// Names inside objects are the object decoder's business; the decoder
	// checks the event's own members itself.
	d.dec = jsontext.NewDecoder(&d.src, jsontext.AllowDuplicateNames(true))
	return d
}

// Next reads the next event and returns its type and the JSON encoding of its
// object, exactly as it appears in the stream. object is valid only until the
// next call to Next.
//
// Next returns io.EOF when the stream ends cleanly between events, and
// io.ErrUnexpectedEOF when it ends inside one. An event that is not a JSON object
// with a non-empty string "type" and an object "object" (other members are
// ignored) yields a *WatchEventError, an event larger than MaxFrameSize a
// *WatchFrameSizeError, and an error of the underlying reader is returned as
// is. Every error is final: later calls return it again.
func (d *JSONWatchDecoder) Next() (eventType string, object []byte, err error) {
	if d.err != nil {
		return "", nil, d.err
	}
	start := d.dec.InputOffset()
	limit := watchMaxFrameSize(d.MaxFrameSize)
	d.src.limit = start + int64(limit)
	if d.src.limit < start { // overflow
		d.src.limit = math.MaxInt64
	}
	eventType, object, err = d.next(start)
	if err != nil {
		switch {
		case d.src.err != nil:
			err = d.src.err
		case d.src.hitLimit:
			err = &WatchFrameSizeError{Size: -1, Max: limit}
		case err == io.EOF:
		case errors.Is(err, io.ErrUnexpectedEOF):
			err = io.ErrUnexpectedEOF
		default:
			var we *WatchEventError
			if !errors.As(err, &we) {
				err = &WatchEventError{Offset: start, Reason: "invalid JSON", Err: err}
			}
		}
		d.err = err
		return "", nil, err
	}
	return eventType, object, nil
}

func (d *JSONWatchDecoder) next(start int64) (string, []byte, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return "", nil, err
	}
	if tok.Kind() != '{' {
		return "", nil, &WatchEventError{Offset: start, Reason: fmt.Sprintf("event is a JSON %v, not an object", tok.Kind())}
	}
	var typ string
	haveType, haveObject := false, false
	for d.dec.PeekKind() != '}' {
		name, err := d.dec.ReadValue()
		if err != nil {
			return "", nil, err
		}
		key := []byte(name[1 : len(name)-1])
		if bytes.IndexByte(key, '\\') >= 0 {
			d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], name)
			if err != nil {
				return "", nil, err
			}
			key = d.scratch
		}
		switch string(key) {
		case "type":
			if haveType {
				return "", nil, &WatchEventError{Offset: start, Reason: `duplicate member "type"`}
			}
			haveType = true
			v, err := d.dec.ReadValue()
			if err != nil {
				return "", nil, err
			}
			if v.Kind() != '"' {
				return "", nil, &WatchEventError{Offset: start, Reason: fmt.Sprintf(`"type" is a JSON %v, not a string`, v.Kind())}
			}
			if bytes.IndexByte(v, '\\') < 0 {
				typ = watchEventType(v[1 : len(v)-1])
			} else {
				d.scratch, err = jsontext.AppendUnquote(d.scratch[:0], v)
				if err != nil {
					return "", nil, err
				}
				typ = watchEventType(d.scratch)
			}
			if typ == "" {
				return "", nil, &WatchEventError{Offset: start, Reason: "empty event type"}
			}
		case "object":
			if haveObject {
				return "", nil, &WatchEventError{Offset: start, Reason: `duplicate member "object"`}
			}
			haveObject = true
			v, err := d.dec.ReadValue()
			if err != nil {
				return "", nil, err
			}
			if v.Kind() != '{' {
				return "", nil, &WatchEventError{Offset: start, Reason: fmt.Sprintf(`"object" is a JSON %v, not an object`, v.Kind())}
			}
			d.obj = append(d.obj[:0], v...)
		default:
			if err := d.dec.SkipValue(); err != nil {
				return "", nil, err
			}
		}
	}
	if _, err := d.dec.ReadToken(); err != nil { // the closing brace
		return "", nil, err
	}
	switch {
	case !haveType:
		return "", nil, &WatchEventError{Offset: start, Reason: `missing member "type"`}
	case !haveObject:
		return "", nil, &WatchEventError{Offset: start, Reason: `missing member "object"`}
	}
	return typ, d.obj, nil
}

// Protobuf field numbers of metav1.WatchEvent and runtime.RawExtension.
const (
	watchFieldType   = 1
	watchFieldObject = 2
	rawExtensionRaw  = 1
)

// ProtobufWatchEncoder writes a protobuf watch stream: each event is a 4-byte
// big-endian length followed by a metav1.WatchEvent message (field 1 the type,
// field 2 a runtime.RawExtension whose field 1 holds the object's envelope),
// exactly as Kubernetes writes it. It is not safe for concurrent use.
type ProtobufWatchEncoder struct {
	w   io.Writer
	buf []byte
}

// NewProtobufWatchEncoder returns an encoder writing to w.
func NewProtobufWatchEncoder(w io.Writer) *ProtobufWatchEncoder {
	return &ProtobufWatchEncoder{w: w}
}

// Encode writes one event with one call to the underlying writer. object is the
// event's object as a protobuf envelope (see EncodeEnvelope), which must start
// with EnvelopeMagic. eventType must not be empty. Encode does not flush.
func (e *ProtobufWatchEncoder) Encode(eventType string, object []byte) error {
	if eventType == "" {
		return &WatchEventError{Offset: -1, Reason: "empty event type"}
	}
	if err := checkEnvelopeMagic(object); err != nil {
		return &WatchEventError{Offset: -1, Reason: "object is not a protobuf envelope", Err: err}
	}
	ext := 1 + protowire.SizeBytes(len(object))
	size := 1 + protowire.SizeBytes(len(eventType)) + 1 + protowire.SizeBytes(ext)
	if uint64(size) > math.MaxUint32 {
		return &WatchEventError{Offset: -1, Reason: fmt.Sprintf("event of %d bytes does not fit a frame", size)}
	}
	b := slices.Grow(e.buf[:0], 4+size)
	b = binary.BigEndian.AppendUint32(b, uint32(size))
	b = protowire.AppendTag(b, watchFieldType, protowire.BytesType)
	b = protowire.AppendString(b, eventType)
	b = protowire.AppendTag(b, watchFieldObject, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(ext))
	b = protowire.AppendTag(b, rawExtensionRaw, protowire.BytesType)
	b = protowire.AppendBytes(b, object)
	e.buf = b[:0]
	_, err := e.w.Write(b)
	return err
}

// ProtobufWatchDecoder reads a protobuf watch stream one frame at a time,
// reusing its buffer. It is not safe for concurrent use.
type ProtobufWatchDecoder struct {
	// MaxFrameSize bounds the length of a frame; zero means
	// DefaultMaxWatchFrameSize. It may be changed between calls to Next.
	MaxFrameSize int

	r   io.Reader
	off int64
	hdr [4]byte
	buf []byte
	err error
}

// NewProtobufWatchDecoder returns a decoder reading from r.
func NewProtobufWatchDecoder(r io.Reader) *ProtobufWatchDecoder {
	return &ProtobufWatchDecoder{r: r}
}

// Next reads the next frame and returns the event's type and its object: the
// protobuf envelope of the object (pass it to DecodeEnvelope). object aliases
// the decoder's buffer and is valid only until the next call to Next.
//
// Next returns io.EOF when the stream ends cleanly between frames, and
// io.ErrUnexpectedEOF when it ends inside one. A frame longer than MaxFrameSize
// yields a *WatchFrameSizeError before anything of it is read; an error of the
// underlying reader is returned as is. These errors are final: later calls
// return them again. A frame whose message is malformed, or lacks a non-empty
// type or the object, yields a *WatchEventError; the stream stays in step, so
// Next may be called again to read the following frame.
func (d *ProtobufWatchDecoder) Next() (eventType string, object []byte, err error) {
	if d.err != nil {
		return "", nil, d.err
	}
	start := d.off
	n, err := io.ReadFull(d.r, d.hdr[:])
	d.off += int64(n)
	if err != nil {
		d.err = err // io.EOF at a frame boundary, io.ErrUnexpectedEOF inside the header
		return "", nil, err
	}
	size := int64(binary.BigEndian.Uint32(d.hdr[:]))
	if limit := watchMaxFrameSize(d.MaxFrameSize); size > int64(limit) {
		d.err = &WatchFrameSizeError{Size: size, Max: limit}
		return "", nil, d.err
	}
	// Grow the buffer with the data actually received, so that a header
	// announcing a large frame costs nothing until the frame arrives.
	buf := d.buf[:0]
	for int64(len(buf)) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(size-int64(len(buf)), int64(max(cap(buf), 32<<10)))))
		}
		n, err := io.ReadFull(d.r, buf[len(buf):min(int64(cap(buf)), size)])
		buf = buf[:len(buf)+n]
		d.off += int64(n)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			d.buf = buf[:0]
			d.err = err
			return "", nil, err
		}
	}
	d.buf = buf[:0]
	return parseProtobufWatchEvent(buf, start)
}

// parseProtobufWatchEvent decodes a metav1.WatchEvent message.
func parseProtobufWatchEvent(b []byte, start int64) (string, []byte, error) {
	fail := func(reason string, code int) (string, []byte, error) {
		return "", nil, &WatchEventError{Offset: start, Reason: reason, Err: protowire.ParseError(code)}
	}
	var typ []byte
	var object []byte
	haveType, haveObject := false, false
	for len(b) > 0 {
		num, wtyp, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fail("invalid field tag", n)
		}
		b = b[n:]
		if (num == watchFieldType || num == watchFieldObject) && wtyp != protowire.BytesType {
			return "", nil, &WatchEventError{Offset: start, Reason: fmt.Sprintf("field %d has wire type %d, want %d", num, wtyp, protowire.BytesType)}
		}
		switch num {
		case watchFieldType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fail("invalid type field", n)
			}
			b = b[n:]
			typ, haveType = v, true
		case watchFieldObject:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fail("invalid object field", n)
			}
			b = b[n:]
			raw, err := parseRawExtension(v)
			if err != nil {
				return "", nil, &WatchEventError{Offset: start, Reason: "invalid object field", Err: err}
			}
			object, haveObject = raw, true
		default:
			n := protowire.ConsumeFieldValue(num, wtyp, b)
			if n < 0 {
				return fail(fmt.Sprintf("invalid field %d", num), n)
			}
			b = b[n:]
		}
	}
	switch {
	case !haveType || len(typ) == 0:
		return "", nil, &WatchEventError{Offset: start, Reason: "missing event type"}
	case !haveObject:
		return "", nil, &WatchEventError{Offset: start, Reason: "missing object"}
	}
	return watchEventType(typ), object, nil
}

// parseRawExtension returns the raw field of a runtime.RawExtension message
// (empty, not nil, when absent).
func parseRawExtension(b []byte) ([]byte, error) {
	raw := b[:0:0]
	for len(b) > 0 {
		num, wtyp, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num == rawExtensionRaw {
			if wtyp != protowire.BytesType {
				return nil, fmt.Errorf("raw has wire type %d, want %d", wtyp, protowire.BytesType)
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			b = b[n:]
			raw = v[:len(v):len(v)]
			continue
		}
		n = protowire.ConsumeFieldValue(num, wtyp, b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return raw, nil
}
