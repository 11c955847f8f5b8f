package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/reflector"
)

var (
	// ErrStarted is returned by Run on an informer that was already run.
	ErrStarted = errors.New("informer: already started")
	// ErrStopped is returned by AddEventHandler once the informer has
	// stopped: its handler would never be called.
	ErrStopped = errors.New("informer: stopped")
	// ErrUnknownRegistration is returned by RemoveEventHandler for a
	// registration that is not (or no longer) one of the informer's.
	ErrUnknownRegistration = errors.New("informer: unknown registration")
)

// Informer keeps an indexed cache of one resource in sync with the server
// and tells any number of event handlers about every change: one
// list-then-watch (a reflector) and one cache per resource, however many
// handlers and listers read it. T is the object's struct type (corev1.Pod,
// a custom resource struct, or unstructured.Unstructured for a dynamic
// informer).
//
// Make one with [New], or share one per type through a [Factory] ([For],
// [Factory.ForResource]); add handlers and indexes, then Run it. All
// methods are safe for concurrent use.
type Informer[T any] interface {
	// Name is the informer's name in logs and errors (Config.Reflector.Name;
	// the factory names informers after their type and scope).
	Name() string
	// Run lists and watches, keeps the cache in sync and delivers
	// notifications to the handlers until ctx is done; then it stops every
	// goroutine it started (the reflector's, the handlers', the resync
	// timer's), waits for them (a handler call in progress included), and
	// returns ctx's error. An informer runs once: a second Run returns
	// ErrStarted.
	Run(ctx context.Context) error
	// HasSynced reports whether the cache holds the initial list. Handlers
	// may not have been told about all of it yet: see
	// Registration.HasSynced.
	HasSynced() bool
	// Synced returns a channel closed when HasSynced becomes true.
	Synced() <-chan struct{}
	// LastSyncResourceVersion is the resourceVersion the cache is in sync
	// with: that of the last list, moved forward by watch events and
	// bookmarks; "" until HasSynced. It is the reflector's, the one owner
	// of it.
	LastSyncResourceVersion() string
	// Lister returns a lister over the cache: Get by namespace and name,
	// List by label selector, per namespace, and by index. Objects it
	// returns are shared: treat them as read-only.
	Lister() cache.Lister[*T]
	// Indexer returns a read-only view of the cache, for index queries the
	// Lister does not offer. Only the informer writes to its cache (so
	// that handlers hear of every change and a relist undoes nothing).
	Indexer() cache.IndexReader[*T]
	// AddIndexers adds indexes to the cache (the namespace index is built
	// in). It may be called at any time: indexes added while the cache
	// holds objects are computed over them. See cache.Indexer.AddIndexers
	// for the errors.
	AddIndexers(indexers cache.Indexers[*T]) error
	// AddEventHandler registers h, with a goroutine and an unbounded queue
	// of its own, and returns its registration. If the cache already holds
	// objects, h first gets OnAdd(obj, true) for each of them (in no
	// particular order), then every change after them. It may be called
	// before or while the informer runs; once the informer has stopped it
	// fails with ErrStopped.
	AddEventHandler(h ResourceEventHandler[T]) (*Registration, error)
	// RemoveEventHandler unregisters a handler: no call to it starts after
	// RemoveEventHandler returns (a call in progress finishes; wait on
	// reg.Done() for it), and notifications queued for it are dropped. A
	// handler may remove itself from within one of its calls.
	RemoveEventHandler(reg *Registration) error
}

// Config configures an informer made by [New]. Every zero value is the
// documented default. (A [Factory] makes the Config of its informers from
// its FactoryConfig.)
type Config[T any] struct {
	// Reflector tunes the list and watch: ListOptions (label and field
	// selectors), PageSize, UseStreamingList, Transform,
	// DropManagedFields, backoff, Logger and WatchErrorHandler; see
	// reflector.Config for each default. Its Name names the informer too
	// (default the Go type of T, as "*v1.Pod").
	Reflector reflector.Config[T]
	// Resource is the resource that the Lister's NotFound errors name
	// (default none; the factory sets it from the client's scheme).
	Resource metav1.GroupResource
	// ResyncPeriod, if positive, is how often every handler that
	// implements ResyncHandler gets OnResync for every cached object
	// (default 0: never). Resyncs cost nothing for other handlers.
	ResyncPeriod time.Duration
}

// runState is where an informer is in its life.
type runState uint8

const (
	stateNew runState = iota
	stateRunning
	stateStopped
)

// informer implements Informer. PT is *T.
//
// Who owns what: the reflector owns the resourceVersion and the "synced"
// state (it records both once the first list is in the cache); the
// informer owns the cache, which only its storeAdapter writes, and the
// handlers.
type informer[T any, PT client.ObjectPtr[T]] struct {
	refl    *reflector.Reflector[T]
	indexer cache.Indexer[PT]
	view    cache.IndexReader[*T]
	lister  cache.Lister[*T]
	name    string
	resync  time.Duration

	// mu orders everything that must be seen in one order by every
	// handler: writes to the indexer with the notifications they cause,
	// resyncs, and changes to the set of handlers.
	mu    sync.Mutex
	state runState
	// listed is whether the cache has received its first list: from then
	// on a new handler gets the cached objects as its initial list, and a
	// Replace is a relist.
	listed    bool
	listeners []*listener[T]
	done      <-chan struct{} // Run's ctx.Done()
	wg        sync.WaitGroup  // listener, resync and sync-watching goroutines
}

// New returns an informer for the collection that lw lists and watches,
// for example a typed client set to a namespace:
//
//	pods := informer.New(client.For[corev1.Pod](c).Namespace("web"), informer.Config[corev1.Pod]{})
//
// The namespace, label and field selection is lw's and
// cfg.Reflector.ListOptions'. So is decoding: a client.Resource made with
// WithDecodeOptions(codec.DecodeOptions{ShareFieldsV1: true}) decodes for a
// cache (objects share the bytes of equal managedFields), as the Factory's
// informers do. The informer does nothing until Run.
func New[T any, PT client.ObjectPtr[T]](lw reflector.ListerWatcher[T], cfg Config[T]) Informer[T] {
	if cfg.Reflector.Name == "" {
		cfg.Reflector.Name = fmt.Sprintf("%T", new(T))
	}
	idx := cache.NewIndexer[PT](nil)
	s := &informer[T, PT]{
		indexer: idx,
		view:    samePointer[cache.IndexReader[*T]](cache.ReadOnly[PT](idx)),
		lister:  samePointer[cache.Lister[*T]](cache.NewLister[PT](idx, cfg.Resource)),
		name:    cfg.Reflector.Name,
		resync:  cfg.ResyncPeriod,
	}
	s.refl = reflector.New[T, PT](lw, storeAdapter[T, PT]{s}, cfg.Reflector)
	return s
}

func (s *informer[T, PT]) Name() string { return s.name }

func (s *informer[T, PT]) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.state != stateNew {
		s.mu.Unlock()
		return ErrStarted
	}
	s.state = stateRunning
	s.done = ctx.Done()
	for _, l := range s.listeners {
		s.startLocked(l)
	}
	// The reflector marks the informer synced after the cache took the
	// first list: then registrations whose handlers are done with it sync.
	s.wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-s.refl.Synced():
			s.mu.Lock()
			for _, l := range s.listeners {
				l.reg.checkSynced()
			}
			s.mu.Unlock()
		}
	})
	if s.resync > 0 {
		s.wg.Go(func() { s.resyncLoop(ctx) })
	}
	s.mu.Unlock()

	err := s.refl.Run(ctx)

	s.mu.Lock()
	s.state = stateStopped
	s.listeners = nil // their goroutines end with ctx
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// startLocked starts l's goroutine; s.mu is held and s is running.
func (s *informer[T, PT]) startLocked(l *listener[T]) {
	l.started = true
	done := s.done
	s.wg.Go(func() { l.run(done) })
}

func (s *informer[T, PT]) HasSynced() bool { return s.refl.HasSynced() }

func (s *informer[T, PT]) Synced() <-chan struct{} { return s.refl.Synced() }

func (s *informer[T, PT]) LastSyncResourceVersion() string {
	return s.refl.LastSyncResourceVersion()
}

func (s *informer[T, PT]) Lister() cache.Lister[*T] { return s.lister }

func (s *informer[T, PT]) Indexer() cache.IndexReader[*T] { return s.view }

func (s *informer[T, PT]) AddIndexers(indexers cache.Indexers[*T]) error {
	return s.indexer.AddIndexers(samePointer[cache.Indexers[PT]](indexers))
}

// samePointer returns v, a value whose type is instantiated with PT, as the
// same generic type instantiated with *T. PT is *T itself (the constraint
// client.ObjectPtr[T] admits no other type), so both name one type at run
// time and the assertion cannot fail; Go's type checker only cannot prove
// it, since *T does not satisfy cache.Object for an arbitrary T.
func samePointer[To any](v any) To { return v.(To) }

func (s *informer[T, PT]) AddEventHandler(h ResourceEventHandler[T]) (*Registration, error) {
	if h == nil {
		return nil, errors.New("informer: nil handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateStopped {
		return nil, ErrStopped
	}
	reg := newRegistration(s, s.HasSynced)
	l := newListener(reg, h)
	s.listeners = append(s.listeners, l)
	if s.listed {
		items := s.indexer.List()
		ns := make([]notification[T], len(items))
		for i, obj := range items {
			ns[i] = notification[T]{kind: addNotification, initial: true, new: (*T)(obj)}
		}
		l.push(ns...)
	}
	if s.state == stateRunning {
		s.startLocked(l)
	}
	reg.checkSynced()
	return reg, nil
}

func (s *informer[T, PT]) RemoveEventHandler(reg *Registration) error {
	if reg == nil || reg.owner != s {
		return ErrUnknownRegistration
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.listeners {
		if l.reg == reg {
			s.listeners = append(s.listeners[:i], s.listeners[i+1:]...)
			l.remove()
			if !l.started {
				close(reg.done)
			}
			return nil
		}
	}
	if s.state == stateStopped {
		return nil // every handler was stopped with the informer
	}
	return ErrUnknownRegistration
}

// distributeLocked queues ns for every handler; s.mu is held.
func (s *informer[T, PT]) distributeLocked(ns ...notification[T]) {
	for _, l := range s.listeners {
		l.push(ns...)
	}
}

// resyncLoop queues a resync for the handlers that want them every period.
func (s *informer[T, PT]) resyncLoop(ctx context.Context) {
	t := time.NewTicker(s.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.resyncNow()
		}
	}
}

// resyncNow queues OnResync of every cached object for the handlers that
// want resyncs, in line with their other notifications.
func (s *informer[T, PT]) resyncNow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.listed {
		return
	}
	var ns []notification[T]
	for _, l := range s.listeners {
		if l.resync == nil {
			continue
		}
		if ns == nil {
			items := s.indexer.List()
			ns = make([]notification[T], len(items))
			for i, obj := range items {
				ns[i] = notification[T]{kind: resyncNotification, new: (*T)(obj)}
			}
		}
		l.push(ns...)
	}
}

// sameVersion reports whether newObj is the state the cache already holds:
// the same non-empty resourceVersion as oldObj.
func sameVersion(oldObj, newObj metav1.Object) bool {
	rv := newObj.GetResourceVersion()
	return rv != "" && rv == oldObj.GetResourceVersion()
}

// storeAdapter is the reflector.Store through which the reflector writes
// to the informer: each write is applied to the cache and turned into the
// notifications it implies, under the informer's lock, so that every
// handler sees the writes in the order the cache took them.
type storeAdapter[T any, PT client.ObjectPtr[T]] struct{ s *informer[T, PT] }

// Replace swaps the cache's contents for a (re)list. The first list is
// announced as OnAdd(obj, true) for every object; a relist as the
// difference with what the cache held: OnDelete(last state, true) for
// vanished objects, OnAdd(obj, false) for new ones and OnUpdate for those
// whose resourceVersion changed.
//
// The list's resourceVersion is the reflector's to keep, not the cache's.
func (a storeAdapter[T, PT]) Replace(items []*T, _ string) error {
	s := a.s
	objs := make([]PT, len(items))
	for i, obj := range items {
		objs[i] = PT(obj)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	diff, err := s.indexer.Replace(objs)
	if err != nil {
		return err
	}
	initial := !s.listed
	if len(s.listeners) > 0 {
		added, updated, deleted := diff.Counts()
		ns := make([]notification[T], 0, added+updated+deleted)
		for c := range diff.All() {
			switch c.Type {
			case cache.Added:
				ns = append(ns, notification[T]{kind: addNotification, initial: initial, new: (*T)(c.New)})
			case cache.Updated:
				switch {
				case recreated(c.Old, c.New):
					// Deleted and created again while the informer was not
					// watching: a delete of the old object, an add of the new.
					ns = append(ns,
						notification[T]{kind: deleteNotification, unknown: true, old: (*T)(c.Old)},
						notification[T]{kind: addNotification, new: (*T)(c.New)})
				case !sameVersion(c.Old, c.New):
					ns = append(ns, notification[T]{kind: updateNotification, old: (*T)(c.Old), new: (*T)(c.New)})
				}
			case cache.Deleted:
				ns = append(ns, notification[T]{kind: deleteNotification, unknown: true, old: (*T)(c.Old)})
			}
		}
		s.distributeLocked(ns...)
	}
	// The reflector records the list (and so the informer's sync) once this
	// returns; Run then checks the registrations.
	s.listed = true
	return nil
}

// Add stores a watched ADDED object. An object the cache already holds is
// an update (not delivered if its resourceVersion is unchanged).
func (a storeAdapter[T, PT]) Add(obj *T) error { return a.upsert(obj) }

// Update stores a watched MODIFIED object: OnUpdate(cached, obj), unless
// the cached object has the same resourceVersion; OnAdd(obj, false) if the
// cache did not hold it.
func (a storeAdapter[T, PT]) Update(obj *T) error { return a.upsert(obj) }

func (a storeAdapter[T, PT]) upsert(obj *T) error {
	s := a.s
	p := PT(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists, err := s.indexer.Get(p)
	if err != nil {
		return err
	}
	if err := s.indexer.Update(p); err != nil {
		return err
	}
	switch {
	case !exists:
		s.distributeLocked(notification[T]{kind: addNotification, new: obj})
	case recreated(old, p):
		// The delete of the cached object was missed (a watch gap).
		s.distributeLocked(
			notification[T]{kind: deleteNotification, unknown: true, old: (*T)(old)},
			notification[T]{kind: addNotification, new: obj})
	case !sameVersion(old, p):
		s.distributeLocked(notification[T]{kind: updateNotification, old: (*T)(old), new: obj})
	}
	return nil
}

// Delete removes a watched DELETED object: OnDelete(obj, false), obj being
// the final state the server sent.
func (a storeAdapter[T, PT]) Delete(obj *T) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	old, exists, err := s.indexer.Get(PT(obj))
	if err != nil {
		return err
	}
	if !exists || recreated(old, PT(obj)) {
		// Handlers never saw this object (its delete was already inferred by a
		// relist, or it is a different object of the same name): nothing to
		// announce, and a cached namesake stays.
		return nil
	}
	if err := s.indexer.Delete(PT(obj)); err != nil {
		return err
	}
	s.distributeLocked(notification[T]{kind: deleteNotification, old: obj})
	return nil
}

// recreated reports whether old and new are different objects under the same
// name (their uids differ).
func recreated[PT interface{ GetUID() metav1.UID }](old, new PT) bool {
	o, n := old.GetUID(), new.GetUID()
	return o != "" && n != "" && o != n
}
