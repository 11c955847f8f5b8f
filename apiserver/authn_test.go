package apiserver

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestParseTokenFile(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     map[string]User
		err      string
	}{
		{"three columns", "t1,alice,u1\n", map[string]User{"t1": {Name: "alice", UID: "u1"}}, ""},
		{"groups", "t1,alice,u1,\"dev,ops\"\nt2,bob,u2,dev,ignored\n",
			map[string]User{"t1": {Name: "alice", UID: "u1", Groups: []string{"dev", "ops"}}, "t2": {Name: "bob", UID: "u2", Groups: []string{"dev"}}}, ""},
		// As kube-apiserver: an empty fourth column is one empty group, an
		// empty token is skipped, the last of a duplicate token wins.
		{"empty groups", "t1,alice,u1,\n", map[string]User{"t1": {Name: "alice", UID: "u1", Groups: []string{""}}}, ""},
		{"empty token", ",alice,u1\nt2,bob,u2\n", map[string]User{"t2": {Name: "bob", UID: "u2"}}, ""},
		{"duplicate", "t1,alice,u1\nt1,bob,u2\n", map[string]User{"t1": {Name: "bob", UID: "u2"}}, ""},
		{"empty", "", map[string]User{}, ""},
		{"two columns", "t1,alice,u1\nt2,bob\n", nil, "token file: line 2: must have at least 3 columns (token, user name, user uid), found 2"},
		{"bad quote", "t1,alice,u1\nt2,b\"ob,u2\n", nil, "token file: parse error on line 2, column 5: bare \" in non-quoted-field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTokenFile(strings.NewReader(c.in))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// FuzzParseTokenFile feeds the token file parser arbitrary text: no panic,
// and every user it returns has a non-empty token.
func FuzzParseTokenFile(f *testing.F) {
	for _, s := range []string{"t,u,id\n", "t,u,id,\"a,b\"\n", ",u,id\n", "t,u\n", "\"t\n", "a,b,c\r\nd,e,f,g,h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tokens, err := ParseTokenFile(strings.NewReader(in))
		if err != nil {
			return
		}
		if _, ok := tokens[""]; ok {
			t.Errorf("an empty token in %q", in)
		}
	})
}

// grants is an Authorizer for the tests: system:masters may do
// everything, others what one of the rules allows.
type grants []Attributes

func (g grants) Authorize(_ context.Context, a Attributes) (Decision, string, error) {
	if slices.Contains(a.User.Groups, "system:masters") {
		return DecisionAllow, "", nil
	}
	// Every authenticated user may ask who they are, as the bootstrap
	// policy's system:basic-user grants.
	if a.Verb == "create" && a.APIGroup == "authentication.k8s.io" && a.Resource == "selfsubjectreviews" && slices.Contains(a.User.Groups, "system:authenticated") {
		return DecisionAllow, "", nil
	}
	for _, r := range g {
		if r.User.Name == a.User.Name && r.Verb == a.Verb && r.APIGroup == a.APIGroup && r.Resource == a.Resource &&
			r.Subresource == a.Subresource && (r.Name == "" || r.Name == a.Name) && r.Namespace == a.Namespace {
			return DecisionAllow, "", nil
		}
	}
	return DecisionNoOpinion, "", nil
}

func (grants) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return nil, nil, false, nil
}

const testAdminToken = "admin-token"

// authServer is a server configured by cfg with authentication (anonymous
// requests allowed unless cfg says otherwise) and the static admin token.
func authServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Authentication == nil {
		cfg.Authentication = &Authentication{Anonymous: true}
	}
	if cfg.Authentication.Tokens == nil {
		cfg.Authentication.Tokens = map[string]User{}
	}
	cfg.Authentication.Tokens[testAdminToken] = User{Name: "admin", UID: "admin-uid", Groups: []string{"system:masters"}}
	cfg.DisableServiceAccountController, cfg.DisableRootCAPublisher = true, true
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// authDo serves a request; edit sets its credentials and headers.
func authDo(srv *Server, method, path, body string, edit func(*http.Request)) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if edit != nil {
		edit(req)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

func bearer(token string, header ...string) func(*http.Request) {
	return func(r *http.Request) {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Add(header[i], header[i+1])
		}
	}
}

const ssrBody = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`

// whoamiOf is the user a SelfSubjectReview made with edit answers.
func whoamiOf(t *testing.T, srv *Server, edit func(*http.Request)) User {
	t.Helper()
	rec := authDo(srv, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssrBody, edit)
	if rec.Code != http.StatusCreated {
		t.Fatalf("SelfSubjectReview: %d %s", rec.Code, rec.Body)
	}
	var ssr struct {
		Status struct {
			UserInfo struct {
				Username string
				UID      string
				Groups   []string
				Extra    map[string][]string
			}
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ssr); err != nil {
		t.Fatal(err)
	}
	u := ssr.Status.UserInfo
	return User{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

const unauthorizedBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

func checkUnauthorized(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusUnauthorized || rec.Body.String() != unauthorizedBody || rec.Header().Get("X-Content-Type-Options") != "" {
		t.Errorf("%s: %d %v %s, want kube-apiserver's 401", what, rec.Code, rec.Header(), rec.Body)
	}
}

// Without Config.Authentication every request is AdminUser's, credentials
// or not; impersonation still applies.
func TestAuthenticationOff(t *testing.T) {
	srv := newTestServer(t)
	for _, token := range []string{"", "anything"} {
		if u := whoamiOf(t, srv, bearer(token)); !reflect.DeepEqual(u, AdminUser) {
			t.Errorf("token %q: user %+v, want AdminUser", token, u)
		}
	}
	if u := whoamiOf(t, srv, bearer("", "Impersonate-User", "alice")); u.Name != "alice" {
		t.Errorf("impersonating alice: user %+v", u)
	}
}

func TestAuthenticateTokens(t *testing.T) {
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	srv := authServer(t, Config{Now: func() time.Time { return now }, Authentication: &Authentication{Anonymous: true, ServiceAccountKeys: []crypto.PublicKey{saKey.Public()}}})
	admin := User{Name: "admin", UID: "admin-uid", Groups: []string{"system:masters", "system:authenticated"}}
	if u := whoamiOf(t, srv, bearer(testAdminToken)); !reflect.DeepEqual(u, admin) {
		t.Errorf("static token: %+v", u)
	}
	if u := whoamiOf(t, srv, bearer("")); !reflect.DeepEqual(u, User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}) {
		t.Errorf("anonymous: %+v", u)
	}
	checkUnauthorized(t, "bad token", authDo(srv, "GET", "/healthz", "", bearer("nope")))

	// A token signed by a key of ServiceAccountKeys, as another server
	// sharing the issuer would sign it.
	if rec := authDo(srv, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"robot"}}`, bearer(testAdminToken)); rec.Code != http.StatusCreated {
		t.Fatal(rec.Body)
	}
	var sa struct{ Metadata struct{ UID string } }
	_ = json.Unmarshal(authDo(srv, "GET", "/api/v1/namespaces/default/serviceaccounts/robot", "", bearer(testAdminToken)).Body.Bytes(), &sa)
	sign := func(key crypto.Signer, method jwt.SigningMethod, uid string) string {
		claims := ServiceAccountClaims{RegisteredClaims: jwt.RegisteredClaims{Issuer: DefaultServiceAccountIssuer, ID: "jti-1",
			Audience: jwt.ClaimStrings{DefaultServiceAccountIssuer}, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))},
			Kubernetes: KubernetesClaims{Namespace: "default", ServiceAccount: ObjectRef{Name: "robot", UID: uid}}}
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := User{Name: "system:serviceaccount:default:robot", UID: sa.Metadata.UID,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"},
		Extra:  map[string][]string{"authentication.kubernetes.io/credential-id": {"JTI=jti-1"}}}
	if u := whoamiOf(t, srv, bearer(sign(saKey, jwt.SigningMethodES256, sa.Metadata.UID))); !reflect.DeepEqual(u, want) {
		t.Errorf("service account token: %+v, want %+v", u, want)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	checkUnauthorized(t, "a key the server does not know", authDo(srv, "GET", "/version", "", bearer(sign(other, jwt.SigningMethodES256, sa.Metadata.UID))))
	checkUnauthorized(t, "a service account since recreated", authDo(srv, "GET", "/version", "", bearer(sign(saKey, jwt.SigningMethodES256, "old-uid"))))

	// TokenReview: the same authenticator, static tokens for the API
	// audience only.
	review := func(token string, audiences ...string) map[string]any {
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"token": token, "audiences": audiences}})
		rec := authDo(srv, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", string(body), bearer(testAdminToken))
		return decodeMap(t, rec)["status"].(map[string]any)
	}
	if st := review(testAdminToken); st["authenticated"] != true || !reflect.DeepEqual(st["audiences"], []any{DefaultServiceAccountIssuer}) {
		t.Errorf("TokenReview of the static token: %v", st)
	}
	if st := review(testAdminToken, "other"); st["authenticated"] != nil || st["error"] != "invalid bearer token" {
		t.Errorf("TokenReview of the static token for another audience: %v", st)
	}
}

// testCA makes a CA and issues client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t testing.TB) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert, key}
}

func (ca testCA) issue(t testing.TB, subject pkix.Name, notAfter time.Time, usages ...x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: subject, ExtKeyUsage: usages,
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

func withCert(c *x509.Certificate, token string) func(*http.Request) {
	return func(r *http.Request) {
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
		bearer(token)(r)
	}
}

func TestAuthenticateCertificates(t *testing.T) {
	ca := newTestCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	// The server's clock, not the wall clock, says whether a certificate
	// has expired.
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	srv := authServer(t, Config{Now: func() time.Time { return now }, Authentication: &Authentication{ClientCA: pool, Anonymous: true}})
	end := now.Add(time.Hour)
	alice := ca.issue(t, pkix.Name{CommonName: "alice", Organization: []string{"dev"}}, end, x509.ExtKeyUsageClientAuth)
	u := whoamiOf(t, srv, withCert(alice, "nope"))
	if u.Name != "alice" || !slices.Equal(u.Groups, []string{"dev", "system:authenticated"}) || !strings.HasPrefix(u.Extra["authentication.kubernetes.io/credential-id"][0], "X509SHA256=") {
		t.Errorf("alice's certificate: %+v", u)
	}
	if !time.Now().Before(end) { // the wall clock is past the certificate's end
		if u := whoamiOf(t, srv, withCert(alice, "")); u.Name != "alice" {
			t.Errorf("a certificate good by the server's clock: %+v", u)
		}
	}
	checkUnauthorized(t, "expired", authDo(srv, "GET", "/version", "", withCert(ca.issue(t, pkix.Name{CommonName: "alice"}, now.Add(-time.Minute), x509.ExtKeyUsageClientAuth), "")))
	checkUnauthorized(t, "server usage", authDo(srv, "GET", "/version", "", withCert(ca.issue(t, pkix.Name{CommonName: "alice"}, end, x509.ExtKeyUsageServerAuth), "")))
	foreign := newTestCA(t).issue(t, pkix.Name{CommonName: "alice"}, end, x509.ExtKeyUsageClientAuth)
	checkUnauthorized(t, "another CA", authDo(srv, "GET", "/version", "", withCert(foreign, "")))
	if u := whoamiOf(t, srv, withCert(foreign, testAdminToken)); u.Name != "admin" {
		t.Errorf("another CA's certificate with the admin's token: %+v", u)
	}
	if u := whoamiOf(t, srv, withCert(ca.issue(t, pkix.Name{Organization: []string{"dev"}}, end, x509.ExtKeyUsageClientAuth), "")); u.Name != "system:anonymous" {
		t.Errorf("a certificate without a common name: %+v", u)
	}
	// Without a client CA, certificates are not looked at.
	if u := whoamiOf(t, authServer(t, Config{}), withCert(alice, "")); u.Name != "system:anonymous" {
		t.Errorf("no client CA: %+v", u)
	}
	// Anonymous requests refused.
	off := authServer(t, Config{Now: func() time.Time { return now }, Authentication: &Authentication{ClientCA: pool, Anonymous: false}})
	checkUnauthorized(t, "anonymous off", authDo(off, "GET", "/healthz", "", nil))
	if u := whoamiOf(t, off, withCert(alice, "")); u.Name != "alice" {
		t.Errorf("alice's certificate, anonymous off: %+v", u)
	}
}

// TestImpersonationAuthorized checks which authorization checks let a
// user impersonate, with the grants of conformance's
// TestAuthImpersonationGranted (whose messages are kube-apiserver's).
func TestImpersonationAuthorized(t *testing.T) {
	sa := User{Name: "system:serviceaccount:ns:impersonator"}
	auth := "authentication.k8s.io"
	g := grants{
		{User: sa, Verb: "impersonate:user-info", APIGroup: auth, Resource: "users", Name: "alice"},
		{User: sa, Verb: "impersonate:arbitrary-node", APIGroup: auth, Resource: "nodes", Name: "n1"},
		{User: sa, Verb: "impersonate-on:user-info:create", APIGroup: auth, Resource: "selfsubjectreviews"},
		{User: sa, Verb: "impersonate-on:arbitrary-node:create", APIGroup: auth, Resource: "selfsubjectreviews"},
		{User: sa, Verb: "impersonate", Resource: "users", Name: "carol"},
		{User: sa, Verb: "impersonate:user-info", APIGroup: auth, Resource: "uids", Name: "u1"},
		{User: sa, Verb: "impersonate:user-info", APIGroup: auth, Resource: "userextras", Subresource: "example.com/team", Name: "a"},
	}
	srv := authServer(t, Config{Authorizer: g, Authentication: &Authentication{Tokens: map[string]User{"sa-token": sa}}})
	as := func(header ...string) func(*http.Request) { return bearer("sa-token", header...) }
	refused := func(what, msg string, header ...string) {
		t.Helper()
		rec := authDo(srv, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssrBody, as(header...))
		if rec.Code != http.StatusForbidden || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %s, want 403", what, rec.Code, rec.Body)
			return
		}
		if m := decodeMap(t, rec)["message"]; m != msg {
			t.Errorf("%s: message\n %s\nwant\n %s", what, m, msg)
		}
	}
	user := `User "system:serviceaccount:ns:impersonator"`
	refused("bob", `users.authentication.k8s.io "bob" is forbidden: `+user+` cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope`,
		"Impersonate-User", "bob")
	refused("alice in dev", `groups.authentication.k8s.io "dev" is forbidden: `+user+` cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope`,
		"Impersonate-User", "alice", "Impersonate-Group", "dev")
	refused("alice as u2", `uids.authentication.k8s.io "u2" is forbidden: `+user+` cannot impersonate:user-info resource "uids" in API group "authentication.k8s.io" at the cluster scope`,
		"Impersonate-User", "alice", "Impersonate-Uid", "u2")
	refused("node n2", `nodes.authentication.k8s.io "n2" is forbidden: `+user+` cannot impersonate:arbitrary-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope`,
		"Impersonate-User", "system:node:n2")
	refused("a service account", `selfsubjectreviews.authentication.k8s.io is forbidden: `+user+` cannot impersonate-on:serviceaccount:create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope`,
		"Impersonate-User", "system:serviceaccount:ns:robot")
	refused("alice in system:masters", `groups.authentication.k8s.io "system:masters" is forbidden: `+user+` cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed`,
		"Impersonate-User", "alice", "Impersonate-Group", "system:masters")
	refused("a bad extra key", `userextras.authentication.k8s.io is forbidden: `+user+` cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "team": must be a domain-prefixed path (such as "acme.io/foo")`,
		"Impersonate-User", "alice", "Impersonate-Extra-Team", "a")
	refused("a bad extra domain", `userextras.authentication.k8s.io is forbidden: `+user+` cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: `+
		`impersonating an invalid key in extra is not allowed: [extra.key: Invalid value: "bad_domain": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', `+
		`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), `+
		`extra.key: Invalid value: "x y": Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')]`,
		"Impersonate-User", "alice", "Impersonate-Extra-Bad_domain%2fx%20y", "v")
	// The Status of a refused request (captured from v1.37.2).
	for path, want := range map[string]string{
		"/api/v1/namespaces": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces is forbidden: ` +
			`User \"system:serviceaccount:ns:impersonator\" cannot impersonate-on:user-info:list resource \"namespaces\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"namespaces"},"code":403}`,
		"/healthz": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: ` +
			`User \"system:serviceaccount:ns:impersonator\" cannot impersonate-on:user-info:get path \"/healthz\"","reason":"Forbidden","details":{},"code":403}`,
		"/api/v1/namespaces/ns/pods/x/log": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"x\" is forbidden: ` +
			`User \"system:serviceaccount:ns:impersonator\" cannot impersonate-on:user-info:get resource \"pods/log\" in API group \"\" in the namespace \"ns\"","reason":"Forbidden","details":{"name":"x","kind":"pods"},"code":403}`,
		"/api/v1/namespaces/ns": `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"ns\" is forbidden: ` +
			`User \"system:serviceaccount:ns:impersonator\" cannot impersonate-on:user-info:get resource \"namespaces\" in API group \"\" in the namespace \"ns\"","reason":"Forbidden","details":{"name":"ns","kind":"namespaces"},"code":403}`,
	} {
		if rec := authDo(srv, "GET", path, "", as("Impersonate-User", "alice")); rec.Code != http.StatusForbidden || rec.Body.String() != want+"\n" {
			t.Errorf("GET %s as alice: %d %s\nwant %s", path, rec.Code, rec.Body, want)
		}
	}

	for _, c := range []struct {
		header []string
		want   User
	}{
		{[]string{"Impersonate-User", "alice"}, User{Name: "alice", Groups: []string{"system:authenticated"}}},
		{[]string{"Impersonate-User", "alice", "Impersonate-Uid", "u1", "Impersonate-Extra-Example.com%2fteam", "a"},
			User{Name: "alice", UID: "u1", Groups: []string{"system:authenticated"}, Extra: map[string][]string{"example.com/team": {"a"}}}},
		{[]string{"Impersonate-User", "system:node:n1"}, User{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}},
		// carol by the legacy verb: constrained impersonation refused her.
		{[]string{"Impersonate-User", "carol"}, User{Name: "carol", Groups: []string{"system:authenticated"}}},
		// The legacy mode, now tried first for the service account, refuses
		// alice; user-info lets her in.
		{[]string{"Impersonate-User", "alice"}, User{Name: "alice", Groups: []string{"system:authenticated"}}},
	} {
		if u := whoamiOf(t, srv, as(c.header...)); !reflect.DeepEqual(u, c.want) {
			t.Errorf("%q: user %+v, want %+v", c.header, u, c.want)
		}
	}
	// Once the legacy mode worked for the admin, a node is impersonated
	// without system:nodes, as kube-apiserver does.
	admin := func(header ...string) func(*http.Request) { return bearer(testAdminToken, header...) }
	if u := whoamiOf(t, srv, admin("Impersonate-User", "system:node:n1")); !slices.Equal(u.Groups, []string{"system:nodes", "system:authenticated"}) {
		t.Errorf("node before the legacy mode: %+v", u)
	}
	whoamiOf(t, srv, admin("Impersonate-User", "alice", "Impersonate-Group", "system:masters"))
	if u := whoamiOf(t, srv, admin("Impersonate-User", "system:node:n1")); !slices.Equal(u.Groups, []string{"system:authenticated"}) {
		t.Errorf("node after the legacy mode: %+v", u)
	}
}

func TestImpersonationHeaders(t *testing.T) {
	srv := newTestServer(t)
	rec := authDo(srv, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssrBody, bearer("", "Impersonate-Group", "dev", "Impersonate-Group", "ops"))
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"requested \u0026user.DefaultInfo{Name:\"\", UID:\"\", Groups:[]string{\"dev\", \"ops\"}, Extra:map[string][]string(nil)} without impersonating a user name","reason":"BadRequest","code":400}` + "\n"
	if rec.Code != http.StatusBadRequest || rec.Body.String() != want || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("groups without a user: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	// The request's user reaches admission: a CSR's requester.
	csr := `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest","metadata":{"name":"c"},"spec":{"signerName":"example.com/s","request":"` + csrPEM(t) + `","usages":["client auth"]}}`
	rec = authDo(srv, "POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", csr, bearer("", "Impersonate-User", "alice", "Impersonate-Group", "dev", "Impersonate-Uid", "u1"))
	if rec.Code != http.StatusCreated {
		t.Fatalf("CSR: %d %s", rec.Code, rec.Body)
	}
	spec := decodeMap(t, rec)["spec"].(map[string]any)
	if spec["username"] != "alice" || spec["uid"] != "u1" || !reflect.DeepEqual(spec["groups"], []any{"dev", "system:authenticated"}) {
		t.Errorf("CSR requester %v", spec)
	}
}

// csrPEM is a certificate request, base64 as JSON carries it.
func csrPEM(t *testing.T) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "c"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// FuzzAuthenticate feeds the authenticators arbitrary bearer tokens (JWTs
// among the seeds), certificate DER and impersonation headers: no panic,
// and what authenticates has a name.
func FuzzAuthenticate(f *testing.F) {
	ca := newTestCA(f)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	srv, err := New(Config{Now: func() time.Time { return now }, DisableServiceAccountController: true, DisableRootCAPublisher: true,
		Authentication: &Authentication{ClientCA: pool, Anonymous: true, Tokens: map[string]User{testAdminToken: {Name: "admin"}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	ctx := context.Background()
	key, _, err := srv.signingKey()
	if err != nil {
		f.Fatal(err)
	}
	jwtSeed, err := jwt.NewWithClaims(jwt.SigningMethodRS256, ServiceAccountClaims{RegisteredClaims: jwt.RegisteredClaims{Issuer: DefaultServiceAccountIssuer,
		Audience: jwt.ClaimStrings{DefaultServiceAccountIssuer}, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))},
		Kubernetes: KubernetesClaims{Namespace: "default", ServiceAccount: ObjectRef{Name: "default", UID: "u"}, Pod: &ObjectRef{Name: "p", UID: "u"}}}).SignedString(key)
	if err != nil {
		f.Fatal(err)
	}
	certSeed := ca.issue(f, pkix.Name{CommonName: "alice", Organization: []string{"dev"}}, now.Add(time.Hour), x509.ExtKeyUsageClientAuth).Raw
	f.Add(testAdminToken, []byte(nil), "Impersonate-User", "alice")
	f.Add(jwtSeed, certSeed, "Impersonate-Extra-A%2fb", "v")
	f.Add("eyJhbGciOiJub25lIn0.e30.", []byte{0x30, 0x03, 0x02, 0x01, 0x01}, "Impersonate-Group", "g")
	f.Add("Bearer x", certSeed[:len(certSeed)/2], "Impersonate-User", "system:node:n1")
	f.Fuzz(func(t *testing.T, token string, der []byte, header, value string) {
		if u, _, err := srv.authenticateBearer(ctx, token, nil); err == nil && u.Name == "" {
			t.Errorf("token %q authenticates no name", token)
		}
		var chain []*x509.Certificate
		if cert, err := x509.ParseCertificate(der); err == nil {
			chain = []*x509.Certificate{cert}
			if u, ok, _ := srv.authenticateCertificate(chain); ok && u.Name == "" {
				t.Error("a certificate authenticates no name")
			}
		}
		req := httptest.NewRequest("GET", "/api/v1/namespaces", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if chain != nil {
			req.TLS = &tls.ConnectionState{PeerCertificates: chain}
		}
		if http.CanonicalHeaderKey(header) != "" {
			req.Header.Add(header, value)
		}
		rec := httptest.NewRecorder()
		if r, ok := srv.authenticateRequest(rec, req); ok && srv.requestUser(r).Name == "" {
			t.Errorf("a request authenticated as no one (token %q, %s: %q)", token, header, value)
		}
	})
}

// A service account on a node may impersonate that node with the
// associated-node mode: the authorizer sees the names of its extras and
// "*" as the node, whatever node it is on.
func TestImpersonationAssociatedNode(t *testing.T) {
	agent := User{Name: "system:serviceaccount:ns:agent", Extra: map[string][]string{
		"authentication.kubernetes.io/node-name": {"n1"}, "authentication.kubernetes.io/pod-name": {"p"}}}
	seen := User{Name: agent.Name, Extra: map[string][]string{
		"authentication.kubernetes.io/associated-node-keys": {"authentication.kubernetes.io/node-name", "authentication.kubernetes.io/pod-name"}}}
	auth := "authentication.k8s.io"
	g := grants{
		{User: seen, Verb: "impersonate-on:associated-node:create", APIGroup: auth, Resource: "selfsubjectreviews"},
		{User: seen, Verb: "impersonate:associated-node", APIGroup: auth, Resource: "nodes", Name: "*"},
	}
	srv := authServer(t, Config{Authorizer: associatedGrants{g}, Authentication: &Authentication{Tokens: map[string]User{"agent": agent}}})
	if u := whoamiOf(t, srv, bearer("agent", "Impersonate-User", "system:node:n1")); !reflect.DeepEqual(u, User{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}) {
		t.Errorf("impersonating its node: %+v", u)
	}
	rec := authDo(srv, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssrBody, bearer("agent", "Impersonate-User", "system:node:n2"))
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `cannot impersonate-on:arbitrary-node:create`) {
		t.Errorf("impersonating another node: %d %s", rec.Code, rec.Body)
	}
}

// associatedGrants matches users by name and extras too.
type associatedGrants struct{ grants }

func (g associatedGrants) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	if a.Verb == "create" && a.Resource == "selfsubjectreviews" && slices.Contains(a.User.Groups, "system:authenticated") {
		return DecisionAllow, "", nil // whoami, as the bootstrap system:basic-user grants it
	}
	for _, r := range g.grants {
		if reflect.DeepEqual(r.User.Extra, a.User.Extra) {
			if d, _, _ := (grants{r}).Authorize(ctx, a); d == DecisionAllow {
				return d, "", nil
			}
		}
	}
	return DecisionNoOpinion, "", nil
}
