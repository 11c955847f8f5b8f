package cel

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// schemaOf decodes an openAPIV3Schema.
func schemaOf(t testing.TB, js string) *Schema {
	t.Helper()
	var s Schema
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		t.Fatalf("schema %s: %v", js, err)
	}
	return &s
}

// objOf decodes a JSON object as the server holds it (nil for "").
func objOf(t testing.TB, js string) map[string]any {
	t.Helper()
	if js == "" {
		return nil
	}
	m, ok := decodeObject(`{"kind":"X","apiVersion":"v1",` + strings.TrimPrefix(js, "{"))
	if !ok {
		t.Fatalf("object %s does not decode", js)
	}
	return m
}

// spec is a schema with the given properties of spec, and rules on spec.
func spec(rules, props string) string {
	return `{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":` + rules +
		`,"properties":` + props + `}}}`
}

// TestValidate evaluates rules on creates and updates and checks the
// errors word for word.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		schema   string
		obj, old string
		want     string // FieldErrors.Message()
	}{
		{name: "pass", schema: spec(`[{"rule":"self.a > 0"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":1}}`},
		{name: "message", schema: spec(`[{"rule":"self.a > 0","message":"a must be positive"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":0}}`, want: "spec: Invalid value: a must be positive"},
		{name: "no message", schema: spec(`[{"rule":"  self.a > 0 "}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":0}}`, want: "spec: Invalid value: failed rule: self.a > 0"},
		{name: "scalar value shown", schema: spec(`[]`, `{"a":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0"}]}}`),
			obj: `{"spec":{"a":0}}`, want: "spec.a: Invalid value: 0: failed rule: self > 0"},
		{name: "messageExpression", schema: spec(`[{"rule":"self.a > 0","messageExpression":"'a is bad for ' + self.s"}]`, `{"a":{"type":"integer"},"s":{"type":"string","maxLength":10}}`),
			obj: `{"spec":{"a":-1,"s":"me"}}`, want: "spec: Invalid value: a is bad for me"},
		{name: "messageExpression error falls back", schema: spec(`[{"rule":"self.a > 0","message":"m","messageExpression":"string(1 / self.a)"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":0}}`, want: "spec: Invalid value: m"},
		{name: "messageExpression empty falls back", schema: spec(`[{"rule":"self.a > 0","messageExpression":"' '"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":0}}`, want: "spec: Invalid value: failed rule: self.a > 0"},
		{name: "reasons", schema: spec(`[{"rule":"false","reason":"FieldValueForbidden","message":"f"},{"rule":"false","reason":"FieldValueRequired","message":"r"},
			{"rule":"false","reason":"FieldValueDuplicate","message":"d"},{"rule":"false","reason":"FieldValueInvalid","message":"i"}]`, `{}`),
			obj: `{"spec":{}}`, want: "[spec: Forbidden: f, spec: Required value: r, spec: Duplicate value, spec: Invalid value: i]"},
		{name: "fieldPath", schema: spec(`[{"rule":"false","fieldPath":".a.b","message":"x"},{"rule":"false","fieldPath":".m['k.1']","message":"y"}]`,
			`{"a":{"type":"object","properties":{"b":{"type":"string"}}},"m":{"type":"object","additionalProperties":{"type":"string"}}}`),
			obj: `{"spec":{}}`, want: "[spec.a.b: Invalid value: x, spec.m[k.1]: Invalid value: y]"},
		{name: "root", schema: `{"type":"object","x-kubernetes-validations":[{"rule":"self.metadata.name.startsWith('a')"},{"rule":"self.kind == 'X' && self.apiVersion == 'v1'"}]}`,
			obj: `{"metadata":{"name":"b"}}`, want: "<nil>: Invalid value: failed rule: self.metadata.name.startsWith('a')"},
		{name: "null skipped", schema: spec(`[]`, `{"a":{"type":"integer","nullable":true,"x-kubernetes-validations":[{"rule":"self > 0"}]}}`),
			obj: `{"spec":{"a":null}}`},
		{name: "runtime error", schema: spec(`[{"rule":"self.a > 0"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{}}`, want: `spec: Invalid value: "object": no such key: a evaluating rule: self.a > 0`},
		{name: "map keys", schema: spec(`[]`, `{"m":{"type":"object","additionalProperties":{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0"}]}}}`),
			obj: `{"spec":{"m":{"a.b":0}}}`, want: "spec.m[a.b]: Invalid value: 0: failed rule: self > 0"},
		{name: "list items", schema: spec(`[]`, `{"l":{"type":"array","items":{"type":"string","x-kubernetes-validations":[{"rule":"self != 'x'"}]}}}`),
			obj: `{"spec":{"l":["a","x"]}}`, want: `spec.l[1]: Invalid value: "x": failed rule: self != 'x'`},
		{name: "escaped names", schema: spec(`[{"rule":"self.__if__ == 1 && self.a__dash__b == 2"}]`, `{"if":{"type":"integer"},"a-b":{"type":"integer"}}`),
			obj: `{"spec":{"if":1,"a-b":2}}`},
		{name: "number from integer JSON", schema: spec(`[{"rule":"self.n == 2.0"}]`, `{"n":{"type":"number"}}`),
			obj: `{"spec":{"n":2}}`},
		{name: "int-or-string", schema: spec(`[]`, `{"q":{"x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"type(self) == int ? self < 10 : quantity(self).isLessThan(quantity('10'))"}]}}`),
			obj: `{"spec":{"q":"20"}}`, want: `spec.q: Invalid value: "20": failed rule: type(self) == int ? self < 10 : quantity(self).isLessThan(quantity('10'))`},
		{name: "no such overload", schema: spec(`[]`, `{"q":{"x-kubernetes-int-or-string":true,"x-kubernetes-validations":[{"rule":"self.size() > 0"}]}}`),
			obj: `{"spec":{"q":1}}`, want: `spec.q: Invalid value: "": 'no such overload: size': call arguments did not match a supported operator, function or macro signature for rule: self.size() > 0`},

		// transition rules
		{name: "transition skipped on create", schema: spec(`[{"rule":"self.a == oldSelf.a","message":"immutable"}]`, `{"a":{"type":"string"}}`),
			obj: `{"spec":{"a":"x"}}`},
		{name: "transition on update", schema: spec(`[{"rule":"self.a == oldSelf.a","message":"immutable"}]`, `{"a":{"type":"string"}}`),
			obj: `{"spec":{"a":"x"}}`, old: `{"spec":{"a":"y"}}`, want: "spec: Invalid value: immutable"},
		{name: "transition without old value", schema: spec(`[]`, `{"a":{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"immutable"}]}}`),
			obj: `{"spec":{"a":"x"}}`, old: `{"spec":{}}`},
		{name: "optionalOldSelf on create", schema: spec(`[{"rule":"oldSelf.hasValue() ? self.a >= oldSelf.value().a : self.a == 0","optionalOldSelf":true,"message":"starts at 0"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":1}}`, want: "spec: Invalid value: starts at 0"},
		{name: "optionalOldSelf on update", schema: spec(`[{"rule":"oldSelf.hasValue() ? self.a >= oldSelf.value().a : self.a == 0","optionalOldSelf":true,"message":"grows"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":3}}`, old: `{"spec":{"a":2}}`},
		{name: "optionalOldSelf on update failing", schema: spec(`[{"rule":"oldSelf.hasValue() ? self.a >= oldSelf.value().a : self.a == 0","optionalOldSelf":true,"message":"grows"}]`, `{"a":{"type":"integer"}}`),
			obj: `{"spec":{"a":1}}`, old: `{"spec":{"a":2}}`, want: "spec: Invalid value: grows"},
		{name: "ratchet unchanged", schema: spec(`[{"rule":"self.a > 0"}]`, `{"a":{"type":"integer"},"b":{"type":"integer"}}`),
			obj: `{"spec":{"a":0},"status":{"x":1}}`, old: `{"spec":{"a":0}}`},
		{name: "transition rules are not ratcheted", schema: spec(`[]`, `{"x":{"type":"integer","x-kubernetes-validations":[{"rule":"oldSelf == 5","message":"old x must be 5"}]},"y":{"type":"integer"}}`),
			obj: `{"spec":{"x":3,"y":2}}`, old: `{"spec":{"x":3,"y":1}}`, want: "spec.x: Invalid value: 3: old x must be 5"},
		{name: "list map items correlate", schema: spec(`[]`, `{"l":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
			"items":{"type":"object","properties":{"k":{"type":"string"},"v":{"type":"integer"}},"x-kubernetes-validations":[{"rule":"self.v >= oldSelf.v","message":"grows"}]}}}`),
			obj: `{"spec":{"l":[{"k":"b","v":1},{"k":"a","v":1},{"k":"c","v":0}]}}`, old: `{"spec":{"l":[{"k":"a","v":2},{"k":"b","v":0}]}}`,
			want: "spec.l[1]: Invalid value: grows"},
		{name: "atomic list items do not correlate", schema: spec(`[]`, `{"l":{"type":"array","items":{"type":"integer","x-kubernetes-validations":[{"rule":"self < 100"}]}}}`),
			obj: `{"spec":{"l":[200,1]}}`, old: `{"spec":{"l":[200]}}`, want: "spec.l[0]: Invalid value: 200: failed rule: self < 100"},
		{name: "set items correlate", schema: spec(`[]`, `{"l":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"integer","x-kubernetes-validations":[{"rule":"self < 100"}]}}}`),
			obj: `{"spec":{"l":[1,200]}}`, old: `{"spec":{"l":[200]}}`},
		{name: "set equality ignores order", schema: spec(`[{"rule":"self.s == oldSelf.s","message":"immutable"}]`, `{"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}}`),
			obj: `{"spec":{"s":["b","a"]}}`, old: `{"spec":{"s":["a","b"]}}`},
		{name: "atomic list equality is ordered", schema: spec(`[{"rule":"self.s == oldSelf.s","message":"immutable"}]`, `{"s":{"type":"array","items":{"type":"string"}}}`),
			obj: `{"spec":{"s":["b","a"]}}`, old: `{"spec":{"s":["a","b"]}}`, want: "spec: Invalid value: immutable"},
		{name: "map values correlate", schema: spec(`[]`, `{"m":{"type":"object","additionalProperties":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf","message":"grows"}]}}}`),
			obj: `{"spec":{"m":{"a":1,"b":1}}}`, old: `{"spec":{"m":{"a":2}}}`, want: "spec.m[a]: Invalid value: 1: grows"},

		// formats typed
		{name: "duration and date-time", schema: spec(`[{"rule":"self.d > duration('1s') && self.t > timestamp('2020-01-01T00:00:00Z') && self.day < timestamp('2030-01-01T00:00:00Z') && self.b == b'hi'"}]`,
			`{"d":{"type":"string","format":"duration"},"t":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},"b":{"type":"string","format":"byte"}}`),
			obj: `{"spec":{"d":"1m","t":"2024-01-01T00:00:00Z","day":"2024-01-02","b":"aGk="}}`},
		{name: "embedded resource", schema: spec(`[]`, `{"e":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-validations":[{"rule":"self.kind == 'K' && self.metadata.name == 'n'"}]}}`),
			obj: `{"spec":{"e":{"apiVersion":"v1","kind":"K","metadata":{"name":"n"}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, errs := Compile(schemaOf(t, tc.schema), "s")
			if len(errs) > 0 {
				t.Fatalf("compile: %s", errs.Message())
			}
			got := v.Validate(objOf(t, tc.obj), objOf(t, tc.old)).Message()
			if got != tc.want {
				t.Errorf("errors\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}

// TestValidateCost checks the runtime budgets: one rule over its per-call
// limit, and rules that together spend the whole object's budget; both stop
// the validation. The limits are kube-apiserver's divided by 100 (the
// conformance step runtime-cost checks the real per-call limit).
func TestValidateCost(t *testing.T) {
	small := limits{perCall: PerCallLimit / 100, budget: RuntimeCostBudget / 100}
	items := make([]string, 100)
	for i := range items {
		items[i] = fmt.Sprintf("%q", fmt.Sprint(i))
	}
	list := `{"spec":{"l":[` + strings.Join(items, ",") + `]}}`
	props := `{"l":{"type":"array","maxItems":100,"items":{"type":"string","maxLength":10}},"z":{"type":"integer"}}`
	heavy := `{"rule":"self.l.all(x, self.l.all(y, x == y || true))"}`
	v, errs := compile(schemaOf(t, spec(`[`+heavy+`,{"rule":"self.z > 0"}]`, props)), "s", small)
	if len(errs) > 0 {
		t.Fatal(errs.Message())
	}
	want := `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(x, self.l.all(y, x == y || true))`
	if got := v.Validate(objOf(t, list), nil).Message(); got != want {
		t.Errorf("per call\n got  %s\n want %s", got, want)
	}

	// 40 items: each rule costs less than the per-call limit, 30 of them
	// more than the budget.
	few := `{"spec":{"l":[` + strings.Join(items[:40], ",") + `]}}`
	var rules []string
	for range 30 {
		rules = append(rules, `{"rule":"self.l.all(x, self.l.all(y, x != y || true))"}`)
	}
	v, errs = compile(schemaOf(t, spec(`[`+strings.Join(rules, ",")+`]`, props)), "s", small)
	if len(errs) > 0 {
		t.Fatal(errs.Message())
	}
	want = `spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run`
	if got := v.Validate(objOf(t, few), nil).Message(); got != want {
		t.Errorf("budget\n got  %s\n want %s", got, want)
	}
	// Within the budget, all run.
	if got := v.Validate(objOf(t, `{"spec":{"l":["a"]}}`), nil).Message(); got != "" {
		t.Errorf("small object: %s", got)
	}
}

// TestCompile checks the errors a CRD's rules are refused with.
func TestCompile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema string
		want   string
	}{
		{name: "ok", schema: spec(`[{"rule":"self.a == oldSelf.a"},{"rule":"has(self.a)","messageExpression":"self.a"}]`, `{"a":{"type":"string"}}`)},
		{name: "static", schema: spec(`[{"rule":""},{"rule":"true","message":"a\nb"},{"rule":"true","reason":"Nope"},{"rule":"true","fieldPath":".x"},{"rule":"true","fieldPath":".l[0]"}]`,
			`{"l":{"type":"array","items":{"type":"string"}}}`),
			want: `[s.properties[spec].x-kubernetes-validations[0].rule: Required value, ` +
				`s.properties[spec].x-kubernetes-validations[1].message: Invalid value: "a\nb": must not contain line breaks, ` +
				`s.properties[spec].x-kubernetes-validations[2].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired", ` +
				`s.properties[spec].x-kubernetes-validations[3].fieldPath: Invalid value: ".x": must be a valid path, ` +
				`s.properties[spec].x-kubernetes-validations[4].fieldPath: Invalid value: ".l[0]": must be a valid path]`},
		{name: "undefined field", schema: spec(`[{"rule":"self.b == 1"}]`, `{"a":{"type":"string"}}`),
			want: "s.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
				`{"Rule":"self.b == 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: ` +
				"compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b == 1\n | ....^"},
		{name: "preserve unknown fields hides fields", schema: spec(`[{"rule":"self.free.x == 1"}]`, `{"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}`),
			want: "s.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
				`{"Rule":"self.free.x == 1","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: ` +
				"compilation failed: ERROR: <input>:1:10: undefined field 'x'\n | self.free.x == 1\n | .........^"},
		{name: "not bool", schema: spec(`[{"rule":"self.a","reason":"FieldValueForbidden"}]`, `{"a":{"type":"string"}}`),
			want: "s.properties[spec].x-kubernetes-validations[0].rule: Invalid value: " +
				`{"Rule":"self.a","Message":"","MessageExpression":"","Reason":"FieldValueForbidden","FieldPath":"","OptionalOldSelf":null}: cel expression must evaluate to a bool`},
		{name: "messageExpression not string", schema: spec(`[{"rule":"true","messageExpression":"1"}]`, `{}`),
			want: "s.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: " +
				`{"Rule":"true","Message":"","MessageExpression":"1","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate to a string`},
		{name: "oldSelf under atomic list", schema: spec(`[]`, `{"l":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer","maxLength":1,
			"x-kubernetes-validations":[{"rule":"self == oldSelf"}]}}}}}`),
			want: `s.properties[spec].properties[l].items.properties[x].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within s.properties[spec].properties[l]`},
		{name: "optionalOldSelf without oldSelf", schema: spec(`[{"rule":"true","optionalOldSelf":true}]`, `{}`),
			want: "s.properties[spec].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"},
		{name: "cost just over", schema: spec(`[{"rule":"self.l.all(x, self.l.all(y, x == y))"}]`, `{"l":{"type":"array","maxItems":1100,"items":{"type":"string","maxLength":10}}}`),
			// as kube-apiserver v1.37.2 words it, to the digit
			want: "s.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.089660x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"},
		{name: "unbounded messageExpression", schema: spec(`[{"rule":"self.a > 0","messageExpression":"'a is ' + string(self.a)"}]`, `{"a":{"type":"integer"}}`),
			want: "[s.properties[spec].x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared), " +
				"s.properties[spec].x-kubernetes-validations[0].messageExpression: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema, " +
				"s: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)]"},
		{name: "cost", schema: spec(`[{"rule":"self.l.all(x, self.l.all(y, x == y))"}]`, `{"l":{"type":"array","maxItems":2000,"items":{"type":"string","maxLength":10}}}`),
			want: "s.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 3.6x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"},
		{name: "cardinality", schema: spec(`[]`, `{"o":{"type":"array","maxItems":1000,"items":{"type":"object","properties":{"l":{"type":"array","maxItems":100,"items":{"type":"string","maxLength":10}}},
			"x-kubernetes-validations":[{"rule":"self.l.all(x, self.l.all(y, x == y))"}]}}}`),
			want: "s.properties[spec].properties[o].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 9.1x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := Compile(schemaOf(t, tc.schema), "s")
			if got := errs.Message(); got != tc.want {
				t.Errorf("errors\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}
