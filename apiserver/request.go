package apiserver

import (
	"net/http"
	"strings"
)

// requestInfo is what a resource URL names.
type requestInfo struct {
	Group, Version      string
	Namespace           string
	Resource, Name, Sub string
	// Verb is the API verb: get, list, watch, create, update, patch, delete,
	// deletecollection.
	Verb string
}

// parsePath splits /api/v1/... and /apis/GROUP/VERSION/... resource paths. ok is
// false for paths that are not resource paths (discovery, unknown prefixes).
func parsePath(path string) (ri requestInfo, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		ri.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		ri.Group, ri.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return ri, false
	}
	for _, p := range parts {
		if p == "" {
			return ri, false
		}
	}
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		ri.Namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		ri.Resource = parts[0]
	case 2:
		ri.Resource, ri.Name = parts[0], parts[1]
	case 3:
		ri.Resource, ri.Name, ri.Sub = parts[0], parts[1], parts[2]
	default:
		return ri, false
	}
	return ri, true
}

// verb maps the HTTP method to the API verb.
func (ri *requestInfo) setVerb(r *http.Request) {
	collection := ri.Name == ""
	switch r.Method {
	case http.MethodGet: // not HEAD: kube-apiserver answers it 405
		switch {
		case !collection:
			ri.Verb = "get"
		case isWatch(r):
			ri.Verb = "watch"
		default:
			ri.Verb = "list"
		}
	case http.MethodPost:
		ri.Verb = "create"
	case http.MethodPut:
		ri.Verb = "update"
	case http.MethodPatch:
		ri.Verb = "patch"
	case http.MethodDelete:
		if collection {
			ri.Verb = "deletecollection"
		} else {
			ri.Verb = "delete"
		}
	}
}

// isWatch reads the watch parameter as kube-apiserver does: present and not
// "0" or "false" means true.
func isWatch(r *http.Request) bool {
	q := r.URL.Query()
	if !q.Has("watch") {
		return false
	}
	v := q.Get("watch")
	return v != "0" && !strings.EqualFold(v, "false")
}
