package cache

import (
	"errors"
	"fmt"
)

// NamespaceIndex is the name of the index every [Indexer] has built in: it
// maps a namespace to the objects in it ("" to cluster-scoped objects).
// [Lister] uses it to list one namespace without scanning the others.
//
// The index is part of the store's layout, so it costs neither an index
// function call nor extra memory per object. An [Indexers] entry with this
// name is ignored by [NewIndexer] and [Indexer.AddIndexers], so code
// written for client-go, where the namespace index had to be added
// explicitly, works unchanged.
const NamespaceIndex = "namespace"

// IndexFunc computes the indexed values of an object for one index: the
// values under which [Indexer.ByIndex] will find it. It may return no value
// (the object is not in the index), one, or several (a multi-value index,
// such as one over the volumes or the finalizers of an object); duplicates
// are harmless.
//
// An IndexFunc must be deterministic and must not modify obj. The store
// keeps the returned slice for as long as it keeps obj (so that removing
// the object never needs to call the function again, and cannot fail), so
// the function must not modify the slice after returning it; returning a
// slice of obj itself, such as its finalizers, is fine, since cached objects
// are never modified.
//
// An error fails the write that called the function, with nothing applied:
// see [IndexError].
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers maps index names to the functions that compute them.
type Indexers[T any] map[string]IndexFunc[T]

// NamespaceIndexFunc indexes an object by its namespace. It is the function
// behind the built-in [NamespaceIndex], for use where an IndexFunc value is
// needed, such as to compare with [Indexer.Indexers].
func NamespaceIndexFunc[T Object](obj T) ([]string, error) {
	return []string{obj.GetNamespace()}, nil
}

// ErrNoSuchIndex is returned (wrapped) by index queries for an index name
// the [Indexer] does not have.
var ErrNoSuchIndex = errors.New("cache: no such index")

// noSuchIndex returns the error for a query of the unknown index name.
func noSuchIndex(name string) error {
	return fmt.Errorf("%w: %q", ErrNoSuchIndex, name)
}

// IndexError reports that an [IndexFunc] failed. The write that called it
// (Add, Update, Replace or AddIndexers) returns the IndexError and leaves
// the store as it was: an index function's error never panics and never
// leaves an object half indexed.
type IndexError struct {
	// Index is the name of the index whose function failed.
	Index string
	// Key is the key of the object the function was given.
	Key string
	// Err is the function's error; Unwrap returns it.
	Err error
}

// Error returns a message naming the index and the object.
func (e *IndexError) Error() string {
	return fmt.Sprintf("cache: index %q of object %q: %v", e.Index, e.Key, e.Err)
}

// Unwrap returns the index function's error.
func (e *IndexError) Unwrap() error { return e.Err }

// indexSpec is one user-defined index: its name and function. The
// built-in NamespaceIndex has none.
type indexSpec[T any] struct {
	name string
	fn   IndexFunc[T]
}

// indexValues calls the functions of specs on obj, whose key is k, and
// returns their results in the order of specs. The results of all objects
// of one batch share the backing array buf, when it is large enough, so
// that a Replace allocates one slice for all of them.
func indexValues[T Object](specs []indexSpec[T], obj T, k objectKey, buf [][]string) ([][]string, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	var vals [][]string
	if len(buf) >= len(specs) {
		vals = buf[:len(specs):len(specs)]
	} else {
		vals = make([][]string, len(specs))
	}
	for i, spec := range specs {
		v, err := spec.fn(obj)
		if err != nil {
			return nil, &IndexError{Index: spec.name, Key: k.String(), Err: err}
		}
		vals[i] = v
	}
	return vals, nil
}
