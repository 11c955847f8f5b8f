// Package jsonvalue copies the values encoding/json-style decoders produce
// (map[string]any, []any, string, bool, float64, int64, json.Number, nil).
package jsonvalue

import (
	"encoding/json"
	"fmt"
)

// DeepCopy returns a copy of v that shares no maps or slices with it. It panics
// on a type JSON cannot produce, which is a programming error in the caller.
func DeepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = DeepCopy(x)
		}
		return m
	case []any:
		if v == nil {
			return v
		}
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = DeepCopy(x)
		}
		return s
	case nil, string, bool, float64, int64, int, int32, float32, json.Number:
		return v
	}
	panic(fmt.Sprintf("jsonvalue: cannot deep-copy %T", v))
}
