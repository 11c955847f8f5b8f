package apiserver

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// serveDiscovery answers /api, /api/v1, /apis, /apis/GROUP and
// /apis/GROUP/VERSION; it reports false for other paths.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch {
	case len(parts) == 1 && parts[0] == "api":
		s.writeRawJSON(w, http.StatusOK, &metav1.APIVersions{
			TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
			Versions:                   s.reg.Groups()[""],
			ServerAddressByClientCIDRs: s.serverAddresses(r),
		})
	case len(parts) == 2 && parts[0] == "api":
		return s.serveResourceList(w, "", parts[1])
	case len(parts) == 1 && parts[0] == "apis":
		list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
		for _, g := range s.reg.GroupOrder() {
			if g != "" {
				list.Groups = append(list.Groups, s.apiGroup(g))
			}
		}
		s.writeRawJSON(w, http.StatusOK, list)
	case len(parts) == 2 && parts[0] == "apis":
		if _, ok := s.reg.Groups()[parts[1]]; !ok || parts[1] == "" {
			return false
		}
		g := s.apiGroup(parts[1])
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		s.writeRawJSON(w, http.StatusOK, &g)
	case len(parts) == 3 && parts[0] == "apis":
		return s.serveResourceList(w, parts[1], parts[2])
	default:
		return false
	}
	return true
}

func (s *Server) serverAddresses(r *http.Request) []metav1.ServerAddressByClientCIDR {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	return []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: host}}
}

func (s *Server) apiGroup(group string) metav1.APIGroup {
	g := metav1.APIGroup{Name: group}
	versions := slices.Clone(s.reg.Groups()[group])
	slices.SortStableFunc(versions, compareVersions)
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

func (s *Server) serveResourceList(w http.ResponseWriter, group, version string) bool {
	resources := s.reg.ForGroupVersion(group, version)
	if group != "" && len(resources) == 0 {
		return false
	}
	if group == "" && version != "v1" {
		return false
	}
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: version, APIResources: []metav1.APIResource{}}
	if group != "" {
		list.APIVersion = "v1"
		list.GroupVersion = group + "/" + version
	}
	for _, res := range resources {
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: res.Resource, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: res.Verbs(), ShortNames: res.ShortNames, Categories: res.Categories,
			StorageVersionHash: storageVersionHash(res.Group, cmp.Or(res.StorageVersion, res.Version), res.Kind),
		})
		if hasScale(res) { // scale.go; before status, as kube-apiserver lists them
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.Resource + "/scale", Namespaced: res.Namespaced, Group: "autoscaling", Version: "v1", Kind: "Scale",
				Verbs: metav1.Verbs{"get", "patch", "update"},
			})
		}
		if res.StatusSubresource {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: res.Resource + "/status", Namespaced: res.Namespaced, Kind: res.Kind,
				Verbs: metav1.Verbs{"get", "patch", "update"},
			})
		}
	}
	s.writeRawJSON(w, http.StatusOK, list)
	return true
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
