package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/codec"
)

// DynamicClient makes Resources of any resource, their objects held as
// unstructured.Unstructured: for kinds without a Go type (custom resources
// known only at run time, generic tools).
type DynamicClient struct {
	c *Client
}

// Dynamic returns the dynamic client of c.
func Dynamic(c *Client) *DynamicClient { return &DynamicClient{c: c} }

// Resource returns the Resource gvr, with no namespace: call Namespace for
// a namespaced resource. Its verbs, options and errors are those of For's;
// what differs:
//
//   - it always speaks JSON;
//   - it does not know the resource's kind or scope (RESTMapper does), so
//     Kind has only the group, version and resource, and a namespace is
//     never left out or required on its behalf;
//   - objects sent must have their apiVersion and kind set, as the server
//     requires of unstructured bodies;
//   - the items of a list get the list's apiVersion and kind (without
//     "List") when they have none, as servers send typed lists;
//   - of the decode options, SkipManagedFields drops managedFields (after
//     decoding) and ShareFieldsV1 does nothing.
func (d *DynamicClient) Resource(gvr GroupVersionResource) Resource[unstructured.Unstructured] {
	return &resourceClient[unstructured.Unstructured, *unstructured.Unstructured]{
		c:     d.c,
		codec: unstructuredCodec{},
		kind:  Kind{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
	}
}

// unstructuredCodec encodes and decodes unstructured.Unstructured, in JSON.
type unstructuredCodec struct{}

func (unstructuredCodec) accept(bool) string { return codec.MediaTypeJSON }

func (unstructuredCodec) protobufBodies() bool { return false }

func (unstructuredCodec) encode(obj *unstructured.Unstructured, apply bool) ([]byte, string, error) {
	if obj.Object == nil {
		return nil, "", fmt.Errorf("client: nil object")
	}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, "", fmt.Errorf("client: object %q has no kind or apiVersion", obj.GetName())
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		return nil, "", fmt.Errorf("client: encoding %s: %w", obj.GetKind(), err)
	}
	if apply {
		return b, string(ApplyPatchType), nil
	}
	return b, codec.MediaTypeJSON, nil
}

func (unstructuredCodec) decode(resp *Response) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := resp.Into(u); err != nil {
		return nil, err
	}
	return u, nil
}

// errProtobufWatch is the error of a watch answered in protobuf.
var errProtobufWatch = errors.New("client: the server answered a JSON request in protobuf")

func (unstructuredCodec) decodeList(resp *Response, o codec.DecodeOptions, fn func(*unstructured.Unstructured) error) (codec.ListHeader, error) {
	var h codec.ListHeader
	if ct := resp.ContentType(); ct != codec.MediaTypeJSON && ct != "" {
		return h, fmt.Errorf("client: unexpected list Content-Type %q", resp.Header.Get("Content-Type"))
	}
	err := codec.DecodeJSONListInto(resp.Body, codec.DecodeOptions{}, &h, func(it *listItem) error {
		u := &it.Unstructured
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetKind(strings.TrimSuffix(h.Kind, "List"))
			u.SetAPIVersion(h.APIVersion)
		}
		dropManagedFields(u, o)
		return fn(u)
	})
	return h, err
}

func (unstructuredCodec) watchDecoder(protobuf bool, o codec.DecodeOptions) (func([]byte) (*unstructured.Unstructured, error), error) {
	if protobuf {
		return nil, errProtobufWatch
	}
	return func(raw []byte) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		dropManagedFields(u, o)
		return u, nil
	}, nil
}

// dropManagedFields removes u's managedFields when o says to skip them.
func dropManagedFields(u *unstructured.Unstructured, o codec.DecodeOptions) {
	if o.SkipManagedFields {
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	}
}

// listItem is an item of a list as the dynamic client decodes it: an
// Unstructured that may lack a kind (servers leave it out of the items of
// typed lists; decodeList sets it from the list's).
type listItem struct{ unstructured.Unstructured }

// UnmarshalJSONFrom decodes the item, with or without a kind; a null item
// is an empty object, as in Kubernetes.
func (it *listItem) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		it.Object = map[string]any{}
		return err
	}
	if err := it.Unstructured.UnmarshalJSONFrom(dec); err != nil && !errors.Is(err, unstructured.ErrMissingKind) {
		return err
	}
	return nil
}
