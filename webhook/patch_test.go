package webhook

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// TestCreatePatch checks the operations CreatePatch writes and that applying
// them to the original gives the expected object.
func TestCreatePatch(t *testing.T) {
	cases := []struct {
		name                    string
		original, before, after string
		want                    string // the patch
		result                  string // original with the patch applied; "" = original
	}{
		{name: "no change", original: `{"a":1}`, before: `{"a":1}`, after: `{"a":1}`, want: `null`},
		{name: "add field", original: `{"a":1}`, before: `{"a":1}`, after: `{"a":1,"b":"x"}`,
			want: `[{"op":"add","path":"/b","value":"x"}]`},
		{name: "replace field", original: `{"a":1}`, before: `{"a":1}`, after: `{"a":2}`,
			want: `[{"op":"replace","path":"/a","value":2}]`},
		{name: "remove field", original: `{"a":1,"b":2}`, before: `{"a":1,"b":2}`, after: `{"a":1}`,
			want: `[{"op":"remove","path":"/b"}]`},
		{name: "nested map add", original: `{"metadata":{"name":"n"}}`, before: `{"metadata":{"name":"n"}}`,
			after: `{"metadata":{"name":"n","labels":{"app":"web"}}}`,
			want:  `[{"op":"add","path":"/metadata/labels","value":{"app":"web"}}]`},
		{name: "map key added to existing map", original: `{"labels":{"a":"1"}}`, before: `{"labels":{"a":"1"}}`,
			after: `{"labels":{"a":"1","b":"2"}}`, want: `[{"op":"add","path":"/labels/b","value":"2"}]`},
		{name: "escape slash and tilde", original: `{"annotations":{"x":"1"}}`, before: `{"annotations":{"x":"1"}}`,
			after: `{"annotations":{"x":"1","example.com/a~b":"v"}}`,
			want:  `[{"op":"add","path":"/annotations/example.com~1a~0b","value":"v"}]`},
		{name: "remove escaped key", original: `{"m":{"a/b":1,"~":2}}`, before: `{"m":{"a/b":1,"~":2}}`, after: `{"m":{}}`,
			want: `[{"op":"remove","path":"/m/a~1b"},{"op":"remove","path":"/m/~0"}]`},
		{name: "list append", original: `{"l":[1,2]}`, before: `{"l":[1,2]}`, after: `{"l":[1,2,3]}`,
			want: `[{"op":"add","path":"/l/2","value":3}]`},
		{name: "list insert at front", original: `{"l":[1,2]}`, before: `{"l":[1,2]}`, after: `{"l":[0,1,2]}`,
			want: `[{"op":"add","path":"/l/0","value":0}]`},
		{name: "list remove middle", original: `{"l":[1,2,3]}`, before: `{"l":[1,2,3]}`, after: `{"l":[1,3]}`,
			want: `[{"op":"remove","path":"/l/1"}]`},
		{name: "list remove two", original: `{"l":[1,2,3,4]}`, before: `{"l":[1,2,3,4]}`, after: `{"l":[1,4]}`,
			want: `[{"op":"remove","path":"/l/1"},{"op":"remove","path":"/l/1"}]`},
		{name: "list item changed in place", original: `{"l":[{"n":"a","v":1},{"n":"b","v":2}]}`,
			before: `{"l":[{"n":"a","v":1},{"n":"b","v":2}]}`, after: `{"l":[{"n":"a","v":1},{"n":"b","v":3}]}`,
			want: `[{"op":"replace","path":"/l/1/v","value":3}]`},
		{name: "list replaced by shorter different", original: `{"l":[1,2,3]}`, before: `{"l":[1,2,3]}`, after: `{"l":[7,8]}`,
			want: `[{"op":"replace","path":"/l/0","value":7},{"op":"replace","path":"/l/1","value":8},{"op":"remove","path":"/l/2"}]`},
		{name: "type change", original: `{"a":{"b":1}}`, before: `{"a":{"b":1}}`, after: `{"a":[1]}`,
			want: `[{"op":"replace","path":"/a","value":[1]}]`},
		{name: "set to null", original: `{"a":1}`, before: `{"a":1}`, after: `{"a":null}`,
			want: `[{"op":"replace","path":"/a","value":null}]`},
		{name: "large integer kept exactly", original: `{"a":9007199254740993}`, before: `{"a":9007199254740993}`,
			after: `{"a":9007199254740995}`, want: `[{"op":"replace","path":"/a","value":9007199254740995}]`},

		// What the round trip through the Go type does by itself is not patched.
		{name: "unknown field kept", original: `{"spec":{"a":1,"future":true}}`, before: `{"spec":{"a":1}}`,
			after: `{"spec":{"a":2}}`, want: `[{"op":"replace","path":"/spec/a","value":2}]`},
		{name: "fields the encoding adds are not added", original: `{"metadata":{"name":"n"}}`,
			before: `{"metadata":{"name":"n","creationTimestamp":null},"status":{}}`,
			after:  `{"metadata":{"name":"n","creationTimestamp":null,"labels":{"x":"y"}},"status":{}}`,
			want:   `[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]`},
		{name: "change under a struct the original lacks", original: `{"metadata":{"name":"n"}}`,
			before: `{"metadata":{"name":"n"},"spec":{"replicas":0,"paused":false}}`,
			after:  `{"metadata":{"name":"n"},"spec":{"replicas":3,"paused":false}}`,
			want:   `[{"op":"add","path":"/spec","value":{"replicas":3}}]`},
		{name: "unknown field of list item changed in place kept", original: `{"l":[{"n":"a","x":1}]}`,
			before: `{"l":[{"n":"a"}]}`, after: `{"l":[{"n":"b"}]}`,
			want: `[{"op":"replace","path":"/l/0/n","value":"b"}]`},
		{name: "unknown field of kept list items survives an append", original: `{"l":[{"n":"a","x":1},{"n":"b","x":2}]}`,
			before: `{"l":[{"n":"a"},{"n":"b"}]}`, after: `{"l":[{"n":"z"},{"n":"a"},{"n":"b"}]}`,
			want: `[{"op":"add","path":"/l/0","value":{"n":"z"}}]`},
		{name: "unknown field of kept list items survives a removal", original: `{"l":[{"n":"a","x":1},{"n":"b","x":2}]}`,
			before: `{"l":[{"n":"a"},{"n":"b"}]}`, after: `{"l":[{"n":"b"}]}`,
			want: `[{"op":"remove","path":"/l/0"}]`},
		{name: "field removed by handler", original: `{"metadata":{"labels":{"a":"1","b":"2"},"x":0}}`,
			before: `{"metadata":{"labels":{"a":"1","b":"2"}}}`, after: `{"metadata":{}}`,
			want: `[{"op":"remove","path":"/metadata/labels"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			patch, err := CreatePatch([]byte(tc.original), []byte(tc.before), []byte(tc.after))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(patch); got != tc.want && !(patch == nil && tc.want == "null") {
				t.Fatalf("patch\n got %s\nwant %s", got, tc.want)
			}
			if patch == nil {
				return
			}
			p, err := jsonpatch.DecodePatch(patch)
			if err != nil {
				t.Fatalf("patch does not decode: %v", err)
			}
			applied, err := p.Apply([]byte(tc.original))
			if err != nil {
				t.Fatalf("patch does not apply to the original: %v", err)
			}
			if tc.result != "" && !jsonEqual(t, applied, []byte(tc.result)) {
				t.Fatalf("applied = %s, want %s", applied, tc.result)
			}
		})
	}
}

// TestCreatePatchAppliesToHandlerResult checks, on the cases where the
// original is what the Go type encodes, that the patched original is exactly
// the handler's object.
func TestCreatePatchAppliesToHandlerResult(t *testing.T) {
	docs := []string{`{}`, `{"a":[1,2,3]}`, `{"a":[3,2,1],"b":{"c/d~e":[{"x":1}]}}`, `{"a":[],"b":{"c/d~e":[{"x":2},{"y":1}]}}`, `{"a":null}`, `{"z":"s"}`}
	for _, from := range docs {
		for _, to := range docs {
			patch, err := CreatePatch([]byte(from), []byte(from), []byte(to))
			if err != nil {
				t.Fatal(err)
			}
			got := []byte(from)
			if patch != nil {
				p, err := jsonpatch.DecodePatch(patch)
				if err != nil {
					t.Fatal(err)
				}
				if got, err = p.Apply([]byte(from)); err != nil {
					t.Fatalf("%s → %s: %s does not apply: %v", from, to, patch, err)
				}
			}
			if !jsonEqual(t, got, []byte(to)) {
				t.Errorf("%s → %s: patch %s gives %s", from, to, patch, got)
			}
		}
	}
}

func TestCreatePatchRejectsNonJSON(t *testing.T) {
	for _, args := range [][3]string{{`{`, `{}`, `{}`}, {`{}`, `x`, `{}`}, {`{}`, `{}`, `{} {}`}} {
		if _, err := CreatePatch([]byte(args[0]), []byte(args[1]), []byte(args[2])); err == nil {
			t.Errorf("CreatePatch(%q) = nil error", args)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
