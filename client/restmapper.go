package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"
)

// RESTMapping says how a kind is served: the resource, the kind, and whether
// objects live in namespaces.
type RESTMapping struct {
	// Resource is the plural resource, such as {"apps", "v1", "deployments"}.
	Resource GroupVersionResource
	// Kind is the kind, such as {"apps", "v1", "Deployment"}.
	Kind GroupVersionKind
	// Namespaced says the objects live in namespaces.
	Namespaced bool
}

// NoMatchError reports a kind or resource the server does not serve, even
// after the mapper refreshed its cache.
type NoMatchError struct {
	// Group and Kind, or Group and Resource, are what was asked for.
	Group, Kind, Resource string
	// Versions are the versions asked for, if any.
	Versions []string
}

// Error says what was not found.
func (e *NoMatchError) Error() string {
	what := "kind " + metav1.GroupKind{Group: e.Group, Kind: e.Kind}.String()
	if e.Resource != "" {
		what = "resource " + metav1.GroupResource{Group: e.Group, Resource: e.Resource}.String()
	}
	if len(e.Versions) > 0 {
		what += " in versions " + strings.Join(e.Versions, ", ")
	}
	return "client: no matches for " + what
}

// IsNoMatch reports whether err is (or wraps) a *NoMatchError.
func IsNoMatch(err error) bool {
	var nm *NoMatchError
	return errors.As(err, &nm)
}

// RESTMapper maps kinds to resources and back, from discovery, and caches
// what it learnt. On a server with aggregated discovery it loads every group
// and resource at once (two requests); on one without, it loads the group
// list and then the resources of the groups it is asked about, one group at
// a time.
//
// A lookup that misses the cache refreshes it and looks again, so kinds
// served after the cache was filled (a CRD just created) are found.
// Refreshes on misses are rate-limited (RESTMapperOptions): a program that
// keeps asking for a kind the server does not serve gets *NoMatchError from
// the cache instead of sending discovery requests in a loop. Concurrent
// loads of the same document share one request (singleflight). It is safe
// for concurrent use.
type RESTMapper struct {
	d      *Discovery
	flight singleflight.Group
	misses *rate.Limiter // refreshes on a miss

	mu        sync.RWMutex
	groups    map[string]metav1.APIGroup // nil until loaded
	resources map[string][]metav1.APIResource
	// complete means resources holds every group version of groups (they came
	// from aggregated discovery): nothing is loaded per group version.
	complete bool
}

// RESTMapperOptions tunes a RESTMapper.
type RESTMapperOptions struct {
	// MissRefreshRate is how many refreshes per second lookups that miss the
	// cache may cause over time (default 5, as controller-runtime's dynamic
	// mapper allowed); MissRefreshBurst how many in a row (default 5). A miss
	// beyond them is answered from the cache.
	MissRefreshRate  rate.Limit
	MissRefreshBurst int
}

// NewRESTMapper returns a mapper over d with an empty cache and default
// options.
func NewRESTMapper(d *Discovery) *RESTMapper {
	return NewRESTMapperWithOptions(d, RESTMapperOptions{})
}

// NewRESTMapperWithOptions returns a mapper over d with an empty cache.
func NewRESTMapperWithOptions(d *Discovery, opts RESTMapperOptions) *RESTMapper {
	if opts.MissRefreshRate <= 0 {
		opts.MissRefreshRate = 5
	}
	if opts.MissRefreshBurst <= 0 {
		opts.MissRefreshBurst = 5
	}
	return &RESTMapper{d: d, resources: map[string][]metav1.APIResource{},
		misses: rate.NewLimiter(opts.MissRefreshRate, opts.MissRefreshBurst)}
}

// Reset empties the cache.
func (m *RESTMapper) Reset() {
	m.mu.Lock()
	m.groups = nil
	m.resources = map[string][]metav1.APIResource{}
	m.complete = false
	m.mu.Unlock()
}

// RESTMapping returns how the kind gk is served, in the first of versions
// the server serves it in; without versions, in the group's preferred
// version if the kind is there, else in the first version that has it. A
// kind the server does not serve is a *NoMatchError (IsNoMatch).
func (m *RESTMapper) RESTMapping(ctx context.Context, gk metav1.GroupKind, versions ...string) (*RESTMapping, error) {
	return m.lookup(ctx, gk.Group, versions, func(r metav1.APIResource) bool { return r.Kind == gk.Kind },
		&NoMatchError{Group: gk.Group, Kind: gk.Kind, Versions: versions})
}

// ResourceFor returns how the resource gvr is served. gvr.Resource may be the
// plural, the singular or a short name ("deployments", "deployment",
// "deploy"), in any case; an empty gvr.Version means the group's preferred
// version (or the first that has the resource). The mapping names the plural.
func (m *RESTMapper) ResourceFor(ctx context.Context, gvr GroupVersionResource) (*RESTMapping, error) {
	var versions []string
	if gvr.Version != "" {
		versions = []string{gvr.Version}
	}
	name := strings.ToLower(gvr.Resource)
	match := func(r metav1.APIResource) bool {
		if r.Name == name || r.SingularName == name {
			return true
		}
		for _, s := range r.ShortNames {
			if s == name {
				return true
			}
		}
		return false
	}
	return m.lookup(ctx, gvr.Group, versions, match, &NoMatchError{Group: gvr.Group, Resource: gvr.Resource, Versions: versions})
}

// KindFor returns the kind of the resource gvr (see ResourceFor).
func (m *RESTMapper) KindFor(ctx context.Context, gvr GroupVersionResource) (GroupVersionKind, error) {
	mp, err := m.ResourceFor(ctx, gvr)
	if err != nil {
		return GroupVersionKind{}, err
	}
	return mp.Kind, nil
}

// lookup finds the first resource of group that match accepts, loading the
// group if need be and refreshing the cache once on a miss, when the miss
// limiter allows.
func (m *RESTMapper) lookup(ctx context.Context, group string, versions []string, match func(metav1.APIResource) bool, miss *NoMatchError) (*RESTMapping, error) {
	var loadErr error
	for refresh := range 2 {
		var fresh bool
		fresh, loadErr = m.load(ctx, group, refresh == 1)
		if mp, ok := m.find(group, versions, match); ok {
			return mp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if fresh || !m.misses.Allow() {
			break // just loaded from the server, or refreshed enough lately
		}
	}
	if loadErr != nil {
		return nil, fmt.Errorf("%w (discovery failed: %w)", miss, loadErr)
	}
	return nil, miss
}

// load makes sure the group list and the resources of group's versions are
// cached; force reloads them. fresh reports that the group list was loaded
// now. It returns the first discovery error, having loaded what it could.
func (m *RESTMapper) load(ctx context.Context, group string, force bool) (fresh bool, err error) {
	m.mu.RLock()
	haveGroups := m.groups != nil
	m.mu.RUnlock()
	if force || !haveGroups {
		if err := m.loadGroups(ctx, force); err != nil {
			return false, err
		}
		fresh = true
	}
	m.mu.RLock()
	g, ok := m.groups[group]
	var missing []string
	for _, v := range g.Versions {
		// After an aggregated load, what is missing is a stale group version.
		if _, have := m.resources[v.GroupVersion]; !have || force && !m.complete {
			missing = append(missing, v.GroupVersion)
		}
	}
	m.mu.RUnlock()
	if !ok {
		return fresh, nil
	}
	for _, gv := range missing {
		if lerr := m.loadResources(ctx, gv, force); lerr != nil && err == nil {
			err = lerr
		}
	}
	return fresh, err
}

// loadGroups loads the group list, and with it every group version's
// resources when the server serves aggregated discovery. Unless force is
// set, a list another lookup loaded meanwhile is kept.
func (m *RESTMapper) loadGroups(ctx context.Context, force bool) error {
	_, err, _ := m.flight.Do("groups", func() (any, error) {
		if !force {
			m.mu.RLock()
			have := m.groups != nil
			m.mu.RUnlock()
			if have {
				return nil, nil
			}
		}
		doc, err := m.d.discover(ctx)
		if err != nil {
			return nil, err
		}
		groups := make(map[string]metav1.APIGroup, len(doc.groups.Groups))
		for _, g := range doc.groups.Groups {
			groups[g.Name] = g
		}
		m.mu.Lock()
		m.groups = groups
		m.complete = doc.aggregated
		if doc.aggregated {
			m.resources = make(map[string][]metav1.APIResource, len(doc.resources))
			for gv, list := range doc.resources {
				m.resources[gv] = list.APIResources
			}
		}
		m.mu.Unlock()
		return nil, nil
	})
	return err
}

// loadResources loads the resources of gv. Unless force is set, a version
// that another lookup loaded since this one found it missing is not loaded
// again: singleflight shares only loads that overlap in time.
func (m *RESTMapper) loadResources(ctx context.Context, gv string, force bool) error {
	_, err, _ := m.flight.Do("resources/"+gv, func() (any, error) {
		if !force {
			m.mu.RLock()
			_, have := m.resources[gv]
			m.mu.RUnlock()
			if have {
				return nil, nil
			}
		}
		list, err := m.d.ServerResourcesForGroupVersion(ctx, gv)
		if IsNotFound(err) {
			list, err = &metav1.APIResourceList{}, nil // the version went away
		}
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		m.resources[gv] = list.APIResources
		m.mu.Unlock()
		return nil, nil
	})
	return err
}

// find looks in the cache.
func (m *RESTMapper) find(group string, versions []string, match func(metav1.APIResource) bool) (*RESTMapping, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g, ok := m.groups[group]
	if !ok {
		return nil, false
	}
	order := versions
	if len(order) == 0 {
		order = append(order, g.PreferredVersion.Version)
		for _, v := range g.Versions {
			if v.Version != g.PreferredVersion.Version {
				order = append(order, v.Version)
			}
		}
	}
	for _, v := range order {
		gv := joinGroupVersion(group, v)
		for _, r := range m.resources[gv] {
			if strings.Contains(r.Name, "/") || !match(r) {
				continue
			}
			return &RESTMapping{
				Resource:   GroupVersionResource{Group: group, Version: v, Resource: r.Name},
				Kind:       GroupVersionKind{Group: group, Version: v, Kind: r.Kind},
				Namespaced: r.Namespaced,
			}, true
		}
	}
	return nil, false
}
