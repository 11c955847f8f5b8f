// Package intstr provides IntOrString, the Kubernetes value that is either an
// integer or a string (a port number or name, a replica count or percentage).
package intstr

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/pb"
)

// Type says which of the two values an IntOrString holds.
type Type int64

const (
	// Int means IntVal holds the value.
	Int Type = iota
	// String means StrVal holds the value.
	String
)

// IntOrString is an int32 or a string. In JSON it is a bare number or a string;
// in protobuf a message {type=1, intVal=2, strVal=3} with all fields present.
type IntOrString struct {
	Type   Type   `protobuf:"varint,1,opt,name=type,casttype=Type"`
	IntVal int32  `protobuf:"varint,2,opt,name=intVal"`
	StrVal string `protobuf:"bytes,3,opt,name=strVal"`
}

// FromInt32 returns an IntOrString holding v.
func FromInt32(v int32) IntOrString { return IntOrString{Type: Int, IntVal: v} }

// FromString returns an IntOrString holding s.
func FromString(s string) IntOrString { return IntOrString{Type: String, StrVal: s} }

// Parse returns an integer IntOrString if s is a decimal int32, a string one otherwise.
func Parse(s string) IntOrString {
	if v, err := strconv.ParseInt(s, 10, 32); err == nil {
		return FromInt32(int32(v))
	}
	return FromString(s)
}

// String returns the value as text.
func (v IntOrString) String() string {
	if v.Type == String {
		return v.StrVal
	}
	return strconv.Itoa(int(v.IntVal))
}

// IntValue returns the integer value, parsing a string value if it can.
func (v IntOrString) IntValue() int {
	if v.Type == String {
		i, _ := strconv.Atoi(v.StrVal)
		return i
	}
	return int(v.IntVal)
}

// ScaledValue resolves v against total: a percentage string ("25%") is that share
// of total, rounded up when roundUp is set; an integer is returned as is.
func (v IntOrString) ScaledValue(total int, roundUp bool) (int, error) {
	if v.Type == Int {
		return int(v.IntVal), nil
	}
	s, ok := strings.CutSuffix(v.StrVal, "%")
	if !ok {
		return 0, fmt.Errorf("invalid value %q: must be an integer or a percentage", v.StrVal)
	}
	pct, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("invalid value for IntOrString: invalid value %q: %w", v.StrVal, err)
	}
	f := float64(pct) * float64(total) / 100
	if roundUp {
		return int(math.Ceil(f)), nil
	}
	return int(math.Floor(f)), nil
}

// MarshalJSON implements json.Marshaler.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.Type == String {
		return json.Marshal(v.StrVal)
	}
	return strconv.AppendInt(nil, int64(v.IntVal), 10), nil
}

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (v IntOrString) MarshalJSONTo(enc *jsontext.Encoder) error {
	if v.Type == String {
		return enc.WriteToken(jsontext.String(v.StrVal))
	}
	return enc.WriteToken(jsontext.Int(int64(v.IntVal)))
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.Type = String
		v.IntVal = 0
		return json.Unmarshal(b, &v.StrVal)
	}
	i, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return fmt.Errorf("IntOrString: %s is neither a string nor an int32", b)
	}
	*v = FromInt32(int32(i))
	return nil
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (v *IntOrString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case '"':
		*v = FromString(tok.String())
		return nil
	case '0':
		return v.UnmarshalJSON([]byte(tok.String()))
	}
	return fmt.Errorf("IntOrString: %s is neither a string nor an int32", tok.Kind())
}

// Size is the protobuf encoded size.
func (v *IntOrString) Size() int {
	return 1 + pb.SizeVarint(uint64(v.Type)) + 1 + pb.SizeVarint(uint64(int64(v.IntVal))) + 1 + pb.SizeBytes(len(v.StrVal))
}

// MarshalToSizedBuffer writes v at the end of b and returns the bytes written.
func (v *IntOrString) MarshalToSizedBuffer(b []byte) (int, error) {
	i := pb.PutString(b, len(b), 3, v.StrVal)
	i = pb.PutUvarint(b, i, 2, uint64(int64(v.IntVal)))
	i = pb.PutUvarint(b, i, 1, uint64(v.Type))
	return len(b) - i, nil
}

// Marshal encodes v as protobuf.
func (v *IntOrString) Marshal() ([]byte, error) {
	b := make([]byte, v.Size())
	_, err := v.MarshalToSizedBuffer(b)
	return b, err
}

// Unmarshal decodes v from protobuf.
func (v *IntOrString) Unmarshal(b []byte) error {
	d := pb.NewDecoder(b, "IntOrString")
	for d.Next() {
		switch d.Field() {
		case 1:
			v.Type = Type(d.Uvarint())
		case 2:
			v.IntVal = int32(d.Uvarint())
		case 3:
			v.StrVal = d.String()
		default:
			d.Skip()
		}
	}
	return d.Err()
}
