package v1

import (
	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/pb"
)

// UID is a unique identifier the server assigns to every object.
type UID string

// NodeName is the name of a node (Kubernetes' types.NodeName), as fields
// that refer to one spell it.
type NodeName string

// FieldsV1 holds a managed-fields set in its raw JSON form ({"f:metadata":{…}}).
// In protobuf it is a message with the JSON bytes in field 1.
type FieldsV1 struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=Raw"`
}

// RawExtension holds an embedded object as raw bytes: JSON in JSON documents, a
// protobuf envelope in protobuf ones (field 1).
type RawExtension struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=raw"`
}

func rawJSON(raw []byte) []byte {
	if raw == nil {
		return []byte("null")
	}
	return raw
}

func readRawJSON(dec *jsontext.Decoder) ([]byte, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if v.Kind() == 'n' {
		return nil, nil
	}
	return v.Clone(), nil
}

// MarshalJSON implements json.Marshaler.
func (f FieldsV1) MarshalJSON() ([]byte, error) { return rawJSON(f.Raw), nil }

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (f FieldsV1) MarshalJSONTo(enc *jsontext.Encoder) error { return enc.WriteValue(rawJSON(f.Raw)) }

// UnmarshalJSON implements json.Unmarshaler. It never writes into the
// slice f.Raw held before, which may be shared (see UnmarshalFrom).
func (f *FieldsV1) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		f.Raw = nil
		return nil
	}
	f.Raw = append([]byte{}, b...)
	return nil
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (f *FieldsV1) UnmarshalJSONFrom(dec *jsontext.Decoder) (err error) {
	f.Raw, err = readRawJSON(dec)
	return err
}

// MarshalJSON implements json.Marshaler.
func (r RawExtension) MarshalJSON() ([]byte, error) { return rawJSON(r.Raw), nil }

// MarshalJSONTo implements the streaming marshaler of go-json-experiment.
func (r RawExtension) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(rawJSON(r.Raw))
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *RawExtension) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		r.Raw = nil
		return nil
	}
	r.Raw = append(r.Raw[:0], b...)
	return nil
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (r *RawExtension) UnmarshalJSONFrom(dec *jsontext.Decoder) (err error) {
	r.Raw, err = readRawJSON(dec)
	return err
}

func sizeRaw(raw []byte) int {
	if raw == nil {
		return 0
	}
	return 1 + pb.SizeBytes(len(raw))
}

func putRaw(b []byte, raw []byte) int {
	if raw == nil {
		return 0
	}
	return len(b) - pb.PutBytes(b, len(b), 1, raw)
}

func unmarshalRaw(b []byte, msg string) ([]byte, error) {
	var raw []byte
	d := pb.NewDecoder(b, msg)
	for d.Next() {
		if d.Field() == 1 {
			raw = d.CopyBytes()
		} else {
			d.Skip()
		}
	}
	return raw, d.Err()
}

// Size is the protobuf encoded size.
func (f *FieldsV1) Size() int { return sizeRaw(f.Raw) }

// MarshalToSizedBuffer writes f at the end of b and returns the bytes written.
func (f *FieldsV1) MarshalToSizedBuffer(b []byte) (int, error) { return putRaw(b, f.Raw), nil }

// Marshal encodes f as protobuf.
func (f *FieldsV1) Marshal() ([]byte, error) {
	b := make([]byte, f.Size())
	putRaw(b, f.Raw)
	return b, nil
}

// Unmarshal decodes f from protobuf.
func (f *FieldsV1) Unmarshal(b []byte) (err error) {
	f.Raw, err = unmarshalRaw(b, "FieldsV1")
	return err
}

// UnmarshalFrom decodes the message d reads into f. When d's state shares
// byte slices (the informer's list and watch decoding), f.Raw may be shared
// with other objects of the same decode that hold equal managed fields: it
// must then be treated as read-only (replace it, never write into it), as
// every object of an informer's cache is.
func (f *FieldsV1) UnmarshalFrom(d *pb.Decoder) error {
	d.SetName("FieldsV1")
	var raw []byte
	for d.Next() {
		if d.Field() == 1 {
			raw = d.SharedBytes()
		} else {
			d.Skip()
		}
	}
	f.Raw = raw
	return d.Err()
}

// Size is the protobuf encoded size.
func (r *RawExtension) Size() int { return sizeRaw(r.Raw) }

// MarshalToSizedBuffer writes r at the end of b and returns the bytes written.
func (r *RawExtension) MarshalToSizedBuffer(b []byte) (int, error) { return putRaw(b, r.Raw), nil }

// Marshal encodes r as protobuf.
func (r *RawExtension) Marshal() ([]byte, error) {
	b := make([]byte, r.Size())
	putRaw(b, r.Raw)
	return b, nil
}

// Unmarshal decodes r from protobuf.
func (r *RawExtension) Unmarshal(b []byte) (err error) {
	r.Raw, err = unmarshalRaw(b, "RawExtension")
	return err
}

// DeepCopyInto copies f into out.
func (f *FieldsV1) DeepCopyInto(out *FieldsV1) { out.Raw = cloneBytes(f.Raw) }

// DeepCopy returns a copy of f.
func (f *FieldsV1) DeepCopy() *FieldsV1 {
	if f == nil {
		return nil
	}
	return &FieldsV1{Raw: cloneBytes(f.Raw)}
}

// DeepCopyInto copies r into out.
func (r *RawExtension) DeepCopyInto(out *RawExtension) { out.Raw = cloneBytes(r.Raw) }

// DeepCopy returns a copy of r.
func (r *RawExtension) DeepCopy() *RawExtension {
	if r == nil {
		return nil
	}
	return &RawExtension{Raw: cloneBytes(r.Raw)}
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
