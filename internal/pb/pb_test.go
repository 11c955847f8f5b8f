package pb

import (
	"fmt"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// msg builds a message of (field number, bytes) fields.
func msg(fields ...any) []byte {
	var b []byte
	for i := 0; i < len(fields); i += 2 {
		b = protowire.AppendTag(b, protowire.Number(fields[i].(int)), protowire.BytesType)
		b = protowire.AppendString(b, fields[i+1].(string))
	}
	return b
}

func TestCount(t *testing.T) {
	b := msg(1, "a", 2, "x", 1, "b", 3, "y", 1, "c")
	b = protowire.AppendTag(b, 1, protowire.VarintType) // same number, other wire type
	b = protowire.AppendVarint(b, 7)
	d := NewDecoder(b, "M")
	var got []string
	for d.Next() {
		if d.Field() == 1 && d.typ == protowire.BytesType {
			got = append(got, fmt.Sprintf("%d:%s", d.Count(), d.String()))
		} else {
			d.Skip()
		}
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[3:a 2:b 1:c]" {
		t.Errorf("counts %v, want [3:a 2:b 1:c]", got)
	}
	// A malformed tail stops the count, not the decoder's error reporting.
	d = NewDecoder(append(msg(1, "a"), 0x0a, 0x05, 'x'), "M")
	d.Next()
	if n := d.Count(); n != 1 {
		t.Errorf("count over a truncated tail = %d, want 1", n)
	}
}

func TestStateStrings(t *testing.T) {
	var st State
	for _, tc := range []struct {
		in     string
		shared bool
	}{
		{"", false}, {"a", true}, // the runtime never allocates one-byte strings {"web", true}, {string(make([]byte, MaxInternLen)), true},
		{string(make([]byte, MaxInternLen+1)), false},
	} {
		s1 := st.String([]byte(tc.in))
		s2 := st.String([]byte(tc.in))
		if s1 != tc.in || s2 != tc.in {
			t.Fatalf("%q: got %q, %q", tc.in, s1, s2)
		}
		same := len(s1) > 0 && unsafe.StringData(s1) == unsafe.StringData(s2)
		if same != tc.shared {
			t.Errorf("len %d: shared = %v, want %v", len(tc.in), same, tc.shared)
		}
	}
	// The table is bounded: many distinct strings never grow it, and each
	// still decodes to itself.
	for i := range 3 * StringSlots {
		want := fmt.Sprintf("value-%d", i)
		if got := st.String([]byte(want)); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestStateBytes(t *testing.T) {
	var st State
	a := st.Bytes([]byte(`{"f:a":{}}`))
	b := st.Bytes([]byte(`{"f:a":{}}`))
	if string(a) != `{"f:a":{}}` || &a[0] != &b[0] {
		t.Fatalf("equal values not shared: %q %q", a, b)
	}
	if cap(a) != len(a) {
		t.Errorf("shared slice has spare capacity %d > %d: an append would write into the others", cap(a), len(a))
	}
	c := st.Bytes([]byte(`{"f:b":{}}`))
	if string(c) != `{"f:b":{}}` {
		t.Errorf("got %q", c)
	}
	if e := st.Bytes(nil); e == nil || len(e) != 0 {
		t.Errorf("empty value: %#v, want non-nil empty", e)
	}
}

// TestDecoderState: with a State, strings and map keys of nested messages
// come from one table; SharedBytes shares only when asked; without a State
// nothing is shared.
func TestDecoderState(t *testing.T) {
	inner := msg(1, "web")
	outer := msg(1, "web", 2, string(inner), 3, string(msg(1, "web", 2, "v")))
	decode := func(st *State) (a, b, key string) {
		d := NewDecoderState(outer, "Outer", st)
		var sub Decoder
		for d.Next() {
			switch d.Field() {
			case 1:
				a = d.String()
			case 2:
				d.Sub(&sub)
				for sub.Next() {
					b = sub.String()
				}
			case 3:
				k, _, _, err := d.MapEntry("Outer.M")
				if err != nil {
					t.Fatal(err)
				}
				key = k
			}
		}
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		return a, b, key
	}
	a, b, k := decode(&State{})
	if unsafe.StringData(a) != unsafe.StringData(b) || unsafe.StringData(a) != unsafe.StringData(k) {
		t.Errorf("with a State, equal strings are not shared")
	}
	a, b, _ = decode(nil)
	if a != "web" || b != "web" || unsafe.StringData(a) == unsafe.StringData(b) {
		t.Errorf("without a State: %q %q, shared = %v", a, b, unsafe.StringData(a) == unsafe.StringData(b))
	}

	raw := msg(1, "xyz", 1, "xyz")
	for _, share := range []bool{false, true} {
		d := NewDecoderState(raw, "R", &State{ShareBytes: share})
		var got [][]byte
		for d.Next() {
			got = append(got, d.SharedBytes())
		}
		if same := &got[0][0] == &got[1][0]; same != share {
			t.Errorf("ShareBytes=%v: shared = %v", share, same)
		}
		if &got[0][0] == &raw[2] {
			t.Errorf("SharedBytes aliases the input")
		}
	}
}

// BenchmarkString compares a plain string conversion with the State's table
// on a value seen before (the common case of a repeated label or image).
func BenchmarkString(b *testing.B) {
	v := []byte("docker.io/library/nginx:1.27")
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = string(v)
		}
	})
	b.Run("state", func(b *testing.B) {
		var st State
		b.ReportAllocs()
		for b.Loop() {
			sink = st.String(v)
		}
	})
}

var sink string
