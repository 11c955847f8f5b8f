package workqueue

import (
	"container/heap"
	"sync"
	"time"
)

// DelayingQueue is a [Queue] that can also add an item after a delay, so that
// a failed item is retried later instead of in a hot loop.
type DelayingQueue[T comparable] interface {
	Queue[T]
	// AddAfter adds item once d has elapsed on the queue's clock; d <= 0
	// adds it at once. While an item waits, further AddAfter calls for it
	// only ever bring its time forward: the earliest ready time wins. Items
	// that become ready together are added in ready-time order, ties in
	// call order. Waiting items are dropped by ShutDown, and AddAfter after
	// ShutDown does nothing.
	AddAfter(item T, d time.Duration)
}

// NewDelaying returns an empty [DelayingQueue]. It starts one goroutine,
// which moves items to the queue when their time comes; ShutDown and
// ShutDownWithDrain stop it and return only once it has exited.
func NewDelaying[T comparable](cfg Config) DelayingQueue[T] {
	return newDelaying[T](cfg)
}

// delaying implements DelayingQueue by wrapping a queue with a min-heap of
// waiting items, keyed by ready time, and a goroutine that sleeps on a timer
// armed for the earliest ready time.
type delaying[T comparable] struct {
	*queue[T]

	clock   Clock
	metrics Metrics

	mu      sync.Mutex
	waiting waitHeap[T]
	byItem  map[T]*waitEntry[T] // the heap entry of each waiting item
	seq     uint64              // call counter, orders entries with equal ready times
	stopped bool

	// wake (capacity 1) tells the loop that the earliest ready time changed.
	wake chan struct{}
	// stop is closed once, by the first shutdown, to end the loop.
	stop     chan struct{}
	stopOnce sync.Once
	loopDone sync.WaitGroup
}

var _ DelayingQueue[string] = (*delaying[string])(nil)

func newDelaying[T comparable](cfg Config) *delaying[T] {
	d := &delaying[T]{
		queue:   newQueue[T](cfg),
		clock:   cfg.clock(),
		metrics: cfg.Metrics,
		byItem:  make(map[T]*waitEntry[T]),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	d.loopDone.Go(d.loop)
	return d
}

// AddAfter implements [DelayingQueue].
func (d *delaying[T]) AddAfter(item T, delay time.Duration) {
	if d.ShuttingDown() {
		return
	}
	if d.metrics != nil {
		d.metrics.Retried()
	}
	if delay <= 0 {
		d.Add(item)
		return
	}
	readyAt := d.clock.Now().Add(delay)

	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.seq++
	var e *waitEntry[T]
	if e = d.byItem[item]; e != nil {
		if !readyAt.Before(e.readyAt) {
			d.mu.Unlock()
			return
		}
		e.readyAt, e.seq = readyAt, d.seq
		heap.Fix(&d.waiting, e.index)
	} else {
		e = &waitEntry[T]{item: item, readyAt: readyAt, seq: d.seq}
		heap.Push(&d.waiting, e)
		d.byItem[item] = e
	}
	first := e.index == 0
	d.mu.Unlock()

	if first {
		select {
		case d.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// ShutDown implements [ShutDowner]; it also stops the delay goroutine and
// drops the waiting items.
func (d *delaying[T]) ShutDown() {
	d.stopLoop()
	d.queue.ShutDown()
}

// ShutDownWithDrain implements [ShutDowner]; it also stops the delay
// goroutine and drops the waiting items.
func (d *delaying[T]) ShutDownWithDrain() {
	d.stopLoop()
	d.queue.ShutDownWithDrain()
}

func (d *delaying[T]) stopLoop() {
	d.stopOnce.Do(func() {
		d.mu.Lock()
		d.stopped = true
		d.waiting = nil
		d.byItem = nil
		d.mu.Unlock()
		close(d.stop)
	})
	d.loopDone.Wait()
}

// loop moves ready items to the queue, then sleeps until the earliest
// waiting item is due, an earlier one arrives, or the queue stops.
func (d *delaying[T]) loop() {
	var (
		timer   Timer
		timerAt time.Time
		ready   []T
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		d.mu.Lock()
		now := d.clock.Now()
		for len(d.waiting) > 0 && !d.waiting[0].readyAt.After(now) {
			e := heap.Pop(&d.waiting).(*waitEntry[T])
			delete(d.byItem, e.item)
			ready = append(ready, e.item)
		}
		var next time.Time
		hasNext := len(d.waiting) > 0
		if hasNext {
			next = d.waiting[0].readyAt
		}
		d.mu.Unlock()

		for i, item := range ready {
			d.Add(item)
			var zero T
			ready[i] = zero
		}
		ready = ready[:0]

		// Re-arm the timer only when the deadline changed.
		if timer != nil && (!hasNext || !timerAt.Equal(next)) {
			timer.Stop()
			timer = nil
		}
		if timer == nil && hasNext {
			timer, timerAt = d.clock.NewTimerAt(next), next
		}
		var fired <-chan time.Time
		if timer != nil {
			fired = timer.C()
		}

		select {
		case <-d.stop:
			return
		case <-d.wake:
		case <-fired:
			timer = nil
		}
	}
}

// waitEntry is an item waiting in the heap.
type waitEntry[T any] struct {
	item    T
	readyAt time.Time
	seq     uint64 // tie-breaker: earlier calls first
	index   int    // position in the heap, kept by Swap
}

// waitHeap is a min-heap of entries by (readyAt, seq); it implements
// heap.Interface.
type waitHeap[T any] []*waitEntry[T]

func (h waitHeap[T]) Len() int { return len(h) }

func (h waitHeap[T]) Less(i, j int) bool {
	if !h[i].readyAt.Equal(h[j].readyAt) {
		return h[i].readyAt.Before(h[j].readyAt)
	}
	return h[i].seq < h[j].seq
}

func (h waitHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *waitHeap[T]) Push(x any) {
	e := x.(*waitEntry[T])
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *waitHeap[T]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}
