// Package cache is the thread-safe, indexed, in-memory store that informers
// keep: one per resource type, filled from a list-then-watch by a
// reflector, read by listers and event handlers. It does no I/O.
//
// Its behaviour follows the Store, Indexer and listers of client-go's
// tools/cache; its API is generic over the object type, reports every
// failure as an error, and never panics on an index function's error.
//
// # Stores and keys
//
// A [Store] holds objects of one type T, typically a pointer to a kind
// such as *corev1.Pod, or *unstructured.Unstructured; T must satisfy
// [Object] (object metadata accessors, and comparable so that nil can be
// detected). Objects are keyed by "namespace/name", or "name" for a
// cluster-scoped object: [KeyFunc] computes the key of an object, [JoinKey]
// builds one from its parts and [SplitKey] takes one apart. Internally the
// store keys its maps by the namespace and name strings of the object, so a
// write allocates no key.
//
//	pods := cache.NewStore[*corev1.Pod]()
//	_ = pods.Add(pod)
//	p, ok := pods.GetByKey("default/web")
//
// Add and Update both store the object under its key; Delete removes
// whatever is under the key of its argument. Reads (Get, GetByKey, List,
// ListKeys, the index queries) take a read lock, writes a write lock, so
// reads run in parallel. Lists come in no particular order.
//
// # Objects are shared
//
// The cache never copies objects. Add stores the pointer it is given, and
// Get, List, ByIndex and the listers return the stored pointers themselves:
// the same object is handed to every reader and every event handler.
// Modifying one
//
//   - is a data race with every other reader;
//   - changes what later readers see, without a resourceVersion change;
//   - leaves the indexes describing the object as it was, so index queries
//     return objects that no longer match (or miss ones that do).
//
// Treat objects from a cache as read-only. To change one (for an Update
// request, say), DeepCopy it first and modify the copy:
//
//	pod, err := lister.Namespace("default").Get("web")
//	if err != nil { ... }
//	pod = pod.DeepCopy()
//	pod.Status.Message = "checked"
//
// Likewise, an object given to Add, Update or Replace belongs to the cache
// from then on; the caller must not modify it afterwards. Wrap an indexer in
// a [MutationDetector] in tests to catch violations.
//
// # Indexes
//
// An [Indexer] is a Store with named indexes. An [IndexFunc] computes the
// values of an object for one index, say the node of a pod; ByIndex then
// returns the objects with a given value, in time proportional to the
// result:
//
//	pods := cache.NewIndexer(cache.Indexers[*corev1.Pod]{
//		"byNode": func(p *corev1.Pod) ([]string, error) {
//			return []string{p.Spec.NodeName}, nil
//		},
//	})
//	onNode1, err := pods.ByIndex("byNode", "node-1")
//
// An index function may return several values (an object is then found
// under each) or none. Index, IndexKeys and ListIndexFuncValues query
// indexes in other ways, and AddIndexers adds indexes to an indexer that
// already holds objects, computing them over its contents.
//
// Every indexer has the built-in [NamespaceIndex], which is how objects
// are laid out in memory: listing a namespace walks only that namespace.
//
// An index function's error fails the write that called it (Add, Update,
// Replace, AddIndexers) with an *[IndexError], and the write is not
// applied, not even in part. The values an index function returned are
// kept with the object, so Delete never calls it and cannot fail on it.
//
// # Replace and deletes after a relist
//
// [Store.Replace] swaps the whole contents of the store for a new list, as
// the reflector does after each (re)list. The new contents, indexes
// included, are built without holding the lock, then swapped in at once:
// readers see the old contents or the new, never a mix, and are blocked
// only for the swap.
//
// Replace returns a [ReplaceDiff], from which an informer learns what to
// notify: objects added, objects updated (with their previous state), and
// objects that vanished (with their last known state). A vanished object
// was deleted while the watch was down, at an unknown time and in an
// unknown final state: the informer tells its delete handlers so with
// OnDelete(obj, finalStateUnknown=true), obj being that last known state.
// There are no tombstone wrappers: handlers always get a *T. The diff is
// computed on first use, outside the lock, so a Replace whose diff is
// ignored costs only the build and the swap.
//
// The store keeps no resourceVersion: which version of the collection it
// holds is the reflector's to know (Reflector.LastSyncResourceVersion, or
// the informer's method of the same name).
//
// # Read-only views
//
// The read methods of a Store form a [Reader], those of an Indexer an
// [IndexReader]. [ReadOnly] wraps an Indexer in a view that has only them,
// which an informer hands out so that nothing but its reflector writes to
// its cache.
//
// # Listers
//
// A [Lister] is the view controllers use: List by label
// selector, Get by namespace and name, Namespace(ns) for a
// [NamespaceLister] that lists through the namespace index, and ByIndex.
// A missing object is a *[NotFoundError], recognised by [IsNotFound] (and,
// since it carries a Kubernetes NotFound Status, by the client package's
// IsNotFound):
//
//	lister := cache.NewLister(pods, metav1.GroupResource{Resource: "pods"})
//	web, err := lister.Namespace("default").List(selector.MustParseLabels("app=web"))
//	_, err = lister.Get("default", "nope")
//	cache.IsNotFound(err) // true: pods "nope" not found
//
// # Detecting mutations
//
// [NewMutationDetector] wraps an Indexer for tests. It keeps a deep copy
// of each object written through it and compares: when a key is written
// again or deleted (a mutation found then is reported to the OnMutation
// function of its [MutationDetectorConfig], which panics by default), and
// for all objects at
// [MutationDetector.Check]. It runs no goroutine.
//
// # Differences from client-go
//
//   - Generic: no interface{} values or type assertions at call sites.
//   - An index function's error is returned from the write, which is not
//     applied; client-go panics, possibly leaving the store half updated.
//   - Index values are stored with the object, so Delete never calls an
//     index function, and a (forbidden) in-place modification of a cached
//     object cannot leave stale index entries behind.
//   - Replace builds outside the lock and reports its diff, computed from
//     the very contents it swapped out; client-go's informer compares the
//     list with the store in a separate step before replacing it.
//   - The namespace index is built in and free, keys are never allocated on
//     writes, and objects with an empty name or a '/' in their name or
//     namespace are rejected, so that keys always split back.
//   - IndexKeys and ListIndexFuncValues return sorted results.
//   - GetByKey returns no error: a malformed key names no object.
//   - There is no Resync (it does nothing in client-go's stores), no
//     transform function, no metrics and no Transaction batch API.
//   - There are no DeletedFinalStateUnknown tombstones and no
//     LastSyncResourceVersion or Bookmark: the informer passes a
//     finalStateUnknown flag to typed delete handlers, and the reflector
//     alone tracks the resourceVersion.
package cache
