package client

import (
	"context"
	"net/http"
	"slices"
	"strings"

	apidiscoveryv2 "github.com/kapi-dev/kapi/api/apidiscovery/v2"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// VersionInfo is the server's /version document.
type VersionInfo struct {
	Major string `json:"major"` // "1"
	Minor string `json:"minor"` // "37"
	// EmulationMajor and EmulationMinor are the version the server emulates,
	// MinCompatibilityMajor and MinCompatibilityMinor the oldest it stays
	// compatible with (kube-apiserver 1.31 and later; empty before).
	EmulationMajor        string `json:"emulationMajor,omitempty"`
	EmulationMinor        string `json:"emulationMinor,omitempty"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor,omitempty"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor,omitempty"`
	GitVersion            string `json:"gitVersion"`   // "v1.37.2"
	GitCommit             string `json:"gitCommit"`    // the source commit
	GitTreeState          string `json:"gitTreeState"` // "clean" or "dirty"
	BuildDate             string `json:"buildDate"`    // RFC 3339
	GoVersion             string `json:"goVersion"`    // "go1.23.6"
	Compiler              string `json:"compiler"`     // "gc"
	Platform              string `json:"platform"`     // "linux/amd64"
}

// String returns GitVersion.
func (v *VersionInfo) String() string { return v.GitVersion }

// Discovery asks the server what it serves: its version, API groups, and the
// resources of each group version. It uses aggregated discovery (all groups
// and resources in two requests, /api and /apis) and falls back to the
// legacy documents (one request per group version) on servers without it.
// Its answers are not cached; RESTMapper caches them.
type Discovery struct {
	c *Client
}

func (d *Discovery) get(ctx context.Context, path string, v any) error {
	return d.c.NewRequest(http.MethodGet).AbsPath(path).SetHeader("Accept", codec.MediaTypeJSON).Into(ctx, v)
}

// ServerVersion returns the server's version (GET /version).
func (d *Discovery) ServerVersion(ctx context.Context) (*VersionInfo, error) {
	v := &VersionInfo{}
	if err := d.get(ctx, "/version", v); err != nil {
		return nil, err
	}
	return v, nil
}

// ServerGroups returns the API groups the server serves: the core group
// (name "", from /api) first, then the named groups of /apis in the
// server's order, each with its versions, preferred first. A server without
// /api (an aggregated or extension server) has no core group in the list.
// It asks for aggregated discovery (see ServerGroupsAndResources) and reads
// the legacy documents from servers that do not serve it.
func (d *Discovery) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	doc, err := d.discover(ctx)
	if err != nil {
		return nil, err
	}
	return doc.groups, nil
}

// ServerGroupsAndResources returns the groups (as ServerGroups) and the
// resources of every group version, subresources included, in the order of
// the groups. From a server that serves aggregated discovery (kube-apiserver
// 1.30 and later, kapi's reference server) this takes two requests, /api
// and /apis; from one that does not, one more per group version. A group
// version the server reports as stale (an aggregated API server it cannot
// reach) is asked for on its own, and an error for it is returned as a
// *GroupDiscoveryError along with everything else.
func (d *Discovery) ServerGroupsAndResources(ctx context.Context) (*metav1.APIGroupList, []*metav1.APIResourceList, error) {
	doc, err := d.discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []*metav1.APIResourceList
	failed := map[string]error{}
	for _, g := range doc.groups.Groups {
		for _, v := range g.Versions {
			if list, ok := doc.resources[v.GroupVersion]; ok {
				out = append(out, list)
				continue
			}
			list, err := d.ServerResourcesForGroupVersion(ctx, v.GroupVersion)
			switch {
			case err == nil:
				out = append(out, list)
			case ctx.Err() != nil:
				return nil, nil, ctx.Err()
			default:
				failed[v.GroupVersion] = err
			}
		}
	}
	if len(failed) > 0 {
		return doc.groups, out, &GroupDiscoveryError{Groups: failed}
	}
	return doc.groups, out, nil
}

// GroupDiscoveryError reports the group versions whose resources could not
// be discovered.
type GroupDiscoveryError struct {
	// Groups maps a group version ("apps/v1") to its error.
	Groups map[string]error
}

// Error lists the group versions that failed.
func (e *GroupDiscoveryError) Error() string {
	gvs := make([]string, 0, len(e.Groups))
	for gv, err := range e.Groups {
		gvs = append(gvs, gv+": "+err.Error())
	}
	slices.Sort(gvs)
	return "client: unable to discover the resources of " + strings.Join(gvs, "; ")
}

// discovered is what /api and /apis say: the groups, and the resources of
// every group version when the server answered with aggregated discovery
// (empty for a legacy server and for stale group versions).
type discovered struct {
	groups    *metav1.APIGroupList
	resources map[string]*metav1.APIResourceList
	// aggregated is set when both documents were aggregated.
	aggregated bool
}

func (d *Discovery) discover(ctx context.Context) (*discovered, error) {
	doc := &discovered{
		groups:    &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}},
		resources: map[string]*metav1.APIResourceList{},
	}
	core, coreAgg, err := d.root(ctx, "/api", doc)
	if err != nil {
		return nil, err
	}
	named, namedAgg, err := d.root(ctx, "/apis", doc)
	if err != nil {
		return nil, err
	}
	doc.groups.Groups = append(core, named...)
	doc.aggregated = coreAgg && namedAgg
	return doc, nil
}

// Accept headers of /api and /apis: aggregated discovery first, the legacy
// documents after.
const (
	acceptDiscoveryJSON     = codec.MediaTypeJSON + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + codec.MediaTypeJSON
	acceptDiscoveryProtobuf = codec.MediaTypeProtobuf + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + acceptDiscoveryJSON
)

// root reads /api or /apis, in whichever form the server answers with, and
// adds the resources of an aggregated answer to doc. A 404 is no groups.
func (d *Discovery) root(ctx context.Context, path string, doc *discovered) (groups []metav1.APIGroup, aggregated bool, err error) {
	accept := acceptDiscoveryJSON
	if d.c.protobuf {
		accept = acceptDiscoveryProtobuf
	}
	resp, err := d.c.NewRequest(http.MethodGet).AbsPath(path).SetHeader("Accept", accept).Do(ctx)
	if IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	ct, _ := codec.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct.As == "APIGroupDiscoveryList" && ct.Group == "apidiscovery.k8s.io" && ct.Version == "v2" {
		list := &apidiscoveryv2.APIGroupDiscoveryList{}
		if err := resp.Into(list); err != nil {
			return nil, false, err
		}
		return fromAggregated(list, doc.resources), true, nil
	}
	if path == "/api" {
		legacy := &metav1.APIVersions{}
		if err := resp.Into(legacy); err != nil {
			return nil, false, err
		}
		if len(legacy.Versions) == 0 {
			return nil, false, nil
		}
		core := metav1.APIGroup{Name: ""}
		for _, v := range legacy.Versions {
			core.Versions = append(core.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
		}
		core.PreferredVersion = core.Versions[0]
		return []metav1.APIGroup{core}, false, nil
	}
	named := &metav1.APIGroupList{}
	if err := resp.Into(named); err != nil {
		return nil, false, err
	}
	return named.Groups, false, nil
}

// fromAggregated turns an aggregated discovery document into the groups of
// an APIGroupList and the APIResourceLists of their current versions
// (stale ones are left out of resources).
func fromAggregated(list *apidiscoveryv2.APIGroupDiscoveryList, resources map[string]*metav1.APIResourceList) []metav1.APIGroup {
	var groups []metav1.APIGroup
	for _, item := range list.Items {
		g := metav1.APIGroup{Name: item.Name}
		for _, v := range item.Versions {
			gv := joinGroupVersion(item.Name, v.Version)
			g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv, Version: v.Version})
			if v.Freshness == apidiscoveryv2.DiscoveryFreshnessStale {
				continue
			}
			rl := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv, APIResources: []metav1.APIResource{}}
			for _, r := range v.Resources {
				namespaced := r.Scope == apidiscoveryv2.ScopeNamespace
				res := metav1.APIResource{Name: r.Resource, SingularName: r.SingularResource, Namespaced: namespaced,
					Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories}
				setResponseKind(&res, r.ResponseKind, item.Name, v.Version)
				rl.APIResources = append(rl.APIResources, res)
				for _, sub := range r.Subresources {
					sr := metav1.APIResource{Name: r.Resource + "/" + sub.Subresource, Namespaced: namespaced, Verbs: sub.Verbs}
					setResponseKind(&sr, sub.ResponseKind, item.Name, v.Version)
					rl.APIResources = append(rl.APIResources, sr)
				}
			}
			resources[gv] = rl
		}
		if len(g.Versions) > 0 {
			g.PreferredVersion = g.Versions[0]
		}
		groups = append(groups, g)
	}
	return groups
}

// setResponseKind fills the kind of a legacy entry from an aggregated one;
// the group and version are set only when they are not the list's, as in a
// legacy APIResourceList.
func setResponseKind(r *metav1.APIResource, k *metav1.GroupVersionKind, group, version string) {
	if k == nil {
		return
	}
	r.Kind = k.Kind
	if k.Group != group || k.Version != version {
		r.Group, r.Version = k.Group, k.Version
	}
}

// ServerResourcesForGroupVersion returns the resources of one group version
// ("v1" for the core group, "apps/v1" …), subresources included (their names
// contain a "/", as "pods/status").
func (d *Discovery) ServerResourcesForGroupVersion(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	list := &metav1.APIResourceList{}
	if err := d.get(ctx, path, list); err != nil {
		return nil, err
	}
	if list.GroupVersion == "" {
		list.GroupVersion = groupVersion
	}
	return list, nil
}
