package v1

import (
	"encoding/json"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/pb"
)

// Duration is a time.Duration that travels as a Go duration string ("1m30s") in
// JSON and as {duration=1 (int64 nanoseconds)} in protobuf.
type Duration struct {
	time.Duration `protobuf:"-"`
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (d Duration) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteToken(jsontext.String(d.Duration.String()))
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	d.Duration = v
	return err
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (d *Duration) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return d.UnmarshalJSON(v)
}

// Size is the protobuf encoded size.
func (d *Duration) Size() int { return 1 + pb.SizeVarint(uint64(d.Duration)) }

// MarshalToSizedBuffer writes d at the end of b and returns the bytes written.
func (d *Duration) MarshalToSizedBuffer(b []byte) (int, error) {
	return len(b) - pb.PutUvarint(b, len(b), 1, uint64(d.Duration)), nil
}

// Marshal encodes d as protobuf.
func (d *Duration) Marshal() ([]byte, error) {
	b := make([]byte, d.Size())
	_, err := d.MarshalToSizedBuffer(b)
	return b, err
}

// Unmarshal decodes d from protobuf.
func (d *Duration) Unmarshal(b []byte) error {
	dec := pb.NewDecoder(b, "Duration")
	for dec.Next() {
		if dec.Field() == 1 {
			d.Duration = time.Duration(dec.Uvarint())
		} else {
			dec.Skip()
		}
	}
	return dec.Err()
}
