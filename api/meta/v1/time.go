package v1

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/pb"
)

// Time is a timestamp with Kubernetes' wire forms: in JSON an RFC 3339 string with
// second precision in UTC (null when zero), in protobuf a message of seconds (1)
// and nanos (2). Decoded times are in UTC.
type Time struct {
	time.Time `protobuf:"-"`
}

// MicroTime is Time with microsecond precision in JSON
// ("2006-01-02T15:04:05.000000Z07:00"), used by Event and Lease.
type MicroTime struct {
	time.Time `protobuf:"-"`
}

// RFC3339Micro is the JSON layout of MicroTime.
const RFC3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// NewTime wraps t.
func NewTime(t time.Time) Time { return Time{t} }

// Now returns the current time truncated to seconds, as the server stores it.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

// NewMicroTime wraps t.
func NewMicroTime(t time.Time) MicroTime { return MicroTime{t} }

// NowMicro returns the current time truncated to microseconds.
func NowMicro() MicroTime { return MicroTime{time.Now().UTC().Truncate(time.Microsecond)} }

// Equal reports whether t and u are the same instant (nil pointers are equal to
// each other and to a zero time).
func (t *Time) Equal(u *Time) bool {
	if t == nil || u == nil {
		return (t == nil || t.IsZero()) && (u == nil || u.IsZero())
	}
	return t.Time.Equal(u.Time)
}

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return append(t.UTC().AppendFormat([]byte{'"'}, time.RFC3339), '"'), nil
}

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (t Time) MarshalJSONTo(enc *jsontext.Encoder) error {
	if t.IsZero() {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteToken(jsontext.String(t.UTC().Format(time.RFC3339)))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	v, err := parseJSONTime(b, time.RFC3339)
	t.Time = v
	return err
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (t *Time) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := decodeJSONTime(dec, time.RFC3339)
	t.Time = v
	return err
}

// MarshalJSON implements json.Marshaler.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return append(t.UTC().AppendFormat([]byte{'"'}, RFC3339Micro), '"'), nil
}

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (t MicroTime) MarshalJSONTo(enc *jsontext.Encoder) error {
	if t.IsZero() {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteToken(jsontext.String(t.UTC().Format(RFC3339Micro)))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	v, err := parseJSONTime(b, RFC3339Micro)
	t.Time = v
	return err
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (t *MicroTime) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := decodeJSONTime(dec, RFC3339Micro)
	t.Time = v
	return err
}

func parseJSONTime(b []byte, layout string) (time.Time, error) {
	if string(b) == "null" {
		return time.Time{}, nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return time.Time{}, &time.ParseError{Layout: layout, Value: string(b), Message: ": want a JSON string"}
	}
	return parseTime(string(b[1 : len(b)-1]))
}

func decodeJSONTime(dec *jsontext.Decoder, layout string) (time.Time, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return time.Time{}, err
	}
	switch tok.Kind() {
	case 'n':
		return time.Time{}, nil
	case '"':
		return parseTime(tok.String())
	}
	return time.Time{}, &time.ParseError{Layout: layout, Value: tok.String(), Message: ": want a JSON string"}
}

// parseTime accepts RFC 3339 with or without fractional seconds, as Kubernetes does.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return v.UTC(), nil
}

// Protobuf: google.protobuf.Timestamp-shaped message {seconds=1, nanos=2}; a zero
// time is an empty message.

func sizeTimestamp(t time.Time) int {
	if t.IsZero() {
		return 0
	}
	return 1 + pb.SizeVarint(uint64(t.Unix())) + 1 + pb.SizeVarint(uint64(int64(t.Nanosecond())))
}

func putTimestamp(b []byte, i int, t time.Time) int {
	if t.IsZero() {
		return i
	}
	i = pb.PutUvarint(b, i, 2, uint64(int64(int32(t.Nanosecond()))))
	return pb.PutUvarint(b, i, 1, uint64(t.Unix()))
}

func unmarshalTimestamp(b []byte, msg string) (time.Time, error) {
	var sec, nsec int64
	d := pb.NewDecoder(b, msg)
	for d.Next() {
		switch d.Field() {
		case 1:
			sec = int64(d.Uvarint())
		case 2:
			nsec = int64(int32(d.Uvarint()))
		default:
			d.Skip()
		}
	}
	if err := d.Err(); err != nil || len(b) == 0 {
		return time.Time{}, err
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// Size is the protobuf encoded size.
func (t *Time) Size() int { return sizeTimestamp(t.Time) }

// MarshalToSizedBuffer writes t at the end of b and returns the bytes written.
func (t *Time) MarshalToSizedBuffer(b []byte) (int, error) {
	return len(b) - putTimestamp(b, len(b), t.Time), nil
}

// Marshal encodes t as protobuf.
func (t *Time) Marshal() ([]byte, error) {
	b := make([]byte, t.Size())
	putTimestamp(b, len(b), t.Time)
	return b, nil
}

// Unmarshal decodes t from protobuf.
func (t *Time) Unmarshal(b []byte) (err error) {
	t.Time, err = unmarshalTimestamp(b, "Time")
	return err
}

// Size is the protobuf encoded size.
func (t *MicroTime) Size() int { return sizeTimestamp(t.Time) }

// MarshalToSizedBuffer writes t at the end of b and returns the bytes written.
func (t *MicroTime) MarshalToSizedBuffer(b []byte) (int, error) {
	return len(b) - putTimestamp(b, len(b), t.Time), nil
}

// Marshal encodes t as protobuf.
func (t *MicroTime) Marshal() ([]byte, error) {
	b := make([]byte, t.Size())
	putTimestamp(b, len(b), t.Time)
	return b, nil
}

// Unmarshal decodes t from protobuf.
func (t *MicroTime) Unmarshal(b []byte) (err error) {
	t.Time, err = unmarshalTimestamp(b, "MicroTime")
	return err
}
