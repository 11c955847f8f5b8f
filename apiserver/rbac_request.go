package apiserver

import (
	"net/http"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/selector"
)

// requestAttributes describes r as kube-apiserver's RequestInfo resolver
// does, for the authorizer: a resource request for paths under
// /api/VERSION/ and /apis/GROUP/VERSION/ (with the verb from the method,
// the watch parameter, a /watch/ or /proxy/ path segment, or a collection
// path), a non-resource request with the lower-case method as verb for
// every other path (discovery, /healthz, /version, /openapi ...).
func requestAttributes(r *http.Request, user User) Attributes {
	a := Attributes{User: user, Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitRequestPath(r.URL.Path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return a
	}
	prefix := parts[0]
	parts = parts[1:]
	if prefix == "apis" {
		if len(parts) < 3 {
			return a
		}
		a.APIGroup, parts = parts[0], parts[1:]
	}
	a.ResourceRequest = true
	a.APIVersion, parts = parts[0], parts[1:]
	switch parts[0] {
	case "watch", "proxy":
		if len(parts) < 2 {
			// kube-apiserver cannot resolve it either: nothing but the
			// verb to decide on.
			a.Verb = ""
			return a
		}
		a.Verb, parts = parts[0], parts[1:]
	default:
		switch r.Method {
		case http.MethodPost:
			a.Verb = "create"
		case http.MethodGet, http.MethodHead:
			a.Verb = "get"
		case http.MethodPut:
			a.Verb = "update"
		case http.MethodPatch:
			a.Verb = "patch"
		case http.MethodDelete:
			a.Verb = "delete"
		default:
			a.Verb = ""
		}
	}
	if parts[0] == "namespaces" {
		if len(parts) > 1 {
			a.Namespace = parts[1]
			if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
				parts = parts[2:]
			}
		}
	}
	if len(parts) >= 3 && a.Verb != "proxy" {
		a.Subresource = parts[2]
	}
	if len(parts) >= 2 {
		a.Name = parts[1]
	}
	a.Resource = parts[0]
	if a.Name == "" && a.Verb == "get" {
		a.Verb = "list"
		if isWatch(r) {
			a.Verb = "watch"
		}
		if name, ok := fieldSelectorName(r.URL.Query().Get("fieldSelector")); ok {
			a.Name = name
		}
	}
	if a.Name == "" && a.Verb == "delete" {
		a.Verb = "deletecollection"
	}
	return a
}

// splitRequestPath splits a path into its segments, without the empty
// ones of leading and trailing slashes.
func splitRequestPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// fieldSelectorName is the name a list's field selector requires exactly
// (metadata.name=NAME), which kube-apiserver authorizes as the request's
// name when it is a valid path segment.
func fieldSelectorName(fs string) (string, bool) {
	if fs == "" {
		return "", false
	}
	sel, err := selector.ParseFields(fs)
	if err != nil {
		return "", false
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/%") {
		return "", false
	}
	return name, true
}

// authorize is authorizeRequest: it asks the server's authorizer about r
// and answers 403 (500 when the authorizer fails) unless it allows r, as
// kube-apiserver's authorization filter.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	authz := s.authorizer()
	if _, ok := authz.(AlwaysAllow); ok {
		return true // the default: no need to resolve the request
	}
	a := requestAttributes(r, s.requestUser(r))
	d, reason, err := authz.Authorize(r.Context(), a)
	if d == DecisionAllow {
		return true
	}
	if err != nil {
		s.writeStatus(w, r, metav1.NewInternalError(err))
		return false
	}
	s.writeStatus(w, r, forbiddenStatus(a, reason)) // authn_attributes.go
	return false
}
