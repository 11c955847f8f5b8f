package unstructured

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode checks the decoder against Kubernetes' decoding (refDecode: the
// same input must be accepted or refused alike, and decode to the same
// values, int64s included), that nothing panics, and that whatever decodes
// encodes as encoding/json would and decodes back to the same value.
//
// The seeds are small objects in the shapes of the captures (an object, a
// list, a CRD's nested schema), so that the fuzzer runs thousands of
// mutations a second; whole captured bodies left it at a few a second.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","labels":{"k":"v"},"resourceVersion":"7"},"data":{"x":"1"}}`,
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c"}]}}]}`,
		`{"kind":"CustomResourceDefinition","spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object","properties":{"size":{"type":"integer","minimum":1,"default":3}}}}}]}}`,
		``, `{}`, `null`, `[]`, `{"kind":"A","items":[null,{}]}`, `{"kind":"AList","items":{}}`,
		`{"kind":"K","a":1e400}`, `{"kind":"K","n":[0,-0,1.0,1e3,9223372036854775808,-9223372036854775809,0.1,1e-400]}`,
		`{"kind":"K","s":"\ud800\u00e9\"\\\/\b\f\n\r\t\u2028<&>"}`, "{\"kind\":\"\xff\"}", `{"a":1,"a":2}`,
		`{"kind":"K"} `, `{"kind":""}`, `{"kind":"K"}{}`, ` [1, "2", true, false, null] `, `"x"`, `123`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := unmarshalValue(data)
		want, refErr := refDecode(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("decode error %v, Kubernetes error %v", err, refErr)
		}

		// The public entry points agree with the value decoder.
		var u Unstructured
		uErr := u.UnmarshalJSON(data)
		var l UnstructuredList
		lErr := l.UnmarshalJSON(data)
		obj, dErr := Decode(data)
		m, isObject := got.(map[string]any)
		kind, _ := m["kind"].(string)
		hasKind := kind != ""
		switch {
		case err != nil || !isObject:
			if uErr == nil || lErr == nil || dErr == nil {
				t.Fatalf("accepted a non-object or invalid document: %v %v %v", uErr, lErr, dErr)
			}
		case !hasKind:
			if !errors.Is(uErr, ErrMissingKind) || dErr == nil {
				t.Fatalf("no kind: errors %v, %v", uErr, dErr)
			}
		default:
			if uErr != nil {
				t.Fatalf("UnmarshalJSON: %v", uErr)
			}
			if dErr == nil && obj.GetKind() == "" {
				t.Fatal("Decode returned an object without kind")
			}
		}
		if err != nil {
			return
		}

		if d := diffJSON("", got, want); d != "" {
			t.Fatalf("differs from Kubernetes: %s", d)
		}

		enc, err := marshalValue(got)
		if err != nil {
			t.Fatalf("encoding a decoded value: %v", err)
		}
		std, err := encodingJSON(got)
		if err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if !bytes.Equal(enc, std) {
			t.Fatalf("encoding differs from encoding/json:\n got %q\nwant %q", enc, std)
		}
		back, err := unmarshalValue(enc)
		if err != nil {
			t.Fatalf("decoding %q: %v", enc, err)
		}
		if d := diffJSON("", back, normalizeNumbers(got)); d != "" {
			t.Fatalf("round trip: %s", d)
		}
		if uErr == nil {
			if enc, err := u.MarshalJSON(); err != nil || !bytes.Equal(enc, std) {
				t.Fatalf("Unstructured.MarshalJSON: %q, %v", enc, err)
			}
		}
		if lErr == nil {
			if _, err := l.MarshalJSON(); err != nil {
				t.Fatalf("UnstructuredList.MarshalJSON: %v", err)
			}
		}
	})
}
