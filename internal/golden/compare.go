package golden

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Covers reports whether got, a decoded JSON value, holds everything want
// holds: every value of want is in got and equal (a null in want may be absent
// in got), and got has extra fields only where they are zero values (null, "",
// 0, false, {} or []). Kubernetes' own Go types add exactly such zero values
// when they re-encode a document, so they are not a change of data; anything
// else is a lost or invented value. On a mismatch it returns the JSON path of
// the first difference.
func Covers(want, got any) (path string, ok bool) { return covers(want, got, "") }

func covers(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			gv, present := g[k]
			if wv == nil && (!present || gv == nil) {
				continue
			}
			if !present {
				return path + "." + k + " (missing)", false
			}
			if p, ok := covers(wv, gv, path+"."+k); !ok {
				return p, false
			}
		}
		for k, gv := range g {
			if _, ok := w[k]; !ok && !IsZero(gv) {
				return path + "." + k + " (extra)", false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path + " (length)", false
		}
		for i := range w {
			if p, ok := covers(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(want, got)
}

// IsZero reports whether a decoded JSON value is empty: null, "", 0, false, or
// an array or object of such values.
func IsZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case float64:
		return v == 0
	case json.Number:
		return v == "0"
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		for _, x := range v {
			if !IsZero(x) {
				return false
			}
		}
		return true
	}
	return false
}
