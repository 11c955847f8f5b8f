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

// DynamicInformer is the informer of a resource held as
// unstructured.Unstructured, as [Factory.ForResource] returns it.
type DynamicInformer = SharedInformer[unstructured.Unstructured, *unstructured.Unstructured]

// NewDynamicListerWatcher returns a reflector.ListerWatcher for the resource
// gvr through the dynamic client, in namespace ns ("" for all namespaces,
// or a cluster-scoped resource). A namespace given for a resource that
// RESTMapper reports cluster-scoped is ignored, so that one factory
// namespace serves namespaced and cluster-scoped resources alike.
//
// It exists because client.DynamicResource has List and Watch but no
// ListEach: lists are decoded a page at a time (pages of the reflector's
// PageSize, 500 by default) and their items handed on one by one.
func NewDynamicListerWatcher(c *client.Client, gvr client.GroupVersionResource, ns string) reflector.ListerWatcher[unstructured.Unstructured] {
	return &dynamicLW{c: c, gvr: gvr, ns: ns}
}

// dynamicLW adapts client.DynamicResource to reflector.ListerWatcher.
type dynamicLW struct {
	c   *client.Client
	gvr client.GroupVersionResource
	ns  string

	mu  sync.Mutex
	res *client.DynamicResource // resolved on first use
}

// resource returns the dynamic client to use, resolving the resource's
// scope once when a namespace was asked for. A failed lookup is returned
// (the reflector retries) and tried again next time.
func (d *dynamicLW) resource(ctx context.Context) (*client.DynamicResource, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.res != nil {
		return d.res, nil
	}
	res := client.Dynamic(d.c).Resource(d.gvr)
	if d.ns != "" {
		m, err := d.c.RESTMapper().ResourceFor(ctx, d.gvr)
		if err != nil {
			return nil, fmt.Errorf("informer: finding the scope of %s: %w", d.gvr.GroupResource(), err)
		}
		if m.Namespaced {
			res = res.Namespace(d.ns)
		}
	}
	d.res = res
	return res, nil
}

// ListEach lists one page (opts.Limit) with the dynamic client and hands
// its items to fn in order.
func (d *dynamicLW) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*unstructured.Unstructured) error) (metav1.ListMeta, error) {
	res, err := d.resource(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	list, err := res.List(ctx, opts)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	meta := metav1.ListMeta{
		ResourceVersion:    list.GetResourceVersion(),
		Continue:           list.GetContinue(),
		RemainingItemCount: list.GetRemainingItemCount(),
	}
	for i := range list.Items {
		// A copy of its own for each item, so that a cached item does not
		// keep the page's whole slice alive.
		item := list.Items[i]
		list.Items[i] = unstructured.Unstructured{}
		if err := fn(&item); err != nil {
			return meta, err
		}
	}
	return meta, nil
}

// Watch watches with the dynamic client.
func (d *dynamicLW) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[unstructured.Unstructured], error) {
	res, err := d.resource(ctx)
	if err != nil {
		return nil, err
	}
	return res.Watch(ctx, opts)
}
