package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Quantity must stay comparable.
var _ = Quantity{} == Quantity{}

type holder struct {
	Q Quantity            `json:"q"`
	P *Quantity           `json:"p,omitempty"`
	M map[string]Quantity `json:"m,omitempty"`
	S []Quantity          `json:"s,omitempty"`
}

func TestMarshalJSON(t *testing.T) {
	h := holder{
		Q: MustParse("1.5Gi"),
		P: NewMilliQuantity(1500, DecimalSI),
		M: map[string]Quantity{"cpu": MustParse("0.25"), "memory": MustParse("1024Mi")},
		S: []Quantity{{}, MustParse("1e3"), MustParse("-0.0000000001"), MustParse("1000E")},
	}
	const want = `{"q":"1536Mi","p":"1500m","m":{"cpu":"250m","memory":"1Gi"},"s":["0","1e3","-1n","1e21"]}`
	got, err := json.Marshal(h) // map values are not addressable: value receivers
	if err != nil || string(got) != want {
		t.Errorf("encoding/json: %s, %v\nwant %s", got, err, want)
	}
	for name, opts := range map[string]jsonv2.Options{
		"v2": jsonv2.Deterministic(true),
		"v1": jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.Deterministic(true)),
	} {
		got, err := jsonv2.Marshal(h, opts)
		if err != nil || string(got) != want {
			t.Errorf("go-json-experiment %s: %s, %v\nwant %s", name, got, err, want)
		}
	}
}

func TestUnmarshalJSON(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   string
		format Format
		err    error
	}{
		{`"1Gi"`, "1Gi", BinarySI, nil},
		{`"1.5Gi"`, "1536Mi", BinarySI, nil},
		{`"100m"`, "100m", DecimalSI, nil},
		{`"1000m"`, "1", DecimalSI, nil},
		{`"1e3"`, "1e3", DecimalExponent, nil},
		{`" 1Gi "`, "1Gi", BinarySI, nil}, // Kubernetes trims spaces inside the quotes
		{`"\u0031Gi"`, "1Gi", BinarySI, nil},
		{`"1000E"`, "1e21", DecimalSI, nil},
		{`1.5`, "1500m", DecimalSI, nil}, // numbers are accepted, as in Kubernetes
		{`1e3`, "1e3", DecimalExponent, nil},
		{`1E+3`, "1e3", DecimalExponent, nil},
		{`-1`, "-1", DecimalSI, nil},
		{`0`, "0", DecimalSI, nil},
		{`12345678901234567890123`, "12345678901234567890123", DecimalSI, nil},
		{`""`, "", "", ErrFormatWrong},
		{`"1K"`, "", "", ErrSuffix},
		{`"e-20"`, "", "", ErrNumeric},
		{`"1 Gi"`, "", "", ErrFormatWrong},
		{`true`, "", "", ErrFormatWrong},
		{`{}`, "", "", ErrFormatWrong},
		{`["1"]`, "", "", ErrFormatWrong},
	} {
		// encoding/json hands the raw value to UnmarshalJSON; go-json-experiment
		// calls UnmarshalJSONFrom.
		var q1, q2 Quantity
		err1 := json.Unmarshal([]byte(tc.in), &q1)
		err2 := jsonv2.Unmarshal([]byte(tc.in), &q2)
		for i, r := range []struct {
			q   Quantity
			err error
		}{{q1, err1}, {q2, err2}} {
			if tc.err != nil {
				if !errors.Is(r.err, tc.err) {
					t.Errorf("decoder %d: %s: error %v, want %v", i, tc.in, r.err, tc.err)
				}
				continue
			}
			if r.err != nil {
				t.Errorf("decoder %d: %s: %v", i, tc.in, r.err)
				continue
			}
			if r.q.String() != tc.want || r.q.Format != tc.format {
				t.Errorf("decoder %d: %s = %q %s, want %q %s", i, tc.in, r.q.String(), r.q.Format, tc.want, tc.format)
			}
		}
	}
}

func TestUnmarshalJSONNull(t *testing.T) {
	q := MustParse("1Gi")
	if err := q.UnmarshalJSON([]byte("null")); err != nil || q != (Quantity{}) {
		t.Errorf("UnmarshalJSON(null) = %#v, %v", q, err)
	}
	var h struct{ Q *Quantity }
	if err := jsonv2.Unmarshal([]byte(`{"Q":null}`), &h); err != nil || h.Q != nil {
		t.Errorf("null into *Quantity = %v, %v", h.Q, err)
	}
}

func TestUnmarshalJSONErrorNamesValue(t *testing.T) {
	var q Quantity
	err := q.UnmarshalJSON([]byte(`"1 Gi"`))
	if err == nil || !strings.Contains(err.Error(), `"1 Gi"`) || !strings.Contains(err.Error(), "quantities must match the regular expression") {
		t.Errorf("error = %v", err)
	}
	if err := q.UnmarshalJSON([]byte(`"1Gi`)); err == nil {
		t.Error("unterminated string accepted")
	}
}

func TestUnmarshalJSONStream(t *testing.T) {
	dec := jsontext.NewDecoder(strings.NewReader(`["1Gi", 2, "250m", null]`))
	if _, err := dec.ReadToken(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for dec.PeekKind() != ']' {
		var q Quantity
		if err := q.UnmarshalJSONFrom(dec); err != nil {
			t.Fatal(err)
		}
		got = append(got, q.String())
	}
	if strings.Join(got, ",") != "1Gi,2,250m,0" {
		t.Errorf("stream = %v", got)
	}
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	for _, s := range []string{"1Gi", "1.5Gi", "0.1"} {
		if err := MustParse(s).MarshalJSONTo(enc); err != nil {
			t.Fatal(err)
		}
	}
	if got := buf.String(); got != "\"1Gi\"\n\"1536Mi\"\n\"100m\"\n" {
		t.Errorf("MarshalJSONTo wrote %q", got)
	}
}

func TestParseKeepsCanonicalInput(t *testing.T) {
	for _, in := range []string{"1Gi", "0", "100m", "1e3", "-1536Mi", "123456789012345678901234567890"} {
		q := MustParse(in)
		s, ok := q.cached()
		if !ok || unsafe.StringData(s) != unsafe.StringData(in) {
			t.Errorf("%q: not kept (cached %q, %v)", in, s, ok)
		}
		if n := testing.AllocsPerRun(100, func() { _ = q.String() }); n != 0 {
			t.Errorf("%q: String() allocates %v times", in, n)
		}
	}
	for _, in := range []string{"1.5Gi", "1024Ki", "+1", "5.", "1000m", "1E3", "007", "-0"} {
		q := MustParse(in)
		if s, ok := q.cached(); ok {
			t.Errorf("%q: non-canonical input cached as %q", in, s)
		}
	}

	// Decoding canonical JSON keeps one copy of the text and never formats.
	var q Quantity
	if err := q.UnmarshalJSON([]byte(`"1Gi"`)); err != nil {
		t.Fatal(err)
	}
	if s, ok := q.cached(); !ok || s != "1Gi" {
		t.Errorf("JSON: cached %q, %v", s, ok)
	}
	if n := testing.AllocsPerRun(100, func() { _ = q.Size() }); n != 0 {
		t.Errorf("Size() allocates %v times", n)
	}
	buf := make([]byte, q.Size())
	if n := testing.AllocsPerRun(100, func() { _, _ = q.MarshalToSizedBuffer(buf) }); n != 0 {
		t.Errorf("MarshalToSizedBuffer allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = q.MarshalJSON() }); n != 1 {
		t.Errorf("MarshalJSON allocates %v times, want 1", n)
	}
}

func TestProtobuf(t *testing.T) {
	for _, tc := range []struct {
		q    Quantity
		want string
	}{
		{Quantity{}, "\x0a\x010"},
		{MustParse("1Gi"), "\x0a\x031Gi"},
		{MustParse("1.5Gi"), "\x0a\x061536Mi"},
		{*NewMilliQuantity(1500, DecimalSI), "\x0a\x051500m"},
		{MustParse("123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"),
			"\x0a\x81\x01123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"},
	} {
		b, err := tc.q.Marshal()
		if err != nil || string(b) != tc.want || tc.q.Size() != len(tc.want) {
			t.Errorf("%s: Marshal() = %q, %v; Size() = %d; want %q", tc.q.String(), b, err, tc.q.Size(), tc.want)
		}
		// MarshalToSizedBuffer writes at the end of a larger buffer.
		big := make([]byte, len(tc.want)+3)
		if n, err := tc.q.MarshalToSizedBuffer(big); err != nil || n != len(tc.want) || string(big[3:]) != tc.want {
			t.Errorf("%s: MarshalToSizedBuffer = %d, %v, %q", tc.q.String(), n, err, big)
		}
		var back Quantity
		if err := back.Unmarshal(b); err != nil || !back.Equal(tc.q) || back.String() != tc.q.String() {
			t.Errorf("%s: round trip = %s, %v", tc.q.String(), back.String(), err)
		}
	}
}

func TestUnmarshalProtobuf(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
		err  error // nil: success; errAny: any error
	}{
		{"plain", "\x0a\x03100", "100", nil},
		{"canonicalised", "\x0a\x061024Ki", "1Mi", nil},
		{"unknown fields skipped", "\x10\x05\x0a\x021k\x1a\x02xx", "1k", nil},
		{"last field 1 wins", "\x0a\x011\x0a\x012", "2", nil},
		{"no field 1 leaves q alone", "", "7", nil},
		{"empty string", "\x0a\x00", "", ErrFormatWrong},
		{"bad suffix", "\x0a\x021K", "", ErrSuffix},
		{"bad number", "\x0a\x04e-20", "", ErrNumeric},
		{"wrong wire type", "\x08\x01", "", errAny},
		{"truncated", "\x0a\x05123", "", errAny},
	} {
		q := MustParse("7")
		err := q.Unmarshal([]byte(tc.in))
		switch {
		case tc.err == errAny:
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
			}
		case err != nil || q.String() != tc.want:
			t.Errorf("%s: %q, %v, want %q", tc.name, q.String(), err, tc.want)
		}
	}
}

var errAny = errors.New("any error")

// TestConcurrentReads runs the reading methods of shared quantities in
// parallel; with -race it proves they do not write to the receiver.
func TestConcurrentReads(t *testing.T) {
	shared := []Quantity{MustParse("1Gi"), MustParse("1.5Gi"), MustParse("1e100"), {}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				q := &shared[i%len(shared)]
				_ = q.String()
				_, _ = q.MarshalJSON()
				_, _ = q.Marshal()
				_ = q.Size()
				_ = q.Value()
				_ = q.Cmp(shared[0])
				_ = q.DeepCopy()
			}
		}()
	}
	wg.Wait()
}

func TestMarshalJSONToDoesNotAllocate(t *testing.T) {
	enc := jsontext.NewEncoder(io.Discard)
	for _, s := range []string{"1Gi", "1.5Gi", "250m", "1e100"} {
		q := MustParse(s)
		if n := testing.AllocsPerRun(100, func() { _ = q.MarshalJSONTo(enc) }); n != 0 {
			t.Errorf("%s: MarshalJSONTo allocates %v times", s, n)
		}
	}
}
