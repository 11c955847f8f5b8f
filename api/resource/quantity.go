// Package resource provides Quantity, the fixed-point number with unit suffix
// Kubernetes uses for CPU, memory and other resources ("100m", "1Gi", "1e3").
package resource

import (
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/pb"
)

// Quantity is a resource amount. It travels as a string in JSON and as a message
// {string=1} in protobuf.
type Quantity struct {
	s string
}

// String returns the quantity as text.
func (q Quantity) String() string { return q.s }

// IsZero reports whether q is unset.
func (q Quantity) IsZero() bool { return q.s == "" || q.s == "0" }

// MarshalJSON implements json.Marshaler.
func (q Quantity) MarshalJSON() ([]byte, error) { return json.Marshal(q.String()) }

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (q Quantity) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(q.String()))
}

// UnmarshalJSON implements json.Unmarshaler.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*q = Quantity{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("quantity: %w", err)
	}
	q.s = s
	return nil
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (q *Quantity) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return q.UnmarshalJSON(v)
}

// Size is the protobuf encoded size.
func (q *Quantity) Size() int { return 1 + pb.SizeBytes(len(q.String())) }

// MarshalToSizedBuffer writes q at the end of b and returns the bytes written.
func (q *Quantity) MarshalToSizedBuffer(b []byte) (int, error) {
	return len(b) - pb.PutString(b, len(b), 1, q.String()), nil
}

// Marshal encodes q as protobuf.
func (q *Quantity) Marshal() ([]byte, error) {
	b := make([]byte, q.Size())
	_, err := q.MarshalToSizedBuffer(b)
	return b, err
}

// Unmarshal decodes q from protobuf.
func (q *Quantity) Unmarshal(b []byte) error {
	d := pb.NewDecoder(b, "Quantity")
	for d.Next() {
		if d.Field() == 1 {
			q.s = d.String()
		} else {
			d.Skip()
		}
	}
	return d.Err()
}
