// Package kjson holds the JSON settings every kapi package shares, so that the
// codec, hand-written marshalers and tests all decode exactly as Kubernetes does:
// field names match case-sensitively, omitempty and nil slices/maps behave as in
// encoding/json (what the Kubernetes wire format was written against), and
// duplicate names are tolerated with last-wins semantics like kube-apiserver.
//
// The library is github.com/go-json-experiment/json (the encoding/json/v2
// candidate); codec's benchmarks record why.
package kjson

import (
	"io"
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Options are the marshal and unmarshal options for Kubernetes JSON.
var Options = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	json.MatchCaseInsensitiveNames(false),
	jsonv1.MatchCaseSensitiveDelimiter(false),
	json.Deterministic(true),
	jsontext.EscapeForHTML(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// Marshal encodes v as Kubernetes JSON.
func Marshal(v any) ([]byte, error) { return json.Marshal(v, Options) }

// MarshalWrite encodes v to w.
func MarshalWrite(w io.Writer, v any) error { return json.MarshalWrite(w, v, Options) }

// Unmarshal decodes b into v, matching field names case-sensitively.
func Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v, Options) }

// UnmarshalRead decodes one JSON value from r into v.
func UnmarshalRead(r io.Reader, v any) error { return json.UnmarshalRead(r, v, Options) }

// NewDecoder returns a streaming decoder with the Kubernetes options.
func NewDecoder(r io.Reader) *jsontext.Decoder { return jsontext.NewDecoder(r, Options) }

// NewEncoder returns a streaming encoder with the Kubernetes options.
func NewEncoder(w io.Writer) *jsontext.Encoder { return jsontext.NewEncoder(w, Options) }

// UnmarshalDecode decodes the next value of dec into v.
func UnmarshalDecode(dec *jsontext.Decoder, v any) error {
	return json.UnmarshalDecode(dec, v, Options)
}

// MarshalEncode encodes v as the next value of enc.
func MarshalEncode(enc *jsontext.Encoder, v any) error { return json.MarshalEncode(enc, v, Options) }

// rejectUnknown are Options that refuse object members the Go type does not
// declare and duplicate names, with v2 error semantics (no separate
// validation pass).
var rejectUnknown = json.JoinOptions(Options, json.RejectUnknownMembers(true), jsonv1.ReportErrorsWithLegacySemantics(false),
	jsontext.AllowDuplicateNames(false))

// UnmarshalKnown decodes b into v as Unmarshal does. maybeUnknown is false
// when b certainly holds no member v's type does not declare and no name
// twice in an object: the usual case, in which b is decoded once. Otherwise
// (unknown members, duplicate names, or any error) b is decoded once more
// with Unmarshal, so that v and the error are exactly Unmarshal's, and
// maybeUnknown is true when that succeeds.
func UnmarshalKnown(b []byte, v any) (maybeUnknown bool, err error) {
	if json.Unmarshal(b, v, rejectUnknown) == nil {
		return false, nil
	}
	if p := reflect.ValueOf(v); p.Kind() == reflect.Pointer && !p.IsNil() {
		p.Elem().SetZero() // what the first decode filled in
	}
	err = json.Unmarshal(b, v, Options)
	return err == nil, err
}

// UnmarshalDetailed decodes b into v as Unmarshal does, but reports a
// failure as a *json.SemanticError that locates it exactly (its
// JSONPointer), instead of encoding/json's error. It is for wording an
// error Unmarshal reported, not for decoding.
func UnmarshalDetailed(b []byte, v any) error {
	return json.Unmarshal(b, v, Options, jsonv1.ReportErrorsWithLegacySemantics(false))
}
