package resource

import (
	"bytes"
	"testing"
)

// FuzzParseQuantity checks that parsing never panics and that every string
// that parses re-parses from its canonical form to an equal quantity with the
// same canonical form. It also checks that the text cached at parse time is
// what formatting would produce, and that JSON and protobuf round-trip.
func FuzzParseQuantity(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in)
	}
	for _, tc := range parseCasesPast140459 {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		q, err := ParseQuantity(in)
		if err != nil {
			return
		}
		s := q.String()
		q2, err := ParseQuantity(s)
		if err != nil {
			t.Fatalf("ParseQuantity(%q) = %q, which does not parse: %v", in, s, err)
		}
		if q2.Cmp(q) != 0 || q.Cmp(q2) != 0 {
			t.Fatalf("ParseQuantity(%q) = %q, which parses to a different amount", in, s)
		}
		if s2 := q2.String(); s2 != s {
			t.Fatalf("ParseQuantity(%q) = %q, which is written %q when parsed again", in, s, s2)
		}

		// The cache must agree with formatting from scratch.
		fresh := q
		fresh.Neg()
		fresh.Neg()
		if fs := fresh.String(); fs != s {
			t.Fatalf("ParseQuantity(%q): cached %q, formatted %q", in, s, fs)
		}
		if fresh.Cmp(q) != 0 {
			t.Fatalf("ParseQuantity(%q): Neg twice changed the amount", in)
		}

		// The byte-slice parser used by the decoders must agree.
		var fromJSON Quantity
		if err := fromJSON.UnmarshalJSON([]byte(`"` + in + `"`)); err != nil {
			t.Fatalf("UnmarshalJSON(%q): %v", in, err)
		}
		if fromJSON.String() != s || fromJSON.Format != q.Format {
			t.Fatalf("UnmarshalJSON(%q) = %q %s, ParseQuantity = %q %s", in, fromJSON.String(), fromJSON.Format, s, q.Format)
		}
		j, err := q.MarshalJSON()
		if err != nil || !bytes.Equal(j, []byte(`"`+s+`"`)) {
			t.Fatalf("MarshalJSON(%q) = %s, %v", in, j, err)
		}
		p, err := q.Marshal()
		if err != nil || len(p) != q.Size() {
			t.Fatalf("Marshal(%q) = %x, %v (Size %d)", in, p, err, q.Size())
		}
		var fromPB Quantity
		if err := fromPB.Unmarshal(p); err != nil || fromPB.String() != s {
			t.Fatalf("protobuf round trip of %q = %q, %v", in, fromPB.String(), err)
		}

		// Numeric accessors must not panic and must agree with each other.
		v := q.Value()
		if i, ok := q.AsInt64(); ok && i != v {
			t.Fatalf("%q: AsInt64 = %d, Value = %d", in, i, v)
		}
		if sign := q.Sign(); sign != q.CmpInt64(0) || (sign == 0) != q.IsZero() {
			t.Fatalf("%q: Sign %d, CmpInt64(0) %d, IsZero %v", in, sign, q.CmpInt64(0), q.IsZero())
		}
		_ = q.MilliValue()
		_ = q.AsApproximateFloat64()
		sum := q
		sum.Add(q)
		sum.Sub(q)
		if sum.Cmp(q) != 0 {
			t.Fatalf("%q: q+q-q = %s", in, sum.String())
		}
	})
}
