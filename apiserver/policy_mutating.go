package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/cel-go/common/types/ref"

	admissionv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/internal/cel"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// # Mutating admission policies
//
// MutatingAdmissionPolicies and their bindings run at the end of the
// mutating admission phase (admitMutating), as kube-apiserver's
// MutatingAdmissionPolicy plugin, on creates and updates of resources.
// A binding applies as a ValidatingAdmissionPolicy's does (match
// constraints, matchResources, params, matchConditions, variables); its
// policy's mutations then change the object in order, each seeing the
// object the previous ones left:
//
//   - JSONPatch: the expression gives a list of JSONPatch{op, path, from,
//     value}, applied as an RFC 6902 patch (a failing test operation leaves
//     the object as it is);
//   - ApplyConfiguration: the expression gives an Object{...}, merged into
//     the object as server-side apply merges (without field ownership).
//
// Like kube-apiserver, the changes are not recorded in managedFields. An
// expression that fails, or a patch that does not apply, refuses the
// request under failurePolicy Fail ("policy 'p' with binding 'b' denied
// request: ...", 403 with reason Invalid, as kube-apiserver answers) and is
// skipped under Ignore. A policy with reinvocationPolicy IfNeeded runs once
// more when a policy after it changed the object.

// mutatingEntry is one generation of a mutating policy, compiled on first
// use.
type mutatingEntry struct {
	policy   *admissionv1.MutatingAdmissionPolicy
	once     sync.Once
	compiled *compiledMutating
}

func (e *mutatingEntry) get() *compiledMutating {
	e.once.Do(func() { e.compiled = compileMutating(&e.policy.Spec) })
	return e.compiled
}

type compiledMutating struct {
	compiledCommon
	mutations []compiledMutation
}

type compiledMutation struct {
	compiledExpr
	jsonPatch bool
}

func compileMutating(spec *admissionv1.MutatingAdmissionPolicySpec) *compiledMutating {
	policyCompiles.Add(1)
	common, pc := compileCommon(spec.FailurePolicy, spec.MatchConditions, spec.Variables, true)
	c := &compiledMutating{compiledCommon: common}
	for _, m := range spec.Mutations {
		var src string
		jp := m.PatchType == admissionv1.PatchTypeJSONPatch
		switch {
		case jp && m.JSONPatch != nil:
			src = m.JSONPatch.Expression
		case !jp && m.ApplyConfiguration != nil:
			src = m.ApplyConfiguration.Expression
		}
		ce := compileExpr(pc, src)
		if pc != nil {
			e, err := pc.CompileMutation(src, jp)
			ce = compiledExpr{src: src, expr: e, err: err}
		}
		c.mutations = append(c.mutations, compiledMutation{ce, jp})
	}
	return c
}

// boundMutating is a MutatingAdmissionPolicyBinding with its policy.
type boundMutating = bound[*admissionv1.MutatingAdmissionPolicyBinding, *mutatingEntry]

// mutatingSnapshot returns the mutating bindings whose policy exists, by
// policy then binding name.
func (x *policyIndex) mutatingSnapshot() []boundMutating {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return boundOf(x.mbindings, x.mutating, func(b *admissionv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName })
}

// admitMutatingPolicies runs the MutatingAdmissionPolicies bound to a
// create (old nil) or update of a resource, changing obj in place; name is
// what a refusal calls the object.
func (s *Server) admitMutatingPolicies(ctx context.Context, res *registry.Resource, name string, obj, old registry.Object, dryRun bool) *metav1.Status {
	if s.policies == nil || !s.admissionOn("MutatingAdmissionPolicy") {
		return nil
	}
	bound := s.policies.mutatingSnapshot()
	if len(bound) == 0 {
		return nil
	}
	r := newPolicyRequest(res, "", obj, old, dryRun)
	lastChange := -1 // the index of the last binding that changed the object
	var ran []int    // bindings with reinvocationPolicy IfNeeded that ran
	for i, bp := range bound {
		matched, changed, err := s.runMutating(ctx, r, bp)
		if err != nil {
			return mutatingDenial(res, name, bp, err)
		}
		if changed {
			lastChange = i
		}
		if matched && bp.policy.policy.Spec.ReinvocationPolicy == admissionv1.IfNeededReinvocationPolicy {
			ran = append(ran, i)
		}
	}
	for _, i := range ran {
		if i >= lastChange {
			continue // nothing changed the object after it ran
		}
		if _, _, err := s.runMutating(ctx, r, bound[i]); err != nil {
			return mutatingDenial(res, name, bound[i], err)
		}
	}
	return nil
}

// mutatingDenial is the refusal of a request by a mutating policy, worded
// as kube-apiserver's.
func mutatingDenial(res *registry.Resource, name string, bp boundMutating, err error) *metav1.Status {
	msg := fmt.Sprintf("policy '%s' with binding '%s' denied request: %v", bp.policy.policy.Name, bp.binding.Name, err)
	st := metav1.NewForbidden(res.GroupResource(), name, err)
	st.Message, st.Reason = msg, metav1.StatusReasonInvalid
	st.Details.Causes = []metav1.StatusCause{{Message: msg}}
	return st
}

// runMutating applies one binding's policy to r.obj: whether the binding
// matched, whether the object changed, and the error that refuses the
// request (nil under failurePolicy Ignore).
func (s *Server) runMutating(ctx context.Context, r *policyRequest, bp boundMutating) (matched, changed bool, err error) {
	p, b := bp.policy.policy, bp.binding
	// An equivalent resource's request is evaluated in the request's own
	// version (a mutation is not converted back yet).
	if s.policyMatch(ctx, r, p.Spec.MatchConstraints, false) == nil ||
		b.Spec.MatchResources != nil && s.policyMatch(ctx, r, b.Spec.MatchResources, true) == nil {
		return false, false, nil
	}
	c := bp.policy.get()
	failed := func(err error) (bool, bool, error) {
		if c.failOpen {
			return true, changed, nil
		}
		return true, changed, err
	}
	params, err := s.policyParams(ctx, r, p.Spec.ParamKind, b.Spec.ParamRef)
	if err != nil {
		return failed(err)
	}
	for _, param := range params {
		for _, m := range c.mutations {
			vars := s.policyVars(ctx, r)
			vars["params"] = param
			if ok, err := c.prepare(vars); err != nil {
				return failed(err)
			} else if !ok {
				return true, changed, nil
			}
			out, err := m.eval(vars)
			if err != nil {
				return failed(fmt.Errorf("expression '%s' resulted in error: %v", m.src, err))
			}
			did, err := s.mutate(r, m.jsonPatch, out)
			if err != nil {
				return failed(err)
			}
			if did {
				changed = true
				r.vars = nil // object changed
			}
		}
	}
	return true, changed, nil
}

// mutate applies a mutation's result to r.obj: whether it changed.
func (s *Server) mutate(r *policyRequest, jsonPatch bool, out ref.Val) (bool, error) {
	native, err := cel.Native(out)
	if err != nil {
		return false, err
	}
	doc, err := toMap(r.res, r.obj)
	if err != nil {
		return false, err
	}
	var next map[string]any
	if jsonPatch {
		ops, err := json.Marshal(native)
		if err != nil {
			return false, err
		}
		patch, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			return false, fmt.Errorf("JSON Patch: %v", err)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return false, err
		}
		patched, err := patch.Apply(raw)
		if errors.Is(err, jsonpatch.ErrTestFailed) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("JSON Patch: %v", err)
		}
		if next, err = decodeJSONObject(patched); err != nil {
			return false, err
		}
	} else {
		config, ok := native.(map[string]any)
		if !ok {
			return false, errors.New("apply configuration must be an object")
		}
		m, err := s.fieldManager(r.res, "")
		if err != nil {
			return false, err
		}
		if next, err = m.Merge(doc, config); err != nil {
			return false, fmt.Errorf("ApplyConfiguration: %v", err)
		}
	}
	if reflect.DeepEqual(doc, next) {
		return false, nil
	}
	b, err := kjson.Marshal(next)
	if err != nil {
		return false, err
	}
	obj := r.res.New()
	if err := kjson.Unmarshal(b, obj); err != nil {
		return false, err
	}
	if k, ok := obj.(interface{ GetObjectKind() *metav1.TypeMeta }); ok {
		*k.GetObjectKind() = metav1.TypeMeta{}
	}
	reflect.ValueOf(r.obj).Elem().Set(reflect.ValueOf(obj).Elem())
	return true, nil
}
