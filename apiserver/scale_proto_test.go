package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

// Scale request bodies in a media type kube-apiserver does not read, or
// protobuf that is not an envelope, get its 415 and 400 (messages as
// kube-apiserver v1.37.2 words them, for deployments and custom resources
// alike); a protobuf Accept is answered in protobuf for a deployment.
func TestScaleProtobufRequests(t *testing.T) {
	srv := newTestServer(t)
	widgets(t, srv)
	mustServe(t, srv, "POST", "/apis/apps/v1/namespaces/t/deployments", deploymentJSON("web", 3), http.StatusCreated)
	mustServe(t, srv, "POST", "/apis/example.com/v1/namespaces/t/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"replicas":2,"color":"red"}}`, http.StatusCreated)
	const unsupported = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	for _, path := range []string{"/apis/apps/v1/namespaces/t/deployments/web/scale", "/apis/example.com/v1/namespaces/t/widgets/w/scale"} {
		for _, c := range []struct {
			name, ctype, body string
			code              int
			message           string
		}{
			{"text", "text/plain", "replicas: 1", http.StatusUnsupportedMediaType, unsupported},
			{"cbor", "application/cbor", "\xa0", http.StatusUnsupportedMediaType, unsupported},
			{"not an envelope", codec.MediaTypeProtobuf, "garbage", http.StatusBadRequest,
				"the object provided is unrecognized (must be of type Scale): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (67617262616765)"},
		} {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodPut, path, strings.NewReader(c.body))
				req.Header.Set("Content-Type", c.ctype)
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				st := decodeStatus(t, rec.Body.Bytes())
				if rec.Code != c.code || st["message"] != c.message {
					t.Errorf("%d %v, want %d %q", rec.Code, st["message"], c.code, c.message)
				}
			})
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/apis/apps/v1/namespaces/t/deployments/web/scale", nil)
	req.Header.Set("Accept", codec.MediaTypeProtobuf+", "+codec.MediaTypeJSON)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != codec.MediaTypeProtobuf {
		t.Errorf("scale with protobuf preferred: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	req = httptest.NewRequest(http.MethodGet, "/apis/example.com/v1/namespaces/t/widgets/w/scale", nil)
	req.Header.Set("Accept", codec.MediaTypeProtobuf+", "+codec.MediaTypeJSON)
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != codec.MediaTypeJSON {
		t.Errorf("custom resource scale with protobuf preferred: %d %s, want JSON", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func decodeStatus(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := codec.UnmarshalJSON(b, &m); err != nil {
		t.Fatalf("not a JSON Status: %s", b)
	}
	return m
}
