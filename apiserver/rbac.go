package apiserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// RBAC: the authorizer of AuthorizationRBAC (kube-apiserver's
// --authorization-mode=RBAC with its privileged group authorizer in front
// of it), over the Roles, ClusterRoles and bindings the server stores. It
// reads them from an index the server keeps current by following its
// store (startRBAC), as kube-apiserver's authorizer reads its informers'
// caches: a write is seen by the requests that follow it shortly after.

const (
	rbacGroup = "rbac.authorization.k8s.io"
	// mastersGroup is kube-apiserver's privileged group: its members may do
	// everything, whatever the RBAC policy says.
	mastersGroup = "system:masters"
)

// rbacWriteWait bounds how long a decision waits for the index to follow
// the server's latest RBAC write; beyond it, it decides with what the
// index has.
const rbacWriteWait = 5 * time.Second

// rbacAuthorizer decides with an rbacIndex.
type rbacAuthorizer struct{ idx *rbacIndex }

// rbacIndex holds the RBAC objects of the store.
type rbacIndex struct {
	mu           sync.RWMutex
	clusterRoles map[string]*rbacv1.ClusterRole
	roles        map[string]*rbacv1.Role // by namespace/name
	// The bindings, each kind sorted by name (by namespace, then name), the
	// order they are tried in.
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	roleBindings        map[string][]*rbacv1.RoleBinding // by namespace

	from     uint64        // the revision the index was loaded at, which the watch follows from
	applied  uint64        // the store revision the index has followed to
	written  atomic.Uint64 // the revision of the latest RBAC write through the server
	progress chan struct{} // closed and replaced when applied moves
}

func newRBACIndex() *rbacIndex {
	return &rbacIndex{clusterRoles: map[string]*rbacv1.ClusterRole{}, roles: map[string]*rbacv1.Role{},
		roleBindings: map[string][]*rbacv1.RoleBinding{}, progress: make(chan struct{})}
}

// advance records that the index has followed the store to rev (x.mu
// held) and wakes the decisions waiting for it.
func (x *rbacIndex) advance(rev uint64) {
	if rev <= x.applied {
		return
	}
	x.applied = rev
	close(x.progress)
	x.progress = make(chan struct{})
}

// caughtUp waits until the index has followed every RBAC write made
// through the server so far, ctx is done, or rbacWriteWait has passed.
func (x *rbacIndex) caughtUp(ctx context.Context) {
	want := x.written.Load()
	var timeout <-chan time.Time
	for {
		x.mu.RLock()
		done, progress := x.applied >= want, x.progress
		x.mu.RUnlock()
		if done {
			return
		}
		if timeout == nil {
			t := time.NewTimer(rbacWriteWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return
		case <-timeout:
			return
		}
	}
}

// rbacStore is the server's store noting the revision of every write of
// an RBAC object (rbacIndex.caughtUp waits for the index to reach it).
type rbacStore struct {
	storage.Interface
	x *rbacIndex
}

func (w *rbacStore) note(key string, out storage.Object, err error) {
	if err != nil || !strings.HasPrefix(key, rbacPrefix) {
		return
	}
	if rev, perr := strconv.ParseUint(out.GetResourceVersion(), 10, 64); perr == nil {
		for {
			cur := w.x.written.Load()
			if rev <= cur || w.x.written.CompareAndSwap(cur, rev) {
				return
			}
		}
	}
}

func (w *rbacStore) Create(ctx context.Context, key string, obj storage.Object) (storage.Object, error) {
	out, err := w.Interface.Create(ctx, key, obj)
	w.note(key, out, err)
	return out, err
}

func (w *rbacStore) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *storage.Preconditions,
	tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	out, err := w.Interface.GuaranteedUpdate(ctx, key, allowCreate, pre, tryUpdate)
	w.note(key, out, err)
	return out, err
}

func (w *rbacStore) Delete(ctx context.Context, key string, pre *storage.Preconditions, validate func(storage.Object) error) (storage.Object, error) {
	out, err := w.Interface.Delete(ctx, key, pre, validate) // out carries the deletion's revision
	w.note(key, out, err)
	return out, err
}

// rbacPrefix is the store prefix of the RBAC group's objects.
var rbacPrefix = groupKey(rbacGroup)

// startRBAC fills the index of an RBAC server from its store and puts
// rbacStore on the store, so it runs before any goroutine reads s.store;
// followRBAC then keeps the index current.
func (s *Server) startRBAC() error {
	idx := newRBACIndex()
	idx.from = s.store.Revision()
	if err := idx.load(s.ctx, s.store); err != nil {
		return err
	}
	s.rbac = idx
	s.store = &rbacStore{Interface: s.store, x: idx}
	return nil
}

// followRBAC keeps the index current from the store's watch, in a
// goroutine stopped by Close, once s.store is final.
func (s *Server) followRBAC() {
	idx := s.rbac
	s.followStore(s.groupPrefix(rbacGroup), idx.from, time.Second, func(ctx context.Context) { // put and remove skip other objects
		if err := idx.load(ctx, s.store); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("apiserver: rbac index", "err", err)
		}
	}, func(_ context.Context, ev storage.Event) { idx.apply(ev) })
}

// load replaces the index's content with what the store holds.
func (x *rbacIndex) load(ctx context.Context, st storage.Interface) error {
	fresh := newRBACIndex()
	var rev uint64
	for _, res := range []string{"clusterroles", "roles", "clusterrolebindings", "rolebindings"} {
		list, err := st.List(ctx, keyOf(rbacGroup, res, "", ""), storage.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", res, err)
		}
		for _, o := range list.Items {
			fresh.put(o)
		}
		rev = max(rev, list.Revision)
	}
	x.mu.Lock()
	x.clusterRoles, x.roles, x.clusterRoleBindings, x.roleBindings = fresh.clusterRoles, fresh.roles, fresh.clusterRoleBindings, fresh.roleBindings
	x.advance(rev)
	x.mu.Unlock()
	return nil
}

// apply follows one event of the store.
func (x *rbacIndex) apply(ev storage.Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch ev.Type {
	case storage.Added, storage.Modified:
		x.put(ev.Object)
	case storage.Deleted:
		x.remove(ev.Object)
	}
	x.advance(ev.Revision)
}

// put adds or replaces o (x.mu held, or x not shared yet).
func (x *rbacIndex) put(o storage.Object) {
	switch o := o.(type) {
	case *rbacv1.ClusterRole:
		x.clusterRoles[o.Name] = o
	case *rbacv1.Role:
		x.roles[o.Namespace+"/"+o.Name] = o
	case *rbacv1.ClusterRoleBinding:
		x.clusterRoleBindings = upsertByName(x.clusterRoleBindings, o, func(b *rbacv1.ClusterRoleBinding) string { return b.Name })
	case *rbacv1.RoleBinding:
		x.roleBindings[o.Namespace] = upsertByName(x.roleBindings[o.Namespace], o, func(b *rbacv1.RoleBinding) string { return b.Name })
	}
}

// remove deletes o (x.mu held).
func (x *rbacIndex) remove(o storage.Object) {
	switch o := o.(type) {
	case *rbacv1.ClusterRole:
		delete(x.clusterRoles, o.Name)
	case *rbacv1.Role:
		delete(x.roles, o.Namespace+"/"+o.Name)
	case *rbacv1.ClusterRoleBinding:
		x.clusterRoleBindings = deleteByName(x.clusterRoleBindings, o.Name, func(b *rbacv1.ClusterRoleBinding) string { return b.Name })
	case *rbacv1.RoleBinding:
		x.roleBindings[o.Namespace] = deleteByName(x.roleBindings[o.Namespace], o.Name, func(b *rbacv1.RoleBinding) string { return b.Name })
		if len(x.roleBindings[o.Namespace]) == 0 {
			delete(x.roleBindings, o.Namespace)
		}
	}
}

// upsertByName puts o in the name-sorted list, replacing the one of its name.
func upsertByName[T any](list []T, o T, name func(T) string) []T {
	i, found := slices.BinarySearchFunc(list, name(o), func(e T, n string) int { return strings.Compare(name(e), n) })
	if found {
		list = slices.Clone(list) // readers may hold the old slice
		list[i] = o
		return list
	}
	return slices.Insert(slices.Clone(list), i, o)
}

// deleteByName removes the element named n from the name-sorted list.
func deleteByName[T any](list []T, n string, name func(T) string) []T {
	i, found := slices.BinarySearchFunc(list, n, func(e T, n string) int { return strings.Compare(name(e), n) })
	if !found {
		return list
	}
	return slices.Delete(slices.Clone(list), i, i+1)
}

// roleRules are the rules of the role a binding in namespace refers to.
func (x *rbacIndex) roleRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		r, ok := x.clusterRoles[ref.Name]
		if !ok {
			return nil, fmt.Errorf("clusterrole.rbac.authorization.k8s.io %q not found", ref.Name)
		}
		return r.Rules, nil
	case "Role":
		r, ok := x.roles[namespace+"/"+ref.Name]
		if !ok {
			return nil, fmt.Errorf("role.rbac.authorization.k8s.io %q not found", ref.Name)
		}
		return r.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}

// visit calls f with the rules of every binding of user that applies in
// namespace, ClusterRoleBindings first, and a description of the binding
// (as kube-apiserver's RBAC reasons name it); it stops when f returns
// false. The errors are those of bindings whose role is missing.
func (x *rbacIndex) visit(user User, namespace string, f func(source func() string, rule *rbacv1.PolicyRule) bool) []error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var errs []error
	for _, b := range x.clusterRoleBindings {
		sub := subjectFor(user, b.Subjects, "")
		if sub == nil {
			continue
		}
		rules, err := x.roleRules(b.RoleRef, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		source := func() string {
			return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.Name, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(sub, ""))
		}
		for i := range rules {
			if !f(source, &rules[i]) {
				return errs
			}
		}
	}
	if namespace == "" {
		return errs
	}
	for _, b := range x.roleBindings[namespace] {
		sub := subjectFor(user, b.Subjects, namespace)
		if sub == nil {
			continue
		}
		rules, err := x.roleRules(b.RoleRef, namespace)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		source := func() string {
			return fmt.Sprintf("RoleBinding %q of %s %q to %s", b.Name+"/"+b.Namespace, b.RoleRef.Kind, b.RoleRef.Name, describeSubject(sub, namespace))
		}
		for i := range rules {
			if !f(source, &rules[i]) {
				return errs
			}
		}
	}
	return errs
}

// subjectFor is the first of subjects that user is (nil if none): a
// User by name, a Group user is in, or a ServiceAccount (its namespace
// defaulting to the binding's).
func subjectFor(user User, subjects []rbacv1.Subject, namespace string) *rbacv1.Subject {
	for i := range subjects {
		s := &subjects[i]
		switch s.Kind {
		case "User":
			if user.Name == s.Name {
				return s
			}
		case "Group":
			if slices.Contains(user.Groups, s.Name) {
				return s
			}
		case "ServiceAccount":
			ns := namespace
			if s.Namespace != "" {
				ns = s.Namespace
			}
			if ns != "" && user.Name == serviceAccountUser(ns, s.Name) {
				return s
			}
		}
	}
	return nil
}

// serviceAccountUser is the user name of a service account's tokens.
func serviceAccountUser(namespace, name string) string {
	return serviceAccountPrefix + namespace + ":" + name
}

// describeSubject names a subject as kube-apiserver's RBAC reasons do.
func describeSubject(s *rbacv1.Subject, namespace string) string {
	if s.Kind == "ServiceAccount" {
		ns := s.Namespace
		if ns == "" {
			ns = namespace
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
	}
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}

// aggregateErrors joins errors as kube's error aggregates print: one
// alone, several in brackets.
func aggregateErrors(errs []error) string {
	if len(errs) == 1 {
		return errs[0].Error()
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// Authorize allows members of system:masters everything, and others what
// a rule of one of their bindings allows, with kube-apiserver's reason
// ("RBAC: allowed by ..."). Otherwise it has no opinion (the server
// denies), with the errors of bindings whose roles are missing as reason.
func (a rbacAuthorizer) Authorize(ctx context.Context, attrs Attributes) (Decision, string, error) {
	if slices.Contains(attrs.User.Groups, mastersGroup) {
		return DecisionAllow, "", nil
	}
	a.idx.caughtUp(ctx)
	var reason string
	errs := a.idx.visit(attrs.User, attrs.Namespace, func(source func() string, rule *rbacv1.PolicyRule) bool {
		if ruleAllows(&attrs, rule) {
			reason = "RBAC: allowed by " + source()
			return false
		}
		return true
	})
	if reason != "" {
		return DecisionAllow, reason, nil
	}
	if len(errs) > 0 {
		return DecisionNoOpinion, "RBAC: " + aggregateErrors(errs), nil
	}
	return DecisionNoOpinion, "", nil
}

// RulesFor lists the rules of user's bindings in namespace (those of
// its ClusterRoleBindings first), resource and non-resource apart, as
// kube-apiserver's RBAC rule resolver. A missing role is an error, with
// the rules of the other bindings.
func (a rbacAuthorizer) RulesFor(ctx context.Context, user User, namespace string) ([]ResourceRule, []NonResourceRule, bool, error) {
	a.idx.caughtUp(ctx)
	var rr []ResourceRule
	var nr []NonResourceRule
	errs := a.idx.visit(user, namespace, func(_ func() string, rule *rbacv1.PolicyRule) bool {
		if len(rule.Resources) > 0 {
			rr = append(rr, ResourceRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames})
		}
		if len(rule.NonResourceURLs) > 0 {
			nr = append(nr, NonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
		}
		return true
	})
	if len(errs) > 0 {
		return rr, nr, false, fmt.Errorf("%s", aggregateErrors(errs))
	}
	return rr, nr, false, nil
}

// ruleAllows reports whether rule allows the request a describes.
func ruleAllows(a *Attributes, rule *rbacv1.PolicyRule) bool {
	if !matchesOrStar(rule.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return nonResourceURLMatches(rule.NonResourceURLs, a.Path)
	}
	if !matchesOrStar(rule.APIGroups, a.APIGroup) || !ruleResourceMatches(rule.Resources, a.Resource, a.Subresource) {
		return false
	}
	return len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, a.Name)
}

// matchesOrStar reports whether values hold v or "*".
func matchesOrStar(values []string, v string) bool {
	for _, x := range values {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// ruleResourceMatches reports whether a rule's resources cover resource and
// its subresource: "*" covers all, "pods" the resource only, "pods/log"
// the subresource, "*/scale" the subresource of every resource.
func ruleResourceMatches(resources []string, resource, sub string) bool {
	for _, r := range resources {
		switch {
		case r == "*":
			return true
		case sub == "":
			if r == resource {
				return true
			}
		case len(r) == len(resource)+1+len(sub) && strings.HasPrefix(r, resource) && r[len(resource)] == '/' && strings.HasSuffix(r, sub):
			return true
		case len(r) == len(sub)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, sub):
			return true
		}
	}
	return false
}

// nonResourceURLMatches reports whether a rule's URLs cover path: "*",
// the path itself, or a prefix of it ending in "*".
func nonResourceURLMatches(urls []string, path string) bool {
	for _, u := range urls {
		switch {
		case u == "*", u == path:
			return true
		case strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")):
			return true
		}
	}
	return false
}
