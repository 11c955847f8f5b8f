package client

import (
	"errors"
	"fmt"
	"io"

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
// Namespace for a namespaced resource. Like Dynamic's, it does not know the
// resource's kind or scope.
func (m *MetadataClient) Resource(gvr GroupVersionResource) MetadataResource {
	return metadataResource{&resourceClient[metav1.PartialObjectMetadata, *metav1.PartialObjectMetadata]{
		c:     m.c,
		codec: metadataCodec{protobuf: m.c.protobuf},
		kind:  Kind{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
	}}
}

// MetadataResource makes metadata-only requests about one resource: the
// verbs of a Resource that make sense on metadata alone, with the same
// signatures, options and errors (the same implementation serves both).
// With a JSON merge patch of metadata, Patch is how a controller holding
// only metadata adds a label or removes a finalizer. A MetadataResource is
// a reflector.ListerWatcher of metav1.PartialObjectMetadata, so that an
// informer can cache the metadata of any resource.
//
// It is immutable and safe for concurrent use.
type MetadataResource interface {
	// Namespace returns a client for namespace ns ("" for cluster-scoped
	// resources, or all namespaces in List, Watch and DeleteCollection).
	Namespace(ns string) MetadataResource
	// WithDecodeOptions returns a client whose lists and watches decode
	// with o; see Resource.WithDecodeOptions.
	WithDecodeOptions(o codec.DecodeOptions) MetadataResource
	Reader[metav1.PartialObjectMetadata]
	Patcher[metav1.PartialObjectMetadata]
	Deleter
}

// metadataResource is the resource implementation behind MetadataResource,
// whose Namespace and WithDecodeOptions keep the narrower interface.
type metadataResource struct {
	*resourceClient[metav1.PartialObjectMetadata, *metav1.PartialObjectMetadata]
}

func (m metadataResource) Namespace(ns string) MetadataResource {
	return metadataResource{m.resourceClient.inNamespace(ns)}
}

func (m metadataResource) WithDecodeOptions(o codec.DecodeOptions) MetadataResource {
	return metadataResource{m.resourceClient.withDecodeOptions(o)}
}

// metadataCodec decodes PartialObjectMetadata, in protobuf or JSON.
type metadataCodec struct {
	protobuf bool // the Config prefers protobuf
}

// accept is the Accept header for one object (list false) or a list.
func (mc metadataCodec) accept(list bool) string {
	switch {
	case list && mc.protobuf:
		return acceptMetadataListPB
	case list:
		return acceptMetadataListJSON
	case mc.protobuf:
		return acceptMetadataPB
	}
	return acceptMetadataJSON
}

func (mc metadataCodec) protobufBodies() bool { return mc.protobuf }

// encode refuses: MetadataResource has no verb that sends an object.
func (metadataCodec) encode(*metav1.PartialObjectMetadata, bool) ([]byte, string, error) {
	return nil, "", errors.New("client: the metadata client does not send objects")
}

func (metadataCodec) decode(resp *Response) (*metav1.PartialObjectMetadata, error) {
	return decodeOne(resp)
}

func (metadataCodec) decodeList(resp *Response, o codec.DecodeOptions, fn func(*metav1.PartialObjectMetadata) error) (codec.ListHeader, error) {
	each := func(p *metav1.PartialObjectMetadata) error {
		p.TypeMeta = partialTypeMeta
		return fn(p)
	}
	var h codec.ListHeader
	var err error
	switch ct := resp.ContentType(); ct {
	case codec.MediaTypeProtobuf:
		h, err = codec.DecodeProtobufListWith(resp.Body, 0, o, each)
		if err == nil && h.Kind != codec.AsPartialObjectMetadataList {
			err = fmt.Errorf("client: the server answered a metadata list with a protobuf %s", h.Kind)
		}
	case codec.MediaTypeJSON, "":
		// A PartialObjectMetadataList, or, from a server that cannot
		// convert, the whole list, whose items' metadata is kept.
		h, err = codec.DecodeJSONListWith(resp.Body, o, each)
	default:
		return h, fmt.Errorf("client: unexpected list Content-Type %q", resp.Header.Get("Content-Type"))
	}
	h.TypeMeta = metav1.TypeMeta{Kind: codec.AsPartialObjectMetadataList, APIVersion: partialTypeMeta.APIVersion}
	return h, err
}

func (metadataCodec) watchDecoder(protobuf bool, o codec.DecodeOptions) (func([]byte) (*metav1.PartialObjectMetadata, error), error) {
	sd := codec.NewStreamDecoder(o)
	return func(raw []byte) (*metav1.PartialObjectMetadata, error) { return decodePartial(raw, protobuf, sd) }, nil
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
