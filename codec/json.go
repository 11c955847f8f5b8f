package codec

import (
	"io"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// JSON library choice.
//
// kapi decodes JSON with github.com/go-json-experiment/json (the encoding/json/v2
// proposal) configured for Kubernetes: case-sensitive field names (kube-apiserver
// rejects nothing but ignores "Metadata"; encoding/json would silently accept it
// as "metadata"), encoding/json's omitempty and nil-as-null rules, no HTML
// escaping. It was chosen by BenchmarkDecodePodListJSON (codec/bench_test.go),
// which decodes the same 5,000-pod list with encoding/json, sigs.k8s.io/json (the
// case-sensitive fork of encoding/json that Kubernetes uses) and
// go-json-experiment; the figures are in the README. go-json-experiment is the
// fastest of the three and allocates least, it is case-sensitive without a fork,
// and its streaming jsontext.Decoder lets lists and watches be decoded one item
// at a time with bounded memory.

// MarshalJSON encodes v as Kubernetes JSON.
func MarshalJSON(v any) ([]byte, error) { return kjson.Marshal(v) }

// UnmarshalJSON decodes b into v. Field names match case-sensitively, as in
// kube-apiserver; unknown fields are ignored.
func UnmarshalJSON(b []byte, v any) error { return kjson.Unmarshal(b, v) }

// EncodeJSON writes v as Kubernetes JSON to w.
func EncodeJSON(w io.Writer, v any) error { return kjson.MarshalWrite(w, v) }

// DecodeJSON reads one JSON value from r into v.
func DecodeJSON(r io.Reader, v any) error { return kjson.UnmarshalRead(r, v) }
