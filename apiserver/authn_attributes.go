package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// requestAttributes are the Attributes of r made by u, as kube-apiserver's
// request info finds them: a resource request for a URL of an API
// resource (its verb from the method: get, list, watch, create, update,
// patch, delete, deletecollection), a non-resource request with the
// lower-case method as verb otherwise (discovery, /healthz, /version).
func requestAttributes(r *http.Request, u User) Attributes {
	ri, ok := parsePath(r.URL.Path)
	if ok {
		ri.setVerb(r)
	}
	if !ok || ri.Verb == "" {
		return Attributes{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	}
	a := Attributes{User: u, Verb: ri.Verb, ResourceRequest: true, Namespace: ri.Namespace, APIGroup: ri.Group,
		APIVersion: ri.Version, Resource: ri.Resource, Subresource: ri.Sub, Name: ri.Name}
	if ri.Group == "" && ri.Resource == "namespaces" && ri.Name != "" {
		a.Namespace = ri.Name // a namespace is in itself, as kube-apiserver's request info says
	}
	return a
}

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
