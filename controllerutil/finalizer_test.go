package controllerutil_test

import (
	"slices"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/controllerutil"
)

func TestFinalizerHelpers(t *testing.T) {
	const f = "example.com/cleanup"
	tests := []struct {
		name       string
		have       []string
		op         func(metav1.Object, string) bool
		want       []string
		wantChange bool
	}{
		{"add to none", nil, controllerutil.AddFinalizer, []string{f}, true},
		{"add after others", []string{"a/b"}, controllerutil.AddFinalizer, []string{"a/b", f}, true},
		{"add present", []string{f, "a/b"}, controllerutil.AddFinalizer, []string{f, "a/b"}, false},
		{"remove present", []string{"a/b", f, "c/d"}, controllerutil.RemoveFinalizer, []string{"a/b", "c/d"}, true},
		{"remove every copy", []string{f, "a/b", f}, controllerutil.RemoveFinalizer, []string{"a/b"}, true},
		{"remove absent", []string{"a/b"}, controllerutil.RemoveFinalizer, []string{"a/b"}, false},
		{"remove from none", nil, controllerutil.RemoveFinalizer, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			have := slices.Clone(tt.have)
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Finalizers: have}}
			if got := tt.op(obj, f); got != tt.wantChange {
				t.Errorf("changed = %v, want %v", got, tt.wantChange)
			}
			if got := obj.Finalizers; !slices.Equal(got, tt.want) {
				t.Errorf("finalizers = %q, want %q", got, tt.want)
			}
			if !slices.Equal(have, tt.have) {
				t.Errorf("the caller's slice changed to %q", have)
			}
			if got, want := controllerutil.ContainsFinalizer(obj, f), slices.Contains(tt.want, f); got != want {
				t.Errorf("ContainsFinalizer = %v, want %v", got, want)
			}
		})
	}
}
