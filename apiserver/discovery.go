package apiserver

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/codec"
)

// serveDiscovery answers /api, /api/VERSION, /apis, /apis/GROUP and
// /apis/GROUP/VERSION as kube-apiserver v1.37 does, errors included; it
// reports false for other paths. Its routes differ by method as the real
// ones do: /api and the built-in group versions serve GET only (405
// otherwise, HEAD included), while /apis, /apis/GROUP and the versions of
// custom resource groups, served there by handlers that do not look at the
// method, answer any method with their document (the aggregated one too).
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	get := r.Method == http.MethodGet
	switch {
	case len(parts) == 1 && parts[0] == "api":
		if !get {
			s.writeStatus(w, r, methodNotAllowed())
			return true
		}
		mt, ok := s.negotiateDiscovery(w, r, true, true)
		if !ok {
			return true
		}
		if mt.As != "" {
			s.serveAggregated(w, r, true, mt)
			return true
		}
		s.writeDiscoveryDocument(w, r, mt, metav1.TypeMeta{Kind: "APIVersions"}, &metav1.APIVersions{
			TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
			Versions:                   s.reg.Groups()[""],
			ServerAddressByClientCIDRs: s.serverAddresses(r),
		})
	case len(parts) == 1 && parts[0] == "apis":
		mt, ok := s.negotiateDiscovery(w, r, true, false)
		if !ok {
			return true
		}
		if mt.As != "" {
			s.serveAggregated(w, r, false, mt)
			return true
		}
		list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
		for _, g := range s.orderedGroups() {
			if g.name != "" {
				list.Groups = append(list.Groups, apiGroupOf(g))
			}
		}
		s.writeDiscoveryDocument(w, r, mt, list.TypeMeta, list)
	case len(parts) == 2 && parts[0] == "api":
		switch {
		case parts[1] != "v1" || !s.reg.HasGroupVersion("", "v1"):
			s.writeStatus(w, r, resourceNotFound())
		case !get:
			s.writeStatus(w, r, methodNotAllowed())
		default:
			s.serveResourceList(w, r, "", parts[1], true)
		}
	case len(parts) == 2 && parts[0] == "apis":
		if _, ok := s.reg.Groups()[parts[1]]; !ok || parts[1] == "" {
			s.notFoundPage(w, r)
			return true
		}
		mt, ok := s.negotiateDiscovery(w, r, false, false)
		if !ok {
			return true
		}
		g := s.apiGroup(parts[1])
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		s.writeDiscoveryDocument(w, r, mt, g.TypeMeta, &g)
	case len(parts) == 3 && parts[0] == "apis":
		group, version := parts[1], parts[2]
		custom, served := s.groupKind(group)
		switch {
		case !served:
			s.notFoundPage(w, r)
		case !s.reg.HasGroupVersion(group, version) && custom:
			s.notFoundPage(w, r)
		case !s.reg.HasGroupVersion(group, version):
			s.writeStatus(w, r, resourceNotFound())
		case !get && !custom:
			s.writeStatus(w, r, methodNotAllowed())
		default:
			s.serveResourceList(w, r, group, version, !custom)
		}
	default:
		return false
	}
	return true
}

// groupKind reports whether group is served, and whether it is a group of
// custom resources only (kube-apiserver serves those from its
// apiextensions handlers, whose errors are plain-text pages).
func (s *Server) groupKind(group string) (custom, served bool) {
	versions, served := s.reg.Groups()[group]
	if !served || group == "" {
		return false, served
	}
	for _, v := range versions {
		for _, res := range s.reg.ForGroupVersion(group, v) {
			if !res.Custom {
				return false, true
			}
		}
	}
	return true, true
}

// methodNotAllowed is the Status of a method a path does not serve (golden
// case 60).
func methodNotAllowed() *metav1.Status {
	return metav1.NewGenericServerResponse(http.StatusMethodNotAllowed, "", metav1.GroupResource{}, "", "", 0, false)
}

// legacyDiscoveryOffers are the representations of the legacy discovery
// documents.
var legacyDiscoveryOffers = []codec.MediaType{offerJSON, offerYAML, offerProtobuf}

// negotiateDiscovery picks the representation of a discovery document;
// with aggregated, the aggregated document is offered too (mt.As is then
// set when it is chosen). When nothing fits it writes 406 as kube-apiserver
// does: restful reports that the Accept header names none of the media
// types at all (on /api, /api/v1 and the built-in group versions), its
// negotiation that they were asked for in a form it cannot produce.
func (s *Server) negotiateDiscovery(w http.ResponseWriter, r *http.Request, aggregated, restful bool) (codec.MediaType, bool) {
	offers := legacyDiscoveryOffers
	if aggregated {
		offers = rootDiscoveryOffers
	}
	accept := r.Header.Get("Accept")
	mt, err := codec.Negotiate(accept, offers)
	if err == nil {
		return mt, true
	}
	var na *codec.NotAcceptableError
	if !errors.As(err, &na) {
		return offerJSON, true // an Accept header that does not parse is ignored
	}
	if restful && !namesMediaType(accept, legacyDiscoveryOffers) {
		s.writeStatusAs(w, offerJSON, metav1.NewNotAcceptable(mediaTypeStrings(legacyDiscoveryOffers)))
		return mt, false
	}
	s.writeStatusAs(w, offerJSON, &metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotAcceptable,
		Code: http.StatusNotAcceptable, Message: "only the following media types are accepted: " + strings.Join(mediaTypeStrings(legacyDiscoveryOffers), ", ")})
	return mt, false
}

// namesMediaType reports whether an entry of the Accept header admits one of
// offers by type and subtype alone, parameters ignored.
func namesMediaType(accept string, offers []codec.MediaType) bool {
	ranges, _ := codec.ParseAccept(accept)
	for _, r := range ranges {
		if r.Q == 0 {
			continue
		}
		r.As, r.Group, r.Version, r.Params = "", "", "", nil
		for _, o := range offers {
			if r.Accepts(o) {
				return true
			}
		}
	}
	return false
}

// writeDiscoveryDocument writes a legacy discovery document in JSON, YAML
// or protobuf.
func (s *Server) writeDiscoveryDocument(w http.ResponseWriter, r *http.Request, mt codec.MediaType, tm metav1.TypeMeta, doc any) {
	switch mt.Subtype {
	case offerProtobuf.Subtype:
		if m, ok := doc.(codec.ProtoMarshaler); ok {
			b, err := codec.MarshalProtobuf(tm, m)
			if err == nil {
				w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(b)
				return
			}
			s.cfg.Logger.Error("apiserver: protobuf encoding", "kind", tm.Kind, "err", err)
		}
	case offerYAML.Subtype:
		s.writeYAML(w, http.StatusOK, doc)
		return
	}
	s.writeRawJSON(w, http.StatusOK, doc)
}

func (s *Server) serverAddresses(r *http.Request) []metav1.ServerAddressByClientCIDR {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	return []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: host}}
}

// apiGroup is the APIGroup document of a served group.
func (s *Server) apiGroup(group string) metav1.APIGroup {
	for _, g := range s.orderedGroups() {
		if g.name == group {
			return apiGroupOf(g)
		}
	}
	return metav1.APIGroup{Name: group}
}

// apiGroupOf is g's entry in /apis: its versions, preferred first.
func apiGroupOf(g servedGroup) metav1.APIGroup {
	out := metav1.APIGroup{Name: g.name}
	for _, v := range g.versions {
		out.Versions = append(out.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.name + "/" + v.name, Version: v.name})
	}
	if len(out.Versions) > 0 {
		out.PreferredVersion = out.Versions[0]
	}
	return out
}

// serveResourceList writes the APIResourceList of a served group version;
// restful says its route is kube-apiserver's restful one (406 as there).
func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, group, version string, restful bool) {
	mt, ok := s.negotiateDiscovery(w, r, false, restful)
	if !ok {
		return
	}
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: version, APIResources: []metav1.APIResource{}}
	if group != "" {
		list.APIVersion = "v1"
		list.GroupVersion = group + "/" + version
	}
	list.APIResources = append(list.APIResources, s.apiResources(s.reg.ForGroupVersion(group, version))...)
	s.writeDiscoveryDocument(w, r, mt, metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, list)
}

// apiResources are the entries of resources (sorted by name) in their group
// version's APIResourceList, each followed by its subresources in the
// order the registry lists them.
func (s *Server) apiResources(resources []*registry.Resource) []metav1.APIResource {
	var out []metav1.APIResource
	for _, res := range resources {
		r := metav1.APIResource{
			Name: res.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: s.verbsOf(res), ShortNames: res.ShortNames, Categories: res.Categories,
		}
		if !res.NotStored {
			r.StorageVersionHash = storageVersionHash(storageGroup(res), cmp.Or(res.StorageVersion, res.Version), res.Kind)
		}
		out = append(out, r)
		for _, sub := range res.Subresources {
			out = append(out, metav1.APIResource{
				Name: res.Resource + "/" + sub.Name, Namespaced: res.Namespaced,
				Group: sub.Kind.Group, Version: sub.Kind.Version, Kind: sub.Kind.Kind, Verbs: sub.Verbs,
			})
		}
	}
	return out
}

// verbsOf are the verbs discovery lists for res: a custom resource whose
// definition is being deleted is no longer created nor updated, and
// kube-apiserver lists only delete, deletecollection, get, list and watch.
func (s *Server) verbsOf(res *registry.Resource) []string {
	if res.Custom && s.crds != nil && s.crds.terminatingResource(res) {
		return []string{"delete", "deletecollection", "get", "list", "watch"}
	}
	return res.Verbs
}

// terminatingResource reports whether res is served for a CRD being
// deleted.
func (c *crdController) terminatingResource(res *registry.Resource) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sc := range c.crds {
		if slices.Contains(sc.resources, res) {
			return sc.terminating.Load()
		}
	}
	return false
}

// storageGroup is the group res's objects are stored in.
func storageGroup(res *registry.Resource) string {
	if res.StoredAs != nil {
		return res.StoredAs.Group
	}
	return res.Group
}

// storageVersionHash is kube-apiserver's opaque hash of the version a resource
// is stored in: base64 of the first 8 bytes of sha256("group/version/Kind").
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// compareVersions orders API versions as kube-apiserver's discovery does
// (the first is preferred): GA before beta before alpha, higher numbers
// first within each (v2, v1, v1beta2, v1beta1, v1alpha1), then versions that
// do not look like Kubernetes versions, alphabetically.
func compareVersions(a, b string) int {
	ka, kb := versionKey(a), versionKey(b)
	if ka.ok != kb.ok {
		if ka.ok {
			return -1
		}
		return 1
	}
	if !ka.ok {
		return strings.Compare(a, b)
	}
	if ka.level != kb.level {
		return cmp.Compare(kb.level, ka.level)
	}
	if ka.major != kb.major {
		return cmp.Compare(kb.major, ka.major)
	}
	return cmp.Compare(kb.minor, ka.minor)
}

type kubeVersion struct {
	ok           bool
	level        int // 2 GA, 1 beta, 0 alpha
	major, minor int
}

func versionKey(v string) kubeVersion {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return kubeVersion{}
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	major, err := strconv.Atoi(rest[:i])
	if err != nil || major == 0 {
		return kubeVersion{}
	}
	k := kubeVersion{ok: true, level: 2, major: major}
	switch tail := rest[i:]; {
	case tail == "":
		return k
	case strings.HasPrefix(tail, "beta"):
		k.level, tail = 1, tail[len("beta"):]
		k.minor, err = strconv.Atoi(tail)
	case strings.HasPrefix(tail, "alpha"):
		k.level, tail = 0, tail[len("alpha"):]
		k.minor, err = strconv.Atoi(tail)
	default:
		return kubeVersion{}
	}
	if err != nil || k.minor == 0 {
		return kubeVersion{}
	}
	return k
}
