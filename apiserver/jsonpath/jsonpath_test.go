package jsonpath

import (
	"encoding/json"
	"reflect"
	"testing"
)

const doc = `{
  "metadata": {"name": "w1", "creationTimestamp": "2026-11-21T19:01:11Z", "labels": {"app.kubernetes.io/name": "web"}},
  "spec": {"size": 3, "ratio": 1.5, "color": "red", "on": true, "tags": ["a", "b", "c", "d"], "nil": null},
  "status": {"conditions": [
    {"type": "Available", "status": "False", "n": 1},
    {"type": "Ready", "status": "True", "n": 2},
    {"type": "Ready", "status": "Unknown", "n": 3}
  ]}
}`

// load decodes JSON with int64 integers, as unstructured objects hold them.
func load(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return ints(v)
}

func ints(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = ints(x)
		}
	case []any:
		for i, x := range v {
			v[i] = ints(x)
		}
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	return v
}

func TestEval(t *testing.T) {
	v := load(t, doc)
	cases := []struct {
		expr string
		want []any
	}{
		{".spec.size", []any{int64(3)}},
		{"{.spec.size}", []any{int64(3)}},
		{"$.spec.color", []any{"red"}},
		{".spec.ratio", []any{1.5}},
		{".spec.on", []any{true}},
		{".spec.nil", []any{nil}},
		{".spec.missing", nil},
		{".spec.size.deeper", nil},
		{".metadata.creationTimestamp", []any{"2026-11-21T19:01:11Z"}},
		{".metadata.labels['app.kubernetes.io/name']", []any{"web"}},
		{`.metadata.labels["app.kubernetes.io/name"]`, []any{"web"}},
		{".metadata.labels.app\\.x", nil},
		{".metadata.labels.app\\.kubernetes\\.io/name", []any{"web"}},
		{".spec.tags[0]", []any{"a"}},
		{".spec.tags[-1]", []any{"d"}},
		{".spec.tags[9]", nil},
		{".spec.tags[0,2]", []any{"a", "c"}},
		{".spec.tags[1:3]", []any{"b", "c"}},
		{".spec.tags[:2]", []any{"a", "b"}},
		{".spec.tags[2:]", []any{"c", "d"}},
		{".spec.tags[::2]", []any{"a", "c"}},
		{".spec.tags[::-1]", []any{"d", "c", "b", "a"}},
		{".spec.tags[*]", []any{"a", "b", "c", "d"}},
		{".spec.tags.*", []any{"a", "b", "c", "d"}},
		{`.status.conditions[?(@.type=="Ready")].status`, []any{"True", "Unknown"}},
		{`.status.conditions[?(@.type == 'Available')].status`, []any{"False"}},
		{`.status.conditions[?(@.type!="Ready")].type`, []any{"Available"}},
		{`.status.conditions[?(@.n>1)].n`, []any{int64(2), int64(3)}},
		{`.status.conditions[?(@.n<=1)].type`, []any{"Available"}},
		{`.status.conditions[?(@.missing)].type`, nil},
		{`.status.conditions[?(@.n)].n`, []any{int64(1), int64(2), int64(3)}},
		{`.status.conditions[?(@.missing=="x")].type`, nil},
		{`.status.conditions[?(@.status==@.type)].n`, nil},
		{"..status", []any{map[string]any{"conditions": v.(map[string]any)["status"].(map[string]any)["conditions"]}, "False", "True", "Unknown"}},
		{".spec['color','size']", []any{"red", int64(3)}},
		{"", []any{v}},
	}
	for _, c := range cases {
		p, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if got := p.Eval(v); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %#v, want %#v", c.expr, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, expr := range []string{
		".spec[", ".spec[abc]", ".spec[?(@.a ~ 1)]", ".spec[?(@.a==)]", "{.spec", ".spec[::0]",
		".spec['unterminated]", "spec", ".spec..", ".a[?@.b]",
	} {
		if _, err := Parse(expr); err == nil {
			t.Errorf("Parse(%q): no error", expr)
		}
	}
}

func TestFirst(t *testing.T) {
	v := load(t, doc)
	p, err := Parse(`.status.conditions[?(@.type=="Ready")].status`)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := p.First(v); !ok || got != "True" {
		t.Errorf("First = %v, %v; want True", got, ok)
	}
	if _, ok := p.First(map[string]any{}); ok {
		t.Error("First on an empty object found something")
	}
}

// FuzzPath checks that no expression makes Parse or Eval panic or loop, and
// that a parsed path evaluates the same way twice.
func FuzzPath(f *testing.F) {
	for _, s := range []string{
		".spec.size", `.status.conditions[?(@.type=="Ready")].status`, ".metadata.creationTimestamp",
		"..name", ".a[1:2:-1]", ".a[-3]", "{.a['b','c']}", `.a[?(@.b>=1.5e3)]`, ".a.*[*]", "$",
	} {
		f.Add(s)
	}
	v := load(f, doc)
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := Parse(expr)
		if err != nil {
			return
		}
		a := p.Eval(v)
		b := p.Eval(v)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q evaluates differently twice: %v, %v", expr, a, b)
		}
		_ = p.String()
	})
}

func BenchmarkEvalFilter(b *testing.B) {
	v := load(b, doc)
	p, err := Parse(`.status.conditions[?(@.type=="Ready")].status`)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p.First(v)
	}
}
