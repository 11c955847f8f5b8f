package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	authenticationv1 "github.com/kapi-dev/kapi/api/authentication/v1"
	authorizationv1 "github.com/kapi-dev/kapi/api/authorization/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// The reviews (authentication.k8s.io tokenreviews and selfsubjectreviews,
// authorization.k8s.io's four access reviews) are created and never
// stored: the answer is the object sent with its status filled in by the
// server's authenticator or authorizer, as kube-apiserver's REST storage
// of these kinds does. The managed fields of what the client sent are
// recorded on the answer (kube-apiserver's create handler tracks them
// before the storage sees the object); a SelfSubjectReview and a
// SelfSubjectRulesReview answer with a new object and carry none.

// createNotStored answers the create of a resource that is not stored.
func (h *handler) createNotStored() {
	mt, opts, obj, ok := h.createRequest(h.res)
	if !ok {
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	if h.res.Group == "" && h.res.Resource == "bindings" {
		h.createBinding(obj, h.dryRun(opts.DryRun)) // binding.go
		return
	}
	h.store().track(h.writeOptions(false), nil, obj)
	out, st := h.review(obj)
	if st != nil {
		h.fail(st)
		return
	}
	h.writeObject(mt, http.StatusCreated, out)
}

// review answers a review.
func (h *handler) review(obj registry.Object) (registry.Object, *metav1.Status) {
	ctx := h.r.Context()
	user := h.s.requestUser(h.r)
	switch o := obj.(type) {
	case *authenticationv1.TokenReview:
		if o.Spec.Token == "" {
			return nil, metav1.NewBadRequest("token is required for TokenReview in authentication")
		}
		o.Status = h.s.reviewToken(ctx, o.Spec.Token, o.Spec.Audiences)
		return o, nil
	case *authenticationv1.SelfSubjectReview:
		out := &authenticationv1.SelfSubjectReview{}
		out.CreationTimestamp = metav1.NewTime(h.s.cfg.Now().UTC().Truncate(time.Second))
		out.Status.UserInfo = userInfo(user)
		return out, nil
	case *authorizationv1.SubjectAccessReview:
		errs := validateAccessSpec(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		if o.Spec.User == "" && len(o.Spec.Groups) == 0 {
			errs = append(errs, metav1.FieldInvalid("spec.user", o.Spec.User, "at least one of user or group must be specified"))
		}
		if len(errs) > 0 {
			return nil, reviewInvalid(errs)
		}
		o.Status = h.s.access(ctx, subjectOf(o.Spec), o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		return o, nil
	case *authorizationv1.LocalSubjectAccessReview:
		errs := validateAccessSpec(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		if o.Spec.User == "" && len(o.Spec.Groups) == 0 {
			errs = append(errs, metav1.FieldInvalid("spec.user", o.Spec.User, "at least one of user or group must be specified"))
		}
		if o.Spec.NonResourceAttributes != nil {
			errs = append(errs, metav1.FieldInvalid("spec.nonResourceAttributes", jsonValue{o.Spec.NonResourceAttributes}, "disallowed on this kind of request"))
		}
		if ra := o.Spec.ResourceAttributes; ra != nil && ra.Namespace != o.Namespace {
			errs = append(errs, metav1.FieldInvalid("spec.resourceAttributes.namespace", ra.Namespace, "must match metadata.namespace"))
		}
		if len(errs) > 0 {
			return nil, reviewInvalid(errs)
		}
		o.Status = h.s.access(ctx, subjectOf(o.Spec), o.Spec.ResourceAttributes, nil)
		return o, nil
	case *authorizationv1.SelfSubjectAccessReview:
		if errs := validateAccessSpec(o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes); len(errs) > 0 {
			return nil, reviewInvalid(errs)
		}
		o.Status = h.s.access(ctx, user, o.Spec.ResourceAttributes, o.Spec.NonResourceAttributes)
		return o, nil
	case *authorizationv1.SelfSubjectRulesReview:
		if o.Spec.Namespace == "" {
			return nil, metav1.NewBadRequest("no namespace on request")
		}
		rr, nr, incomplete, err := h.s.authorizer().RulesFor(ctx, user, o.Spec.Namespace)
		out := &authorizationv1.SelfSubjectRulesReview{}
		out.Status = authorizationv1.SubjectRulesReviewStatus{Incomplete: incomplete,
			ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{}}
		if err != nil {
			out.Status.EvaluationError = err.Error()
		}
		for _, r := range rr {
			out.Status.ResourceRules = append(out.Status.ResourceRules, authorizationv1.ResourceRule{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		for _, r := range nr {
			out.Status.NonResourceRules = append(out.Status.NonResourceRules, authorizationv1.NonResourceRule{
				Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
		return out, nil
	}
	return nil, methodNotAllowed()
}

// reviewInvalid is the 422 of an invalid access review: kube-apiserver
// names its group only (".authorization.k8s.io \"\" is invalid: ...").
func reviewInvalid(errs metav1.FieldErrors) *metav1.Status {
	return metav1.NewInvalid(metav1.GroupKind{Group: "authorization.k8s.io"}, "", errs)
}

// jsonValue shows a bad value as kube-apiserver v1.37 prints a struct: as
// the JSON of its Go fields.
type jsonValue struct{ v any }

func (j jsonValue) String() string {
	b, err := json.Marshal(goFields(j.v))
	if err != nil {
		return "<unprintable>"
	}
	return string(b)
}

// goFields is v as a map keyed by its Go field names (what encoding/json
// prints for kube-apiserver's internal types, which have no JSON tags).
func goFields(v any) any {
	switch v := v.(type) {
	case *authorizationv1.NonResourceAttributes:
		if v == nil {
			return nil
		}
		return struct{ Path, Verb string }{v.Path, v.Verb}
	}
	return v
}

// validateAccessSpec checks the attributes of an access review: exactly
// one of resourceAttributes and nonResourceAttributes.
func validateAccessSpec(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) metav1.FieldErrors {
	if (ra == nil) == (nra == nil) {
		return metav1.FieldErrors{metav1.FieldInvalid("spec", jsonValue{nra}, "exactly one of nonResourceAttributes or resourceAttributes must be specified")}
	}
	return nil
}

// subjectOf is the user a SubjectAccessReview asks about.
func subjectOf(spec authorizationv1.SubjectAccessReviewSpec) User {
	u := User{Name: spec.User, UID: spec.UID, Groups: spec.Groups}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = v
		}
	}
	return u
}

// userInfo is u as the reviews show it.
func userInfo(u User) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			info.Extra[k] = v
		}
	}
	return info
}

// access asks the server's authorizer whether user may do what the review
// describes.
func (s *Server) access(ctx context.Context, user User, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	a := Attributes{User: user}
	if ra != nil {
		a.ResourceRequest = true
		a.Verb, a.Namespace, a.APIGroup, a.APIVersion = ra.Verb, ra.Namespace, ra.Group, ra.Version
		a.Resource, a.Subresource, a.Name = ra.Resource, ra.Subresource, ra.Name
	} else if nra != nil {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	d, reason, err := s.authorizer().Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == DecisionAllow, Denied: d == DecisionDeny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}
