package manager_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/leaderelection"
	"github.com/kapi-dev/kapi/manager"
	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// candidate is a manager standing for election, with a leader-only
// runnable and another.
type candidate struct {
	m      *manager.Manager
	run    *run
	leader *recorder
	other  *recorder
	log    *log
}

func newCandidate(t *testing.T, f *fake.Fake, clock *clocktest.FakeClock, identity string) *candidate {
	t.Helper()
	m, err := manager.New(f.Client(), manager.Config{
		Clock:  clock,
		Logger: quiet(),
		LeaderElection: &leaderelection.Config{
			Namespace: "kube-system", Name: "ctrl", Identity: identity, ReleaseOnCancel: true,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &candidate{m: m, log: &log{}}
	c.leader = newRecorder("leader", c.log, true)
	c.other = newRecorder("other", c.log, false)
	_ = m.Add(c.leader)
	_ = m.Add(c.other)
	c.run = start(t, m)
	return c
}

// stepUntil moves the clock a second at a time until ch is closed.
func stepUntil(t *testing.T, clock *clocktest.FakeClock, what string, ch <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		select {
		case <-ch:
			return
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		clock.Step(time.Second)
	}
}

// settle waits until the candidates wait on n timers: every request
// they started has been answered.
func settle(t *testing.T, clock *clocktest.FakeClock, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for clock.Timers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers, want %d", clock.Timers(), n)
		}
		time.Sleep(time.Millisecond) // polling interval, not synchronisation
	}
}

func elected(m *manager.Manager) bool {
	select {
	case <-m.Elected():
		return true
	default:
		return false
	}
}

// Of two managers on one Lease, only the leader runs its leader-only
// runnables; both run the others and are ready. When the leader stops
// (releasing the Lease), the other takes over.
func TestLeaderOnlyRunnablesWaitForLeadership(t *testing.T) {
	f := fake.New(t)
	clock := clocktest.NewFakeClock(epoch)
	a := newCandidate(t, f, clock, "a")
	waitFor(t, "a elected", a.m.Elected())
	b := newCandidate(t, f, clock, "b")
	waitFor(t, "b's other runnable", b.other.started)
	// b tries again every RetryPeriod (2s) and must not acquire a's Lease,
	// which a renews: a has two timers (retry, renew deadline), b one.
	settle(t, clock, 3)
	for range 20 {
		clock.Step(time.Second)
		settle(t, clock, 3)
	}
	if elected(b.m) {
		t.Fatal("b elected while a leads")
	}
	select {
	case <-b.leader.started:
		t.Fatal("b's leader-only runnable started while a leads")
	default:
	}
	rec := httptest.NewRecorder()
	b.m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/readyz of the standby: %d, want 200 (readiness does not wait for leadership)", rec.Code)
	}
	if err := a.run.stop(t); err != nil {
		t.Fatalf("a: %v", err)
	}
	if got := a.log.String(); !strings.HasSuffix(got, "leader- other-") {
		t.Errorf("a's events %q, want the leader-only runnable stopped first", got)
	}
	stepUntil(t, clock, "b elected", b.m.Elected())
	waitFor(t, "b's leader-only runnable", b.leader.started)
	if err := b.run.stop(t); err != nil {
		t.Fatalf("b: %v", err)
	}
}

// A leader that cannot renew its Lease stops its leader-only runnables,
// then the others, and Start returns ErrLeaseLost.
func TestLeaseLostStopsManager(t *testing.T) {
	f := fake.New(t)
	clock := clocktest.NewFakeClock(epoch)
	a := newCandidate(t, f, clock, "a")
	waitFor(t, "a elected", a.m.Elected())
	waitFor(t, "a's leader runnable", a.leader.started)
	f.PrependReactor("update", "leases", func(fake.Action) (bool, any, error) {
		return true, nil, errors.New("renewals fail")
	})
	done := make(chan struct{})
	go func() {
		<-a.run.done
		close(done)
	}()
	stepUntil(t, clock, "Start to return", done)
	if err := a.run.err; !errors.Is(err, leaderelection.ErrLeaseLost) {
		t.Errorf("Start: %v, want ErrLeaseLost", err)
	}
	if got := a.log.String(); !strings.HasSuffix(got, "leader- other-") {
		t.Errorf("events %q, want the leader-only runnable stopped first", got)
	}
}

// freezableClock is the fake clock, but while frozen the timers it hands
// out never fire: an election stuck after its last renewal.
type freezableClock struct {
	*clocktest.FakeClock
	frozen atomic.Bool
	frozes atomic.Int32
}

func (c *freezableClock) NewTimerAt(t time.Time) workqueue.Timer {
	if c.frozen.Load() {
		c.frozes.Add(1)
		return frozenTimer{}
	}
	return c.FakeClock.NewTimerAt(t)
}

type frozenTimer struct{}

func (frozenTimer) C() <-chan time.Time { return nil }
func (frozenTimer) Stop() bool          { return true }

// /healthz fails once the leader has not renewed its Lease for
// LeaseDuration plus WatchdogTolerance while it believes it leads.
func TestHealthzWatchdog(t *testing.T) {
	f := fake.New(t)
	clock := &freezableClock{FakeClock: clocktest.NewFakeClock(epoch)}
	m, err := manager.New(f.Client(), manager.Config{
		Clock:  clock,
		Logger: quiet(),
		LeaderElection: &leaderelection.Config{
			Namespace: "kube-system", Name: "ctrl", Identity: "a", WatchdogTolerance: 5 * time.Second,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	leader := newRecorder("leader", &log{}, true)
	_ = m.Add(leader)
	r := start(t, m)
	waitFor(t, "a's leader runnable", leader.started)
	healthz := func() (int, string) {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code, rec.Body.String()
	}
	settle(t, clock.FakeClock, 2) // the renewal and the renew deadline
	for range 30 {
		clock.Step(time.Second)
		settle(t, clock.FakeClock, 2)
	}
	if code, body := healthz(); code != http.StatusOK {
		t.Fatalf("/healthz of a leader that renews: %d %s", code, body)
	}

	clock.frozen.Store(true)
	// The leader renewed at 30s (every RetryPeriod, 2s, from 0s): its
	// next renewal, at 32s, sets timers that never fire.
	clock.Step(leaderelection.DefaultRetryPeriod)
	renewed := clock.Now()
	eventually(t, "the renewal", func() bool { return clock.frozes.Load() == 2 })
	clock.SetTime(renewed.Add(15*time.Second + 5*time.Second))
	if code, body := healthz(); code != http.StatusOK {
		t.Fatalf("/healthz LeaseDuration+WatchdogTolerance after the last renewal: %d %s", code, body)
	}
	clock.Step(time.Millisecond)
	if code, body := healthz(); code != http.StatusInternalServerError || !strings.Contains(body, "without renewing") {
		t.Fatalf("/healthz of a stuck leader: %d %s, want 500", code, body)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
