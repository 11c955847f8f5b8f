package apiserver

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Authentication (Config.Authentication): who makes a request, found by
// the first of kube-apiserver's methods that recognises its credentials —
// a client certificate, then a bearer token (a static token, then a
// service account token) — or, with none presented, the anonymous user.
// Credentials presented that do not authenticate get 401, anonymous or
// not. The user is kept in the request's context (requestUser reads it),
// then impersonation (authn_impersonate.go) may replace it.

// The user names and groups kube-apiserver's authenticators give.
const (
	anonymousUser           = "system:anonymous"
	groupAuthenticated      = "system:authenticated"
	groupUnauthenticated    = "system:unauthenticated"
	groupServiceAccounts    = "system:serviceaccounts"
	serviceAccountPrefix    = "system:serviceaccount:"
	groupNodes              = "system:nodes"
	nodeUserPrefix          = "system:node:"
	extraCredentialID       = "authentication.kubernetes.io/credential-id"
	extraNodeName           = "authentication.kubernetes.io/node-name"
	extraAssociatedNodeKeys = "authentication.kubernetes.io/associated-node-keys"
)

// ParseTokenFile reads a static token file in kube-apiserver's
// --token-auth-file format: CSV records of at least three columns, token,
// user name, user uid, and optionally a fourth, the user's groups
// separated by commas (quoted when there are several: "g1,g2"). As
// kube-apiserver, a record with an empty token is skipped, a token listed
// twice is the last record's, and a fourth column is split as it is (an
// empty one is one empty group). A record of fewer than three columns and
// malformed CSV are errors naming their line.
func ParseTokenFile(r io.Reader) (map[string]User, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	tokens := map[string]User{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return tokens, nil
		}
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		if len(rec) < 3 {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("token file: line %d: must have at least 3 columns (token, user name, user uid), found %d", line, len(rec))
		}
		if rec[0] == "" {
			continue
		}
		u := User{Name: rec[1], UID: rec[2]}
		if len(rec) >= 4 {
			u.Groups = strings.Split(rec[3], ",")
		}
		tokens[rec[0]] = u
	}
}

type userKey struct{}

// withUser returns ctx carrying u, the user of the request ctx belongs to.
func withUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// contextUser is the user of the request ctx belongs to: the one
// authentication (and impersonation) found, AdminUser for the server's own
// work outside requests and for a server without Authentication.
func contextUser(ctx context.Context) User {
	if u, ok := ctx.Value(userKey{}).(User); ok {
		return u
	}
	return AdminUser
}

// requestUser is the user a request is made by.
func (s *Server) requestUser(r *http.Request) User {
	return contextUser(r.Context())
}

// errUnauthorized is what authenticate returns for credentials that do not
// authenticate: the request gets 401.
var errUnauthorized = errors.New("Unauthorized")

// authenticate finds who makes r with the configured methods, in
// kube-apiserver's order: a client certificate, then a bearer token; the
// first that authenticates wins, and if none does but one failed, r gets
// 401. With no credentials, r is anonymous if allowed, else 401.
func (s *Server) authenticate(r *http.Request) (User, error) {
	a := s.cfg.Authentication
	failed := false
	if a.ClientCA != nil && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		u, ok, err := s.authenticateCertificate(r.TLS.PeerCertificates)
		if ok {
			return u, nil
		}
		failed = failed || err != nil
	}
	if token, ok := bearerToken(r.Header); ok {
		u, _, err := s.authenticateBearer(r.Context(), token, nil)
		if err == nil {
			return u, nil
		}
		failed = true
	}
	if failed || !a.Anonymous {
		return User{}, errUnauthorized
	}
	return User{Name: anonymousUser, Groups: []string{groupUnauthenticated}}, nil
}

// bearerToken is the token of an "Authorization: Bearer TOKEN" header, as
// kube-apiserver reads it: the scheme in any case, the token up to the
// next space; an empty token is no token.
func bearerToken(h http.Header) (string, bool) {
	auth := strings.TrimSpace(h.Get("Authorization"))
	scheme, rest, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ := strings.Cut(rest, " ")
	return token, token != ""
}

// authenticateBearer authenticates a bearer token for audiences (the
// server's API audience when empty), as a request's Authorization header
// and a TokenReview present it: a static token (Authentication.Tokens,
// good for the API audience only), else a service account token
// (AuthenticateToken). It returns the user and the audiences the token is
// good for; the error's text is what a TokenReview shows.
func (s *Server) authenticateBearer(ctx context.Context, token string, audiences []string) (User, []string, error) {
	if a := s.cfg.Authentication; a != nil {
		if u, ok := a.Tokens[token]; ok {
			api := []string{s.issuer()}
			if len(audiences) > 0 {
				api = slices.DeleteFunc(slices.Clone(api), func(x string) bool { return !slices.Contains(audiences, x) })
				if len(api) == 0 {
					return User{}, nil, errors.New(errInvalidToken)
				}
			}
			return authenticated(u), api, nil
		}
	}
	return s.AuthenticateToken(ctx, token, audiences)
}

// authenticated is u with system:authenticated among its groups, as
// kube-apiserver adds it to every user it authenticates (but the
// anonymous one and those in system:unauthenticated).
func authenticated(u User) User {
	if u.Name == anonymousUser || slices.Contains(u.Groups, groupAuthenticated) || slices.Contains(u.Groups, groupUnauthenticated) {
		return u
	}
	u.Groups = append(slices.Clip(u.Groups), groupAuthenticated)
	return u
}

// authenticateCertificate verifies a client certificate chain (the leaf
// first) against Authentication.ClientCA for client authentication: the
// user is the leaf's common name, its groups the organizations. A leaf
// without a common name authenticates no one (without failing); a chain
// that does not verify fails.
func (s *Server) authenticateCertificate(chain []*x509.Certificate) (User, bool, error) {
	leaf := chain[0]
	opts := x509.VerifyOptions{Roots: s.cfg.Authentication.ClientCA, Intermediates: x509.NewCertPool(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: s.cfg.Now()}
	for _, c := range chain[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil {
		return User{}, false, err
	}
	if leaf.Subject.CommonName == "" {
		return User{}, false, nil
	}
	sum := sha256.Sum256(leaf.Raw)
	u := User{Name: leaf.Subject.CommonName, Groups: slices.Clone(leaf.Subject.Organization),
		Extra: map[string][]string{extraCredentialID: {"X509SHA256=" + hex.EncodeToString(sum[:])}}}
	return authenticated(u), true, nil
}

// unauthorized answers 401 as kube-apiserver does.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	s.writeStatus(w, r, metav1.NewUnauthorized("Unauthorized"))
}

// celUserInfo is u as admission policies see request.userInfo.
func celUserInfo(u User) map[string]any {
	groups := make([]any, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = g
	}
	info := map[string]any{"username": u.Name, "uid": u.UID, "groups": groups}
	if len(u.Extra) > 0 {
		extra := map[string]any{}
		for k, vs := range u.Extra {
			values := make([]any, len(vs))
			for i, v := range vs {
				values[i] = v
			}
			extra[k] = values
		}
		info["extra"] = extra
	}
	return info
}
