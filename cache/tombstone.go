package cache

import (
	"fmt"
	"reflect"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// DeletedFinalStateUnknown is a tombstone: the notice of a delete that was
// inferred rather than observed. When a watch breaks, the reflector lists
// again and replaces the store's contents (see [Store.Replace]); an object
// that was in the store but is not in the new list was deleted while the
// watch was down, and its final state is unknown. Obj is the last state the
// cache saw, which may be stale.
//
// Informers deliver such deletes with a tombstone in place of the object,
// so a delete handler must be ready for both; [DeletedObject] unwraps
// either:
//
//	func onDelete(obj any) {
//		pod, ok := cache.DeletedObject[*corev1.Pod](obj)
//		if !ok {
//			return // not a pod, nor a pod's tombstone
//		}
//		// pod is the deleted object, or its last known state.
//	}
//
// To key either form (to enqueue the deleted object), use
// [DeletionHandlingKeyFunc]; the Key of a tombstone is the key the object
// was stored under.
type DeletedFinalStateUnknown[T Object] struct {
	// Key is the key the object was stored under.
	Key string
	// Obj is the last known state of the object.
	Obj T
}

// tombstoneKey lets DeletionHandlingKeyFunc recognise tombstones of any
// type argument.
func (d DeletedFinalStateUnknown[T]) tombstoneKey() string { return d.Key }

type tombstone interface{ tombstoneKey() string }

// DeletedObject returns the object a delete notification carries: obj
// itself if it is a T, or the last known state if it is a
// DeletedFinalStateUnknown[T] (or a pointer to one). It reports false for
// anything else, including nil objects.
func DeletedObject[T Object](obj any) (T, bool) {
	var zero T
	switch o := obj.(type) {
	case DeletedFinalStateUnknown[T]:
		return o.Obj, !isNilObject(o.Obj)
	case *DeletedFinalStateUnknown[T]:
		if o == nil {
			return zero, false
		}
		return o.Obj, !isNilObject(o.Obj)
	case T:
		return o, !isNilObject(o)
	}
	return zero, false
}

// DeletionHandlingKeyFunc returns the key of obj, which may be an object
// or a tombstone: the Key of a [DeletedFinalStateUnknown] (of any type),
// otherwise [KeyFunc] of a [metav1.Object]. Other values are an error.
func DeletionHandlingKeyFunc(obj any) (string, error) {
	if v := reflect.ValueOf(obj); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return "", ErrNilObject
	}
	switch o := obj.(type) {
	case tombstone:
		return o.tombstoneKey(), nil
	case metav1.Object:
		return KeyFunc(o)
	}
	return "", fmt.Errorf("cache: cannot key %T: not an object or a tombstone", obj)
}
