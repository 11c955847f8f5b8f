package unstructured

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func testObject() map[string]any {
	return map[string]any{
		"kind": "Deployment",
		"spec": map[string]any{
			"replicas": int64(3),
			"paused":   false,
			"ratio":    0.5,
			"name":     "web",
			"bad":      "foo",
			"null":     nil,
			"args":     []any{"a", "b"},
			"mixed":    []any{"a", int64(1)},
			"labels":   map[string]any{"app": "web"},
			"badmap":   map[string]any{"app": int64(1)},
			"nullmap":  map[string]any{"app": nil},
			"big":      int64(1<<53 + 1),
			"template": map[string]any{"metadata": map[string]any{"name": "t"}},
		},
	}
}

func TestNestedGetters(t *testing.T) {
	obj := testObject()
	type result struct {
		val   any
		found bool
		err   string
	}
	res := func(v any, found bool, err error) result {
		r := result{val: v, found: found}
		if err != nil {
			r.err = err.Error()
		}
		return r
	}
	for _, tc := range []struct {
		name string
		got  result
		want result
	}{
		{"field", res(NestedFieldNoCopy(obj, "spec", "name")), result{"web", true, ""}},
		{"no fields", res(NestedFieldNoCopy(obj)), result{obj, true, ""}},
		{"missing", res(NestedFieldNoCopy(obj, "spec", "nope")), result{nil, false, ""}},
		{"missing parent", res(NestedFieldNoCopy(obj, "status", "x")), result{nil, false, ""}},
		{"through null", res(NestedFieldNoCopy(obj, "spec", "null", "x")), result{nil, false, ""}},
		{"null", res(NestedFieldNoCopy(obj, "spec", "null")), result{nil, true, ""}},
		{"through string", res(NestedFieldNoCopy(obj, "spec", "name", "x", "y")), result{nil, false, ".spec.name.x accessor error: web is of the type string, expected map[string]interface{}"}},
		{"nil object", res(NestedFieldNoCopy(nil, "a")), result{nil, false, ""}},
		{"copy", res(NestedFieldCopy(obj, "spec", "args")), result{[]any{"a", "b"}, true, ""}},
		{"copy missing", res(NestedFieldCopy(obj, "x")), result{nil, false, ""}},

		{"string", res(NestedString(obj, "spec", "name")), result{"web", true, ""}},
		{"string missing", res(NestedString(obj, "spec", "x")), result{"", false, ""}},
		{"string mistyped", res(NestedString(obj, "spec", "replicas")), result{"", false, ".spec.replicas accessor error: 3 is of the type int64, expected string"}},
		{"string null", res(NestedString(obj, "spec", "null")), result{"", false, ".spec.null accessor error: <nil> is of the type <nil>, expected string"}},
		{"bool", res(NestedBool(obj, "spec", "paused")), result{false, true, ""}},
		{"bool mistyped", res(NestedBool(obj, "spec", "name")), result{false, false, ".spec.name accessor error: web is of the type string, expected bool"}},
		{"int64", res(NestedInt64(obj, "spec", "replicas")), result{int64(3), true, ""}},
		{"int64 mistyped", res(NestedInt64(obj, "spec", "bad")), result{int64(0), false, ".spec.bad accessor error: foo is of the type string, expected int64"}},
		{"int64 from float", res(NestedInt64(obj, "spec", "ratio")), result{int64(0), false, ".spec.ratio accessor error: 0.5 is of the type float64, expected int64"}},
		{"int64 path error", res(NestedInt64(obj, "spec", "bad", "x")), result{int64(0), false, ".spec.bad.x accessor error: foo is of the type string, expected map[string]interface{}"}},
		{"float64", res(NestedFloat64(obj, "spec", "ratio")), result{0.5, true, ""}},
		{"float64 from int", res(NestedFloat64(obj, "spec", "replicas")), result{0.0, false, ".spec.replicas accessor error: 3 is of the type int64, expected float64"}},
		{"number float", res(NestedNumberAsFloat64(obj, "spec", "ratio")), result{0.5, true, ""}},
		{"number int", res(NestedNumberAsFloat64(obj, "spec", "replicas")), result{3.0, true, ""}},
		{"number inexact", res(NestedNumberAsFloat64(obj, "spec", "big")), result{0.0, false, ".spec.big accessor error: int64 value 9007199254740993 cannot be losslessly converted to float64"}},
		{"number mistyped", res(NestedNumberAsFloat64(obj, "spec", "name")), result{0.0, false, ".spec.name accessor error: web is of the type string, expected float64 or int64"}},
		{"string slice", res(NestedStringSlice(obj, "spec", "args")), result{[]string{"a", "b"}, true, ""}},
		{"string slice mixed", res(NestedStringSlice(obj, "spec", "mixed")), result{[]string(nil), false, ".spec.mixed accessor error: contains non-string value in the slice: 1 is of the type int64, expected string"}},
		{"string slice mistyped", res(NestedStringSlice(obj, "spec", "name")), result{[]string(nil), false, ".spec.name accessor error: web is of the type string, expected []interface{}"}},
		{"slice", res(NestedSlice(obj, "spec", "mixed")), result{[]any{"a", int64(1)}, true, ""}},
		{"slice mistyped", res(NestedSlice(obj, "spec", "labels")), result{[]any(nil), false, ".spec.labels accessor error: map[app:web] is of the type map[string]interface {}, expected []interface{}"}},
		{"map", res(NestedMap(obj, "spec", "labels")), result{map[string]any{"app": "web"}, true, ""}},
		{"map mistyped", res(NestedMap(obj, "spec", "args")), result{map[string]any(nil), false, ".spec.args accessor error: [a b] is of the type []interface {}, expected map[string]interface{}"}},
		{"map null", res(NestedMap(obj, "spec", "null")), result{map[string]any(nil), false, ".spec.null accessor error: <nil> is of the type <nil>, expected map[string]interface{}"}},
		{"string map", res(NestedStringMap(obj, "spec", "labels")), result{map[string]string{"app": "web"}, true, ""}},
		{"string map bad value", res(NestedStringMap(obj, "spec", "badmap")), result{map[string]string(nil), false, `.spec.badmap accessor error: contains non-string value in the map under key "app": 1 is of the type int64, expected string`}},
		{"string map null value", res(NestedStringMap(obj, "spec", "nullmap")), result{map[string]string(nil), false, `.spec.nullmap accessor error: contains non-string value in the map under key "app": <nil> is of the type <nil>, expected string`}},
		{"coercing null value", res(NestedNullCoercingStringMap(obj, "spec", "nullmap")), result{map[string]string{"app": ""}, true, ""}},
		{"coercing null map", res(NestedNullCoercingStringMap(obj, "spec", "null")), result{map[string]string(nil), true, ""}},
		{"coercing missing", res(NestedNullCoercingStringMap(obj, "spec", "x")), result{map[string]string(nil), false, ""}},
		{"coercing bad value", res(NestedNullCoercingStringMap(obj, "spec", "badmap")), result{map[string]string(nil), false, `.spec.badmap accessor error: contains non-string value in the map under key "app": 1 is of the type int64, expected string`}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.name, tc.got, tc.want)
		}
	}
}

func TestNestedGettersCopy(t *testing.T) {
	obj := testObject()
	s, _, _ := NestedSlice(obj, "spec", "args")
	s[0] = "changed"
	m, _, _ := NestedMap(obj, "spec", "template")
	m["metadata"].(map[string]any)["name"] = "changed"
	f, _, _ := NestedFieldCopy(obj, "spec", "labels")
	f.(map[string]any)["app"] = "changed"
	ss, _, _ := NestedStringSlice(obj, "spec", "args")
	ss[1] = "changed"
	sm, _, _ := NestedStringMap(obj, "spec", "labels")
	sm["app"] = "changed"
	if !reflect.DeepEqual(obj, testObject()) {
		t.Errorf("getters returned shared values: %v", obj)
	}
	nc, _, _ := NestedFieldNoCopy(obj, "spec", "labels")
	nc.(map[string]any)["app"] = "changed"
	if obj["spec"].(map[string]any)["labels"].(map[string]any)["app"] != "changed" {
		t.Error("NestedFieldNoCopy copied")
	}
}

func TestNestedSetters(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"name": "web"}}
	if err := SetNestedField(obj, int64(2), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := SetNestedField(obj, "x", "status", "deep", "phase"); err != nil {
		t.Fatal(err)
	}
	if err := SetNestedStringSlice(obj, []string{"a"}, "spec", "args"); err != nil {
		t.Fatal(err)
	}
	if err := SetNestedStringSlice(obj, nil, "spec", "none"); err != nil {
		t.Fatal(err)
	}
	slice := []any{map[string]any{"a": int64(1)}}
	if err := SetNestedSlice(obj, slice, "spec", "list"); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"k": []any{"v"}}
	if err := SetNestedMap(obj, m, "spec", "map"); err != nil {
		t.Fatal(err)
	}
	if err := SetNestedStringMap(obj, map[string]string{"a": "b"}, "metadata", "labels"); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"spec": map[string]any{
			"name": "web", "replicas": int64(2), "args": []any{"a"}, "none": []any{},
			"list": []any{map[string]any{"a": int64(1)}}, "map": map[string]any{"k": []any{"v"}},
		},
		"status":   map[string]any{"deep": map[string]any{"phase": "x"}},
		"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
	}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("got  %v\nwant %v", obj, want)
	}
	// Setters copy their values.
	slice[0].(map[string]any)["a"] = int64(9)
	m["k"].([]any)[0] = "changed"
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("setters kept references: %v", obj)
	}

	// Errors leave obj unchanged.
	for _, fields := range [][]string{{"spec", "name", "x"}, {"spec", "name", "x", "y"}, {}} {
		before := DeepCopyJSON(obj)
		err := SetNestedField(obj, "v", fields...)
		if err == nil {
			t.Errorf("%v: no error", fields)
		}
		if !reflect.DeepEqual(obj, before) {
			t.Errorf("%v: changed on error", fields)
		}
	}
	err := SetNestedField(obj, "v", "spec", "name", "x")
	if want := "value cannot be set because .spec.name is not a map[string]interface{}"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestRemoveNestedField(t *testing.T) {
	obj := map[string]any{"a": map[string]any{"b": map[string]any{"c": int64(1), "d": int64(2)}, "s": "x"}}
	RemoveNestedField(obj, "a", "b", "c")
	RemoveNestedField(obj, "a", "s", "x")       // through a string: nothing
	RemoveNestedField(obj, "a", "missing", "x") // missing parent: nothing
	RemoveNestedField(obj)                      // empty path: nothing
	RemoveNestedField(nil, "a")                 // nil object: nothing
	want := map[string]any{"a": map[string]any{"b": map[string]any{"d": int64(2)}, "s": "x"}}
	if !reflect.DeepEqual(obj, want) {
		t.Errorf("got %v, want %v", obj, want)
	}
	RemoveNestedField(obj, "a")
	if len(obj) != 0 {
		t.Errorf("got %v", obj)
	}
}

func TestDeepCopyJSONValue(t *testing.T) {
	in := map[string]any{
		"m": map[string]any{"s": []any{int64(1), 2.5, "x", true, nil, json.Number("3")}},
		"e": []any{}, "n": []any(nil), "nm": map[string]any(nil),
		"i": 1, "u8": uint8(2), "f32": float32(1.5),
	}
	out := DeepCopyJSON(in)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("copy differs: %v", out)
	}
	out["m"].(map[string]any)["s"].([]any)[0] = "changed"
	if in["m"].(map[string]any)["s"].([]any)[0] != int64(1) {
		t.Error("copy shares a slice")
	}
	if DeepCopyJSON(nil) != nil {
		t.Error("nil map copied as non-nil")
	}
	if v := DeepCopyJSONValue(math.Inf(1)); v != math.Inf(1) {
		t.Error(v)
	}
	for _, bad := range []any{[]string{"a"}, map[string]string{}, struct{}{}, &Unstructured{}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%T: no panic", bad)
				}
			}()
			DeepCopyJSONValue(bad)
		}()
	}
}
