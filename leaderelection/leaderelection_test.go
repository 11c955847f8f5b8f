package leaderelection

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

func TestConfigValidation(t *testing.T) {
	work := func(context.Context) {}
	valid := Config{Name: "l", Identity: "a", OnStartedLeading: work}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr []string // substrings; none: valid
	}{
		{"defaults", func(*Config) {}, nil},
		{"no name", func(c *Config) { c.Name = "" }, []string{"Name"}},
		{"no identity", func(c *Config) { c.Identity = "" }, []string{"Identity"}},
		{"no callback", func(c *Config) { c.OnStartedLeading = nil }, []string{"OnStartedLeading"}},
		{"renew deadline not below lease duration", func(c *Config) { c.RenewDeadline = 15 * time.Second }, []string{"RenewDeadline 15s must be less than LeaseDuration 15s"}},
		{"retry period not below renew deadline", func(c *Config) { c.RetryPeriod = 10 * time.Second }, []string{"RetryPeriod 10s must be less than RenewDeadline 10s"}},
		{"fractional lease duration", func(c *Config) { c.LeaseDuration = 15500 * time.Millisecond }, []string{"whole number of seconds"}},
		{"short lease duration", func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = time.Millisecond, time.Microsecond, time.Nanosecond
		}, []string{"less than 1s"}},
		{"negative", func(c *Config) { c.RetryPeriod = -time.Second }, []string{"must not be negative"}},
		{"negative watchdog tolerance", func(c *Config) { c.WatchdogTolerance = -time.Second }, []string{"WatchdogTolerance -1s must not be negative"}},
		{"every error at once", func(c *Config) { *c = Config{RenewDeadline: time.Minute} }, []string{"Name", "Identity", "OnStartedLeading", "RenewDeadline 1m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.mutate(&cfg)
			got, err := cfg.withDefaults("default")
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got.LeaseDuration != 15*time.Second || got.RenewDeadline != 10*time.Second || got.RetryPeriod != 2*time.Second || got.WatchdogTolerance != 20*time.Second || got.Clock == nil || got.Namespace != "default" {
					t.Errorf("defaults: %+v", got)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// TestOneLeaderAndFailover: two candidates, one leads and renews; the
// other takes over only once the leader has stopped renewing for a
// LeaseDuration, and the old leader stops leading by its RenewDeadline.
func TestOneLeaderAndFailover(t *testing.T) {
	w := newWorld(t)
	a := w.start(w.config("a"))
	w.settle()
	if got := w.leader(); got != "a" {
		t.Fatalf("leader %s, want a (alone)", got)
	}
	b := w.start(w.config("b"))
	w.settle()

	l := w.lease()
	if str(l.Spec.HolderIdentity) != `"a"` || *l.Spec.LeaseDurationSeconds != 15 || *l.Spec.LeaseTransitions != 0 ||
		!l.Spec.AcquireTime.Equal(epoch) || !l.Spec.RenewTime.Equal(epoch) {
		t.Fatalf("lease as created: %+v", l.Spec)
	}

	// A minute of renewals: a keeps leading, b never does.
	w.step(time.Minute)
	if got := w.leader(); got != "a" {
		t.Fatalf("leader %s after a minute of renewals, want a", got)
	}
	l = w.lease()
	if !l.Spec.RenewTime.Equal(epoch.Add(time.Minute)) || !l.Spec.AcquireTime.Equal(epoch) || *l.Spec.LeaseTransitions != 0 {
		t.Fatalf("renewed lease: renew %v acquire %v transitions %d", l.Spec.RenewTime, l.Spec.AcquireTime, *l.Spec.LeaseTransitions)
	}

	// a's requests are dropped from now on: it last renewed at 60s.
	a.partitioned.Store(true)
	lastRenew := w.clock.Now()
	w.step(9 * time.Second)
	if got := w.leader(); got != "a" {
		t.Fatalf("leader %s 9s after the last renewal, want a", got)
	}
	w.step(time.Second) // RenewDeadline after the last renewal
	if err := w.wait(a); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a's Run: %v, want ErrLeaseLost", err)
	}
	if a.worked.Load() != 1 {
		t.Fatal("a's Run returned before its work")
	}
	if l := w.leaders(); len(l) != 0 {
		t.Fatalf("leaders %v between a's deadline and the lease's expiry", l)
	}
	// b saw a's last renewal at its next attempt, at most maxRetry after
	// 60s, and takes over once LeaseDuration has passed since, at its
	// next attempt (the clock moves by whole seconds).
	latest := 15*time.Second + 2*maxRetry + time.Second
	for len(w.leaders()) == 0 && w.clock.Now().Before(lastRenew.Add(latest+time.Second)) {
		w.step(time.Second)
	}
	if got := w.leader(); got != "b" {
		t.Fatalf("leader %s after expiry, want b", got)
	}
	if took := w.clock.Now().Sub(lastRenew); took < 15*time.Second || took > latest {
		t.Fatalf("b took over %v after a's last renewal, want 15s to %v", took, latest)
	}
	l = w.lease()
	if str(l.Spec.HolderIdentity) != `"b"` || *l.Spec.LeaseTransitions != 1 || !l.Spec.AcquireTime.Equal(l.Spec.RenewTime.Time) ||
		l.Spec.AcquireTime.Sub(lastRenew) < 15*time.Second {
		t.Fatalf("lease taken over: %+v", l.Spec)
	}
	w.checkNewLeaderCalls("b", "a", "b")
	if got := w.terms(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("terms %v", got)
	}
	b.cancel()
	if err := w.wait(b); err != nil {
		t.Fatalf("b's Run after cancel: %v", err)
	}
}

// TestLostLeaseStopsWorkBeforeExpiry: the leading context is cancelled
// RenewDeadline after the start of the last successful renewal even when
// the renewal in flight hangs, and Run waits for the work to return.
func TestLostLeaseStopsWorkBeforeExpiry(t *testing.T) {
	w := newWorld(t)
	stopped := make(chan time.Time, 1)
	release := make(chan struct{})
	cfg := w.config("a")
	cfg.OnStartedLeading = func(ctx context.Context) {
		<-ctx.Done()
		stopped <- w.clock.Now()
		<-release // the work takes a while to stop
	}
	a := w.start(cfg)
	// Registered after start, so that it ends first when the test does.
	hang := make(chan struct{})
	var unhang, unblock sync.Once
	t.Cleanup(func() {
		unblock.Do(func() { close(release) })
		unhang.Do(func() { close(hang) })
	})
	var hung sync.Once
	hanging := make(chan struct{})
	w.f.PrependReactor("update", "leases", func(a fake.Action) (bool, any, error) {
		if w.clock.Now().Before(epoch.Add(4 * time.Second)) {
			return false, nil, nil
		}
		hung.Do(func() { close(hanging) })
		<-hang // the server does not answer
		return true, nil, errors.New("too late")
	})
	w.settle()
	w.step(2 * time.Second) // renewed at 2s
	w.clock.Step(2 * time.Second)
	<-hanging                     // the renewal started at 4s hangs
	w.clock.Step(7 * time.Second) // 11s
	if n := w.clock.Timers(); n != 1 {
		t.Fatalf("%d timers armed at 11s, want the renew deadline alone", n)
	}
	select {
	case <-stopped:
		t.Fatal("leading stopped before the deadline")
	default:
	}
	// 2s + RenewDeadline = 12s with no renewal since: the deadline fires
	// while the renewal hangs.
	w.clock.Step(time.Second)
	select {
	case at := <-stopped:
		if at.Sub(epoch) != 12*time.Second {
			t.Fatalf("leading stopped at %v, want 12s", at.Sub(epoch))
		}
	case <-time.After(waitLimit):
		t.Fatal("leading context not cancelled at the deadline")
	}
	select {
	case <-a.done:
		t.Fatal("Run returned before the work did")
	default:
	}
	unblock.Do(func() { close(release) })
	select {
	case <-a.done:
		t.Fatal("Run returned before the renewal in flight did")
	default:
	}
	unhang.Do(func() { close(hang) }) // the renewal in flight ends
	if err := w.wait(a); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Run: %v, want ErrLeaseLost", err)
	}
}

// TestReleaseOnCancel: a leader cancelled with ReleaseOnCancel clears the
// holder once its work has returned, and the other candidate takes over
// at its next attempt instead of after LeaseDuration.
func TestReleaseOnCancel(t *testing.T) {
	for _, release := range []bool{true, false} {
		t.Run(map[bool]string{true: "release", false: "keep"}[release], func(t *testing.T) {
			w := newWorld(t)
			cfg := w.config("a")
			cfg.ReleaseOnCancel = release
			var stoppedCalls int
			cfg.OnStoppedLeading = func() { stoppedCalls++ }
			finish := make(chan struct{})
			var finished atomic.Bool
			cfg.OnStartedLeading = func(ctx context.Context) {
				<-ctx.Done()
				<-finish // the work takes a while to stop
				finished.Store(true)
			}
			a := w.start(cfg)
			t.Cleanup(func() {
				select {
				case <-finish:
				default:
					close(finish)
				}
			})
			w.settle()
			b := w.start(w.config("b"))
			w.step(4 * time.Second)

			a.cancel()
			// Neither Run nor the release may go ahead of the work. (A
			// negative check: it cannot fail a correct implementation, and
			// a broken one would not take this long.)
			select {
			case <-a.done:
				t.Fatal("Run returned while the work was running")
			case <-time.After(100 * time.Millisecond):
			}
			if l := w.lease(); str(l.Spec.HolderIdentity) != `"a"` {
				t.Fatalf("lease released while the work was running: holder %s", str(l.Spec.HolderIdentity))
			}
			close(finish)
			if err := w.wait(a); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !finished.Load() {
				t.Error("Run returned before the work")
			}
			if stoppedCalls != 1 {
				t.Errorf("OnStoppedLeading called %d times", stoppedCalls)
			}
			l := w.lease()
			if release {
				if l.Spec.HolderIdentity != nil || *l.Spec.LeaseDurationSeconds != 1 || *l.Spec.LeaseTransitions != 0 {
					t.Fatalf("released lease: holder %s duration %d transitions %d", str(l.Spec.HolderIdentity), *l.Spec.LeaseDurationSeconds, *l.Spec.LeaseTransitions)
				}
			} else if str(l.Spec.HolderIdentity) != `"a"` {
				t.Fatalf("kept lease: holder %s", str(l.Spec.HolderIdentity))
			}
			w.step(maxRetry.Round(time.Second) + time.Second) // b's next attempt
			if release {
				if got := w.leader(); got != "b" {
					t.Fatalf("leader %s after release, want b", got)
				}
				if l := w.lease(); *l.Spec.LeaseTransitions != 1 || *l.Spec.LeaseDurationSeconds != 15 {
					t.Fatalf("lease taken after release: %+v", l.Spec)
				}
				w.checkNewLeaderCalls("b", "a", "b")
			} else if l := w.leaders(); len(l) != 0 {
				t.Fatalf("leaders %v before the kept lease expired", l)
			}
			b.cancel()
			w.wait(b)
		})
	}
}

// TestNoSplitBrainUnderFaults runs three candidates for ten fake minutes
// while a seeded schedule answers their lease requests with conflicts,
// internal errors, and writes applied whose answer is lost; candidates are
// partitioned, and restarted when they lose. The trace fails the test as
// soon as two terms overlap in fake time. Faults then stop, and one leader
// must emerge.
func TestNoSplitBrainUnderFaults(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) { chaos(t, seed) })
	}
}

func chaos(t *testing.T, seed uint64) {
	w := newWorld(t)
	rng := rand.New(rand.NewPCG(seed, seed))
	var mu sync.Mutex
	faults := true
	injector := client.For[coordinationv1.Lease](w.f.Client()).Namespace(ns)
	var injected [4]int
	w.f.PrependReactor("*", "leases", func(a fake.Action) (bool, any, error) {
		if a.Query.Get("fieldManager") == "chaos" {
			return false, nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if !faults {
			return false, nil, nil
		}
		r := rng.Float64()
		gr := metav1.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
		switch {
		case r < 0.15:
			injected[0]++
			return true, nil, client.NewStatusError(metav1.NewConflict(gr, a.Name, errors.New("injected")))
		case r < 0.25:
			injected[1]++
			return true, nil, errors.New("injected internal error")
		case r < 0.35 && (a.Verb == "update" || a.Verb == "create"):
			// The write is applied, and its answer lost.
			var l coordinationv1.Lease
			if err := a.Into(&l); err != nil {
				return true, nil, err
			}
			var err error
			if a.Verb == "update" {
				_, err = injector.Update(w.ctx, &l, metav1.UpdateOptions{FieldManager: "chaos"})
			} else {
				_, err = injector.Create(w.ctx, &l, metav1.CreateOptions{FieldManager: "chaos"})
			}
			if err == nil {
				injected[2]++
				return true, nil, errors.New("injected: answer lost")
			}
			return true, nil, err
		}
		return false, nil, nil
	})

	ids := []string{"a", "b", "c"}
	running := map[string]*candidate{}
	for _, id := range ids {
		running[id] = w.start(w.config(id))
	}
	w.settle()
	for i := range 600 {
		// Now and then partition or heal a candidate.
		if i%37 == 0 {
			mu.Lock()
			id := ids[rng.IntN(len(ids))]
			mu.Unlock()
			running[id].partitioned.Store(!running[id].partitioned.Load())
			injected[3]++
		}
		w.clock.Step(time.Second)
		w.settle()
		for _, id := range ids {
			c := running[id]
			select {
			case <-c.done:
				if !errors.Is(c.err, ErrLeaseLost) {
					t.Fatalf("%s: Run: %v", id, c.err)
				}
				running[id] = w.start(w.config(id)) // as a restarted process would
				running[id].partitioned.Store(c.partitioned.Load())
			default:
			}
		}
		w.settle()
	}
	mu.Lock()
	faults = false
	mu.Unlock()
	for _, id := range ids {
		running[id].partitioned.Store(false)
	}
	// Once the faults stop, one candidate must lead within a bound. The
	// Lease's last write may land late (fake time runs on while a request
	// is in flight on a loaded machine), and a candidate counts its
	// duration from when it sees it: a standby sees it within one retry,
	// waits LeaseDuration, and takes it at its next retry. Twice that
	// leaves room for one more such write; never two leaders meanwhile.
	bound := 2 * (DefaultLeaseDuration + 2*maxRetry)
	for waited := time.Duration(0); len(w.leaders()) != 1 && waited < bound; waited += time.Second {
		if l := w.leaders(); len(l) > 1 {
			t.Fatalf("leaders at %v: %v", w.clock.Now().Sub(epoch), l)
		}
		w.step(time.Second)
	}
	leader := w.leader()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("seed %d: terms %v, injected conflicts/errors/lost answers/partition flips %v, leader %s", seed, w.terms(), injected, leader)
	if len(w.terms()) < 2 {
		t.Errorf("terms %v: the faults never moved the lease", w.terms())
	}
}

// TestOnNewLeaderOrder: OnNewLeader gets the holders in order, one call
// per change, not the empty holder of a released Lease, and never waits
// for the election (nor the election for it).
func TestOnNewLeaderOrder(t *testing.T) {
	calls := make(chan string)
	unblock := make(chan struct{})
	le := &LeaderElector{notify: newNotifier(func(id string) {
		calls <- id
		<-unblock
	})}
	defer le.notify.stop()
	lease := func(rv string, holder *string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}, Spec: coordinationv1.LeaseSpec{HolderIdentity: holder}}
	}
	a, b := "a", "b"
	le.observe(lease("1", &a), epoch)
	if got := <-calls; got != "a" {
		t.Fatalf("first call %q, want a", got)
	}
	// While the callback runs: a renewal, a release, a renewal; none
	// blocks.
	le.observe(lease("2", &a), epoch)
	le.observe(lease("3", nil), epoch)
	if got := le.Leader(); got != "" {
		t.Errorf("Leader() after release = %q", got)
	}
	unblock <- struct{}{}
	le.observe(lease("4", &b), epoch)
	if got := <-calls; got != "b" {
		t.Fatalf("second call %q, want b", got)
	}
	close(unblock)
	if got := le.Leader(); got != "b" {
		t.Errorf("Leader() = %q, want b", got)
	}
}
