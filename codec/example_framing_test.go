package codec_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

func ExampleNegotiate() {
	var offers []codec.MediaType
	for _, s := range []string{codec.MediaTypeTableJSON, codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf} {
		m, _ := codec.ParseMediaType(s)
		offers = append(offers, m)
	}

	m, _ := codec.Negotiate("application/json;as=Table;g=meta.k8s.io;v=v1, application/json", offers)
	fmt.Println(m)
	m, _ = codec.Negotiate("application/vnd.kubernetes.protobuf, application/json", offers[1:])
	fmt.Println(m)

	_, err := codec.Negotiate("application/xml", offers)
	var nae *codec.NotAcceptableError
	if errors.As(err, &nae) {
		fmt.Println(nae.Message())
	}
	// Output:
	// application/json;as=Table;g=meta.k8s.io;v=v1
	// application/vnd.kubernetes.protobuf
	// 406: Not Acceptable
	//
	// Available representations: application/json, application/yaml, application/vnd.kubernetes.protobuf
}

func ExampleEncodeEnvelope() {
	b := codec.EncodeEnvelope(nil, metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, []byte{0x0a, 0x00})
	fmt.Printf("% x\n", b)

	u, err := codec.DecodeEnvelope(b)
	fmt.Println(u.TypeMeta.APIVersion, u.TypeMeta.Kind, u.Raw, err)

	_, err = codec.DecodeEnvelope([]byte(`{"kind":"Pod"}`))
	fmt.Println(errors.Is(err, codec.ErrNotProtobufEnvelope))
	// Output:
	// 6b 38 73 00 0a 09 0a 02 76 31 12 03 50 6f 64 12 02 0a 00 1a 00 22 00
	// v1 Pod [10 0] <nil>
	// true
}

func ExampleReadEnvelopeHeader() {
	body := codec.EncodeEnvelope(nil, metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, []byte("...a large list..."))

	h, raw, err := codec.ReadEnvelopeHeader(bufio.NewReader(bytes.NewReader(body)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.TypeMeta.Kind, h.RawSize)
	n, err := io.Copy(io.Discard, raw) // a protobuf decoder would read raw here
	fmt.Println(n, err)
	// Output:
	// PodList 18
	// 18 <nil>
}

func ExampleJSONWatchDecoder() {
	stream := `{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"236"}}}
{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"238"}}}
`
	d := codec.NewJSONWatchDecoder(strings.NewReader(stream))
	for {
		typ, obj, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(typ, string(obj))
	}
	// Output:
	// ADDED {"kind":"ConfigMap","metadata":{"resourceVersion":"236"}}
	// BOOKMARK {"kind":"ConfigMap","metadata":{"resourceVersion":"238"}}
}

func ExampleProtobufWatchEncoder() {
	var stream bytes.Buffer
	enc := codec.NewProtobufWatchEncoder(&stream)
	obj := codec.EncodeEnvelope(nil, metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, []byte{0x0a, 0x00})
	_ = enc.Encode(codec.EventAdded, obj)
	_ = enc.Encode(codec.EventDeleted, obj)

	d := codec.NewProtobufWatchDecoder(&stream)
	for {
		typ, obj, err := d.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
		u, _ := codec.DecodeEnvelope(obj)
		fmt.Println(typ, u.TypeMeta.Kind)
	}
	// Output:
	// ADDED ConfigMap
	// DELETED ConfigMap
	// EOF
}
