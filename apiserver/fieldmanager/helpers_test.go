package fieldmanager

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/internal/smdschema"
)

// clock is a test clock: each call to now returns the current value.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newClock() *clock { return &clock{t: time.Date(2026, 11, 21, 19, 1, 9, 500, time.UTC)} }

// obj decodes a JSON or YAML document into a JSON object.
func obj(t testing.TB, doc string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	v, err := smdschema.DecodeJSON(j)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %s", doc)
	}
	return m
}

// canon returns v as JSON with sorted keys, for comparisons.
func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var x any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// entries returns obj's managedFields.
func entries(t testing.TB, o map[string]any) []any {
	t.Helper()
	l, _, err := managedFieldsOf(o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// withoutTimes returns a copy of managedFields entries without their times.
func withoutTimes(l []any) []any {
	out := deepCopy(l).([]any)
	for _, e := range out {
		if m, ok := e.(map[string]any); ok {
			delete(m, "time")
		}
	}
	return out
}

// goldenObject loads the response body of a golden exchange as release r
// captured it (v1.32.2's normalized to v1.37.2, golden.Differences) as an
// object.
func goldenObject(t testing.TB, r golden.Release, name string) map[string]any {
	t.Helper()
	x, err := r.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := smdschema.DecodeJSON(x.ResponseBody)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v.(map[string]any)
}

// stripServerFields removes what a server adds on write and the
// managedFields, leaving what the field manager sees as the new object.
func stripServerFields(o map[string]any) map[string]any {
	o = deepCopy(o).(map[string]any)
	md, _ := o["metadata"].(map[string]any)
	delete(md, "managedFields")
	return o
}

func mustEqualJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := canon(t, got), canon(t, want); g != w {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}
