package apiserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/golden"
)

// send serves one request with a JSON body (of contentType when given).
func send(t *testing.T, srv *Server, method, path, body string, contentType ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if len(contentType) > 0 {
		req.Header.Set("Content-Type", contentType[0])
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

// TestEvictionBudgets checks the eviction's reading of PodDisruptionBudgets
// (computed from their spec and the pods they select, as kapi runs no
// disruption controller) on a server that serves them: the cases of the
// eviction captures and the budget forms (minAvailable as a number or a
// percentage, maxUnavailable, unhealthy pods, two budgets).
func TestEvictionBudgets(t *testing.T) {
	cases := []struct {
		name   string
		budget string // the spec of the budget selecting app=web ("" for none)
		second bool   // a second budget selects the pods too
		ready  int    // Running and Ready pods of app=web (the one evicted among them)
		code   int
		msg    string
	}{
		{name: "no budget", ready: 1, code: http.StatusCreated},
		{name: "minAvailable 0", budget: `"minAvailable":0`, ready: 1, code: http.StatusCreated},
		{name: "minAvailable 1 of 1", budget: `"minAvailable":1`, ready: 1, code: http.StatusTooManyRequests,
			msg: "The disruption budget web needs 1 healthy pods and has 1 currently"},
		{name: "minAvailable 1 of 2", budget: `"minAvailable":1`, ready: 2, code: http.StatusCreated},
		{name: "minAvailable 50% of 2", budget: `"minAvailable":"50%"`, ready: 2, code: http.StatusCreated},
		{name: "minAvailable 100% of 2", budget: `"minAvailable":"100%"`, ready: 2, code: http.StatusTooManyRequests,
			msg: "The disruption budget web needs 2 healthy pods and has 2 currently"},
		{name: "maxUnavailable 0", budget: `"maxUnavailable":0`, ready: 2, code: http.StatusTooManyRequests,
			msg: "The disruption budget web needs 2 healthy pods and has 2 currently"},
		{name: "maxUnavailable 1", budget: `"maxUnavailable":1`, ready: 2, code: http.StatusCreated},
		{name: "two budgets", budget: `"minAvailable":0`, second: true, ready: 1, code: http.StatusInternalServerError,
			msg: "This pod has more than one PodDisruptionBudget"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A registry of its own (each holds its service IPs), with
			// PodDisruptionBudgets if the built-in one lacks them.
			reg := registry.Builtin()
			if reg.Get("policy", "v1", "poddisruptionbudgets") == nil {
				pdbs := registry.Typed[policyv1.PodDisruptionBudget](&registry.Resource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets",
					Singular: "poddisruptionbudget", Kind: "PodDisruptionBudget", ListKind: "PodDisruptionBudgetList", Namespaced: true})
				if err := reg.Add(pdbs); err != nil {
					t.Fatal(err)
				}
			}
			srv, err := New(Config{Registry: reg, DisableServiceAccountController: true, DisableRootCAPublisher: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			if rec := send(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ns"}}`); rec.Code != http.StatusCreated {
				t.Fatal(rec.Body)
			}
			// No controller manager makes it; the pods run as it.
			if rec := send(t, srv, "POST", "/api/v1/namespaces/ns/serviceaccounts", `{"metadata":{"name":"default"}}`); rec.Code != http.StatusCreated {
				t.Fatal(rec.Body)
			}
			budgets := []string{}
			if c.budget != "" {
				budgets = append(budgets, `{"metadata":{"name":"web"},"spec":{`+c.budget+`,"selector":{"matchLabels":{"app":"web"}}}}`)
			}
			if c.second {
				budgets = append(budgets, `{"metadata":{"name":"other"},"spec":{"minAvailable":0,"selector":{}}}`)
			}
			for _, b := range budgets {
				if rec := send(t, srv, "POST", "/apis/policy/v1/namespaces/ns/poddisruptionbudgets", b); rec.Code != http.StatusCreated {
					t.Fatal(rec.Body)
				}
			}
			for i := range c.ready {
				name := []string{"p0", "p1", "p2"}[i]
				body := `{"metadata":{"name":"` + name + `","labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"x"}]}}`
				if rec := send(t, srv, "POST", "/api/v1/namespaces/ns/pods", body); rec.Code != http.StatusCreated {
					t.Fatal(rec.Body)
				}
				status := `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`
				if rec := send(t, srv, "PATCH", "/api/v1/namespaces/ns/pods/"+name+"/status", status, "application/merge-patch+json"); rec.Code != http.StatusOK {
					t.Fatal(rec.Body)
				}
			}
			rec := send(t, srv, "POST", "/api/v1/namespaces/ns/pods/p0/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p0"}}`)
			if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.msg) {
				t.Fatalf("eviction: %d %s, want %d %q", rec.Code, rec.Body, c.code, c.msg)
			}
			gone := send(t, srv, "GET", "/api/v1/namespaces/ns/pods/p0", "").Code == http.StatusNotFound
			if gone != (c.code == http.StatusCreated) {
				t.Errorf("pod gone: %v after a %d eviction", gone, c.code)
			}
			if c.code == http.StatusTooManyRequests && !strings.Contains(rec.Body.String(), `"reason":"DisruptionBudget"`) {
				t.Errorf("refusal without its cause: %s", rec.Body)
			}
		})
	}
}

// denyAll is an Authorizer that denies everything, with a reason, but
// the creation of access reviews (the requests that ask it).
type denyAll struct{}

func (denyAll) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if a.ResourceRequest && a.APIGroup == "authorization.k8s.io" && a.Verb == "create" {
		return DecisionAllow, "", nil
	}
	return DecisionDeny, "nobody may", nil
}
func (denyAll) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return nil, nil, true, nil
}

// TestReviewsUseTheAuthorizer checks the seam: the access reviews answer
// what the server's Authorizer decides (AlwaysAllow by default).
func TestReviewsUseTheAuthorizer(t *testing.T) {
	for _, c := range []struct {
		authz Authorizer
		want  string
		rules string
	}{
		{nil, `"status":{"allowed":true}`, `"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}],"incomplete":false`},
		{denyAll{}, `"status":{"allowed":false,"denied":true,"reason":"nobody may"}`, `"resourceRules":[],"nonResourceRules":[],"incomplete":true`},
	} {
		srv, err := New(Config{Authorizer: c.authz, SkipSystemNamespaces: true, DisableServiceAccountController: true, DisableRootCAPublisher: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "/apis/authorization.k8s.io/v1/subjectaccessreviews"} {
			rec := send(t, srv, "POST", path, `{"spec":{"user":"jane","resourceAttributes":{"verb":"get","resource":"pods"}}}`)
			if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), c.want) {
				t.Errorf("%T %s: %d %s", c.authz, path, rec.Code, rec.Body)
			}
		}
		rec := send(t, srv, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{"namespace":"x"}}`)
		if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), c.rules) {
			t.Errorf("%T rules: %d %s", c.authz, rec.Code, rec.Body)
		}
		srv.Close()
	}
}

// TestAuthenticateToken checks the verifier of service account tokens
// against tokens made to fail each check: signature, issuer, audience,
// expiry, the service account's and the bound pod's existence and uid.
func TestAuthenticateToken(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC)
	srv, err := New(Config{ServiceAccountKey: key, Now: func() time.Time { return now }, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx := context.Background()
	if rec := send(t, srv, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"robot"}}`); rec.Code != http.StatusCreated {
		t.Fatal(rec.Body)
	}
	sa, err := srv.storeOf(srv.reg.Get("", "v1", "serviceaccounts")).Get(ctx, "default", "robot", storage.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(k *rsa.PrivateKey, edit func(*ServiceAccountClaims)) string {
		c := ServiceAccountClaims{
			RegisteredClaims: jwt.RegisteredClaims{Issuer: DefaultServiceAccountIssuer, Subject: "system:serviceaccount:default:robot",
				Audience: jwt.ClaimStrings{"aud-a"}, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now),
				NotBefore: jwt.NewNumericDate(now), ID: "jti-1"},
			Kubernetes: KubernetesClaims{Namespace: "default", ServiceAccount: ObjectRef{Name: "robot", UID: string(sa.GetUID())}},
		}
		if edit != nil {
			edit(&c)
		}
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name      string
		token     string
		audiences []string
		err       string
	}{
		{"good", sign(key, nil), []string{"aud-a"}, ""},
		{"not a JWT", "abc", nil, "invalid bearer token"},
		{"other key", sign(other, nil), []string{"aud-a"}, "invalid bearer token"},
		{"other issuer", sign(key, func(c *ServiceAccountClaims) { c.Issuer = "https://elsewhere" }), []string{"aud-a"}, "invalid bearer token"},
		{"wrong audience", sign(key, nil), nil, `[invalid bearer token, token audiences ["aud-a"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]]`},
		{"expired", sign(key, func(c *ServiceAccountClaims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Second)) }), []string{"aud-a"}, "service account token has expired"},
		{"no service account", sign(key, func(c *ServiceAccountClaims) { c.Kubernetes.ServiceAccount.Name = "gone" }), []string{"aud-a"}, `serviceaccount "gone" not found`},
		{"recreated service account", sign(key, func(c *ServiceAccountClaims) { c.Kubernetes.ServiceAccount.UID = "old" }), []string{"aud-a"}, "does not match claim"},
		{"no pod", sign(key, func(c *ServiceAccountClaims) { c.Kubernetes.Pod = &ObjectRef{Name: "p", UID: "u"} }), []string{"aud-a"}, `pod "p" not found`},
	}
	for _, c := range cases {
		u, auds, err := srv.AuthenticateToken(ctx, c.token, c.audiences)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && (u.Name != "system:serviceaccount:default:robot" || len(auds) != 1 || u.Extra["authentication.kubernetes.io/credential-id"][0] != "JTI=jti-1"):
			t.Errorf("%s: %+v %v", c.name, u, auds)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}

// FuzzParseServiceAccountToken feeds the token parser arbitrary text: it
// never panics, and what it accepts is signed by the key.
func FuzzParseServiceAccountToken(f *testing.F) {
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		f.Fatal(err)
	}
	good, err := jwt.NewWithClaims(jwt.SigningMethodRS256, ServiceAccountClaims{RegisteredClaims: jwt.RegisteredClaims{Issuer: "iss"}}).SignedString(key)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{good, "", "a.b.c", "eyJhbGciOiJub25lIn0.eyJpc3MiOiJpc3MifQ.", good + "x", strings.Replace(good, ".", "..", 1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		claims, err := ParseServiceAccountToken(token, &key.PublicKey, "iss")
		if err == nil && (claims == nil || claims.Issuer != "iss") {
			t.Fatalf("accepted %q as %+v", token, claims)
		}
		if err == nil && token != good {
			// Only the signed token (or one the JWS encoding makes equal) verifies.
			if _, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return &key.PublicKey, nil }, jwt.WithValidMethods([]string{"RS256"})); err != nil {
				t.Fatalf("accepted %q, which does not verify: %v", token, err)
			}
		}
	})
}

// TestTokenRequestJWT checks the token's encoding as kube-apiserver's: RS256
// with a kid and no typ, the claims by name.
func TestTokenRequestJWT(t *testing.T) {
	srv, err := New(Config{DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	waitFor(t, 10*time.Second, "the default ServiceAccount", func() bool {
		return send(t, srv, "GET", "/api/v1/namespaces/default/serviceaccounts/default", "").Code == http.StatusOK
	}, srv)
	rec := send(t, srv, "POST", "/api/v1/namespaces/default/serviceaccounts/default/token", `{"spec":{}}`, "application/json")
	if rec.Code != http.StatusCreated {
		t.Fatal(rec.Body)
	}
	var tr struct {
		Status struct{ Token string } `json:"status"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &tr); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tr.Status.Token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tr.Status.Token)
	}
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if !regexp.MustCompile(`^\{"alg":"RS256","kid":"[A-Za-z0-9_-]{43}"\}$`).Match(header) {
		t.Errorf("header %s", header)
	}
	keys := regexp.MustCompile(`^\{"aud":\[[^]]*\],"exp":\d+,"iat":\d+,"iss":"[^"]*","jti":"[^"]*","kubernetes.io":\{.*\},"nbf":\d+,"sub":"[^"]*"\}$`)
	if !keys.Match(payload) {
		t.Errorf("payload %s", payload)
	}
}

// TestOneRequestUser checks that the server knows one user: the one a
// SelfSubjectReview answers is the requester a CertificateSigningRequest
// records (kube-apiserver fills spec.username from the request's user).
func TestOneRequestUser(t *testing.T) {
	srv, err := New(Config{SkipSystemNamespaces: true, DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	x, err := golden.LoadKind("create-certificates.k8s.io-certificatesigningrequests")
	if err != nil {
		t.Fatal(err)
	}
	rec := send(t, srv, x.Method, x.Path, string(x.RequestBody), "application/json")
	if rec.Code != http.StatusCreated {
		t.Fatal(rec.Body)
	}
	var csr struct {
		Spec struct {
			Username, UID string
			Groups        []string
		} `json:"spec"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &csr); err != nil {
		t.Fatal(err)
	}
	if csr.Spec.Username != AdminUser.Name || csr.Spec.UID != AdminUser.UID || !slices.Equal(csr.Spec.Groups, AdminUser.Groups) {
		t.Errorf("CSR requester %+v, SelfSubjectReview's user %+v", csr.Spec, AdminUser)
	}
}
