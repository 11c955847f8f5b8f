package cel

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Policy expressions.
//
// The expressions of admission policies (matchConditions, variables,
// validations, messageExpressions, auditAnnotations, mutations) are
// compiled by a PolicyCompiler, one per policy: BaseEnv with the variables
// kube-apiserver declares for them, object, oldObject, request, params
// and namespaceObject dynamically typed as in kube-apiserver's admission,
// and variables, an object of the policy's variables. The type checking
// against the matched kinds' schemas is the policy status controller's
// (CheckPolicy). The authorizer library (lib_authz.go) checks what the
// request's user may do through the server's authorizer.

// PolicyVariables are the variables of policy expressions, in
// kube-apiserver's names.
var PolicyVariables = []string{"object", "oldObject", "request", "params", "namespaceObject", "variables"}

// PolicyCompiler compiles the expressions of one policy. variables is an
// object whose fields are the policy's variables, each of the type its
// expression gives, declared in order (AddVariable): an expression reading
// a variable the policy does not declare, or one declared after it, does
// not compile, as in kube-apiserver. Every other variable is dyn. With
// mutation set, the types JSONPatch and Object are known too.
type PolicyCompiler struct {
	env  *celgo.Env
	vars *declType
	// newMsgEnv builds msgEnv, the environment of messageExpressions: env
	// without the authorizer variables, as in kube-apiserver.
	newMsgEnv func() (*celgo.Env, error)
	msgEnv    *celgo.Env
}

// NewPolicyCompiler returns a compiler for one policy's expressions.
func NewPolicyCompiler(mutation bool) (*PolicyCompiler, error) {
	return newPolicyCompiler(map[string]*declType{}, nil, mutation)
}

// newPolicyCompiler builds the environment of policy expressions, with
// the object types objects and the variables of types typed (dyn for
// those it does not name).
func newPolicyCompiler(objects map[string]*declType, typed map[string]*types.Type, mutation bool) (*PolicyCompiler, error) {
	vars := &declType{cel: types.NewObjectType("kubernetes.variables"), fields: map[string]*declField{}}
	objects[vars.cel.TypeName()] = vars
	var opts []celgo.EnvOption
	for _, v := range PolicyVariables {
		t := types.DynType
		if typed[v] != nil {
			t = typed[v]
		}
		if v == "variables" {
			t = vars.cel
		}
		opts = append(opts, celgo.Variable(v, t))
	}
	opts = append(opts, authorizerLib()...)
	env, err := extendBase(objects, mutation, append(slices.Clip(opts), authorizerVars()...)...)
	if err != nil {
		return nil, err
	}
	return &PolicyCompiler{env: env, vars: vars, newMsgEnv: func() (*celgo.Env, error) { return extendBase(objects, mutation, opts...) }}, nil
}

// AddVariable compiles a variable's expression with the variables added
// before it, then declares it (of dyn type when it does not compile).
func (c *PolicyCompiler) AddVariable(name, expr string) (*Expression, error) {
	e, t, err := c.compile(expr)
	if t == nil {
		t = types.DynType
	}
	c.vars.fields[name] = &declField{name: name, typ: &declType{cel: t}}
	return e, err
}

// Compile compiles expr; want, when given, are the types its result may
// have (bool for conditions and validations, string for messages); dyn
// is accepted for any. Errors are worded as kube-apiserver's. The program
// has kube-apiserver's per-call cost limit.
func (c *PolicyCompiler) Compile(expr string, want ...*types.Type) (*Expression, error) {
	e, t, err := c.compile(expr)
	if err != nil || len(want) == 0 || t == types.DynType || slices.ContainsFunc(want, t.IsExactType) {
		return e, err
	}
	if len(want) == 1 {
		return nil, fmt.Errorf("must evaluate to %s but got %s", want[0], t)
	}
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.String()
	}
	return nil, fmt.Errorf("must evaluate to one of [%s] but got %s", strings.Join(names, " "), t)
}

// CompileMessage compiles a validation's messageExpression, which must
// give a string, in the environment of messages: without the variables
// authorizer and authorizer.requestResource.
func (c *PolicyCompiler) CompileMessage(expr string) (*Expression, error) {
	if c.msgEnv == nil {
		env, err := c.newMsgEnv()
		if err != nil {
			return nil, err
		}
		c.msgEnv = env
	}
	e, t, err := c.compileIn(c.msgEnv, expr)
	if err != nil || t == types.DynType || t.IsExactType(types.StringType) {
		return e, err
	}
	return nil, fmt.Errorf("must evaluate to %s but got %s", types.StringType, t)
}

func (c *PolicyCompiler) compile(expr string) (*Expression, *types.Type, error) {
	return c.compileIn(c.env, expr)
}

func (c *PolicyCompiler) compileIn(env *celgo.Env, expr string) (*Expression, *types.Type, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, nil, fmt.Errorf("compilation failed: %s", iss.String())
	}
	prog, err := env.Program(ast, programOptions(PerCallLimit)...)
	if err != nil {
		return nil, nil, fmt.Errorf("compilation failed: %v", err)
	}
	return &Expression{Source: expr, prog: prog}, ast.OutputType(), nil
}

// Expression is one compiled policy expression.
type Expression struct {
	// Source is the expression's text.
	Source string
	prog   celgo.Program
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

// CompileMutation compiles a mutation's expression: a JSONPatch
// mutation (jsonPatch) must give a list of JSONPatch, an
// ApplyConfiguration one an Object. The compiler must have been made for
// mutations.
func (c *PolicyCompiler) CompileMutation(expr string, jsonPatch bool) (*Expression, error) {
	want := types.NewObjectType("Object")
	if jsonPatch {
		want = types.NewListType(types.NewObjectType("JSONPatch"))
	}
	// Unlike other expressions, a mutation of type dyn is refused, as in
	// kube-apiserver.
	e, t, err := c.compile(expr)
	if err != nil || t.IsExactType(want) {
		return e, err
	}
	return nil, fmt.Errorf("must evaluate to %s but got %s", want, t)
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
