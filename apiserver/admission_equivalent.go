package apiserver

import (
	"context"

	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// # matchPolicy Equivalent
//
// A webhook or policy whose matchPolicy is Equivalent (the default) and
// whose rules do not name the resource of a request in its version
// selects it still when they name an equivalent resource: the same
// group and resource in another version the server serves (the versions
// of a multi-version CRD; kapi serves one version of each built-in
// resource but HorizontalPodAutoscalers). It is then sent the request as
// if made in that version: the object and old object converted to it,
// kind and resource of it, requestKind and requestResource of the
// request's own; what a mutating webhook changes is converted back.
//
// kapi cannot convert built-in objects between versions: a rule naming
// another version of a built-in resource (autoscaling/v2 for a request in
// autoscaling/v1) selects the request, which is sent in its own version.

// equivalentMatch is the resource, res itself or an equivalent one, whose
// version a webhook's or policy's rules select, by matches; nil when none
// does (or only res is tried, exact). matches is asked about a resource,
// or (anyVersion) about res in whatever version the rules name.
func (s *Server) equivalentMatch(res *registry.Resource, exact bool, matches func(res *registry.Resource, anyVersion bool) bool) *registry.Resource {
	switch {
	case matches(res, false):
		return res
	case exact:
		return nil
	case !res.Custom:
		if matches(res, true) {
			return res
		}
		return nil
	}
	for _, other := range s.reg.ByGroupResource(res.Group, res.Resource) {
		if other.Version != res.Version && matches(other, false) {
			return other
		}
	}
	return nil
}

// inVersion is o, an object of from, as an object of to (from itself or
// an equivalent resource): converted by to's conversion webhook, or the
// same object in to's apiVersion when the CRD converts nothing. nil stays
// nil.
func inVersion(ctx context.Context, from, to *registry.Resource, o registry.Object) (registry.Object, error) {
	if o == nil || from == to {
		return o, nil
	}
	if to.Convert != nil {
		return to.Convert(ctx, o, to.Version)
	}
	return to.WithTypeMeta(o), nil
}

// backFrom is o, converted to an equivalent resource by inVersion and
// changed there, as an object of res again in the apiVersion orig, the
// object it was converted from, has.
func backFrom(ctx context.Context, res *registry.Resource, o, orig registry.Object) (registry.Object, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return o, nil
	}
	want := orig.(*unstructured.Unstructured).GetAPIVersion()
	if res.Convert != nil && u.GetAPIVersion() != want {
		_, version, err := unstructured.SplitAPIVersion(want)
		if err != nil {
			return nil, err
		}
		converted, err := res.Convert(ctx, u, version)
		if err != nil {
			return nil, err
		}
		return converted, nil
	}
	u.SetAPIVersion(want)
	return u, nil
}
