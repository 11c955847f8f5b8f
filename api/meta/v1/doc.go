// Package v1 holds the Kubernetes meta.k8s.io/v1 types that every kind builds on:
// TypeMeta, ObjectMeta and ListMeta, Status, WatchEvent, Table, the request option
// types with their URL query encodings, and the discovery documents.
//
// Every type is wire-compatible with Kubernetes in JSON and in protobuf: JSON names
// and protobuf field numbers are those of k8s.io/apimachinery.
//
// # Objects
//
// ObjectMeta implements Object, so any struct that embeds it does too:
//
//	type Widget struct {
//		metav1.TypeMeta   `json:",inline"`
//		metav1.ObjectMeta `json:"metadata,omitempty"`
//		Spec WidgetSpec   `json:"spec"`
//	}
package v1
