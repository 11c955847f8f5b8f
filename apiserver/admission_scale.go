package apiserver

import (
	"context"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	autoscalingv1 "github.com/kapi-dev/kapi/api/autoscaling/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// # Admission of the scale subresource
//
// A write of a resource's scale subresource is admitted as
// kube-apiserver admits it: the webhooks and ValidatingAdmissionPolicies
// whose rules name "resource/scale" are sent the Scale (autoscaling/v1)
// as object and old object, with the resource's group, version and
// resource and subResource "scale": the mutating webhooks first (their
// patches change the Scale written), then, once the Scale is valid, the
// policies and the validating webhooks.

// scaleKind is the kind of the objects of a scale subresource.
var scaleKind = metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// scaleView is res as the admission of its scale subresource sees it:
// its objects are Scales.
func scaleView(res *registry.Resource) *registry.Resource {
	return &registry.Resource{
		Group: res.Group, Version: res.Version, Resource: res.Resource, Kind: scaleKind.Kind, Namespaced: res.Namespaced,
		New: func() registry.Object { return &autoscalingv1.Scale{} },
		WithTypeMeta: func(o registry.Object) registry.Object {
			sc := o.(*autoscalingv1.Scale).DeepCopy()
			sc.TypeMeta = metav1.TypeMeta{APIVersion: kindAPIVersion(scaleKind), Kind: scaleKind.Kind}
			return sc
		},
	}
}

// admitScale admits the write of next over cur through rs's scale
// subresource: the mutating webhooks (which may change next) when
// mutating, the ValidatingAdmissionPolicies and validating webhooks
// otherwise.
func (rs resourceStore) admitScale(ctx context.Context, o *writeOptions, next, cur *autoscalingv1.Scale, mutating bool) *metav1.Status {
	view := scaleView(rs.res)
	if !mutating {
		pr := newPolicyRequest(view, "scale", next, cur, o.DryRun)
		pr.kind, pr.namespace, pr.name = &scaleKind, cur.Namespace, cur.Name
		if st := rs.s.admitPolicyRequest(ctx, pr, o); st != nil {
			return st
		}
	}
	hooks := rs.s.webhooksOf(ctx, mutating)
	if len(hooks) == 0 {
		return nil
	}
	opts := map[string]any{"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
	if o.DryRun {
		opts["dryRun"] = []string{"All"}
	}
	r := &webhookRequest{res: view, subresource: "scale", kind: &scaleKind, name: cur.Name, obj: next, old: cur, dryRun: o.DryRun, options: opts,
		operation: admissionregistrationv1.OperationType(admissionv1.Update)}
	if rs.res.Namespaced {
		r.ns = cur.Namespace
	}
	if mutating {
		return rs.s.runMutatingWebhooks(ctx, hooks, r, o)
	}
	return rs.s.runValidatingWebhooks(ctx, hooks, r, o)
}
