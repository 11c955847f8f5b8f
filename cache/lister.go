package cache

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/selector"
)

// Lister reads objects of one resource type from an [IndexReader], the way
// controllers read an informer's cache: by label selector, by namespace
// and name, or by index. It works for namespaced and cluster-scoped
// resources alike (cluster-scoped objects have the namespace "").
//
// Like the Indexer, a Lister returns objects shared with the cache; treat
// them as read-only. Lists are in no particular order. A Lister is safe for
// concurrent use.
type Lister[T any] interface {
	// List returns the objects, in all namespaces, whose labels match sel.
	// The zero LabelSelector (selector.Everything()) matches every object.
	List(sel selector.LabelSelector) ([]T, error)
	// Get returns the object with the given namespace ("" for a
	// cluster-scoped object) and name, or a *NotFoundError.
	Get(namespace, name string) (T, error)
	// Namespace returns a lister limited to one namespace.
	Namespace(namespace string) NamespaceLister[T]
	// ByIndex returns the objects whose values in the named index include
	// indexedValue, as Indexer.ByIndex does.
	ByIndex(indexName, indexedValue string) ([]T, error)
}

// NamespaceLister reads the objects of one namespace from an
// [IndexReader]. Its List walks the namespace through the built-in
// [NamespaceIndex], so its cost does not grow with the number of objects
// in other namespaces.
type NamespaceLister[T any] interface {
	// List returns the objects of the namespace whose labels match sel.
	List(sel selector.LabelSelector) ([]T, error)
	// Get returns the object of the namespace with the given name, or a
	// *NotFoundError.
	Get(name string) (T, error)
}

// NewLister returns a [Lister] over indexer, which it only reads (an
// [Indexer] or its [ReadOnly] view). The resource names the type in
// NotFound errors, as the API server does ("pods", or "deployments" in
// group "apps"); it may be left zero.
func NewLister[T Object](indexer IndexReader[T], resource metav1.GroupResource) Lister[T] {
	return &lister[T]{indexer: indexer, resource: resource}
}

// fastReader is implemented by this package's indexers and views, to let
// listers look objects up without building key strings and filter them
// without building intermediate lists.
type fastReader[T Object] interface {
	lookupName(namespace, name string) (T, bool)
	filter(namespace string, allNamespaces bool, keep func(T) bool) []T
}

type lister[T Object] struct {
	indexer  IndexReader[T]
	resource metav1.GroupResource
}

func (l *lister[T]) List(sel selector.LabelSelector) ([]T, error) {
	return list(l.indexer, "", true, sel)
}

func (l *lister[T]) Get(namespace, name string) (T, error) {
	return get(l.indexer, l.resource, namespace, name)
}

func (l *lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return &namespaceLister[T]{lister: l, namespace: namespace}
}

func (l *lister[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	return l.indexer.ByIndex(indexName, indexedValue)
}

type namespaceLister[T Object] struct {
	*lister[T]
	namespace string
}

func (l *namespaceLister[T]) List(sel selector.LabelSelector) ([]T, error) {
	return list(l.indexer, l.namespace, false, sel)
}

func (l *namespaceLister[T]) Get(name string) (T, error) {
	return get(l.indexer, l.resource, l.namespace, name)
}

// list returns the objects of indexer (in namespace, unless
// allNamespaces) whose labels match sel.
func list[T Object](indexer IndexReader[T], namespace string, allNamespaces bool, sel selector.LabelSelector) ([]T, error) {
	if sel.Empty() {
		if allNamespaces {
			return indexer.List(), nil
		}
		return byNamespace(indexer, namespace)
	}
	return filter(indexer, namespace, allNamespaces, func(obj T) bool {
		return sel.Matches(selector.Set(obj.GetLabels()))
	}), nil
}

// filter returns the objects of r (in namespace, unless allNamespaces) for
// which keep returns true: without an intermediate list when r is one of
// this package's, by listing and filtering otherwise.
func filter[T Object](r IndexReader[T], namespace string, allNamespaces bool, keep func(T) bool) []T {
	if f, ok := r.(fastReader[T]); ok {
		return f.filter(namespace, allNamespaces, keep)
	}
	var objs []T
	if allNamespaces {
		objs = r.List()
	} else {
		objs, _ = byNamespace(r, namespace)
	}
	return slices.DeleteFunc(objs, func(o T) bool { return !keep(o) })
}

// byNamespace returns the objects of indexer in namespace, through the
// namespace index when the indexer has one (this package's always do), or
// by scanning everything.
func byNamespace[T Object](indexer IndexReader[T], namespace string) ([]T, error) {
	objs, err := indexer.ByIndex(NamespaceIndex, namespace)
	if err == nil {
		return objs, nil
	}
	if !errors.Is(err, ErrNoSuchIndex) {
		return nil, err
	}
	var out []T
	for _, obj := range indexer.List() {
		if obj.GetNamespace() == namespace {
			out = append(out, obj)
		}
	}
	return out, nil
}

// lookupName returns the object of r with the given namespace and name:
// without building a key when r is one of this package's.
func lookupName[T Object](r IndexReader[T], namespace, name string) (T, bool) {
	if f, ok := r.(fastReader[T]); ok {
		return f.lookupName(namespace, name)
	}
	if validateKey(namespace, name) != nil {
		var zero T
		return zero, false
	}
	return r.GetByKey(JoinKey(namespace, name))
}

func get[T Object](indexer IndexReader[T], resource metav1.GroupResource, namespace, name string) (T, error) {
	obj, ok := lookupName(indexer, namespace, name)
	if !ok {
		return obj, &NotFoundError{Resource: resource, Namespace: namespace, Name: name}
	}
	return obj, nil
}

// NotFoundError is the error of a [Lister] or [NamespaceLister] Get for an
// object the cache does not hold. Test for it with [IsNotFound].
//
// It carries a Kubernetes NotFound Status (see Status), so the client
// package's IsNotFound, which accepts any error with a Status method,
// recognises it too: code that handles "not found" from the API server
// and from the cache can use either predicate.
type NotFoundError struct {
	// Resource is the resource the lister was made for; it may be zero.
	Resource metav1.GroupResource
	// Namespace is the namespace looked in, "" for a cluster-scoped
	// object.
	Namespace string
	// Name is the name looked for.
	Name string
}

// Error words the error as the API server does, such as
//
//	pods "web" not found
//
// with "object" in place of the resource when the lister has none.
func (e *NotFoundError) Error() string {
	return e.resourceString() + " " + strconv.Quote(e.Name) + " not found"
}

func (e *NotFoundError) resourceString() string {
	if s := e.Resource.String(); s != "" {
		return s
	}
	return "object"
}

// Status returns the 404 NotFound Status the API server would send for the
// same object.
func (e *NotFoundError) Status() metav1.Status {
	st := metav1.NewNotFound(e.Resource, e.Name)
	st.Message = e.Error()
	return *st
}

// IsNotFound reports whether err, or an error it wraps, says an object was
// not found: a *[NotFoundError], or any error with a Kubernetes Status (such
// as the client package's StatusError) whose reason is NotFound, or whose
// code is 404 with no reason.
func IsNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return true
	}
	var se interface{ Status() metav1.Status }
	if errors.As(err, &se) {
		st := se.Status()
		return st.Reason == metav1.StatusReasonNotFound || st.Reason == "" && st.Code == http.StatusNotFound
	}
	return false
}
