package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Decoding request bodies: the objects of creates and updates, the results
// of patches, each checked against the resource's kind and the request's
// namespace. The write pipeline (store.go) receives what these produce.

// readBody reads the request body within the size limit.
func (h *handler) readBody() ([]byte, *metav1.Status) {
	body, err := io.ReadAll(http.MaxBytesReader(h.w, h.r.Body, h.s.cfg.MaxRequestBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, metav1.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", h.s.cfg.MaxRequestBodyBytes))
		}
		return nil, metav1.NewBadRequest("reading the request body: " + err.Error())
	}
	return body, nil
}

// decodeBody decodes the request body into a new object of the resource.
func (h *handler) decodeBody() (registry.Object, *metav1.Status) {
	body, st := h.readBody()
	if st != nil {
		return nil, st
	}
	accepted := []string{codec.MediaTypeJSON, codec.MediaTypeYAML}
	if h.res.Protobuf {
		accepted = append(accepted, codec.MediaTypeProtobuf)
	}
	ct := h.r.Header.Get("Content-Type")
	if ct == "" {
		ct = codec.MediaTypeJSON
	}
	mt, err := codec.ParseMediaType(ct)
	if err != nil {
		return nil, metav1.NewUnsupportedMediaType(accepted)
	}
	var obj registry.Object
	switch {
	case mt.Type == "application" && (mt.Subtype == "json" || mt.Subtype == "yaml"):
		js := body
		if mt.Subtype == "yaml" {
			var err error
			if js, err = yamlToJSON(body); err != nil {
				return nil, metav1.NewBadRequest("the object provided is unrecognized (must be of type " + h.res.Kind + "): " + err.Error())
			}
			h.checkYAMLDuplicates(body)
		}
		if obj, st = h.decodeJSON(js, false, func(err error) *metav1.Status { return h.badBody(js, err) }); st != nil {
			return nil, st
		}
	case mt.Type == "application" && mt.Subtype == offerProtobuf.Subtype && h.res.Protobuf:
		obj = h.res.New()
		if _, err := codec.UnmarshalProtobuf(body, obj.(codec.ProtoUnmarshaler)); err != nil {
			return nil, badProtobufObject(h.res.Kind, body, err)
		}
	default:
		return nil, metav1.NewUnsupportedMediaType(accepted)
	}
	return obj, nil
}

// decodeJSON decodes a JSON object of the resource (a request body, or the
// result of a patch or apply): the kind and apiVersion it names, if any, must
// be the resource's, and fields the resource does not know are handled as
// fieldValidation says (checkFields; an apply configuration is checked by the
// field manager instead); patched tells the result of a patch from a body.
// onErr words a decoding failure.
func (h *handler) decodeJSON(data []byte, patched bool, onErr func(error) *metav1.Status) (registry.Object, *metav1.Status) {
	obj := h.res.New()
	unknown, err := kjson.UnmarshalKnown(data, obj)
	if err != nil {
		if !h.res.Custom {
			err = kubeDecodeError(obj, data, err)
		}
		return nil, onErr(err)
	}
	if h.res.Custom && !patched {
		if st := h.checkCustomMetadata(obj, onErr); st != nil {
			return nil, st
		}
	}
	var tm metav1.TypeMeta
	switch o := obj.(type) {
	case interface{ GetObjectKind() *metav1.TypeMeta }:
		tm = *o.GetObjectKind()
	case interface {
		GetAPIVersion() string
		GetKind() string
	}:
		tm = metav1.TypeMeta{Kind: o.GetKind(), APIVersion: o.GetAPIVersion()}
	}
	if st := h.checkTypeMeta(tm); st != nil {
		return nil, st
	}
	// A custom resource's unknown fields are those its schema prunes; a
	// built-in kind's, members its Go type lacks, which the decode detects.
	if !h.applying && (unknown || h.res.Custom || len(h.patchDuplicates) > 0 || h.yamlDuplicates != "") {
		if st := h.checkFields(data, patched); st != nil {
			return nil, st
		}
	}
	return obj, nil
}

// badProtobufObject is the 400 for a protobuf body that does not decode as
// an object of kind, worded as kube-apiserver (golden 57).
func badProtobufObject(kind string, body []byte, err error) *metav1.Status {
	msg := err.Error()
	if errors.Is(err, codec.ErrNotProtobufEnvelope) {
		msg = fmt.Sprintf("provided data does not appear to be a protobuf message, expected prefix %v (%x)", []byte(codec.EnvelopeMagic), body[:min(len(body), 32)])
	}
	return metav1.NewBadRequest("the object provided is unrecognized (must be of type " + kind + "): " + msg)
}

// badBody words a JSON decoding failure as kube-apiserver does (golden 56),
// using encoding/json's message for a syntax error.
func (h *handler) badBody(body []byte, err error) *metav1.Status {
	var probe map[string]any
	if jerr := json.Unmarshal(body, &probe); jerr != nil {
		return metav1.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)",
			h.res.Kind, jerr, truncate(body, 64)))
	}
	return metav1.NewBadRequest(h.cannotHandle() + err.Error())
}

// cannotHandle is the prefix of kube-apiserver's messages for a request body
// that is JSON but does not decode into the kind: `ConfigMap in version "v1"
// cannot be handled as a ConfigMap: `.
func (h *handler) cannotHandle() string {
	return fmt.Sprintf("%s in version %q cannot be handled as a %s: ", h.res.Kind, h.res.Version, h.res.Kind)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(bytes.TrimSpace(b))
}

func (h *handler) checkTypeMeta(tm metav1.TypeMeta) *metav1.Status {
	if tm.Kind != "" && tm.Kind != h.res.Kind {
		return metav1.NewBadRequest(fmt.Sprintf("the kind in the body (%s) does not match the expected kind (%s)", tm.Kind, h.res.Kind))
	}
	if tm.APIVersion != "" && tm.APIVersion != h.res.GroupVersion() {
		return metav1.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, h.res.GroupVersion()))
	}
	return nil
}

// checkNamespace reconciles the object's namespace with the URL's (golden 49).
func (h *handler) checkNamespace(obj registry.Object) *metav1.Status {
	if !h.res.Namespaced {
		obj.SetNamespace("")
		return nil
	}
	switch ns := obj.GetNamespace(); {
	case ns == "":
		obj.SetNamespace(h.ri.Namespace)
	case ns != h.ri.Namespace:
		return metav1.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// checkCustomMetadata refuses a custom resource whose metadata does not
// decode as an ObjectMeta (`"labels": {"x": 1}`), as kube-apiserver, which
// reads a custom resource's metadata into a typed ObjectMeta, answers: 400,
// `Thing in version "v1" cannot be handled as a Thing: json: cannot
// unmarshal number into Go struct field ObjectMeta.labels of type string`.
func (h *handler) checkCustomMetadata(obj registry.Object, onErr func(error) *metav1.Status) *metav1.Status {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	md, ok := u.Object["metadata"]
	if !ok {
		return nil
	}
	raw, err := json.Marshal(md)
	if err != nil {
		return onErr(err)
	}
	var meta metav1.ObjectMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return onErr(kubeDecodeError(&meta, raw, err))
	}
	return nil
}
