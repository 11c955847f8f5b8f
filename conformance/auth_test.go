package conformance

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"io"
	"math/big"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// Authentication and impersonation (issue 17): each method of
// kube-apiserver's authenticator, the 401 of credentials that do not
// authenticate, anonymous requests, TokenReview and SelfSubjectReview, and
// impersonation allowed and refused. In-process each case runs on a fresh
// server configured as the real one of shared/realk8s (a static token file
// whose admin is in system:masters, service account tokens, a client CA,
// anonymous requests, RBAC); against a real server, on it.

// authAdminToken is the static token of the in-process servers' admin, as
// realk8s' token file lists its own.
const authAdminToken = "kapi-conformance-admin-token"

// authEdits configure an in-process server as realk8s' kube-apiserver is.
func authEdits(extra ...func(*apiserver.Authentication)) func(*apiserver.Config) {
	return func(c *apiserver.Config) {
		a := &apiserver.Authentication{Anonymous: true,
			Tokens: map[string]apiserver.User{authAdminToken: {Name: "admin", UID: "admin-uid", Groups: []string{"system:masters"}}}}
		for _, f := range extra {
			f(a)
		}
		c.Authentication = a
		c.AuthorizationMode = apiserver.AuthorizationRBAC
	}
}

// authEnv is the target, or in-process a fresh server with authentication
// whose env sends the admin's token.
func authEnv(t *testing.T, extra ...func(*apiserver.Authentication)) *env {
	t.Helper()
	e := withDefaults(t, authEdits(extra...))
	if e.inProcess {
		e.token = authAdminToken
	}
	return e
}

// capture is an answer of kube-apiserver v1.37.2 kept in testdata/auth
// (capture.sh made them).
type capture struct {
	code   int
	header http.Header
	body   []byte
}

func loadCapture(t testing.TB, name string) capture {
	t.Helper()
	raw, err := os.ReadFile("testdata/auth/" + name + ".http")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("capture %s: %v", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return capture{code: resp.StatusCode, header: resp.Header, body: body}
}

// checkCapture compares got with a capture word for word: the code, the
// Content-Type and X-Content-Type-Options headers and the body's bytes
// (after the old/new pairs of repl are applied to the capture).
func checkCapture(t testing.TB, got *response, name string, repl ...string) {
	t.Helper()
	c := loadCapture(t, name)
	if got.Code != c.code {
		t.Errorf("capture %s: HTTP %d, want %d:\n%s", name, got.Code, c.code, got)
		return
	}
	for _, h := range []string{"Content-Type", "X-Content-Type-Options"} {
		if g, w := got.Header.Get(h), c.header.Get(h); g != w {
			t.Errorf("capture %s: %s %q, want %q", name, h, g, w)
		}
	}
	want := string(c.body)
	for i := 0; i+1 < len(repl); i += 2 {
		want = strings.ReplaceAll(want, repl[i], repl[i+1])
	}
	if string(got.Body) != want {
		t.Errorf("capture %s: body\n got: %s\nwant: %s", name, got.Body, want)
	}
}

// whoami is the userInfo of a SelfSubjectReview made by e with header
// (name/value pairs, a name may repeat), as kubectl auth whoami asks.
func whoami(t *testing.T, e *env, header ...string) obj {
	t.Helper()
	r := e.sendWith(t, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		obj{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}, header...)
	ssr := expect(t, r, http.StatusCreated)
	if str(ssr, "kind") != "SelfSubjectReview" || str(ssr, "metadata", "creationTimestamp") == "" {
		t.Errorf("SelfSubjectReview answered %s", compact(ssr))
	}
	info, _ := field(ssr, "status", "userInfo")
	m, _ := info.(map[string]any)
	return m
}

// sendWith is do with headers added (not set): a name given twice is sent
// twice.
func (e *env) sendWith(t testing.TB, method, path string, body any, header ...string) *response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.within(30*time.Second))
	defer cancel()
	req, err := e.newRequest(ctx, method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	r, err := e.exchange(req, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkUser compares a userInfo with want, the credential-id extra
// compared by its prefix (a token's id differs from run to run).
func checkUser(t *testing.T, what string, got obj, want obj) {
	t.Helper()
	got = clone(got)
	if ex, ok := got["extra"].(map[string]any); ok {
		if ids := anyStrings(ex["authentication.kubernetes.io/credential-id"]); len(ids) == 1 && strings.HasPrefix(ids[0], "JTI=") {
			ex["authentication.kubernetes.io/credential-id"] = []any{"JTI=<id>"}
		}
	}
	if !reflect.DeepEqual(got, clone(want)) {
		t.Errorf("%s: user %s, want %s", what, compact(got), compact(want))
	}
}

// serviceAccountToken creates service account name in ns and returns a
// token of it (spec is the TokenRequest's).
func serviceAccountToken(t *testing.T, e *env, ns, name string, spec obj) (token, uid string) {
	t.Helper()
	sa := "/api/v1/namespaces/" + ns + "/serviceaccounts"
	if r := e.post(t, sa, obj{"metadata": obj{"name": name}}); r.Code != http.StatusConflict {
		expect(t, r, http.StatusCreated)
	}
	tr := expect(t, e.post(t, sa+"/"+name+"/token", obj{"spec": spec}), http.StatusCreated)
	return str(tr, "status", "token"), str(tr, "metadata", "uid")
}

// requireRBAC skips the rest of a case on an in-process server that does
// not enforce RBAC yet: token, a service account's with no rights, may
// then read kube-system's secrets.
func requireRBAC(t *testing.T, e *env, token string) {
	t.Helper()
	if !e.inProcess {
		return
	}
	if r := e.as(token).get(t, "/api/v1/namespaces/kube-system/secrets"); r.Code != http.StatusForbidden {
		t.Skipf("the in-process server does not enforce RBAC (HTTP %d for a service account without rights): issue 17's RBAC part", r.Code)
	}
}

// TestAuthUnauthorized checks that a bearer token nobody has gets
// kube-apiserver's 401 Status, on API and non-API paths alike, although
// the server lets anonymous requests in.
func TestAuthUnauthorized(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	bad := e.as("not-a-token")
	checkCapture(t, bad.get(t, "/api/v1/namespaces"), "unauthorized")
	checkCapture(t, bad.get(t, "/healthz"), "unauthorized")
	// A JWT of no issuer the server knows is no better.
	checkCapture(t, e.as("eyJhbGciOiJSUzI1NiJ9.e30.c2ln").get(t, "/api/v1/namespaces"), "unauthorized")
	// Other schemes, and an empty bearer token, are no credentials: the
	// request is anonymous.
	for _, auth := range []string{"Basic YTpi", "Bearer ", "Bearer  " + e.token} {
		if r := e.as("").get(t, "/healthz", "Authorization", auth); r.Code != http.StatusOK {
			t.Errorf("Authorization %q: want the anonymous answer 200, got:\n%s", auth, r)
		}
	}
	// The scheme in any case, the token up to a space.
	if u := whoami(t, e.as(""), "Authorization", "bearer "+e.token+" trailing"); u["username"] != "admin" {
		t.Errorf("lower-case scheme: user %s", compact(u))
	}
}

// TestAuthAnonymous checks requests without credentials: in as
// system:anonymous (in system:unauthenticated) when the server allows
// anonymous requests, 401 when it does not.
func TestAuthAnonymous(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	anon := e.as("")
	if r := anon.get(t, "/healthz"); r.Code != http.StatusOK || string(r.Body) != "ok" {
		t.Errorf("anonymous /healthz:\n%s", r)
	}
	t.Run("refused", func(t *testing.T) {
		if !target.inProcess {
			t.Skip("the real server allows anonymous requests (--anonymous-auth)")
		}
		off := withDefaults(t, authEdits(func(a *apiserver.Authentication) { a.Anonymous = false })).as("")
		checkCapture(t, off.get(t, "/api/v1/namespaces"), "unauthorized")
		checkCapture(t, off.get(t, "/healthz"), "unauthorized")
	})
	t.Run("identity", func(t *testing.T) {
		token, _ := serviceAccountToken(t, e, e.namespace(t), "nobody", obj{})
		requireRBAC(t, e, token)
		checkStatus(t, anon.get(t, "/api/v1/namespaces"), http.StatusForbidden, "Forbidden",
			`namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope`)
	})
}

// TestAuthStaticToken checks a static token's user (kubectl auth whoami)
// and its TokenReview: good for the API's audience only.
func TestAuthStaticToken(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	admin := obj{"username": "admin", "uid": "admin-uid", "groups": []any{"system:masters", "system:authenticated"}}
	checkUser(t, "whoami", whoami(t, e), admin)

	review := func(audiences ...string) obj {
		spec := obj{"token": e.token}
		if audiences != nil {
			spec["audiences"] = audiences
		}
		r := expect(t, e.post(t, "/apis/authentication.k8s.io/v1/tokenreviews", obj{"spec": spec}), http.StatusCreated)
		st, _ := r["status"].(map[string]any)
		return st
	}
	api := apiserver.DefaultServiceAccountIssuer
	want := obj{"authenticated": true, "user": admin, "audiences": []any{api}}
	if st := review(); !reflect.DeepEqual(st, clone(want)) {
		t.Errorf("TokenReview: status %s, want %s", compact(st), compact(want))
	}
	if st := review("other", api); !reflect.DeepEqual(st, clone(want)) {
		t.Errorf("TokenReview for [other, the API]: status %s, want %s", compact(st), compact(want))
	}
	refused := obj{"user": obj{}, "error": "invalid bearer token"}
	if st := review("other"); !reflect.DeepEqual(st, clone(refused)) {
		t.Errorf("TokenReview for another audience: status %s, want %s", compact(st), compact(refused))
	}
}

// TestAuthServiceAccountToken checks requests made with service account
// tokens: the service account's user with its groups and the token's id,
// the pod a token is bound to in its extras, and 401 once that pod is
// gone.
func TestAuthServiceAccountToken(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	ns := e.namespace(t)
	token, uid := serviceAccountToken(t, e, ns, "robot", obj{})
	user := obj{"username": "system:serviceaccount:" + ns + ":robot", "uid": uid,
		"groups": []any{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		"extra":  obj{"authentication.kubernetes.io/credential-id": []any{"JTI=<id>"}}}
	checkUser(t, "whoami", whoami(t, e.as(token)), user)
	// The token's id is its jti claim.
	if id := anyStrings(mustField(whoami(t, e.as(token)), "extra", "authentication.kubernetes.io/credential-id")); len(id) != 1 || id[0] != "JTI="+jwtClaims(t, token)["jti"].(string) {
		t.Errorf("credential-id %q, want the token's jti", id)
	}
	tr := expect(t, e.post(t, "/apis/authentication.k8s.io/v1/tokenreviews", obj{"spec": obj{"token": token}}), http.StatusCreated)
	checkUser(t, "TokenReview", mustField(tr, "status", "user").(map[string]any), user)

	// Bound to a pod of the service account.
	p := pod("holder", "", nil)
	p["spec"].(map[string]any)["serviceAccountName"] = "robot"
	p = expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/pods", p), http.StatusCreated)
	bound, _ := serviceAccountToken(t, e, ns, "robot", obj{"boundObjectRef": obj{"apiVersion": "v1", "kind": "Pod", "name": "holder"}})
	boundUser := clone(user)
	boundUser["extra"] = obj{"authentication.kubernetes.io/credential-id": []any{"JTI=<id>"},
		"authentication.kubernetes.io/pod-name": []any{"holder"}, "authentication.kubernetes.io/pod-uid": []any{str(p, "metadata", "uid")}}
	checkUser(t, "whoami with a pod-bound token", whoami(t, e.as(bound)), boundUser)
	// Of another service account: refused.
	serviceAccountToken(t, e, ns, "other", obj{"expirationSeconds": 600})
	checkStatus(t, e.post(t, "/api/v1/namespaces/"+ns+"/serviceaccounts/other/token", obj{"spec": obj{"boundObjectRef": obj{"apiVersion": "v1", "kind": "Pod", "name": "holder"}}}),
		http.StatusBadRequest, "BadRequest", `cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.`)

	expect(t, e.del(t, "/api/v1/namespaces/"+ns+"/pods/holder", obj{"gracePeriodSeconds": 0}), http.StatusOK)
	// A real server caches token authentications (10 s).
	poll(t, e.within(30*time.Second), "the pod-bound token to be refused", func() bool {
		return e.as(bound).get(t, "/version").Code == http.StatusUnauthorized
	})
	checkCapture(t, e.as(bound).get(t, "/api/v1/namespaces"), "unauthorized")
}

// authCA is a CA that signs client certificates: in-process one of the
// case's own, which the server trusts; against a real server the one of
// -client-ca-cert and -client-ca-key (the case is skipped without them).
type authCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newAuthCA(t *testing.T) authCA {
	t.Helper()
	if !target.inProcess {
		if *clientCACert == "" || *clientCAKey == "" {
			t.Skip("client certificates need the real server's client CA: -client-ca-cert and -client-ca-key (shared/realk8s: /tmp/kapi-realk8s/pki/ca.crt and ca.key)")
		}
		return loadAuthCA(t, *clientCACert, *clientCAKey)
	}
	return selfSignedCA(t)
}

// selfSignedCA is a CA of the case's own.
func selfSignedCA(t *testing.T) authCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kapi-conformance-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return authCA{cert: cert, key: key}
}

func loadAuthCA(t *testing.T, certFile, keyFile string) authCA {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("client CA: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		t.Fatalf("client CA key %T cannot sign", pair.PrivateKey)
	}
	return authCA{cert: cert, key: signer}
}

// issue signs a client certificate for subject with the extended key
// usages.
func (ca authCA) issue(t *testing.T, subject pkix.Name, usages ...x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subject, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestAuthClientCertificate checks client certificates: one the client CA
// signed for client authentication authenticates its common name in its
// organizations (with its SHA-256 as credential id), whatever token comes
// with it; one signed for another usage, or by another CA, gets 401 unless
// a token authenticates; one without a common name is no credential.
func TestAuthClientCertificate(t *testing.T) {
	t.Parallel()
	ca := newAuthCA(t)
	e := target
	if e.inProcess {
		pool := x509.NewCertPool()
		pool.AddCert(ca.cert)
		var stop func()
		var err error
		e, stop, err = newInProcessEnvTLS(&tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12},
			authEdits(func(a *apiserver.Authentication) { a.ClientCA = pool }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		e.token = authAdminToken
	}
	alice := ca.issue(t, pkix.Name{CommonName: "alice", Organization: []string{"dev", "ops"}}, x509.ExtKeyUsageClientAuth)
	sum := sha256.Sum256(alice.Certificate[0])
	aliceUser := obj{"username": "alice", "groups": []any{"dev", "ops", "system:authenticated"},
		"extra": obj{"authentication.kubernetes.io/credential-id": []any{"X509SHA256=" + hex.EncodeToString(sum[:])}}}
	withAlice := e.withClientCertificate(t, alice)
	checkUser(t, "whoami", whoami(t, withAlice), aliceUser)
	// A certificate that authenticates wins over a bad token.
	checkUser(t, "whoami with a bad token", whoami(t, withAlice, "Authorization", "Bearer not-a-token"), aliceUser)

	server := e.withClientCertificate(t, ca.issue(t, pkix.Name{CommonName: "mallory"}, x509.ExtKeyUsageServerAuth))
	checkCapture(t, server.get(t, "/api/v1/namespaces"), "unauthorized")
	other := selfSignedCA(t) // which the server does not trust
	foreign := e.withClientCertificate(t, other.issue(t, pkix.Name{CommonName: "mallory"}, x509.ExtKeyUsageClientAuth))
	checkCapture(t, foreign.get(t, "/api/v1/namespaces"), "unauthorized")
	// A token that authenticates wins over a certificate that does not.
	checkUser(t, "whoami with a foreign certificate and the admin's token", whoami(t, foreign, "Authorization", "Bearer "+e.token),
		obj{"username": "admin", "uid": "admin-uid", "groups": []any{"system:masters", "system:authenticated"}})
	// Without a common name: anonymous.
	noName := e.withClientCertificate(t, ca.issue(t, pkix.Name{Organization: []string{"dev"}}, x509.ExtKeyUsageClientAuth))
	if r := noName.get(t, "/healthz"); r.Code != http.StatusOK {
		t.Errorf("a certificate without a common name: want the anonymous answer, got:\n%s", r)
	}
}

// TestAuthImpersonation checks the Impersonate-* headers: the admin acts
// as the user, uid, groups and extras asked (system:authenticated added),
// a service account's and a node's groups are filled in, a uid, group or
// extra without a user is a 400, and a user without the right to
// impersonate gets kube-apiserver v1.37's 403.
func TestAuthImpersonation(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	// Constrained impersonation refuses system:masters; the legacy verb,
	// which the admin has, does not. A user in system:unauthenticated is
	// not made authenticated. As the legacy mode worked, the server tries
	// it first for the admin from now on (a real server, ever after).
	checkUser(t, "impersonating alice in system:masters", whoami(t, e, "Impersonate-User", "alice", "Impersonate-Group", "system:unauthenticated", "Impersonate-Group", "system:masters"),
		obj{"username": "alice", "groups": []any{"system:unauthenticated", "system:masters"}})
	checkUser(t, "impersonating alice", whoami(t, e, "Impersonate-User", "alice", "Impersonate-Group", "dev", "Impersonate-Uid", "u1",
		"Impersonate-Extra-Foo%2Fbar", "x", "Impersonate-Extra-Foo%2Fbar", "y"),
		obj{"username": "alice", "uid": "u1", "groups": []any{"dev", "system:authenticated"}, "extra": obj{"foo/bar": []any{"x", "y"}}})
	ns := e.namespace(t)
	checkUser(t, "impersonating a service account", whoami(t, e, "Impersonate-User", "system:serviceaccount:"+ns+":robot"),
		obj{"username": "system:serviceaccount:" + ns + ":robot", "groups": []any{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}})
	// Legacy impersonation knows no nodes (the constrained modes put them
	// in system:nodes).
	checkUser(t, "impersonating a node", whoami(t, e, "Impersonate-User", "system:node:n1"),
		obj{"username": "system:node:n1", "groups": []any{"system:authenticated"}})

	ssr := obj{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
	checkCapture(t, e.post(t, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr, "Impersonate-Group", "dev"), "impersonate-no-user")
	checkStatus(t, e.post(t, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr, "Impersonate-Uid", "u1"), http.StatusBadRequest, "BadRequest",
		`requested &user.DefaultInfo{Name:"", UID:"u1", Groups:[]string(nil), Extra:map[string][]string(nil)} without impersonating a user name`)
	checkStatus(t, e.post(t, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr, "Impersonate-Extra-A", "v"), http.StatusBadRequest, "BadRequest",
		`requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string(nil), Extra:map[string][]string{"a":[]string{"v"}}} without impersonating a user name`)

	t.Run("refused", func(t *testing.T) {
		token, _ := serviceAccountToken(t, e, ns, "nobody", obj{})
		requireRBAC(t, e, token)
		checkCapture(t, e.as(token).post(t, "/apis/authentication.k8s.io/v1/selfsubjectreviews", ssr, "Impersonate-User", "alice"),
			"impersonate-refused", "authn-i17", ns)
	})
}

// TestAuthImpersonationGranted checks impersonation by a service account
// that RBAC grants some of it: constrained impersonation
// (impersonate:user-info on a user, impersonate:arbitrary-node on a node,
// impersonate-on:MODE:create on selfsubjectreviews) and the legacy verb
// (impersonate on a user of the core group); what is not granted gets the
// 403 of the first check that failed.
func TestAuthImpersonationGranted(t *testing.T) {
	t.Parallel()
	e := authEnv(t)
	ns := e.namespace(t)
	token, _ := serviceAccountToken(t, e, ns, "impersonator", obj{})
	requireRBAC(t, e, token)
	name := "kapi-conformance-impersonate-" + randomSuffix()
	rbac := "/apis/rbac.authorization.k8s.io/v1/"
	expect(t, e.post(t, rbac+"clusterroles", obj{"metadata": obj{"name": name}, "rules": []any{
		obj{"apiGroups": []any{"authentication.k8s.io"}, "resources": []any{"users"}, "resourceNames": []any{"alice"}, "verbs": []any{"impersonate:user-info"}},
		obj{"apiGroups": []any{"authentication.k8s.io"}, "resources": []any{"nodes"}, "resourceNames": []any{"n1"}, "verbs": []any{"impersonate:arbitrary-node"}},
		obj{"apiGroups": []any{"authentication.k8s.io"}, "resources": []any{"selfsubjectreviews"}, "verbs": []any{"impersonate-on:user-info:create", "impersonate-on:arbitrary-node:create"}},
		obj{"apiGroups": []any{""}, "resources": []any{"users"}, "resourceNames": []any{"carol"}, "verbs": []any{"impersonate"}},
	}}), http.StatusCreated)
	t.Cleanup(func() { e.del(t, rbac+"clusterroles/"+name, nil) })
	expect(t, e.post(t, rbac+"clusterrolebindings", obj{"metadata": obj{"name": name},
		"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
		"subjects": []any{obj{"kind": "ServiceAccount", "name": "impersonator", "namespace": ns}}}), http.StatusCreated)
	t.Cleanup(func() { e.del(t, rbac+"clusterrolebindings/"+name, nil) })

	sa := e.as(token)
	ssrs := "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	ssr := obj{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
	// A real server's authorizer sees the binding a moment later.
	poll(t, e.within(30*time.Second), "the impersonation grant to apply", func() bool {
		return sa.post(t, ssrs, ssr, "Impersonate-User", "alice").Code == http.StatusCreated
	})
	checkUser(t, "impersonating alice", whoami(t, sa, "Impersonate-User", "alice"), obj{"username": "alice", "groups": []any{"system:authenticated"}})
	checkUser(t, "impersonating node n1", whoami(t, sa, "Impersonate-User", "system:node:n1"),
		obj{"username": "system:node:n1", "groups": []any{"system:nodes", "system:authenticated"}})
	user := "system:serviceaccount:" + ns + ":impersonator"
	checkStatus(t, sa.post(t, ssrs, ssr, "Impersonate-User", "bob"), http.StatusForbidden, "Forbidden",
		`users.authentication.k8s.io "bob" is forbidden: User "`+user+`" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope`)
	checkStatus(t, sa.post(t, ssrs, ssr, "Impersonate-User", "alice", "Impersonate-Group", "dev"), http.StatusForbidden, "Forbidden",
		`groups.authentication.k8s.io "dev" is forbidden: User "`+user+`" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope`)
	checkStatus(t, sa.post(t, ssrs, ssr, "Impersonate-User", "system:node:n2"), http.StatusForbidden, "Forbidden",
		`nodes.authentication.k8s.io "n2" is forbidden: User "`+user+`" cannot impersonate:arbitrary-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope`)
	checkStatus(t, sa.get(t, "/api/v1/namespaces", "Impersonate-User", "alice"), http.StatusForbidden, "Forbidden",
		`namespaces is forbidden: User "`+user+`" cannot impersonate-on:user-info:list resource "namespaces" in API group "" at the cluster scope`)
	// Constrained impersonation checks extra keys: DOMAIN/PATH.
	checkStatus(t, sa.post(t, ssrs, ssr, "Impersonate-User", "alice", "Impersonate-Extra-Bad_domain%2fx", "v"), http.StatusForbidden, "Forbidden",
		`userextras.authentication.k8s.io is forbidden: User "`+user+`" cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: `+
			`impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "bad_domain": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', `+
			`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)
	checkStatus(t, sa.post(t, ssrs, ssr, "Impersonate-User", "alice", "Impersonate-Extra-Bad_domain%2fx%20y", "v"), http.StatusForbidden, "Forbidden",
		`impersonating an invalid key in extra is not allowed: [extra.key: Invalid value: "bad_domain": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', `+
			`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), `+
			`extra.key: Invalid value: "x y": Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')]`)
	checkStatus(t, sa.post(t, ssrs, ssr, "Impersonate-User", "alice", "Impersonate-Extra-Nodomain", "v"), http.StatusForbidden, "Forbidden",
		`impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "nodomain": must be a domain-prefixed path (such as "acme.io/foo")`)
	// carol by the legacy verb (constrained impersonation refused her first).
	checkUser(t, "impersonating carol", whoami(t, sa, "Impersonate-User", "carol"), obj{"username": "carol", "groups": []any{"system:authenticated"}})
}

// TestAuthAdmissionUser checks that admission sees the request's user, the
// impersonated one here: a webhook's AdmissionReview userInfo and a
// ValidatingAdmissionPolicy's request.userInfo.
func TestAuthAdmissionUser(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	as := []string{"Impersonate-User", "mallory", "Impersonate-Uid", "u-1", "Impersonate-Group", "system:masters", "Impersonate-Extra-Example.com%2fteam", "a"}
	w := startWebhook(t, allow)
	e.createWebhookConfig(t, "validating", w.hook("allow", ns, "/validate"))
	e.waitWebhooks(t, ns, nil)
	before := len(w.requests())
	expect(t, e.post(t, cmPath(ns), configMap("by-mallory", nil, nil), as...), http.StatusCreated)
	got := w.requests()
	if len(got) != before+1 {
		t.Fatalf("webhook called %d times for a create, want 1", len(got)-before)
	}
	want := obj{"username": "mallory", "uid": "u-1", "groups": []any{"system:masters", "system:authenticated"}, "extra": obj{"example.com/team": []any{"a"}}}
	if u, _ := got[len(got)-1]["userInfo"].(map[string]any); !reflect.DeepEqual(u, clone(want)) {
		t.Errorf("AdmissionReview userInfo %s, want %s", compact(u), compact(want))
	}

	p := "vap-user-" + randomSuffix()
	e.createPolicyObject(t, "validatingadmissionpolicies", obj{"metadata": obj{"name": p}, "spec": obj{
		"failurePolicy": "Fail", "matchConstraints": vapRule("configmaps", ns),
		"validations": []any{obj{"expression": "request.userInfo.username != 'mallory'",
			"messageExpression": "'no ' + request.userInfo.username + ' (' + request.userInfo.uid + ', ' + request.userInfo.extra['example.com/team'][0] + ')'"}},
	}})
	e.createPolicyObject(t, "validatingadmissionpolicybindings", obj{"metadata": obj{"name": p}, "spec": obj{"policyName": p, "validationActions": []any{"Deny"},
		"matchResources": obj{"namespaceSelector": nsSelector(ns)}}})
	e.eventually(t, func() (bool, string) {
		r := e.post(t, cmPath(ns)+"?dryRun=All", configMap("probe", nil, nil), as...)
		return r.Code == http.StatusUnprocessableEntity, "the policy did not take effect:\n" + r.String()
	})
	checkStatus(t, e.post(t, cmPath(ns), configMap("by-mallory-2", nil, nil), as...), http.StatusUnprocessableEntity, "Invalid",
		`configmaps "by-mallory-2" is forbidden: ValidatingAdmissionPolicy '`+p+`' with binding '`+p+`' denied request: no mallory (u-1, a)`)
	expect(t, e.post(t, cmPath(ns), configMap("by-admin", nil, nil)), http.StatusCreated)
}
