package controllerutil

import (
	"slices"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// AddFinalizer adds finalizer to obj's finalizers unless it is there, and
// reports whether it added it. obj is changed in memory only.
func AddFinalizer(obj metav1.Object, finalizer string) bool {
	f := obj.GetFinalizers()
	if slices.Contains(f, finalizer) {
		return false
	}
	obj.SetFinalizers(append(slices.Clone(f), finalizer))
	return true
}

// RemoveFinalizer removes finalizer from obj's finalizers (every copy of it)
// and reports whether it was there. obj is changed in memory only.
func RemoveFinalizer(obj metav1.Object, finalizer string) bool {
	f := obj.GetFinalizers()
	kept := slices.DeleteFunc(slices.Clone(f), func(s string) bool { return s == finalizer })
	if len(kept) == len(f) {
		return false
	}
	obj.SetFinalizers(kept)
	return true
}

// ContainsFinalizer reports whether obj has finalizer.
func ContainsFinalizer(obj metav1.Object, finalizer string) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}
