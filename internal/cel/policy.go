package cel

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Policy expressions.
//
// The expressions of admission policies (matchConditions, variables,
// validations, messageExpressions, auditAnnotations, mutations) run in
// PolicyEnv: BaseEnv with the variables kube-apiserver declares for them,
// all dynamically typed as in kube-apiserver's admission (type checking
// against the matched kinds' schemas is the policy status controller's
// job, not admission's): object, oldObject, request, params,
// namespaceObject, and variables, a map from a variable's name to its
// value. The authorizer library is not implemented.

// PolicyVariables are the variables of PolicyEnv, in kube-apiserver's
// names.
var PolicyVariables = []string{"object", "oldObject", "request", "params", "namespaceObject", "variables"}

// PolicyEnv returns the environment of admission policy expressions (see
// PolicyVariables). It is built once and shared.
func PolicyEnv() (*celgo.Env, error) {
	policyOnce.Do(func() {
		base, err := BaseEnv()
		if err != nil {
			policyErr = err
			return
		}
		opts := make([]celgo.EnvOption, 0, len(PolicyVariables))
		for _, v := range PolicyVariables {
			t := types.DynType
			if v == "variables" {
				t = types.NewMapType(types.StringType, types.DynType)
			}
			opts = append(opts, celgo.Variable(v, t))
		}
		policyEnv, policyErr = base.Extend(opts...)
	})
	return policyEnv, policyErr
}

var (
	policyOnce sync.Once
	policyEnv  *celgo.Env
	policyErr  error
)

// Expression is one compiled policy expression.
type Expression struct {
	// Source is the expression's text.
	Source string
	prog   celgo.Program
}

// CompilePolicyExpression compiles expr in PolicyEnv; want, when not nil,
// is the type its result must have (bool for conditions and validations,
// string for messages; dyn accepts any). The error is worded as
// kube-apiserver's compilation errors. The program has kube-apiserver's
// per-call cost limit.
func CompilePolicyExpression(expr string, want *types.Type) (*Expression, error) {
	env, err := PolicyEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %v", iss.Err())
	}
	if want != nil && want != types.DynType && !ast.OutputType().IsExactType(want) && ast.OutputType() != types.DynType {
		return nil, fmt.Errorf("compilation failed: must evaluate to %s but got %s", want, ast.OutputType())
	}
	prog, err := env.Program(ast, programOptions(PerCallLimit)...)
	if err != nil {
		return nil, fmt.Errorf("compilation failed: %v", err)
	}
	return &Expression{Source: expr, prog: prog}, nil
}

// Eval evaluates the expression on the activation vars (from PolicyEnv's
// variable names to values built with JSONValue, or ref.Vals). A panic
// of the evaluation is an error.
func (e *Expression) Eval(vars map[string]any) (out ref.Val, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	v, _, err := e.prog.Eval(vars)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// JSONValue converts a JSON value (as encoding/json decodes it, with
// integers as int64) to a CEL value, objects as maps.
func JSONValue(x any) ref.Val { return jsonVal(x) }

// Variables builds the value of the variables variable: names in order,
// each set to its value or to the error that evaluating it gave, so that
// an expression that reads a variable whose evaluation failed fails with
// that error, and one that does not read it is not affected.
func Variables(names []string, vals []ref.Val) ref.Val {
	m := make(map[ref.Val]ref.Val, len(names))
	for i, n := range names {
		m[types.String(n)] = vals[i]
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m)
}

// Mutations.
//
// The expressions of a MutatingAdmissionPolicy's mutations also know the
// types JSONPatch (op, path, from: strings; value: any), which a JSONPatch
// mutation returns a list of, and Object with its nested types
// (Object.metadata, Object.spec.template ...), which an ApplyConfiguration
// mutation builds its apply configuration with. Their fields are not
// checked against the kind's schema (every field is dyn), and their values
// are maps.

// mutationProvider resolves JSONPatch and the Object types.
type mutationProvider struct {
	types.Provider
}

var jsonPatchFields = map[string]*types.Type{"op": types.StringType, "path": types.StringType, "from": types.StringType, "value": types.DynType}

func isObjectType(name string) bool { return name == "Object" || strings.HasPrefix(name, "Object.") }

func (p *mutationProvider) FindStructType(name string) (*types.Type, bool) {
	if name == "JSONPatch" || isObjectType(name) {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *mutationProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == "JSONPatch" {
		return []string{"op", "path", "from", "value"}, true
	}
	if isObjectType(name) {
		return nil, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p *mutationProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if name == "JSONPatch" {
		t, ok := jsonPatchFields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	if isObjectType(name) {
		return &types.FieldType{Type: types.DynType}, true
	}
	return p.Provider.FindStructFieldType(name, field)
}

func (p *mutationProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if name == "JSONPatch" || isObjectType(name) {
		m := make(map[ref.Val]ref.Val, len(fields))
		for k, v := range fields {
			m[types.String(k)] = v
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, m)
	}
	return p.Provider.NewValue(name, fields)
}

// MutationEnv returns the environment of mutation expressions: PolicyEnv
// with the JSONPatch and Object types. It is built once and shared.
func MutationEnv() (*celgo.Env, error) {
	mutationOnce.Do(func() {
		env, err := PolicyEnv()
		if err != nil {
			mutationErr = err
			return
		}
		reg, err := types.NewRegistry()
		if err != nil {
			mutationErr = err
			return
		}
		mutationEnv, mutationErr = env.Extend(celgo.CustomTypeProvider(&mutationProvider{Provider: reg}))
	})
	return mutationEnv, mutationErr
}

var (
	mutationOnce sync.Once
	mutationEnv  *celgo.Env
	mutationErr  error
)

// CompileMutation compiles a mutation's expression in MutationEnv: a
// JSONPatch mutation (jsonPatch) must give a list of JSONPatch, an
// ApplyConfiguration one an Object.
func CompileMutation(expr string, jsonPatch bool) (*Expression, error) {
	env, err := MutationEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %v", iss.Err())
	}
	want := types.NewObjectType("Object")
	if jsonPatch {
		want = types.NewListType(types.NewObjectType("JSONPatch"))
	}
	if t := ast.OutputType(); t != types.DynType && !t.IsExactType(want) {
		return nil, fmt.Errorf("compilation failed: must evaluate to %s but got %s", want, t)
	}
	prog, err := env.Program(ast, programOptions(PerCallLimit)...)
	if err != nil {
		return nil, fmt.Errorf("compilation failed: %v", err)
	}
	return &Expression{Source: expr, prog: prog}, nil
}

// Native converts a CEL value to its JSON form (maps, lists, strings,
// int64, float64, bools, nil); an error for values JSON cannot hold.
func Native(v ref.Val) (any, error) {
	switch t := v.(type) {
	case nil:
		return nil, errors.New("no value")
	case types.Null:
		return nil, nil
	case types.String:
		return string(t), nil
	case types.Int:
		return int64(t), nil
	case types.Uint:
		return int64(t), nil
	case types.Double:
		return float64(t), nil
	case types.Bool:
		return bool(t), nil
	case *types.Err:
		return nil, t
	case traits.Mapper:
		out := map[string]any{}
		it := t.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key of type %s", k.Type().TypeName())
			}
			x, err := Native(t.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = x
		}
		return out, nil
	case traits.Lister:
		var out []any
		it := t.Iterator()
		for it.HasNext() == types.True {
			x, err := Native(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	if s, ok := v.Value().(fmt.Stringer); ok {
		return s.String(), nil
	}
	return nil, fmt.Errorf("value of type %s", v.Type().TypeName())
}
