package cel

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodeObject decodes a JSON object into the values the server holds:
// integers as int64, other numbers as float64.
func decodeObject(s string) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var m map[string]any
	if d.Decode(&m) != nil || m == nil {
		return nil, false
	}
	return numbers(m).(map[string]any), true
}

func numbers(x any) any {
	switch t := x.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, v := range t {
			t[k] = numbers(v)
		}
	case []any:
		for i, v := range t {
			t[i] = numbers(v)
		}
	}
	return x
}

// fuzzSchema has rules of every kind over every kind of node.
const fuzzSchema = `{"type":"object","x-kubernetes-validations":[{"rule":"self.metadata.name.size() < 100"}],"properties":{
 "spec":{"type":"object","x-kubernetes-validations":[
   {"rule":"!has(self.a) || self.a.size() < 10","messageExpression":"'a: ' + self.a"},
   {"rule":"self.n >= oldSelf.n","message":"n grows"},
   {"rule":"!oldSelf.hasValue() || self.s == oldSelf.value().s","optionalOldSelf":true},
   {"rule":"!has(self.l) || self.l.all(x, x.matches('^[a-z]*$'))","fieldPath":".l"},
   {"rule":"!has(self.m) || self.m.exists(k, k == 'x') || size(self.m) < 5","reason":"FieldValueForbidden"},
   {"rule":"!has(self.q) || isQuantity(string(self.q)) && quantity(string(self.q)).isLessThan(quantity('10Gi'))"},
   {"rule":"!has(self.ip) || isIP(self.ip) && ip(self.ip).family() == 4 || isCIDR(self.ip) && cidr(self.ip).prefixLength() > 8"},
   {"rule":"!has(self.u) || isURL(self.u) && url(self.u).getHost() != ''"},
   {"rule":"!has(self.v) || isSemver(self.v) && semver(self.v).major() >= 1"},
   {"rule":"!has(self.a) || !format.dns1123Label().validate(self.a).hasValue()"},
   {"rule":"!has(self.nums) || self.nums.sum() < 100 && (self.nums.size() == 0 || self.nums.max() < 50) && self.nums.isSorted()"},
   {"rule":"!has(self.a) || self.a.find('[0-9]+') == '' || self.a.findAll('[0-9]').size() < 3"}
 ],"properties":{
  "a":{"type":"string","maxLength":20},"n":{"type":"integer"},"s":{"type":"string"},"d":{"type":"number"},
  "l":{"type":"array","maxItems":20,"x-kubernetes-list-type":"set","items":{"type":"string","maxLength":10}},
  "m":{"type":"object","maxProperties":10,"additionalProperties":{"type":"integer","x-kubernetes-validations":[{"rule":"self >= oldSelf"}]}},
  "q":{"x-kubernetes-int-or-string":true},"ip":{"type":"string","maxLength":50},"u":{"type":"string","maxLength":100},
  "v":{"type":"string","maxLength":30},"nums":{"type":"array","maxItems":20,"items":{"type":"integer"}},
  "t":{"type":"string","format":"date-time","x-kubernetes-validations":[{"rule":"self > timestamp('2000-01-01T00:00:00Z')"}]},
  "dur":{"type":"string","format":"duration","x-kubernetes-validations":[{"rule":"self < duration('1h')"}]},
  "items":{"type":"array","maxItems":10,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
   "items":{"type":"object","properties":{"k":{"type":"string","maxLength":5},"v":{"type":"integer"}},
    "x-kubernetes-validations":[{"rule":"self.v >= oldSelf.v"},{"rule":"!has(self.v) || self.v < 1000"}]}},
  "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-validations":[{"rule":"true"}]},
  "emb":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-validations":[{"rule":"self.kind != ''"}]}
 }}}}`

// FuzzValidate evaluates the rules of fuzzSchema on arbitrary objects, as
// creates and as updates: no input panics, whatever its shape (wrong types
// included: the server checks the schema first, but the evaluation must
// not depend on it).
func FuzzValidate(f *testing.F) {
	v, errs := Compile(schemaOf(f, fuzzSchema), "s")
	if len(errs) > 0 {
		f.Fatal(errs.Message())
	}
	for _, seed := range [][2]string{
		{`{"metadata":{"name":"a"},"spec":{"a":"abc","n":1,"s":"x","l":["a","b"],"m":{"x":1},"q":"1Gi","ip":"10.0.0.0/8","u":"https://h/p","v":"1.2.3","nums":[1,2,3]}}`,
			`{"metadata":{"name":"a"},"spec":{"a":"abc","n":2,"s":"y","m":{"x":2}}}`},
		{`{"spec":{"t":"2024-01-01T00:00:00Z","dur":"5m","items":[{"k":"a","v":1},{"k":"b"}],"free":{"x":[1,{"y":null}]},"emb":{"kind":"K","metadata":{"name":"n"}}}}`,
			`{"spec":{"items":[{"k":"a","v":2}]}}`},
		{`{"spec":{"a":5,"n":"x","l":"no","m":[1],"q":[],"nums":["a"],"t":"not a time","dur":"x","items":[1,"a",null],"emb":"s"}}`, `{"spec":null}`},
		{`{"spec":{"d":1e308,"n":9223372036854775807,"nums":[9223372036854775807,1]}}`, ``},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, obj, old string) {
		u, ok := decodeObject(obj)
		if !ok {
			return
		}
		_ = v.Validate(u, nil)
		if o, ok := decodeObject(old); ok {
			_ = v.Validate(u, o)
		}
	})
}
