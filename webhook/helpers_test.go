package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Gadget is a test kind registered in client.DefaultScheme, so requests of
// another kind are refused.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GadgetSpec `json:"spec"`
}

type GadgetSpec struct {
	Size  int32             `json:"size"`
	Color string            `json:"color,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

var gadgetKind = client.Kind{Group: "test.webhook.kapi.dev", Version: "v1", Resource: "gadgets", Kind: "Gadget", Namespaced: true}

func init() { client.Register[Gadget](gadgetKind) }

var gadgetGVK = metav1.GroupVersionKind{Group: gadgetKind.Group, Version: gadgetKind.Version, Kind: gadgetKind.Kind}

// request returns an AdmissionRequest for a Gadget.
func request(op admissionv1.Operation, object, oldObject string) *admissionv1.AdmissionRequest {
	r := &admissionv1.AdmissionRequest{UID: "uid-1", Kind: gadgetGVK, Operation: op, Name: "g", Namespace: "ns"}
	if object != "" {
		r.Object.Raw = []byte(object)
	}
	if oldObject != "" {
		r.OldObject.Raw = []byte(oldObject)
	}
	return r
}

// post sends body to h as an HTTP request and returns the recorder.
func post(t *testing.T, h http.Handler, contentType string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptestRequest(http.MethodPost, contentType, body))
	return w
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func httptestRequest(method, contentType string, body []byte) *http.Request {
	r := httptest.NewRequestWithContext(context.Background(), method, "/validate", bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}
