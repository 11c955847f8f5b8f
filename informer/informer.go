package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/reflector"
)

var (
	// ErrStarted is returned by Run on an informer that was already run,
	// and by the setters that only work before Run.
	ErrStarted = errors.New("informer: already started")
	// ErrStopped is returned by AddEventHandler once the informer has
	// stopped: its handler would never be called.
	ErrStopped = errors.New("informer: stopped")
	// ErrUnknownRegistration is returned by RemoveEventHandler for a
	// registration that is not (or no longer) one of the informer's.
	ErrUnknownRegistration = errors.New("informer: unknown registration")
)

// Config configures a [SharedInformer]. Every zero value is the documented
// default.
type Config[T any] struct {
	// Reflector tunes the list and watch: ListOptions (label and field
	// selectors), PageSize, UseStreamingList, Transform, backoff and
	// WatchErrorHandler; see reflector.Config for each default. Its Name
	// names the informer too (default the Go type of T, as "*v1.Pod").
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

// SharedInformer keeps an indexed cache of one resource in sync with the
// server and tells any number of event handlers about every change: one
// list-then-watch (a reflector) and one cache per resource, however many
// handlers and listers read it. T is the object's struct type (corev1.Pod,
// a custom resource struct, or unstructured.Unstructured), PT is *T.
//
// Make one with [New], or share one per type through a [Factory]; add
// handlers and indexes, then Run it. All methods are safe for concurrent
// use.
type SharedInformer[T any, PT client.ObjectPtr[T]] struct {
	lw      reflector.ListerWatcher[T]
	indexer cache.Indexer[PT]
	lister  cache.Lister[PT]
	name    string

	// mu orders everything that must be seen in one order by every
	// handler: writes to the indexer with the notifications they cause,
	// resyncs, and changes to the set of handlers.
	mu        sync.Mutex
	cfg       reflector.Config[T] // may change until Run
	resync    time.Duration
	state     runState
	listeners []*listener[T]
	done      <-chan struct{} // Run's ctx.Done()
	wg        sync.WaitGroup  // listener and resync goroutines

	synced  atomic.Bool
	syncedC chan struct{}
	refl    atomic.Pointer[reflector.Reflector[T]]
}

// New returns an informer for the collection that lw lists and watches, for
// example a typed client set to a namespace:
//
//	pods := informer.New[corev1.Pod](client.For[corev1.Pod](c).Namespace("web"), informer.Config[corev1.Pod]{})
//
// The namespace, label and field selection is lw's and cfg.Reflector's
// ListOptions'. So is decoding: a client.Resource made with
// WithDecodeOptions(codec.DecodeOptions{ShareFieldsV1: true}) decodes for a
// cache, as the Factory's informers do. The informer does nothing until Run.
func New[T any, PT client.ObjectPtr[T]](lw reflector.ListerWatcher[T], cfg Config[T]) *SharedInformer[T, PT] {
	if cfg.Reflector.Name == "" {
		cfg.Reflector.Name = fmt.Sprintf("%T", new(T))
	}
	idx := cache.NewIndexer[PT](nil)
	return &SharedInformer[T, PT]{
		lw:      lw,
		indexer: idx,
		lister:  cache.NewLister(idx, cfg.Resource),
		name:    cfg.Reflector.Name,
		cfg:     cfg.Reflector,
		resync:  cfg.ResyncPeriod,
		syncedC: make(chan struct{}),
	}
}

// Name is the informer's name in logs (Config.Reflector.Name).
func (s *SharedInformer[T, PT]) Name() string { return s.name }

// Run lists and watches, keeps the cache in sync and delivers notifications
// to the handlers until ctx is done; then it stops every goroutine it
// started (the reflector's, the handlers', the resync timer's), waits for
// them (a handler call in progress included), and returns ctx's error. An
// informer runs once: a second Run returns ErrStarted.
func (s *SharedInformer[T, PT]) Run(ctx context.Context) error {
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
	r := reflector.New[T, PT](s.lw, storeAdapter[T, PT]{s}, s.cfg)
	s.refl.Store(r)
	if s.resync > 0 {
		s.wg.Go(func() { s.resyncLoop(ctx) })
	}
	s.mu.Unlock()

	err := r.Run(ctx)

	s.mu.Lock()
	s.state = stateStopped
	s.listeners = nil // their goroutines end with ctx
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// startLocked starts l's goroutine; s.mu is held and s is running.
func (s *SharedInformer[T, PT]) startLocked(l *listener[T]) {
	l.started = true
	done := s.done
	s.wg.Go(func() { l.run(done) })
}

// HasSynced reports whether the cache holds the initial list. Handlers may
// not have been told about all of it yet: see Registration.HasSynced.
func (s *SharedInformer[T, PT]) HasSynced() bool { return s.synced.Load() }

// Synced returns a channel closed when HasSynced becomes true.
func (s *SharedInformer[T, PT]) Synced() <-chan struct{} { return s.syncedC }

// LastSyncResourceVersion is the resourceVersion the cache is in sync with:
// that of the last list, moved forward by watch events and bookmarks; ""
// before the first list. It is the reflector's, which follows the cache's
// writes by an instant; until the reflector has recorded its first list it
// is the cache's.
func (s *SharedInformer[T, PT]) LastSyncResourceVersion() string {
	if r := s.refl.Load(); r != nil {
		if rv := r.LastSyncResourceVersion(); rv != "" {
			return rv
		}
	}
	return s.indexer.LastSyncResourceVersion()
}

// Lister returns a lister over the cache: Get by namespace and name, List
// by label selector, per namespace, and by index. Objects it returns are
// shared: treat them as read-only.
func (s *SharedInformer[T, PT]) Lister() cache.Lister[PT] { return s.lister }

// Indexer returns the cache itself, for index queries the Lister does not
// offer. It is the informer's: read from it, never write to it (handlers
// would not hear of the change, and the next relist would undo it).
func (s *SharedInformer[T, PT]) Indexer() cache.Indexer[PT] { return s.indexer }

// AddIndexers adds indexes to the cache (the namespace index is built in).
// It may be called at any time: indexes added while the cache holds objects
// are computed over them. See cache.Indexer.AddIndexers for the errors.
func (s *SharedInformer[T, PT]) AddIndexers(indexers cache.Indexers[PT]) error {
	return s.indexer.AddIndexers(indexers)
}

// SetTransform sets the function applied to every object before it is
// cached and handed to handlers (see reflector.Config.Transform), replacing
// Config.Reflector.Transform. It fails with ErrStarted once Run was called.
func (s *SharedInformer[T, PT]) SetTransform(fn func(*T) (*T, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return ErrStarted
	}
	s.cfg.Transform = fn
	return nil
}

// SetWatchErrorHandler sets the function told about every list and watch
// error before the informer backs off and retries (see
// reflector.Config.WatchErrorHandler), replacing
// Config.Reflector.WatchErrorHandler. It fails with ErrStarted once Run was
// called.
func (s *SharedInformer[T, PT]) SetWatchErrorHandler(fn func(err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return ErrStarted
	}
	s.cfg.WatchErrorHandler = fn
	return nil
}

// AddEventHandler registers h, with a goroutine and an unbounded queue of
// its own, and returns its registration. If the cache already holds
// objects, h first gets OnAdd(obj, true) for each of them (in no particular
// order), then every change after them. It may be called before or while
// the informer runs; once the informer has stopped it fails with
// ErrStopped.
func (s *SharedInformer[T, PT]) AddEventHandler(h ResourceEventHandler[T]) (*Registration, error) {
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
	if s.synced.Load() {
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

// RemoveEventHandler unregisters a handler: no call to it starts after
// RemoveEventHandler returns (a call in progress finishes; wait on
// reg.Done() for it), and notifications queued for it are dropped. A
// handler may remove itself from within one of its calls.
func (s *SharedInformer[T, PT]) RemoveEventHandler(reg *Registration) error {
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
func (s *SharedInformer[T, PT]) distributeLocked(ns ...notification[T]) {
	for _, l := range s.listeners {
		l.push(ns...)
	}
}

// resyncLoop queues a resync for the handlers that want them every period.
func (s *SharedInformer[T, PT]) resyncLoop(ctx context.Context) {
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
func (s *SharedInformer[T, PT]) resyncNow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.synced.Load() {
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
type storeAdapter[T any, PT client.ObjectPtr[T]] struct{ s *SharedInformer[T, PT] }

// Replace swaps the cache's contents for a (re)list. The first list is
// announced as OnAdd(obj, true) for every object; a relist as the
// difference with what the cache held: OnDelete(last state, true) for
// vanished objects, OnAdd(obj, false) for new ones and OnUpdate for those
// whose resourceVersion changed.
func (a storeAdapter[T, PT]) Replace(items []*T, resourceVersion string) error {
	s := a.s
	objs := make([]PT, len(items))
	for i, obj := range items {
		objs[i] = PT(obj)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	diff, err := s.indexer.Replace(objs, resourceVersion)
	if err != nil {
		return err
	}
	initial := !s.synced.Load()
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
	if initial {
		s.synced.Store(true)
		close(s.syncedC)
		for _, l := range s.listeners {
			l.reg.checkSynced()
		}
	}
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
