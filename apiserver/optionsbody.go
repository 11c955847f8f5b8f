package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Options bodies.
//
// A delete or deletecollection may carry its DeleteOptions as the request
// body instead of in the query. kube-apiserver decodes that body by its
// Content-Type, as any other body: JSON (the default when there is none),
// YAML or protobuf (which client-go and controller-runtime send for built-in
// kinds), for custom resources too; anything else is 415. A body that is
// there replaces the query's options entirely (the query is not read, not
// even validated); an empty body leaves them to the query.
//
// The body names its kind and apiVersion as clients have always sent them:
// kind DeleteOptions (or none) in any apiVersion — v1, meta.k8s.io/v1, the
// resource's own group version, even one the server does not serve. Any
// other kind is a 400 worded as kube-apiserver's scheme words it: a kind it
// knows is one it cannot convert to DeleteOptions, any other one it does not
// know in that version. A missing apiVersion is meta.k8s.io/v1.

// optionsBodyTypes are the media types an options body may be in.
var optionsBodyTypes = []string{codec.MediaTypeJSON, codec.MediaTypeYAML, codec.MediaTypeProtobuf}

// decodeDeleteOptionsBody decodes a non-empty DeleteOptions body whose
// Content-Type header is contentType.
func decodeDeleteOptionsBody(body []byte, contentType string) (metav1.DeleteOptions, *metav1.Status) {
	var opts metav1.DeleteOptions
	if contentType == "" {
		contentType = codec.MediaTypeJSON
	}
	mt, err := codec.ParseMediaType(contentType)
	if err != nil || mt.Type != "application" {
		return opts, metav1.NewUnsupportedMediaType(optionsBodyTypes)
	}
	switch mt.Subtype {
	case "json", "yaml":
		js := body
		if mt.Subtype == "yaml" {
			if js, err = yamlToJSON(body); err != nil {
				return opts, metav1.NewBadRequest(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "))
			}
		}
		var tm struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
		}
		if err := json.Unmarshal(js, &tm); err != nil {
			return opts, metav1.NewBadRequest("couldn't get version/kind; json parse error: " + err.Error())
		}
		if msg := optionsKindError(tm.Kind, tm.APIVersion, "DeleteOptions"); msg != "" {
			return opts, metav1.NewBadRequest(msg)
		}
		if err := kjson.Unmarshal(js, &opts); err != nil {
			// encoding/json words type errors as kube-apiserver reports them.
			if jerr := json.Unmarshal(js, &metav1.DeleteOptions{}); jerr != nil {
				// (kube-apiserver's UID type is types.UID)
				err = errors.New(strings.ReplaceAll(jerr.Error(), "of type v1.UID", "of type types.UID"))
			}
			return metav1.DeleteOptions{}, metav1.NewBadRequest(err.Error())
		}
	case offerProtobuf.Subtype:
		if string(body) == codec.EnvelopeMagic {
			return opts, metav1.NewBadRequest("empty body")
		}
		u, err := codec.DecodeEnvelope(body)
		if err != nil {
			return opts, metav1.NewBadRequest(protobufBodyError(body, err))
		}
		if msg := optionsKindError(u.TypeMeta.Kind, u.TypeMeta.APIVersion, "DeleteOptions"); msg != "" {
			return opts, metav1.NewBadRequest(msg)
		}
		if u.ContentEncoding != "" || (u.ContentType != "" && u.ContentType != codec.MediaTypeProtobuf) {
			return opts, metav1.NewBadRequest(fmt.Sprintf("unsupported envelope content (encoding %q, type %q)", u.ContentEncoding, u.ContentType))
		}
		if err := opts.Unmarshal(u.Raw); err != nil {
			return metav1.DeleteOptions{}, metav1.NewBadRequest(protobufBodyError(body, err))
		}
	default:
		return opts, metav1.NewUnsupportedMediaType(optionsBodyTypes)
	}
	opts.TypeMeta = metav1.TypeMeta{}
	return opts, nil
}

// protobufBodyError words a protobuf options body that does not decode as
// kube-apiserver does.
func protobufBodyError(body []byte, err error) string {
	switch {
	case errors.Is(err, codec.ErrNotProtobufEnvelope):
		return fmt.Sprintf("provided data does not appear to be a protobuf message, expected prefix %v", []byte(codec.EnvelopeMagic))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return io.ErrUnexpectedEOF.Error()
	}
	return strings.TrimPrefix(err.Error(), "codec: ")
}

// metaKinds are the kinds kube-apiserver's options scheme knows, by the
// version they are registered in: "" for every version (and the Go package
// its conversion error names them by).
var metaKinds = map[string]map[string]string{
	"": {"DeleteOptions": "v1", "CreateOptions": "v1", "UpdateOptions": "v1", "Status": "v1",
		"APIVersions": "v1", "APIGroup": "v1", "APIGroupList": "v1", "APIResourceList": "v1"},
	"meta.k8s.io/v1": {"ListOptions": "v1", "GetOptions": "v1", "PatchOptions": "v1", "WatchEvent": "v1",
		"Table": "v1", "TableOptions": "v1", "PartialObjectMetadata": "v1", "PartialObjectMetadataList": "v1"},
	"meta.k8s.io/v1beta1": {"Table": "v1", "TableOptions": "v1", "PartialObjectMetadata": "v1",
		"PartialObjectMetadataList": "v1beta1"},
}

// optionsKindError is the message of the 400 kube-apiserver answers to an
// options body of the given kind and apiVersion when it wants want, or ""
// when the body is one.
func optionsKindError(kind, apiVersion, want string) string {
	if apiVersion == "" {
		apiVersion = "meta.k8s.io/v1"
	}
	if kind == "" {
		kind = want
	}
	pkg, ok := metaKinds[""][kind]
	if !ok {
		pkg, ok = metaKinds[apiVersion][kind]
	}
	switch {
	case !ok:
		return fmt.Sprintf("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", kind, apiVersion)
	case kind != want:
		return fmt.Sprintf("converting (%s.%s) to (v1.%s): unknown conversion", pkg, kind, want)
	}
	return ""
}
