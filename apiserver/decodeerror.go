package apiserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Wording a JSON value of the wrong type in a typed object as
// kube-apiserver's decoder does: "json: cannot unmarshal number into Go
// struct field Container.spec.containers.image of type string" names the
// innermost struct whose field holds the value and the path of field names
// to it, without list indices and map keys, with the Go names of the
// embedded structs a promoted field is reached through
// ("spec.volumes.VolumeSource.configMap"). The types that decode
// themselves fail as Kubernetes' do: an IntOrString that is neither a
// string nor an int32 as an int32, a Time that is not a string as a
// string and one that does not parse with time.Parse's error, a Quantity
// and base64 data with their own message alone.

// typeError is kube-apiserver's message for a JSON value of the wrong type.
type typeError struct {
	value  string // "number", "number 1.5", "string", "bool", "array", "object"
	typ    string // the Go type: "int32", "[]v1.Container"
	strct  string // the innermost struct type, "" outside any
	fields string // the field path, "spec.containers.image"
}

func (e *typeError) Error() string {
	if e.strct == "" && e.fields == "" {
		return "json: cannot unmarshal " + e.value + " into Go value of type " + e.typ
	}
	return "json: cannot unmarshal " + e.value + " into Go struct field " + e.strct + "." + e.fields + " of type " + e.typ
}

var (
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
)

// kubeDecodeError words err, the failure to decode data into a new
// object of obj's type (a pointer to a struct), as kube-apiserver does. An
// error it does not recognize is returned as is.
func kubeDecodeError(obj any, data []byte, err error) error {
	root := reflect.TypeOf(obj)
	if root == nil || root.Kind() != reflect.Pointer || root.Elem().Kind() != reflect.Struct {
		return err
	}
	var se *jsonv2.SemanticError
	if !errors.As(kjson.UnmarshalDetailed(data, reflect.New(root.Elem()).Interface()), &se) || se.JSONPointer == "" {
		return err
	}
	tokens := make([]string, 0, 8)
	for tok := range se.JSONPointer.Tokens() {
		tokens = append(tokens, tok)
	}
	strct, fields := errorContext(root.Elem(), tokens)
	var te *jsonv1.UnmarshalTypeError
	if errors.As(err, &te) && te.Type != nil {
		var b64 base64.CorruptInputError
		if te.Err != nil && errors.As(te.Err, &b64) {
			return b64 // kube-apiserver's decoder adds nothing to it
		}
		return &typeError{value: te.Value, typ: te.Type.String(), strct: strct, fields: fields}
	}
	// The error of a type that decodes itself.
	switch se.GoType {
	case intOrStringType:
		if v, ok := valueAt(data, tokens); ok {
			return &typeError{value: describeValue(v, reflect.Int32), typ: "int32", strct: strct, fields: fields}
		}
	case timeType, microTimeType:
		layout := time.RFC3339
		if se.GoType == microTimeType {
			layout = metav1.RFC3339Micro
		}
		if v, ok := valueAt(data, tokens); ok {
			if s, isString := v.(string); isString {
				if _, perr := time.Parse(layout, s); perr != nil {
					return perr
				}
				return err
			}
			return &typeError{value: describeValue(v, reflect.String), typ: "string", strct: strct, fields: fields}
		}
	case quantityType:
		for _, q := range []error{resource.ErrFormatWrong, resource.ErrNumeric, resource.ErrSuffix} {
			if errors.Is(err, q) {
				return q
			}
		}
	}
	return err
}

// errorContext follows tokens (a JSON pointer's) from the struct type t
// and returns the name of the innermost struct a field was found in and
// the dotted field path, as encoding/json's decoder records them: list
// indices and map keys are left out, embedded structs a promoted field is
// reached through are named by their Go field names.
func errorContext(t reflect.Type, tokens []string) (strct, fields string) {
	var path []string
	for _, tok := range tokens {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			via, f, ok := jsonField(t, tok)
			if !ok {
				return strct, strings.Join(path, ".")
			}
			strct = t.Name()
			path = append(append(path, via...), tok)
			t = f
		case reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		default:
			return strct, strings.Join(path, ".")
		}
	}
	return strct, strings.Join(path, ".")
}

// jsonField finds the field of struct type t that encoding/json decodes
// the member name into, case-sensitively: a field of t itself, or one
// promoted from an embedded struct without a JSON name (the shallowest),
// via naming the embedded fields it is reached through.
func jsonField(t reflect.Type, name string) (via []string, ft reflect.Type, ok bool) {
	type level struct {
		t   reflect.Type
		via []string
	}
	current := []level{{t: t}}
	for depth := 0; len(current) > 0 && depth < 10; depth++ {
		var next []level
		for _, l := range current {
			for i := range l.t.NumField() {
				f := l.t.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				tagName, _, _ := strings.Cut(tag, ",")
				ftype := f.Type
				for ftype.Kind() == reflect.Pointer {
					ftype = ftype.Elem()
				}
				if tagName == "" && f.Anonymous && ftype.Kind() == reflect.Struct {
					next = append(next, level{t: ftype, via: append(append([]string(nil), l.via...), f.Name)})
					continue
				}
				if !f.IsExported() {
					continue
				}
				if tagName == "" {
					tagName = f.Name
				}
				if tagName == name {
					return l.via, f.Type, true
				}
			}
		}
		current = next
	}
	return nil, nil, false
}

// valueAt returns the JSON value at tokens in data, numbers as json.Number.
func valueAt(data []byte, tokens []string) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	for _, tok := range tokens {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// describeValue is how encoding/json names a JSON value that does not fit
// a Go value of kind: its kind, and a number's text when it does not fit a
// number kind.
func describeValue(v any, kind reflect.Kind) string {
	switch v := v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if kind == reflect.Int32 {
			if _, err := strconv.ParseInt(string(v), 10, 32); err != nil {
				return "number " + string(v)
			}
		}
		return "number"
	case nil:
		return "null"
	}
	return "value"
}
