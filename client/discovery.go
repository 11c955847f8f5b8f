package client

import (
	"context"
	"net/http"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// VersionInfo is the server's /version document.
type VersionInfo struct {
	Major        string `json:"major"`        // "1"
	Minor        string `json:"minor"`        // "32"
	GitVersion   string `json:"gitVersion"`   // "v1.32.2"
	GitCommit    string `json:"gitCommit"`    // the source commit
	GitTreeState string `json:"gitTreeState"` // "clean" or "dirty"
	BuildDate    string `json:"buildDate"`    // RFC 3339
	GoVersion    string `json:"goVersion"`    // "go1.23.6"
	Compiler     string `json:"compiler"`     // "gc"
	Platform     string `json:"platform"`     // "linux/amd64"
}

// String returns GitVersion.
func (v *VersionInfo) String() string { return v.GitVersion }

// Discovery asks the server what it serves: its version, API groups, and the
// resources of each group version. Its answers are not cached; RESTMapper
// caches them.
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
// server's order. A server without /api (an aggregated or extension server)
// has no core group in the list.
func (d *Discovery) ServerGroups(ctx context.Context) (*metav1.APIGroupList, error) {
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	legacy := &metav1.APIVersions{}
	switch err := d.get(ctx, "/api", legacy); {
	case err == nil:
		if len(legacy.Versions) > 0 {
			core := metav1.APIGroup{Name: ""}
			for _, v := range legacy.Versions {
				core.Versions = append(core.Versions, metav1.GroupVersionForDiscovery{GroupVersion: v, Version: v})
			}
			core.PreferredVersion = core.Versions[0]
			list.Groups = append(list.Groups, core)
		}
	case IsNotFound(err):
	default:
		return nil, err
	}
	named := &metav1.APIGroupList{}
	switch err := d.get(ctx, "/apis", named); {
	case err == nil:
		list.Groups = append(list.Groups, named.Groups...)
	case IsNotFound(err):
	default:
		return nil, err
	}
	return list, nil
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
