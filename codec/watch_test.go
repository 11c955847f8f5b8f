package codec_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/encoding/protowire"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

type watchEvent struct {
	typ    string
	object []byte
}

// watchDecoder is what both decoders have in common.
type watchDecoder interface {
	Next() (string, []byte, error)
}

// decodeAll reads events until the first error (or, for the protobuf decoder,
// the first error that ends the stream), copying each object.
func decodeAll(d watchDecoder) ([]watchEvent, error) {
	var events []watchEvent
	for {
		typ, obj, err := d.Next()
		if err != nil {
			return events, err
		}
		events = append(events, watchEvent{typ, bytes.Clone(obj)})
	}
}

// readers wraps a stream in readers that split it in various ways.
var readers = map[string]func([]byte) io.Reader{
	"plain":   func(b []byte) io.Reader { return bytes.NewReader(b) },
	"onebyte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
	"half":    func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	"dataerr": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
}

// jsonWatchGoldens are the golden JSON watch exchanges.
var jsonWatchGoldens = []string{
	"93-watch-json-from-rv.txt",
	"95-watch-no-rv-initial-state.txt",
	"96-watch-sendinitialevents.txt",
	"97-watch-sendinitialevents-no-bookmarks.txt",
	"98-watch-too-old-rv.txt",
	"99-watch-table.txt",
	"104-watch-compacted-rv.txt",
}

func TestJSONWatchGolden(t *testing.T) {
	for _, r := range golden.Releases {
		for _, name := range jsonWatchGoldens {
			_, body, ok := goldenExchangeFrom(t, r, name)
			if !ok {
				continue
			}
			t.Run(r.Name+"/"+name, func(t *testing.T) {
				if !bytes.HasSuffix(body, []byte("\n")) {
					// Case 104 was recorded without the file's own final newline
					// after the body; the server ends every event with one.
					body = append(body, '\n')
				}
				lines := strings.SplitAfter(string(body), "\n")
				lines = lines[:len(lines)-1]

				for rname, newReader := range readers {
					events, err := decodeAll(codec.NewJSONWatchDecoder(newReader(body)))
					if err != io.EOF {
						t.Fatalf("%s: final error %v, want io.EOF", rname, err)
					}
					if len(events) != len(lines) {
						t.Fatalf("%s: %d events, want %d", rname, len(events), len(lines))
					}
					for i, ev := range events {
						// Each line is the event with its object verbatim.
						want := `{"type":"` + ev.typ + `","object":` + string(ev.object) + "}\n"
						if lines[i] != want {
							t.Errorf("%s: event %d = %s %s\nline: %s", rname, i, ev.typ, ev.object, lines[i])
						}
					}
				}

				// Re-encoding gives the same bytes.
				events, _ := decodeAll(codec.NewJSONWatchDecoder(bytes.NewReader(body)))
				var out writeCounter
				enc := codec.NewJSONWatchEncoder(&out)
				for _, ev := range events {
					if err := enc.Encode(ev.typ, ev.object); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(out.buf.Bytes(), body) {
					t.Errorf("re-encoded stream differs:\n got %s\nwant %s", out.buf.Bytes(), body)
				}
				if out.writes != len(events) {
					t.Errorf("%d writes for %d events", out.writes, len(events))
				}
			})
		}
	}
}

// writeCounter records what is written and how many calls it took.
type writeCounter struct {
	buf    bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}

type jsonObjectMeta struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func TestJSONWatchGolden93Events(t *testing.T) {
	_, body := goldenExchange(t, "93-watch-json-from-rv.txt")
	events, err := decodeAll(codec.NewJSONWatchDecoder(bytes.NewReader(body)))
	if err != io.EOF {
		t.Fatal(err)
	}
	wantTypes := []string{codec.EventAdded, codec.EventModified, codec.EventDeleted, codec.EventBookmark}
	if len(events) != len(wantTypes) {
		t.Fatalf("%d events, want %d", len(events), len(wantTypes))
	}
	prevRV := 235 // the watch started from resourceVersion 235
	for i, ev := range events {
		if ev.typ != wantTypes[i] {
			t.Errorf("event %d type %q, want %q", i, ev.typ, wantTypes[i])
		}
		var m jsonObjectMeta
		if err := json.Unmarshal(ev.object, &m); err != nil {
			t.Fatal(err)
		}
		rv, err := strconv.Atoi(m.Metadata.ResourceVersion)
		if err != nil || m.Kind != "ConfigMap" {
			t.Fatalf("event %d: kind %q, resourceVersion %q", i, m.Kind, m.Metadata.ResourceVersion)
		}
		// Changes move the resourceVersion on; the bookmark repeats the last one.
		if ev.typ == codec.EventBookmark && rv != prevRV || ev.typ != codec.EventBookmark && rv <= prevRV {
			t.Errorf("event %d (%s): resourceVersion %d after %d", i, ev.typ, rv, prevRV)
		}
		if ev.typ != codec.EventBookmark && m.Metadata.Name != "w-1" {
			t.Errorf("event %d: name %q", i, m.Metadata.Name)
		}
		prevRV = rv
	}
}

func TestJSONWatchWhitespaceAndLayout(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []watchEvent
	}{
		{"empty", "", nil},
		{"only whitespace", " \n\t\r\n ", nil},
		{"no separator", `{"type":"ADDED","object":{}}{"type":"DELETED","object":{"a":1}}`,
			[]watchEvent{{"ADDED", []byte(`{}`)}, {"DELETED", []byte(`{"a":1}`)}}},
		{"pretty", "\r\n{\n  \"type\": \"MODIFIED\",\n  \"object\": {\n    \"a\": [1, 2]\n  }\n}\n\n\t",
			[]watchEvent{{"MODIFIED", []byte("{\n    \"a\": [1, 2]\n  }")}}},
		{"object first, extra members", `{"object":{"k":"v"},"extra":[1,{"type":"x"}],"type":"BOOKMARK"}`,
			[]watchEvent{{"BOOKMARK", []byte(`{"k":"v"}`)}}},
		{"escaped names and type", `{"\u0074ype":"ADD\u0045D","obj\u0065ct":{}}`,
			[]watchEvent{{"ADDED", []byte(`{}`)}}},
		{"custom type", `{"type":"SOMETHING","object":{}}`, []watchEvent{{"SOMETHING", []byte(`{}`)}}},
		{"duplicate names inside the object", `{"type":"ERROR","object":{"a":1,"a":2}}`,
			[]watchEvent{{"ERROR", []byte(`{"a":1,"a":2}`)}}},
	}
	for _, tt := range tests {
		for rname, newReader := range readers {
			events, err := decodeAll(codec.NewJSONWatchDecoder(newReader([]byte(tt.in))))
			if err != io.EOF {
				t.Errorf("%s/%s: error %v, want io.EOF", tt.name, rname, err)
			}
			if fmt.Sprintf("%q", events) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("%s/%s: events %q, want %q", tt.name, rname, events, tt.want)
			}
		}
	}
}

func TestJSONWatchMalformed(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		before int // events decoded before the error
	}{
		{"array", `[]`, 0},
		{"string", `"ADDED"`, 0},
		{"type not a string", `{"type":1,"object":{}}`, 0},
		{"empty type", `{"type":"","object":{}}`, 0},
		{"missing object", `{"type":"ADDED"}`, 0},
		{"missing type", `{"object":{}}`, 0},
		{"object not an object", `{"type":"ADDED","object":[]}`, 0},
		{"null object", `{"type":"ADDED","object":null}`, 0},
		{"duplicate type", `{"type":"ADDED","type":"DELETED","object":{}}`, 0},
		{"duplicate escaped object", `{"type":"ADDED","object":{},"\u006fbject":{}}`, 0},
		{"garbage after an event", "{\"type\":\"ADDED\",\"object\":{}}\nxyz", 1},
		{"syntax error in the object", `{"type":"ADDED","object":{"a":}}`, 0},
		{"invalid UTF-8", "{\"type\":\"ADD\xffED\",\"object\":{}}", 0},
		{"invalid escape", `{"type":"\x","object":{}}`, 0},
	}
	for _, tt := range tests {
		for rname, newReader := range readers {
			d := codec.NewJSONWatchDecoder(newReader([]byte(tt.in)))
			events, err := decodeAll(d)
			var we *codec.WatchEventError
			if !errors.As(err, &we) || !errors.Is(err, codec.ErrMalformedWatchEvent) {
				t.Errorf("%s/%s: error %v, want *WatchEventError", tt.name, rname, err)
				continue
			}
			if len(events) != tt.before {
				t.Errorf("%s/%s: %d events before the error, want %d", tt.name, rname, len(events), tt.before)
			}
			if _, _, err2 := d.Next(); err2 != err {
				t.Errorf("%s/%s: error is not sticky: %v then %v", tt.name, rname, err, err2)
			}
		}
	}
}

// jsonEventEnds returns the offsets just past each event of a stream written one
// event per line.
func jsonEventEnds(body []byte) map[int]bool {
	ends := map[int]bool{}
	for i, c := range body {
		if c == '\n' {
			ends[i] = true
		}
	}
	return ends
}

func TestJSONWatchTruncated(t *testing.T) {
	_, body := goldenExchange(t, "93-watch-json-from-rv.txt")
	ends := jsonEventEnds(body)
	for i := range len(body) {
		complete := 0
		for e := range ends {
			if e <= i {
				complete++
			}
		}
		clean := i == 0 || ends[i] || body[i-1] == '\n'
		for rname, newReader := range map[string]func([]byte) io.Reader{"plain": readers["plain"], "onebyte": readers["onebyte"]} {
			events, err := decodeAll(codec.NewJSONWatchDecoder(newReader(body[:i])))
			if len(events) != complete {
				t.Errorf("[:%d] %s: %d events, want %d", i, rname, len(events), complete)
			}
			if clean && err != io.EOF || !clean && err != io.ErrUnexpectedEOF {
				t.Errorf("[:%d] %s: error %v (clean end: %v)", i, rname, err, clean)
			}
		}
	}
}

func TestJSONWatchMaxFrameSize(t *testing.T) {
	_, body := goldenExchange(t, "93-watch-json-from-rv.txt")
	// An event's frame runs from the end of the previous one to its closing
	// brace: the newline before it counts.
	largest, largestAt, prev := 0, 0, 0
	for i, c := range body {
		if c == '\n' {
			if i-prev > largest {
				largest, largestAt = i-prev, strings.Count(string(body[:i]), "\n")
			}
			prev = i
		}
	}
	for rname, newReader := range readers {
		d := codec.NewJSONWatchDecoder(newReader(body))
		d.MaxFrameSize = largest
		if events, err := decodeAll(d); err != io.EOF || len(events) != 4 {
			t.Errorf("%s: limit %d: %d events, %v", rname, largest, len(events), err)
		}
		d = codec.NewJSONWatchDecoder(newReader(body))
		d.MaxFrameSize = largest - 1
		events, err := decodeAll(d)
		var se *codec.WatchFrameSizeError
		if !errors.As(err, &se) || !errors.Is(err, codec.ErrWatchFrameTooLarge) || se.Max != largest-1 || se.Size != -1 {
			t.Errorf("%s: limit %d: error %v", rname, largest-1, err)
		}
		if len(events) != largestAt {
			t.Errorf("%s: %d events before the large one, want %d", rname, len(events), largestAt)
		}
	}
	// The limit keeps memory bounded on an endless event.
	endless := io.MultiReader(strings.NewReader(`{"type":"ADDED","object":{"a":"`), neverEnding('x'))
	d := codec.NewJSONWatchDecoder(endless)
	d.MaxFrameSize = 1 << 20
	if _, _, err := d.Next(); !errors.Is(err, codec.ErrWatchFrameTooLarge) {
		t.Errorf("endless event: %v", err)
	}
	// Endless whitespace counts too.
	d = codec.NewJSONWatchDecoder(neverEnding(' '))
	d.MaxFrameSize = 1 << 16
	if _, _, err := d.Next(); !errors.Is(err, codec.ErrWatchFrameTooLarge) {
		t.Errorf("endless whitespace: %v", err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestJSONWatchReaderError(t *testing.T) {
	boom := errors.New("boom")
	for _, prefix := range []string{"", `{"type":"ADDED","object":{}}`, `{"type":"ADDED","obj`} {
		d := codec.NewJSONWatchDecoder(io.MultiReader(strings.NewReader(prefix), iotest.ErrReader(boom)))
		_, err := decodeAll(d)
		if err != boom {
			t.Errorf("after %q: error %v, want boom", prefix, err)
		}
	}
}

func TestJSONWatchEncoder(t *testing.T) {
	var buf bytes.Buffer
	enc := codec.NewJSONWatchEncoder(&buf)
	if err := enc.Encode(codec.EventAdded, []byte(" {\n \"a\" : [1, \"x y\"] }\n")); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode("quote\"d", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	want := "{\"type\":\"ADDED\",\"object\":{\"a\":[1,\"x y\"]}}\n{\"type\":\"quote\\\"d\",\"object\":{}}\n"
	if buf.String() != want {
		t.Errorf("encoded %q, want %q", buf.String(), want)
	}
	for _, tt := range []struct {
		typ string
		obj string
	}{
		{"", `{}`},
		{"ADDED", ``},
		{"ADDED", `[]`},
		{"ADDED", `"x"`},
		{"ADDED", `{"a":}`},
		{"ADDED", `{} {}`},
		{"ADDED", "{\"a\":\"\xff\"}"},
		{"ADD\xffED", `{}`},
	} {
		buf.Reset()
		err := enc.Encode(tt.typ, []byte(tt.obj))
		var we *codec.WatchEventError
		if !errors.As(err, &we) || !errors.Is(err, codec.ErrMalformedWatchEvent) || we.Offset != -1 {
			t.Errorf("Encode(%q, %q) = %v, want *WatchEventError", tt.typ, tt.obj, err)
		}
		if buf.Len() != 0 {
			t.Errorf("Encode(%q, %q) wrote %q", tt.typ, tt.obj, buf.Bytes())
		}
	}
	// Write errors come back.
	boom := errors.New("boom")
	if err := codec.NewJSONWatchEncoder(errWriter{boom}).Encode("ADDED", []byte("{}")); err != boom {
		t.Errorf("write error: %v", err)
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// protobufFrameEnds returns the offsets just past each frame of a protobuf
// watch stream.
func protobufFrameEnds(t testing.TB, b []byte) map[int]bool {
	ends := map[int]bool{}
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			t.Fatalf("stream cut in a frame header")
		}
		off += 4 + int(binary.BigEndian.Uint32(b[off:]))
		ends[off] = true
	}
	return ends
}

// pbString returns the first length-delimited field num of message b.
func pbString(b []byte, num protowire.Number) string {
	for len(b) > 0 {
		n2, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return ""
		}
		b = b[n:]
		if n2 == num && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b)
			return string(v)
		}
		n = protowire.ConsumeFieldValue(n2, typ, b)
		if n < 0 {
			return ""
		}
		b = b[n:]
	}
	return ""
}

func TestProtobufWatchGolden(t *testing.T) {
	golden.Each(t, "94-watch-protobuf-from-rv", func(t *testing.T, _ golden.Release, x *golden.Exchange) {
		testProtobufWatchGolden(t, x.ResponseBody)
	})
}

func testProtobufWatchGolden(t *testing.T, body []byte) {
	wantTypes := []string{codec.EventAdded, codec.EventModified, codec.EventDeleted, codec.EventAdded, codec.EventModified, codec.EventDeleted}
	var events []watchEvent
	for rname, newReader := range readers {
		got, err := decodeAll(codec.NewProtobufWatchDecoder(newReader(body)))
		if err != io.EOF {
			t.Fatalf("%s: final error %v", rname, err)
		}
		if len(got) != len(wantTypes) {
			t.Fatalf("%s: %d events, want %d", rname, len(got), len(wantTypes))
		}
		if events != nil && fmt.Sprint(got) != fmt.Sprint(events) {
			t.Errorf("%s: events differ from the other readers'", rname)
		}
		events = got
	}
	prevRV := 235
	for i, ev := range events {
		if ev.typ != wantTypes[i] {
			t.Errorf("event %d: type %q, want %q", i, ev.typ, wantTypes[i])
		}
		u, err := codec.DecodeEnvelope(ev.object)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if u.TypeMeta != (metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}) {
			t.Errorf("event %d: %+v", i, u.TypeMeta)
		}
		// ConfigMap.metadata is field 1; ObjectMeta.name 1, resourceVersion 6.
		meta := []byte(pbString(u.Raw, 1))
		rv, err := strconv.Atoi(pbString(meta, 6))
		if err != nil || pbString(meta, 1) != "w-1" || rv <= prevRV {
			t.Errorf("event %d: name %q, resourceVersion %q after %d", i, pbString(meta, 1), pbString(meta, 6), prevRV)
		}
		prevRV = rv
	}

	// Re-encoding gives the same bytes, one write per event.
	var out writeCounter
	enc := codec.NewProtobufWatchEncoder(&out)
	for _, ev := range events {
		if err := enc.Encode(ev.typ, ev.object); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out.buf.Bytes(), body) {
		t.Errorf("re-encoded stream differs:\n got %x\nwant %x", out.buf.Bytes(), body)
	}
	if out.writes != len(events) {
		t.Errorf("%d writes for %d events", out.writes, len(events))
	}
	// Encoding the objects afresh from TypeMeta and raw gives the same bytes too.
	out = writeCounter{}
	enc = codec.NewProtobufWatchEncoder(&out.buf)
	for _, ev := range events {
		u, _ := codec.DecodeEnvelope(ev.object)
		if err := enc.Encode(ev.typ, codec.EncodeEnvelope(nil, u.TypeMeta, u.Raw)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out.buf.Bytes(), body) {
		t.Errorf("stream from fresh envelopes differs")
	}
}

func TestProtobufWatchTruncated(t *testing.T) {
	body, err := os.ReadFile("../testdata/golden/94-watch-protobuf-from-rv.body.pb")
	if err != nil {
		t.Fatal(err)
	}
	ends := protobufFrameEnds(t, body)
	for i := range len(body) {
		complete := 0
		for e := range ends {
			if e <= i {
				complete++
			}
		}
		for rname, newReader := range map[string]func([]byte) io.Reader{"plain": readers["plain"], "onebyte": readers["onebyte"]} {
			events, err := decodeAll(codec.NewProtobufWatchDecoder(newReader(body[:i])))
			if len(events) != complete {
				t.Errorf("[:%d] %s: %d events, want %d", i, rname, len(events), complete)
			}
			if clean := i == 0 || ends[i]; clean && err != io.EOF || !clean && err != io.ErrUnexpectedEOF {
				t.Errorf("[:%d] %s: error %v (clean end: %v)", i, rname, err, clean)
			}
		}
	}
}

// frame builds a protobuf watch frame around message m.
func frame(m []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(m))), m...)
}

func TestProtobufWatchMalformed(t *testing.T) {
	env := codec.EncodeEnvelope(nil, metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, []byte{1, 2})
	rawExt := string(pbField(1, string(env)))
	good := cat(pbField(1, "ADDED"), pbField(2, rawExt))
	tests := []struct {
		name string
		msg  []byte
	}{
		{"empty frame", nil},
		{"missing type", pbField(2, rawExt)},
		{"empty type", cat(pbField(1, ""), pbField(2, rawExt))},
		{"missing object", pbField(1, "ADDED")},
		{"type as varint", cat([]byte{0x08, 0x01}, pbField(2, rawExt))},
		{"object as fixed32", cat(pbField(1, "ADDED"), []byte{0x15, 1, 2, 3, 4})},
		{"raw as varint", cat(pbField(1, "ADDED"), pbField(2, "\x08\x01"))},
		{"truncated field in frame", cat(pbField(1, "ADDED"), []byte{0x12, 0x05, 0x0a})},
		{"truncated raw in object", cat(pbField(1, "ADDED"), pbField(2, "\x0a\x05ab"))},
		{"bad unknown field in object", cat(pbField(1, "ADDED"), pbField(2, "\x0f"))},
		{"field 0", cat(good, []byte{0x00})},
		{"reserved wire type", cat(good, []byte{0x1e})},
	}
	for _, tt := range tests {
		// A bad frame is reported, and the frame after it still decodes.
		stream := cat(frame(tt.msg), frame(good))
		d := codec.NewProtobufWatchDecoder(bytes.NewReader(stream))
		typ, obj, err := d.Next()
		var we *codec.WatchEventError
		if !errors.As(err, &we) || !errors.Is(err, codec.ErrMalformedWatchEvent) || we.Offset != 0 {
			t.Errorf("%s: Next = %q, %x, %v; want *WatchEventError at 0", tt.name, typ, obj, err)
		}
		typ, obj, err = d.Next()
		if err != nil || typ != codec.EventAdded || !bytes.Equal(obj, env) {
			t.Errorf("%s: next frame = %q, %x, %v", tt.name, typ, obj, err)
		}
		if _, _, err := d.Next(); err != io.EOF {
			t.Errorf("%s: end = %v", tt.name, err)
		}
	}

	// Unknown fields are skipped; the object is returned as found, even if it
	// is not an envelope (DecodeEnvelope checks that).
	group := []byte{0x2b, 0x08, 0x01, 0x2c}
	msg := cat([]byte{0x18, 0x07}, group, pbField(2, "\x10\x01\x0a\x03xyz\x1a\x00"), pbField(9, "x"), pbField(1, "CUSTOM"))
	typ, obj, err := codec.NewProtobufWatchDecoder(bytes.NewReader(frame(msg))).Next()
	if err != nil || typ != "CUSTOM" || string(obj) != "xyz" {
		t.Errorf("unknown fields: %q, %q, %v", typ, obj, err)
	}
	// A RawExtension without raw gives an empty object.
	typ, obj, err = codec.NewProtobufWatchDecoder(bytes.NewReader(frame(cat(pbField(1, "BOOKMARK"), pbField(2, ""))))).Next()
	if err != nil || typ != "BOOKMARK" || obj == nil || len(obj) != 0 {
		t.Errorf("empty object: %q, %q, %v", typ, obj, err)
	}
}

func TestProtobufWatchMaxFrameSize(t *testing.T) {
	body, err := os.ReadFile("../testdata/golden/94-watch-protobuf-from-rv.body.pb")
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	for off := 0; off < len(body); {
		n := int(binary.BigEndian.Uint32(body[off:]))
		largest = max(largest, n)
		off += 4 + n
	}
	d := codec.NewProtobufWatchDecoder(bytes.NewReader(body))
	d.MaxFrameSize = largest
	if events, err := decodeAll(d); err != io.EOF || len(events) != 6 {
		t.Errorf("limit %d: %d events, %v", largest, len(events), err)
	}
	d = codec.NewProtobufWatchDecoder(bytes.NewReader(body))
	d.MaxFrameSize = largest - 1
	_, err = decodeAll(d)
	var se *codec.WatchFrameSizeError
	if !errors.As(err, &se) || se.Size != int64(largest) || se.Max != largest-1 || !errors.Is(err, codec.ErrWatchFrameTooLarge) {
		t.Errorf("limit %d: %v", largest-1, err)
	}
	if _, _, err2 := d.Next(); err2 != err {
		t.Errorf("size error is not sticky: %v", err2)
	}

	// A header announcing 4 GiB is refused at once; one announcing 15 MiB
	// followed by a few bytes costs no more memory than what arrived.
	for _, tt := range []struct {
		header uint32
		want   error
	}{
		{0xffffffff, codec.ErrWatchFrameTooLarge},
		{15 << 20, io.ErrUnexpectedEOF},
	} {
		stream := cat(binary.BigEndian.AppendUint32(nil, tt.header), []byte("short"))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := codec.NewProtobufWatchDecoder(bytes.NewReader(stream)).Next()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, tt.want) {
			t.Errorf("header %d: %v, want %v", tt.header, err, tt.want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("header %d: allocated %d bytes", tt.header, grew)
		}
	}
}

func TestProtobufWatchReaderError(t *testing.T) {
	body, err := os.ReadFile("../testdata/golden/94-watch-protobuf-from-rv.body.pb")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, n := range []int{0, 2, 4, 10, 206} {
		d := codec.NewProtobufWatchDecoder(io.MultiReader(bytes.NewReader(body[:n]), iotest.ErrReader(boom)))
		if _, err := decodeAll(d); err != boom {
			t.Errorf("after %d bytes: %v, want boom", n, err)
		}
	}
}

func TestProtobufWatchEncoder(t *testing.T) {
	var buf bytes.Buffer
	enc := codec.NewProtobufWatchEncoder(&buf)
	for _, tt := range []struct {
		typ string
		obj []byte
		is  error
	}{
		{"", []byte(codec.EnvelopeMagic), codec.ErrMalformedWatchEvent},
		{"ADDED", nil, io.ErrUnexpectedEOF},
		{"ADDED", []byte(`{"kind":"Pod"}`), codec.ErrNotProtobufEnvelope},
	} {
		err := enc.Encode(tt.typ, tt.obj)
		if !errors.Is(err, codec.ErrMalformedWatchEvent) || !errors.Is(err, tt.is) {
			t.Errorf("Encode(%q, %q) = %v, want %v", tt.typ, tt.obj, err, tt.is)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %x", buf.Bytes())
	}
	boom := errors.New("boom")
	if err := codec.NewProtobufWatchEncoder(errWriter{boom}).Encode("ADDED", []byte(codec.EnvelopeMagic)); err != boom {
		t.Errorf("write error: %v", err)
	}
}

func TestWatchRoundTrip(t *testing.T) {
	var events []watchEvent
	types := []string{codec.EventAdded, codec.EventModified, codec.EventDeleted, codec.EventBookmark, codec.EventError, "CUSTOM"}
	for i := range 50 {
		payload := strings.Repeat("é", i*i*7) // up to ~33 KiB, so buffers grow
		obj := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"n%d"},"data":{"k":%q}}`, i, payload)
		events = append(events, watchEvent{types[i%len(types)], []byte(obj)})
	}

	var jsonStream, pbStream bytes.Buffer
	je, pe := codec.NewJSONWatchEncoder(&jsonStream), codec.NewProtobufWatchEncoder(&pbStream)
	for _, ev := range events {
		if err := je.Encode(ev.typ, ev.object); err != nil {
			t.Fatal(err)
		}
		if err := pe.Encode(ev.typ, codec.EncodeEnvelope(nil, metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ev.object)); err != nil {
			t.Fatal(err)
		}
	}
	for rname, newReader := range readers {
		got, err := decodeAll(codec.NewJSONWatchDecoder(newReader(jsonStream.Bytes())))
		if err != io.EOF || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", events) {
			t.Errorf("JSON %s: %d events, %v", rname, len(got), err)
		}
		got, err = decodeAll(codec.NewProtobufWatchDecoder(newReader(pbStream.Bytes())))
		if err != io.EOF || len(got) != len(events) {
			t.Fatalf("protobuf %s: %d events, %v", rname, len(got), err)
		}
		for i, ev := range got {
			u, err := codec.DecodeEnvelope(ev.object)
			if err != nil || ev.typ != events[i].typ || !bytes.Equal(u.Raw, events[i].object) {
				t.Errorf("protobuf %s: event %d = %q %s, %v", rname, i, ev.typ, u.Raw, err)
			}
		}
	}
}

// errorClass sorts decoder errors for comparing two decodings.
func errorClass(err error) string {
	switch {
	case err == io.EOF:
		return "EOF"
	case err == io.ErrUnexpectedEOF:
		return "unexpected EOF"
	case errors.Is(err, codec.ErrMalformedWatchEvent):
		return "malformed"
	case errors.Is(err, codec.ErrWatchFrameTooLarge):
		return "too large"
	}
	return "other: " + err.Error()
}

func FuzzJSONWatchDecoder(f *testing.F) {
	for _, name := range jsonWatchGoldens[:2] {
		_, body := goldenExchange(f, name)
		f.Add(body)
	}
	f.Add([]byte(`{"type":"ADDED","object":{}} {"object":{"a":[1,2,{"b":null}]},"type":"X"}`))
	f.Add([]byte(`{"\u0074ype":"ADDED","object":{"x":"\ud83d\ude00"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		events, err := decodeAll(codec.NewJSONWatchDecoder(bytes.NewReader(b)))
		class := errorClass(err)
		if strings.HasPrefix(class, "other") {
			t.Fatalf("unexpected error %v", err)
		}
		// Reading one byte at a time changes nothing.
		events1, err1 := decodeAll(codec.NewJSONWatchDecoder(iotest.OneByteReader(bytes.NewReader(b))))
		if fmt.Sprintf("%q", events1) != fmt.Sprintf("%q", events) || errorClass(err1) != class {
			t.Fatalf("one byte at a time: %q, %v; at once: %q, %v", events1, err1, events, err)
		}
		// Every event re-encodes, and decodes back to its compacted form.
		var buf bytes.Buffer
		enc := codec.NewJSONWatchEncoder(&buf)
		for _, ev := range events {
			if err := enc.Encode(ev.typ, ev.object); err != nil {
				t.Fatalf("Encode(%q, %s): %v", ev.typ, ev.object, err)
			}
		}
		again, err := decodeAll(codec.NewJSONWatchDecoder(&buf))
		if err != io.EOF || len(again) != len(events) {
			t.Fatalf("re-decoding: %d events, %v", len(again), err)
		}
		for i, ev := range events {
			compact := jsontext.Value(bytes.Clone(ev.object))
			if err := compact.Compact(); err != nil {
				t.Fatal(err)
			}
			if again[i].typ != ev.typ || !bytes.Equal(again[i].object, compact) {
				t.Fatalf("event %d: %q %s became %q %s", i, ev.typ, ev.object, again[i].typ, again[i].object)
			}
		}
	})
}

// decodeAllProtobuf reads a protobuf stream to its end, skipping malformed
// frames, and returns the events and the final error.
func decodeAllProtobuf(d *codec.ProtobufWatchDecoder) (events []watchEvent, malformed int, err error) {
	for {
		typ, obj, err := d.Next()
		if errors.Is(err, codec.ErrMalformedWatchEvent) {
			malformed++
			continue
		}
		if err != nil {
			return events, malformed, err
		}
		events = append(events, watchEvent{typ, bytes.Clone(obj)})
	}
}

func FuzzProtobufWatchDecoder(f *testing.F) {
	body, err := os.ReadFile("../testdata/golden/94-watch-protobuf-from-rv.body.pb")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add(body[:300])
	f.Add(frame(cat(pbField(1, "ADDED"), pbField(2, string(pbField(1, "k8s\x00"))))))
	f.Add([]byte{0, 0, 0, 2, 0x08, 0x01, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := codec.NewProtobufWatchDecoder(bytes.NewReader(b))
		d.MaxFrameSize = 1 << 16
		events, malformed, err := decodeAllProtobuf(d)
		class := errorClass(err)
		if strings.HasPrefix(class, "other") {
			t.Fatalf("unexpected error %v", err)
		}
		d1 := codec.NewProtobufWatchDecoder(iotest.OneByteReader(bytes.NewReader(b)))
		d1.MaxFrameSize = 1 << 16
		events1, malformed1, err1 := decodeAllProtobuf(d1)
		if fmt.Sprintf("%q", events1) != fmt.Sprintf("%q", events) || malformed1 != malformed || errorClass(err1) != class {
			t.Fatalf("one byte at a time: %q, %d, %v; at once: %q, %d, %v", events1, malformed1, err1, events, malformed, err)
		}
		// Events whose object is an envelope re-encode and decode back.
		var buf bytes.Buffer
		enc := codec.NewProtobufWatchEncoder(&buf)
		var kept []watchEvent
		for _, ev := range events {
			if !bytes.HasPrefix(ev.object, []byte(codec.EnvelopeMagic)) {
				continue
			}
			if err := enc.Encode(ev.typ, ev.object); err != nil {
				t.Fatalf("Encode(%q, %x): %v", ev.typ, ev.object, err)
			}
			kept = append(kept, ev)
		}
		again, err := decodeAll(codec.NewProtobufWatchDecoder(&buf))
		if err != io.EOF || fmt.Sprintf("%q", again) != fmt.Sprintf("%q", kept) {
			t.Fatalf("re-decoding: %q, %v; want %q", again, err, kept)
		}
	})
}

// watchBenchStream returns n copies of a golden watch stream, its events, and
// the number of bytes of one copy.
func jsonBenchStream(b *testing.B, n int) (stream []byte, events []watchEvent) {
	_, body := goldenExchange(b, "93-watch-json-from-rv.txt")
	events, err := decodeAll(codec.NewJSONWatchDecoder(bytes.NewReader(body)))
	if err != io.EOF {
		b.Fatal(err)
	}
	return bytes.Repeat(body, n), events
}

func protobufBenchStream(b *testing.B, n int) (stream []byte, events []watchEvent) {
	body, err := os.ReadFile("../testdata/golden/94-watch-protobuf-from-rv.body.pb")
	if err != nil {
		b.Fatal(err)
	}
	events, err = decodeAll(codec.NewProtobufWatchDecoder(bytes.NewReader(body)))
	if err != io.EOF {
		b.Fatal(err)
	}
	return bytes.Repeat(body, n), events
}

// Each decode benchmark iteration reads a stream of 1000 events.

func BenchmarkJSONWatchDecode(b *testing.B) {
	stream, _ := jsonBenchStream(b, 250)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	r := bytes.NewReader(stream)
	for b.Loop() {
		r.Reset(stream)
		d := codec.NewJSONWatchDecoder(r)
		n := 0
		for {
			_, _, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1000 {
			b.Fatalf("%d events", n)
		}
	}
}

func BenchmarkJSONWatchEncode(b *testing.B) {
	stream, events := jsonBenchStream(b, 1)
	enc := codec.NewJSONWatchEncoder(io.Discard)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		for _, ev := range events {
			if err := enc.Encode(ev.typ, ev.object); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkProtobufWatchDecode(b *testing.B) {
	stream, _ := protobufBenchStream(b, 1000/6+1)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	r := bytes.NewReader(stream)
	for b.Loop() {
		r.Reset(stream)
		d := codec.NewProtobufWatchDecoder(r)
		for {
			_, _, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkProtobufWatchEncode(b *testing.B) {
	stream, events := protobufBenchStream(b, 1)
	enc := codec.NewProtobufWatchEncoder(io.Discard)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		for _, ev := range events {
			if err := enc.Encode(ev.typ, ev.object); err != nil {
				b.Fatal(err)
			}
		}
	}
}
