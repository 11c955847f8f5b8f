// Package informer provides shared informers: for each resource, one
// list-then-watch (a reflector) keeping one indexed cache in sync with the
// server, and any number of event handlers told about every change. A
// [Factory] hands out one informer per type, so that every part of a
// program shares them.
//
// Its behaviour follows client-go's SharedIndexInformer and
// SharedInformerFactory; its API is generic over the object type.
//
// # Informers
//
// An [Informer] is made by [New] from a reflector.ListerWatcher (a typed
// client set to a namespace, say) and a [Config], or by a Factory ([For],
// [Factory.ForResource]). Users name it with one type parameter,
// informer.Informer[corev1.Pod]; the pointer type is inferred. Everything
// about an informer is configured when it is made (Config, or the
// factory's FactoryConfig): there are no setters. Before or while it runs,
// add handlers (AddEventHandler) and indexes (AddIndexers); Run it until
// its context is done. HasSynced (or the Synced channel) tells when the
// cache holds the initial list; Lister and Indexer (a read-only view) read
// the cache; LastSyncResourceVersion says how current it is.
//
//	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web"})
//	pods := informer.For[corev1.Pod](f)
//	reg, err := pods.AddEventHandler(informer.HandlerFuncs[corev1.Pod]{
//		AddFunc:    func(p *corev1.Pod, _ bool) { queue.Add(key(p)) },
//		UpdateFunc: func(_, p *corev1.Pod) { queue.Add(key(p)) },
//		DeleteFunc: func(p *corev1.Pod, _ bool) { queue.Add(key(p)) },
//	})
//	f.Start(ctx)
//	err = informer.WaitForSync(ctx, reg)
//	pod, err := pods.Lister().Namespace("web").Get("frontend-0")
//
// Each piece of state has one owner: the reflector keeps the
// resourceVersion and says when the first list is in (so HasSynced and
// LastSyncResourceVersion agree: after Synced the resourceVersion is set);
// the informer alone writes the cache, and hands out only read-only views
// of it (Lister, Indexer).
//
// # Handlers
//
// A [ResourceEventHandler] has three methods:
//
//   - OnAdd(obj, isInitialList): an object appeared. isInitialList is true
//     for the objects of the informer's first list, and for the objects a
//     handler added later finds in the cache; false for objects created
//     afterwards, and for objects a relist found.
//   - OnUpdate(old, new): an object changed; new has a different
//     resourceVersion from old, which is the state the handler last heard
//     of. A write that does not change the resourceVersion (a watch event or
//     a relist repeating the cached state) is not delivered.
//   - OnDelete(obj, finalStateUnknown): an object is gone. For a deletion
//     the watch reported, obj is the final state the server sent. For one
//     inferred by a relist (the object is missing from the new list: it was
//     deleted while the watch was down), obj is the last state the cache
//     knew, possibly stale, and finalStateUnknown is true. A watched
//     deletion of an object the cache does not hold (its delete was already
//     inferred by a relist, or its add was lost to a transform or index
//     error) is not delivered: handlers never saw the object.
//
// Notifications are about one object, identified by its uid: an object
// deleted and created again under the same name while the informer was not
// watching (a relist, or a watch that resumed past the delete) is
// announced as OnDelete(old, true) then OnAdd(new, false), never as an
// update from one to the other. So for each uid a handler sees one add,
// then updates, then at most one delete.
//
// The delete method is typed: it replaces client-go's OnDelete(obj any),
// which received either the object or a DeletedFinalStateUnknown tombstone
// wrapping it. Handlers never get a tombstone: the tombstone's information
// is the flag, and the object is always a *T, keyed as usual
// (cache.KeyFunc). (The cache package has no tombstone type either.)
//
// [HandlerFuncs] builds a handler from functions. [FilteringHandler] passes
// on only objects a filter accepts, turning an update that makes an object
// match into an add and one that makes it stop matching into a delete.
//
// # Delivery
//
// Every registered handler has a queue and a goroutine of its own. The
// informer applies each write from the reflector to the cache and queues
// the notifications it implies for every handler, under one lock, so that:
//
//   - every handler gets every notification, in the order the cache took
//     the changes, one call at a time; nothing is merged or dropped (a
//     burst of ten updates is ten OnUpdate calls, each one's old object
//     being the previous one's new object);
//   - queues are unbounded: a slow handler holds up neither the other
//     handlers nor the reflector nor the cache, it only falls behind (and
//     its queue grows);
//   - a handler that reads the cache (a lister) may see a state newer than
//     the notification it is handling.
//
// A handler added while the informer runs first gets OnAdd(obj, true) for
// each object in the cache (in no particular order), then every change
// after that point. Its [Registration] reports HasSynced once the informer
// has synced and the handler has returned from every initial-list OnAdd;
// controllers wait on their registrations (see [WaitForSync]) before they
// start their workers. RemoveEventHandler stops delivery: no call starts
// after it returns, queued notifications are dropped, and
// Registration.Done is closed once a call in progress has returned.
//
// A panic in a handler is not recovered: it crashes the program, as any
// panic in a goroutine does.
//
// # Relists
//
// When the watch cannot resume (its resourceVersion expired, 410 Gone),
// the reflector lists again and the cache's contents are replaced at once.
// Handlers then get the difference between the old and the new contents:
// first OnDelete(obj, true) for every object that vanished, in key order,
// then, in the order of the list, OnAdd(obj, false) for new objects and
// OnUpdate(old, new) for objects whose resourceVersion changed (or, for an
// object re-created under the same name, OnDelete(old, true) then
// OnAdd(new, false)). Objects with an unchanged resourceVersion give no
// notification.
//
// # Resync
//
// With a resync period (Config.ResyncPeriod, FactoryConfig.ResyncPeriod)
// every handler
// that implements [ResyncHandler] gets OnResync(obj) for every cached
// object once per period, queued in line with its other notifications. A
// resync is never delivered as an update, and handlers that do not
// implement OnResync (or HandlerFuncs without a ResyncFunc) are not
// involved at all. Resyncs are for handlers that compare objects with the
// world outside the API; a controller that only reacts to API changes does
// not need them.
//
// # Factory
//
// [NewFactory] takes one [FactoryConfig], a struct whose zero values are
// documented defaults (as kube-rs's watcher::Config): the namespace
// (default all), label and field selectors, resync period,
// DropManagedFields, streaming lists, page size, logger and watch error
// handler of all its informers, and per-type overrides, as
// controller-runtime's cache.Options.ByObject: ByObject takes an [Object]
// per Go type (namespace, selectors, and a Transform typed func(*T) (*T,
// error)), ByResource one per resource for dynamic informers, ByMetadata
// one per resource for metadata-only informers.
//
//	f := informer.NewFactory(c, informer.FactoryConfig{
//		Namespace:         "web",
//		DropManagedFields: true,
//		ByObject: []informer.ObjectConfig{
//			informer.Object[corev1.ConfigMap]{LabelSelector: "app=web"},
//		},
//	})
//
// [For] returns the informer for a Go type, [Factory.ForResource] the
// dynamic informer for a resource, and [ForMetadata] and
// [Factory.ForMetadataResource] the metadata-only informer of a resource:
// one per type (or resource) and factory,
// so that the same type always gives the same informer. To cache one type
// in two scopes, use two factories. Start runs every informer asked for so
// far that is not running yet; WaitForCacheSync waits for them to sync;
// Shutdown waits for them to stop once the contexts given to Start are
// done. The factory's informers decode for a cache
// (client.Resource.WithDecodeOptions): objects share the bytes of equal
// managedFields, which are not decoded at all with DropManagedFields.
//
// # Dynamic informers
//
// Factory.ForResource caches objects of any resource as
// unstructured.Unstructured (an Informer[unstructured.Unstructured]),
// listing and watching with the dynamic client through
// [NewDynamicListerWatcher]. The factory's namespace applies to
// namespaced resources; for a cluster-scoped one (found through the
// client's RESTMapper) it is ignored.
//
// # Metadata-only informers
//
// A controller that reads only names, labels, annotations, owner
// references or finalizers caches metadata alone: [ForMetadata] (the
// resource of a Go type, as informer.ForMetadata[corev1.Pod](f)) and
// [Factory.ForMetadataResource] (any resource, by GroupVersionResource)
// return an Informer[metav1.PartialObjectMetadata] that lists and watches
// with the metadata client (client.Metadata), in protobuf or JSON as the
// client prefers. One metadata informer per resource and factory: both
// give the same one. It takes the factory's namespace (ignored for
// cluster-scoped resources), selectors, resync period and
// DropManagedFields — which matters most here, managedFields being most of
// what remains of an object's metadata — and its overrides from
// FactoryConfig.ByMetadata, by resource, with a transform typed on
// PartialObjectMetadata; ByObject and ByResource apply to the full caches
// only. Cached objects carry the kind and apiVersion of the resource's
// objects (Kind "Pod", APIVersion "v1"), not PartialObjectMetadata's. A
// cached pod's metadata takes about a tenth of the memory of the pod, a
// twentieth with DropManagedFields (BenchmarkCacheHeap).
//
// # Cached clients
//
// [Cached] returns a client.Resource[T] that reads from the factory's
// informer for T and writes to the server: controller-runtime's default
// client, one type at a time. A reconciler written against
// client.Resource[T] takes it or client.For[T] unchanged.
// [Factory.CachedResource] is the same for unstructured objects,
// [CachedMetadata] and [Factory.CachedMetadataResource] for metadata-only
// caches (a client.MetadataResource reading the cache configured by
// FactoryConfig.ByMetadata); manager.Client gives one on a manager's
// factory. One [ClientConfig] configures it.
//
//	cms := informer.Cached[corev1.ConfigMap](f, informer.ClientConfig{})
//	cm, err := cms.Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
//
// Get, List and ListEach are served from the cache, after waiting (bounded
// by ctx) for the informer to sync; an informer asked for after the
// factory's Start is started by the first read, under the context of that
// Start (a read before any Start fails with [ErrFactoryNotStarted]). They
// answer as the server would, or fail:
//
//   - Get of a missing object fails with the server's NotFound: a
//     *client.StatusError with reason NotFound and the message
//     `configmaps "x" not found`, for client.IsNotFound.
//   - A read the cache cannot answer fails with an [OutOfScopeError]
//     (errors.Is [ErrOutOfScope]) instead of returning nothing, as
//     controller-runtime's cache does: a namespace other than the one the
//     informer caches (or all namespaces), a list whose selectors do not
//     include every requirement of the informer's label and field
//     selectors, and a Get of an object the informer's selectors exclude.
//     When the informer has selectors, a Get the cache misses asks the
//     server (one GET), which tells a missing object (NotFound) from an
//     excluded one (OutOfScopeError, when its labels, name or namespace
//     show it) from one the cache has not seen yet (returned).
//   - List selects by labels, and by fields: metadata.name and
//     metadata.namespace always, other fields through an index the user
//     added with [AddFieldIndex] (a field without one fails with
//     [ErrFieldNotIndexed] rather than being ignored), with "=" and "!=".
//     Items are sorted by namespace and name, as the server lists them.
//     The list's resourceVersion is the one the cache had synced to before
//     the items were read, so that a watch from it may repeat a change but
//     never miss one. There is one page: Limit is ignored (as a list from
//     the server's watch cache may) and a Continue token is refused.
//   - Objects are deep copies the caller owns, with the kind and
//     apiVersion the direct client gives them.
//     ClientConfig.UnsafeDisableDeepCopy returns the cache's own objects
//     instead, which makes a Get of a small ConfigMap about 7 times faster
//     and a List of 100 about 3 times (BenchmarkCachedClient): they must
//     then never be modified.
//
// Watch goes to the server, with its resourceVersion semantics (a watch
// from a list's resourceVersion, bookmarks, 410 Gone): a cache keeps no
// history to replay, and a controller that wants the cache's changes adds
// an event handler to the informer instead. Every write (Create, Update,
// UpdateStatus, Patch, Apply, ApplyStatus, ApplyConfig, ApplyConfigStatus,
// Delete, DeleteCollection) and the subresources go to the server
// unchanged.
//
// # Reading your own writes
//
// A cache lags the server: with controller-runtime's cached client, a Get
// right after an Update often returns the object as it was, and the next
// Update fails with a Conflict. A cached client instead remembers the
// resourceVersion each of its writes returned, and a Get of that object
// waits until the cache holds that version or a later one (or has seen the
// object deleted), for at most ClientConfig.ReadYourWritesTimeout (10s by
// default, timed on ClientConfig.Clock), then fails with [ErrCacheBehind]
// rather than return the older object. ResourceVersions are compared as
// integers, and only when both parse as integers (as client-go's
// resourceversion.CompareResourceVersion); a write with any other
// resourceVersion, a dry run, a delete, a write by another client, and a
// write whose object the cache will never hold (another namespace, labels
// outside its selector) are not waited for. All cached clients of an
// informer share what they wait for, through one event handler. A
// negative ReadYourWritesTimeout turns it off.
//
// # Objects are shared
//
// The informer never copies objects: the cache, the lister and every
// handler get the same pointers. Treat them as read-only; DeepCopy an
// object before modifying it (to send an update, say). See "Objects are
// shared" in the cache package, and cache.MutationDetector for tests.
//
// # Errors
//
// An informer never stops on an error. A failed list or watch is reported
// to the watch error handler and retried with backoff by the reflector,
// which relists when it must. An object the client cannot decode (a
// custom resource whose stored form does not fit its Go type) in a watch
// event is reported (a *client.DecodeError naming it) and skipped: the watch
// moves past it. In a list it is skipped and reported (a *codec.ItemErrors):
// the rest of the list is cached and the informer syncs. A transform error
// fails a list (it is retried) and skips a watch event (it is logged).
//
// # Goroutines
//
// Run owns every goroutine of an informer (the reflector's loop and its
// watch, one per handler, the resync timer) and returns only when all have
// ended. A Factory's Start runs each informer in a goroutine that Shutdown
// waits for.
//
// # Differences from client-go
//
//   - Generic: handlers, listers and indexers take and return *T; no
//     interface{} and no type assertions.
//   - OnDelete receives the object and a finalStateUnknown flag instead of
//     an object or a DeletedFinalStateUnknown tombstone.
//   - Resyncs go to an OnResync method, never to OnUpdate; handlers that do
//     not want them cost nothing. There is one resync period per informer,
//     not one per handler.
//   - A relist is diffed against the cache by the cache itself
//     (cache.ReplaceDiff); unchanged objects give no notification, where
//     client-go delivers them as updates to resyncing handlers.
//   - A re-created object (same name, new uid) is a delete and an add,
//     where client-go delivers an update between two different objects;
//     a watched delete of an object not in the cache is dropped, where
//     client-go delivers it.
//   - There is no DeltaFIFO between the reflector and the cache: the
//     reflector writes to the informer, which updates the cache and queues
//     notifications under one lock. Per-handler queues are as in client-go
//     (unbounded, one goroutine each).
//   - Registrations have Synced and Done channels; WaitForSync and
//     WaitForCacheSync wait on channels rather than polling.
//   - Indexes can be added after the informer has started.
//   - Configuration is one struct given at construction (Config,
//     FactoryConfig with typed per-type overrides), not options, setters
//     that fail once started, or a type-erased transform.
//   - Indexer returns a read-only view of the cache, not the writable
//     store.
//   - WaitForCacheSync returns an error naming the informers that did not
//     sync, rather than a map.
package informer
