package cel

import (
	"fmt"

	"github.com/google/cel-go/common/types"
)

// Type checking of policies.
//
// kube-controller-manager's policy status controller checks the
// validations of a ValidatingAdmissionPolicy against the schemas of the
// kinds it matches and reports what does not type-check in
// status.typeChecking. CheckPolicy does the check for one kind.

// PolicyVariable is a named variable of a policy.
type PolicyVariable struct {
	Name, Expression string
}

// CheckPolicy type-checks exprs with object and oldObject of the schema
// object (a kind's, as OpenAPI v3 gives it, with every reference resolved),
// params of the schema params (nil: dyn), namespaceObject, request and
// the variables typed as their expressions give. It returns, for each
// expression, the checker's issues ("" when it checks; a blank expression
// is not checked).
func CheckPolicy(object, params *Schema, vars []PolicyVariable, exprs []string) []string {
	out := make([]string, len(exprs))
	b := &typeBuilder{objects: map[string]*declType{}, fullMetadata: true}
	obj := b.declTypeOf(object, "Object", true, 0)
	if obj == nil {
		return out
	}
	typed := map[string]*types.Type{"object": obj.cel, "oldObject": obj.cel}
	if params != nil {
		if p := b.declTypeOf(params, "Params", true, 0); p != nil {
			typed["params"] = p.cel
		}
	}
	c, err := newPolicyCompiler(b.objects, typed, false)
	if err != nil {
		return out
	}
	for _, v := range vars {
		_, _ = c.AddVariable(v.Name, v.Expression)
	}
	for i, e := range exprs {
		if e == "" {
			continue
		}
		if _, iss := c.env.Compile(e); iss.Err() != nil {
			out[i] = iss.String()
		}
	}
	return out
}

// TypeCheckWarning words the issues of one expression for kinds, as the
// policy status controller does: each kind's issues under its name.
func TypeCheckWarning(kinds, issues []string) string {
	s := ""
	for i, k := range kinds {
		if issues[i] == "" {
			continue
		}
		if s != "" {
			s += "\n"
		}
		s += fmt.Sprintf("%s: %s\n", k, issues[i])
	}
	return s
}
