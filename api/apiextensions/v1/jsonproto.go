package v1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/internal/pb"
)

// JSON's protobuf form is Kubernetes' message JSON { optional bytes raw = 1 }:
// the JSON text itself. Its methods are written by hand (not generated) so
// that decoding checks the text: a JSON value in the JSON wire form is
// always well-formed (the JSON parser saw it), and a protobuf body must not
// bring in what a JSON body cannot, which could not be written back as JSON.

// Size returns the protobuf encoded size of j.
func (j *JSON) Size() (n int) {
	if j == nil || j.Raw == nil {
		return 0
	}
	return 1 + pb.SizeBytes(len(j.Raw))
}

// Marshal encodes j as protobuf.
func (j *JSON) Marshal() ([]byte, error) {
	b := make([]byte, j.Size())
	n, err := j.MarshalToSizedBuffer(b)
	if err != nil {
		return nil, err
	}
	return b[len(b)-n:], nil
}

// MarshalTo encodes j into the front of b, which must hold j.Size() bytes.
func (j *JSON) MarshalTo(b []byte) (int, error) {
	return j.MarshalToSizedBuffer(b[:j.Size()])
}

// MarshalToSizedBuffer encodes j at the end of b and returns its length.
func (j *JSON) MarshalToSizedBuffer(b []byte) (int, error) {
	i := len(b)
	if j.Raw != nil {
		i = pb.PutBytes(b, i, 1, j.Raw)
	}
	return len(b) - i, nil
}

// Unmarshal decodes protobuf bytes into j, which should be zero.
func (j *JSON) Unmarshal(b []byte) error {
	return j.UnmarshalFrom(pb.NewDecoder(b, "JSON"))
}

// UnmarshalFrom decodes the message d reads into j, which should be zero. A
// raw value that is not one well-formed JSON value is an error, worded as
// encoding/json words it.
func (j *JSON) UnmarshalFrom(d *pb.Decoder) error {
	d.SetName("JSON")
	for d.Next() {
		switch d.Field() {
		case 1:
			j.Raw = d.CopyBytes()
		default:
			d.Skip()
		}
	}
	if err := d.Err(); err != nil {
		return err
	}
	if len(j.Raw) > 0 && !json.Valid(j.Raw) {
		var buf bytes.Buffer
		err := json.Compact(&buf, j.Raw)
		if err == nil {
			err = fmt.Errorf("not one JSON value")
		}
		return fmt.Errorf("decoding JSON field raw: %w", err)
	}
	return nil
}
