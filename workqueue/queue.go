package workqueue

import (
	"sync"
	"time"
)

// Adder accepts items for processing. Code that only enqueues work, such as
// an informer event handler, needs nothing more.
type Adder[T comparable] interface {
	// Add marks item as needing processing. An item already pending is not
	// queued a second time. After ShutDown, Add does nothing.
	Add(item T)
}

// Consumer hands items to workers and takes them back.
type Consumer[T comparable] interface {
	// Get blocks until an item is available and returns it with
	// shutdown == false; the caller then owns the item until it calls
	// Done. Once the queue is shut down and empty, Get returns the zero
	// item and shutdown == true, and the worker should return.
	Get() (item T, shutdown bool)
	// Done marks the end of processing an item returned by Get. If the item
	// was added again meanwhile, it is queued again now. Calling Done for an
	// item that is not being processed does nothing.
	Done(item T)
}

// ShutDowner stops a queue.
type ShutDowner interface {
	// ShutDown makes the queue ignore new items and wakes every blocked Get.
	// Items already queued are still handed out; once none remain, Get
	// reports shutdown. ShutDown does not wait for workers, may be called
	// more than once, and returns only after every goroutine the queue owns
	// has stopped.
	ShutDown()
	// ShutDownWithDrain is ShutDown followed by waiting until no item is
	// being processed, that is, until every item handed out by Get has been
	// passed to Done. Workers that never call Done make it wait forever;
	// calling ShutDown from another goroutine ends the wait early.
	ShutDownWithDrain()
	// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been
	// called.
	ShuttingDown() bool
}

// Queue is a de-duplicating FIFO work queue with client-go's processing
// guarantees:
//
//   - an item is pending at most once: adding it again before a worker takes
//     it does nothing;
//   - an item is handed to at most one worker at a time: adding it while it
//     is being processed marks it pending, and it is queued again only when
//     the worker calls Done;
//   - otherwise items are handed out in the order they became pending.
//
// Items are compared with ==, so use keys (such as "namespace/name"), not
// pointers to objects. All methods are safe for concurrent use.
type Queue[T comparable] interface {
	Adder[T]
	Consumer[T]
	ShutDowner
	// Len returns the number of items waiting to be handed out. It is for
	// information only: another goroutine may change it at any moment.
	Len() int
}

// Config holds the optional settings shared by every queue constructor. The
// zero value is ready to use.
type Config struct {
	// Clock is the source of time for delays and metric durations.
	// Default: RealClock{}. Tests set a fake clock so that nothing in them
	// depends on the machine's speed.
	Clock Clock

	// Metrics receives the queue's events. Default: nil, no metrics and no
	// clock reads on the hot path.
	Metrics Metrics
}

func (c Config) clock() Clock {
	if c.Clock == nil {
		return RealClock{}
	}
	return c.Clock
}

// New returns an empty [Queue]. It starts no goroutine.
func New[T comparable](cfg Config) Queue[T] {
	return newQueue[T](cfg)
}

// queue implements Queue.
//
// Invariants, under mu:
//   - every item in order is in dirty and not in processing;
//   - an item in dirty and in processing is not in order; Done moves it there;
//   - every item is in order at most once.
type queue[T comparable] struct {
	mu sync.Mutex
	// nonEmpty is signalled when an item is pushed to order and broadcast on
	// shutdown; Get waits on it.
	nonEmpty sync.Cond
	// idle is broadcast when processing becomes empty while draining, and on
	// ShutDown; ShutDownWithDrain waits on it.
	idle sync.Cond

	order fifo[T]
	// dirty holds the pending items, with the time each became pending when
	// metrics are on (the zero time otherwise).
	dirty map[T]time.Time
	// processing holds the items handed out by Get and not yet Done, with
	// the time each was handed out when metrics are on.
	processing map[T]time.Time

	shuttingDown bool
	draining     bool

	clock   Clock
	metrics Metrics
}

var _ Queue[string] = (*queue[string])(nil)

func newQueue[T comparable](cfg Config) *queue[T] {
	q := &queue[T]{
		dirty:      make(map[T]time.Time),
		processing: make(map[T]time.Time),
		clock:      cfg.clock(),
		metrics:    cfg.Metrics,
	}
	q.nonEmpty.L = &q.mu
	q.idle.L = &q.mu
	if m, ok := cfg.Metrics.(InFlightMetrics); ok {
		m.ObserveInFlight(q.inFlight)
	}
	return q
}

// inFlight returns how long the items being processed have been processed
// in total and the longest of them (see [InFlightMetrics]).
func (q *queue[T]) inFlight() (total, longest time.Duration) {
	now := q.clock.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, started := range q.processing {
		d := now.Sub(started)
		total += d
		longest = max(longest, d)
	}
	return total, longest
}

// now returns the time for metrics, or the zero time when metrics are off.
func (q *queue[T]) now() time.Time {
	if q.metrics == nil {
		return time.Time{}
	}
	return q.clock.Now()
}

// Add implements [Adder].
func (q *queue[T]) Add(item T) {
	q.mu.Lock()
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	if _, pending := q.dirty[item]; pending {
		q.mu.Unlock()
		return
	}
	q.dirty[item] = q.now()
	if _, busy := q.processing[item]; !busy {
		q.order.push(item)
		q.nonEmpty.Signal()
	}
	q.mu.Unlock()

	if q.metrics != nil {
		q.metrics.Added()
	}
}

// Get implements [Consumer].
func (q *queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	for q.order.len() == 0 && !q.shuttingDown {
		q.nonEmpty.Wait()
	}
	if q.order.len() == 0 {
		q.mu.Unlock()
		return item, true
	}
	item = q.order.pop()
	now := q.now()
	added := q.dirty[item]
	delete(q.dirty, item)
	q.processing[item] = now
	q.mu.Unlock()

	if q.metrics != nil {
		q.metrics.Started(now.Sub(added))
	}
	return item, false
}

// Done implements [Consumer].
func (q *queue[T]) Done(item T) {
	q.mu.Lock()
	started, busy := q.processing[item]
	if !busy {
		q.mu.Unlock()
		return
	}
	delete(q.processing, item)
	if _, pending := q.dirty[item]; pending {
		q.order.push(item)
		q.nonEmpty.Signal()
	}
	if q.draining && len(q.processing) == 0 {
		q.idle.Broadcast()
	}
	now := q.now()
	q.mu.Unlock()

	if q.metrics != nil {
		q.metrics.Finished(now.Sub(started))
	}
}

// Len implements [Queue].
func (q *queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.order.len()
}

// ShutDown implements [ShutDowner].
func (q *queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.draining = false
	q.nonEmpty.Broadcast()
	q.idle.Broadcast()
}

// ShutDownWithDrain implements [ShutDowner].
func (q *queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.draining = true
	q.nonEmpty.Broadcast()
	for q.draining && len(q.processing) > 0 {
		q.idle.Wait()
	}
}

// ShuttingDown implements [ShutDowner].
func (q *queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
