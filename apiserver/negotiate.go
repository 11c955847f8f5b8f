package apiserver

import (
	"net/http"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/codec"
)

// Response negotiation.
//
// Every response about a resource — get, list and watch, and the object a
// write returns — is negotiated as kube-apiserver negotiates it, in three
// steps:
//
//  1. For a built-in resource, the Accept header must name one of the media
//     types of the route, parameters aside (json, yaml, protobuf, and for a
//     collection GET the two watch streams); otherwise the answer is 406
//     "406: Not Acceptable\n\nAvailable representations: …", in JSON. Custom
//     resources skip this step.
//  2. The Accept entries are tried as codec.NegotiateConversion says: the
//     first entry (by q, then concreteness, then header order) whose type
//     fits one of JSON, YAML and protobuf in a form the server can serve
//     wins. A form is the representation itself (protobuf only for kinds
//     that have it), a meta.k8s.io/v1 or v1beta1 Table in JSON or YAML, or a
//     meta.k8s.io/v1 or v1beta1 PartialObjectMetadata or
//     PartialObjectMetadataList in any of the three. When no entry fits, the
//     answer is 406 "only the following media types are accepted:
//     application/json, application/yaml, application/vnd.kubernetes.protobuf"
//     (so a later plain "application/json" entry is a fallback for a form
//     the server lacks). A watch then needs a stream form: YAML is a 406
//     listing the two watch streams.
//  3. The conversion is applied to what the request produced: a
//     PartialObjectMetadata of an object, a PartialObjectMetadataList of a
//     list, a Table of either. A PartialObjectMetadata asked of a list, or a
//     PartialObjectMetadataList of one object, is not a fallback but a 406
//     naming the server's Go type ("… but the requested object is a list
//     (*core.ConfigMapList)"); for custom resources kube-apiserver answers
//     the latter with a 500 "content is not a list", and so does kapi.
//     Status responses (a delete that removed its object) are not converted.
//
// A watch's events carry the converted objects (bookmarks included); a watch
// asked for PartialObjectMetadataList ends, as kube-apiserver's does, at its
// first event.

// serverOffers are the representations of responses, in kube-apiserver's
// order of preference.
var serverOffers = []codec.MediaType{offerJSON, offerYAML, offerProtobuf}

// watchOffers are the stream forms of a watch.
var watchOffers = func() []codec.MediaType {
	j, p := offerJSON, offerProtobuf
	j.Stream, p.Stream = "watch", "watch"
	return []codec.MediaType{j, p}
}()

// negotiate picks the representation of the response to the request (with
// the conversion its Accept header asks for, in As, Group and Version),
// writing the 406 kube-apiserver answers when none fits.
func (h *handler) negotiate() (codec.MediaType, bool) {
	accept := h.r.Header.Get("Accept")
	if !h.res.Custom {
		types := serverOffers
		if h.ri.Name == "" && (h.r.Method == http.MethodGet || h.r.Method == http.MethodHead) {
			types = append(types[:len(types):len(types)], watchOffers...)
		}
		if !codec.AcceptsAnyType(accept, types) {
			h.s.writeStatusAs(h.w, offerJSON, metav1.NewNotAcceptable(mediaTypeStrings(types)))
			return codec.MediaType{}, false
		}
	}
	mt, err := codec.NegotiateConversion(accept, serverOffers, h.servable)
	if err != nil {
		h.fail(metav1.NewNotAcceptableMediaTypes(mediaTypeStrings(serverOffers)))
		return codec.MediaType{}, false
	}
	return mt, true
}

// negotiateWatch is negotiate for a watch, which has no YAML form.
func (h *handler) negotiateWatch() (codec.MediaType, bool) {
	mt, ok := h.negotiate()
	if ok && mt.Subtype == offerYAML.Subtype {
		h.fail(metav1.NewNotAcceptableMediaTypes(mediaTypeStrings(watchOffers)))
		return mt, false
	}
	return mt, ok
}

// servable reports whether the server can answer in m: the resource's own
// representation (protobuf only for kinds that have one), or a conversion
// it knows.
func (h *handler) servable(m codec.MediaType) bool {
	switch {
	case m.As == "" && m.Group == "" && m.Version == "":
		return m.Subtype != offerProtobuf.Subtype || h.res.Protobuf
	case m.Group != codec.GroupMeta || (m.Version != "v1" && m.Version != "v1beta1"):
		return false
	case m.As == codec.AsTable:
		return m.Subtype == offerJSON.Subtype || m.Subtype == offerYAML.Subtype
	case m.As == codec.AsPartialObjectMetadata, m.As == codec.AsPartialObjectMetadataList:
		return true
	}
	return false
}

// serverTypeName is how kube-apiserver's messages name the Go type it holds
// an object (or a list) of res in: its internal type, such as
// *core.ConfigMap or *apps.DeploymentList, and *unstructured.Unstructured for
// custom resources.
func serverTypeName(res *registry.Resource, list bool) string {
	suffix := ""
	if list {
		suffix = "List"
	}
	if res.Custom {
		return "*unstructured.Unstructured" + suffix
	}
	pkg, _, _ := strings.Cut(res.Group, ".")
	switch res.Group {
	case "", "events.k8s.io":
		pkg = "core"
	case "internal.apiserver.k8s.io":
		pkg = "apiserverinternal"
	}
	return "*" + pkg + "." + res.Kind + suffix
}

// notAList is the answer to a PartialObjectMetadataList asked of one object.
func notAList(res *registry.Resource) *metav1.Status {
	if res.Custom {
		return &metav1.Status{Status: metav1.StatusFailure, Message: "content is not a list", Code: http.StatusInternalServerError}
	}
	return metav1.NewNotAcceptableMessage("you requested PartialObjectMetadataList, but the requested object is not a list (" + serverTypeName(res, false) + ")")
}

// isAList is the answer to a PartialObjectMetadata asked of a list.
func isAList(res *registry.Resource) *metav1.Status {
	return metav1.NewNotAcceptableMessage("you requested PartialObjectMetadata, but the requested object is a list (" + serverTypeName(res, true) + ")")
}
