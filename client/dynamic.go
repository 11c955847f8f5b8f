package client

import (
	"context"
	"fmt"
	"net/http"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// DynamicClient makes requests about objects of any resource, held as
// unstructured.Unstructured: for kinds without a Go type (custom resources
// known only at run time, generic tools). It always speaks JSON.
type DynamicClient struct {
	c *Client
}

// Dynamic returns the dynamic client of c.
func Dynamic(c *Client) *DynamicClient { return &DynamicClient{c: c} }

// Resource returns a client for the resource gvr, with no namespace: call
// Namespace for a namespaced resource. (The dynamic client does not know a
// resource's scope; RESTMapper does.)
func (d *DynamicClient) Resource(gvr GroupVersionResource) *DynamicResource {
	return &DynamicResource{c: d.c, gvr: gvr}
}

// DynamicResource makes requests about one resource, in one namespace or in
// none. It is immutable and safe for concurrent use.
type DynamicResource struct {
	c         *Client
	gvr       GroupVersionResource
	namespace string
}

// Namespace returns a client for namespace ns ("" for cluster-scoped
// resources, or all namespaces in List, Watch and DeleteCollection). Unlike
// the typed client's, the namespace of an object passed to Create, Update or
// Apply must agree with it; the server rejects a mismatch.
func (r *DynamicResource) Namespace(ns string) *DynamicResource {
	cp := *r
	cp.namespace = ns
	return &cp
}

func (r *DynamicResource) request(method string) *Request {
	return r.c.NewRequest(method).Resource(r.gvr).Namespace(r.namespace).SetHeader("Accept", codec.MediaTypeJSON)
}

// do sends req and decodes the object it returns.
func (r *DynamicResource) do(ctx context.Context, req *Request) (*unstructured.Unstructured, error) {
	resp, err := req.Do(ctx)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := resp.Into(u); err != nil {
		return nil, err
	}
	return u, nil
}

// body encodes obj for a request; its apiVersion and kind must be set, as
// the server requires them of unstructured bodies.
func (r *DynamicResource) body(obj *unstructured.Unstructured) ([]byte, error) {
	if obj == nil || obj.Object == nil {
		return nil, fmt.Errorf("client: nil object")
	}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, fmt.Errorf("client: object %q has no kind or apiVersion", obj.GetName())
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("client: encoding %s: %w", obj.GetKind(), err)
	}
	return b, nil
}

// Get returns the object called name, or its subresource (at most one).
func (r *DynamicResource) Get(ctx context.Context, name string, opts metav1.GetOptions, subresource ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	return r.do(ctx, r.request(http.MethodGet).Name(name).SubResource(sub).Params(opts.Query()))
}

// List returns the objects opts selects. Items of typed lists, which servers
// send without kind and apiVersion, get the list's.
func (r *DynamicResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	opts.Watch = false
	resp, err := r.request(http.MethodGet).Params(opts.Query()).Do(ctx)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if ct := resp.ContentType(); ct != codec.MediaTypeJSON && ct != "" {
		return nil, fmt.Errorf("client: unexpected list Content-Type %q", resp.Header.Get("Content-Type"))
	}
	list := &unstructured.UnstructuredList{}
	// Decoded from the stream, token by token: the body is never held whole.
	if err := list.UnmarshalJSONFrom(kjson.NewDecoder(resp.Body)); err != nil {
		return nil, fmt.Errorf("client: decoding list: %w", err)
	}
	return list, nil
}

// Watch starts a watch of the objects opts selects; see TypedClient.Watch.
func (r *DynamicResource) Watch(ctx context.Context, opts metav1.ListOptions) (Watcher[unstructured.Unstructured], error) {
	opts.Watch = true
	wctx, cancel := context.WithCancel(ctx)
	resp, err := r.request(http.MethodGet).Params(opts.Query()).Do(wctx)
	if err != nil {
		cancel()
		return nil, err
	}
	if isProtobuf(resp.Header.Get("Content-Type")) {
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("client: the server answered a JSON watch in protobuf")
	}
	decode := func(raw []byte) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		return u, nil
	}
	return startWatch(wctx, cancel, resp.Body, false, decode), nil
}

// Create creates obj (or, with a subresource, posts obj to it, such as a
// pod's "eviction") and returns the result.
func (r *DynamicResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, subresource ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	body, err := r.body(obj)
	if err != nil {
		return nil, err
	}
	req := r.request(http.MethodPost)
	if sub != "" {
		req.Name(obj.GetName()).SubResource(sub)
	}
	return r.do(ctx, req.Params(opts.Query()).Body(body, codec.MediaTypeJSON))
}

// Update replaces the object named by obj (or its subresource) with obj. As
// for the typed client, an obj with a resourceVersion fails with a Conflict
// if the object changed since, and is retried on transient faults.
func (r *DynamicResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, subresource ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	body, err := r.body(obj)
	if err != nil {
		return nil, err
	}
	req := r.request(http.MethodPut).Name(obj.GetName()).SubResource(sub).Params(opts.Query()).
		Body(body, codec.MediaTypeJSON).Retryable(obj.GetResourceVersion() != "")
	return r.do(ctx, req)
}

// UpdateStatus replaces the status of the object named by obj.
func (r *DynamicResource) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return r.Update(ctx, obj, opts, "status")
}

// Patch applies a patch of type pt to the object called name (or its
// subresource). Patches are never retried.
func (r *DynamicResource) Patch(ctx context.Context, name string, pt PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	return r.do(ctx, r.request(http.MethodPatch).Name(name).SubResource(sub).Params(opts.Query()).Body(data, string(pt)))
}

// Apply sends obj as the server-side apply configuration of the object
// called name (or of its subresource); see TypedClient.Apply. obj holds only
// the fields the manager means to own, with apiVersion, kind and name.
func (r *DynamicResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, subresource ...string) (*unstructured.Unstructured, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	body, err := r.body(obj)
	if err != nil {
		return nil, err
	}
	return r.do(ctx, r.request(http.MethodPatch).Name(name).SubResource(sub).Params(opts.Query()).Body(body, string(ApplyPatchType)))
}

// ApplyStatus applies obj as the status of the object called name.
func (r *DynamicResource) ApplyStatus(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	return r.Apply(ctx, name, obj, opts, "status")
}

// Delete deletes the object called name (or its subresource); see
// TypedClient.Delete.
func (r *DynamicResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresource ...string) error {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return err
	}
	body, _, err := deleteOptionsBody(opts, false)
	if err != nil {
		return err
	}
	resp, err := r.request(http.MethodDelete).Name(name).SubResource(sub).Body(body, codec.MediaTypeJSON).
		Retryable(hasPreconditions(opts)).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}

// DeleteCollection deletes the objects listOpts selects.
func (r *DynamicResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	body, _, err := deleteOptionsBody(opts, false)
	if err != nil {
		return err
	}
	resp, err := r.request(http.MethodDelete).Params(listOpts.Query()).Body(body, codec.MediaTypeJSON).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}
