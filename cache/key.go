package cache

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Object is the constraint on the types a [Store] holds: a type with object
// metadata accessors, in practice a pointer to a kind such as *corev1.Pod or
// *unstructured.Unstructured.
//
// Object is comparable so that the cache can tell a nil object from a real
// one without reflection; every pointer type and every interface type
// (metav1.Object itself, for instance) satisfies that.
type Object interface {
	comparable
	metav1.Object
}

var (
	// ErrNilObject is returned (wrapped) when a nil object is given to a
	// write or to [KeyFunc].
	ErrNilObject = errors.New("cache: nil object")
	// ErrInvalidKey is returned (wrapped) when an object cannot be keyed,
	// because its name is empty or its name or namespace contains a '/',
	// and by [SplitKey] for a string no object could have as its key.
	ErrInvalidKey = errors.New("cache: invalid key")
)

// objectKey is the key of a stored object in structured form. The store
// keys its maps by the namespace and name strings of the object itself, so
// keying an object allocates nothing; the "namespace/name" string is built
// only when a caller asks for it.
type objectKey struct {
	namespace, name string
}

// String returns the key in its string form, as [JoinKey] does.
func (k objectKey) String() string { return JoinKey(k.namespace, k.name) }

// validateKey checks that namespace and name form a key that [SplitKey]
// can take apart again.
func validateKey(namespace, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: object in namespace %q has no name", ErrInvalidKey, namespace)
	case strings.IndexByte(name, '/') >= 0:
		return fmt.Errorf("%w: name %q contains '/'", ErrInvalidKey, name)
	case strings.IndexByte(namespace, '/') >= 0:
		return fmt.Errorf("%w: namespace %q contains '/'", ErrInvalidKey, namespace)
	}
	return nil
}

// keyOf returns the structured key of obj, or an error wrapping
// [ErrNilObject] or [ErrInvalidKey].
func keyOf[T Object](obj T) (objectKey, error) {
	if isNilObject(obj) {
		return objectKey{}, ErrNilObject
	}
	k := objectKey{obj.GetNamespace(), obj.GetName()}
	if err := validateKey(k.namespace, k.name); err != nil {
		return objectKey{}, err
	}
	return k, nil
}

// KeyFunc returns the key under which a [Store] keeps obj:
// "namespace/name" for a namespaced object and "name" for a cluster-scoped
// one (an object whose namespace is empty). It is the key format of
// client-go's MetaNamespaceKeyFunc, so keys can be shared with code and
// work queues written for it.
//
// KeyFunc fails with an error wrapping [ErrNilObject] when obj is nil (or
// a nil pointer), and with one wrapping [ErrInvalidKey] when the name is
// empty or the name or namespace contains a '/' (which Kubernetes never
// allows, and which would make the key ambiguous).
func KeyFunc(obj metav1.Object) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if err := validateKey(ns, name); err != nil {
		return "", err
	}
	return JoinKey(ns, name), nil
}

// isNilObject reports whether obj is nil. Without reflection for pointer
// type arguments; an interface type argument may hold a nil pointer, which
// needs a closer look.
func isNilObject[T Object](obj T) bool {
	var zero T
	return obj == zero || any(zero) == nil && isNil(obj)
}

// isNil reports whether obj is nil or holds a nil pointer.
func isNil(obj metav1.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// JoinKey returns the key of the object with the given namespace and name:
// "namespace/name", or just "name" when namespace is empty. It does not
// validate its arguments.
func JoinKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// SplitKey takes apart a key made by [KeyFunc] or [JoinKey]: "ns/name"
// gives ("ns", "name") and "name" gives ("", "name").
//
// Keys that KeyFunc never produces are rejected with an error wrapping
// [ErrInvalidKey]: the empty string, more than one '/', and an empty name
// or namespace around the '/' ("ns/", "/name"). client-go accepts some of
// these; rejecting them keeps keys and (namespace, name) pairs one-to-one.
func SplitKey(key string) (namespace, name string, err error) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		if key == "" {
			return "", "", fmt.Errorf("%w: empty key", ErrInvalidKey)
		}
		return "", key, nil
	}
	namespace, name = key[:i], key[i+1:]
	if namespace == "" || name == "" || strings.IndexByte(name, '/') >= 0 {
		return "", "", fmt.Errorf("%w: %q is not \"name\" or \"namespace/name\"", ErrInvalidKey, key)
	}
	return namespace, name, nil
}

// parseKey is SplitKey without the error value, for lookups: a malformed
// key names no object.
func parseKey(key string) (objectKey, bool) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return objectKey{name: key}, key != ""
	}
	k := objectKey{key[:i], key[i+1:]}
	return k, k.namespace != "" && k.name != "" && strings.IndexByte(k.name, '/') < 0
}
