package leaderelection

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// timerClock is one candidate's view of the shared fake clock: it
// records how far ahead of now each timer it is asked for is set, and,
// while frozen, hands out timers that never fire (a stuck election).
type timerClock struct {
	*clocktest.FakeClock
	frozen atomic.Bool

	mu     sync.Mutex
	waits  []time.Duration
	frozes int // timers handed out frozen
}

func (c *timerClock) NewTimerAt(t time.Time) workqueue.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, t.Sub(c.Now()))
	if c.frozen.Load() {
		c.frozes++
		return frozenTimer{}
	}
	return c.FakeClock.NewTimerAt(t)
}

func (c *timerClock) recorded() (waits []time.Duration, frozen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...), c.frozes
}

type frozenTimer struct{}

func (frozenTimer) C() <-chan time.Time { return nil }
func (frozenTimer) Stop() bool          { return true }

// A candidate that does not lead waits RetryPeriod plus jitter times
// JitterFactor times RetryPeriod between attempts; the leader renews every
// RetryPeriod, without jitter.
func TestAcquireJitter(t *testing.T) {
	w := newWorld(t)
	w.jitter = func() float64 { return 0.5 }
	ca, cb := &timerClock{FakeClock: w.clock}, &timerClock{FakeClock: w.clock}
	cfg := w.config("a")
	cfg.Clock = ca
	w.start(cfg)
	w.settle()
	cfg = w.config("b")
	cfg.Clock = cb
	w.start(cfg)
	w.settle()
	w.step(20 * time.Second)
	if got := w.leader(); got != "a" {
		t.Fatalf("leader %s, want a", got)
	}

	want := DefaultRetryPeriod + time.Duration(0.5*JitterFactor*float64(DefaultRetryPeriod)) // 3.2s
	waits, _ := cb.recorded()
	if len(waits) < 4 {
		t.Fatalf("b waited %v, want an attempt every %v for 20s", waits, want)
	}
	for _, d := range waits {
		if d != want {
			t.Errorf("b waited %v between attempts, want %v (RetryPeriod with jitter 0.5)", d, want)
		}
	}
	waits, _ = ca.recorded()
	renewals := 0
	for _, d := range waits {
		switch d {
		case DefaultRetryPeriod:
			renewals++
		case DefaultRenewDeadline:
		default:
			t.Errorf("the leader set a timer %v ahead, want RetryPeriod (renewal) or RenewDeadline", d)
		}
	}
	if renewals < 10 {
		t.Errorf("the leader renewed %d times in 20s, want every RetryPeriod", renewals)
	}
}

// Check fails once a candidate that believes it leads has not renewed for
// longer than LeaseDuration plus WatchdogTolerance; it passes while the
// leader renews, and for a candidate that does not lead.
func TestWatchdog(t *testing.T) {
	w := newWorld(t)
	ca := &timerClock{FakeClock: w.clock}
	cfg := w.config("a")
	cfg.Clock = ca
	cfg.WatchdogTolerance = 5 * time.Second
	a := w.start(cfg)
	w.settle()
	b := w.start(w.config("b"))
	w.step(time.Minute)
	for _, c := range []*candidate{a, b} {
		if err := c.le.Check(); err != nil {
			t.Errorf("%s's Check while a renews: %v", c.identity, err)
		}
	}

	// b steps down (it would take over the stuck Lease: a split brain, as
	// the watchdog is there to end).
	b.cancel()
	if err := w.wait(b); err != nil {
		t.Fatalf("b's Run: %v", err)
	}

	// a's election gets stuck after its next renewal: the timers it sets
	// then never fire, so it neither renews nor stops leading.
	ca.frozen.Store(true)
	renewed := w.clock.Now().Add(DefaultRetryPeriod)
	w.clock.Step(DefaultRetryPeriod)
	deadline := time.Now().Add(waitLimit)
	for _, n := ca.recorded(); n < 2; _, n = ca.recorded() { // the renewal's deadline and next retry
		if time.Now().After(deadline) {
			t.Fatal("a did not renew")
		}
		time.Sleep(time.Millisecond) // polling interval, not synchronisation
	}
	w.clock.SetTime(renewed.Add(15*time.Second + 5*time.Second)) // LeaseDuration + WatchdogTolerance
	if !a.le.IsLeader() {
		t.Fatal("a stopped leading")
	}
	if err := a.le.Check(); err != nil {
		t.Errorf("Check LeaseDuration+WatchdogTolerance after the last renewal: %v, want nil", err)
	}
	w.clock.Step(time.Millisecond)
	if err := a.le.Check(); err == nil {
		t.Error("Check passes after LeaseDuration+WatchdogTolerance without renewal")
	} else {
		t.Log(err)
	}
}
