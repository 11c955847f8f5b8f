package apiserver

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	authenticationv1 "github.com/kapi-dev/kapi/api/authentication/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// Service account tokens: serviceaccounts/token (a TokenRequest) issues a
// JWT signed with the server's key, with kube-apiserver's claims; a
// TokenReview, and the request authentication of issue 17, verify one
// with Server.AuthenticateToken.

// DefaultServiceAccountIssuer is the iss of the tokens a server issues and
// its API audience unless Config.ServiceAccountIssuer says otherwise.
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

const (
	// minTokenSeconds and defaultTokenSeconds are a TokenRequest's bounds
	// (10 minutes at least, an hour by default), as kube-apiserver's.
	minTokenSeconds     = 600
	defaultTokenSeconds = 3600
)

// tokenKey is the server's signing key and its key id, made once.
type tokenKey struct {
	once sync.Once
	key  *rsa.PrivateKey
	kid  string
	err  error
}

// signingKey returns the key tokens are signed with and its id (the
// base64url SHA-256 of the DER public key, as kube-apiserver's kid).
func (s *Server) signingKey() (*rsa.PrivateKey, string, error) {
	k := &s.tokenKey
	k.once.Do(func() {
		k.key = s.cfg.ServiceAccountKey
		if k.key == nil {
			k.key, k.err = rsa.GenerateKey(rand.Reader, 2048)
			if k.err != nil {
				return
			}
		}
		der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
		if err != nil {
			k.err = err
			return
		}
		sum := sha256.Sum256(der)
		k.kid = base64.RawURLEncoding.EncodeToString(sum[:])
	})
	return k.key, k.kid, k.err
}

func (s *Server) issuer() string {
	if s.cfg.ServiceAccountIssuer != "" {
		return s.cfg.ServiceAccountIssuer
	}
	return DefaultServiceAccountIssuer
}

// ServiceAccountClaims are the claims of a service account token, as
// kube-apiserver writes them.
type ServiceAccountClaims struct {
	jwt.RegisteredClaims
	Kubernetes KubernetesClaims `json:"kubernetes.io"`
}

// KubernetesClaims is the "kubernetes.io" claim: whose token it is and
// what it is bound to.
type KubernetesClaims struct {
	Namespace      string     `json:"namespace"`
	Node           *ObjectRef `json:"node,omitempty"`
	Pod            *ObjectRef `json:"pod,omitempty"`
	Secret         *ObjectRef `json:"secret,omitempty"`
	ServiceAccount ObjectRef  `json:"serviceaccount"`
}

// ObjectRef names an object of a token's claims.
type ObjectRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// ParseServiceAccountToken parses a token the server signed with key, checks
// its signature and issuer, and returns its claims. It does not check the
// expiry, the audiences or that the objects still exist
// (Server.AuthenticateToken does).
func ParseServiceAccountToken(token string, key *rsa.PublicKey, issuer string) (*ServiceAccountClaims, error) {
	return parseServiceAccountToken(token, []crypto.PublicKey{key}, issuer)
}

// parseServiceAccountToken is ParseServiceAccountToken with any of keys
// (RSA or ECDSA public keys, as kube-apiserver's
// --service-account-key-file holds).
func parseServiceAccountToken(token string, keys []crypto.PublicKey, issuer string) (*ServiceAccountClaims, error) {
	claims := &ServiceAccountClaims{}
	set := jwt.VerificationKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, k)
	}
	_, err := jwt.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return set, nil },
		jwt.WithValidMethods([]string{"RS256", "ES256", "ES384", "ES512"}), jwt.WithIssuer(issuer), jwt.WithoutClaimsValidation())
	if err != nil {
		return nil, fmt.Errorf("service account token: %w", err)
	}
	if claims.Issuer != issuer {
		return nil, errors.New("service account token: wrong issuer")
	}
	return claims, nil
}

// errInvalidToken is the message of a token the server did not issue.
const errInvalidToken = "invalid bearer token"

// AuthenticateToken authenticates a service account token: one the server
// issued (serviceaccounts/token), or one signed by a key of
// Authentication.ServiceAccountKeys with the server's issuer, for audiences (the
// server's API audience when empty), as kube-apiserver's service account
// authenticator: signature and issuer, an audience in common, the expiry,
// and the service account and the object the token is bound to still
// existing with the uids of the token. It returns the user and the
// audiences the token is good for; the error's text is what a TokenReview
// shows.
func (s *Server) AuthenticateToken(ctx context.Context, token string, audiences []string) (User, []string, error) {
	key, _, err := s.signingKey()
	if err != nil {
		return User{}, nil, err
	}
	keys := []crypto.PublicKey{&key.PublicKey}
	if a := s.cfg.Authentication; a != nil {
		keys = append(keys, a.ServiceAccountKeys...)
	}
	claims, err := parseServiceAccountToken(token, keys, s.issuer())
	if err != nil {
		return User{}, nil, errors.New(errInvalidToken)
	}
	fail := func(msg string) (User, []string, error) {
		return User{}, nil, fmt.Errorf("[%s, %s]", errInvalidToken, msg)
	}
	if len(audiences) == 0 {
		audiences = []string{s.issuer()}
	}
	var matched []string
	for _, a := range audiences {
		if slices.Contains(claims.Audience, a) {
			matched = append(matched, a)
		}
	}
	if len(matched) == 0 {
		return fail(fmt.Sprintf("token audiences %s is invalid for the target audiences %s", quotedList(claims.Audience), quotedList(audiences)))
	}
	now := s.cfg.Now()
	if claims.ExpiresAt == nil || !now.Before(claims.ExpiresAt.Time) {
		return fail("service account token has expired")
	}
	if claims.NotBefore != nil && now.Add(time.Minute).Before(claims.NotBefore.Time) {
		return fail("service account token is not valid yet")
	}
	k := claims.Kubernetes
	ns := k.Namespace
	sa, err := s.boundObject(ctx, "serviceaccounts", ns, k.ServiceAccount)
	if err != nil {
		return fail(err.Error())
	}
	u := User{Name: serviceAccountPrefix + ns + ":" + k.ServiceAccount.Name, UID: string(sa.GetUID()),
		Groups: []string{groupServiceAccounts, groupServiceAccounts + ":" + ns, groupAuthenticated},
		Extra:  map[string][]string{extraCredentialID: {"JTI=" + claims.ID}}}
	for _, b := range []struct {
		resource, kind string
		ref            *ObjectRef
		namespaced     bool
	}{{"pods", "pod", k.Pod, true}, {"secrets", "secret", k.Secret, true}, {"nodes", "node", k.Node, false}} {
		if b.ref == nil {
			continue
		}
		bns := ""
		if b.namespaced {
			bns = ns
		}
		if _, err := s.boundObject(ctx, b.resource, bns, *b.ref); err != nil {
			if b.resource == "nodes" && k.Pod != nil {
				continue // a pod's node is informative, as in kube-apiserver
			}
			return fail(err.Error())
		}
		u.Extra["authentication.kubernetes.io/"+b.kind+"-name"] = []string{b.ref.Name}
		u.Extra["authentication.kubernetes.io/"+b.kind+"-uid"] = []string{b.ref.UID}
	}
	return u, matched, nil
}

// boundObject reads the object a token names and checks its uid.
func (s *Server) boundObject(ctx context.Context, resource, namespace string, ref ObjectRef) (storage.Object, error) {
	res := s.reg.Get("", "v1", resource)
	if res == nil {
		return nil, fmt.Errorf("%s are not served", resource)
	}
	obj, err := s.storeOf(res).Get(ctx, namespace, ref.Name, storage.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s %q not found", strings.TrimSuffix(resource, "s"), ref.Name)
	}
	if string(obj.GetUID()) != ref.UID {
		return nil, fmt.Errorf("%s UID (%s) does not match claim (%s)", strings.TrimSuffix(resource, "s"), obj.GetUID(), ref.UID)
	}
	if obj.GetDeletionTimestamp() != nil {
		return nil, fmt.Errorf("%s %q is being deleted", strings.TrimSuffix(resource, "s"), ref.Name)
	}
	return obj, nil
}

func quotedList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// reviewToken is a TokenReview's status for token.
func (s *Server) reviewToken(ctx context.Context, token string, audiences []string) authenticationv1.TokenReviewStatus {
	u, auds, err := s.authenticateBearer(ctx, token, audiences)
	if err != nil {
		return authenticationv1.TokenReviewStatus{Error: err.Error()}
	}
	return authenticationv1.TokenReviewStatus{Authenticated: true, User: userInfo(u), Audiences: auds}
}

// serveToken answers POST serviceaccounts/NAME/token: a TokenRequest.
func (h *handler) serveToken() {
	tokenRes := tokenRequestResource()
	mt, _, obj, ok := h.createRequest(tokenRes)
	if !ok {
		return
	}
	tr := obj.(*authenticationv1.TokenRequest)
	if tr.Spec.ExpirationSeconds == nil { // kube-apiserver's default, before tracking
		tr.Spec.ExpirationSeconds = new(int64(defaultTokenSeconds))
	}
	ctx := h.r.Context()
	sa, err := h.store().Get(ctx, h.ri.Namespace, h.ri.Name, storage.ReadOptions{})
	if err != nil {
		h.failErr(err)
		return
	}
	if n := *tr.Spec.ExpirationSeconds; n < minTokenSeconds {
		h.fail(tokenInvalid(metav1.FieldInvalid("spec.expirationSeconds", n, "may not specify a duration less than 10 minutes")))
		return
	} else if n > 1<<32 {
		h.fail(tokenInvalid(metav1.FieldInvalid("spec.expirationSeconds", n, "may not specify a duration larger than 2^32 seconds")))
		return
	}
	h.s.storeOf(tokenRes).track(&writeOptions{Manager: h.manager, Subresource: "token"}, nil, tr)
	if len(tr.Spec.Audiences) == 0 {
		tr.Spec.Audiences = []string{h.s.issuer()}
	}
	now := h.s.cfg.Now().UTC().Truncate(time.Second)
	exp := now.Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second)
	claims := ServiceAccountClaims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: h.s.issuer(), Subject: "system:serviceaccount:" + h.ri.Namespace + ":" + h.ri.Name,
			Audience: jwt.ClaimStrings(tr.Spec.Audiences), ExpiresAt: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now), ID: string(h.s.cfg.NewUID())},
		Kubernetes: KubernetesClaims{Namespace: h.ri.Namespace, ServiceAccount: ObjectRef{Name: h.ri.Name, UID: string(sa.GetUID())}},
	}
	if ref := tr.Spec.BoundObjectRef; ref != nil {
		if st := h.bindToken(ctx, ref, &claims.Kubernetes); st != nil {
			h.fail(st)
			return
		}
	}
	key, kid, err := h.s.signingKey()
	if err != nil {
		h.fail(metav1.NewInternalError(err))
		return
	}
	// The claims in kube-apiserver's order: by name.
	var ordered jwt.MapClaims
	raw, err := json.Marshal(claims)
	if err == nil {
		err = json.Unmarshal(raw, &ordered)
	}
	if err != nil {
		h.fail(metav1.NewInternalError(err))
		return
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, ordered)
	t.Header["kid"] = kid
	delete(t.Header, "typ") // kube-apiserver's tokens have none
	signed, err := t.SignedString(key)
	if err != nil {
		h.fail(metav1.NewInternalError(err))
		return
	}
	// The answer carries the service account's name, namespace, uid and
	// creationTimestamp, as kube-apiserver's.
	tr.Name, tr.Namespace, tr.UID, tr.CreationTimestamp = sa.GetName(), sa.GetNamespace(), sa.GetUID(), sa.GetCreationTimestamp()
	tr.Status = authenticationv1.TokenRequestStatus{Token: signed, ExpirationTimestamp: metav1.NewTime(exp)}
	h.s.writeObject(h.w, mt, http.StatusCreated, tokenRes, tr)
}

// bindToken checks the object a TokenRequest binds its token to and adds
// it to the claims (a pod's node too, when it has one).
func (h *handler) bindToken(ctx context.Context, ref *authenticationv1.BoundObjectReference, k *KubernetesClaims) *metav1.Status {
	var resource string
	switch {
	case ref.APIVersion == "v1" && ref.Kind == "Pod":
		resource = "pods"
	case ref.APIVersion == "v1" && ref.Kind == "Secret":
		resource = "secrets"
	case ref.APIVersion == "v1" && ref.Kind == "Node":
		resource = "nodes"
	default:
		return metav1.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", ref.Kind))
	}
	res := h.s.reg.Get("", "v1", resource)
	ns := h.ri.Namespace
	if resource == "nodes" {
		ns = ""
	}
	obj, err := h.s.storeOf(res).Get(ctx, ns, ref.Name, storage.ReadOptions{})
	if err != nil {
		return errorStatus(err)
	}
	if ref.UID != "" && obj.GetUID() != ref.UID {
		return metav1.NewConflict(res.GroupResource(), ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	r := &ObjectRef{Name: obj.GetName(), UID: string(obj.GetUID())}
	switch resource {
	case "pods":
		if sa := obj.(*corev1.Pod).Spec.ServiceAccountName; sa != h.ri.Name {
			return metav1.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", h.ri.Name))
		}
		k.Pod = r
		if node := obj.(*corev1.Pod).Spec.NodeName; node != "" {
			if n, err := h.s.storeOf(h.s.reg.Get("", "v1", "nodes")).Get(ctx, "", node, storage.ReadOptions{}); err == nil {
				k.Node = &ObjectRef{Name: n.GetName(), UID: string(n.GetUID())}
			}
		}
	case "secrets":
		k.Secret = r
	case "nodes":
		k.Node = r
	}
	return nil
}

func tokenInvalid(errs ...*metav1.FieldError) *metav1.Status {
	return metav1.NewInvalid(metav1.GroupKind{Group: "authentication.k8s.io", Kind: "TokenRequest"}, "", errs)
}

// tokenRequestResource describes the TokenRequest kind, for decoding it,
// tracking its managed fields and writing it (it is a subresource's kind,
// not a resource of the registry).
var tokenRequestResource = sync.OnceValue(func() *registry.Resource {
	return registry.Typed[authenticationv1.TokenRequest](&registry.Resource{
		Group: "authentication.k8s.io", Version: "v1", Resource: "tokenrequests", Kind: "TokenRequest", NotStored: true})
})
