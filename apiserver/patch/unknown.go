package patch

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
)

// UnknownFields lists the members of doc, a JSON object of Go type t, that t
// does not declare, as kube-apiserver names them in its field validation
// warnings and errors: dotted paths with list indices
// ("spec.containers[0].bogus"), sorted. Values of types with hand-written
// JSON, and of interface types, are not looked into. A doc that is not
// JSON is an error.
func UnknownFields(doc []byte, t reflect.Type) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out []string
	unknownIn(v, t, "", &out, 0)
	slices.Sort(out)
	return out, nil
}

func unknownIn(v any, t reflect.Type, path string, out *[]string, depth int) {
	if depth > maxStrategicMergeDepth {
		return
	}
	switch shapeOf(t) {
	case shapeStruct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := structFields(deref(t))
		for k, x := range m {
			p := k
			if path != "" {
				p = path + "." + k
			}
			f, known := fields[k]
			if !known {
				*out = append(*out, p)
				continue
			}
			unknownIn(x, f.typ, p, out, depth+1)
		}
	case shapeMap:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, x := range m {
			unknownIn(x, deref(t).Elem(), path+"."+k, out, depth+1)
		}
	case shapeList:
		l, ok := v.([]any)
		if !ok {
			return
		}
		for i, x := range l {
			unknownIn(x, deref(t).Elem(), path+"["+strconv.Itoa(i)+"]", out, depth+1)
		}
	}
}
