package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/manager"
	"github.com/kapi-dev/kapi/webhook"
)

// A Server runs in a manager, on every replica.
var _ manager.LeaderElectionRunnable = (*webhook.Server)(nil)

// Widget is the example kind: a custom resource in two versions, v1 (the
// hub, below) and v1alpha1.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

type WidgetSpec struct {
	Replicas int32  `json:"replicas"`
	Size     string `json:"size,omitempty"`
}

// WidgetV1alpha1 is the older version, with the replica count named count.
type WidgetV1alpha1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Count int32 `json:"count"`
	} `json:"spec"`
}

func init() {
	k := client.Kind{Group: "example.kapi.dev", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}
	client.Register[Widget](k)
	k.Version = "v1alpha1"
	client.Register[WidgetV1alpha1](k)
}

func review(op admissionv1.Operation, object string) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{
		UID: "705ab4f5", Kind: metav1.GroupVersionKind{Group: "example.kapi.dev", Version: "v1", Kind: "Widget"},
		Operation: op, Object: metav1.RawExtension{Raw: []byte(object)},
	}
}

func ExampleValidating() {
	validate := webhook.Validating(func(ctx context.Context, req webhook.Request[Widget]) webhook.Response {
		if req.Object.Spec.Replicas > 10 {
			return webhook.Response{Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
				Message: "spec.replicas: must be at most 10"}
		}
		if req.Object.Spec.Size == "" {
			return webhook.Allowed("spec.size is empty: medium is assumed")
		}
		return webhook.Allowed()
	})
	resp := validate.Review(context.Background(), review(admissionv1.Create, `{"metadata":{"name":"w"},"spec":{"replicas":20}}`))
	fmt.Println(resp.UID, resp.Allowed, resp.Result.Code, resp.Result.Message)
	resp = validate.Review(context.Background(), review(admissionv1.Create, `{"metadata":{"name":"w"},"spec":{"replicas":2}}`))
	fmt.Println(resp.UID, resp.Allowed, resp.Warnings)
	// Output:
	// 705ab4f5 false 422 spec.replicas: must be at most 10
	// 705ab4f5 true [spec.size is empty: medium is assumed]
}

func ExampleMutating() {
	mutate := webhook.Mutating(func(ctx context.Context, req webhook.Request[Widget]) webhook.Response {
		if req.Object.Spec.Size == "" {
			req.Object.Spec.Size = "medium"
		}
		return webhook.Allowed()
	})
	// "future" is a field the Go type does not know: the patch keeps it.
	resp := mutate.Review(context.Background(), review(admissionv1.Create, `{"metadata":{"name":"w"},"spec":{"replicas":2,"future":true}}`))
	fmt.Println(resp.Allowed, *resp.PatchType, string(resp.Patch))
	// Output:
	// true JSONPatch [{"op":"add","path":"/spec/size","value":"medium"}]
}

// sizeValidator validates widgets operation by operation.
type sizeValidator struct{}

func (sizeValidator) ValidateCreate(ctx context.Context, w *Widget) ([]string, error) {
	return nil, nil
}

func (sizeValidator) ValidateUpdate(ctx context.Context, old, w *Widget) ([]string, error) {
	if old.Spec.Size != "" && w.Spec.Size != old.Spec.Size {
		return nil, errors.New("spec.size is immutable")
	}
	return nil, nil
}

func (sizeValidator) ValidateDelete(ctx context.Context, old *Widget) ([]string, error) {
	if old.Labels["protected"] == "true" {
		return nil, fmt.Errorf("widget %s is protected", old.Name)
	}
	return nil, nil
}

func ExampleFromValidator() {
	h := webhook.FromValidator[Widget](sizeValidator{})
	req := review(admissionv1.Delete, "")
	req.OldObject.Raw = []byte(`{"metadata":{"name":"w","labels":{"protected":"true"}}}`)
	resp := h.Review(context.Background(), req)
	fmt.Println(resp.Allowed, resp.Result.Code, resp.Result.Reason, resp.Result.Message)
	// Output:
	// false 403 Forbidden widget w is protected
}

func ExampleNewConversion() {
	up := func(src *WidgetV1alpha1, dst *Widget) error {
		dst.Spec.Replicas = src.Spec.Count
		return nil
	}
	down := func(src *Widget, dst *WidgetV1alpha1) error {
		dst.Spec.Count = src.Spec.Replicas
		return nil
	}
	conv, err := webhook.NewConversion[Widget](webhook.Spoke(up, down))
	if err != nil {
		panic(err)
	}
	resp := conv.Review(context.Background(), &apiextensionsv1.ConversionRequest{
		UID: "c0ffee", DesiredAPIVersion: "example.kapi.dev/v1",
		Objects: []metav1.RawExtension{{Raw: []byte(`{"apiVersion":"example.kapi.dev/v1alpha1","kind":"Widget","metadata":{"name":"w"},"spec":{"count":3}}`)}},
	})
	fmt.Println(resp.UID, resp.Result.Status, string(resp.ConvertedObjects[0].Raw))
	// Output:
	// c0ffee Success {"kind":"Widget","apiVersion":"example.kapi.dev/v1","metadata":{"name":"w"},"spec":{"replicas":3}}
}

func ExampleServer() {
	dir, err := os.MkdirTemp("", "webhook-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cert, key, err := webhook.SelfSigned(time.Hour, "127.0.0.1")
	if err != nil {
		panic(err)
	}
	os.WriteFile(filepath.Join(dir, "tls.crt"), cert, 0o600)
	os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600)

	srv, err := webhook.NewServer(webhook.ServerConfig{
		Addr:    "127.0.0.1:0",
		CertDir: dir,
		Handlers: map[string]http.Handler{
			"/validate-widget": webhook.FromValidator[Widget](sizeValidator{}),
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a real program cancels on SIGTERM; here it stops at once
	fmt.Println(srv.Start(ctx))
	// Output:
	// <nil>
}
