package cel

import (
	"fmt"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
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
