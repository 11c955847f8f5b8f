package resource

import (
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

var benchInputs = []struct{ name, in string }{
	{"canonical-binary", "1Gi"},
	{"binary-fraction", "1.5Gi"},
	{"canonical-milli", "250m"},
	{"decimal-fraction", "0.25"},
	{"exponent", "12e6"},
	{"big", "123456789012345678901234567890"},
}

var (
	sinkQ Quantity
	sinkS string
	sinkB []byte
)

func BenchmarkParseQuantity(b *testing.B) {
	for _, bi := range benchInputs {
		b.Run(bi.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q, err := ParseQuantity(bi.in)
				if err != nil {
					b.Fatal(err)
				}
				sinkQ = q
			}
		})
	}
}

// BenchmarkString compares a parsed canonical quantity, whose text is kept,
// with quantities that must be formatted.
func BenchmarkString(b *testing.B) {
	cases := []struct {
		name string
		q    Quantity
	}{
		{"cached-1Gi", MustParse("1Gi")},
		{"format-1.5Gi", MustParse("1.5Gi")},
		{"format-250m", *NewMilliQuantity(250, DecimalSI)},
		{"format-12e6", *NewQuantity(12e6, DecimalExponent)},
		{"format-big", MustParse("123456789012345678901234567890000")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkS = c.q.String()
			}
		})
	}
}

func BenchmarkUnmarshalJSON(b *testing.B) {
	for _, bi := range benchInputs {
		raw := []byte(`"` + bi.in + `"`)
		b.Run(bi.name, func(b *testing.B) {
			b.ReportAllocs()
			var q Quantity
			for b.Loop() {
				if err := q.UnmarshalJSON(raw); err != nil {
					b.Fatal(err)
				}
			}
			sinkQ = q
		})
	}
}

// BenchmarkUnmarshalResourceList decodes a typical resources map through
// go-json-experiment, which calls UnmarshalJSONFrom.
func BenchmarkUnmarshalResourceList(b *testing.B) {
	raw := []byte(`{"cpu":"250m","memory":"64Mi","ephemeral-storage":"1Gi","nvidia.com/gpu":"1"}`)
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]Quantity
		if err := jsonv2.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshalJSON encodes quantities decoded from JSON: canonical input
// ("1Gi") is copied out, non-canonical input ("1.5Gi") is formatted.
func BenchmarkMarshalJSON(b *testing.B) {
	for _, in := range []string{`"1Gi"`, `"1.5Gi"`, `"250m"`, `"0.25"`} {
		var q Quantity
		if err := q.UnmarshalJSON([]byte(in)); err != nil {
			b.Fatal(err)
		}
		b.Run(in[1:len(in)-1], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := q.MarshalJSON()
				if err != nil {
					b.Fatal(err)
				}
				sinkB = out
			}
		})
	}
}

func BenchmarkMarshalProtobuf(b *testing.B) {
	for _, in := range []string{"1Gi", "1.5Gi"} {
		q := MustParse(in)
		buf := make([]byte, 64)
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := q.Size()
				if _, err := q.MarshalToSizedBuffer(buf[:n]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
