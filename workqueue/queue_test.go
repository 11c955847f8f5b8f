package workqueue_test

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// TestQueueSemantics runs scripts of single-goroutine operations. Each
// operation is one of:
//
//	add X       Add(X)
//	get X       Get must return X (the queue must not be empty)
//	done X      Done(X)
//	len N       Len must be N
//	shutdown    ShutDown
//	closed      Get must report shutdown
func TestQueueSemantics(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"fifo", "add a; add b; add c; len 3; get a; get b; get c; len 0"},
		{"pending item is not queued twice", "add a; add b; add a; add b; len 2; get a; get b; len 0"},
		{"done without re-add does not requeue", "add a; get a; done a; len 0"},
		{"re-add while processing waits for done",
			"add a; get a; add a; add a; len 0; done a; len 1; get a; done a; len 0"},
		{"re-added item queues behind items added meanwhile",
			"add a; get a; add a; add b; len 1; done a; len 2; get b; get a"},
		{"item is pending again once handed out", "add a; get a; add a; len 0; done a; get a; add a; done a; get a"},
		{"done of an item not in flight does nothing",
			"add a; done a; done b; len 1; get a; done a; done a; len 0"},
		{"shutdown hands out queued items first",
			"add a; add b; shutdown; add c; len 2; get a; get b; closed; closed"},
		{"done after shutdown requeues a re-added item",
			"add a; get a; add a; shutdown; done a; len 1; get a; done a; closed"},
		{"shutdown twice", "shutdown; shutdown; closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := workqueue.New[string](workqueue.Config{})
			for op := range strings.SplitSeq(tt.script, ";") {
				verb, arg, _ := strings.Cut(strings.TrimSpace(op), " ")
				switch verb {
				case "add":
					q.Add(arg)
				case "get":
					if q.Len() == 0 {
						t.Fatalf("%s: queue is empty", op)
					}
					if got, shutdown := q.Get(); got != arg || shutdown {
						t.Fatalf("%s: Get = %q, %v", op, got, shutdown)
					}
				case "done":
					q.Done(arg)
				case "len":
					if got := strconv.Itoa(q.Len()); got != arg {
						t.Fatalf("%s: Len = %s", op, got)
					}
				case "shutdown":
					q.ShutDown()
					if !q.ShuttingDown() {
						t.Fatalf("%s: ShuttingDown = false", op)
					}
				case "closed":
					mustShutDown(t, q)
				default:
					t.Fatalf("bad op %q", op)
				}
			}
		})
	}
}

// TestProcessingExclusivity hammers one item from many producers while many
// workers process it, and checks that no two workers ever hold it at once
// and that the last Add is always followed by a Get.
func TestProcessingExclusivity(t *testing.T) {
	tests := []struct {
		workers, producers, adds int
	}{
		{workers: 2, producers: 1, adds: 2000},
		{workers: 8, producers: 4, adds: 2000},
		{workers: 64, producers: 8, adds: 500},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.workers)+"workers", func(t *testing.T) {
			q := workqueue.New[string](workqueue.Config{})
			var (
				inFlight, gets atomic.Int64
				tick           atomic.Uint64 // orders adds and gets
				lastAdd        atomic.Uint64
				lastGet        atomic.Uint64
			)
			var workers sync.WaitGroup
			for range tt.workers {
				workers.Go(func() {
					for {
						item, shutdown := q.Get()
						if shutdown {
							return
						}
						storeMax(&lastGet, tick.Add(1))
						gets.Add(1)
						if n := inFlight.Add(1); n != 1 {
							t.Errorf("%d workers hold %q", n, item)
						}
						inFlight.Add(-1)
						q.Done(item)
					}
				})
			}
			var producers sync.WaitGroup
			for range tt.producers {
				producers.Go(func() {
					for range tt.adds {
						storeMax(&lastAdd, tick.Add(1))
						q.Add("x")
						if n := q.Len(); n > 1 {
							t.Errorf("Len = %d with one distinct item", n)
						}
					}
				})
			}
			within(t, "producers", producers.Wait)
			q.ShutDown() // workers take what is queued, then stop
			within(t, "workers to stop after ShutDown", workers.Wait)
			if lastGet.Load() < lastAdd.Load() {
				t.Errorf("last Add (tick %d) was never followed by a Get (last at %d)", lastAdd.Load(), lastGet.Load())
			}
			if n := gets.Load(); n > int64(tt.producers*tt.adds) {
				t.Errorf("%d Gets for %d Adds", n, tt.producers*tt.adds)
			}
		})
	}
}

// storeMax raises v to at least n.
func storeMax(v *atomic.Uint64, n uint64) {
	for {
		old := v.Load()
		if old >= n || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// constructors builds each kind of queue, so that shutdown behaviour is
// checked on all of them.
var constructors = []struct {
	name string
	new  func(workqueue.Config) workqueue.Queue[string]
}{
	{"Queue", workqueue.New[string]},
	{"DelayingQueue", func(c workqueue.Config) workqueue.Queue[string] { return workqueue.NewDelaying[string](c) }},
	{"RateLimitingQueue", func(c workqueue.Config) workqueue.Queue[string] { return workqueue.NewRateLimiting[string](nil, c) }},
}

func TestShutDownUnblocksGet(t *testing.T) {
	for _, c := range constructors {
		for _, workers := range []int{1, 8} {
			t.Run(c.name+"/"+strconv.Itoa(workers), func(t *testing.T) {
				q := c.new(workqueue.Config{Clock: clocktest.NewFakeClock(epoch)})
				results := make([]<-chan getResult[string], workers)
				for i := range results {
					results[i] = getAsync(q)
				}
				within(t, "ShutDown", q.ShutDown)
				for _, ch := range results {
					select {
					case r := <-ch:
						if !r.shutdown {
							t.Errorf("Get = %q, want shutdown", r.item)
						}
					case <-time.After(stuck):
						t.Fatal("Get still blocked after ShutDown")
					}
				}
				if !q.ShuttingDown() {
					t.Error("ShuttingDown = false after ShutDown")
				}
				q.Add("late")
				if q.Len() != 0 {
					t.Error("Add after ShutDown queued an item")
				}
			})
		}
	}
}

func TestShutDownWithDrain(t *testing.T) {
	for _, c := range constructors {
		t.Run(c.name+"/waits for Done", func(t *testing.T) {
			q := c.new(workqueue.Config{Clock: clocktest.NewFakeClock(epoch)})
			q.Add("a")
			q.Add("b")
			a, b := mustGet(t, q), mustGet(t, q)

			var doneCalled atomic.Int32
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				q.ShutDownWithDrain()
				if n := doneCalled.Load(); n != 2 {
					t.Errorf("ShutDownWithDrain returned after %d of 2 Done calls", n)
				}
			}()
			waitFor(t, "drain begun", q.ShuttingDown)
			mustShutDown(t, q) // Get no longer blocks
			q.Add("c")         // ignored while draining
			doneCalled.Add(1)
			q.Done(a)
			select {
			case <-drained:
				t.Fatal("ShutDownWithDrain returned with an item in flight")
			default:
			}
			doneCalled.Add(1)
			q.Done(b)
			waitClosed(t, drained, "ShutDownWithDrain")
			if q.Len() != 0 {
				t.Errorf("Len = %d after drain", q.Len())
			}
		})

		t.Run(c.name+"/nothing in flight", func(t *testing.T) {
			q := c.new(workqueue.Config{Clock: clocktest.NewFakeClock(epoch)})
			within(t, "ShutDownWithDrain", q.ShutDownWithDrain) // returns at once
			mustShutDown(t, q)
		})

		t.Run(c.name+"/ShutDown ends the wait", func(t *testing.T) {
			q := c.new(workqueue.Config{Clock: clocktest.NewFakeClock(epoch)})
			q.Add("a")
			a := mustGet(t, q)
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				q.ShutDownWithDrain()
			}()
			waitFor(t, "drain begun", q.ShuttingDown)
			q.ShutDown()
			waitClosed(t, drained, "ShutDownWithDrain after ShutDown")
			q.Done(a)
		})
	}
}

func TestMetrics(t *testing.T) {
	clock := clocktest.NewFakeClock(epoch)
	m := &recorder{}
	q := workqueue.NewDelaying[string](workqueue.Config{Clock: clock, Metrics: m})
	defer q.ShutDown()

	q.Add("a")
	q.Add("a") // already pending: not reported
	clock.Step(2 * time.Second)
	a := mustGet(t, q)
	q.Add("a") // pending again while in flight
	clock.Step(3 * time.Second)
	q.Done(a)
	clock.Step(time.Second)
	a = mustGet(t, q)
	q.Done(a)
	q.Done(a) // not in flight: not reported
	q.AddAfter("b", 0)
	q.AddAfter("c", time.Hour)

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.added != 3 {
		t.Errorf("Added %d times, want 3", m.added)
	}
	if want := []time.Duration{2 * time.Second, 4 * time.Second}; !slices.Equal(m.started, want) {
		t.Errorf("Started(%v), want %v", m.started, want)
	}
	if want := []time.Duration{3 * time.Second, 0}; !slices.Equal(m.finished, want) {
		t.Errorf("Finished(%v), want %v", m.finished, want)
	}
	if m.retried != 2 {
		t.Errorf("Retried %d times, want 2", m.retried)
	}
}

// inFlightRecorder is a recorder that also observes the work in progress.
type inFlightRecorder struct {
	recorder
	inFlight func() (total, longest time.Duration)
	calls    int
}

func (r *inFlightRecorder) ObserveInFlight(f func() (total, longest time.Duration)) {
	r.inFlight = f
	r.calls++
}

func TestInFlightMetrics(t *testing.T) {
	clock := clocktest.NewFakeClock(epoch)
	m := &inFlightRecorder{}
	q := workqueue.NewRateLimiting[string](nil, workqueue.Config{Clock: clock, Metrics: m})
	defer q.ShutDown()
	if m.calls != 1 {
		t.Fatalf("ObserveInFlight called %d times by the constructor, want 1", m.calls)
	}
	check := func(wantTotal, wantLongest time.Duration) {
		t.Helper()
		if total, longest := m.inFlight(); total != wantTotal || longest != wantLongest {
			t.Errorf("inFlight() = %v, %v; want %v, %v", total, longest, wantTotal, wantLongest)
		}
	}
	check(0, 0)
	q.Add("a")
	q.Add("b")
	clock.Step(time.Second) // queued time is not processing time
	a := mustGet(t, q)
	clock.Step(2 * time.Second)
	b := mustGet(t, q)
	clock.Step(time.Second)
	check(3*time.Second+time.Second, 3*time.Second)
	q.Done(a)
	check(time.Second, time.Second)
	q.Done(b)
	check(0, 0)
}
