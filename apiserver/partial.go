package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// Metadata-only responses (Accept: …;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,
// or as=PartialObjectMetadataList, or v1beta1): the metadata of objects, as
// kube-apiserver sends them to metadata informers and to `kubectl get` of
// many kinds, in JSON, YAML or protobuf. Lists carry the list's
// resourceVersion, continue token and remaining item count; every item
// carries kind PartialObjectMetadata and the asked apiVersion.

// partialObjectMetadata is obj's metadata as a meta.k8s.io PartialObjectMetadata.
func partialObjectMetadata(o metav1.Object, apiVersion string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{Kind: codec.AsPartialObjectMetadata, APIVersion: apiVersion},
		ObjectMeta: metav1.ObjectMeta{
			Name:                       o.GetName(),
			GenerateName:               o.GetGenerateName(),
			Namespace:                  o.GetNamespace(),
			UID:                        o.GetUID(),
			ResourceVersion:            o.GetResourceVersion(),
			Generation:                 o.GetGeneration(),
			CreationTimestamp:          o.GetCreationTimestamp(),
			DeletionTimestamp:          o.GetDeletionTimestamp(),
			DeletionGracePeriodSeconds: o.GetDeletionGracePeriodSeconds(),
			Labels:                     o.GetLabels(),
			Annotations:                o.GetAnnotations(),
			OwnerReferences:            o.GetOwnerReferences(),
			Finalizers:                 o.GetFinalizers(),
			ManagedFields:              o.GetManagedFields(),
		},
	}
}

// conversionAPIVersion is the apiVersion of the kind mt converts to.
func conversionAPIVersion(mt codec.MediaType) string { return mt.Group + "/" + mt.Version }

// encodePartial encodes the PartialObjectMetadata of obj, in protobuf (with
// its envelope) or JSON.
func encodePartial(obj metav1.Object, mt codec.MediaType, protobuf bool) ([]byte, error) {
	p := partialObjectMetadata(obj, conversionAPIVersion(mt))
	if protobuf {
		return codec.MarshalProtobuf(p.TypeMeta, p)
	}
	return kjson.Marshal(p)
}

// writePartial writes the PartialObjectMetadata of obj.
func (s *Server) writePartial(w http.ResponseWriter, mt codec.MediaType, code int, obj metav1.Object) {
	p := partialObjectMetadata(obj, conversionAPIVersion(mt))
	switch mt.Subtype {
	case offerProtobuf.Subtype:
		b, err := codec.MarshalProtobuf(p.TypeMeta, p)
		if err != nil {
			s.writeRawJSON(w, http.StatusInternalServerError, metav1.NewInternalError(err))
			return
		}
		w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
		w.WriteHeader(code)
		_, _ = w.Write(b)
	case offerYAML.Subtype:
		s.writeYAML(w, code, p)
	default:
		s.writeRawJSON(w, code, p)
	}
}

// writePartialList writes the PartialObjectMetadataList of items, streamed
// item by item in JSON and protobuf.
func (s *Server) writePartialList(w http.ResponseWriter, mt codec.MediaType, meta *metav1.ListMeta, items []storage.Object) {
	apiVersion := conversionAPIVersion(mt)
	typ := metav1.TypeMeta{Kind: codec.AsPartialObjectMetadataList, APIVersion: apiVersion}
	parts := make([]*metav1.PartialObjectMetadata, len(items))
	for i, it := range items {
		parts[i] = partialObjectMetadata(it, apiVersion)
	}
	if len(items) == 0 && mt.Subtype != offerProtobuf.Subtype {
		// kube-apiserver's list of no items has "items": null.
		empty := &metav1.PartialObjectMetadataList{TypeMeta: typ, ListMeta: *meta}
		if mt.Subtype == offerYAML.Subtype {
			s.writeYAML(w, http.StatusOK, empty)
		} else {
			s.writeRawJSON(w, http.StatusOK, empty)
		}
		return
	}
	var err error
	switch mt.Subtype {
	case offerProtobuf.Subtype:
		w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
		err = codec.EncodeProtobufList(w, typ, meta, parts)
	case offerYAML.Subtype:
		var buf bytes.Buffer
		if err := codec.EncodeJSONList(&buf, typ, meta, parts); err != nil {
			s.writeRawJSON(w, http.StatusInternalServerError, metav1.NewInternalError(err))
			return
		}
		s.writeYAML(w, http.StatusOK, json.RawMessage(buf.Bytes()))
		return
	default:
		w.Header().Set("Content-Type", codec.MediaTypeJSON)
		err = codec.EncodeJSONList(w, typ, meta, parts)
	}
	if err != nil {
		s.cfg.Logger.Debug("apiserver: writing list", "err", err)
	}
}
