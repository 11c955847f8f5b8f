package apiserver

import (
	"crypto/sha512"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apidiscoveryv2 "github.com/kapi-dev/kapi/api/apidiscovery/v2"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	"sigs.k8s.io/yaml"
)

// Aggregated discovery: /api and /apis answer with one
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList (every group, version and
// resource at once) when the Accept header prefers it to the legacy
// APIVersions and APIGroupList documents. kube-apiserver v1.37 no longer
// serves v2beta1: a client asking for it alone gets the legacy documents.

// aggregatedTypeMeta is the kind of the aggregated discovery document.
var aggregatedTypeMeta = metav1.TypeMeta{APIVersion: "apidiscovery.k8s.io/v2", Kind: "APIGroupDiscoveryList"}

// aggregatedOffers are the representations of the aggregated document.
var aggregatedOffers = func() []codec.MediaType {
	var out []codec.MediaType
	for _, base := range []codec.MediaType{offerJSON, offerYAML, offerProtobuf} {
		base.As, base.Group, base.Version = "APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2"
		out = append(out, base)
	}
	return out
}()

// rootDiscoveryOffers are what /api and /apis can answer with: the legacy
// document (JSON, YAML, protobuf), then the aggregated one.
var rootDiscoveryOffers = append([]codec.MediaType{offerJSON, offerYAML, offerProtobuf}, aggregatedOffers...)

// aggregatedContentType is the Content-Type of an aggregated document in
// the representation mt, written as kube-apiserver writes it.
func aggregatedContentType(mt codec.MediaType) string {
	return mt.Type + "/" + mt.Subtype + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
}

// serveAggregated writes the aggregated document of the core group (core)
// or of the named groups, with an ETag; a request whose If-None-Match
// holds that ETag gets 304 Not Modified without a body.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, core bool, mt codec.MediaType) {
	list := s.aggregatedDiscovery(core)
	etag, err := discoveryETag(list)
	if err != nil {
		s.writeStatus(w, r, metav1.NewInternalError(err))
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "public")
	h.Set("Etag", etag)
	h.Set("Vary", "Accept")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	list.TypeMeta = aggregatedTypeMeta
	var body []byte
	switch mt.Subtype {
	case offerProtobuf.Subtype:
		body, err = codec.MarshalProtobuf(aggregatedTypeMeta, list)
	case offerYAML.Subtype:
		if body, err = kjson.Marshal(list); err == nil {
			body, err = yaml.JSONToYAML(body)
		}
	default:
		body, err = kjson.Marshal(list)
		body = append(body, '\n')
	}
	if err != nil {
		s.writeStatus(w, r, metav1.NewInternalError(err))
		return
	}
	h.Set("Content-Type", aggregatedContentType(mt))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// discoveryETag is the ETag of an aggregated document, computed as
// kube-apiserver does: the quoted upper-case hex SHA-512 of its JSON form
// without kind and apiVersion.
func discoveryETag(list *apidiscoveryv2.APIGroupDiscoveryList) (string, error) {
	untyped := *list
	untyped.TypeMeta = metav1.TypeMeta{}
	js, err := kjson.Marshal(&untyped)
	if err != nil {
		return "", err
	}
	return strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(js))), nil
}

// aggregatedDiscovery is the APIGroupDiscoveryList of /api (core) or /apis:
// the groups in discovery order, each version preferred first, each with
// its resources sorted by name and their subresources. It is computed from
// the registry on every call, so custom resources appear and disappear
// with their definitions.
func (s *Server) aggregatedDiscovery(core bool) *apidiscoveryv2.APIGroupDiscoveryList {
	list := &apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{}}
	for _, g := range s.orderedGroups() {
		if (g.name == "") != core {
			continue
		}
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			item.Versions = append(item.Versions, apidiscoveryv2.APIVersionDiscovery{
				Version:   v.name,
				Resources: s.aggregatedResources(g.name, v.name, s.reg.ForGroupVersion(g.name, v.name)),
				Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			})
		}
		list.Items = append(list.Items, item)
	}
	return list
}

// aggregatedResources turns a group version's APIResourceList entries into
// aggregated entries: one per resource, its subresources nested in the
// order the list has them. As in kube-apiserver, the responseKind of a
// built-in resource names only the kind when it is of the resource's own
// group version (group and version empty), and a custom resource's names
// all three.
func (s *Server) aggregatedResources(group, version string, resources []*registry.Resource) []apidiscoveryv2.APIResourceDiscovery {
	entries := s.apiResources(resources)
	custom := len(resources) > 0 && resources[0].Custom
	kindOf := func(e metav1.APIResource) *metav1.GroupVersionKind {
		k := &metav1.GroupVersionKind{Group: e.Group, Version: e.Version, Kind: e.Kind}
		if custom && e.Group == "" && e.Version == "" {
			k.Group, k.Version = group, version
		}
		return k
	}
	var out []apidiscoveryv2.APIResourceDiscovery
	index := map[string]int{}
	for _, e := range entries {
		if strings.Contains(e.Name, "/") {
			continue
		}
		index[e.Name] = len(out)
		out = append(out, apidiscoveryv2.APIResourceDiscovery{
			Resource:         e.Name,
			ResponseKind:     kindOf(e),
			Scope:            scopeOf(e.Namespaced),
			SingularResource: e.SingularName,
			Verbs:            e.Verbs,
			ShortNames:       e.ShortNames,
			Categories:       e.Categories,
		})
	}
	for _, e := range entries {
		parent, sub, ok := strings.Cut(e.Name, "/")
		if !ok {
			continue
		}
		i := index[parent]
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: kindOf(e), Verbs: e.Verbs,
		})
	}
	return out
}

func scopeOf(namespaced bool) apidiscoveryv2.ResourceScope {
	if namespaced {
		return apidiscoveryv2.ScopeNamespace
	}
	return apidiscoveryv2.ScopeCluster
}
