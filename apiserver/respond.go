package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	"sigs.k8s.io/yaml"
)

func goVersion() string { return runtime.Version() }
func platform() string  { return runtime.GOOS + "/" + runtime.GOARCH }

var (
	offerJSON     = mustMediaType(codec.MediaTypeJSON)
	offerYAML     = mustMediaType(codec.MediaTypeYAML)
	offerProtobuf = mustMediaType(codec.MediaTypeProtobuf)
)

func mustMediaType(s string) codec.MediaType {
	m, err := codec.ParseMediaType(s)
	if err != nil {
		panic(err)
	}
	return m
}

func mediaTypeStrings(m []codec.MediaType) []string {
	out := make([]string, len(m))
	for i, x := range m {
		out[i] = x.String()
	}
	return out
}

// writeStatus writes a Status in the representation the request accepts
// (JSON, YAML or protobuf, from the Accept entries that ask for no
// conversion; JSON when it accepts none of them).
func (s *Server) writeStatus(w http.ResponseWriter, r *http.Request, st *metav1.Status) {
	mt, err := codec.NegotiateConversion(r.Header.Get("Accept"), serverOffers, nil)
	if err != nil {
		mt = offerJSON
	}
	s.writeStatusAs(w, mt, st)
}

func (s *Server) writeStatusAs(w http.ResponseWriter, mt codec.MediaType, st *metav1.Status) {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if st.Code == http.StatusTooManyRequests || st.Code == http.StatusGatewayTimeout || st.Code == http.StatusServiceUnavailable {
		if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
		}
	}
	code := int(st.Code)
	switch {
	case code != 0:
	case st.Status == metav1.StatusSuccess:
		code = http.StatusOK
	default:
		code = http.StatusInternalServerError
	}
	if mt.Subtype == offerProtobuf.Subtype {
		b, err := codec.MarshalProtobuf(st.TypeMeta, st)
		if err == nil {
			w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
			w.WriteHeader(code)
			_, _ = w.Write(b)
			return
		}
	}
	if mt.Subtype == offerYAML.Subtype {
		s.writeYAML(w, code, st)
		return
	}
	s.writeRawJSON(w, code, st)
}

// writeRawJSON writes v as JSON with a trailing newline, as kube-apiserver does.
func (s *Server) writeRawJSON(w http.ResponseWriter, code int, v any) {
	b, err := kjson.Marshal(v)
	if err != nil {
		s.cfg.Logger.Error("apiserver: encoding response", "err", err)
		code = http.StatusInternalServerError
		b = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"encoding the response failed","reason":"InternalError","code":500}`)
	}
	w.Header().Set("Content-Type", codec.MediaTypeJSON)
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// writeObject writes the object a request produced, converted as mt asks
// (negotiate.go).
func (h *handler) writeObject(mt codec.MediaType, code int, obj storage.Object) {
	switch mt.As {
	case codec.AsPartialObjectMetadata:
		h.s.writePartial(h.w, mt, code, obj)
	case codec.AsPartialObjectMetadataList:
		h.fail(notAList(h.res))
	case codec.AsTable:
		h.getTable(mt, code, obj)
	default:
		h.s.writeObject(h.w, mt, code, h.res, obj)
	}
}

// writeObject writes one object with its kind and apiVersion.
func (s *Server) writeObject(w http.ResponseWriter, mt codec.MediaType, code int, res *registry.Resource, obj metav1.Object) {
	if mt.Subtype == offerProtobuf.Subtype {
		if m, ok := obj.(codec.ProtoMarshaler); ok {
			b, err := codec.MarshalProtobuf(res.TypeMeta(), m)
			if err == nil {
				w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
				w.WriteHeader(code)
				_, _ = w.Write(b)
				return
			}
			s.cfg.Logger.Error("apiserver: protobuf encoding", "kind", res.Kind, "err", err)
		}
	}
	if mt.Subtype == offerYAML.Subtype {
		s.writeYAML(w, code, res.WithTypeMeta(obj))
		return
	}
	s.writeRawJSON(w, code, res.WithTypeMeta(obj))
}

// writeYAML writes v as YAML (the JSON document converted, as kube-apiserver
// does).
func (s *Server) writeYAML(w http.ResponseWriter, code int, v any) {
	b, err := kjson.Marshal(v)
	if err == nil {
		b, err = yaml.JSONToYAML(b)
	}
	if err != nil {
		s.writeRawJSON(w, http.StatusInternalServerError, metav1.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", codec.MediaTypeYAML)
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// writeList writes the list a request produced, converted as mt asks
// (negotiate.go).
func (h *handler) writeList(mt codec.MediaType, meta *metav1.ListMeta, items []storage.Object) {
	switch mt.As {
	case codec.AsPartialObjectMetadataList:
		h.s.writePartialList(h.w, mt, meta, items)
	case codec.AsPartialObjectMetadata:
		h.fail(isAList(h.res))
	case codec.AsTable:
		h.listTable(mt, meta, items)
	default:
		h.s.writeList(h.w, mt, h.res, meta, items)
	}
}

// writeList streams a list.
func (s *Server) writeList(w http.ResponseWriter, mt codec.MediaType, res *registry.Resource, meta *metav1.ListMeta, items []storage.Object) {
	typ := metav1.TypeMeta{Kind: res.ListKind, APIVersion: res.GroupVersion()}
	if mt.Subtype == offerProtobuf.Subtype && res.Protobuf {
		w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
		pm := make([]codec.ProtoMarshaler, len(items))
		for i, it := range items {
			pm[i] = it.(codec.ProtoMarshaler)
		}
		if err := codec.EncodeProtobufList(w, typ, meta, pm); err != nil {
			s.cfg.Logger.Debug("apiserver: writing list", "err", err)
		}
		return
	}
	if mt.Subtype == offerYAML.Subtype {
		var buf bytes.Buffer
		if err := codec.EncodeJSONList(&buf, typ, meta, items); err != nil {
			s.writeRawJSON(w, http.StatusInternalServerError, metav1.NewInternalError(err))
			return
		}
		s.writeYAML(w, http.StatusOK, json.RawMessage(buf.Bytes()))
		return
	}
	w.Header().Set("Content-Type", codec.MediaTypeJSON)
	if err := codec.EncodeJSONList(w, typ, meta, items); err != nil {
		s.cfg.Logger.Debug("apiserver: writing list", "err", err)
	}
}
