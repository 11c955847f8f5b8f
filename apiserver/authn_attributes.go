package apiserver

import (
	"errors"
	"fmt"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// forbiddenStatus is the 403 Status kube-apiserver answers when its
// authorizer does not allow a; reason, when not empty, ends the message.
func forbiddenStatus(a Attributes, reason string) *metav1.Status {
	var msg string
	switch resource := a.Resource; {
	case !a.ResourceRequest:
		msg = fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	default:
		if a.Subresource != "" {
			resource += "/" + a.Subresource
		}
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q", a.User.Name, a.Verb, resource, a.APIGroup)
		if a.Namespace != "" {
			msg += fmt.Sprintf(" in the namespace %q", a.Namespace)
		} else {
			msg += " at the cluster scope"
		}
	}
	if reason != "" {
		msg += ": " + reason
	}
	var gr metav1.GroupResource
	if a.ResourceRequest {
		gr = metav1.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	}
	return metav1.NewForbidden(gr, a.Name, errors.New(msg))
}
