package informer

import (
	"context"
	"fmt"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/reflector"
)

// NewDynamicListerWatcher returns a reflector.ListerWatcher for the resource
// gvr through the dynamic client, in namespace ns ("" for all namespaces,
// or a cluster-scoped resource). A namespace given for a resource that
// RESTMapper reports cluster-scoped is ignored, so that one factory
// namespace serves namespaced and cluster-scoped resources alike; the
// scope is looked up on first use.
func NewDynamicListerWatcher(c *client.Client, gvr client.GroupVersionResource, ns string) reflector.ListerWatcher[unstructured.Unstructured] {
	return newDynamicLW(c, client.Dynamic(c).Resource(gvr), gvr, ns)
}

func newDynamicLW(c *client.Client, res client.Resource[unstructured.Unstructured], gvr client.GroupVersionResource, ns string) *lazyLW[unstructured.Unstructured, client.Resource[unstructured.Unstructured]] {
	return &lazyLW[unstructured.Unstructured, client.Resource[unstructured.Unstructured]]{c: c, gvr: gvr, ns: ns, res: res, resolved: ns == ""}
}

// scopable is a client of one resource that can be scoped to a namespace:
// a client.Resource or a client.MetadataResource.
type scopable[T any, R any] interface {
	reflector.ListerWatcher[T]
	Namespace(ns string) R
}

// lazyLW is a client of a resource known by its GroupVersionResource alone,
// whose namespace is set, and whose kind is learnt, once the RESTMapper has
// told the resource's scope and kind.
type lazyLW[T any, R scopable[T, R]] struct {
	c   *client.Client
	gvr client.GroupVersionResource
	ns  string

	mu       sync.Mutex
	res      R
	kind     client.GroupVersionKind // once resolved by a lookup
	resolved bool                    // res has its namespace
	failed   error                   // if set, what every call fails with
	// namespaced is the resource's scope, once resolved by a lookup.
	namespaced bool
}

// resource returns the client to use, resolving the resource's scope and
// kind once if need be. A failed lookup is returned (the reflector
// retries) and tried again next time.
func (d *lazyLW[T, R]) resource(ctx context.Context) (R, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failed != nil {
		return d.res, d.failed
	}
	if d.resolved {
		return d.res, nil
	}
	m, err := d.c.RESTMapper().ResourceFor(ctx, d.gvr)
	if err != nil {
		return d.res, fmt.Errorf("informer: looking up the resource %s: %w", d.gvr.GroupResource(), err)
	}
	if m.Namespaced {
		d.res = d.res.Namespace(d.ns)
	}
	d.kind, d.namespaced = m.Kind, m.Namespaced
	d.resolved = true
	return d.res, nil
}

// scopeNamespace returns the namespace the client lists in: "" for a
// cluster-scoped resource, once resolved.
func (d *lazyLW[T, R]) scopeNamespace() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.resolved && !d.namespaced {
		return ""
	}
	return d.ns
}

// ListEach lists with the client.
func (d *lazyLW[T, R]) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error) {
	res, err := d.resource(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	return res.ListEach(ctx, opts, fn)
}

// Watch watches with the client.
func (d *lazyLW[T, R]) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[T], error) {
	res, err := d.resource(ctx)
	if err != nil {
		return nil, err
	}
	return res.Watch(ctx, opts)
}
