package main

import (
	"context"
	"fmt"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// Widget is the example's custom resource (manifests.yaml has its CRD).
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

// WidgetSpec is a Widget's desired state.
type WidgetSpec struct {
	Replicas    int32  `json:"replicas"`
	MaxReplicas int32  `json:"maxReplicas,omitempty"`
	Size        string `json:"size,omitempty"`
}

func init() {
	client.Register[Widget](client.Kind{Group: "sdk.i16.kapi.dev", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true})
}

// widgetDefaulter is the mutating webhook: it fills in what a widget leaves
// out. The webhook package answers with the JSON patch of what it changed.
type widgetDefaulter struct{}

func (widgetDefaulter) Default(_ context.Context, w *Widget) error {
	if w.Spec.Size == "" {
		w.Spec.Size = "medium"
	}
	if w.Spec.MaxReplicas == 0 {
		w.Spec.MaxReplicas = 3
	}
	return nil
}

// widgetValidator is the validating webhook: the rules that need Go rather
// than CEL, or that look at deletes.
type widgetValidator struct{}

func (widgetValidator) ValidateCreate(_ context.Context, w *Widget) ([]string, error) {
	return validate(w)
}

func (widgetValidator) ValidateUpdate(_ context.Context, _, w *Widget) ([]string, error) {
	return validate(w)
}

// ValidateDelete gets the object being deleted: kube-apiserver sends it as
// the old object.
func (widgetValidator) ValidateDelete(_ context.Context, old *Widget) ([]string, error) {
	if old.Labels["protected"] == "true" {
		return nil, fmt.Errorf("widget %s is protected: remove its protected label first", old.Name)
	}
	return nil, nil
}

func validate(w *Widget) ([]string, error) {
	if w.Spec.Size == "small" && w.Spec.Replicas > 2 {
		return nil, fmt.Errorf("a small widget has at most 2 replicas, not %d", w.Spec.Replicas)
	}
	if w.Spec.Replicas == 0 {
		return []string{"a widget with 0 replicas does nothing"}, nil
	}
	return nil, nil
}

// WidgetV1alpha1 is the older version of Widget, still served: the webhook
// converts between the two (Widget, the stored version, is the hub).
type WidgetV1alpha1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Count    int32  `json:"count"`
		MaxCount int32  `json:"maxCount,omitempty"`
		Size     string `json:"size,omitempty"`
	} `json:"spec"`
}

func init() {
	client.Register[WidgetV1alpha1](client.Kind{Group: "sdk.i16.kapi.dev", Version: "v1alpha1", Resource: "widgets", Kind: "Widget", Namespaced: true})
}

// up and down convert a v1alpha1 Widget to v1 and back; the webhook package
// copies the metadata.
func up(src *WidgetV1alpha1, dst *Widget) error {
	dst.Spec = WidgetSpec{Replicas: src.Spec.Count, MaxReplicas: src.Spec.MaxCount, Size: src.Spec.Size}
	return nil
}

func down(src *Widget, dst *WidgetV1alpha1) error {
	dst.Spec.Count, dst.Spec.MaxCount, dst.Spec.Size = src.Spec.Replicas, src.Spec.MaxReplicas, src.Spec.Size
	return nil
}
