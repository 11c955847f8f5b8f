package cache_test

import (
	"errors"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/cache"
)

func TestDeletedObject(t *testing.T) {
	pod := newPod("a", "x")
	var nilPod *corev1.Pod
	var nilTomb *cache.DeletedFinalStateUnknown[*corev1.Pod]
	tests := []struct {
		name string
		obj  any
		want *corev1.Pod
	}{
		{"object", pod, pod},
		{"tombstone", cache.DeletedFinalStateUnknown[*corev1.Pod]{Key: "a/x", Obj: pod}, pod},
		{"tombstone pointer", &cache.DeletedFinalStateUnknown[*corev1.Pod]{Key: "a/x", Obj: pod}, pod},
		{"nil", nil, nil},
		{"nil object", nilPod, nil},
		{"nil tombstone pointer", nilTomb, nil},
		{"tombstone without object", cache.DeletedFinalStateUnknown[*corev1.Pod]{Key: "a/x"}, nil},
		{"other kind", &corev1.Namespace{}, nil},
		{"tombstone of other kind", cache.DeletedFinalStateUnknown[*corev1.Namespace]{Key: "x", Obj: &corev1.Namespace{}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cache.DeletedObject[*corev1.Pod](tt.obj)
			if got != tt.want || ok != (tt.want != nil) {
				t.Errorf("DeletedObject = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

func TestDeletionHandlingKeyFunc(t *testing.T) {
	var nilPod *corev1.Pod
	var nilTomb *cache.DeletedFinalStateUnknown[*corev1.Pod]
	tests := []struct {
		name    string
		obj     any
		want    string
		wantErr bool
	}{
		{"object", newPod("a", "x"), "a/x", false},
		{"tombstone", cache.DeletedFinalStateUnknown[*corev1.Pod]{Key: "a/x"}, "a/x", false},
		{"tombstone pointer", &cache.DeletedFinalStateUnknown[*corev1.Namespace]{Key: "ns"}, "ns", false},
		{"nil", nil, "", true},
		{"nil object", nilPod, "", true},
		{"nil tombstone pointer", nilTomb, "", true},
		{"not an object", "a/x", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cache.DeletionHandlingKeyFunc(tt.obj)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("DeletionHandlingKeyFunc = %q, %v", got, err)
			}
			if tt.obj == nil && !errors.Is(err, cache.ErrNilObject) {
				t.Errorf("error %v, want ErrNilObject", err)
			}
		})
	}
}
