package apiserver

import (
	"slices"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// virtualSubresources are the subresources served by a handler of their
// own (beside status and scale), each a small function over the store
// (store.go, "Adding a subresource").
var virtualSubresources = []string{"binding", "eviction", "token", "finalize",
	"ephemeralcontainers", "resize", "approval", "log", "exec", "attach", "portforward", "proxy"}

// hasVirtualSubresource reports whether res lists sub in discovery and the
// server has a handler for it.
func hasVirtualSubresource(res *registry.Resource, sub string) bool {
	if !slices.Contains(virtualSubresources, sub) {
		return false
	}
	return slices.ContainsFunc(res.Subresources, func(s registry.Subresource) bool { return s.Name == sub })
}

// serveVirtual serves what is not a read or write of stored objects: the
// create of a resource that is not stored (reviews, bindings) and the
// subresources of virtualSubresources. It reports whether it answered.
func (h *handler) serveVirtual() bool {
	if h.res.NotStored {
		if h.ri.Verb != "create" || h.ri.Name != "" || h.ri.Sub != "" {
			h.methodNotAllowed()
			return true
		}
		h.createNotStored() // reviews.go
		return true
	}
	if h.ri.Sub == "" || !hasVirtualSubresource(h.res, h.ri.Sub) {
		return false
	}
	i := slices.IndexFunc(h.res.Subresources, func(s registry.Subresource) bool { return s.Name == h.ri.Sub })
	if !slices.Contains(h.res.Subresources[i].Verbs, h.ri.Verb) {
		h.methodNotAllowed()
		return true
	}
	switch {
	case h.res.Group == "" && h.res.Resource == "pods" && h.ri.Sub == "binding":
		h.serveBinding()
	case h.res.Group == "" && h.res.Resource == "pods" && h.ri.Sub == "eviction":
		h.serveEviction()
	case h.res.Group == "" && h.res.Resource == "serviceaccounts" && h.ri.Sub == "token":
		h.serveToken()
	case h.res.Group == "" && h.res.Resource == "pods" && (h.ri.Sub == "ephemeralcontainers" || h.ri.Sub == "resize"):
		// The pod, written through the store with the part of the body
		// the subresource takes (subresourceTakes) and its own validation
		// (subresourceValidates).
		switch h.ri.Verb {
		case "get":
			h.get()
		case "patch":
			h.patch()
		default:
			h.update()
		}
	case h.res.Group == "certificates.k8s.io" && h.res.Resource == "certificatesigningrequests" && h.ri.Sub == "approval":
		// The request with the body's conditions (takeApproval), through
		// the store.
		switch h.ri.Verb {
		case "get":
			h.get()
		case "patch":
			h.patch()
		default:
			h.update()
		}
	case h.res.Group == "" && h.res.Resource == "namespaces" && h.ri.Sub == "finalize":
		h.update() // the stored namespace with the body's spec.finalizers (subresourceTakes)
	default:
		h.serveConnect()
	}
	return true
}

// decodeAs decodes the request body as an object of res (a subresource's
// kind: Binding, Eviction, TokenRequest).
func (h *handler) decodeAs(res *registry.Resource) (registry.Object, *metav1.Status) {
	hh := *h
	hh.res = res
	return hh.decodeBody()
}
