package workqueue_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// TestMain fails the run if any test leaves a goroutine behind, which checks
// that every queue stops what it starts.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// epoch is the fake clocks' starting time.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// stuck is how long a helper waits for something that a correct queue does
// at once before failing the test. It is a guard against hanging, never a
// way to synchronise: passing tests never reach it.
const stuck = 10 * time.Second

type getResult[T any] struct {
	item     T
	shutdown bool
}

// getAsync calls q.Get in a new goroutine and delivers its result.
func getAsync[T comparable](q workqueue.Consumer[T]) <-chan getResult[T] {
	ch := make(chan getResult[T], 1)
	go func() {
		item, shutdown := q.Get()
		ch <- getResult[T]{item, shutdown}
	}()
	return ch
}

// mustGet returns the next item of q, failing the test if q reports
// shutdown or hands out nothing for a long time.
func mustGet[T comparable](t testing.TB, q workqueue.Consumer[T]) T {
	t.Helper()
	select {
	case r := <-getAsync(q):
		if r.shutdown {
			t.Fatalf("Get: shutdown, want an item")
		}
		return r.item
	case <-time.After(stuck):
		t.Fatalf("Get: no item after %v", stuck)
	}
	panic("unreachable")
}

// mustShutDown checks that Get on q reports shutdown.
func mustShutDown[T comparable](t testing.TB, q workqueue.Consumer[T]) {
	t.Helper()
	select {
	case r := <-getAsync(q):
		if !r.shutdown {
			t.Fatalf("Get = %v, want shutdown", r.item)
		}
	case <-time.After(stuck):
		t.Fatalf("Get: still blocked %v after shutdown", stuck)
	}
}

// getWithin returns the result of q.Get, failing the test if Get neither
// hands out an item nor reports shutdown for a long time.
func getWithin[T comparable](t testing.TB, q workqueue.Consumer[T]) getResult[T] {
	t.Helper()
	select {
	case r := <-getAsync(q):
		return r
	case <-time.After(stuck):
		t.Fatalf("Get: still blocked after %v", stuck)
	}
	panic("unreachable")
}

// waitClosed fails the test unless ch is closed soon.
func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(stuck):
		t.Fatalf("%s: not done after %v", what, stuck)
	}
}

// within calls f, which a correct queue lets return at once (a shutdown,
// a drain with nothing in flight, waiting for workers told to stop), and
// fails the test if it has not returned after stuck. f is then left
// running: a broken queue fails the test instead of hanging the run.
func within(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	waitClosed(t, done, what)
}

// stepper moves a fake clock and reports, exactly, which items a delaying
// queue released because of each move.
type stepper struct {
	t      testing.TB
	clock  *clocktest.FakeClock
	q      workqueue.DelayingQueue[string]
	probes int
}

// newStepper returns a stepper for q, whose clock is clock. If the test
// stops early, for instance because a probe never came, a cleanup shuts q
// down, which ends its goroutine and the Get the failed wait left behind.
func newStepper(t testing.TB, clock *clocktest.FakeClock, q workqueue.DelayingQueue[string]) *stepper {
	t.Cleanup(func() { within(t, "ShutDown", q.ShutDown) })
	return &stepper{t: t, clock: clock, q: q}
}

// step moves the clock forward by d and returns the items the queue released
// because of it, in the order Get hands them out; each is marked Done.
//
// It works without sleeping. Before moving the clock it schedules a probe due
// exactly at the new time, after every other item due then. The queue's
// goroutine releases everything due at one clock reading together, in ready
// order, so once Get returns the probe, every item due by then has been
// returned. To catch items released too early, step then moves the clock one
// more nanosecond with a second probe, the fence: the fence cannot be released
// before the goroutine has finished adding the first probe's batch, so
// anything that batch wrongly included comes out before the fence and is
// reported with this step. Tests therefore use times in whole microseconds or
// coarser, so that nothing is legitimately due within that nanosecond.
func (s *stepper) step(d time.Duration) []string {
	s.t.Helper()
	got := []string{}
	for _, by := range []time.Duration{d, time.Nanosecond} {
		s.probes++
		probe := fmt.Sprintf("probe-%d", s.probes)
		s.q.AddAfter(probe, by)
		s.clock.Step(by)
		for {
			item := mustGet(s.t, s.q)
			s.q.Done(item)
			if item == probe {
				break
			}
			got = append(got, item)
		}
	}
	return got
}

// rest shuts the queue down and returns the items still queued.
func (s *stepper) rest() []string {
	s.t.Helper()
	within(s.t, "ShutDown", s.q.ShutDown)
	got := []string{}
	for {
		r := getWithin(s.t, s.q)
		if r.shutdown {
			return got
		}
		s.q.Done(r.item)
		got = append(got, r.item)
	}
}

// recorder is a workqueue.Metrics that records every event.
type recorder struct {
	mu       sync.Mutex
	added    int
	started  []time.Duration
	finished []time.Duration
	retried  int
}

func (r *recorder) Added() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added++
}

func (r *recorder) Started(queued time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, queued)
}

func (r *recorder) Finished(worked time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = append(r.finished, worked)
}

func (r *recorder) Retried() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retried++
}

// waitFor yields until cond holds, for states a test can observe but not be
// told about; it fails the test if cond stays false for long.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stuck)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, stuck)
		}
		runtime.Gosched()
	}
}
