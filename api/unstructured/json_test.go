package unstructured

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// TestGoldenRoundTrip decodes every JSON object a real API server sent,
// checks the result against Kubernetes' decoding (same keys, same values,
// integers as int64), encodes it again and checks that the encoding means the
// same as the original and is byte for byte what encoding/json writes.
func TestGoldenRoundTrip(t *testing.T) {
	for name, body := range goldenJSONObjects(t) {
		t.Run(name, func(t *testing.T) {
			want, err := refDecode(body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := unmarshalValue(body)
			if err != nil {
				t.Fatal(err)
			}
			if d := diffJSON("", got, want); d != "" {
				t.Fatalf("decoded: %s", d)
			}

			var u Unstructured
			err = u.UnmarshalJSON(body)
			if _, hasKind := want.(map[string]any)["kind"].(string); hasKind != (err == nil) {
				t.Fatalf("UnmarshalJSON: error %v, document has kind: %v", err, hasKind)
			}
			if err != nil && !errors.Is(err, ErrMissingKind) {
				t.Fatalf("UnmarshalJSON: %v, want ErrMissingKind", err)
			}
			if d := diffJSON("", u.Object, want); d != "" {
				t.Fatalf("UnmarshalJSON: %s", d)
			}

			enc, err := u.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			again, err := refDecode(enc)
			if err != nil {
				t.Fatalf("re-decoding %s: %v", enc, err)
			}
			if d := diffJSON("", again, want); d != "" {
				t.Fatalf("after round trip: %s", d)
			}
			std, err := encodingJSON(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, std) {
				t.Errorf("MarshalJSON differs from encoding/json:\n got %s\nwant %s", enc, std)
			}
		})
	}
}

func TestGoldenIntegersAreInt64(t *testing.T) {
	var u Unstructured
	if err := u.UnmarshalJSON(goldenBody(t, "85-get-crd.txt")); err != nil {
		t.Fatal(err)
	}
	if g, ok := u.Object["metadata"].(map[string]any)["generation"].(int64); !ok || g != 1 {
		t.Errorf("metadata.generation = %#v, want int64(1)", u.Object["metadata"].(map[string]any)["generation"])
	}
	if err := u.UnmarshalJSON(goldenBody(t, "13-get-pod-json.txt")); err != nil {
		t.Fatal(err)
	}
	var floats []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case float64:
			floats = append(floats, path)
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", u.Object)
	if len(floats) > 0 {
		t.Errorf("float64 values in a pod, which has integers only: %v", floats)
	}
	containers, _, err := NestedSlice(u.Object, "spec", "containers")
	if err != nil || len(containers) == 0 {
		t.Fatalf("spec.containers: %v, %v", containers, err)
	}
	port, found, err := NestedInt64(containers[0].(map[string]any), "livenessProbe", "failureThreshold")
	if !found || err != nil || port == 0 {
		t.Errorf("livenessProbe.failureThreshold = %v, %v, %v", port, found, err)
	}
}

func TestGoldenList(t *testing.T) {
	body := goldenBody(t, "33-list-pods-json.txt")
	obj, err := Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	list, ok := obj.(*UnstructuredList)
	if !ok {
		t.Fatalf("Decode returned %T, want *UnstructuredList", obj)
	}
	var direct UnstructuredList
	if err := direct.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&direct, list) {
		t.Error("UnmarshalJSON and Decode disagree")
	}
	if _, ok := list.Object["items"]; ok {
		t.Error(`Object still has "items"`)
	}
	if list.GetKind() != "PodList" || list.GetAPIVersion() != "v1" || list.GetResourceVersion() == "" {
		t.Errorf("list kind %q apiVersion %q resourceVersion %q", list.GetKind(), list.GetAPIVersion(), list.GetResourceVersion())
	}

	ref, err := refDecode(body)
	if err != nil {
		t.Fatal(err)
	}
	refItems := ref.(map[string]any)["items"].([]any)
	if len(list.Items) != len(refItems) || len(list.Items) == 0 {
		t.Fatalf("%d items, want %d", len(list.Items), len(refItems))
	}
	n := 0
	err = list.EachListItem(func(item *Unstructured) error {
		want := refItems[n].(map[string]any)
		n++
		// The server sends items without kind; they get the list's.
		if _, ok := want["kind"]; ok {
			t.Fatalf("golden item has a kind: the test needs another file")
		}
		if item.GetKind() != "Pod" || item.GetAPIVersion() != "v1" {
			t.Errorf("item kind %q apiVersion %q, want Pod v1", item.GetKind(), item.GetAPIVersion())
		}
		want["kind"], want["apiVersion"] = "Pod", "v1"
		if d := diffJSON("", item.Object, want); d != "" {
			t.Error(d)
		}
		if item.GetName() == "" || item.GetUID() == "" || item.GetCreationTimestamp().IsZero() {
			t.Errorf("item metadata: name %q uid %q", item.GetName(), item.GetUID())
		}
		return nil
	})
	if err != nil || n != len(list.Items) {
		t.Fatalf("EachListItem: %v after %d items", err, n)
	}

	// Encoding writes the items back, now with their kinds.
	enc, err := list.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	again, err := refDecode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffJSON("", again, ref); d != "" {
		t.Errorf("after round trip: %s", d)
	}
	std, _ := encodingJSON(list.UnstructuredContent())
	if !bytes.Equal(enc, std) {
		t.Errorf("MarshalJSON differs from encoding/json:\n got %s\nwant %s", enc, std)
	}

	// Typed decoding of the same items agrees with the accessors.
	var typed struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := kjson.Unmarshal(body, &typed); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		checkMetaEqual(t, &list.Items[i], &typed.Items[i].Metadata)
	}
}

// TestGoldenWatch decodes watch events (one JSON document per line) into a
// struct holding an Unstructured, through github.com/go-json-experiment/json,
// which calls UnmarshalJSONFrom, and back through MarshalJSONTo.
func TestGoldenWatch(t *testing.T) {
	body := goldenBody(t, "93-watch-json-from-rv.txt")
	type event struct {
		Type   string       `json:"type"`
		Object Unstructured `json:"object"`
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if err := kjson.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		want, err := refDecode(line)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffJSON("", ev.Object.Object, want.(map[string]any)["object"]); d != "" {
			t.Errorf("event %d: %s", n, d)
		}
		enc, err := kjson.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		again, err := refDecode(enc)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffJSON("", again, want); d != "" {
			t.Errorf("event %d after round trip: %s", n, d)
		}
		// encoding/json calls MarshalJSON.
		std, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := refDecode(std); diffJSON("", again, want) != "" {
			t.Errorf("event %d through encoding/json: %s", n, std)
		}
	}
	if n < 2 {
		t.Fatalf("only %d events", n)
	}
}

func TestDecodeNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{`0`, int64(0)},
		{`-0`, int64(0)},
		{`42`, int64(42)},
		{`-42`, int64(-42)},
		{`999999999999999999`, int64(999999999999999999)},
		{`9223372036854775807`, int64(math.MaxInt64)},
		{`-9223372036854775808`, int64(math.MinInt64)},
		// Beyond int64: float64, as Kubernetes does.
		{`9223372036854775808`, float64(9223372036854775808)},
		{`-9223372036854775809`, float64(-9223372036854775808)},
		{`123456789012345678901234567890`, 1.2345678901234568e29},
		{`1.0`, 1.0},
		{`1.5`, 1.5},
		{`-0.0`, math.Copysign(0, -1)},
		{`1e3`, 1000.0},
		{`1E3`, 1000.0},
		{`1e-3`, 0.001},
		{`2.5E+2`, 250.0},
		{`1e-400`, 0.0},
	} {
		got, err := unmarshalValue([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if d := diffJSON("", got, tc.want); d != "" {
			t.Errorf("%s: %s", tc.in, d)
		}
		ref, _ := refDecode([]byte(tc.in))
		if d := diffJSON("", got, ref); d != "" {
			t.Errorf("%s: differs from Kubernetes: %s", tc.in, d)
		}
	}
	for _, in := range []string{`1e400`, `-1e400`, `{"kind":"X","n":1` + strings.Repeat("0", 400) + `}`} {
		if v, err := unmarshalValue([]byte(in)); err == nil || !strings.Contains(err.Error(), "out of the range of float64") {
			t.Errorf("%s: got %v, %v; want a range error", in, v, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", ``, "unexpected EOF"},
		{"whitespace", " \n", "unexpected EOF"},
		{"null", `null`, "cannot decode JSON null into an object"},
		{"array", `[{"kind":"Pod"}]`, "cannot decode JSON array into an object"},
		{"string", `"Pod"`, "cannot decode JSON string into an object"},
		{"number", `1`, "cannot decode JSON number into an object"},
		{"bool", `true`, "cannot decode JSON boolean into an object"},
		{"truncated", `{"kind":"Pod"`, "unexpected EOF"},
		{"trailing comma", `{"kind":"Pod",}`, "invalid character"},
		{"trailing data", `{"kind":"Pod"} {}`, "invalid data after top-level JSON value"},
		{"trailing garbage", `{"kind":"Pod"}x`, "invalid character"},
		{"single quotes", `{'kind':'Pod'}`, "invalid character"},
		{"bad literal", `{"kind":"Pod","a":tru}`, "invalid"},
		{"missing kind", `{"apiVersion":"v1"}`, "Object 'Kind' is missing"},
		{"kind not a string", `{"kind":1}`, "Object 'Kind' is missing"},
		{"kind case", `{"Kind":"Pod"}`, "Object 'Kind' is missing"},
		{"too deep", `{"kind":"Pod","a":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}`, "depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := Unstructured{Object: map[string]any{"keep": true}}
			err := u.UnmarshalJSON([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("UnmarshalJSON: %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrMissingKind) && u.Object["keep"] != true {
				t.Error("u changed on error")
			}
			if _, err := Decode([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: %v, want an error containing %q", err, tc.want)
			}
			var l UnstructuredList
			if err := l.UnmarshalJSON([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("UnstructuredList.UnmarshalJSON: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestDecodeMissingKindKeepsObject(t *testing.T) {
	var u Unstructured
	err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","metadata":{"name":"x"}}`))
	if !errors.Is(err, ErrMissingKind) {
		t.Fatalf("err = %v", err)
	}
	if u.GetName() != "x" {
		t.Errorf("Object not set: %v", u.Object)
	}
	var l UnstructuredList
	if err := l.UnmarshalJSON([]byte(`{"items":[{"a":1}]}`)); !errors.Is(err, ErrMissingKind) {
		t.Fatalf("list: err = %v", err)
	}
	if len(l.Items) != 1 {
		t.Errorf("list not set: %+v", l)
	}
	long := `{"apiVersion":"` + strings.Repeat("v", 500) + `"}`
	if err := u.UnmarshalJSON([]byte(long)); err == nil || len(err.Error()) > 200 {
		t.Errorf("error for a long document: %v", err)
	}
}

func TestDecodeStrings(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`"plain"`, "plain"},
		{`""`, ""},
		{`"é中🙂"`, "é中🙂"},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t"},
		{`"\u00e9\u4e2d\ud83d\ude42"`, "é中🙂"},
		{`"\u003c\u0026\u003e"`, "<&>"},
		// Invalid UTF-8 and lone surrogates become U+FFFD, as in encoding/json.
		{"\"a\xffb\"", "a\uFFFDb"},
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},
		{`"\ud800"`, "\uFFFD"},
		{`"\ud800\u0041"`, "\uFFFDA"},
	} {
		got, err := unmarshalValue([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if ref, _ := refDecode([]byte(tc.in)); ref != got {
			t.Errorf("%s: got %q, Kubernetes %q", tc.in, got, ref)
		}
	}
}

func TestDecodeShapes(t *testing.T) {
	in := `{"kind":"K","a":{"b":[1,"x",true,false,null,{},[]]},"a2":{},"e":[],"dup":1,"dup":2,"Dup":3}`
	var u Unstructured
	if err := u.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"kind": "K",
		"a":    map[string]any{"b": []any{int64(1), "x", true, false, nil, map[string]any{}, []any{}}},
		"a2":   map[string]any{},
		"e":    []any{},
		"dup":  int64(2),
		"Dup":  int64(3),
	}
	if d := diffJSON("", u.Object, want); d != "" {
		t.Error(d)
	}
	// Empty arrays are non-nil, so they encode as [] and not null.
	enc, _ := u.MarshalJSON()
	if want := `{"Dup":3,"a":{"b":[1,"x",true,false,null,{},[]]},"a2":{},"dup":2,"e":[],"kind":"K"}`; string(enc) != want {
		t.Errorf("MarshalJSON = %s, want %s", enc, want)
	}
}

func TestDecodeList(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *UnstructuredList
		err      string
	}{{
		name: "kinds filled from the list",
		in:   `{"apiVersion":"example.com/v1","kind":"WidgetList","metadata":{"continue":"c"},"items":[{"metadata":{"name":"a"}},{"kind":"Other","metadata":{"name":"b"}},{"apiVersion":"v2"},null]}`,
		want: &UnstructuredList{
			Object: map[string]any{"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": map[string]any{"continue": "c"}},
			Items: []Unstructured{
				{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "a"}}},
				{Object: map[string]any{"kind": "Other", "metadata": map[string]any{"name": "b"}}},
				{Object: map[string]any{"apiVersion": "v2"}},
				{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget"}},
			},
		},
	}, {
		name: "kind without List suffix",
		in:   `{"apiVersion":"v1","kind":"Things","items":[{}]}`,
		want: &UnstructuredList{
			Object: map[string]any{"apiVersion": "v1", "kind": "Things"},
			Items:  []Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Things"}}},
		},
	}, {
		name: "no items",
		in:   `{"apiVersion":"v1","kind":"PodList"}`,
		want: &UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}, Items: []Unstructured{}},
	}, {
		name: "null items",
		in:   `{"apiVersion":"v1","kind":"PodList","items":null}`,
		want: &UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}, Items: []Unstructured{}},
	}, {
		name: "items not an array",
		in:   `{"kind":"PodList","items":{}}`,
		err:  "cannot decode items: JSON object, want an array",
	}, {
		name: "item not an object",
		in:   `{"kind":"PodList","items":[{},"x"]}`,
		err:  "cannot decode items[1]: JSON string, want an object",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var got UnstructuredList
			err := got.UnmarshalJSON([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, *tc.want)
			}
		})
	}
}

func TestDecodeDispatch(t *testing.T) {
	obj, err := Decode([]byte(`{"kind":"Pod","apiVersion":"v1","spec":{"items":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if u, ok := obj.(*Unstructured); !ok || u.IsList() {
		t.Errorf("object: %T, IsList %v", obj, obj.IsList())
	}
	// Like Kubernetes, a top-level "items" makes a list, whatever the kind.
	obj, err = Decode([]byte(`{"kind":"Pod","apiVersion":"v1","items":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := obj.(*UnstructuredList); !ok {
		t.Errorf("list: %T", obj)
	}
	// An Unstructured holds a list as one object.
	var u Unstructured
	if err := u.UnmarshalJSON([]byte(`{"kind":"PodList","items":[{"a":1},{"b":2}]}`)); err != nil {
		t.Fatal(err)
	}
	if !u.IsList() {
		t.Fatal("IsList = false")
	}
	list, err := u.ToList()
	if err != nil || len(list.Items) != 2 || list.Items[1].Object["b"] != int64(2) {
		t.Errorf("ToList = %+v, %v", list, err)
	}
}

func TestMarshal(t *testing.T) {
	type point struct{ X, Y int }
	for _, tc := range []struct {
		name string
		in   map[string]any
		want string
		err  string
	}{
		{"nil", nil, `null`, ""},
		{"empty", map[string]any{}, `{}`, ""},
		{"sorted", map[string]any{"b": 1, "a": map[string]any{"z": nil, "y": []any{}}, "B": "x", "": 0}, `{"":0,"B":"x","a":{"y":[],"z":null},"b":1}`, ""},
		{"numbers", map[string]any{"i": int64(-3), "f": 1.5, "w": 2.0, "big": 1e21, "small": 1e-7, "neg0": math.Copysign(0, -1), "u": uint64(math.MaxUint64), "i32": int32(7), "f32": float32(0.1)},
			`{"big":1e+21,"f":1.5,"f32":0.1,"i":-3,"i32":7,"neg0":-0,"small":1e-7,"u":18446744073709551615,"w":2}`, ""},
		{"json.Number", map[string]any{"n": json.Number("1.50"), "z": json.Number("")}, `{"n":1.50,"z":0}`, ""},
		{"bad json.Number", map[string]any{"n": json.Number("x")}, "", "invalid json.Number"},
		{"strings", map[string]any{"s": "<&>\u2028\x01\"\\é"}, `{"s":"\u003c\u0026\u003e\u2028\u0001\"\\é"}`, ""},
		{"nil slice", map[string]any{"s": []any(nil), "m": map[string]any(nil)}, `{"m":null,"s":null}`, ""},
		{"other types", map[string]any{"ss": []string{"a"}, "ms": map[string]string{"b": "c", "a": "d"}, "p": point{1, 2}}, `{"ms":{"a":"d","b":"c"},"p":{"X":1,"Y":2},"ss":["a"]}`, ""},
		{"nested Unstructured", map[string]any{"o": &Unstructured{Object: map[string]any{"b": 1, "a": 2}}}, `{"o":{"a":2,"b":1}}`, ""},
		{"NaN", map[string]any{"a": map[string]any{"f": math.NaN()}}, "", `cannot encode NaN as JSON at "/a/f"`},
		{"Inf", map[string]any{"f": math.Inf(1)}, "", "cannot encode +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unstructured{Object: tc.in}.MarshalJSON()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
			if tc.name == "json.Number" {
				return // encoding/json keeps "1.50"; both agree, but the check below would need UseNumber
			}
			if std, err := encodingJSON(tc.in); err != nil || !bytes.Equal(got, std) {
				t.Errorf("encoding/json writes %s, %v", std, err)
			}
		})
	}
}

func TestMarshalList(t *testing.T) {
	l := UnstructuredList{
		Object: map[string]any{"kind": "PodList", "apiVersion": "v1", "items": []any{"stale"}, "zzz": true},
		Items:  []Unstructured{{Object: map[string]any{"kind": "Pod"}}, {}},
	}
	got, err := l.MarshalJSON()
	if want := `{"apiVersion":"v1","items":[{"kind":"Pod"},null],"kind":"PodList","zzz":true}`; err != nil || string(got) != want {
		t.Errorf("got %s, %v; want %s", got, err, want)
	}
	got, err = UnstructuredList{}.MarshalJSON()
	if want := `{"items":[]}`; err != nil || string(got) != want {
		t.Errorf("empty list: got %s, %v; want %s", got, err, want)
	}
	// Through go-json-experiment (MarshalJSONTo), inside another value.
	got, err = kjson.Marshal(map[string]any{"list": l, "ptr": &l})
	if want := `{"list":{"apiVersion":"v1","items":[{"kind":"Pod"},null],"kind":"PodList","zzz":true},"ptr":{"apiVersion":"v1","items":[{"kind":"Pod"},null],"kind":"PodList","zzz":true}}`; err != nil || string(got) != want {
		t.Errorf("kjson: got %s, %v", got, err)
	}
}

// TestMarshalDeterministic checks that equal objects give equal bytes, whatever
// the map iteration order.
func TestMarshalDeterministic(t *testing.T) {
	var u Unstructured
	if err := u.UnmarshalJSON(goldenBody(t, "13-get-pod-json.txt")); err != nil {
		t.Fatal(err)
	}
	first, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := u.DeepCopy().MarshalJSON()
		if !bytes.Equal(first, again) {
			t.Fatal("MarshalJSON is not deterministic")
		}
	}
}

func TestJSONv2Integration(t *testing.T) {
	// A caller's decoder with strict options: the method reads with them.
	dec := jsontext.NewDecoder(strings.NewReader(`{"kind":"A","n":1} {"kind":"B","n":2.5}`))
	var a, b Unstructured
	if err := a.UnmarshalJSONFrom(dec); err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalJSONFrom(dec); err != nil {
		t.Fatal(err)
	}
	if a.GetKind() != "A" || a.Object["n"] != int64(1) || b.GetKind() != "B" || b.Object["n"] != 2.5 {
		t.Errorf("got %v %v", a.Object, b.Object)
	}
	// Strict decoders reject duplicate names; kjson's options allow them.
	dup := []byte(`{"kind":"A","kind":"B"}`)
	if err := jsonv2.Unmarshal(dup, &a); err == nil {
		t.Error("strict decoder accepted a duplicate name")
	}
	if err := kjson.Unmarshal(dup, &a); err != nil || a.GetKind() != "B" {
		t.Errorf("kjson: %v, kind %q", err, a.GetKind())
	}
	var l UnstructuredList
	if err := kjson.Unmarshal([]byte(`{"kind":"XList","items":[{}]}`), &l); err != nil || l.Items[0].GetKind() != "X" {
		t.Errorf("list: %v %+v", err, l)
	}
	if err := kjson.Unmarshal([]byte(`{"items":[]}`), &l); !errors.Is(err, ErrMissingKind) {
		t.Errorf("list without kind: %v", err)
	}
	if err := kjson.Unmarshal([]byte(`[]`), &a); err == nil {
		t.Error("array accepted")
	}
	// encoding/json calls UnmarshalJSON.
	var s struct{ O *Unstructured }
	if err := json.Unmarshal([]byte(`{"O":{"kind":"K","n":3}}`), &s); err != nil || s.O.Object["n"] != int64(3) {
		t.Errorf("encoding/json: %v %v", err, s.O)
	}
}

// TestConcurrent decodes and encodes from several goroutines at once, for the
// race detector: decoders and their string caches are pooled.
func TestConcurrent(t *testing.T) {
	pod := goldenBody(t, "13-get-pod-json.txt")
	list := goldenBody(t, "33-list-pods-json.txt")
	var want Unstructured
	if err := want.UnmarshalJSON(pod); err != nil {
		t.Fatal(err)
	}
	wantEnc, _ := want.MarshalJSON()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				var u Unstructured
				if err := u.UnmarshalJSON(pod); err != nil {
					errs <- err
					return
				}
				var l UnstructuredList
				if err := l.UnmarshalJSON(list); err != nil {
					errs <- err
					return
				}
				enc, err := u.MarshalJSON()
				if err != nil || !bytes.Equal(enc, wantEnc) {
					errs <- errors.New("different encoding")
					return
				}
				if _, err := l.MarshalJSON(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
