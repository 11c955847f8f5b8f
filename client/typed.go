package client

import (
	"fmt"
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

// For returns the Resource for the Go type T, such as corev1.Pod or a custom
// resource struct, in the client's default namespace:
//
//	pods := client.For[corev1.Pod](c).Namespace("web")
//	pod, err := pods.Get(ctx, "frontend-0", metav1.GetOptions{})
//
// T must be registered in the client's scheme (the built-in kinds are);
// otherwise every method returns a *NotRegisteredError. PT is inferred.
//
// Objects are sent and received as protobuf when the Config prefers it and
// the kind allows it (see Scheme.Add), and as JSON otherwise; whatever the
// server answers in, returned objects carry their kind and apiVersion. The
// kind's scope is known: a cluster-scoped kind ignores namespaces, and a
// request about one object of a namespaced kind fails when neither the
// object nor the Resource names a namespace.
func For[T any, PT ObjectPtr[T]](c *Client) Resource[T] {
	t := reflect.TypeFor[T]()
	info, ok := c.scheme.lookup(t)
	r := &resourceClient[T, PT]{c: c, namespace: c.namespace, scopeKnown: true}
	if !ok {
		r.err = &NotRegisteredError{Type: t}
		r.codec = typedCodec[T]{}
		return r
	}
	r.kind = info.kind
	r.codec = typedCodec[T]{info: info, protobuf: c.protobuf && info.protobuf}
	return r
}

// typedCodec encodes and decodes a registered Go type: in protobuf when the
// client prefers it and the kind and type allow it, in JSON otherwise.
type typedCodec[T any] struct {
	info     *typeInfo
	protobuf bool
}

func (tc typedCodec[T]) accept(bool) string {
	if tc.protobuf {
		return acceptProtobuf
	}
	return codec.MediaTypeJSON
}

func (tc typedCodec[T]) protobufBodies() bool { return tc.protobuf }

func (tc typedCodec[T]) encode(obj *T, apply bool) ([]byte, string, error) {
	tm := tc.info.kind.TypeMeta()
	if tc.protobuf && !apply {
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
	if apply {
		return b, string(ApplyPatchType), nil
	}
	return b, codec.MediaTypeJSON, nil
}

// errProtobuf is the error of a protobuf answer for a kind that does not
// use protobuf.
func (tc typedCodec[T]) errProtobuf() error {
	return fmt.Errorf("client: the server answered in protobuf, which %s does not use", tc.info.kind.Kind)
}

func (tc typedCodec[T]) decode(resp *Response) (*T, error) {
	if resp.ContentType() == codec.MediaTypeProtobuf && !tc.info.protobuf {
		resp.Close()
		return nil, tc.errProtobuf()
	}
	obj := new(T)
	if err := resp.Into(obj); err != nil {
		return nil, err
	}
	setTypeMeta(obj, tc.info.kind.TypeMeta())
	return obj, nil
}

func (tc typedCodec[T]) decodeList(resp *Response, o codec.DecodeOptions, fn func(*T) error) (codec.ListHeader, error) {
	tm := tc.info.kind.TypeMeta()
	each := func(obj *T) error {
		setTypeMeta(obj, tm)
		return fn(obj)
	}
	var h codec.ListHeader
	var err error
	switch ct := resp.ContentType(); ct {
	case codec.MediaTypeProtobuf:
		if !tc.info.protobuf {
			return h, tc.errProtobuf()
		}
		h, err = codec.DecodeProtobufListWith[protoItem[T]](resp.Body, 0, o, func(it *protoItem[T]) error { return each(&it.obj) })
	case codec.MediaTypeJSON, "":
		h, err = codec.DecodeJSONListWith(resp.Body, o, each)
	default:
		return h, fmt.Errorf("client: unexpected list Content-Type %q", resp.Header.Get("Content-Type"))
	}
	h.TypeMeta = metav1.TypeMeta{Kind: tc.info.kind.ListKind, APIVersion: tm.APIVersion}
	return h, err
}

func (tc typedCodec[T]) watchDecoder(protobuf bool, o codec.DecodeOptions) (func([]byte) (*T, error), error) {
	if protobuf && !tc.info.protobuf {
		return nil, tc.errProtobuf()
	}
	tm := tc.info.kind.TypeMeta()
	sd := codec.NewStreamDecoder(o)
	return func(raw []byte) (*T, error) {
		obj := new(T)
		if protobuf {
			if _, err := sd.DecodeProtobuf(raw, any(obj).(codec.ProtoUnmarshaler)); err != nil {
				return nil, err
			}
		} else if err := sd.DecodeJSON(raw, obj); err != nil {
			return nil, err
		}
		setTypeMeta(obj, tm)
		return obj, nil
	}, nil
}

// protoItem lets codec.DecodeProtobufList decode into a T whose pointer
// decodes itself, which the type parameters of For cannot promise
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
