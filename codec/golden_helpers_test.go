package codec_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// addedAfterCapture lists the fields Kubernetes added to the kinds in
// testdata/golden after v1.32.2, the release the captures come from. kapi ships
// the newer schema (so objects from newer servers lose nothing); a newer
// kube-apiserver writes these fields as zero where v1.32 wrote nothing.
var addedAfterCapture = map[string]string{
	"PodCondition.ObservedGeneration": "v1.33",
	"PodStatus.ObservedGeneration":    "v1.33",
}

// stripAddedFields re-encodes the protobuf message b of Go type t without the
// fields of addedAfterCapture that hold a zero varint, walking nested messages
// by the struct tags of t.
func stripAddedFields(t *testing.T, b []byte, typ reflect.Type) []byte {
	t.Helper()
	fields := map[protowire.Number]reflect.StructField{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag, ok := f.Tag.Lookup("protobuf")
		if !ok || tag == "-" {
			continue
		}
		n, _ := strconv.Atoi(strings.Split(tag, ",")[1])
		fields[protowire.Number(n)] = f
	}
	var out []byte
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad protobuf in %s", typ.Name())
		}
		m := protowire.ConsumeFieldValue(num, wt, b[n:])
		if m < 0 {
			t.Fatalf("bad protobuf in %s field %d", typ.Name(), num)
		}
		whole, val := b[:n+m], b[n:n+m]
		b = b[n+m:]
		f, known := fields[num]
		if known && wt == protowire.VarintType {
			if _, listed := addedAfterCapture[typ.Name()+"."+f.Name]; listed {
				if v, _ := protowire.ConsumeVarint(val); v == 0 {
					continue
				}
			}
		}
		ft := f.Type
		for known && (ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice) {
			ft = ft.Elem()
		}
		if known && wt == protowire.BytesType && ft.Kind() == reflect.Struct && ft.NumField() > 0 && ft.Field(0).IsExported() {
			inner, _ := protowire.ConsumeBytes(val)
			inner = stripAddedFields(t, inner, ft)
			out = protowire.AppendTag(out, num, wt)
			out = protowire.AppendBytes(out, inner)
			continue
		}
		out = append(out, whole...)
	}
	return out
}
