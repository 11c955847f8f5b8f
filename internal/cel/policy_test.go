package cel

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

func policyVars(object map[string]any) map[string]any {
	return map[string]any{
		"object": JSONValue(object), "oldObject": types.NullValue, "params": JSONValue(object),
		"request": JSONValue(map[string]any{"operation": "CREATE"}), "namespaceObject": types.NullValue,
		"variables": Variables([]string{"v", "broken"}, []ref.Val{types.String("x"), types.NewErr("no such key: spec")}),
	}
}

// TestPolicyExpressions: policy expressions see object, params, request
// and variables; a variable whose evaluation failed fails only the
// expressions that read it; results must have the expected type.
func TestPolicyExpressions(t *testing.T) {
	obj := map[string]any{"metadata": map[string]any{"name": "n"}, "data": map[string]any{"a": "b"}, "n": int64(3)}
	for _, c := range []struct{ expr, want, err string }{
		{"object.metadata.name == 'n' && params.n == 3 && request.operation == 'CREATE'", "true", ""},
		{"variables.v + object.data.a", "xb", ""},
		{"variables.broken == 'x'", "", "no such key: spec"},
		{"object.spec.x", "", "no such key: spec"},
		{"oldObject == null", "true", ""},
	} {
		pc := newTestCompiler(t, false)
		e, err := pc.Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		v, err := e.Eval(policyVars(obj))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.expr, err, c.err)
			}
		case err != nil:
			t.Errorf("%s: %v", c.expr, err)
		default:
			if n, _ := Native(v); types.DefaultTypeAdapter.NativeToValue(n).Equal(types.DefaultTypeAdapter.NativeToValue(c.want)) != types.True &&
				!(c.want == "true" && v == types.True) {
				t.Errorf("%s = %v, want %s", c.expr, n, c.want)
			}
		}
	}
	pc, err := NewPolicyCompiler(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Compile("'a'", types.BoolType); err == nil || err.Error() != "must evaluate to bool but got string" {
		t.Errorf("a string where a bool is wanted: %v", err)
	}
	if _, err := pc.Compile("1", types.StringType, types.NullType); err == nil || err.Error() != "must evaluate to one of [string null_type] but got int" {
		t.Errorf("an int where a string or null is wanted: %v", err)
	}
	if _, err := pc.Compile("object.", types.BoolType); err == nil || !strings.HasPrefix(err.Error(), "compilation failed: ERROR: <input>:1:8: Syntax error") {
		t.Errorf("syntax error: %v", err)
	}
	// variables: declared in order, typed by their expressions.
	if _, err := pc.Compile("variables.v == 'x'"); err == nil || !strings.Contains(err.Error(), "undefined field 'v'") {
		t.Errorf("an undeclared variable: %v", err)
	}
	if _, err := pc.AddVariable("v", "object.metadata.name.size()"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Compile("variables.v == 'x'"); err == nil || !strings.Contains(err.Error(), "found no matching overload for '_==_' applied to '(int, string)'") {
		t.Errorf("a variable compared with the wrong type: %v", err)
	}
}

// TestMutationExpressions: JSONPatch and Object values become JSON;
// results of the wrong type do not compile.
func TestMutationExpressions(t *testing.T) {
	for _, c := range []struct {
		expr      string
		jsonPatch bool
		want      string
	}{
		{`[JSONPatch{op: "add", path: "/data/x", value: object.data.a}]`, true, `[map[op:add path:/data/x value:b]]`},
		{`Object{metadata: Object.metadata{labels: {"l": "v"}}, spec: Object.spec{replicas: 2}}`, false, `map[metadata:map[labels:map[l:v]] spec:map[replicas:2]]`},
	} {
		e, err := newTestCompiler(t, true).CompileMutation(c.expr, c.jsonPatch)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		v, err := e.Eval(policyVars(map[string]any{"data": map[string]any{"a": "b"}}))
		if err != nil {
			t.Fatal(err)
		}
		n, err := Native(v)
		if got := strings.ReplaceAll(strings.TrimSpace(sprint(n)), "  ", " "); err != nil || got != c.want {
			t.Errorf("%s = %s (%v), want %s", c.expr, got, err, c.want)
		}
	}
	if _, err := newTestCompiler(t, true).CompileMutation(`"x"`, true); err == nil {
		t.Error("a string compiled as a JSONPatch mutation")
	}
	if _, err := newTestCompiler(t, true).CompileMutation(`[JSONPatch{op: "add", path: "/x"}]`, false); err == nil {
		t.Error("a list compiled as an ApplyConfiguration mutation")
	}
}

// TestCheckPolicy: expressions checked against a schema report the
// checker's issues; variables are typed by their expressions.
func TestCheckPolicy(t *testing.T) {
	var s Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"metadata":{"type":"object","properties":{"name":{"type":"string"},"labels":{"type":"object","additionalProperties":{"type":"string"}}}},
"data":{"type":"object","additionalProperties":{"type":"string"}}}}`), &s); err != nil {
		t.Fatal(err)
	}
	got := CheckPolicy(&s, nil, []PolicyVariable{{"n", "object.metadata.name.size()"}},
		[]string{"object.data.a == 'b' && variables.n > 1 && object.metadata.labels.x == 'y'", "object.spec.x == 1", "variables.n == 'x'", ""})
	if got[0] != "" || got[3] != "" {
		t.Errorf("issues of expressions that check: %q, %q", got[0], got[3])
	}
	if !strings.Contains(got[1], "undefined field 'spec'") || !strings.HasPrefix(got[1], "ERROR: <input>:1:7:") {
		t.Errorf("issues of object.spec: %q", got[1])
	}
	if !strings.Contains(got[2], "found no matching overload for '_==_' applied to '(int, string)'") {
		t.Errorf("issues of a variable compared with the wrong type: %q", got[2])
	}
	if w := TypeCheckWarning([]string{"/v1, Kind=A", "/v1, Kind=B"}, []string{"ERROR: x", "ERROR: y"}); w != "/v1, Kind=A: ERROR: x\n\n/v1, Kind=B: ERROR: y\n" {
		t.Errorf("warning %q", w)
	}
}

// FuzzPolicyExpression evaluates policy and mutation expressions on
// arbitrary objects and converts the results: no input panics.
func FuzzPolicyExpression(f *testing.F) {
	for _, s := range []struct{ expr, obj string }{
		{"object.metadata.name == 'x'", `{"metadata":{"name":"x"}}`},
		{"object.spec.replicas > params.max", `{"spec":{"replicas":3},"max":1.5}`},
		{"object.data.all(k, k.size() < 10) && variables.v == 'x'", `{"data":{"a":"b","c":[1,2,{}]}}`},
		{`[JSONPatch{op: "add", path: "/data/x", value: object.data}]`, `{"data":null}`},
		{`Object{spec: Object.spec{x: object.spec}}`, `{"spec":{"x":[true,false,null,1e300]}}`},
		{"quantity(object.q).isLessThan(quantity('1Gi')) || object.l.sum() > 0", `{"q":"2Gi","l":[1,2,3]}`},
		{"string(object.x) + string(object.y)", `{"x":-0.0,"y":9223372036854775807}`},
	} {
		f.Add(s.expr, s.obj)
	}
	f.Fuzz(func(t *testing.T, expr, object string) {
		obj, ok := decodeObject(object)
		if !ok {
			return
		}
		pc, err := NewPolicyCompiler(true)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pc.AddVariable("v", "'x'")
		_, _ = pc.AddVariable("broken", "object.spec")
		if e, err := pc.Compile(expr); err == nil {
			if v, err := e.Eval(policyVars(obj)); err == nil {
				_, _ = Native(v)
			}
		}
		for _, jp := range []bool{true, false} {
			if e, err := pc.CompileMutation(expr, jp); err == nil {
				if v, err := e.Eval(policyVars(obj)); err == nil {
					_, _ = Native(v)
				}
			}
		}
	})
}

func newTestCompiler(t *testing.T, mutation bool) *PolicyCompiler {
	t.Helper()
	pc, err := NewPolicyCompiler(mutation)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v", "broken"} {
		if _, err := pc.AddVariable(v, "object"); err != nil {
			t.Fatal(err)
		}
	}
	return pc
}

func sprint(v any) string { return fmt.Sprint(v) }
