package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/namefmt"
)

// Impersonation: a request's Impersonate-User, Impersonate-Uid,
// Impersonate-Group and Impersonate-Extra-KEY headers make it act as that
// user, if the authenticated user may, as kube-apiserver v1.37 decides:
// with constrained impersonation (the impersonate-on:MODE:VERB verb on the
// request, then impersonate:MODE on each impersonated attribute, in
// authentication.k8s.io) for the first mode that fits the wanted user
// (associated-node, arbitrary-node, serviceaccount, user-info), else with
// the legacy impersonate verb on users, groups and serviceaccounts (core
// group), uids and userextras/KEY (authentication.k8s.io). A refusal is
// the 403 of the first check that failed.

const (
	headerImpersonateUser  = "Impersonate-User"
	headerImpersonateUID   = "Impersonate-Uid"
	headerImpersonateGroup = "Impersonate-Group"
	headerImpersonateExtra = "Impersonate-Extra-"
	groupAuthenticationAPI = "authentication.k8s.io"
)

// impersonate replaces r's user by the one its impersonation headers ask
// for, when its user may impersonate it; it answers 400 or 403 itself and
// returns false otherwise. r without the headers is returned as it is.
func (s *Server) impersonate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	wanted, ok, st := impersonationHeaders(r.Header)
	if !ok && st == nil {
		return r, true
	}
	var u User
	if st == nil {
		u, st = s.impersonated(r.Context(), wanted, requestAttributes(r, s.requestUser(r)))
	}
	if st != nil {
		w.Header().Set("X-Content-Type-Options", "nosniff") // as kube-apiserver's refusals
		s.writeStatus(w, r, st)
		return r, false
	}
	r = r.WithContext(withUser(r.Context(), u))
	// What follows does not see that the request impersonates, as in
	// kube-apiserver (r's headers are the caller's: change a copy).
	r.Header = r.Header.Clone()
	for k := range r.Header {
		if k == headerImpersonateUser || k == headerImpersonateUID || k == headerImpersonateGroup || strings.HasPrefix(k, headerImpersonateExtra) {
			delete(r.Header, k)
		}
	}
	return r, true
}

// impersonationHeaders reads the user h asks to impersonate; ok is false
// when h asks for none. Asking for a uid, groups or extras without a user
// name is a 400, whose message shows the request as kube-apiserver prints
// it (a Go value of its user type).
func impersonationHeaders(h http.Header) (wanted User, ok bool, st *metav1.Status) {
	wanted.Name = h.Get(headerImpersonateUser)
	wanted.UID = h.Get(headerImpersonateUID)
	wanted.Groups = slices.Clone(h[headerImpersonateGroup])
	hasExtra := false
	for k, vs := range h {
		if !strings.HasPrefix(k, headerImpersonateExtra) {
			continue
		}
		hasExtra = true
		if len(vs) == 0 {
			continue
		}
		key := strings.ToLower(k[len(headerImpersonateExtra):])
		if un, err := url.PathUnescape(key); err == nil {
			key = un
		}
		if wanted.Extra == nil {
			wanted.Extra = map[string][]string{}
		}
		wanted.Extra[key] = append(wanted.Extra[key], vs...)
	}
	if wanted.Name == "" {
		if wanted.UID != "" || len(wanted.Groups) > 0 || hasExtra {
			return User{}, false, metav1.NewBadRequest(fmt.Sprintf("requested &user.DefaultInfo{Name:%#v, UID:%#v, Groups:%#v, Extra:%#v} without impersonating a user name",
				wanted.Name, wanted.UID, wanted.Groups, wanted.Extra))
		}
		return User{}, false, nil
	}
	return wanted, true, nil
}

// impersonationModes are kube-apiserver's, in the order it tries them;
// "" is legacy impersonation, which fits every wanted user.
var impersonationModes = []string{"associated-node", "arbitrary-node", "serviceaccount", "user-info", ""}

// impersonated is the user req.User may act as when it asks for wanted,
// or the 403 of the first mode that fits wanted and refused. As
// kube-apiserver, the mode that last let the same user impersonate is
// tried first (so a user whose legacy impersonation once succeeded keeps
// getting legacy impersonation's user: a node without system:nodes).
func (s *Server) impersonated(ctx context.Context, wanted User, req Attributes) (User, *metav1.Status) {
	var first *metav1.Status
	last, cached := s.lastModes.get(req.User.Name)
	if cached {
		u, _, st := s.impersonateIn(ctx, impersonationModes[last], wanted, req)
		if st == nil && u.Name != "" {
			return u, nil
		}
		first = st
	}
	for i, mode := range impersonationModes {
		if cached && i == last {
			continue
		}
		u, fits, st := s.impersonateIn(ctx, mode, wanted, req)
		if !fits {
			continue
		}
		if st == nil {
			s.lastModes.set(req.User.Name, i)
			return u, nil
		}
		if first == nil {
			first = st
		}
	}
	return User{}, first
}

// lastModes remembers, by user name, the index of the impersonation mode
// that last let the user impersonate (at most maxLastModes users, as
// kube-apiserver's cache of 10000).
type lastModes struct {
	mu    sync.Mutex
	modes map[string]int
}

const maxLastModes = 10000

func (l *lastModes) get(name string) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.modes[name]
	return i, ok
}

func (l *lastModes) set(name string, i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.modes == nil || len(l.modes) >= maxLastModes {
		l.modes = map[string]int{}
	}
	l.modes[name] = i
}

// impersonateIn checks wanted in one mode: fits is false when the mode
// does not apply to wanted.
func (s *Server) impersonateIn(ctx context.Context, mode string, wanted User, req Attributes) (u User, fits bool, st *metav1.Status) {
	onlyName := wanted.UID == "" && len(wanted.Groups) == 0 && len(wanted.Extra) == 0
	node, isNode := nodeUsername(wanted.Name)
	_, _, isSA := serviceAccountUsername(wanted.Name)
	requestor := req.User
	switch mode {
	case "associated-node":
		_, _, requestorSA := serviceAccountUsername(requestor.Name)
		nodes := requestor.Extra[extraNodeName]
		if !onlyName || !isNode || !requestorSA || len(nodes) != 1 || nodes[0] != node {
			return User{}, false, nil
		}
		// The checks hold for any node the service account is on: the
		// authorizer sees the names of its extras, not their values.
		keys := make([]string, 0, len(requestor.Extra))
		for k := range requestor.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		requestor.Extra = map[string][]string{extraAssociatedNodeKeys: keys}
	case "arbitrary-node":
		if !onlyName || !isNode {
			return User{}, false, nil
		}
	case "serviceaccount":
		if !onlyName || !isSA {
			return User{}, false, nil
		}
	case "user-info":
		if isNode || isSA {
			return User{}, false, nil
		}
	}
	c := impersonationCheck{s: s, ctx: ctx, requestor: requestor, verb: "impersonate", group: ""}
	if mode != "" {
		on := req
		on.User = requestor
		on.Verb = "impersonate-on:" + mode + ":" + req.Verb
		if st := c.check(on); st != nil {
			return User{}, true, st
		}
		c.verb, c.group, c.constrained = "impersonate:"+mode, groupAuthenticationAPI, true
		c.anyNode = mode == "associated-node"
	}
	u, st = c.user(wanted)
	return u, true, st
}

// impersonationCheck asks the authorizer about each attribute of a wanted
// user, with one mode's verb.
type impersonationCheck struct {
	s           *Server
	ctx         context.Context
	requestor   User
	verb        string
	group       string // of users, groups and serviceaccounts (core for legacy)
	constrained bool
	anyNode     bool // the node is checked as "*" (associated-node)
}

func (c impersonationCheck) attributes(group, resource, name string) Attributes {
	return Attributes{User: c.requestor, Verb: c.verb, ResourceRequest: true, APIGroup: group, APIVersion: "v1", Resource: resource, Name: name}
}

// check is nil when the authorizer allows a, else its 403.
func (c impersonationCheck) check(a Attributes) *metav1.Status {
	d, reason, err := c.s.authorizer().Authorize(c.ctx, a)
	if d == DecisionAllow {
		return nil
	}
	if err != nil {
		if reason != "" {
			reason = err.Error() + ": " + reason
		} else {
			reason = err.Error()
		}
	}
	return forbiddenStatus(a, reason)
}

// user checks each attribute of wanted and returns the user it makes.
func (c impersonationCheck) user(wanted User) (User, *metav1.Status) {
	actual := wanted
	a := c.attributes(c.group, "users", wanted.Name)
	if node, ok := nodeUsername(wanted.Name); ok && c.constrained {
		a.Resource, a.Name = "nodes", node
		if c.anyNode {
			a.Name = "*"
		}
		if len(wanted.Groups) > 0 {
			return User{}, forbiddenStatus(a, fmt.Sprintf("when impersonating a node, cannot impersonate groups %q", wanted.Groups))
		}
		actual.Groups = []string{groupNodes}
	}
	if ns, name, ok := serviceAccountUsername(wanted.Name); ok {
		a.Resource, a.Namespace, a.Name = "serviceaccounts", ns, name
		if c.constrained && len(wanted.Groups) > 0 {
			return User{}, forbiddenStatus(a, fmt.Sprintf("when impersonating a service account, cannot impersonate groups %q", wanted.Groups))
		}
		if len(wanted.Groups) == 0 {
			actual.Groups = []string{groupServiceAccounts, groupServiceAccounts + ":" + ns}
		}
	}
	if st := c.check(a); st != nil {
		return User{}, st
	}
	if wanted.UID != "" {
		if st := c.check(c.attributes(groupAuthenticationAPI, "uids", wanted.UID)); st != nil {
			return User{}, st
		}
	}
	if st := c.groups(wanted.Groups); st != nil {
		return User{}, st
	}
	if st := c.extra(wanted.Extra); st != nil {
		return User{}, st
	}
	if actual.Name == anonymousUser {
		actual.Groups = withGroup(actual.Groups, groupUnauthenticated)
	} else if !slices.Contains(actual.Groups, groupUnauthenticated) {
		actual.Groups = withGroup(actual.Groups, groupAuthenticated)
	}
	return actual, nil
}

// manyChecks is how many groups or extra values make constrained
// impersonation ask about all of them at once ("*") first.
const manyChecks = 4

func (c impersonationCheck) groups(groups []string) *metav1.Status {
	if len(groups) == 0 {
		return nil
	}
	a := c.attributes(c.group, "groups", "")
	if c.constrained {
		if slices.Contains(groups, "") {
			return forbiddenStatus(a, "impersonating the empty string group is not allowed")
		}
		if slices.Contains(groups, "system:masters") {
			a.Name = "system:masters"
			return forbiddenStatus(a, "impersonating the system:masters group is not allowed")
		}
		if len(groups) >= manyChecks {
			a.Name = "*"
			if c.check(a) == nil {
				return nil
			}
		}
	}
	for _, g := range groups {
		a.Name = g
		if st := c.check(a); st != nil {
			return st
		}
	}
	return nil
}

func (c impersonationCheck) extra(extra map[string][]string) *metav1.Status {
	if len(extra) == 0 {
		return nil
	}
	a := c.attributes(groupAuthenticationAPI, "userextras", "")
	keys := make([]string, 0, len(extra))
	n := 0
	for k, vs := range extra {
		keys = append(keys, k)
		n += len(vs)
	}
	slices.Sort(keys)
	if c.constrained {
		if msg := invalidExtra(keys, extra); msg != "" {
			return forbiddenStatus(a, msg)
		}
		if len(keys) >= manyChecks || n >= manyChecks {
			a.Subresource, a.Name = "*", "*"
			if c.check(a) == nil {
				return nil
			}
		}
	}
	for _, k := range keys {
		a.Subresource = k
		for _, v := range extra[k] {
			a.Name = v
			if st := c.check(a); st != nil {
				return st
			}
		}
	}
	return nil
}

// extraPathFormat is the format of the path of a domain-prefixed extra
// key, as kube-apiserver words it.
const extraPathFormat = `[A-Za-z0-9/\-._~%!$&'()*+,;=:]+`

var extraPath = regexp.MustCompile("^" + extraPathFormat + "$")

// domainPrefixedPath checks an extra key as kube-apiserver's
// IsDomainPrefixedPath: DOMAIN/PATH, a DNS subdomain and an HTTP path.
func domainPrefixedPath(k string) metav1.FieldErrors {
	const field = "extra.key"
	domain, path, ok := strings.Cut(k, "/")
	if !ok || domain == "" || path == "" {
		return metav1.FieldErrors{metav1.FieldInvalid(field, k, `must be a domain-prefixed path (such as "acme.io/foo")`)}
	}
	var errs metav1.FieldErrors
	for _, msg := range registry.ValidateDNS1123Subdomain(domain) {
		errs = append(errs, metav1.FieldInvalid(field, domain, msg))
	}
	if !extraPath.MatchString(path) {
		errs = append(errs, metav1.FieldInvalid(field, path, "Invalid path (regex used for validation is '"+extraPathFormat+"')"))
	}
	return errs
}

// invalidExtra is why constrained impersonation refuses extras: keys must
// be lower-case domain-prefixed paths (example.com/key) with values.
func invalidExtra(keys []string, extra map[string][]string) string {
	for _, k := range keys {
		if k == "" {
			return "impersonating the empty string key in extra is not allowed"
		}
		if errs := domainPrefixedPath(k); len(errs) > 0 {
			msg := errs[0].Error()
			if len(errs) > 1 {
				var parts []string
				for _, e := range errs {
					parts = append(parts, e.Error())
				}
				msg = "[" + strings.Join(parts, ", ") + "]"
			}
			return "impersonating an invalid key in extra is not allowed: " + msg
		}
		if k != strings.ToLower(k) {
			return fmt.Sprintf("impersonating a non-lowercase key in extra is not allowed: %q", k)
		}
		if vs := extra[k]; len(vs) == 0 {
			return "impersonating empty values in extra is not allowed"
		} else if slices.Contains(vs, "") {
			return "impersonating the empty string value in extra is not allowed"
		}
	}
	return ""
}

// withGroup is groups with g at the end if it is not there (a new slice).
func withGroup(groups []string, g string) []string {
	if slices.Contains(groups, g) {
		return groups
	}
	return append(slices.Clip(groups), g)
}

// serviceAccountUsername splits system:serviceaccount:NS:NAME.
func serviceAccountUsername(name string) (namespace, sa string, ok bool) {
	rest, ok := strings.CutPrefix(name, serviceAccountPrefix)
	if !ok {
		return "", "", false
	}
	namespace, sa, ok = strings.Cut(rest, ":")
	if !ok || len(namespace) > 63 || !namefmt.DNS1123LabelRe.MatchString(namespace) || !isSubdomain(sa) {
		return "", "", false
	}
	return namespace, sa, true
}

// nodeUsername is the node of system:node:NAME (a DNS subdomain).
func nodeUsername(name string) (string, bool) {
	node, ok := strings.CutPrefix(name, nodeUserPrefix)
	if !ok || !isSubdomain(node) {
		return "", false
	}
	return node, true
}

func isSubdomain(s string) bool {
	return len(s) <= 253 && namefmt.DNS1123SubdomainRe.MatchString(s)
}
