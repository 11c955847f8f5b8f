package client

import (
	"context"
	"fmt"
	"io"
	"net/http"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Accept headers of metadata-only requests: the metadata in the client's
// encoding, then in JSON, then the whole object in JSON for servers (such
// as aggregated API servers) that cannot convert, as client-go's metadata
// client asks.
const (
	acceptMetadataJSON = codec.MediaTypePartialObjectMetadataJSON + ", " + codec.MediaTypeJSON
	acceptMetadataPB   = codec.MediaTypePartialObjectMetadataProtobuf + ", " + acceptMetadataJSON

	acceptMetadataListJSON = codec.MediaTypePartialObjectMetadataListJSON + ", " + codec.MediaTypeJSON
	acceptMetadataListPB   = codec.MediaTypePartialObjectMetadataListProtobuf + ", " + acceptMetadataListJSON
)

// partialTypeMeta is the kind and apiVersion of the objects the metadata
// client returns, whatever the server answered with.
var partialTypeMeta = metav1.TypeMeta{Kind: codec.AsPartialObjectMetadata, APIVersion: codec.GroupMeta + "/v1"}

// MetadataClient makes metadata-only requests about objects of any
// resource: the server sends each object's metadata (name, labels,
// annotations, owner references, finalizers, resourceVersion …) as a
// meta.k8s.io/v1 PartialObjectMetadata instead of the whole object. It is
// what a controller that only needs to know which objects exist, or to
// manage their labels and finalizers, uses to keep a cache of any kind —
// Secrets, large custom resources — at a fraction of the memory and
// bandwidth.
//
// It speaks protobuf when the Config prefers it (for every resource, custom
// ones included: the metadata has a protobuf form even where the object has
// none), and JSON otherwise. Against a server that cannot convert objects to
// their metadata it falls back to the whole objects, of which it keeps the
// metadata. Returned objects have kind PartialObjectMetadata and apiVersion
// meta.k8s.io/v1.
type MetadataClient struct {
	c *Client
}

// Metadata returns the metadata client of c.
func Metadata(c *Client) *MetadataClient { return &MetadataClient{c: c} }

// Resource returns a client for the resource gvr, with no namespace: call
// Namespace for a namespaced resource.
func (m *MetadataClient) Resource(gvr GroupVersionResource) *MetadataResource {
	return &MetadataResource{c: m.c, gvr: gvr}
}

// MetadataResource makes metadata-only requests about one resource, in one
// namespace or in none. It is immutable and safe for concurrent use. Its
// ListEach and Watch make it a reflector.ListerWatcher of
// metav1.PartialObjectMetadata, so that an informer can cache the metadata
// of any resource.
type MetadataResource struct {
	c         *Client
	gvr       GroupVersionResource
	namespace string
}

// Namespace returns a client for namespace ns ("" for cluster-scoped
// resources, or all namespaces in List, Watch and DeleteCollection).
func (r *MetadataResource) Namespace(ns string) *MetadataResource {
	cp := *r
	cp.namespace = ns
	return &cp
}

func (r *MetadataResource) request(method, accept string) *Request {
	return r.c.NewRequest(method).Resource(r.gvr).Namespace(r.namespace).SetHeader("Accept", accept)
}

// accept is the Accept header for one object (list false) or a list.
func (r *MetadataResource) accept(list bool) string {
	switch {
	case list && r.c.protobuf:
		return acceptMetadataListPB
	case list:
		return acceptMetadataListJSON
	case r.c.protobuf:
		return acceptMetadataPB
	}
	return acceptMetadataJSON
}

// decodeOne decodes a response holding one object's metadata and closes it.
func decodeOne(resp *Response) (*metav1.PartialObjectMetadata, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("client: reading the response: %w", err)
	}
	p, err := decodePartial(b, resp.ContentType() == codec.MediaTypeProtobuf, nil)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// decodePartial decodes the metadata of one object: a PartialObjectMetadata
// in protobuf or JSON, or the metadata of a whole object in JSON (the
// fallback). sd, if not nil, is the stream decoder of a watch.
func decodePartial(b []byte, protobuf bool, sd *codec.StreamDecoder) (*metav1.PartialObjectMetadata, error) {
	p := &metav1.PartialObjectMetadata{}
	switch {
	case protobuf:
		var tm metav1.TypeMeta
		var err error
		if sd != nil {
			tm, err = sd.DecodeProtobuf(b, p)
		} else {
			tm, err = codec.UnmarshalProtobuf(b, p)
		}
		if err != nil {
			return nil, fmt.Errorf("client: decoding PartialObjectMetadata: %w", err)
		}
		if tm.Kind != codec.AsPartialObjectMetadata {
			return nil, fmt.Errorf("client: the server answered a metadata request with a protobuf %s", tm.Kind)
		}
	case sd != nil:
		if err := sd.DecodeJSON(b, p); err != nil {
			return nil, err
		}
	default:
		if err := kjson.Unmarshal(b, p); err != nil {
			return nil, fmt.Errorf("client: decoding PartialObjectMetadata: %w", err)
		}
	}
	p.TypeMeta = partialTypeMeta
	return p, nil
}

// Get returns the metadata of the object called name (or of its
// subresource, at most one).
func (r *MetadataResource) Get(ctx context.Context, name string, opts metav1.GetOptions, subresource ...string) (*metav1.PartialObjectMetadata, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	resp, err := r.request(http.MethodGet, r.accept(false)).Name(name).SubResource(sub).Params(opts.Query()).Do(ctx)
	if err != nil {
		return nil, err
	}
	return decodeOne(resp)
}

// List returns the metadata of the objects opts selects.
func (r *MetadataResource) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: codec.AsPartialObjectMetadataList, APIVersion: partialTypeMeta.APIVersion}}
	var ptrs []*metav1.PartialObjectMetadata
	meta, err := r.ListEach(ctx, opts, func(p *metav1.PartialObjectMetadata) error {
		ptrs = append(ptrs, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	list.ListMeta = meta
	list.Items = make([]metav1.PartialObjectMetadata, len(ptrs))
	for i, p := range ptrs {
		list.Items[i] = *p
	}
	return list, nil
}

// ListEach lists like List but hands each item to fn as soon as it is
// decoded, and returns the list's metadata. An error from fn stops the list
// and is returned.
func (r *MetadataResource) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*metav1.PartialObjectMetadata) error) (metav1.ListMeta, error) {
	opts.Watch = false
	resp, err := r.request(http.MethodGet, r.accept(true)).Params(opts.Query()).Do(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	defer resp.Body.Close()
	each := func(p *metav1.PartialObjectMetadata) error {
		p.TypeMeta = partialTypeMeta
		return fn(p)
	}
	dopts := decodeOptionsFrom(ctx)
	var h codec.ListHeader
	switch ct := resp.ContentType(); ct {
	case codec.MediaTypeProtobuf:
		h, err = codec.DecodeProtobufListWith(resp.Body, 0, dopts, each)
		if err == nil && h.Kind != codec.AsPartialObjectMetadataList {
			err = fmt.Errorf("client: the server answered a metadata list with a protobuf %s", h.Kind)
		}
	case codec.MediaTypeJSON, "":
		// A PartialObjectMetadataList, or, from a server that cannot
		// convert, the whole list, whose items' metadata is kept.
		h, err = codec.DecodeJSONListWith(resp.Body, dopts, each)
	default:
		return metav1.ListMeta{}, fmt.Errorf("client: unexpected list Content-Type %q", resp.Header.Get("Content-Type"))
	}
	return h.ListMeta, err
}

// Watch starts a watch of the metadata of the objects opts selects; its
// events carry PartialObjectMetadata. See TypedClient.Watch.
func (r *MetadataResource) Watch(ctx context.Context, opts metav1.ListOptions) (Watcher[metav1.PartialObjectMetadata], error) {
	opts.Watch = true
	wctx, cancel := context.WithCancel(ctx)
	resp, err := r.request(http.MethodGet, r.accept(false)).Params(opts.Query()).Do(wctx)
	if err != nil {
		cancel()
		return nil, err
	}
	pb := isProtobuf(resp.Header.Get("Content-Type"))
	sd := codec.NewStreamDecoder(decodeOptionsFrom(ctx))
	decode := func(raw []byte) (*metav1.PartialObjectMetadata, error) { return decodePartial(raw, pb, sd) }
	return startWatch(wctx, cancel, resp.Body, pb, decode), nil
}

// Patch applies a patch of type pt to the object called name (or to its
// subresource) and returns the metadata of the result. Patches are never
// retried. With a JSON merge patch of metadata, it is how a controller
// holding only metadata adds a label or removes a finalizer.
func (r *MetadataResource) Patch(ctx context.Context, name string, pt PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*metav1.PartialObjectMetadata, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	resp, err := r.request(http.MethodPatch, r.accept(false)).Name(name).SubResource(sub).Params(opts.Query()).Body(data, string(pt)).Do(ctx)
	if err != nil {
		return nil, err
	}
	return decodeOne(resp)
}

// Delete deletes the object called name (or its subresource); see
// TypedClient.Delete. The DeleteOptions go in the client's encoding.
func (r *MetadataResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresource ...string) error {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return err
	}
	body, ct, err := deleteOptionsBody(opts, r.c.protobuf)
	if err != nil {
		return err
	}
	resp, err := r.request(http.MethodDelete, r.accept(false)).Name(name).SubResource(sub).Body(body, ct).
		Retryable(hasPreconditions(opts)).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}

// DeleteCollection deletes the objects listOpts selects.
func (r *MetadataResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	body, ct, err := deleteOptionsBody(opts, r.c.protobuf)
	if err != nil {
		return err
	}
	resp, err := r.request(http.MethodDelete, r.accept(true)).Params(listOpts.Query()).Body(body, ct).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}
