package cel

import (
	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The authorizer library of admission policy expressions: the variable
// authorizer checks what the request's user (or, through
// serviceAccount(namespace, name), a service account) may do, as
// kube-apiserver's authorizer library:
//
//	authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').name('d').check('update').allowed()
//	authorizer.path('/healthz').check('get').reason()
//	authorizer.requestResource.check('delete').errored()
//
// check asks the server's authorizer (AuthzFunc); a Decision answers
// allowed(), reason(), errored() and error().

// authzCheckCost is the runtime cost of one authorizer check: high, as
// in kube-apiserver, where an expression may make two checks within its
// per-call budget and a policy 28 within its own.
const authzCheckCost = 350_000

// The CEL types of the authorizer library.
var (
	AuthorizerType    = types.NewOpaqueType("kubernetes.authorization.Authorizer")
	PathCheckType     = types.NewOpaqueType("kubernetes.authorization.PathCheck")
	GroupCheckType    = types.NewOpaqueType("kubernetes.authorization.GroupCheck")
	ResourceCheckType = types.NewOpaqueType("kubernetes.authorization.ResourceCheck")
	DecisionType      = types.NewOpaqueType("kubernetes.authorization.Decision")
)

// AuthzCheck is one question to the authorizer: may the user (the
// request's, or the service account ServiceAccount names as
// "namespace/name") do Verb on the resource or on Path.
type AuthzCheck struct {
	ServiceAccount string
	Path           string // a non-resource check when set
	Group          string
	Resource       string
	Subresource    string
	Namespace      string
	Name           string
	Verb           string
}

// AuthzDecision is the authorizer's answer to an AuthzCheck.
type AuthzDecision struct {
	Allowed bool
	Reason  string
	Err     error
}

// AuthzFunc answers AuthzChecks: the server's authorizer for the user of
// one request.
type AuthzFunc func(AuthzCheck) AuthzDecision

// authz is the value of the authorizer types: the function asked and the
// check built so far.
type authz struct {
	ask   AuthzFunc
	check AuthzCheck
}

// AuthorizerVars are the values of the variables authorizer and
// authorizer.requestResource for a request whose checks ask answers, and
// whose own resource is req (its Verb unset).
func AuthorizerVars(ask AuthzFunc, req AuthzCheck) map[string]any {
	return map[string]any{
		"authorizer":                 authzVal(AuthorizerType, authz{ask: ask}),
		"authorizer.requestResource": authzVal(ResourceCheckType, authz{ask: ask, check: req}),
	}
}

func authzVal(t *types.Type, a authz) ref.Val {
	return opaque[authz]{v: a, t: t, equal: func(x, y authz) bool { return x.check == y.check }}
}

func decisionVal(d AuthzDecision) ref.Val {
	return opaque[AuthzDecision]{v: d, t: DecisionType, equal: func(x, y AuthzDecision) bool { return x == y }}
}

// authzStep is a member function setting one field of the check.
func authzStep(name string, from, to *types.Type, set func(*AuthzCheck, string)) celgo.EnvOption {
	return celgo.Function(name, member(from.TypeName()+"_"+name, ts(from, types.StringType), to,
		binary(func(a authz, s string) ref.Val {
			set(&a.check, s)
			return authzVal(to, a)
		})))
}

// AuthorizerLibrary declares the authorizer library, its variables and
// functions, for the expressions of other environments (webhooks'
// matchConditions).
func AuthorizerLibrary() []celgo.EnvOption {
	return append(authorizerVars(), authorizerLib()...)
}

// authorizerVars declares the variables of the authorizer library.
func authorizerVars() []celgo.EnvOption {
	return []celgo.EnvOption{
		celgo.Variable("authorizer", AuthorizerType),
		celgo.Variable("authorizer.requestResource", ResourceCheckType),
	}
}

// authorizerLib declares the functions of the authorizer library.
func authorizerLib() []celgo.EnvOption {
	check := func(a authz, verb string) ref.Val {
		a.check.Verb = verb
		return decisionVal(a.ask(a.check))
	}
	return []celgo.EnvOption{
		celgo.Function("serviceAccount", member("authorizer_serviceaccount", ts(AuthorizerType, types.StringType, types.StringType), AuthorizerType,
			celgo.FunctionBinding(func(args ...ref.Val) ref.Val {
				a, ok := goVal[authz](args[0])
				ns, ok1 := args[1].Value().(string)
				name, ok2 := args[2].Value().(string)
				if !ok || !ok1 || !ok2 {
					return types.NewErr("no such overload")
				}
				a.check.ServiceAccount = ns + "/" + name
				return authzVal(AuthorizerType, a)
			}))),
		authzStep("path", AuthorizerType, PathCheckType, func(c *AuthzCheck, s string) { c.Path = s }),
		authzStep("group", AuthorizerType, GroupCheckType, func(c *AuthzCheck, s string) { c.Group = s }),
		authzStep("resource", GroupCheckType, ResourceCheckType, func(c *AuthzCheck, s string) { c.Resource = s }),
		authzStep("subresource", ResourceCheckType, ResourceCheckType, func(c *AuthzCheck, s string) { c.Subresource = s }),
		authzStep("namespace", ResourceCheckType, ResourceCheckType, func(c *AuthzCheck, s string) { c.Namespace = s }),
		authzStep("name", ResourceCheckType, ResourceCheckType, func(c *AuthzCheck, s string) { c.Name = s }),
		celgo.Function("check",
			member("pathcheck_check", ts(PathCheckType, types.StringType), DecisionType, binary(check)),
			member("resourcecheck_check", ts(ResourceCheckType, types.StringType), DecisionType, binary(check))),
		celgo.Function("allowed", member("decision_allowed", ts(DecisionType), types.BoolType,
			unary(func(d AuthzDecision) ref.Val { return types.Bool(d.Allowed) }))),
		celgo.Function("reason", member("decision_reason", ts(DecisionType), types.StringType,
			unary(func(d AuthzDecision) ref.Val { return types.String(d.Reason) }))),
		celgo.Function("errored", member("decision_errored", ts(DecisionType), types.BoolType,
			unary(func(d AuthzDecision) ref.Val { return types.Bool(d.Err != nil) }))),
		celgo.Function("error", member("decision_error", ts(DecisionType), types.StringType,
			unary(func(d AuthzDecision) ref.Val {
				if d.Err == nil {
					return types.String("")
				}
				return types.String(d.Err.Error())
			}))),
	}
}
