package codec_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/encoding/protowire"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// goldenEnvelopes returns the golden protobuf bodies that are envelopes (all but
// the watch stream), of both releases (golden.Releases), by directory and file
// name ("golden-1.37/08-get-configmap-protobuf.body.pb").
func goldenEnvelopes(t testing.TB) map[string][]byte {
	t.Helper()
	var files []string
	for _, dir := range []string{"../testdata/golden", "../testdata/golden-1.37"} {
		f, err := filepath.Glob(dir + "/*.body.pb")
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f...)
	}
	out := map[string][]byte{}
	for _, f := range files {
		if strings.Contains(f, "watch") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f)] = b
	}
	if len(out) < 26 {
		t.Fatalf("found %d golden envelopes, want at least 26", len(out))
	}
	return out
}

func TestDecodeEnvelopeGolden(t *testing.T) {
	want := map[string]metav1.TypeMeta{
		"08-get-configmap-protobuf.body.pb":         {Kind: "ConfigMap", APIVersion: "v1"},
		"10-get-secret-protobuf.body.pb":            {Kind: "Secret", APIVersion: "v1"},
		"14-get-pod-protobuf.body.pb":               {Kind: "Pod", APIVersion: "v1"},
		"17-get-node-protobuf.body.pb":              {Kind: "Node", APIVersion: "v1"},
		"19-get-service-protobuf.body.pb":           {Kind: "Service", APIVersion: "v1"},
		"20-get-serviceaccount-protobuf.body.pb":    {Kind: "ServiceAccount", APIVersion: "v1"},
		"22-get-event-protobuf.body.pb":             {Kind: "Event", APIVersion: "v1"},
		"24-get-lease-protobuf.body.pb":             {Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
		"26-get-deployment-protobuf.body.pb":        {Kind: "Deployment", APIVersion: "apps/v1"},
		"28-get-namespace-protobuf.body.pb":         {Kind: "Namespace", APIVersion: "v1"},
		"32-list-configmaps-protobuf.body.pb":       {Kind: "ConfigMapList", APIVersion: "v1"},
		"34-list-pods-protobuf.body.pb":             {Kind: "PodList", APIVersion: "v1"},
		"89-widget-protobuf-only.body.pb":           {Kind: "Status", APIVersion: "v1"},
		"aggregated-discovery-api-protobuf.body.pb": {Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		// kube-apiserver v1.37.2
		"proto-get-crd-protobuf.body.pb":                 {Kind: "CustomResourceDefinition", APIVersion: "apiextensions.k8s.io/v1"},
		"proto-create-crd-protobuf.body.pb":              {Kind: "CustomResourceDefinition", APIVersion: "apiextensions.k8s.io/v1"},
		"proto-list-crd-protobuf.body.pb":                {Kind: "CustomResourceDefinitionList", APIVersion: "apiextensions.k8s.io/v1"},
		"proto-get-scale-deployment-protobuf.body.pb":    {Kind: "Scale", APIVersion: "autoscaling/v1"},
		"proto-update-scale-deployment-protobuf.body.pb": {Kind: "Scale", APIVersion: "autoscaling/v1"},
		"proto-get-scale-gear-protobuf.body.pb":          {Kind: "Status", APIVersion: "v1"},
		"proto-update-scale-gear-protobuf.body.pb":       {Kind: "Status", APIVersion: "v1"},
	}
	for name, b := range goldenEnvelopes(t) {
		t.Run(name, func(t *testing.T) {
			u, err := codec.DecodeEnvelope(b)
			if err != nil {
				t.Fatal(err)
			}
			if w, ok := want[filepath.Base(name)]; !ok || u.TypeMeta != w {
				t.Errorf("TypeMeta = %+v, want %+v", u.TypeMeta, w)
			}
			if u.ContentEncoding != "" || u.ContentType != "" {
				t.Errorf("ContentEncoding, ContentType = %q, %q", u.ContentEncoding, u.ContentType)
			}
			if len(u.Raw) == 0 || !bytes.Contains(b, u.Raw) {
				t.Errorf("Raw has %d bytes", len(u.Raw))
			}
			// Kubernetes writes every field, so re-encoding gives the same bytes.
			if got := codec.EncodeEnvelope(nil, u.TypeMeta, u.Raw); !bytes.Equal(got, b) {
				t.Errorf("EncodeEnvelope differs from the golden body:\n got %x\nwant %x", got, b)
			}
			if got := u.AppendEnvelope([]byte("prefix")); string(got[:6]) != "prefix" || !bytes.Equal(got[6:], b) {
				t.Errorf("AppendEnvelope with a prefix differs")
			}
			if !bytes.HasSuffix(b, []byte{0x1a, 0x00, 0x22, 0x00}) {
				t.Errorf("golden body does not end with empty contentEncoding and contentType")
			}

			// The streaming reader finds the same, with any buffering.
			readers := map[string]func() io.Reader{
				"plain":   func() io.Reader { return bytes.NewReader(b) },
				"onebyte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
				"half":    func() io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
				"dataerr": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
			}
			for rname, newReader := range readers {
				br := bufio.NewReaderSize(newReader(), 16)
				h, raw, err := codec.ReadEnvelopeHeader(br)
				if err != nil {
					t.Fatalf("%s: ReadEnvelopeHeader: %v", rname, err)
				}
				if h.TypeMeta != u.TypeMeta || h.RawSize != int64(len(u.Raw)) || h.ContentEncoding != "" || h.ContentType != "" {
					t.Errorf("%s: header %+v", rname, h)
				}
				got, err := io.ReadAll(raw)
				if err != nil || !bytes.Equal(got, u.Raw) {
					t.Errorf("%s: raw = %d bytes, %v; want %d bytes", rname, len(got), err, len(u.Raw))
				}
				if n, err := raw.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Errorf("%s: raw read after the end = %d, %v", rname, n, err)
				}
				rest, _ := io.ReadAll(br)
				if !bytes.Equal(rest, []byte{0x1a, 0x00, 0x22, 0x00}) {
					t.Errorf("%s: left after raw: %x", rname, rest)
				}
			}
		})
	}
}

func TestDecodeEnvelopeWrongMagic(t *testing.T) {
	// Golden 57 sent this body as protobuf; Kubernetes answered with the
	// expected prefix and, in hex, the data.
	_, body := goldenExchangeRequest(t, "57-bad-protobuf-magic.txt")
	if string(body) != "xyz\x00\n\x00" {
		t.Fatalf("golden 57 request body = %q", body)
	}
	for _, in := range [][]byte{
		body,
		[]byte(`{"kind":"ConfigMap","apiVersion":"v1"}`),
		[]byte("k9"),
		[]byte("K8s\x00\x0a\x00"),
		{0},
		bytes.Repeat([]byte{0xff}, 40),
	} {
		_, err := codec.DecodeEnvelope(in)
		var pe *codec.EnvelopePrefixError
		if !errors.As(err, &pe) || !errors.Is(err, codec.ErrNotProtobufEnvelope) || errors.Is(err, codec.ErrMalformedEnvelope) {
			t.Errorf("DecodeEnvelope(%q) error = %v, want *EnvelopePrefixError", in, err)
			continue
		}
		if !bytes.Equal(pe.Found, in[:min(len(in), 16)]) {
			t.Errorf("Found = %x, want %x", pe.Found, in)
		}
		if msg := err.Error(); !strings.Contains(msg, "6b387300") || !strings.Contains(msg, "found "+hexString(in[:min(len(in), 16)])) {
			t.Errorf("message %q does not show what was expected and found", msg)
		}
		_, _, err = codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(in)))
		if !errors.As(err, &pe) {
			t.Errorf("ReadEnvelopeHeader(%q) error = %v, want *EnvelopePrefixError", in, err)
		}
	}
	if _, err := codec.DecodeEnvelope(body); !strings.Contains(err.Error(), "78797a000a00") {
		t.Errorf("message %q does not hold the data in hex like golden 57", err)
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

// goldenExchangeRequest returns the request line and body of a golden exchange.
func goldenExchangeRequest(t testing.TB, name string) (line string, body []byte) {
	t.Helper()
	b, err := os.ReadFile("../testdata/golden/" + name)
	if err != nil {
		t.Fatal(err)
	}
	req, _, ok := bytes.Cut(b, []byte("\n---\n"))
	if !ok {
		t.Fatalf("%s: no response", name)
	}
	head, body, _ := bytes.Cut(req, []byte("\n\n"))
	line, _, _ = strings.Cut(string(head), "\n")
	return line, body
}

// envelopeBoundaries returns the offsets at which the top-level fields of an
// envelope end (and the end of the magic): the prefixes that are themselves
// valid envelopes. It also returns the offset of the end of the raw field.
func envelopeBoundaries(t testing.TB, b []byte) (ends map[int]bool, rawEnd int) {
	ends = map[int]bool{4: true}
	for off := 4; off < len(b); {
		num, _, n := protowire.ConsumeField(b[off:])
		if n < 0 {
			t.Fatalf("golden envelope: %v", protowire.ParseError(n))
		}
		off += n
		ends[off] = true
		if num == 2 {
			rawEnd = off
		}
	}
	return ends, rawEnd
}

func TestDecodeEnvelopeTruncated(t *testing.T) {
	for name, b := range goldenEnvelopes(t) {
		full, err := codec.DecodeEnvelope(b)
		if err != nil {
			t.Fatal(err)
		}
		ends, rawEnd := envelopeBoundaries(t, b)
		for i := range len(b) {
			u, err := codec.DecodeEnvelope(b[:i])
			if ends[i] {
				// A prefix ending between fields is a valid envelope holding
				// the fields so far.
				if err != nil {
					t.Errorf("%s[:%d]: %v", name, i, err)
				}
				if i >= rawEnd && !bytes.Equal(u.Raw, full.Raw) || i < rawEnd && u.Raw != nil {
					t.Errorf("%s[:%d]: Raw has %d bytes", name, i, len(u.Raw))
				}
			} else {
				var ee *codec.EnvelopeError
				if !errors.As(err, &ee) || !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, codec.ErrMalformedEnvelope) {
					t.Errorf("%s[:%d]: error = %v, want a truncated *EnvelopeError", name, i, err)
				} else if ee.Offset < 0 || ee.Offset > int64(i) {
					t.Errorf("%s[:%d]: error offset %d", name, i, ee.Offset)
				}
			}

			// The streaming reader fails on every prefix that cuts the header
			// or raw, and succeeds once raw is complete.
			h, raw, err := codec.ReadEnvelopeHeader(bufio.NewReaderSize(bytes.NewReader(b[:i]), 16))
			if err == nil {
				_, err = io.Copy(io.Discard, raw)
			}
			switch {
			case i >= rawEnd:
				if err != nil || h.RawSize != int64(len(full.Raw)) {
					t.Errorf("%s[:%d] streaming: %v, RawSize %d", name, i, err, h.RawSize)
				}
			case ends[i]:
				if err != nil || h.RawSize != -1 {
					t.Errorf("%s[:%d] streaming: %v, RawSize %d, want no raw", name, i, err, h.RawSize)
				}
			default:
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%s[:%d] streaming: error = %v, want io.ErrUnexpectedEOF", name, i, err)
				}
			}
		}
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 300)
	for _, u := range []codec.Unknown{
		{},
		{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, Raw: []byte{}},
		{TypeMeta: metav1.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}, Raw: big, ContentEncoding: "gzip", ContentType: "application/json"},
		{TypeMeta: metav1.TypeMeta{Kind: strings.Repeat("K", 200)}, Raw: []byte{0, 1, 2}},
	} {
		b := u.AppendEnvelope(nil)
		got, err := codec.DecodeEnvelope(b)
		if err != nil {
			t.Fatalf("%+v: %v", u, err)
		}
		if got.TypeMeta != u.TypeMeta || !bytes.Equal(got.Raw, u.Raw) || got.Raw == nil ||
			got.ContentEncoding != u.ContentEncoding || got.ContentType != u.ContentType {
			t.Errorf("round trip of %+v = %+v", u, got)
		}
		h, raw, err := codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		rb, err := io.ReadAll(raw)
		if err != nil || h.TypeMeta != u.TypeMeta || !bytes.Equal(rb, u.Raw) {
			t.Errorf("streaming round trip of %+v = %+v, %q, %v", u, h, rb, err)
		}
	}
	// Raw aliases the input and cannot be appended to in place.
	b := codec.EncodeEnvelope(nil, metav1.TypeMeta{Kind: "A"}, []byte("abc"))
	u, _ := codec.DecodeEnvelope(b)
	if cap(u.Raw) != len(u.Raw) {
		t.Errorf("Raw capacity %d extends past its length %d", cap(u.Raw), len(u.Raw))
	}
}

// pbField builds a length-delimited protobuf field.
func pbField(num protowire.Number, v string) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestDecodeEnvelopeFields(t *testing.T) {
	magic := []byte(codec.EnvelopeMagic)
	tm := func(apiVersion, kind string) []byte {
		return pbField(1, string(cat(pbField(1, apiVersion), pbField(2, kind))))
	}
	varintField := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	group := cat(protowire.AppendTag(nil, 9, protowire.StartGroupType),
		varintField(1, 5), pbField(2, "x"),
		protowire.AppendTag(nil, 3, protowire.StartGroupType), protowire.AppendTag(nil, 3, protowire.EndGroupType),
		protowire.AppendTag(nil, 9, protowire.EndGroupType))
	fixed := cat(protowire.AppendFixed32(protowire.AppendTag(nil, 6, protowire.Fixed32Type), 7),
		protowire.AppendFixed64(protowire.AppendTag(nil, 7, protowire.Fixed64Type), 8))

	tests := []struct {
		name string
		in   []byte
		want codec.Unknown
	}{
		{"only magic", magic, codec.Unknown{}},
		{"no raw", cat(magic, tm("v1", "Pod")), codec.Unknown{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}},
		{"all fields, other order", cat(magic, pbField(4, "ct"), pbField(3, "ce"), pbField(2, "raw"), tm("v1", "Pod")),
			codec.Unknown{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Raw: []byte("raw"), ContentEncoding: "ce", ContentType: "ct"}},
		{"unknown fields skipped", cat(magic, varintField(5, 1<<40), group, fixed, pbField(8, "zzz"), pbField(2, "raw"), pbField(100000, "x")),
			codec.Unknown{Raw: []byte("raw")}},
		{"unknown typeMeta fields skipped", cat(magic, pbField(1, string(cat(varintField(3, 1), pbField(2, "Pod"), fixed, pbField(1, "v1")))), pbField(2, "")),
			codec.Unknown{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, Raw: []byte{}}},
		{"repeated fields: last wins, typeMeta merges", cat(magic, tm("v1", "A"), pbField(2, "r1"), pbField(1, string(pbField(2, "B"))), pbField(2, "r2"), pbField(4, "a"), pbField(4, "b")),
			codec.Unknown{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "B"}, Raw: []byte("r2"), ContentType: "b"}},
	}
	for _, tt := range tests {
		got, err := codec.DecodeEnvelope(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got.Raw == nil && tt.want.Raw != nil || got.Raw != nil && tt.want.Raw == nil {
			t.Errorf("%s: Raw nil = %v, want %v", tt.name, got.Raw == nil, tt.want.Raw == nil)
		}
		if got.TypeMeta != tt.want.TypeMeta || !bytes.Equal(got.Raw, tt.want.Raw) ||
			got.ContentEncoding != tt.want.ContentEncoding || got.ContentType != tt.want.ContentType {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}

	// The streaming reader stops at the first raw; what precedes it is the same.
	h, raw, err := codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(tests[2].in)))
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(raw)
	if want := (codec.EnvelopeHeader{ContentEncoding: "ce", ContentType: "ct", RawSize: 3}); h != want || string(rb) != "raw" {
		t.Errorf("ReadEnvelopeHeader = %+v, %q; want %+v", h, rb, want)
	}
	h, raw, err = codec.ReadEnvelopeHeader(bufio.NewReaderSize(bytes.NewReader(tests[3].in), 16))
	if err != nil {
		t.Fatal(err)
	}
	if rb, _ := io.ReadAll(raw); h.RawSize != 3 || string(rb) != "raw" {
		t.Errorf("ReadEnvelopeHeader with unknown fields = %+v, %q", h, rb)
	}
}

func TestDecodeEnvelopeMalformed(t *testing.T) {
	magic := []byte(codec.EnvelopeMagic)
	tests := []struct {
		name string
		in   []byte
	}{
		{"field 0", cat(magic, []byte{0x02, 0x00})},
		{"typeMeta as varint", cat(magic, []byte{0x08, 0x01})},
		{"raw as fixed32", cat(magic, []byte{0x15, 1, 2, 3, 4})},
		{"contentType as varint", cat(magic, []byte{0x20, 0x01})},
		{"varint overflow", cat(magic, []byte{0x28}, bytes.Repeat([]byte{0xff}, 9), []byte{0x02})},
		{"tag overflow", cat(magic, bytes.Repeat([]byte{0xff}, 10), []byte{0x01})},
		{"reserved wire type 6", cat(magic, []byte{0x2e})},
		{"reserved wire type 7", cat(magic, []byte{0x2f})},
		{"end group without start", cat(magic, []byte{0x2c})},
		{"mismatched end group", cat(magic, []byte{0x2b, 0x34})},
		{"bad typeMeta content", cat(magic, []byte{0x0a, 0x02, 0x08, 0xff})},
		{"typeMeta kind as varint", cat(magic, []byte{0x0a, 0x02, 0x10, 0x01})},
		{"typeMeta field 0", cat(magic, []byte{0x0a, 0x02, 0x00, 0x00})},
		{"length beyond data", cat(magic, []byte{0x12, 0x7f, 0x00})},
		{"huge length", cat(magic, []byte{0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})},
	}
	for _, tt := range tests {
		u, err := codec.DecodeEnvelope(tt.in)
		var ee *codec.EnvelopeError
		if !errors.As(err, &ee) || !errors.Is(err, codec.ErrMalformedEnvelope) {
			t.Errorf("%s: DecodeEnvelope = %+v, %v; want *EnvelopeError", tt.name, u, err)
		} else if ee.Offset < 4 || ee.Offset >= int64(len(tt.in)) {
			t.Errorf("%s: offset %d", tt.name, ee.Offset)
		}
		// The streaming reader fails too, unless the problem lies past raw.
		h, raw, err := codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(tt.in)))
		if err == nil {
			_, err = io.Copy(io.Discard, raw)
		}
		if err == nil || !errors.Is(err, codec.ErrMalformedEnvelope) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: ReadEnvelopeHeader = %+v, %v; want an error", tt.name, h, err)
		}
	}
}

func TestReadEnvelopeHeaderLimits(t *testing.T) {
	magic := []byte(codec.EnvelopeMagic)
	// A typeMeta announced at 1 GiB is refused without reading it.
	huge := cat(magic, []byte{0x0a}, protowire.AppendVarint(nil, 1<<30))
	_, _, err := codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(huge)))
	if !errors.Is(err, codec.ErrMalformedEnvelope) || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("huge typeMeta: %v", err)
	}
	// An unknown field of 1 GiB before raw is skipped, not buffered; here the
	// stream ends inside it.
	unknown := cat(magic, []byte{0x42}, protowire.AppendVarint(nil, 1<<30), make([]byte, 100))
	_, _, err = codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(unknown)))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated unknown field: %v", err)
	}
	// A raw announced larger than the data: the raw reader reports the cut.
	cut := cat(magic, []byte{0x12}, protowire.AppendVarint(nil, 1<<40), []byte("abc"))
	h, raw, err := codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(cut)))
	if err != nil || h.RawSize != 1<<40 {
		t.Fatalf("ReadEnvelopeHeader = %+v, %v", h, err)
	}
	got, err := io.ReadAll(raw)
	if string(got) != "abc" || err != io.ErrUnexpectedEOF {
		t.Errorf("raw = %q, %v; want abc, io.ErrUnexpectedEOF", got, err)
	}
	// The reader's own errors come back as they are.
	boom := errors.New("boom")
	_, _, err = codec.ReadEnvelopeHeader(bufio.NewReader(io.MultiReader(bytes.NewReader(magic), iotest.ErrReader(boom))))
	if err != boom {
		t.Errorf("reader error: %v, want boom", err)
	}
	_, _, err = codec.ReadEnvelopeHeader(bufio.NewReader(iotest.ErrReader(boom)))
	if err != boom {
		t.Errorf("reader error on magic: %v, want boom", err)
	}
	// An empty body is a truncated envelope.
	_, _, err = codec.ReadEnvelopeHeader(bufio.NewReader(strings.NewReader("")))
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, codec.ErrMalformedEnvelope) {
		t.Errorf("empty body: %v", err)
	}
	if _, err := codec.DecodeEnvelope(nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("DecodeEnvelope(nil): %v", err)
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	for _, b := range goldenEnvelopes(f) {
		f.Add(b)
	}
	f.Add([]byte(codec.EnvelopeMagic))
	f.Add([]byte("k8s\x00\x0a\x00\x12\x00\x4b\x4c\x1a\x00"))
	f.Add([]byte("xyz\x00\n\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := codec.DecodeEnvelope(b)
		// The streaming reader must never panic or loop, whatever the input.
		h, raw, serr := codec.ReadEnvelopeHeader(bufio.NewReaderSize(bytes.NewReader(b), 16))
		if serr == nil {
			n, _ := io.Copy(io.Discard, raw)
			if h.RawSize >= 0 && n > h.RawSize {
				t.Fatalf("raw reader returned %d bytes, RawSize %d", n, h.RawSize)
			}
		}
		if err != nil {
			if !errors.Is(err, codec.ErrMalformedEnvelope) && !errors.Is(err, codec.ErrNotProtobufEnvelope) {
				t.Fatalf("error %v matches no sentinel", err)
			}
			return
		}
		if u.Raw != nil && !bytes.Contains(b, u.Raw) {
			t.Fatalf("Raw is not part of the input")
		}
		// Canonical re-encoding decodes to the same, in both readers.
		canon := u.AppendEnvelope(nil)
		u2, err := codec.DecodeEnvelope(canon)
		if err != nil {
			t.Fatalf("re-encoded envelope: %v", err)
		}
		if u2.TypeMeta != u.TypeMeta || !bytes.Equal(u2.Raw, u.Raw) || u2.ContentEncoding != u.ContentEncoding || u2.ContentType != u.ContentType {
			t.Fatalf("re-encoding changed %+v into %+v", u, u2)
		}
		h, raw, err = codec.ReadEnvelopeHeader(bufio.NewReaderSize(bytes.NewReader(canon), 16))
		if err != nil {
			if errors.Is(err, codec.ErrMalformedEnvelope) && len(u.TypeMeta.Kind)+len(u.TypeMeta.APIVersion)+8 > 64<<10 {
				return // a header field over the streaming limit
			}
			t.Fatalf("streaming the re-encoded envelope: %v", err)
		}
		rb, err := io.ReadAll(raw)
		if err != nil || h.TypeMeta != u.TypeMeta || !bytes.Equal(rb, u.Raw) {
			t.Fatalf("streaming gave %+v, %x, %v; want %+v", h, rb, err, u)
		}
		if !reflect.DeepEqual(codec.EncodeEnvelope(nil, u.TypeMeta, u.Raw), codec.Unknown{TypeMeta: u.TypeMeta, Raw: u.Raw}.AppendEnvelope(nil)) {
			t.Fatalf("EncodeEnvelope and AppendEnvelope disagree")
		}
	})
}

func BenchmarkDecodeEnvelope(b *testing.B) {
	body, err := os.ReadFile("../testdata/golden/34-list-pods-protobuf.body.pb")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := codec.DecodeEnvelope(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEnvelope(b *testing.B) {
	body, err := os.ReadFile("../testdata/golden/34-list-pods-protobuf.body.pb")
	if err != nil {
		b.Fatal(err)
	}
	u, err := codec.DecodeEnvelope(body)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, len(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		buf = codec.EncodeEnvelope(buf[:0], u.TypeMeta, u.Raw)
	}
}
