package registry

import (
	authenticationv1 "github.com/kapi-dev/kapi/api/authentication/v1"
	authorizationv1 "github.com/kapi-dev/kapi/api/authorization/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

// virtualKinds are the resources kube-apiserver serves without storing
// them: the authentication and authorization reviews and core/v1 bindings.
// Each is only created; the server answers the create itself (the reviews
// by its authenticator and authorizer, a binding by setting the pod's
// node), so none has hooks of the write pipeline.
func virtualKinds(Options, services) []*Resource {
	return []*Resource{
		kind[corev1.Binding]("", "v1", "bindings", Resource{NotStored: true}),
		kind[authenticationv1.TokenReview]("authentication.k8s.io", "v1", "tokenreviews", Resource{NotStored: true}),
		kind[authenticationv1.SelfSubjectReview]("authentication.k8s.io", "v1", "selfsubjectreviews", Resource{NotStored: true}),
		kind[authorizationv1.SubjectAccessReview]("authorization.k8s.io", "v1", "subjectaccessreviews", Resource{NotStored: true}),
		kind[authorizationv1.LocalSubjectAccessReview]("authorization.k8s.io", "v1", "localsubjectaccessreviews", Resource{NotStored: true}),
		kind[authorizationv1.SelfSubjectAccessReview]("authorization.k8s.io", "v1", "selfsubjectaccessreviews", Resource{NotStored: true}),
		kind[authorizationv1.SelfSubjectRulesReview]("authorization.k8s.io", "v1", "selfsubjectrulesreviews", Resource{NotStored: true}),
	}
}

// QOSClass is the quality-of-service class of a pod with spec, as the
// kubelet and kube-apiserver compute it (pods/resize may not change it).
func QOSClass(spec *corev1.PodSpec) corev1.PodQOSClass { return qosClass(spec) }
