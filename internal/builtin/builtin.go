// Package builtin describes the resources a default kube-apiserver v1.37
// serves, as its discovery lists them: group versions in priority order, and
// for each resource its names, scope, verbs, short names, categories and
// subresources. The table is generated (internal/gen/kindgen) from discovery
// documents captured from a real v1.37.2 server, so the client's scheme and
// the reference server describe the built-in kinds from one source.
package builtin

import "slices"

// Group is an API group ("" for the legacy core group) and the versions a
// default server serves, the preferred one first.
type Group struct {
	Name     string
	Versions []string
}

// Resource is one resource of a group version.
type Resource struct {
	Group, Version string
	Resource       string // plural, lower case: "pods"
	Singular       string
	Kind           string
	Namespaced     bool
	// Verbs are the verbs discovery lists, sorted.
	Verbs      []string
	ShortNames []string
	Categories []string
	// Subresources are listed in path order.
	Subresources []Subresource
}

// Subresource is a subresource of a Resource ("status", "scale", "log" ...)
// with the kind its requests and responses carry. An empty Group and Version
// mean the resource's own group version.
type Subresource struct {
	Name                 string
	Group, Version, Kind string
	Verbs                []string
}

// Groups returns the API groups in the order kube-apiserver lists them.
func Groups() []Group {
	out := make([]Group, len(groups))
	for i, g := range groups {
		out[i] = Group{Name: g.Name, Versions: slices.Clone(g.Versions)}
	}
	return out
}

// Resources returns every resource, group by group in Groups order, each
// group version's resources sorted by name. The slices are the caller's.
func Resources() []Resource {
	out := make([]Resource, len(resources))
	for i := range resources {
		out[i] = resources[i].clone()
	}
	return out
}

// Lookup returns the resource of a group version by its plural name.
func Lookup(group, version, resource string) (Resource, bool) {
	for i := range resources {
		r := &resources[i]
		if r.Group == group && r.Version == version && r.Resource == resource {
			return r.clone(), true
		}
	}
	return Resource{}, false
}

// Subresource returns r's subresource called name.
func (r Resource) Subresource(name string) (Subresource, bool) {
	for _, s := range r.Subresources {
		if s.Name == name {
			return s, true
		}
	}
	return Subresource{}, false
}

// HasVerb reports whether discovery lists verb for r.
func (r Resource) HasVerb(verb string) bool { return slices.Contains(r.Verbs, verb) }

func (r *Resource) clone() Resource {
	c := *r
	c.Verbs = slices.Clone(r.Verbs)
	c.ShortNames = slices.Clone(r.ShortNames)
	c.Categories = slices.Clone(r.Categories)
	c.Subresources = make([]Subresource, len(r.Subresources))
	for i, s := range r.Subresources {
		s.Verbs = slices.Clone(s.Verbs)
		c.Subresources[i] = s
	}
	if len(r.Subresources) == 0 {
		c.Subresources = nil
	}
	return c
}
