package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/cel"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/selector"
)

// # Admission policies
//
// ValidatingAdmissionPolicies and their bindings are enforced in the
// validating admission phase (admitValidating), after PodSecurity and
// before the validating webhooks and ResourceQuota, as kube-apiserver's
// ValidatingAdmissionPolicy plugin, on creates, updates (no-op ones too)
// and deletes (after the mutating webhooks: admitDelete) of resources, on
// the updates of subresources that rewrite the object (status ...), of
// the scale subresource (admission_scale.go) and on CONNECT requests
// (admission_connect.go), which a rule naming "resource/subresource"
// selects; with matchPolicy Equivalent, as a request of another version
// of the resource (admission_equivalent.go). Expressions have the
// authorizer library (policy_authz.go):
//
//   - a binding applies when its policy's matchConstraints and its own
//     matchResources match the request (resourceRules and
//     excludeResourceRules with operations, groups, versions, resources,
//     resource names and scope; namespaceSelector on the namespace's
//     labels, or a Namespace's own; objectSelector on the new or old
//     object's labels);
//   - its params are the object paramRef names (or those its selector
//     selects) of the policy's paramKind, in paramRef's namespace or the
//     request's; none found is a denial with parameterNotFoundAction Deny
//     and nothing with Allow;
//   - matchConditions select the requests the validations see, variables
//     are evaluated in order, then every validation and audit annotation;
//   - a validation that is false is a failure worded by its
//     messageExpression, message or expression, with its reason (Invalid
//     when unset) choosing the status code; an expression that fails to
//     compile or evaluate, like missing params, fails the request under
//     failurePolicy Fail and is ignored under Ignore;
//   - each failure goes to the binding's validationActions: Deny refuses
//     the request (with the first failure, worded as kube-apiserver's),
//     Warn adds a Warning header, Audit would annotate the audit event
//     (kapi writes no audit log).
//
// The policies and bindings are kept in an index that the server's store
// updates on every write of one (policyStore), so a policy takes effect on
// the next request after it is written; a policy's expressions are
// compiled once per generation, on its first use.

const (
	policyGroup           = "admissionregistration.k8s.io"
	policyResource        = "validatingadmissionpolicies"
	policyBindingResource = "validatingadmissionpolicybindings"
)

// policyPrefixes are the store prefixes of the four kinds the index holds.
var policyPrefixes = []string{policyPrefix, policyBindingPrefix, mutatingPrefix, mutatingBindingPrefix}

var (
	policyPrefix          = keyOf(policyGroup, policyResource, "", "")
	policyBindingPrefix   = keyOf(policyGroup, policyBindingResource, "", "")
	mutatingPrefix        = keyOf(policyGroup, "mutatingadmissionpolicies", "", "")
	mutatingBindingPrefix = keyOf(policyGroup, "mutatingadmissionpolicybindings", "", "")
)

// policyIndex holds the stored policies and bindings, validating and
// mutating.
type policyIndex struct {
	mu        sync.RWMutex
	policies  map[string]*policyEntry                                  // by name
	bindings  map[string]*admissionv1.ValidatingAdmissionPolicyBinding // by name
	mutating  map[string]*mutatingEntry                                // by name
	mbindings map[string]*admissionv1.MutatingAdmissionPolicyBinding   // by name
}

func newPolicyIndex() *policyIndex {
	return &policyIndex{
		policies: map[string]*policyEntry{}, bindings: map[string]*admissionv1.ValidatingAdmissionPolicyBinding{},
		mutating: map[string]*mutatingEntry{}, mbindings: map[string]*admissionv1.MutatingAdmissionPolicyBinding{},
	}
}

// policyEntry is one generation of a policy, compiled on first use.
type policyEntry struct {
	policy   *admissionv1.ValidatingAdmissionPolicy
	once     sync.Once
	compiled *compiledPolicy
}

func (e *policyEntry) get() *compiledPolicy {
	e.once.Do(func() { e.compiled = compilePolicy(&e.policy.Spec) })
	return e.compiled
}

// indexPut sets (or, when obj is not a T or deleted is set, removes) name
// in m.
func indexPut[T any](m map[string]T, name string, obj storage.Object, deleted bool, entry func(storage.Object) (T, bool)) {
	v, ok := entry(obj)
	if deleted || !ok {
		delete(m, name)
		return
	}
	m[name] = v
}

func same[T any](o storage.Object) (T, bool) {
	v, ok := o.(T)
	return v, ok
}

// put records a stored policy or binding (deleted: removes it). A policy
// written with the same generation (a status write) keeps its compiled
// expressions.
func (x *policyIndex) put(key string, obj storage.Object, deleted bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case strings.HasPrefix(key, policyPrefix):
		name := strings.TrimPrefix(key, policyPrefix)
		indexPut(x.policies, name, obj, deleted, func(o storage.Object) (*policyEntry, bool) {
			p, ok := o.(*admissionv1.ValidatingAdmissionPolicy)
			if cur := x.policies[name]; ok && cur != nil && cur.policy.UID == p.UID && cur.policy.Generation == p.Generation {
				return cur, true
			}
			return &policyEntry{policy: p}, ok
		})
	case strings.HasPrefix(key, policyBindingPrefix):
		indexPut(x.bindings, strings.TrimPrefix(key, policyBindingPrefix), obj, deleted, same[*admissionv1.ValidatingAdmissionPolicyBinding])
	case strings.HasPrefix(key, mutatingPrefix):
		name := strings.TrimPrefix(key, mutatingPrefix)
		indexPut(x.mutating, name, obj, deleted, func(o storage.Object) (*mutatingEntry, bool) {
			p, ok := o.(*admissionv1.MutatingAdmissionPolicy)
			if cur := x.mutating[name]; ok && cur != nil && cur.policy.UID == p.UID && cur.policy.Generation == p.Generation {
				return cur, true
			}
			return &mutatingEntry{policy: p}, ok
		})
	case strings.HasPrefix(key, mutatingBindingPrefix):
		indexPut(x.mbindings, strings.TrimPrefix(key, mutatingBindingPrefix), obj, deleted, same[*admissionv1.MutatingAdmissionPolicyBinding])
	}
}

// bound is a binding (B) with its policy's entry (E).
type bound[B metav1.Object, E any] struct {
	binding B
	policy  E
}

// boundPolicy is a ValidatingAdmissionPolicyBinding with its policy.
type boundPolicy = bound[*admissionv1.ValidatingAdmissionPolicyBinding, *policyEntry]

// snapshot returns the bindings whose policy exists, by policy then
// binding name.
func (x *policyIndex) snapshot() []boundPolicy {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return boundOf(x.bindings, x.policies, func(b *admissionv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
}

// boundOf pairs the bindings with the policies they name (policyName),
// leaving out those whose policy does not exist, by policy then binding
// name.
func boundOf[B metav1.Object, E any](bindings map[string]B, policies map[string]E, policyName func(B) string) []bound[B, E] {
	out := make([]bound[B, E], 0, len(bindings))
	for _, b := range bindings {
		if p, ok := policies[policyName(b)]; ok {
			out = append(out, bound[B, E]{b, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].binding, out[j].binding
		if pa, pb := policyName(a), policyName(b); pa != pb {
			return pa < pb
		}
		return a.GetName() < b.GetName()
	})
	return out
}

// policyStore is the server's store with the policy index kept current:
// every write of a policy or binding updates it before the write returns.
type policyStore struct {
	storage.Interface
	x *policyIndex
	s *Server
}

func isPolicyKey(key string) bool {
	return slices.ContainsFunc(policyPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
}

func (w *policyStore) Create(ctx context.Context, key string, obj storage.Object) (storage.Object, error) {
	out, err := w.Interface.Create(ctx, key, obj)
	if err == nil && isPolicyKey(key) {
		w.x.put(key, out, false)
		w.policyStatus(ctx, key, out)
	}
	return out, err
}

func (w *policyStore) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *storage.Preconditions,
	tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	out, err := w.Interface.GuaranteedUpdate(ctx, key, allowCreate, pre, tryUpdate)
	if err == nil && isPolicyKey(key) {
		w.x.put(key, out, false)
		w.policyStatus(ctx, key, out)
	}
	return out, err
}

func (w *policyStore) Delete(ctx context.Context, key string, pre *storage.Preconditions, validate func(storage.Object) error) (storage.Object, error) {
	out, err := w.Interface.Delete(ctx, key, pre, validate)
	if err == nil && isPolicyKey(key) {
		w.x.put(key, out, true)
	}
	return out, err
}

// startPolicies puts the policy index on the store and fills it with the
// policies and bindings already stored.
func (s *Server) startPolicies() error {
	x := newPolicyIndex()
	for _, prefix := range policyPrefixes {
		list, err := s.store.List(s.ctx, prefix, storage.ListOptions{})
		if err != nil {
			return fmt.Errorf("apiserver: listing admission policies: %w", err)
		}
		for _, o := range list.Items {
			x.put(prefix+o.GetName(), o, false)
		}
	}
	s.policies = x
	s.store = &policyStore{Interface: s.store, x: x, s: s}
	return nil
}

// compiledPolicy is a policy's expressions, compiled. An expression that
// does not compile is kept with its error, which fails the requests it
// would run on (under the failure policy).
type compiledPolicy struct {
	compiledCommon
	validations []compiledValidation
	audits      []compiledExpr
}

// compiledCommon is what validating and mutating policies share: their
// failure policy, matchConditions and variables.
type compiledCommon struct {
	err        error // the environment could not be built
	failOpen   bool  // failurePolicy Ignore
	conditions []compiledExpr
	varNames   []string
	vars       []compiledExpr
}

func compileCommon(fp *admissionv1.FailurePolicyType, conditions []admissionv1.MatchCondition, vars []admissionv1.Variable, mutation bool) (compiledCommon, *cel.PolicyCompiler) {
	c := compiledCommon{failOpen: fp != nil && *fp == admissionv1.Ignore}
	pc, err := cel.NewPolicyCompiler(mutation)
	if err != nil {
		c.err = err
		return c, nil
	}
	for _, v := range vars {
		e, err := pc.AddVariable(v.Name, v.Expression)
		c.varNames = append(c.varNames, v.Name)
		c.vars = append(c.vars, compiledExpr{v.Expression, e, err})
	}
	for _, m := range conditions {
		c.conditions = append(c.conditions, compileExpr(pc, m.Expression, types.BoolType))
	}
	return c, pc
}

// prepare sets the variables in vars (each to its value or its error) and
// evaluates the matchConditions: false when one is false, an error when
// one fails.
func (c *compiledCommon) prepare(vars map[string]any) (bool, error) {
	if c.err != nil {
		return false, c.err
	}
	vals := make([]ref.Val, len(c.vars))
	for i, v := range c.vars {
		vars["variables"] = cel.Variables(c.varNames[:i], vals[:i])
		out, err := v.eval(vars)
		if err != nil {
			out = types.NewErr("%v", err)
		}
		vals[i] = out
	}
	vars["variables"] = cel.Variables(c.varNames, vals)
	for _, m := range c.conditions {
		v, err := m.eval(vars)
		if err != nil {
			return false, fmt.Errorf("expression '%s' resulted in error: %v", m.src, err)
		}
		if v != types.True {
			return false, nil
		}
	}
	return true, nil
}

type compiledExpr struct {
	src  string
	expr *cel.Expression
	err  error
}

type compiledValidation struct {
	compiledExpr
	src     admissionv1.Validation
	message compiledExpr // messageExpression, when set
}

func compileExpr(pc *cel.PolicyCompiler, src string, want ...*types.Type) compiledExpr {
	if pc == nil {
		return compiledExpr{src: src, err: errors.New("compilation failed: no environment")}
	}
	e, err := pc.Compile(src, want...)
	return compiledExpr{src: src, expr: e, err: err}
}

// policyCompiles counts the policies compiled (validating and mutating),
// for tests that check a policy is compiled once per generation.
var policyCompiles atomic.Uint64

func compilePolicy(spec *admissionv1.ValidatingAdmissionPolicySpec) *compiledPolicy {
	policyCompiles.Add(1)
	common, pc := compileCommon(spec.FailurePolicy, spec.MatchConditions, spec.Variables, false)
	c := &compiledPolicy{compiledCommon: common}
	for _, v := range spec.Validations {
		cv := compiledValidation{compiledExpr: compileExpr(pc, v.Expression, types.BoolType), src: v}
		if v.MessageExpression != "" {
			cv.message = compiledExpr{src: v.MessageExpression, err: errors.New("compilation failed: no environment")}
			if pc != nil {
				cv.message.expr, cv.message.err = pc.CompileMessage(v.MessageExpression)
			}
		}
		c.validations = append(c.validations, cv)
	}
	for _, a := range spec.AuditAnnotations {
		c.audits = append(c.audits, compileExpr(pc, a.ValueExpression, types.StringType, types.NullType))
	}
	return c
}

// eval evaluates e on vars.
func (e compiledExpr) eval(vars map[string]any) (ref.Val, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.expr.Eval(vars)
}

// policyFailure is one failed validation (or evaluation error).
type policyFailure struct {
	message string
	reason  metav1.StatusReason
}

// policyRequest is what the policies see of one request.
type policyRequest struct {
	res *registry.Resource
	// reqRes, when set, is the resource the request was made to: res is
	// then an equivalent one (as), to which obj and old are converted.
	reqRes *registry.Resource
	views  map[*registry.Resource]*policyRequest // the request as other versions, by as
	sub    string                                // the subresource written, if any
	// kind, when set, is the kind of obj and old when it is not res's (a
	// Scale written through the scale subresource).
	kind      *metav1.GroupVersionKind
	op        string          // CREATE, UPDATE, DELETE
	obj, old  registry.Object // obj nil for a delete, old for a create
	namespace string
	name      string
	dryRun    bool
	vars      map[string]any // object, oldObject, request, namespaceObject
	nsLabels  map[string]string
	nsRead    bool
}

// newPolicyRequest describes a create (old nil), update, or delete (obj
// nil) of a resource or of its subresource sub.
func newPolicyRequest(res *registry.Resource, sub string, obj, old registry.Object, dryRun bool) *policyRequest {
	r := &policyRequest{res: res, sub: sub, op: "CREATE", obj: obj, old: old, dryRun: dryRun}
	switch {
	case obj == nil:
		r.op, obj = "DELETE", old
	case old != nil:
		r.op = "UPDATE"
	}
	r.namespace, r.name = obj.GetNamespace(), obj.GetName()
	return r
}

// as is r seen as a request of matched: r itself, or, for an equivalent
// resource (admission_equivalent.go), the request with its objects
// converted to matched's version.
func (r *policyRequest) as(ctx context.Context, matched *registry.Resource) (*policyRequest, error) {
	if matched == r.res {
		return r, nil
	}
	if v := r.views[matched]; v != nil {
		return v, nil
	}
	obj, err := inVersion(ctx, r.res, matched, r.obj)
	if err != nil {
		return nil, err
	}
	old, err := inVersion(ctx, r.res, matched, r.old)
	if err != nil {
		return nil, err
	}
	v := *r
	v.res, v.reqRes, v.views, v.obj, v.old, v.vars = matched, r.res, nil, obj, old, nil
	if r.views == nil {
		r.views = map[*registry.Resource]*policyRequest{}
	}
	r.views[matched] = &v
	return &v, nil
}

// admitPolicies runs the ValidatingAdmissionPolicies bound to a create
// (old nil), update or delete (obj nil) of a resource or of its
// subresource sub.
func (s *Server) admitPolicies(ctx context.Context, res *registry.Resource, sub string, obj, old registry.Object, o *writeOptions) *metav1.Status {
	return s.admitPolicyRequest(ctx, newPolicyRequest(res, sub, obj, old, o.DryRun), o)
}

// admitPolicyRequest runs the ValidatingAdmissionPolicies bound to r.
func (s *Server) admitPolicyRequest(ctx context.Context, r *policyRequest, o *writeOptions) *metav1.Status {
	if s.policies == nil || !s.admissionOn("ValidatingAdmissionPolicy") {
		return nil
	}
	bound := s.policies.snapshot()
	if len(bound) == 0 {
		return nil
	}
	res := r.res
	var denied *policyFailure
	var deniedBy boundPolicy
	for _, bp := range bound {
		p, b := bp.policy.policy, bp.binding
		matched := s.policyMatch(ctx, r, p.Spec.MatchConstraints, false)
		if matched == nil || b.Spec.MatchResources != nil && s.policyMatch(ctx, r, b.Spec.MatchResources, true) == nil {
			continue
		}
		var failures []policyFailure
		if view, err := r.as(ctx, matched); err != nil {
			if !bp.policy.get().failOpen {
				failures = []policyFailure{{message: err.Error(), reason: metav1.StatusReasonInvalid}}
			}
		} else {
			failures = s.evalBinding(ctx, view, bp)
		}
		for _, f := range failures {
			for _, a := range b.Spec.ValidationActions {
				switch a {
				case admissionv1.Deny:
					if denied == nil {
						denied, deniedBy = &f, bp
					}
				case admissionv1.Warn:
					o.warn(fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.Name, b.Name, f.message))
				}
			}
		}
	}
	if denied == nil {
		return nil
	}
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s",
		deniedBy.policy.policy.Name, deniedBy.binding.Name, denied.message)
	st := metav1.NewForbidden(res.GroupResource(), r.name, errors.New(msg))
	st.Reason, st.Code = denied.reason, reasonCode(denied.reason)
	st.Details.Causes = []metav1.StatusCause{{Message: msg}}
	return st
}

// reasonCode is the status code of a validation's reason, as
// kube-apiserver maps it.
func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	case metav1.StatusReasonInvalid:
		return http.StatusUnprocessableEntity
	}
	return http.StatusBadRequest
}

// evalBinding evaluates a policy for one binding: once per param (once
// without params), returning its failures.
func (s *Server) evalBinding(ctx context.Context, r *policyRequest, bp boundPolicy) []policyFailure {
	c := bp.policy.get()
	fail := func(err error) []policyFailure {
		if c.failOpen {
			return nil
		}
		return []policyFailure{{message: err.Error(), reason: metav1.StatusReasonInvalid}}
	}
	params, err := s.policyParams(ctx, r, bp.policy.policy.Spec.ParamKind, bp.binding.Spec.ParamRef)
	if err != nil {
		return fail(err)
	}
	var out []policyFailure
	for _, p := range params {
		out = append(out, s.evalPolicy(ctx, r, c, p)...)
	}
	return out
}

// errNoParams is the failure of a binding whose params are missing, with
// parameterNotFoundAction Deny.
var errNoParams = errors.New("failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")

// policyParams are the params a binding evaluates its policy with: one
// nil when the policy has no paramKind, none when they are not found and
// parameterNotFoundAction is Allow.
func (s *Server) policyParams(ctx context.Context, r *policyRequest, pk *admissionv1.ParamKind, pref *admissionv1.ParamRef) ([]ref.Val, error) {
	if pk == nil {
		return []ref.Val{types.NullValue}, nil
	}
	if pref == nil {
		return nil, fmt.Errorf("failed to configure binding: paramRef is required when paramKind is set")
	}
	group, version, _ := strings.Cut(pk.APIVersion, "/")
	if version == "" {
		group, version = "", group
	}
	var pres *registry.Resource
	for _, res := range s.reg.ForGroupVersion(group, version) {
		if res.Kind == pk.Kind && !strings.Contains(res.Resource, "/") {
			pres = res
			break
		}
	}
	if pres == nil {
		return nil, fmt.Errorf("failed to configure policy: failed to find resource referenced by paramKind: '%s, Kind=%s'", pk.APIVersion, pk.Kind)
	}
	ns := ""
	if pres.Namespaced {
		ns = pref.Namespace
		if ns == "" {
			ns = r.namespace
		}
	}
	var found []storage.Object
	if pref.Name != "" {
		if o := s.readObject(ctx, pres.Group, pres.Resource, ns, pref.Name); o != nil {
			found = append(found, o)
		}
	} else if pref.Selector != nil {
		sel, err := selector.FromLabelSelector(pref.Selector)
		if err != nil {
			return nil, fmt.Errorf("failed to configure binding: %v", err)
		}
		for _, o := range readObjects[storage.Object](ctx, s, pres.Group, pres.Resource, ns) {
			if sel.Matches(selector.Set(o.GetLabels())) {
				found = append(found, o)
			}
		}
	}
	if len(found) == 0 {
		if pref.ParameterNotFoundAction != nil && *pref.ParameterNotFoundAction == admissionv1.AllowAction {
			return nil, nil
		}
		return nil, errNoParams
	}
	out := make([]ref.Val, len(found))
	for i, o := range found {
		out[i] = celObject(pres, o)
	}
	return out, nil
}

// evalPolicy evaluates a policy's expressions on a request with params.
func (s *Server) evalPolicy(ctx context.Context, r *policyRequest, c *compiledPolicy, params ref.Val) []policyFailure {
	vars := maps.Clone(s.policyVars(ctx, r))
	vars["params"] = params
	var out []policyFailure
	fail := func(err error) []policyFailure {
		if c.failOpen {
			return out
		}
		return append(out, policyFailure{message: err.Error(), reason: metav1.StatusReasonInvalid})
	}
	if ok, err := c.prepare(vars); err != nil {
		return fail(err)
	} else if !ok {
		return nil
	}
	for _, v := range c.validations {
		res, err := v.eval(vars)
		if err != nil {
			out = fail(fmt.Errorf("expression '%s' resulted in error: %v", v.src.Expression, err))
			continue
		}
		if res == types.True {
			continue
		}
		reason := metav1.StatusReasonInvalid
		if v.src.Reason != nil && *v.src.Reason != "" {
			reason = *v.src.Reason
		}
		out = append(out, policyFailure{message: validationMessage(v, vars), reason: reason})
	}
	for _, a := range c.audits {
		if _, err := a.eval(vars); err != nil {
			out = fail(fmt.Errorf("expression '%s' resulted in error: %v", a.src, err))
		}
	}
	return out
}

// validationMessage words a failed validation: its messageExpression's
// value when that is a non-empty single line, else its message, else the
// expression.
func validationMessage(v compiledValidation, vars map[string]any) string {
	if v.src.MessageExpression != "" {
		if m, err := v.message.eval(vars); err == nil {
			if s, ok := m.Value().(string); ok && strings.TrimSpace(s) != "" && !strings.ContainsAny(s, "\r\n") {
				return strings.TrimSpace(s)
			}
		}
	}
	if v.src.Message != "" {
		return v.src.Message
	}
	return "failed expression: " + strings.TrimSpace(v.src.Expression)
}

// policyVars are the variables of a request that do not depend on the
// binding: object, oldObject, request and namespaceObject.
func (s *Server) policyVars(ctx context.Context, r *policyRequest) map[string]any {
	if r.vars != nil {
		return r.vars
	}
	res := r.res
	var nsObj ref.Val = types.NullValue
	if res.Namespaced && r.namespace != "" {
		if ns := s.readObject(ctx, "", "namespaces", "", r.namespace); ns != nil {
			nsObj = celObject(s.reg.Get("", "v1", "namespaces"), ns)
		}
	}
	gvk := map[string]any{"group": res.Group, "version": res.Version, "kind": res.Kind}
	object, oldObject := celObject(res, r.obj), celObject(res, r.old)
	if k := r.kind; k != nil {
		gvk = map[string]any{"group": k.Group, "version": k.Version, "kind": k.Kind}
		object, oldObject = celObjectAs(kindAPIVersion(*k), k.Kind, r.obj), celObjectAs(kindAPIVersion(*k), k.Kind, r.old)
	}
	gvr := map[string]any{"group": res.Group, "version": res.Version, "resource": res.Resource}
	reqGVK, reqGVR := gvk, gvr
	if rr := r.reqRes; rr != nil && r.kind == nil {
		reqGVK = map[string]any{"group": rr.Group, "version": rr.Version, "kind": rr.Kind}
		reqGVR = map[string]any{"group": rr.Group, "version": rr.Version, "resource": rr.Resource}
	}
	request := map[string]any{
		"kind": gvk, "resource": gvr, "requestKind": reqGVK, "requestResource": reqGVR,
		"name": r.name, "namespace": r.namespace, "operation": r.op, "dryRun": r.dryRun,
		"userInfo": celUserInfo(contextUser(ctx)),
	}
	if r.sub != "" {
		request["subResource"], request["requestSubResource"] = r.sub, r.sub
	}
	r.vars = map[string]any{
		"object":          object,
		"oldObject":       oldObject,
		"request":         cel.JSONValue(request),
		"namespaceObject": nsObj,
	}
	reqRes := res
	if r.reqRes != nil {
		reqRes = r.reqRes
	}
	maps.Copy(r.vars, cel.AuthorizerVars(s.policyAuthz(ctx, contextUser(ctx)), cel.AuthzCheck{
		Group: reqRes.Group, Resource: reqRes.Resource, Subresource: r.sub, Namespace: r.namespace, Name: r.name}))
	return r.vars
}

// celObject is obj as policies see it: its JSON form with apiVersion and
// kind, null for none.
func celObject(res *registry.Resource, obj registry.Object) ref.Val {
	if res == nil {
		return types.NullValue
	}
	return celObjectAs(res.GroupVersion(), res.Kind, obj)
}

// kindAPIVersion is the apiVersion of objects of kind k.
func kindAPIVersion(k metav1.GroupVersionKind) string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// celObjectAs is obj as policies see it, with apiVersion and kind.
func celObjectAs(apiVersion, kind string, obj registry.Object) ref.Val {
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return types.NullValue
	}
	b, err := kjson.Marshal(obj)
	if err != nil {
		return types.NewErr("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return types.NewErr("%v", err)
	}
	normalNumbers(m)
	m["apiVersion"], m["kind"] = apiVersion, kind
	return cel.JSONValue(m)
}

// policyMatch is the resource as which a policy's matchConstraints or a
// binding's matchResources select the request: its own, or with
// matchPolicy Equivalent another version of it (admission_equivalent.go);
// nil when they do not select it.
func (s *Server) policyMatch(ctx context.Context, r *policyRequest, m *admissionv1.MatchResources, binding bool) *registry.Resource {
	if m == nil {
		if binding {
			return r.res
		}
		return nil
	}
	if !s.namespaceSelected(ctx, r, m.NamespaceSelector) || !objectSelected(r, m.ObjectSelector) {
		return nil
	}
	exact := m.MatchPolicy != nil && *m.MatchPolicy == admissionv1.Exact
	anyRule := func(rules []admissionv1.NamedRuleWithOperations) func(*registry.Resource, bool) bool {
		return func(res *registry.Resource, anyVersion bool) bool {
			return slices.ContainsFunc(rules, func(rule admissionv1.NamedRuleWithOperations) bool {
				return policyRuleMatches(r, rule, res, anyVersion)
			})
		}
	}
	if s.equivalentMatch(r.res, exact, anyRule(m.ExcludeResourceRules)) != nil {
		return nil
	}
	if len(m.ResourceRules) == 0 {
		if binding {
			return r.res
		}
		return nil
	}
	return s.equivalentMatch(r.res, exact, anyRule(m.ResourceRules))
}

// policyRuleMatches reports whether one rule selects the request as a
// request of res (its own resource or an equivalent one; in any version
// with anyVersion).
func policyRuleMatches(r *policyRequest, rule admissionv1.NamedRuleWithOperations, res *registry.Resource, anyVersion bool) bool {
	in := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	ops := make([]string, len(rule.Operations))
	for i, o := range rule.Operations {
		ops[i] = string(o)
	}
	if !in(ops, r.op) || !in(rule.APIGroups, res.Group) || !anyVersion && !in(rule.APIVersions, res.Version) {
		return false
	}
	resource := res.Resource
	if r.sub != "" {
		resource += "/" + r.sub
	}
	if !slices.ContainsFunc(rule.Resources, func(p string) bool { return resourceMatches(p, resource) }) {
		return false
	}
	if rule.Scope != nil {
		switch *rule.Scope {
		case admissionv1.ClusterScope:
			if res.Namespaced {
				return false
			}
		case admissionv1.NamespacedScope:
			if !res.Namespaced {
				return false
			}
		}
	}
	return len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, r.name)
}

// namespaceSelected applies a namespaceSelector: to the labels of the
// request's namespace, of a Namespace itself, and not to other
// cluster-scoped objects.
func (s *Server) namespaceSelected(ctx context.Context, r *policyRequest, sel *metav1.LabelSelector) bool {
	if sel == nil || len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return true
	}
	var labels map[string]string
	switch {
	case r.res.Group == "" && r.res.Resource == "namespaces":
		labels = r.objectOrOld().GetLabels()
	case !r.res.Namespaced:
		return true
	default:
		if !r.nsRead {
			if ns := s.readObject(ctx, "", "namespaces", "", r.namespace); ns != nil {
				r.nsLabels = ns.GetLabels()
			}
			r.nsRead = true
		}
		labels = r.nsLabels
	}
	return labelsSelected(sel, labels)
}

// objectSelected applies an objectSelector to the new and old object's
// labels (either selected).
func objectSelected(r *policyRequest, sel *metav1.LabelSelector) bool {
	if sel == nil || len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return true
	}
	return r.obj != nil && labelsSelected(sel, r.obj.GetLabels()) || r.old != nil && labelsSelected(sel, r.old.GetLabels())
}

// objectOrOld is the request's object, or the old one of a delete.
func (r *policyRequest) objectOrOld() registry.Object {
	if r.obj != nil {
		return r.obj
	}
	return r.old
}

func labelsSelected(sel *metav1.LabelSelector, labels map[string]string) bool {
	s, err := selector.FromLabelSelector(sel)
	return err == nil && s.Matches(selector.Set(labels))
}
