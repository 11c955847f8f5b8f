package v1

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// JSON holds an arbitrary JSON value (a default, an example, an enum member) as
// raw bytes.
type JSON struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=raw"`
}

// JSONSchemaPropsOrArray is a schema or a list of schemas ("items").
type JSONSchemaPropsOrArray struct {
	Schema      *JSONSchemaProps  `protobuf:"bytes,1,opt,name=schema"`
	JSONSchemas []JSONSchemaProps `protobuf:"bytes,2,rep,name=jSONSchemas"`
}

// JSONSchemaPropsOrBool is a schema or a boolean ("additionalProperties").
type JSONSchemaPropsOrBool struct {
	Allows bool             `protobuf:"varint,1,opt,name=allows"`
	Schema *JSONSchemaProps `protobuf:"bytes,2,opt,name=schema"`
}

// JSONSchemaPropsOrStringArray is a schema or a list of property names
// ("dependencies").
type JSONSchemaPropsOrStringArray struct {
	Schema   *JSONSchemaProps `protobuf:"bytes,1,opt,name=schema"`
	Property []string         `protobuf:"bytes,2,rep,name=property"`
}

// MarshalJSON implements json.Marshaler.
func (j JSON) MarshalJSON() ([]byte, error) {
	if len(j.Raw) == 0 {
		return []byte("null"), nil
	}
	return j.Raw, nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (j *JSON) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		j.Raw = append(j.Raw[:0], b...)
	}
	return nil
}

// UnmarshalJSONFrom implements the streaming unmarshaler of go-json-experiment.
func (j *JSON) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return j.UnmarshalJSON(v)
}

// MarshalJSON implements json.Marshaler.
func (s JSONSchemaPropsOrArray) MarshalJSON() ([]byte, error) {
	if len(s.JSONSchemas) > 0 {
		return kjson.Marshal(s.JSONSchemas)
	}
	return kjson.Marshal(s.Schema)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *JSONSchemaPropsOrArray) UnmarshalJSON(b []byte) error {
	var v JSONSchemaPropsOrArray
	switch {
	case len(b) > 0 && b[0] == '{':
		v.Schema = new(JSONSchemaProps)
		if err := kjson.Unmarshal(b, v.Schema); err != nil {
			return err
		}
	case len(b) > 0 && b[0] == '[':
		if err := kjson.Unmarshal(b, &v.JSONSchemas); err != nil {
			return err
		}
	case string(b) != "null":
		return errors.New("JSONSchemaPropsOrArray: want an object or an array")
	}
	*s = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (s JSONSchemaPropsOrBool) MarshalJSON() ([]byte, error) {
	if s.Schema != nil {
		return kjson.Marshal(s.Schema)
	}
	if s.Allows {
		return []byte("true"), nil
	}
	return []byte("false"), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *JSONSchemaPropsOrBool) UnmarshalJSON(b []byte) error {
	var v JSONSchemaPropsOrBool
	switch string(b) {
	case "true":
		v.Allows = true
	case "false", "null":
	default:
		if len(b) == 0 || b[0] != '{' {
			return errors.New("JSONSchemaPropsOrBool: want a boolean or a JSON schema")
		}
		v.Allows, v.Schema = true, new(JSONSchemaProps)
		if err := kjson.Unmarshal(b, v.Schema); err != nil {
			return err
		}
	}
	*s = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (s JSONSchemaPropsOrStringArray) MarshalJSON() ([]byte, error) {
	if len(s.Property) > 0 {
		return kjson.Marshal(s.Property)
	}
	if s.Schema != nil {
		return kjson.Marshal(s.Schema)
	}
	return []byte("null"), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *JSONSchemaPropsOrStringArray) UnmarshalJSON(b []byte) error {
	var v JSONSchemaPropsOrStringArray
	switch {
	case len(b) > 0 && b[0] == '{':
		v.Schema = new(JSONSchemaProps)
		if err := kjson.Unmarshal(b, v.Schema); err != nil {
			return err
		}
	case len(b) > 0 && b[0] == '[':
		if err := kjson.Unmarshal(b, &v.Property); err != nil {
			return err
		}
	case string(b) != "null":
		return errors.New("JSONSchemaPropsOrStringArray: want an object or an array of strings")
	}
	*s = v
	return nil
}

// DeepCopyInto copies j into out.
func (j *JSON) DeepCopyInto(out *JSON) {
	out.Raw = nil
	if j.Raw != nil {
		out.Raw = append([]byte{}, j.Raw...)
	}
}

// DeepCopy returns a copy of j.
func (j *JSON) DeepCopy() *JSON {
	if j == nil {
		return nil
	}
	out := new(JSON)
	j.DeepCopyInto(out)
	return out
}
