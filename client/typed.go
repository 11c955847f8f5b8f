package client

import (
	"context"
	"fmt"
	"net/http"
	"reflect"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	kpb "github.com/kapi-dev/kapi/internal/pb"
)

// PatchType is the media type of a patch body, which says how the server
// applies it.
type PatchType string

// Patch types.
const (
	// JSONPatchType is an RFC 6902 JSON Patch: a list of operations.
	JSONPatchType PatchType = codec.MediaTypeJSONPatch
	// MergePatchType is an RFC 7386 JSON Merge Patch: a partial object whose
	// fields replace the object's, null deleting.
	MergePatchType PatchType = codec.MediaTypeMergePatch
	// StrategicMergePatchType is Kubernetes' strategic merge patch, which
	// merges lists by key. Built-in kinds only: servers refuse it for custom
	// resources with 415.
	StrategicMergePatchType PatchType = codec.MediaTypeStrategicMergePatch
	// ApplyPatchType is a server-side apply configuration (YAML or JSON);
	// prefer the Apply methods, which set it.
	ApplyPatchType PatchType = codec.MediaTypeApplyPatch
)

// acceptProtobuf asks for protobuf, and JSON from servers (or resources) that
// have no protobuf, as client-go does.
const acceptProtobuf = codec.MediaTypeProtobuf + ", " + codec.MediaTypeJSON

// List is a list of objects of type T as a list request returns it: the
// list's kind, its metadata (resourceVersion, continue token) and the items.
type List[T any] struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the objects, in the server's order.
	Items []T `json:"items"`
}

// TypedClient makes requests about objects of one Go type, T, such as
// corev1.Pod or a custom resource struct; its methods take and return *T.
// Make one with For. T must be registered in the client's scheme (the
// built-in kinds are); otherwise every method returns a
// *NotRegisteredError.
//
// Objects are sent and received as protobuf when the Config prefers it and
// the kind allows it (see Scheme.Add), and as JSON otherwise; whatever the
// server answers in, returned objects carry their kind and apiVersion.
//
// A TypedClient is immutable and safe for concurrent use; Namespace returns a
// new one.
type TypedClient[T any, PT ObjectPtr[T]] struct {
	c         *Client
	info      *typeInfo
	err       error
	namespace string
}

// For returns the typed client for T, in the client's default namespace:
//
//	pods := client.For[corev1.Pod](c).Namespace("web")
//	pod, err := pods.Get(ctx, "frontend-0", metav1.GetOptions{})
func For[T any, PT ObjectPtr[T]](c *Client) *TypedClient[T, PT] {
	t := reflect.TypeFor[T]()
	info, ok := c.scheme.lookup(t)
	r := &TypedClient[T, PT]{c: c, info: info, namespace: c.namespace}
	if !ok {
		r.err = &NotRegisteredError{Type: t}
	}
	return r
}

// Namespace returns a client for namespace ns. For requests about one object
// (Create, Update, Apply, Delete …) a namespace set on the object itself
// takes precedence. For List, Watch and DeleteCollection, "" means all
// namespaces. Cluster-scoped kinds ignore it.
func (r *TypedClient[T, PT]) Namespace(ns string) *TypedClient[T, PT] {
	cp := *r
	cp.namespace = ns
	return &cp
}

// Kind returns the kind T is registered as.
func (r *TypedClient[T, PT]) Kind() Kind {
	if r.info == nil {
		return Kind{}
	}
	return r.info.kind
}

// protobuf reports whether requests use protobuf.
func (r *TypedClient[T, PT]) protobuf() bool { return r.c.protobuf && r.info.protobuf }

// objectNamespace is the namespace of a request about one object: the
// object's, else the client's.
func (r *TypedClient[T, PT]) objectNamespace(objNS string) (string, error) {
	if !r.info.kind.Namespaced {
		return "", nil
	}
	if objNS != "" {
		return objNS, nil
	}
	if r.namespace == "" {
		return "", fmt.Errorf("client: %s is namespaced, and neither the object nor the client names a namespace", r.info.kind.Kind)
	}
	return r.namespace, nil
}

// collectionNamespace is the namespace of a request about many objects.
func (r *TypedClient[T, PT]) collectionNamespace() string {
	if !r.info.kind.Namespaced {
		return ""
	}
	return r.namespace
}

// request starts a request on the resource in namespace ns.
func (r *TypedClient[T, PT]) request(method, ns string) *Request {
	accept := codec.MediaTypeJSON
	if r.protobuf() {
		accept = acceptProtobuf
	}
	return r.c.NewRequest(method).Resource(r.info.kind.GroupVersionResource()).Namespace(ns).SetHeader("Accept", accept)
}

// encode encodes obj as a request body, in protobuf or JSON.
func (r *TypedClient[T, PT]) encode(obj *T) ([]byte, string, error) {
	tm := r.info.kind.TypeMeta()
	if r.protobuf() {
		b, err := codec.MarshalProtobuf(tm, any(obj).(codec.ProtoMarshaler))
		if err != nil {
			return nil, "", fmt.Errorf("client: encoding %s: %w", tm.Kind, err)
		}
		return b, codec.MediaTypeProtobuf, nil
	}
	b, err := encodeJSON(obj, tm)
	if err != nil {
		return nil, "", err
	}
	return b, codec.MediaTypeJSON, nil
}

// decode decodes a response holding one object and closes it.
func (r *TypedClient[T, PT]) decode(resp *Response) (*T, error) {
	if resp.ContentType() == codec.MediaTypeProtobuf && !r.info.protobuf {
		resp.Close()
		return nil, fmt.Errorf("client: the server answered in protobuf, which %s does not use", r.info.kind.Kind)
	}
	obj := new(T)
	if err := resp.Into(obj); err != nil {
		return nil, err
	}
	setTypeMeta(obj, r.info.kind.TypeMeta())
	return obj, nil
}

// do sends req and decodes the object it returns.
func (r *TypedClient[T, PT]) do(ctx context.Context, req *Request) (*T, error) {
	resp, err := req.Do(ctx)
	if err != nil {
		return nil, err
	}
	return r.decode(resp)
}

// Get returns the object called name.
func (r *TypedClient[T, PT]) Get(ctx context.Context, name string, opts metav1.GetOptions) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	ns, err := r.objectNamespace("")
	if err != nil {
		return nil, err
	}
	return r.do(ctx, r.request(http.MethodGet, ns).Name(name).Params(opts.Query()))
}

// List returns the objects that opts selects. The response is decoded as it
// arrives, item by item; use ListEach to handle items without keeping them
// all. For large collections, page with opts.Limit and opts.Continue.
func (r *TypedClient[T, PT]) List(ctx context.Context, opts metav1.ListOptions) (*List[T], error) {
	// Items are collected as pointers and copied once into a slice of the
	// right size: appending the values instead would copy every item each
	// time the slice grows (Pod is over 1 KiB).
	var ptrs []*T
	meta, err := r.ListEach(ctx, opts, func(o *T) error {
		ptrs = append(ptrs, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	list := &List[T]{
		TypeMeta: metav1.TypeMeta{Kind: r.info.kind.ListKind, APIVersion: r.info.kind.APIVersion()},
		ListMeta: meta,
		Items:    make([]T, len(ptrs)),
	}
	for i, p := range ptrs {
		list.Items[i] = *p
		ptrs[i] = nil // let the decoded copy go as soon as it is copied
	}
	return list, nil
}

// ListEach lists like List but hands each object to fn as soon as it is
// decoded, holding no more than one at a time, and returns the list's
// metadata. fn may keep the object. An error from fn stops the list and is
// returned.
func (r *TypedClient[T, PT]) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error) {
	if r.err != nil {
		return metav1.ListMeta{}, r.err
	}
	opts.Watch = false
	resp, err := r.request(http.MethodGet, r.collectionNamespace()).Params(opts.Query()).Do(ctx)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	defer resp.Body.Close()
	tm := r.info.kind.TypeMeta()
	each := func(o *T) error {
		setTypeMeta(o, tm)
		return fn(o)
	}
	var h codec.ListHeader
	dopts := decodeOptionsFrom(ctx)
	switch ct := resp.ContentType(); ct {
	case codec.MediaTypeProtobuf:
		if !r.info.protobuf {
			return metav1.ListMeta{}, fmt.Errorf("client: the server answered in protobuf, which %s does not use", r.info.kind.Kind)
		}
		h, err = codec.DecodeProtobufListWith[protoItem[T]](resp.Body, 0, dopts, func(it *protoItem[T]) error { return each(&it.obj) })
	case codec.MediaTypeJSON, "":
		h, err = codec.DecodeJSONListWith(resp.Body, dopts, each)
	default:
		return metav1.ListMeta{}, fmt.Errorf("client: unexpected list Content-Type %q", resp.Header.Get("Content-Type"))
	}
	if err != nil {
		return h.ListMeta, err
	}
	return h.ListMeta, nil
}

// protoItem lets codec.DecodeProtobufList decode into a T whose pointer
// decodes itself, which the type parameters of TypedClient cannot promise
// statically.
type protoItem[T any] struct{ obj T }

// Unmarshal decodes b into the item.
func (p *protoItem[T]) Unmarshal(b []byte) error {
	u, ok := any(&p.obj).(codec.ProtoUnmarshaler)
	if !ok {
		return fmt.Errorf("client: %T cannot decode protobuf", &p.obj)
	}
	return u.Unmarshal(b)
}

// UnmarshalFrom decodes the item with the list's shared decoder state when T
// can (kapi's kinds can), and with Unmarshal otherwise.
func (p *protoItem[T]) UnmarshalFrom(d *kpb.Decoder) error {
	if u, ok := any(&p.obj).(interface{ UnmarshalFrom(*kpb.Decoder) error }); ok {
		return u.UnmarshalFrom(d)
	}
	return p.Unmarshal(d.Rest())
}

// Watch starts a watch of the objects opts selects and returns its events as
// they arrive, decoded one at a time. The watch ends when ctx is done, when
// Stop is called (either closes the connection at once), when the server ends
// it (its timeout, or after an ERROR event), or on a broken stream (reported
// as an EventError). A watch that could not be started returns an error
// instead.
func (r *TypedClient[T, PT]) Watch(ctx context.Context, opts metav1.ListOptions) (Watcher[T], error) {
	if r.err != nil {
		return nil, r.err
	}
	opts.Watch = true
	wctx, cancel := context.WithCancel(ctx)
	resp, err := r.request(http.MethodGet, r.collectionNamespace()).Params(opts.Query()).Do(wctx)
	if err != nil {
		cancel()
		return nil, err
	}
	pb := isProtobuf(resp.Header.Get("Content-Type"))
	if pb && !r.info.protobuf {
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("client: the server answered in protobuf, which %s does not use", r.info.kind.Kind)
	}
	tm := r.info.kind.TypeMeta()
	// One decoder for the stream: the objects of its events share a string
	// table, and the context's DecodeOptions apply.
	sd := codec.NewStreamDecoder(decodeOptionsFrom(ctx))
	decode := func(raw []byte) (*T, error) {
		obj := new(T)
		if pb {
			if _, err := sd.DecodeProtobuf(raw, any(obj).(codec.ProtoUnmarshaler)); err != nil {
				return nil, err
			}
		} else if err := sd.DecodeJSON(raw, obj); err != nil {
			return nil, err
		}
		setTypeMeta(obj, tm)
		return obj, nil
	}
	return startWatch(wctx, cancel, resp.Body, pb, decode), nil
}

// Create creates obj and returns the object as stored, with its name (for
// generateName), uid and resourceVersion. obj is not modified.
func (r *TypedClient[T, PT]) Create(ctx context.Context, obj *T, opts metav1.CreateOptions) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	ns, err := r.objectNamespace(PT(obj).GetNamespace())
	if err != nil {
		return nil, err
	}
	body, ct, err := r.encode(obj)
	if err != nil {
		return nil, err
	}
	return r.do(ctx, r.request(http.MethodPost, ns).Params(opts.Query()).Body(body, ct))
}

// Update replaces the object named by obj with obj (its status aside, for
// kinds with a status subresource) and returns the result. With
// obj's resourceVersion set, the update fails with a Conflict if the object
// has changed since (see IsConflict), and is retried on transient faults.
func (r *TypedClient[T, PT]) Update(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error) {
	return r.update(ctx, obj, "", opts)
}

// UpdateStatus replaces the status of the object named by obj with obj's, as
// Update does for the rest.
func (r *TypedClient[T, PT]) UpdateStatus(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error) {
	return r.update(ctx, obj, "status", opts)
}

func (r *TypedClient[T, PT]) update(ctx context.Context, obj *T, sub string, opts metav1.UpdateOptions) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	po := PT(obj)
	ns, err := r.objectNamespace(po.GetNamespace())
	if err != nil {
		return nil, err
	}
	body, ct, err := r.encode(obj)
	if err != nil {
		return nil, err
	}
	req := r.request(http.MethodPut, ns).Name(po.GetName()).SubResource(sub).Params(opts.Query()).Body(body, ct).
		Retryable(po.GetResourceVersion() != "")
	return r.do(ctx, req)
}

// Patch applies a patch of type pt to the object called name, or to one of
// its subresources (at most one, such as "status"), and returns the result.
// Patches are never retried.
func (r *TypedClient[T, PT]) Patch(ctx context.Context, name string, pt PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	sub, err := oneSubresource(subresource)
	if err != nil {
		return nil, err
	}
	ns, err := r.objectNamespace("")
	if err != nil {
		return nil, err
	}
	return r.do(ctx, r.request(http.MethodPatch, ns).Name(name).SubResource(sub).Params(opts.Query()).Body(data, string(pt)))
}

// Apply sends obj as a server-side apply configuration: the server merges the
// fields obj sets into the object (creating it if need be) and records
// opts.FieldManager as their owner; opts.Force takes fields other managers
// own instead of failing with a Conflict.
//
// obj is encoded as JSON with its kind and apiVersion. Every field it
// encodes is claimed, including zero values that its JSON tags do not omit:
// build obj with only the fields you mean to own (for kapi's kinds, a new
// object with those fields set), or use Patch with ApplyPatchType and a
// configuration of your own.
func (r *TypedClient[T, PT]) Apply(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error) {
	return r.apply(ctx, obj, "", opts)
}

// ApplyStatus applies obj's status as Apply does the object.
func (r *TypedClient[T, PT]) ApplyStatus(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error) {
	return r.apply(ctx, obj, "status", opts)
}

func (r *TypedClient[T, PT]) apply(ctx context.Context, obj *T, sub string, opts metav1.ApplyOptions) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	po := PT(obj)
	ns, err := r.objectNamespace(po.GetNamespace())
	if err != nil {
		return nil, err
	}
	body, err := encodeJSON(obj, r.info.kind.TypeMeta())
	if err != nil {
		return nil, err
	}
	req := r.request(http.MethodPatch, ns).Name(po.GetName()).SubResource(sub).Params(opts.Query()).
		Body(body, string(ApplyPatchType))
	return r.do(ctx, req)
}

// Delete deletes the object called name. Objects with finalizers are only
// marked for deletion (they get a deletionTimestamp) until the finalizers are
// removed. opts carries preconditions (a delete with one is retried on
// transient faults), the propagation policy, the grace period and dryRun.
func (r *TypedClient[T, PT]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if r.err != nil {
		return r.err
	}
	ns, err := r.objectNamespace("")
	if err != nil {
		return err
	}
	body, ct, err := deleteOptionsBody(opts, r.protobuf())
	if err != nil {
		return err
	}
	resp, err := r.request(http.MethodDelete, ns).Name(name).Body(body, ct).
		Retryable(hasPreconditions(opts)).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}

// DeleteCollection deletes the objects listOpts selects (in the client's
// namespace, or in all namespaces when it is ""), with opts applied to each.
func (r *TypedClient[T, PT]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	if r.err != nil {
		return r.err
	}
	body, ct, err := deleteOptionsBody(opts, r.protobuf())
	if err != nil {
		return err
	}
	resp, err := r.request(http.MethodDelete, r.collectionNamespace()).Params(listOpts.Query()).
		Body(body, ct).Do(ctx)
	if err != nil {
		return err
	}
	return resp.Close()
}

// GetSubresource reads the subresource sub (such as "status" or "scale") of
// the object called name into result. A *T result is decoded like Get's; any
// other (such as a Scale struct of your own) is requested and decoded as
// JSON.
func (r *TypedClient[T, PT]) GetSubresource(ctx context.Context, name, sub string, result any, opts metav1.GetOptions) error {
	if r.err != nil {
		return r.err
	}
	if sub == "" {
		return fmt.Errorf("client: GetSubresource needs a subresource")
	}
	ns, err := r.objectNamespace("")
	if err != nil {
		return err
	}
	req := r.request(http.MethodGet, ns).Name(name).SubResource(sub).Params(opts.Query())
	return r.subresourceInto(ctx, req, result)
}

// UpdateSubresource replaces the subresource sub of the object called name
// with obj and decodes the server's answer into result (which may be nil). A
// *T obj or result is encoded or decoded like Update's; anything else as JSON.
// The update is retried on transient faults when obj carries a
// resourceVersion.
func (r *TypedClient[T, PT]) UpdateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.UpdateOptions) error {
	if r.err != nil {
		return r.err
	}
	if sub == "" {
		return fmt.Errorf("client: UpdateSubresource needs a subresource")
	}
	ns, err := r.objectNamespace("")
	if err != nil {
		return err
	}
	var body []byte
	ct := codec.MediaTypeJSON
	if t, ok := obj.(*T); ok {
		body, ct, err = r.encode(t)
	} else {
		body, err = kjson.Marshal(obj)
	}
	if err != nil {
		return fmt.Errorf("client: encoding %s: %w", sub, err)
	}
	rv := false
	if o, ok := obj.(metav1.Object); ok {
		rv = o.GetResourceVersion() != ""
	}
	req := r.request(http.MethodPut, ns).Name(name).SubResource(sub).Params(opts.Query()).Body(body, ct).Retryable(rv)
	return r.subresourceInto(ctx, req, result)
}

// subresourceInto sends req and decodes its answer into result: a *T as
// usual, anything else as JSON (the Accept header is narrowed to JSON).
func (r *TypedClient[T, PT]) subresourceInto(ctx context.Context, req *Request, result any) error {
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
	obj, err := r.decode(resp)
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

// encodeJSON encodes obj as JSON. An object with an empty TypeMeta gets tm's
// kind and apiVersion, as servers expect them (apply requires them).
func encodeJSON(obj any, tm metav1.TypeMeta) ([]byte, error) {
	b, err := kjson.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("client: encoding %T: %w", obj, err)
	}
	o, ok := obj.(interface{ GetObjectKind() *metav1.TypeMeta })
	if !ok || *o.GetObjectKind() != (metav1.TypeMeta{}) || tm == (metav1.TypeMeta{}) || len(b) < 2 || b[0] != '{' {
		return b, nil
	}
	head, err := kjson.Marshal(&tm)
	if err != nil {
		return nil, err
	}
	// head is {"kind":…,"apiVersion":…}; join the two objects.
	out := make([]byte, 0, len(head)+len(b))
	out = append(out, head[:len(head)-1]...)
	if string(b) != "{}" {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
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
