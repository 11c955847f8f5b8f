package cache

// Reader reads a [Store]: the read-only half of it, which is all that
// listers and the users of an informer's cache get.
//
// Objects come out by pointer: everything a Reader returns is shared with
// the store and with every other reader. Treat returned objects as
// read-only; DeepCopy one before modifying it. See "Objects are shared" in
// the package documentation, and [MutationDetector] for catching mistakes
// in tests.
//
// Lists are in no particular order.
type Reader[T any] interface {
	// Get returns the object stored under obj's key. It fails only when
	// obj cannot be keyed.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey returns the object stored under key, a string made by
	// KeyFunc or JoinKey. A malformed key names no object.
	GetByKey(key string) (item T, exists bool)
	// List returns every stored object.
	List() []T
	// ListKeys returns the keys of every stored object.
	ListKeys() []string
	// Len returns the number of stored objects.
	Len() int
}

// Store is a thread-safe set of objects keyed by namespace and name (see
// [KeyFunc]). Informers keep one per resource type, filled by a reflector
// and read by listers and event handlers.
//
// Objects go in by pointer and are not copied: an object given to a write
// belongs to the store from then on.
type Store[T Object] interface {
	Reader[T]
	// Add stores obj under its key, replacing any object stored there; it
	// is the same as Update. It fails, storing nothing, when obj cannot be
	// keyed (see KeyFunc) or an index function fails (see IndexError).
	Add(obj T) error
	// Update stores obj under its key, as Add does.
	Update(obj T) error
	// Delete removes the object stored under obj's key, if any. Only the
	// key of obj matters. It fails only when obj cannot be keyed.
	Delete(obj T) error
	// Replace atomically swaps the whole contents of the store for items.
	// Readers see either all of the old contents or all of the new, never
	// a mix, and indexes always agree with the objects.
	//
	// When two items have the same key, the later one wins. If an item
	// cannot be keyed or an index function fails, Replace returns the
	// error and the store is left as it was.
	//
	// The store takes ownership of items: the caller must not modify the
	// slice afterwards. The returned ReplaceDiff tells which objects were
	// added, updated and deleted by the swap; it costs nothing unless
	// used.
	Replace(items []T) (*ReplaceDiff[T], error)
}

// IndexReader reads an [Indexer]: a [Reader] with index queries. It is the
// read-only view of an informer's cache (see [ReadOnly]).
//
// Three kinds of strings appear here: keys of objects ("ns/name"), names of
// indexes ("byNode"), and indexed values ("node-1").
//
// Index queries for a name the Indexer has no index for fail with an error
// wrapping [ErrNoSuchIndex].
type IndexReader[T any] interface {
	Reader[T]
	// Index returns the objects that share at least one indexed value of
	// the named index with obj (whose own values are computed with the
	// index function; obj need not be stored). Each object appears once.
	Index(indexName string, obj T) ([]T, error)
	// ByIndex returns the objects whose values in the named index include
	// indexedValue.
	ByIndex(indexName, indexedValue string) ([]T, error)
	// IndexKeys returns, sorted, the keys of the objects whose values in
	// the named index include indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns, sorted, every value the named index has
	// at least one object for; nil for an unknown index.
	ListIndexFuncValues(indexName string) []string
	// Indexers returns a copy of the index functions, including
	// NamespaceIndexFunc under NamespaceIndex.
	Indexers() Indexers[T]
}

// Indexer is a [Store] with named indexes: each index maps the values its
// [IndexFunc] computes for an object to the objects with that value, so
// that lookups by value cost time in proportion to the result, not to the
// store. The built-in [NamespaceIndex] is always present.
type Indexer[T Object] interface {
	Store[T]
	IndexReader[T]
	// AddIndexers adds indexes, computing them over the objects already
	// stored. It fails, adding none of them, if a name is taken or a
	// function is nil (an IndexFunc for NamespaceIndex is ignored), or if a
	// function fails on a stored object (see IndexError).
	AddIndexers(indexers Indexers[T]) error
}

// NewStore returns an empty [Store]. It is an [Indexer] with only the
// built-in [NamespaceIndex]; use [NewIndexer] to get the Indexer interface.
func NewStore[T Object]() Store[T] {
	return newThreadSafeStore[T](nil)
}

// NewIndexer returns an empty [Indexer] with the given indexes and the
// built-in [NamespaceIndex]. An entry for NamespaceIndex, and entries
// whose function is nil, are ignored. For example:
//
//	pods := cache.NewIndexer(cache.Indexers[*corev1.Pod]{
//		"byNode": func(p *corev1.Pod) ([]string, error) {
//			return []string{p.Spec.NodeName}, nil
//		},
//	})
func NewIndexer[T Object](indexers Indexers[T]) Indexer[T] {
	return newThreadSafeStore(indexers)
}

// ReadOnly returns a view of r with only the methods of [IndexReader]:
// unlike r itself, the view cannot be converted back to an [Indexer] by a
// type assertion, so it can be handed out without handing out the right to
// write. Listers made over the view ([NewLister]) are as fast as over r.
func ReadOnly[T Object](r IndexReader[T]) IndexReader[T] {
	if v, ok := r.(readOnly[T]); ok {
		return v
	}
	return readOnly[T]{r}
}

// readOnly hides every method of an IndexReader but its own. It passes
// the listers' fast paths through.
type readOnly[T Object] struct{ r IndexReader[T] }

func (v readOnly[T]) Get(obj T) (T, bool, error)            { return v.r.Get(obj) }
func (v readOnly[T]) GetByKey(key string) (T, bool)         { return v.r.GetByKey(key) }
func (v readOnly[T]) List() []T                             { return v.r.List() }
func (v readOnly[T]) ListKeys() []string                    { return v.r.ListKeys() }
func (v readOnly[T]) Len() int                              { return v.r.Len() }
func (v readOnly[T]) Index(name string, obj T) ([]T, error) { return v.r.Index(name, obj) }
func (v readOnly[T]) ByIndex(name, value string) ([]T, error) {
	return v.r.ByIndex(name, value)
}
func (v readOnly[T]) IndexKeys(name, value string) ([]string, error) {
	return v.r.IndexKeys(name, value)
}
func (v readOnly[T]) ListIndexFuncValues(name string) []string { return v.r.ListIndexFuncValues(name) }
func (v readOnly[T]) Indexers() Indexers[T]                    { return v.r.Indexers() }

func (v readOnly[T]) lookupName(namespace, name string) (T, bool) {
	return lookupName(v.r, namespace, name)
}

func (v readOnly[T]) filter(namespace string, allNamespaces bool, keep func(T) bool) []T {
	return filter(v.r, namespace, allNamespaces, keep)
}
