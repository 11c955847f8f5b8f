package cel_test

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/internal/cel"
)

// A CRD schema's rules, compiled once and evaluated on a create and on an
// update.
func Example() {
	var schema cel.Schema
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object",
	  "x-kubernetes-validations":[
	    {"rule":"self.min <= self.max","message":"min must not exceed max","fieldPath":".min"},
	    {"rule":"self.mode == oldSelf.mode","message":"mode is immutable"}],
	  "properties":{"min":{"type":"integer"},"max":{"type":"integer"},"mode":{"type":"string"}}}}}`), &schema)
	v, errs := cel.Compile(&schema, "spec.validation.openAPIV3Schema")
	if len(errs) > 0 {
		fmt.Println(errs.Message())
		return
	}
	obj := map[string]any{"spec": map[string]any{"min": int64(5), "max": int64(1), "mode": "fast"}}
	fmt.Println(v.Validate(obj, nil).Message())
	old := map[string]any{"spec": map[string]any{"min": int64(0), "max": int64(1), "mode": "slow"}}
	fmt.Println(v.Validate(obj, old).Message())
	// Output:
	// spec.min: Invalid value: min must not exceed max
	// [spec.min: Invalid value: min must not exceed max, spec: Invalid value: mode is immutable]
}

// A rule whose estimated cost is over the budget is refused.
func ExampleCompile() {
	var schema cel.Schema
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"},
	  "x-kubernetes-validations":[{"rule":"self.all(x, self.all(y, x == y))"}]}}}`), &schema)
	_, errs := cel.Compile(&schema, "spec.validation.openAPIV3Schema")
	fmt.Println(errs[0].Error())
	// Output:
	// spec.validation.openAPIV3Schema.properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)
}

// The Kubernetes libraries in an expression of BaseEnv.
func ExampleBaseEnv() {
	env, _ := cel.BaseEnv()
	ast, iss := env.Compile(`quantity('1.5Gi').isGreaterThan(quantity('1Gi')) && cidr('10.0.0.0/8').containsIP('10.1.2.3')`)
	if iss.Err() != nil {
		fmt.Println(iss.Err())
		return
	}
	prg, _ := env.Program(ast)
	out, _, err := prg.Eval(map[string]any{})
	fmt.Println(out, err)
	// Output:
	// true <nil>
}
