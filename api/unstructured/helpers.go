package unstructured

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// A path into an object is a list of map keys, outermost first: "spec",
// "template", "metadata", "labels". There is no syntax for list indexes; a
// path ends at the first list it reaches.

// errEmptyPath is returned by the setters when they are given no field names.
var errEmptyPath = errors.New("unstructured: empty field path")

// jsonPath renders fields as Kubernetes does in accessor errors: ".spec.replicas".
func jsonPath(fields []string) string {
	return "." + strings.Join(fields, ".")
}

// typeError is the accessor error for a value of the wrong type.
func typeError(fields []string, val any, want string) error {
	return fmt.Errorf("%s accessor error: %v is of the type %T, expected %s", jsonPath(fields), val, val, want)
}

// NestedFieldNoCopy returns the value at the path fields inside obj, without
// copying it: changes to a returned map or slice change obj.
//
// found is false, with no error, when a key is missing or when the path runs
// into a JSON null before its end. The error reports a value on the way that is
// not a map[string]any, naming the path up to it. With no fields, obj itself
// is returned.
func NestedFieldNoCopy(obj map[string]any, fields ...string) (val any, found bool, err error) {
	val = obj
	for i, field := range fields {
		if val == nil {
			return nil, false, nil
		}
		m, ok := val.(map[string]any)
		if !ok {
			return nil, false, typeError(fields[:i+1], val, "map[string]interface{}")
		}
		if val, ok = m[field]; !ok {
			return nil, false, nil
		}
	}
	return val, true, nil
}

// NestedFieldCopy is [NestedFieldNoCopy] returning a deep copy (see
// [DeepCopyJSONValue]) of the value.
func NestedFieldCopy(obj map[string]any, fields ...string) (any, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	return DeepCopyJSONValue(val), true, nil
}

// NestedString returns the string at the path fields inside obj. found is false
// when the field is missing; the error reports a value that is not a string,
// or a value on the way that is not a map.
func NestedString(obj map[string]any, fields ...string) (string, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return "", found, err
	}
	s, ok := val.(string)
	if !ok {
		return "", false, typeError(fields, val, "string")
	}
	return s, true, nil
}

// NestedBool returns the bool at the path fields inside obj, like
// [NestedString].
func NestedBool(obj map[string]any, fields ...string) (bool, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return false, found, err
	}
	b, ok := val.(bool)
	if !ok {
		return false, false, typeError(fields, val, "bool")
	}
	return b, true, nil
}

// NestedInt64 returns the int64 at the path fields inside obj, like
// [NestedString]. JSON integers decode as int64; a float64, even a whole one, is
// a type error.
func NestedInt64(obj map[string]any, fields ...string) (int64, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return 0, found, err
	}
	i, ok := val.(int64)
	if !ok {
		return 0, false, typeError(fields, val, "int64")
	}
	return i, true, nil
}

// NestedFloat64 returns the float64 at the path fields inside obj, like
// [NestedString]. JSON numbers with a fraction or an exponent decode as float64;
// an int64 is a type error (see [NestedNumberAsFloat64]).
func NestedFloat64(obj map[string]any, fields ...string) (float64, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return 0, found, err
	}
	f, ok := val.(float64)
	if !ok {
		return 0, false, typeError(fields, val, "float64")
	}
	return f, true, nil
}

// NestedNumberAsFloat64 returns the number at the path fields inside obj as a
// float64: a float64 as it is, an int64 converted when float64 represents it
// exactly. Other values, and int64s beyond 2⁵³ that would be rounded, are
// errors.
func NestedNumberAsFloat64(obj map[string]any, fields ...string) (float64, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return 0, found, err
	}
	switch x := val.(type) {
	case float64:
		return x, true, nil
	case int64:
		f, acc := new(big.Float).SetInt64(x).Float64()
		if acc != big.Exact {
			return 0, false, fmt.Errorf("%s accessor error: int64 value %d cannot be losslessly converted to float64", jsonPath(fields), x)
		}
		return f, true, nil
	}
	return 0, false, typeError(fields, val, "float64 or int64")
}

// NestedStringSlice returns a copy of the list of strings at the path fields
// inside obj. The error reports a value that is not a []any, or a list member
// that is not a string.
func NestedStringSlice(obj map[string]any, fields ...string) ([]string, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	list, ok := val.([]any)
	if !ok {
		return nil, false, typeError(fields, val, "[]interface{}")
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, false, fmt.Errorf("%s accessor error: contains non-string value in the slice: %v is of the type %T, expected string", jsonPath(fields), v, v)
		}
		out = append(out, s)
	}
	return out, true, nil
}

// NestedSlice returns a deep copy of the list at the path fields inside obj.
// The error reports a value that is not a []any.
func NestedSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	list, ok := val.([]any)
	if !ok {
		return nil, false, typeError(fields, val, "[]interface{}")
	}
	return deepCopySlice(list), true, nil
}

// NestedMap returns a deep copy of the map at the path fields inside obj. The
// error reports a value that is not a map[string]any.
func NestedMap(obj map[string]any, fields ...string) (map[string]any, bool, error) {
	m, found, err := nestedMapNoCopy(obj, false, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	return DeepCopyJSON(m), true, nil
}

// NestedStringMap returns a copy of the map of strings at the path fields inside
// obj. The error reports a value that is not a map[string]any, or a map value
// that is not a string.
func NestedStringMap(obj map[string]any, fields ...string) (map[string]string, bool, error) {
	m, found, err := nestedMapNoCopy(obj, false, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	return toStringMap(m, fields, false)
}

// NestedNullCoercingStringMap is [NestedStringMap] tolerating JSON nulls, as
// decoding into a map[string]string does: a null map is returned as a nil map
// (found), and null values in the map as "". The label and annotation getters
// of [Unstructured] use it.
func NestedNullCoercingStringMap(obj map[string]any, fields ...string) (map[string]string, bool, error) {
	m, found, err := nestedMapNoCopy(obj, true, fields...)
	if !found || err != nil || m == nil {
		return nil, found, err
	}
	return toStringMap(m, fields, true)
}

func toStringMap(m map[string]any, fields []string, nullIsEmpty bool) (map[string]string, bool, error) {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		} else if v == nil && nullIsEmpty {
			out[k] = ""
		} else {
			return nil, false, fmt.Errorf("%s accessor error: contains non-string value in the map under key %q: %v is of the type %T, expected string", jsonPath(fields), k, v, v)
		}
	}
	return out, true, nil
}

func nestedMapNoCopy(obj map[string]any, tolerateNull bool, fields ...string) (map[string]any, bool, error) {
	val, found, err := NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return nil, found, err
	}
	if val == nil && tolerateNull {
		return nil, true, nil
	}
	m, ok := val.(map[string]any)
	if !ok {
		return nil, false, typeError(fields, val, "map[string]interface{}")
	}
	return m, true, nil
}

// SetNestedField stores a deep copy (see [DeepCopyJSONValue]) of value at the
// path fields inside obj, creating the maps on the way that are missing. It
// returns an error, and changes nothing, when a value on the way is not a
// map[string]any, or when fields is empty. obj must not be nil, and value must
// be a JSON value: other types, such as []string, panic as in
// [DeepCopyJSONValue] (use [SetNestedStringSlice] and [SetNestedStringMap]).
func SetNestedField(obj map[string]any, value any, fields ...string) error {
	return setNestedFieldNoCopy(obj, DeepCopyJSONValue(value), fields...)
}

func setNestedFieldNoCopy(obj map[string]any, value any, fields ...string) error {
	if len(fields) == 0 {
		return errEmptyPath
	}
	// Only maps that already exist can fail the walk, and they come before any
	// map is created, so a failure leaves obj unchanged.
	m := obj
	for i, field := range fields[:len(fields)-1] {
		val, ok := m[field]
		if !ok {
			next := make(map[string]any)
			m[field] = next
			m = next
			continue
		}
		if m, ok = val.(map[string]any); !ok {
			return fmt.Errorf("value cannot be set because %s is not a map[string]interface{}", jsonPath(fields[:i+1]))
		}
	}
	m[fields[len(fields)-1]] = value
	return nil
}

// SetNestedStringSlice stores value, as a []any of strings, at the path fields
// inside obj, like [SetNestedField]. A nil value is stored as an empty list.
func SetNestedStringSlice(obj map[string]any, value []string, fields ...string) error {
	list := make([]any, len(value))
	for i, s := range value {
		list[i] = s
	}
	return setNestedFieldNoCopy(obj, list, fields...)
}

// SetNestedSlice stores a deep copy of value at the path fields inside obj,
// like [SetNestedField].
func SetNestedSlice(obj map[string]any, value []any, fields ...string) error {
	return SetNestedField(obj, value, fields...)
}

// SetNestedStringMap stores value, as a map[string]any of strings, at the path
// fields inside obj, like [SetNestedField]. A nil value is stored as an empty
// map.
func SetNestedStringMap(obj map[string]any, value map[string]string, fields ...string) error {
	m := make(map[string]any, len(value))
	for k, v := range value {
		m[k] = v
	}
	return setNestedFieldNoCopy(obj, m, fields...)
}

// SetNestedMap stores a deep copy of value at the path fields inside obj, like
// [SetNestedField].
func SetNestedMap(obj map[string]any, value map[string]any, fields ...string) error {
	return SetNestedField(obj, value, fields...)
}

// RemoveNestedField deletes the field at the path fields inside obj. It does
// nothing when the field, or a map on the way, is missing, or when fields is
// empty.
func RemoveNestedField(obj map[string]any, fields ...string) {
	if len(fields) == 0 {
		return
	}
	m := obj
	for _, field := range fields[:len(fields)-1] {
		next, ok := m[field].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, fields[len(fields)-1])
}

// DeepCopyJSON returns a deep copy of the JSON object m (see
// [DeepCopyJSONValue]); a nil map is copied as nil.
func DeepCopyJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = DeepCopyJSONValue(v)
	}
	return out
}

func deepCopySlice(s []any) []any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = DeepCopyJSONValue(v)
	}
	return out
}

// DeepCopyJSONValue returns a deep copy of a JSON value: maps (map[string]any)
// and lists ([]any) are copied recursively; strings, bools, nil, numbers and
// [encoding/json.Number] are returned as they are.
//
// Kubernetes accepts only int64 and float64 for numbers; this function also
// accepts the other Go integer and floating-point types, which the JSON
// encoder of this package writes as numbers. Any other type, such as []string
// or a struct, panics: values inside an object must be plain JSON values.
func DeepCopyJSONValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return DeepCopyJSON(v)
	case []any:
		return deepCopySlice(v)
	case nil, string, bool, int64, float64, json.Number,
		int, int8, int16, int32, uint, uint8, uint16, uint32, uint64, float32:
		return v
	}
	panic(fmt.Sprintf("unstructured: cannot deep copy %T: not a JSON value", v))
}
