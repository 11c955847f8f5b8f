package informer

import (
	"sync"
	"sync/atomic"
)

// Registration is the handle of an event handler added to a
// [Informer] with AddEventHandler: it tells whether the handler has
// caught up with the informer's initial list, and it is what
// RemoveEventHandler takes.
type Registration struct {
	owner    any
	upstream func() bool // the informer's HasSynced

	// pending counts the initial-list OnAdd calls queued for the handler
	// and not yet returned.
	pending  atomic.Int64
	syncOnce sync.Once
	synced   chan struct{}
	done     chan struct{}
}

func newRegistration(owner any, upstream func() bool) *Registration {
	return &Registration{owner: owner, upstream: upstream, synced: make(chan struct{}), done: make(chan struct{})}
}

// HasSynced reports whether the handler has been handed every object of the
// informer's initial list: the informer has synced, and every OnAdd with
// isInitialList true queued for the handler has returned. (For a handler
// added after the informer synced, those are the OnAdd calls for the
// objects the cache held when it was added.) Once true it stays true.
//
// A controller waits for this, rather than for the informer's HasSynced,
// before it starts its workers, so that it knows about every existing
// object before acting on any.
func (r *Registration) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
		return false
	}
}

// Synced returns a channel closed when HasSynced becomes true.
func (r *Registration) Synced() <-chan struct{} { return r.synced }

// Done returns a channel closed once the handler will not be called again:
// after RemoveEventHandler, or once the informer has stopped, as soon as a
// call in progress has returned.
func (r *Registration) Done() <-chan struct{} { return r.done }

// checkSynced closes synced if the informer has synced and no initial-list
// notification is outstanding.
func (r *Registration) checkSynced() {
	if r.pending.Load() == 0 && r.upstream() {
		r.syncOnce.Do(func() { close(r.synced) })
	}
}

// notificationKind says which handler method a notification calls.
type notificationKind uint8

const (
	addNotification notificationKind = iota + 1
	updateNotification
	deleteNotification
	resyncNotification
)

// notification is one call to make on a handler.
type notification[T any] struct {
	kind notificationKind
	// initial is isInitialList of an add; unknown is finalStateUnknown of
	// a delete.
	initial, unknown bool
	old, new         *T
}

// maxKeptBuffer is the capacity above which a listener lets a drained
// buffer go rather than keep it for reuse, so that the burst of an initial
// list does not pin memory for the informer's lifetime.
const maxKeptBuffer = 4096

// listener delivers the notifications of one registration. The informer
// appends to queue, which grows without bound; one goroutine (run) takes
// the whole queue at a time and calls the handler for each notification in
// order. A slow handler therefore delays only itself.
type listener[T any] struct {
	reg     *Registration
	handler ResourceEventHandler[T]
	resync  ResyncHandler[T] // nil if the handler wants no resyncs

	mu      sync.Mutex
	queue   []notification[T]
	started bool // run was started (guarded by the informer's lock)

	wake     chan struct{} // capacity 1: "the queue may be non-empty"
	stop     chan struct{} // closed by remove
	stopOnce sync.Once

	spare []notification[T] // drained buffer for reuse; run's alone
}

func newListener[T any](reg *Registration, h ResourceEventHandler[T]) *listener[T] {
	return &listener[T]{
		reg:     reg,
		handler: h,
		resync:  resyncHandlerOf(h),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
}

// push queues notifications; it never blocks on the handler.
func (l *listener[T]) push(ns ...notification[T]) {
	for _, n := range ns {
		if n.kind == addNotification && n.initial {
			l.reg.pending.Add(1)
		}
	}
	l.mu.Lock()
	l.queue = append(l.queue, ns...)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// remove stops delivery: no handler call starts after it returns (one in
// progress finishes). Queued notifications are dropped.
func (l *listener[T]) remove() {
	l.stopOnce.Do(func() { close(l.stop) })
}

// run calls the handler for each queued notification until remove is
// called or done is closed. It closes reg.done when it returns.
func (l *listener[T]) run(done <-chan struct{}) {
	defer close(l.reg.done)
	for {
		select {
		case <-l.stop:
			return
		case <-done:
			return
		case <-l.wake:
		}
		l.mu.Lock()
		batch := l.queue
		l.queue = l.spare
		l.mu.Unlock()
		for i := range batch {
			select {
			case <-l.stop:
				return
			case <-done:
				return
			default:
			}
			l.dispatch(batch[i])
			batch[i] = notification[T]{} // let the objects go
		}
		if cap(batch) > maxKeptBuffer {
			batch = nil
		}
		l.spare = batch[:0]
	}
}

func (l *listener[T]) dispatch(n notification[T]) {
	switch n.kind {
	case addNotification:
		l.handler.OnAdd(n.new, n.initial)
		if n.initial && l.reg.pending.Add(-1) == 0 {
			l.reg.checkSynced()
		}
	case updateNotification:
		l.handler.OnUpdate(n.old, n.new)
	case deleteNotification:
		l.handler.OnDelete(n.old, n.unknown)
	case resyncNotification:
		if l.resync != nil {
			l.resync.OnResync(n.new)
		}
	}
}
