// Package v1 holds the autoscaling/v1 kinds kapi serves: Scale, the
// representation of the scale subresource (…/deployments/NAME/scale and the
// scale of custom resources that declare one). Written by hand, JSON only;
// its wire form is Kubernetes' (k8s.io/api/autoscaling/v1).
package v1

import (
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// GroupVersion is the apiVersion of the kinds of this package.
const GroupVersion = "autoscaling/v1"

// Scale is the scale subresource of a scalable object: the replicas it asks
// for, the replicas it has, and the label selector of what it counts. Its
// metadata is the scaled object's (name, namespace, uid, resourceVersion,
// creationTimestamp).
type Scale struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec is the desired state.
	Spec ScaleSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state; read-only.
	Status ScaleStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ScaleSpec is the desired scale.
type ScaleSpec struct {
	// Replicas is the desired number of instances.
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
}

// ScaleStatus is the observed scale.
type ScaleStatus struct {
	// Replicas is the number of observed instances.
	Replicas int32 `json:"replicas" protobuf:"varint,1,opt,name=replicas"`
	// Selector is the label selector of the counted instances, in its
	// string form ("app=web,tier in (a,b)").
	Selector string `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`
}

// GetObjectKind returns the kind and apiVersion, for codecs.
func (s *Scale) GetObjectKind() *metav1.TypeMeta { return &s.TypeMeta }

// DeepCopy returns a deep copy.
func (s *Scale) DeepCopy() *Scale {
	if s == nil {
		return nil
	}
	out := *s
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}
