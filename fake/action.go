package fake

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Action is one request the client sent, as the API server sees it: the
// Kubernetes verb, the resource and the object it is about, the query and
// the body. Fake.Actions returns them in the order they were sent; a
// ReactionFunc gets the one it may answer.
//
// Body and Query are shared with the recorded copy: treat them as read-only.
type Action struct {
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch,
	// delete or deletecollection.
	Verb string
	// Resource is the resource, such as {"", "v1", "pods"} or {"apps", "v1",
	// "deployments"}.
	Resource client.GroupVersionResource
	// Subresource is the subresource, such as "status", or "".
	Subresource string
	// Namespace is the namespace in the path: "" for cluster-scoped
	// resources and for lists and watches across all namespaces.
	Namespace string
	// Name is the object's name; "" for list, watch, deletecollection and
	// create (whose name is in the body), except a create of a subresource
	// (such as a pod's eviction).
	Name string
	// Query holds the query parameters: the options of the request
	// (labelSelector, resourceVersion, dryRun, …).
	Query url.Values
	// Body is the request body (an object, a patch or DeleteOptions), nil
	// when there is none.
	Body []byte
	// ContentType is the media type of Body without parameters, such as
	// "application/json" or "application/merge-patch+json".
	ContentType string
}

// Matches reports whether the action has the verb and resource a reactor
// registered with would handle (see Fake.PrependReactor for the patterns:
// "*" for any verb or resource, "pods/status" for a subresource).
func (a Action) Matches(verb, resource string) bool {
	if verb != "*" && verb != a.Verb {
		return false
	}
	return resourceMatches(resource, a.Resource.Resource, a.Subresource)
}

// resourceMatches applies a reactor's resource pattern: "*" matches
// everything; "pods" matches pods and every subresource of pods (as
// client-go's reactors do); "pods/status" only the status subresource;
// "pods/*" any subresource of pods but not pods itself; "*/status" the status
// subresource of any resource.
func resourceMatches(pattern, resource, sub string) bool {
	if pattern == "*" {
		return true
	}
	res, want, hasSub := strings.Cut(pattern, "/")
	if res != "*" && res != resource {
		return false
	}
	if !hasSub {
		return true
	}
	if want == "*" {
		return sub != ""
	}
	return want == sub
}

// Into decodes the body into v: JSON (also for patches) or, for a protobuf
// body, into a v that decodes itself. It fails when there is no body.
func (a Action) Into(v any) error {
	if len(a.Body) == 0 {
		return fmt.Errorf("fake: %s has no body", a)
	}
	if a.ContentType == codec.MediaTypeProtobuf {
		u, ok := v.(codec.ProtoUnmarshaler)
		if !ok {
			return fmt.Errorf("fake: the body of %s is protobuf, which %T cannot decode", a, v)
		}
		_, err := codec.UnmarshalProtobuf(a.Body, u)
		return err
	}
	if err := kjson.Unmarshal(a.Body, v); err != nil {
		return fmt.Errorf("fake: decoding the body of %s: %w", a, err)
	}
	return nil
}

// String describes the action as verb, resource (with its group and
// subresource) and object: "create pods default", "update pods/status
// default/web-0", "get deployments.apps web/frontend", "list nodes".
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(a.Verb)
	b.WriteByte(' ')
	b.WriteString(a.Resource.Resource)
	if a.Resource.Group != "" {
		b.WriteByte('.')
		b.WriteString(a.Resource.Group)
	}
	if a.Subresource != "" {
		b.WriteByte('/')
		b.WriteString(a.Subresource)
	}
	switch {
	case a.Namespace != "" && a.Name != "":
		b.WriteString(" " + a.Namespace + "/" + a.Name)
	case a.Namespace != "":
		b.WriteString(" " + a.Namespace)
	case a.Name != "":
		b.WriteString(" " + a.Name)
	}
	return b.String()
}

// parseAction reads the action of a request whose body has been read. ok is
// false for requests that are not about a resource (discovery, /version,
// /healthz), which are neither recorded nor given to reactors.
//
// The path rules are the reference server's: /api/VERSION/… for the core
// group, /apis/GROUP/VERSION/… otherwise; namespaces/NAME/status and
// namespaces/NAME/finalize are subresources of a namespace, not a namespace
// prefix.
func parseAction(r *http.Request, body []byte) (a Action, ok bool) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		a.Resource.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		a.Resource.Group, a.Resource.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return a, false
	}
	for _, p := range parts {
		if p == "" {
			return a, false
		}
	}
	if parts[0] == "namespaces" && len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
		a.Namespace, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		a.Resource.Resource = parts[0]
	case 2:
		a.Resource.Resource, a.Name = parts[0], parts[1]
	case 3:
		a.Resource.Resource, a.Name, a.Subresource = parts[0], parts[1], parts[2]
	default:
		return a, false
	}
	a.Query = r.URL.Query()
	a.Verb = verbOf(r.Method, a.Name == "", a.Query)
	if a.Verb == "" {
		return a, false
	}
	if len(body) > 0 {
		a.Body = body
		a.ContentType, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
	}
	return a, true
}

// verbOf maps an HTTP method to the Kubernetes verb as kube-apiserver does;
// "" for methods that have none.
func verbOf(method string, collection bool, q url.Values) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case !collection:
			return "get"
		case isWatch(q):
			return "watch"
		}
		return "list"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if collection {
			return "deletecollection"
		}
		return "delete"
	}
	return ""
}

// isWatch reads the watch parameter as kube-apiserver does: present and
// neither "0" nor "false".
func isWatch(q url.Values) bool {
	if !q.Has("watch") {
		return false
	}
	v := q.Get("watch")
	return v != "0" && !strings.EqualFold(v, "false")
}
