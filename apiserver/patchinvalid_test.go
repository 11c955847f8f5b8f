package apiserver

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/codec"
)

// TestPatchInvalidValue checks the object a 422 of a JSON or merge patch
// quotes: in the patched document's order, except the objects kube-apiserver's
// patch library decoded on the way (sorted), and the patch as a Go map for a
// strategic merge patch.
func TestPatchInvalidValue(t *testing.T) {
	t.Parallel()
	const doc = `{"kind":"K","apiVersion":"v1","metadata":{"name":"n","labels":{"b":"1","a":"2"}},"spec":{"z":1,"list":[{"y":1,"x":2},{"y":3,"x":4}],"o":{"d":1,"c":2}}}`
	cases := []struct {
		name, ctype, patched, body, want string
	}{{
		"merge-top-level", codec.MediaTypeMergePatch, doc, `{"kind":"K"}`,
		`{"apiVersion":"v1","kind":"K","metadata":{"name":"n","labels":{"b":"1","a":"2"}},"spec":{"z":1,"list":[{"y":1,"x":2},{"y":3,"x":4}],"o":{"d":1,"c":2}}}`,
	}, {
		"merge-nested", codec.MediaTypeMergePatch, doc, `{"metadata":{"labels":{"c":3}}}`,
		`{"apiVersion":"v1","kind":"K","metadata":{"labels":{"a":"2","b":"1"},"name":"n"},"spec":{"z":1,"list":[{"y":1,"x":2},{"y":3,"x":4}],"o":{"d":1,"c":2}}}`,
	}, {
		"merge-new-value-sorted-deep", codec.MediaTypeMergePatch,
		`{"b":1,"new":{"q":1,"a":[{"y":1,"x":2}]}}`, `{"new":{"q":1,"a":[{"y":1,"x":2}]}}`,
		`{"b":1,"new":{"a":[{"x":2,"y":1}],"q":1}}`,
	}, {
		"merge-list-replaced", codec.MediaTypeMergePatch, doc, `{"spec":{"list":[{"y":1,"x":2},{"y":3,"x":4}]}}`,
		`{"apiVersion":"v1","kind":"K","metadata":{"name":"n","labels":{"b":"1","a":"2"}},"spec":{"list":[{"x":2,"y":1},{"x":4,"y":3}],"o":{"d":1,"c":2},"z":1}}`,
	}, {
		"json-path-containers", codec.MediaTypeJSONPatch, doc, `[{"op":"replace","path":"/spec/list/1/y","value":5}]`,
		`{"apiVersion":"v1","kind":"K","metadata":{"name":"n","labels":{"b":"1","a":"2"}},"spec":{"list":[{"y":1,"x":2},{"x":4,"y":3}],"o":{"d":1,"c":2},"z":1}}`,
	}, {
		"json-test-deep", codec.MediaTypeJSONPatch, doc, `[{"op":"test","path":"/metadata","value":{}}]`,
		`{"apiVersion":"v1","kind":"K","metadata":{"labels":{"a":"2","b":"1"},"name":"n"},"spec":{"z":1,"list":[{"y":1,"x":2},{"y":3,"x":4}],"o":{"d":1,"c":2}}}`,
	}, {
		"json-escaped-path", codec.MediaTypeJSONPatch, `{"b":{"a/b":{"z":1,"y":2}},"a":1}`, `[{"op":"add","path":"/b/a~1b/x","value":1}]`,
		`{"a":1,"b":{"a/b":{"y":2,"z":1}}}`,
	}, {
		// The patched object converts (spec is no ConfigMap field): the
		// decode error stays.
		"smp-go-map", codec.MediaTypeStrategicMergePatch, doc, `{"spec":{"z":"x","list":[{"y":1.5,"x":null}],"b":true}}`,
		`map[spec:map[b:true list:[map[x:<nil> y:1.5]] z:x]]`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := patchInvalid(c.ctype, []byte(c.body), []byte(c.patched), reflect.TypeFor[corev1.ConfigMap](), errTest)
			if st.Code != 422 || st.Details == nil || len(st.Details.Causes) != 1 {
				t.Fatalf("status %+v", st)
			}
			want := `Invalid value: ` + quoteGo(c.want) + `: ` + errTest.Error()
			if got := st.Details.Causes[0].Message; got != want {
				t.Errorf("cause\n got %s\nwant %s", got, want)
			}
			if st.Message != ` "" is invalid: patch: `+want || st.Details.Kind != "" || st.Details.Name != "" || st.Details.Group != "" {
				t.Errorf("status %+v", st)
			}
		})
	}
}

var errTest = jsonError("decode failed")

type jsonError string

func (e jsonError) Error() string { return string(e) }

func quoteGo(s string) string { return strconv.Quote(s) }

// TestUnstructuredError checks the conversion errors of a strategic merge
// patch's result, worded as kube-apiserver's unstructured converter.
func TestUnstructuredError(t *testing.T) {
	t.Parallel()
	type (
		named string
		inner struct {
			N int32 `json:"n"`
		}
		embed struct {
			E string `json:"e"`
		}
		object struct {
			embed `json:",inline"`
			S     string            `json:"s"`
			Named named             `json:"named"`
			I     *int64            `json:"i"`
			F     float64           `json:"f"`
			B     bool              `json:"b"`
			M     map[string]string `json:"m"`
			L     []inner           `json:"l"`
			Bytes []byte            `json:"bytes"`
			In    inner             `json:"in"`
			Any   any               `json:"any"`
		}
	)
	cases := []struct{ name, json, want string }{
		{"ok", `{"s":"x","named":"y","i":1.0,"f":2,"b":true,"m":{"a":"b"},"l":[{"n":1}],"bytes":"YQ==","in":{"n":2},"any":[1],"unknown":1,"e":"x"}`, ""},
		{"null", `{"s":null,"l":null,"in":null}`, ""},
		{"int-to-string", `{"s":1}`, "cannot convert int64 to string"},
		{"int-to-named", `{"named":1}`, "cannot convert int64 to apiserver.named"},
		{"string-to-int", `{"i":"1"}`, "unrecognized type: int64"},
		{"bool-to-string", `{"s":true}`, "unrecognized type: string"},
		{"float-to-int", `{"i":1.5}`, "cannot convert float64 to int64"},
		{"int-to-bool", `{"b":1}`, "unrecognized type: bool"},
		{"inline", `{"e":1}`, "cannot convert int64 to string"},
		{"map", `{"m":"x"}`, "cannot restore map from string"},
		{"map-value", `{"m":{"b":"x","a":1}}`, "cannot convert int64 to string"},
		{"slice", `{"l":{"n":1}}`, "cannot restore slice from map"},
		{"slice-item", `{"l":[{"n":1},{"n":"x"}]}`, "unrecognized type: int32"},
		{"bytes", `{"bytes":"!!"}`, "error decoding from json: illegal base64 data at input byte 0"},
		{"bytes-number", `{"bytes":1}`, "cannot restore slice from int64"},
		{"struct", `{"in":[1]}`, "cannot restore struct from: slice"},
		{"field-order", `{"b":1,"s":1}`, "cannot convert int64 to string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := decodePreservingInts([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if err := unstructuredError(u, reflect.New(reflect.TypeFor[object]()).Elem()); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s: %q, want %q", c.json, got, c.want)
			}
		})
	}
}

// FuzzRenderWalked checks that the quoted object is the patched document,
// reordered only: the same JSON value, whatever the patch.
func FuzzRenderWalked(f *testing.F) {
	f.Add([]byte(`{"b":{"y":[1,{"b":2,"a":"<"}]},"a":null}`), []byte(`{"b":{"y":1}}`), true)
	f.Add([]byte(`{"b":{"y":[1,{"b":2,"a":"x"}]},"a":1.50}`), []byte(`[{"op":"add","path":"/b/y/1/c","value":1}]`), false)
	f.Fuzz(func(t *testing.T, doc, body []byte, merge bool) {
		var want any
		if json.Unmarshal(doc, &want) != nil {
			return
		}
		w := jsonPatchWalk(body)
		if merge {
			w = mergePatchWalk(doc, body)
		}
		out := renderWalked(doc, w)
		var got any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s renders as invalid JSON %s: %v", doc, out, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s renders as %s", doc, out)
		}
	})
}
