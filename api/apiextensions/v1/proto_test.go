package v1_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/internal/pb"
)

// msg builds protobuf bytes field by field, as Kubernetes' generated.proto
// for apiextensions/v1 numbers them, independently of the generated code.
type msg []byte

func (m msg) bytes(num protowire.Number, v []byte) msg {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	return protowire.AppendBytes(m, v)
}

func (m msg) varint(num protowire.Number, v uint64) msg {
	m = protowire.AppendTag(m, num, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

// schemaProps is JSONSchemaProps with type t and the fields gogo-protobuf
// always writes (the non-pointer scalars), around extra fields.
func schemaProps(t string, extra func(msg) msg) []byte {
	m := msg{}.bytes(1, nil).bytes(2, nil).bytes(4, nil).bytes(5, []byte(t)).bytes(6, nil).bytes(7, nil)
	m = m.varint(10, 0).varint(12, 0).bytes(15, nil).varint(18, 0)
	// Fields 20 to 36 come from extra, in order.
	m = extra(m)
	return m.varint(37, 0).varint(39, 0).varint(40, 0)
}

// The wire forms Kubernetes gives the JSON-valued fields of a schema: JSON as
// its text in field 1; JSONSchemaPropsOrArray as a schema (1) or schemas (2);
// JSONSchemaPropsOrBool as allows (1, always written) and a schema (2);
// JSONSchemaPropsOrStringArray as a schema (1) or property names (2); maps
// as entries sorted by key. A structural schema cannot use the array and
// dependency forms, so kube-apiserver offers no capture of them.
func TestJSONSchemaPropsWireForms(t *testing.T) {
	str := schemaProps("string", func(m msg) msg { return m })
	cases := []struct {
		name string
		in   apiextensionsv1.JSONSchemaProps
		want []byte
	}{
		{"default, enum and example", apiextensionsv1.JSONSchemaProps{
			Type:    "string",
			Default: &apiextensionsv1.JSON{Raw: []byte(`"a"`)},
			Enum:    []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}, {}},
			Example: &apiextensionsv1.JSON{Raw: []byte(`{"x":1}`)},
		}, func() []byte {
			m := msg{}.bytes(1, nil).bytes(2, nil).bytes(4, nil).bytes(5, []byte("string")).bytes(6, nil).bytes(7, nil)
			m = m.bytes(8, msg{}.bytes(1, []byte(`"a"`)))
			m = m.varint(10, 0).varint(12, 0).bytes(15, nil).varint(18, 0)
			m = m.bytes(20, msg{}.bytes(1, []byte(`"a"`))).bytes(20, nil)
			m = m.bytes(36, msg{}.bytes(1, []byte(`{"x":1}`)))
			return m.varint(37, 0).varint(39, 0).varint(40, 0)
		}()},
		{"items as a list of schemas", apiextensionsv1.JSONSchemaProps{
			Type:  "array",
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{JSONSchemas: []apiextensionsv1.JSONSchemaProps{{Type: "string"}, {Type: "string"}}},
		}, schemaProps("array", func(m msg) msg {
			return m.bytes(24, msg{}.bytes(2, str).bytes(2, str))
		})},
		{"additionalProperties false, additionalItems a schema", apiextensionsv1.JSONSchemaProps{
			Type:                 "object",
			AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{},
			AdditionalItems:      &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
		}, schemaProps("object", func(m msg) msg {
			return m.bytes(30, msg{}.varint(1, 0)).bytes(33, msg{}.varint(1, 1).bytes(2, str))
		})},
		{"dependencies, patternProperties and definitions, keys sorted", apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Dependencies: apiextensionsv1.JSONSchemaDependencies{
				"b": {Property: []string{"x", "y"}},
				"a": {Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}},
			},
			PatternProperties: map[string]apiextensionsv1.JSONSchemaProps{"^z": {Type: "string"}},
			Definitions:       apiextensionsv1.JSONSchemaDefinitions{"d": {Type: "string"}},
		}, schemaProps("object", func(m msg) msg {
			m = m.bytes(31, msg{}.bytes(1, []byte("^z")).bytes(2, str))
			m = m.bytes(32, msg{}.bytes(1, []byte("a")).bytes(2, msg{}.bytes(1, str)))
			m = m.bytes(32, msg{}.bytes(1, []byte("b")).bytes(2, msg{}.bytes(2, []byte("x")).bytes(2, []byte("y"))))
			return m.bytes(34, msg{}.bytes(1, []byte("d")).bytes(2, str))
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.in.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.want) {
				t.Errorf("encoded\n %x\nwant\n %x", got, c.want)
			}
			var back apiextensionsv1.JSONSchemaProps
			if err := back.Unmarshal(got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&back, &c.in) {
				t.Errorf("decoded %+v, want %+v", back, c.in)
			}
		})
	}
}

// A JSON value in protobuf must be JSON, as it must in a JSON body.
func TestJSONProtobufRejectsText(t *testing.T) {
	for _, c := range []struct {
		raw, err string
	}{
		{`{bad`, "invalid character 'b' looking for beginning of object key string"},
		{`1 2`, "invalid character '2' after top-level value"},
		{`{"a":1}`, ""},
		{``, ""},
	} {
		b := msg{}.bytes(8, msg{}.bytes(1, []byte(c.raw)))
		var s apiextensionsv1.JSONSchemaProps
		err := s.Unmarshal(b)
		if c.err == "" {
			if err != nil || string(s.Default.Raw) != c.raw {
				t.Errorf("%q: %v, default %q", c.raw, err, s.Default.Raw)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want one saying %q", c.raw, err, c.err)
		}
	}
}

// JSONSchemaProps nest (not, items, properties): a decode stops at
// pb.MaxDepth levels with an error instead of recursing as deep as the
// input goes.
func TestJSONSchemaPropsDepthLimit(t *testing.T) {
	nested := func(levels int) []byte {
		b := []byte{}
		for range levels {
			b = msg{}.bytes(28, b) // not
		}
		return b
	}
	var s apiextensionsv1.JSONSchemaProps
	if err := s.Unmarshal(nested(100)); err != nil {
		t.Fatalf("100 levels: %v", err)
	}
	err := new(apiextensionsv1.JSONSchemaProps).Unmarshal(nested(pb.MaxDepth + 2))
	if !errors.Is(err, pb.ErrTooDeep) {
		t.Fatalf("%d levels: %v, want ErrTooDeep", pb.MaxDepth+2, err)
	}
}

func FuzzUnmarshalCRD(f *testing.F) {
	full := apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "g", Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{
			OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Default: &apiextensionsv1.JSON{Raw: []byte(`{}`)},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": {Type: "string"}}}}}}}}
	b, err := full.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0x12, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var c apiextensionsv1.CustomResourceDefinition
		if c.Unmarshal(b) != nil {
			return
		}
		// What decodes re-encodes to what decodes to the same object.
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var d apiextensionsv1.CustomResourceDefinition
		if err := d.Unmarshal(out); err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		again, err := d.Marshal()
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}
