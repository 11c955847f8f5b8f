package apiserver

import (
	"context"
	"crypto"
	"crypto/x509"
)

// Authentication configures the authenticators of a server, as
// kube-apiserver's flags do. A request is tried against each configured
// method, in kube-apiserver's order: a client certificate (ClientCA), then
// a bearer token (Tokens, then service account tokens); the first that
// authenticates wins. Credentials that authenticate no one get 401; a
// request without any is anonymous when Anonymous allows it, else 401.
// Impersonation headers are then honoured when the authorizer allows
// them. Every authenticated user is in system:authenticated.
type Authentication struct {
	// Tokens are the static bearer tokens, by token, as kube-apiserver's
	// --token-auth-file lists them (ParseTokenFile reads one). A static
	// token is good for the server's API audience (its service account
	// issuer) only.
	Tokens map[string]User
	// ClientCA verifies client certificates (--client-ca-file): the user
	// is the certificate's common name, its groups the organizations. Nil:
	// client certificates are not accepted.
	ClientCA *x509.CertPool
	// Anonymous lets requests without credentials in as system:anonymous
	// in group system:unauthenticated (--anonymous-auth); otherwise they
	// get 401.
	Anonymous bool
	// ServiceAccountKeys are public keys that verify service account
	// tokens besides the server's own signing key
	// (--service-account-key-file).
	ServiceAccountKeys []crypto.PublicKey
}

// AuthorizationMode names the authorizer of a server, as
// kube-apiserver's --authorization-mode.
type AuthorizationMode string

const (
	// AuthorizationAlwaysAllow allows every request (the default).
	AuthorizationAlwaysAllow AuthorizationMode = "AlwaysAllow"
	// AuthorizationRBAC decides with the Roles, ClusterRoles and their
	// bindings the server stores, with kube-apiserver's bootstrap policy;
	// members of system:masters may do everything.
	AuthorizationRBAC AuthorizationMode = "RBAC"
)

// User is an authenticated identity: what kube-apiserver's authenticators
// hand its authorizer and what the reviews answer with.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// AdminUser is the identity of every request of a server without
// Config.Authentication (the in-process server, the fake), and of the
// server's own work: kube-apiserver's admin of a static token file, in
// system:masters, as the kinds captures' user.
var AdminUser = User{Name: "admin", UID: "admin-uid", Groups: []string{"system:masters", "system:authenticated"}}

// Attributes describe a request an Authorizer decides on, as a
// SubjectAccessReview's spec describes one.
type Attributes struct {
	User User
	// Verb is the API verb of a resource request (get, list, create ...) or
	// the lower-case HTTP method of a non-resource request.
	Verb string
	// ResourceRequest is true for a request of an API resource; false for a
	// non-resource path (/healthz).
	ResourceRequest bool
	Namespace       string
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Name            string
	// Path is the URL path of a non-resource request.
	Path string
}

// Decision is what an Authorizer decides.
type Decision int

const (
	// DecisionNoOpinion neither allows nor denies (the next authorizer of a
	// chain decides; the request is denied when none does).
	DecisionNoOpinion Decision = iota
	// DecisionAllow allows the request.
	DecisionAllow
	// DecisionDeny denies it, whatever later authorizers would say.
	DecisionDeny
)

// Authorizer decides whether a user may make a request. The server holds
// one (Config.Authorizer) and answers the access reviews with it.
type Authorizer interface {
	// Authorize decides on a; reason explains the decision (it becomes a
	// SubjectAccessReview's status.reason).
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
	// RulesFor lists what user may do in namespace, as a
	// SelfSubjectRulesReview answers; incomplete says the list may be
	// missing rules the authorizer cannot enumerate.
	RulesFor(ctx context.Context, user User, namespace string) (resource []ResourceRule, nonResource []NonResourceRule, incomplete bool, err error)
}

// ResourceRule is a rule of a SelfSubjectRulesReview over API resources.
type ResourceRule struct {
	Verbs, APIGroups, Resources, ResourceNames []string
}

// NonResourceRule is a rule of a SelfSubjectRulesReview over non-resource
// paths.
type NonResourceRule struct {
	Verbs, NonResourceURLs []string
}

// AlwaysAllow is the Authorizer that allows every request, as
// kube-apiserver's --authorization-mode=AlwaysAllow: the server's default
// until it has RBAC.
type AlwaysAllow struct{}

// Authorize allows a, with no reason, as kube-apiserver's AlwaysAllow.
func (AlwaysAllow) Authorize(context.Context, Attributes) (Decision, string, error) {
	return DecisionAllow, "", nil
}

// RulesFor is everything: every verb on every resource and path.
func (AlwaysAllow) RulesFor(context.Context, User, string) ([]ResourceRule, []NonResourceRule, bool, error) {
	return []ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}, false, nil
}

// authorizer is the server's Authorizer: Config.Authorizer, else the one
// of Config.AuthorizationMode (AlwaysAllow by default).
func (s *Server) authorizer() Authorizer {
	if s.cfg.Authorizer != nil {
		return s.cfg.Authorizer
	}
	if s.rbac != nil {
		return rbacAuthorizer{s.rbac}
	}
	return AlwaysAllow{}
}
