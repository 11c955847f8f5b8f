package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxChanBuffer caps the capacity of a watcher's result channel; the rest of
// its WatchBuffer is a queue that grows only when the consumer lags.
const maxChanBuffer = 64

// Watch streams the changes under prefix as opts asks (see WatchOptions).
//
// Every watcher is a goroutine reading the store's event log from its own
// position, so it sees every event after its starting revision exactly once
// and in order, whatever writes race with its start; writers never wait for
// watchers. A watcher holds at most MemoryConfig.WatchBuffer undelivered
// events (plus a small channel buffer): past that it ends with a Failed event
// wrapping ErrTooSlow. It ends with a Failed event wrapping ErrExpired if the
// events it has yet to read are compacted first (a burst of more than
// MaxEvents writes before it could read them).
//
// A watch from a revision below CompactedRevision fails with ErrExpired. A
// watch from a revision above the current one starts at once and delivers
// the events after that revision as they come. With SendInitialEvents and a
// revision above the current one, Watch first waits (up to TooLargeWait) for
// the store to reach it, as the initial state must be read at it.
//
// With a BookmarkInterval, a watcher that delivered nothing for an interval
// sends a Bookmark at the revision it has read the log up to (all the events
// before it are already in the channel). With BookmarkAt, one more is sent
// at that time, idle or not. Either is sent only if that revision is past
// the watcher's last event or bookmark (or its start), as kube-apiserver's
// cacher: writes anywhere in the store advance it.
//
// The Predicate runs on the watcher's goroutine and must be safe for
// concurrent use, and so must MemoryConfig.Copy, which builds the Deleted
// event of an object that stops matching. Stop waits for the goroutine to
// exit; do not call it from the Predicate.
func (m *Memory) Watch(ctx context.Context, prefix string, opts WatchOptions) (Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m.isClosed() {
		return nil, ErrClosed
	}
	start := opts.ResourceVersion
	if opts.SendInitialEvents && start > 0 {
		if err := m.waitForRevision(ctx, start); err != nil {
			return nil, err
		}
	}
	limit := m.cfg.WatchBuffer
	w := &memWatcher{
		m:           m,
		ctx:         ctx,
		prefix:      prefix,
		pred:        opts.Predicate,
		out:         make(chan Event, min(limit, maxChanBuffer)),
		stop:        make(chan struct{}),
		exited:      make(chan struct{}),
		limit:       limit,
		bookmark:    opts.BookmarkInterval,
		bookmarkAt:  opts.BookmarkAt,
		sendInitial: opts.SendInitialEvents,
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return nil, ErrClosed
	}
	if start == 0 {
		start = m.rev.Load()
	}
	if start < m.compacted {
		c := m.compacted
		m.mu.RUnlock()
		return nil, &Error{Code: CodeExpired, ResourceVersion: start,
			Message: fmt.Sprintf("resource version %d is too old to watch from (compacted up to %d)", start, c)}
	}
	if opts.SendInitialEvents {
		w.initial = m.snapshotLocked(prefix, start)
	}
	m.wg.Add(1)
	m.mu.RUnlock()
	w.pos = start + 1
	w.queued = start
	w.group = m.joinGroup(prefix)
	go w.run()
	return w, nil
}

// snapshotLocked returns the live versions under prefix at rev, by key.
func (m *Memory) snapshotLocked(prefix string, rev uint64) []version {
	var out []version
	m.index.AscendGreaterOrEqual(item{key: prefix}, func(it item) bool {
		if !strings.HasPrefix(it.key, prefix) {
			return false
		}
		if v, ok := it.e.atVersion(rev); ok {
			out = append(out, v)
		}
		return true
	})
	return out
}

// bookmarkTimers returns the channels of a watch's bookmarks: tick every
// interval (nil if it is not positive) and at once at the time at (nil if
// it is zero or past), and the function that stops them.
func bookmarkTimers(interval time.Duration, at time.Time) (tick, once <-chan time.Time, stop func()) {
	var stops []func() bool
	if interval > 0 {
		t := time.NewTicker(interval)
		tick = t.C
		stops = append(stops, func() bool { t.Stop(); return true })
	}
	if !at.IsZero() {
		if d := time.Until(at); d > 0 {
			t := time.NewTimer(d)
			once = t.C
			stops = append(stops, t.Stop)
		}
	}
	return tick, once, func() {
		for _, s := range stops {
			s()
		}
	}
}

// memWatcher is a running watch: one goroutine (run) owned by the store, that
// scans the event log from pos, queues the events it should deliver and
// feeds them to out.
type memWatcher struct {
	m        *Memory
	ctx      context.Context
	prefix   string
	pred     func(Object) bool
	out      chan Event
	stop     chan struct{}
	stopOnce sync.Once
	exited   chan struct{}

	limit       int
	bookmark    time.Duration
	bookmarkAt  time.Time
	sendInitial bool
	initial     []version

	group  *watchGroup
	pos    uint64 // the next revision to read from the log
	queued uint64 // the revision of the last event or bookmark queued, or the start
	queue  eventQueue
}

// ResultChan returns the channel of events; it is closed when the watch ends.
func (w *memWatcher) ResultChan() <-chan Event { return w.out }

// Stop ends the watch and waits for its goroutine to exit. It may be called
// more than once and from any goroutine but the Predicate's.
func (w *memWatcher) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.exited
}

func (w *memWatcher) run() {
	defer w.m.wg.Done()
	defer close(w.exited)
	defer close(w.out)
	defer w.m.leaveGroup(w.group)

	if w.sendInitial {
		for _, v := range w.initial {
			if w.pred != nil && !w.pred(v.obj) {
				continue
			}
			if !w.send(Event{Type: Added, Object: v.obj, Revision: v.rev}) {
				return
			}
		}
		w.initial = nil
		if !w.send(Event{Type: Bookmark, Revision: w.pos - 1, InitialEventsEnd: true}) {
			return
		}
	}

	tick, at, stopTimers := bookmarkTimers(w.bookmark, w.bookmarkAt)
	defer stopTimers()
	delivered := false // since the last tick
	ctxDone := w.ctx.Done()
	for {
		// Load the wake-up channel before reading the revision, so a write
		// published after the scan closes it (or a later one).
		g := *w.group.gen.Load()
		if err := w.scan(); err != nil {
			w.fail(err)
			return
		}
		if w.drain() {
			delivered = true
		}
		var out chan<- Event
		var head Event
		if w.queue.n > 0 {
			out, head = w.out, w.queue.front()
		}
		select {
		case out <- head:
			w.queue.pop()
			delivered = true
		case <-g:
		case <-tick:
			if !delivered && w.queue.n == 0 {
				if err := w.bookmarkIfAdvanced(); err != nil {
					w.fail(err)
					return
				}
			}
			delivered = false
		case <-at:
			// Every event read so far is queued before it.
			if err := w.bookmarkIfAdvanced(); err != nil {
				w.fail(err)
				return
			}
		case <-w.stop:
			return
		case <-ctxDone:
			return
		case <-w.m.done:
			return
		}
	}
}

// bookmarkIfAdvanced reads the log up to the current revision (a watcher is
// woken only by writes under its prefix) and queues a Bookmark at it, if that
// is past the last event or bookmark queued: as kube-apiserver's cacher, a
// bookmark always tells the client something new.
func (w *memWatcher) bookmarkIfAdvanced() error {
	if err := w.scan(); err != nil {
		return err
	}
	if rev := w.pos - 1; rev > w.queued {
		w.queue.push(Event{Type: Bookmark, Revision: rev})
		w.queued = rev
	}
	return nil
}

// scan reads the log from pos up to the published revision, queueing the
// events this watcher delivers.
func (w *memWatcher) scan() error {
	cur := w.m.rev.Load()
	if w.pos > cur {
		return nil
	}
	v := w.m.log.Load()
	for ; w.pos <= cur; w.pos++ {
		ev := v.event(w.pos)
		if ev == nil {
			return &Error{Code: CodeExpired, ResourceVersion: w.pos - 1,
				Message: fmt.Sprintf("watch fell behind: events after revision %d were compacted", w.pos-1)}
		}
		if e, ok := w.convert(w.pos, ev); ok {
			if w.queue.n >= w.limit {
				w.drain()
			}
			if w.queue.n >= w.limit {
				return &Error{Code: CodeTooSlow, ResourceVersion: w.pos - 1,
					Message: fmt.Sprintf("watcher fell %d events behind", w.limit)}
			}
			w.queue.push(e)
			w.queued = w.pos
		}
	}
	return nil
}

// drain moves queued events to the result channel while it has room, and
// reports whether it moved any.
func (w *memWatcher) drain() bool {
	moved := false
	for w.queue.n > 0 {
		select {
		case w.out <- w.queue.front():
			w.queue.pop()
			moved = true
		default:
			return moved
		}
	}
	return moved
}

// convert turns a log event into the event this watcher sees, if any: it
// applies the prefix and, on both the old and new state, the predicate.
func (w *memWatcher) convert(rev uint64, ev *logEvent) (Event, bool) {
	if !strings.HasPrefix(ev.key, w.prefix) {
		return Event{}, false
	}
	p := w.pred
	switch {
	case ev.deleted:
		if p != nil && !p(ev.prev) {
			return Event{}, false
		}
		return Event{Type: Deleted, Object: ev.obj, PrevObject: ev.prev, Revision: rev}, true
	case ev.prev == nil:
		if p != nil && !p(ev.obj) {
			return Event{}, false
		}
		return Event{Type: Added, Object: ev.obj, Revision: rev}, true
	case p == nil:
		return Event{Type: Modified, Object: ev.obj, PrevObject: ev.prev, Revision: rev}, true
	}
	now, before := p(ev.obj), p(ev.prev)
	switch {
	case now && before:
		return Event{Type: Modified, Object: ev.obj, PrevObject: ev.prev, Revision: rev}, true
	case now:
		return Event{Type: Added, Object: ev.obj, Revision: rev}, true
	case before:
		return Event{Type: Deleted, Object: w.lastMatching(ev, rev), PrevObject: ev.prev, Revision: rev}, true
	}
	return Event{}, false
}

// lastMatching returns the object a Deleted event for an object that stopped
// matching carries: its previous state stamped with the event's revision, as
// kube-apiserver sends it. Without a way to copy the object (see
// MemoryConfig.Copy) it is the new state.
func (w *memWatcher) lastMatching(ev *logEvent, rev uint64) Object {
	c := w.m.copy(ev.prev)
	if c == nil || isNilObject(c) || sameObject(c, ev.prev) {
		return ev.obj
	}
	c.SetResourceVersion(strconv.FormatUint(rev, 10))
	return c
}

// send delivers e, blocking until the consumer takes it or the watch ends.
func (w *memWatcher) send(e Event) bool {
	select {
	case w.out <- e:
		return true
	case <-w.stop:
	case <-w.ctx.Done():
	case <-w.m.done:
	}
	return false
}

// fail drops the undelivered events and delivers a final Failed event.
func (w *memWatcher) fail(err error) {
	w.queue = eventQueue{}
	w.send(Event{Type: Failed, Err: err})
}

// eventQueue is a FIFO ring of events; its capacity is a power of two and
// grows on demand (a watcher's queue never exceeds its WatchBuffer).
type eventQueue struct {
	buf     []Event
	head, n int
}

func (q *eventQueue) push(e Event) {
	if q.n == len(q.buf) {
		nb := make([]Event, max(2*len(q.buf), 16))
		for i := range q.n {
			nb[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = e
	q.n++
}

func (q *eventQueue) front() Event { return q.buf[q.head] }

func (q *eventQueue) pop() {
	q.buf[q.head] = Event{}
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
}
