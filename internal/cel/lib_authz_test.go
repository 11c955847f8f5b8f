package cel

import (
	"errors"
	"testing"

	"github.com/google/cel-go/common/types"
)

// authzVars are the variables of a policy expression whose checks ask.
func authzVars(ask AuthzFunc) map[string]any {
	vars := AuthorizerVars(ask, AuthzCheck{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "d"})
	for _, v := range PolicyVariables {
		if v != "variables" {
			vars[v] = types.NullValue
		}
	}
	return vars
}

// TestAuthorizerLibrary: the checks built by the library reach the
// authorizer with the fields the expression gave, and its decision is
// answered by allowed, reason, errored and error.
func TestAuthorizerLibrary(t *testing.T) {
	var got []AuthzCheck
	ask := func(c AuthzCheck) AuthzDecision {
		got = append(got, c)
		switch {
		case c.Verb == "fail":
			return AuthzDecision{Err: errors.New("webhook down")}
		case c.ServiceAccount != "":
			return AuthzDecision{Reason: "no rights"}
		}
		return AuthzDecision{Allowed: true, Reason: "admin"}
	}
	cases := []struct {
		expr string
		want any
		seen AuthzCheck
	}{
		{"authorizer.group('').resource('pods').subresource('log').namespace('n').name('p').check('get').allowed()", true,
			AuthzCheck{Resource: "pods", Subresource: "log", Namespace: "n", Name: "p", Verb: "get"}},
		{"authorizer.path('/healthz').check('get').reason()", "admin", AuthzCheck{Path: "/healthz", Verb: "get"}},
		{"authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').check('create').allowed()", false,
			AuthzCheck{ServiceAccount: "ns/sa", Group: "apps", Resource: "deployments", Verb: "create"}},
		{"authorizer.serviceAccount('ns', 'sa').path('/x').check('get').reason()", "no rights", AuthzCheck{ServiceAccount: "ns/sa", Path: "/x", Verb: "get"}},
		{"authorizer.requestResource.check('delete').allowed()", true, AuthzCheck{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "d", Verb: "delete"}},
		{"authorizer.requestResource.subresource('scale').check('update').errored()", false,
			AuthzCheck{Group: "apps", Resource: "deployments", Subresource: "scale", Namespace: "ns", Name: "d", Verb: "update"}},
		{"authorizer.path('/x').check('fail').errored()", true, AuthzCheck{Path: "/x", Verb: "fail"}},
		{"authorizer.path('/x').check('fail').error()", "webhook down", AuthzCheck{Path: "/x", Verb: "fail"}},
		{"authorizer.path('/x').check('get').error()", "", AuthzCheck{Path: "/x", Verb: "get"}},
	}
	for _, tc := range cases {
		pc, err := NewPolicyCompiler(false)
		if err != nil {
			t.Fatal(err)
		}
		e, err := pc.Compile(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got = nil
		out, err := e.Eval(authzVars(ask))
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if out.Value() != tc.want {
			t.Errorf("%s = %v, want %v", tc.expr, out.Value(), tc.want)
		}
		if len(got) != 1 || got[0] != tc.seen {
			t.Errorf("%s asked %+v, want %+v", tc.expr, got, tc.seen)
		}
	}
}

// TestAuthorizerNotInMessages: a messageExpression cannot name the
// authorizer variables, but may call the library's functions on a
// variable's decision.
func TestAuthorizerNotInMessages(t *testing.T) {
	pc, err := NewPolicyCompiler(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddVariable("d", "authorizer.path('/x').check('get')"); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CompileMessage("authorizer.path('/x').check('get').reason()"); err == nil {
		t.Error("a messageExpression using the authorizer compiled")
	}
	if _, err := pc.CompileMessage("variables.d.reason()"); err != nil {
		t.Errorf("a messageExpression using a decision: %v", err)
	}
	if _, err := pc.CompileMessage("1"); err == nil {
		t.Error("a messageExpression giving an int compiled")
	}
}

// FuzzAuthorizer evaluates arbitrary expressions with the authorizer
// (no panic).
func FuzzAuthorizer(f *testing.F) {
	for _, s := range []string{"authorizer.group('').resource('pods').check('get').allowed()", "authorizer.path('').check('').error()",
		"authorizer.requestResource.name('x').check('x') == authorizer.requestResource.check('x')", "authorizer.serviceAccount('', '').path('/').check('get')"} {
		f.Add(s)
	}
	ask := func(c AuthzCheck) AuthzDecision { return AuthzDecision{Allowed: c.Verb == "get", Err: nil} }
	f.Fuzz(func(t *testing.T, expr string) {
		pc, err := NewPolicyCompiler(false)
		if err != nil {
			t.Fatal(err)
		}
		e, err := pc.Compile(expr)
		if err != nil {
			return
		}
		_, _ = e.Eval(authzVars(ask))
	})
}
