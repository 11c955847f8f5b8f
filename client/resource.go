package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Reader is the verbs that read objects of type T: what a lister, a cache or
// a reflector needs (a Reader is a reflector.ListerWatcher).
type Reader[T any] interface {
	// Get returns the object called name.
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*T, error)
	// List returns the objects opts selects. The response is decoded as it
	// arrives, item by item; use ListEach to handle items without keeping
	// them all. For large collections, page with opts.Limit and
	// opts.Continue.
	List(ctx context.Context, opts metav1.ListOptions) (*List[T], error)
	// ListEach lists like List but hands each object to fn as soon as it is
	// decoded, holding no more than one at a time, and returns the list's
	// metadata. fn may keep the object. An error from fn stops the list and
	// is returned.
	ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error)
	// Watch starts a watch of the objects opts selects and returns its
	// events as they arrive, decoded one at a time. The watch ends when ctx
	// is done, when Stop is called (either closes the connection at once),
	// when the server ends it (its timeout, or after an ERROR event), or on
	// a broken stream (reported as an EventError). A watch that could not
	// be started returns an error instead.
	Watch(ctx context.Context, opts metav1.ListOptions) (Watcher[T], error)
}

// Deleter is the verbs that delete objects.
type Deleter interface {
	// Delete deletes the object called name. Objects with finalizers are
	// only marked for deletion (they get a deletionTimestamp) until the
	// finalizers are removed. opts carries preconditions (a delete with one
	// is retried on transient faults), the propagation policy, the grace
	// period and dryRun.
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	// DeleteCollection deletes the objects listOpts selects (in the
	// namespace of the client, or in all namespaces when it has none), with
	// opts applied to each.
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
}

// Patcher is the verb that patches objects of type T.
type Patcher[T any] interface {
	// Patch applies a patch of type pt to the object called name, or to
	// one of its subresources (at most one, such as "status"), and returns
	// the result. Patches are never retried.
	Patch(ctx context.Context, name string, pt PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*T, error)
}

// Writer is the verbs that create and change objects of type T.
type Writer[T any] interface {
	Patcher[T]
	Deleter
	// Create creates obj and returns the object as stored, with its name
	// (for generateName), uid and resourceVersion. obj is not modified.
	Create(ctx context.Context, obj *T, opts metav1.CreateOptions) (*T, error)
	// Update replaces the object named by obj with obj (its status aside,
	// for kinds with a status subresource) and returns the result. With
	// obj's resourceVersion set, the update fails with a Conflict if the
	// object has changed since (see IsConflict), and is retried on
	// transient faults.
	Update(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error)
	// UpdateStatus replaces the status of the object named by obj with
	// obj's, as Update does for the rest.
	UpdateStatus(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error)
	// Apply sends obj as a server-side apply configuration: the server
	// merges the fields obj sets into the object obj names (creating it if
	// need be) and records opts.FieldManager as their owner; opts.Force
	// takes fields other managers own instead of failing with a Conflict.
	//
	// obj is encoded as JSON with its kind and apiVersion. Every field it
	// encodes is claimed, including zero values that its JSON tags do not
	// omit ("selector":null claims .spec.selector, and clears it): for a Go
	// type, use ApplyConfig with apply.Of(obj) to claim only the fields obj
	// sets. For an unstructured object, Apply sends exactly its map.
	Apply(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error)
	// ApplyStatus applies obj's status as Apply does the object.
	ApplyStatus(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error)
	// ApplyConfig sends cfg (see package apply) as a server-side apply
	// configuration, with its kind and apiVersion: only the fields cfg
	// claims are sent and owned by opts.FieldManager, so applying
	// apply.Of(&appsv1.Deployment{…, Spec: {Replicas: new(int32(3))}})
	// claims .spec.replicas alone, and applying what apply.Extract returns
	// for a manager, as that manager, changes nothing. The object is named
	// by cfg's object, as for Apply.
	ApplyConfig(ctx context.Context, cfg apply.Config[T], opts metav1.ApplyOptions) (*T, error)
	// ApplyConfigStatus applies cfg to the status subresource, as
	// ApplyConfig does to the object (extract with apply.ExtractStatus).
	ApplyConfigStatus(ctx context.Context, cfg apply.Config[T], opts metav1.ApplyOptions) (*T, error)
}

// SubresourceClient is the verbs on subresources other than status (which
// UpdateStatus and ApplyStatus cover): "scale", a pod's "eviction" and
// "binding", a service account's "token". They take and return any value:
// a *T is encoded and decoded as the resource's objects are, anything else
// (a Scale, an Eviction, a struct or map of your own) as JSON.
type SubresourceClient interface {
	// GetSubresource reads the subresource sub of the object called name
	// into result.
	GetSubresource(ctx context.Context, name, sub string, result any, opts metav1.GetOptions) error
	// UpdateSubresource replaces the subresource sub of the object called
	// name with obj and decodes the server's answer into result (which may
	// be nil). The update is retried on transient faults when obj carries a
	// resourceVersion.
	UpdateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.UpdateOptions) error
	// CreateSubresource posts obj to the subresource sub of the object
	// called name (an Eviction to "eviction", a TokenRequest to "token")
	// and decodes the server's answer into result (which may be nil). It
	// is never retried.
	CreateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.CreateOptions) error
}

// Resource makes requests about the objects of one resource, held as *T:
// a Go type (client.For) or unstructured.Unstructured (Dynamic). Typed and
// dynamic resources share one implementation, so their verbs, options,
// namespaces, retries and errors are the same; only the encoding differs
// (see For and Dynamic).
//
// A namespace set on an object (Create, Update, Apply …) takes precedence
// over the Resource's own; requests that name an object (Get, Patch,
// Delete, subresources) and those about many (List, Watch,
// DeleteCollection) use the Resource's, "" meaning all namespaces for the
// latter.
//
// A Resource is immutable and safe for concurrent use: Namespace and
// WithDecodeOptions return new ones.
type Resource[T any] interface {
	// Namespace returns a Resource for namespace ns. For a kind the client
	// knows to be cluster-scoped (a registered Go type), it is ignored.
	Namespace(ns string) Resource[T]
	// WithDecodeOptions returns a Resource whose lists and watches (List,
	// ListEach, Watch) decode objects with o: for example skip
	// managedFields unread, or let the objects of one response share the
	// bytes of equal managedFields. Whoever keeps many objects (an
	// informer's cache) uses it; other callers rarely need it.
	WithDecodeOptions(o codec.DecodeOptions) Resource[T]
	// Kind returns what the client knows of the resource: for a Go type,
	// everything it is registered with; for Dynamic, only the group,
	// version and resource.
	Kind() Kind
	Reader[T]
	Writer[T]
	SubresourceClient
}

// wireCodec is what differs between the resources of one client: how
// objects of type T are sent and received. The typed codec speaks protobuf
// or JSON for a registered Go type, the unstructured one JSON for any
// resource, the metadata one PartialObjectMetadata.
type wireCodec[T any] interface {
	// accept returns the Accept header of a request about many objects
	// (list, delete collection; list true) or about one or a watch.
	accept(list bool) string
	// protobufBodies reports whether bodies the codec does not encode
	// itself (DeleteOptions) go in protobuf.
	protobufBodies() bool
	// encode encodes obj as a request body and returns its Content-Type;
	// apply asks for the JSON apply configuration.
	encode(obj *T, apply bool) ([]byte, string, error)
	// decode decodes a response holding one object and closes it.
	decode(resp *Response) (*T, error)
	// decodeList decodes a list response, calling fn with each item, and
	// returns the list's header; the TypeMeta is what List returns.
	decodeList(resp *Response, o codec.DecodeOptions, fn func(*T) error) (codec.ListHeader, error)
	// watchDecoder returns the decoder of the objects of one watch stream,
	// in protobuf or JSON.
	watchDecoder(protobuf bool, o codec.DecodeOptions) (func([]byte) (*T, error), error)
}

// resourceClient is the one implementation of a resource's requests, for every
// codec: paths, namespaces, parameters, headers, retries and list
// streaming.
type resourceClient[T any, PT ObjectPtr[T]] struct {
	c     *Client
	codec wireCodec[T]
	// kind is the registered kind of a Go type; for resources known by
	// their GroupVersionResource alone, only those fields are set and the
	// scope is unknown.
	kind       Kind
	scopeKnown bool
	namespace  string
	decodeOpts codec.DecodeOptions
	err        error // every verb returns it (an unregistered type)
}

func (r *resourceClient[T, PT]) Namespace(ns string) Resource[T] { return r.inNamespace(ns) }

func (r *resourceClient[T, PT]) WithDecodeOptions(o codec.DecodeOptions) Resource[T] {
	return r.withDecodeOptions(o)
}

// inNamespace returns a copy of r in namespace ns.
func (r *resourceClient[T, PT]) inNamespace(ns string) *resourceClient[T, PT] {
	cp := *r
	cp.namespace = ns
	return &cp
}

// withDecodeOptions returns a copy of r decoding lists and watches with o.
func (r *resourceClient[T, PT]) withDecodeOptions(o codec.DecodeOptions) *resourceClient[T, PT] {
	cp := *r
	cp.decodeOpts = o
	return &cp
}

func (r *resourceClient[T, PT]) Kind() Kind { return r.kind }

// objectNamespace is the namespace of a request about one object: the
// object's (objNS), else the resource's.
func (r *resourceClient[T, PT]) objectNamespace(objNS string) (string, error) {
	switch {
	case r.scopeKnown && !r.kind.Namespaced:
		return "", nil
	case objNS != "":
		return objNS, nil
	case r.scopeKnown && r.namespace == "":
		return "", fmt.Errorf("client: %s is namespaced, and neither the object nor the client names a namespace", r.kind.Kind)
	}
	return r.namespace, nil
}

// collectionNamespace is the namespace of a request about many objects.
func (r *resourceClient[T, PT]) collectionNamespace() string {
	if r.scopeKnown && !r.kind.Namespaced {
		return ""
	}
	return r.namespace
}

// request starts a request on the resource in namespace ns.
func (r *resourceClient[T, PT]) request(method, ns string, list bool) *Request {
	return r.c.NewRequest(method).Resource(r.kind.GroupVersionResource()).Namespace(ns).SetHeader("Accept", r.codec.accept(list))
}

// objectRequest starts a request about the object called name (or its
// subresource sub), in the namespace objNS or the resource's.
func (r *resourceClient[T, PT]) objectRequest(method, objNS, name, sub string) (*Request, error) {
	if r.err != nil {
		return nil, r.err
	}
	ns, err := r.objectNamespace(objNS)
	if err != nil {
		return nil, err
	}
	return r.request(method, ns, false).Name(name).SubResource(sub), nil
}

// do sends req and decodes the object it returns.
func (r *resourceClient[T, PT]) do(ctx context.Context, req *Request) (*T, error) {
	resp, err := req.Do(ctx)
	if err != nil {
		return nil, err
	}
	return r.codec.decode(resp)
}

func (r *resourceClient[T, PT]) Get(ctx context.Context, name string, opts metav1.GetOptions) (*T, error) {
	req, err := r.objectRequest(http.MethodGet, "", name, "")
	if err != nil {
		return nil, err
	}
	return r.do(ctx, req.Params(opts.Query()))
}

func (r *resourceClient[T, PT]) List(ctx context.Context, opts metav1.ListOptions) (*List[T], error) {
	// Items are collected as pointers and copied once into a slice of the
	// right size: appending the values instead would copy every item each
	// time the slice grows (Pod is over 1 KiB).
	var ptrs []*T
	h, err := r.listEach(ctx, opts, func(o *T) error {
		ptrs = append(ptrs, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	list := &List[T]{TypeMeta: h.TypeMeta, ListMeta: h.ListMeta, Items: make([]T, len(ptrs))}
	for i, p := range ptrs {
		list.Items[i] = *p
		ptrs[i] = nil // let the decoded copy go as soon as it is copied
	}
	return list, nil
}

func (r *resourceClient[T, PT]) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error) {
	h, err := r.listEach(ctx, opts, fn)
	return h.ListMeta, err
}

// listEach is ListEach returning the list's whole header.
func (r *resourceClient[T, PT]) listEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (codec.ListHeader, error) {
	if r.err != nil {
		return codec.ListHeader{}, r.err
	}
	opts.Watch = false
	resp, err := r.request(http.MethodGet, r.collectionNamespace(), true).Params(opts.Query()).Do(ctx)
	if err != nil {
		return codec.ListHeader{}, err
	}
	defer resp.Body.Close()
	return r.codec.decodeList(resp, r.decodeOpts, fn)
}

func (r *resourceClient[T, PT]) Watch(ctx context.Context, opts metav1.ListOptions) (Watcher[T], error) {
	if r.err != nil {
		return nil, r.err
	}
	opts.Watch = true
	wctx, cancel := context.WithCancel(ctx)
	resp, err := r.request(http.MethodGet, r.collectionNamespace(), false).Params(opts.Query()).Do(wctx)
	if err != nil {
		cancel()
		return nil, err
	}
	pb := isProtobuf(resp.Header.Get("Content-Type"))
	// One decoder for the stream: the objects of its events share a string
	// table, and the decode options apply.
	decode, err := r.codec.watchDecoder(pb, r.decodeOpts)
	if err != nil {
		cancel()
		resp.Body.Close()
		return nil, err
	}
	return startWatch(wctx, cancel, resp.Body, pb, decode), nil
}

// send encodes obj and sends it: with POST to the collection (create),
// with PUT or PATCH (apply) to the object it names or its subresource sub.
// PUTs of objects with a resourceVersion are retryable.
func (r *resourceClient[T, PT]) send(ctx context.Context, method string, obj *T, sub string, params url.Values, apply bool) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	po := PT(obj)
	if po == nil {
		return nil, fmt.Errorf("client: nil object")
	}
	ns, err := r.objectNamespace(po.GetNamespace())
	if err != nil {
		return nil, err
	}
	body, ct, err := r.codec.encode(obj, apply)
	if err != nil {
		return nil, err
	}
	req := r.request(method, ns, false).Params(params).Body(body, ct)
	if method != http.MethodPost {
		req.Name(po.GetName()).SubResource(sub)
	}
	if method == http.MethodPut {
		req.Retryable(po.GetResourceVersion() != "")
	}
	return r.do(ctx, req)
}

func (r *resourceClient[T, PT]) Create(ctx context.Context, obj *T, opts metav1.CreateOptions) (*T, error) {
	return r.send(ctx, http.MethodPost, obj, "", opts.Query(), false)
}

func (r *resourceClient[T, PT]) Update(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error) {
	return r.send(ctx, http.MethodPut, obj, "", opts.Query(), false)
}

func (r *resourceClient[T, PT]) UpdateStatus(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error) {
	return r.send(ctx, http.MethodPut, obj, "status", opts.Query(), false)
}

func (r *resourceClient[T, PT]) Apply(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error) {
	return r.send(ctx, http.MethodPatch, obj, "", opts.Query(), true)
}

func (r *resourceClient[T, PT]) ApplyStatus(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error) {
	return r.send(ctx, http.MethodPatch, obj, "status", opts.Query(), true)
}

func (r *resourceClient[T, PT]) ApplyConfig(ctx context.Context, cfg apply.Config[T], opts metav1.ApplyOptions) (*T, error) {
	return r.applyConfig(ctx, cfg, "", opts)
}

func (r *resourceClient[T, PT]) ApplyConfigStatus(ctx context.Context, cfg apply.Config[T], opts metav1.ApplyOptions) (*T, error) {
	return r.applyConfig(ctx, cfg, "status", opts)
}

// applyConfig sends cfg's encoding, with the resource's kind and apiVersion
// when it has none, as an apply patch of the object cfg names (or of its
// subresource sub).
func (r *resourceClient[T, PT]) applyConfig(ctx context.Context, cfg apply.Config[T], sub string, opts metav1.ApplyOptions) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	po := PT(cfg.Object())
	if po == nil {
		return nil, fmt.Errorf("client: nil object")
	}
	ns, err := r.objectNamespace(po.GetNamespace())
	if err != nil {
		return nil, err
	}
	m, err := cfg.Encode()
	if err != nil {
		return nil, err
	}
	if k, _ := m["kind"].(string); k == "" && r.kind.Kind != "" {
		m["kind"], m["apiVersion"] = r.kind.Kind, r.kind.APIVersion()
	}
	body, err := kjson.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the apply configuration of %q: %w", po.GetName(), err)
	}
	req := r.request(http.MethodPatch, ns, false).Params(opts.Query()).Body(body, string(ApplyPatchType))
	return r.do(ctx, req.Name(po.GetName()).SubResource(sub))
}

func (r *resourceClient[T, PT]) Patch(ctx context.Context, name string, pt PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*T, error) {
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	req, err := r.objectRequest(http.MethodPatch, "", name, sub)
	if err != nil {
		return nil, err
	}
	return r.do(ctx, req.Params(opts.Query()).Body(data, string(pt)))
}

func (r *resourceClient[T, PT]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	req, err := r.objectRequest(http.MethodDelete, "", name, "")
	if err != nil {
		return err
	}
	return r.sendDelete(ctx, req.Retryable(hasPreconditions(opts)), opts)
}

func (r *resourceClient[T, PT]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	if r.err != nil {
		return r.err
	}
	return r.sendDelete(ctx, r.request(http.MethodDelete, r.collectionNamespace(), true).Params(listOpts.Query()), opts)
}

// sendDelete sends a delete with opts as its body.
func (r *resourceClient[T, PT]) sendDelete(ctx context.Context, req *Request, opts metav1.DeleteOptions) error {
	body, ct, err := deleteOptionsBody(opts, r.codec.protobufBodies())
	if err != nil {
		return err
	}
	resp, err := req.Body(body, ct).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}

func (r *resourceClient[T, PT]) GetSubresource(ctx context.Context, name, sub string, result any, opts metav1.GetOptions) error {
	req, err := r.subresourceRequest(http.MethodGet, name, sub, nil)
	if err != nil {
		return err
	}
	return r.subresourceInto(ctx, req.Params(opts.Query()), result)
}

func (r *resourceClient[T, PT]) UpdateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.UpdateOptions) error {
	req, err := r.subresourceRequest(http.MethodPut, name, sub, obj)
	if err != nil {
		return err
	}
	rv := false
	if o, ok := obj.(metav1.Object); ok {
		rv = o.GetResourceVersion() != ""
	}
	return r.subresourceInto(ctx, req.Params(opts.Query()).Retryable(rv), result)
}

func (r *resourceClient[T, PT]) CreateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.CreateOptions) error {
	req, err := r.subresourceRequest(http.MethodPost, name, sub, obj)
	if err != nil {
		return err
	}
	return r.subresourceInto(ctx, req.Params(opts.Query()), result)
}

// subresourceRequest starts a request about the subresource sub of the
// object called name, with obj (if not nil) as its body: a *T encoded by the
// codec, anything else as JSON.
func (r *resourceClient[T, PT]) subresourceRequest(method, name, sub string, obj any) (*Request, error) {
	if sub == "" {
		return nil, fmt.Errorf("client: a subresource request needs a subresource")
	}
	req, err := r.objectRequest(method, "", name, sub)
	if err != nil || obj == nil {
		return req, err
	}
	var body []byte
	ct := codec.MediaTypeJSON
	if t, ok := obj.(*T); ok {
		body, ct, err = r.codec.encode(t, false)
	} else {
		body, err = kjson.Marshal(obj)
	}
	if err != nil {
		return nil, fmt.Errorf("client: encoding %s: %w", sub, err)
	}
	return req.Body(body, ct), nil
}

// subresourceInto sends req and decodes its answer into result: a *T as
// the codec does, anything else as JSON (the Accept header is narrowed to
// JSON).
func (r *resourceClient[T, PT]) subresourceInto(ctx context.Context, req *Request, result any) error {
	t, typed := result.(*T)
	if !typed {
		req.SetHeader("Accept", codec.MediaTypeJSON)
	}
	resp, err := req.Do(ctx)
	if err != nil {
		return err
	}
	if result == nil {
		return resp.Close()
	}
	if !typed {
		return resp.Into(result)
	}
	obj, err := r.codec.decode(resp)
	if err != nil {
		return err
	}
	*t = *obj
	return nil
}

// oneSubresource returns the optional subresource argument.
func oneSubresource(sub []string) (string, error) {
	switch len(sub) {
	case 0:
		return "", nil
	case 1:
		return sub[0], nil
	}
	return "", fmt.Errorf("client: at most one subresource, got %q", sub)
}

// deleteOptionsBody encodes DeleteOptions as the body of a delete, as
// Kubernetes' clients send it: kind DeleteOptions, apiVersion v1 (which
// kube-apiserver accepts for every group, custom resources included), in
// protobuf when the request's objects are (as client-go does) and in JSON
// otherwise. It returns the body and its Content-Type.
func deleteOptionsBody(opts metav1.DeleteOptions, protobuf bool) ([]byte, string, error) {
	if opts.TypeMeta == (metav1.TypeMeta{}) {
		opts.TypeMeta = metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}
	}
	if protobuf {
		b, err := codec.MarshalProtobuf(opts.TypeMeta, &opts)
		if err != nil {
			return nil, "", fmt.Errorf("client: encoding DeleteOptions: %w", err)
		}
		return b, codec.MediaTypeProtobuf, nil
	}
	b, err := kjson.Marshal(&opts)
	if err != nil {
		return nil, "", fmt.Errorf("client: encoding DeleteOptions: %w", err)
	}
	return b, codec.MediaTypeJSON, nil
}

// hasPreconditions reports whether a delete names the object it expects.
func hasPreconditions(opts metav1.DeleteOptions) bool {
	p := opts.Preconditions
	return p != nil && (p.UID != nil || p.ResourceVersion != nil)
}
