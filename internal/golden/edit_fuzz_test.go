package golden

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzParseJSON: the order-keeping JSON parser never panics, and writes any
// valid document back as encoding/json compacts it.
func FuzzParseJSON(f *testing.F) {
	// Small documents in the captures' shapes (whole captured bodies left the
	// fuzzer at a few executions a second).
	f.Add([]byte(`{"a":[1,"x\"y",{"b":null}],"c":-1.5e3}`))
	f.Add([]byte(`{"kind":"Pod","metadata":{"name":"a","generation":1,"labels":{"k":"v"}},"spec":{"containers":[{"name":"c","args":["-v"]}]},"status":{"phase":"Pending"}}`))
	f.Add([]byte(`{"kind":"Status","code":422,"details":{"causes":[{"field":"spec.size","message":"Invalid value: \u003c0: x"}]},"ok":true,"none":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseJSON(b)
		if !json.Valid(b) {
			return
		}
		if err != nil {
			t.Fatalf("valid JSON %q: %v", b, err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil {
			t.Fatal(err)
		}
		if got := n.appendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q written back as %q, want %q", b, got, want.Bytes())
		}
	})
}

// FuzzEditProto: editing and setting fields of any bytes never panics, and
// a set field reads back.
func FuzzEditProto(f *testing.F) {
	if x, err := V137.Raw("14-get-pod-protobuf"); err == nil {
		f.Add(x.ResponseBody[len(protoMagic):])
	}
	f.Add([]byte{0x08, 0x01, 0x12, 0x02, 0x08, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := editProto(b, []protowire.Number{1}, func(m []byte) ([]byte, error) { return setVarint(m, 7, 1) })
		if err != nil {
			return
		}
		set, err := setVarint(out, 3, 42)
		if err != nil {
			t.Fatalf("setVarint after a successful edit: %v", err)
		}
		for len(set) > 0 {
			num, typ, n := protowire.ConsumeTag(set)
			m := protowire.ConsumeFieldValue(num, typ, set[n:])
			if n < 0 || m < 0 {
				t.Fatalf("setVarint wrote bad protobuf")
			}
			if num == 3 && typ == protowire.VarintType {
				if v, _ := protowire.ConsumeVarint(set[n:]); v == 42 {
					return
				}
			}
			set = set[n+m:]
		}
		t.Fatal("field 3 not set")
	})
}
