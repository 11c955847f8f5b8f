package unstructured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// goldenDir holds the v1.32.2 captures and the unnumbered ones; golden137Dir
// the numbered captures of v1.37.2, the reference (see internal/golden).
const (
	goldenDir    = "../../testdata/golden"
	golden137Dir = "../../testdata/golden-1.37"
)

// goldenBody returns the response body of a golden exchange, as v1.37.2
// answered where it was captured from it: what follows the blank line after
// the response status and headers, below the "---" line.
func goldenBody(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(golden137Dir, name))
	if errors.Is(err, os.ErrNotExist) {
		b, err = os.ReadFile(filepath.Join(goldenDir, name))
	}
	if err != nil {
		tb.Fatal(err)
	}
	body, ok := parseGolden(b)
	if !ok {
		tb.Fatalf("%s: no response body", name)
	}
	return body
}

// parseGolden cuts the response body out of a golden exchange; ok is false
// when there is none.
func parseGolden(b []byte) (body []byte, ok bool) {
	_, resp, ok := bytes.Cut(b, []byte("\n---\n"))
	if !ok {
		return nil, false
	}
	_, body, ok = bytes.Cut(resp, []byte("\n\n"))
	if !ok {
		return nil, false
	}
	return bytes.TrimRight(body, "\n"), true
}

// goldenJSONObjects returns the name and body of every golden exchange whose
// response is a single JSON object, of both releases ("golden/07-...",
// "golden-1.37/07-...").
func goldenJSONObjects(tb testing.TB) map[string][]byte {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(goldenDir, "*.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	names137, err := filepath.Glob(filepath.Join(golden137Dir, "[0-9]*.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	names = append(names, names137...)
	out := make(map[string][]byte)
	for _, path := range names {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		body, ok := parseGolden(b)
		if !ok || len(body) == 0 || body[0] != '{' || !json.Valid(body) {
			continue // protobuf, empty, or a watch stream of several documents
		}
		out[filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path)] = body
	}
	if len(out) < 80 {
		tb.Fatalf("found only %d golden JSON objects", len(out))
	}
	return out
}

// refDecode decodes data as Kubernetes does (sigs.k8s.io/json's
// UnmarshalCaseSensitivePreserveInts): encoding/json, with numbers converted
// to int64 when they have no "." and parse as int64, float64 otherwise.
func refDecode(data []byte) (any, error) {
	if !json.Valid(data) {
		// json.Valid rejects what encoding/json would, including trailing data.
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return refConvert(v)
}

func refConvert(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		s := string(v)
		if !strings.Contains(s, ".") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
		}
		return strconv.ParseFloat(s, 64)
	case map[string]any:
		for k, x := range v {
			c, err := refConvert(x)
			if err != nil {
				return nil, err
			}
			v[k] = c
		}
	case []any:
		for i, x := range v {
			c, err := refConvert(x)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
	}
	return v, nil
}

// diffJSON describes the first difference between two decoded JSON values,
// comparing Go types exactly (an int64 is not a float64), or returns "".
func diffJSON(path string, got, want any) string {
	if path == "" {
		path = "."
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %T, want object", path, got)
		}
		if (g == nil) != (w == nil) {
			return fmt.Sprintf("%s: got nil %v, want nil %v", path, g == nil, w == nil)
		}
		for k := range w {
			if _, ok := g[k]; !ok {
				return fmt.Sprintf("%s: missing %q", path, k)
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Sprintf("%s: extra %q", path, k)
			}
			if d := diffJSON(strings.TrimSuffix(path, ".")+"."+k, g[k], w[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: got %T, want array", path, got)
		}
		if (g == nil) != (w == nil) || len(g) != len(w) {
			return fmt.Sprintf("%s: got %d items (nil %v), want %d (nil %v)", path, len(g), g == nil, len(w), w == nil)
		}
		for i := range w {
			if d := diffJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		g, ok := got.(float64)
		if !ok || !(g == w || math.IsNaN(g) && math.IsNaN(w)) || math.Signbit(g) != math.Signbit(w) {
			return fmt.Sprintf("%s: got %T %v, want float64 %v", path, got, got, w)
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("%s: got %T %#v, want %T %#v", path, got, got, want, want)
	}
	return ""
}

// normalizeNumbers returns v with every float64 that encoding writes as an
// integer in the range of int64 turned into that int64: what encoding a value
// and decoding it again does to numbers (1.0 is written as 1).
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case float64:
		// encoding/json writes whole numbers below 1e21 without a fraction or
		// an exponent, as the shortest digits that round-trip then zeros.
		if v == math.Trunc(v) && math.Abs(v) < 1e21 {
			if i, err := strconv.ParseInt(strconv.FormatFloat(v, 'f', -1, 64), 10, 64); err == nil {
				return i
			}
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalizeNumbers(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeNumbers(x)
		}
		return out
	}
	return v
}

// encodingJSON encodes v as encoding/json does (escaping <, > and &, as
// kube-apiserver's responses do), without the trailing newline.
func encodingJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
