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

func newDynamicLW(c *client.Client, res client.Resource[unstructured.Unstructured], gvr client.GroupVersionResource, ns string) *dynamicLW {
	return &dynamicLW{c: c, gvr: gvr, ns: ns, res: res, resolved: ns == ""}
}

// dynamicLW is a dynamic Resource whose namespace is set once the
// resource's scope is known.
type dynamicLW struct {
	c   *client.Client
	gvr client.GroupVersionResource
	ns  string

	mu       sync.Mutex
	res      client.Resource[unstructured.Unstructured]
	resolved bool // res has its namespace
}

// resource returns the dynamic Resource to use, resolving the resource's
// scope once when a namespace was asked for. A failed lookup is returned
// (the reflector retries) and tried again next time.
func (d *dynamicLW) resource(ctx context.Context) (client.Resource[unstructured.Unstructured], error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.resolved {
		return d.res, nil
	}
	m, err := d.c.RESTMapper().ResourceFor(ctx, d.gvr)
	if err != nil {
		return nil, fmt.Errorf("informer: finding the scope of %s: %w", d.gvr.GroupResource(), err)
	}
	if m.Namespaced {
		d.res = d.res.Namespace(d.ns)
	}
	d.resolved = true
	return d.res, nil
}

// ListEach lists with the dynamic Resource.
func (d *dynamicLW) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*unstructured.Unstructured) error) (metav1.ListMeta, error) {
	res, err := d.resource(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	return res.ListEach(ctx, opts, fn)
}

// Watch watches with the dynamic Resource.
func (d *dynamicLW) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[unstructured.Unstructured], error) {
	res, err := d.resource(ctx)
	if err != nil {
		return nil, err
	}
	return res.Watch(ctx, opts)
}
