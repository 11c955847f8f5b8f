package controllerutil_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// instantClock is a clocktest.FakeClock that records the wait of every
// timer armed on it and moves to its deadline at once, so that a retry loop
// runs through without waiting while the test sees what it asked for.
// onArm, when set, runs instead of moving the clock.
type instantClock struct {
	once  sync.Once
	fc    *clocktest.FakeClock
	mu    sync.Mutex
	waits []time.Duration
	onArm func()
}

func (c *instantClock) fake() *clocktest.FakeClock {
	c.once.Do(func() { c.fc = clocktest.NewFakeClock(time.Unix(1e9, 0)) })
	return c.fc
}

func (c *instantClock) Now() time.Time { return c.fake().Now() }

func (c *instantClock) NewTimerAt(deadline time.Time) workqueue.Timer {
	fc := c.fake()
	c.mu.Lock()
	c.waits = append(c.waits, deadline.Sub(fc.Now()))
	c.mu.Unlock()
	t := fc.NewTimerAt(deadline)
	if c.onArm != nil {
		c.onArm()
	} else {
		fc.SetTime(deadline)
	}
	return t
}

var conflictErr = client.NewStatusError(metav1.NewConflict(metav1.GroupResource{Resource: "configmaps"}, "x", errors.New("injected")))

func TestRetryOnConflict(t *testing.T) {
	other := errors.New("other")
	ms := time.Millisecond
	tests := []struct {
		name      string
		backoff   controllerutil.Backoff
		conflicts int   // fn's first answers are conflicts
		then      error // and then this
		wantCalls int
		wantErr   error
		// waits in [min[i], max[i]]
		min, max []time.Duration
	}{
		{"success at once", controllerutil.Backoff{}, 0, nil, 1, nil, nil, nil},
		{"default: 10ms with 10% jitter", controllerutil.Backoff{}, 2, nil, 3, nil,
			[]time.Duration{10 * ms, 10 * ms}, []time.Duration{11 * ms, 11 * ms}},
		{"default: 5 attempts then the conflict", controllerutil.Backoff{}, 9, nil, 5, conflictErr,
			[]time.Duration{10 * ms, 10 * ms, 10 * ms, 10 * ms}, []time.Duration{11 * ms, 11 * ms, 11 * ms, 11 * ms}},
		{"another error at once", controllerutil.Backoff{}, 1, other, 2, other,
			[]time.Duration{10 * ms}, []time.Duration{11 * ms}},
		{"factor, no jitter, cap", controllerutil.Backoff{Steps: 4, Duration: ms, Factor: 3, Jitter: -1, Cap: 5 * ms}, 9, nil, 4, conflictErr,
			[]time.Duration{ms, 3 * ms, 5 * ms}, []time.Duration{ms, 3 * ms, 5 * ms}},
		{"DefaultBackoff spelled out is the zero one", controllerutil.DefaultBackoff, 9, nil, 5, conflictErr,
			[]time.Duration{10 * ms, 10 * ms, 10 * ms, 10 * ms}, []time.Duration{11 * ms, 11 * ms, 11 * ms, 11 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &instantClock{}
			tt.backoff.Clock = clock
			calls := 0
			err := controllerutil.RetryOnConflict(context.Background(), tt.backoff, func() error {
				calls++
				if calls <= tt.conflicts {
					return conflictErr
				}
				return tt.then
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if calls != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls, tt.wantCalls)
			}
			if len(clock.waits) != len(tt.min) {
				t.Fatalf("waits %v, want %d", clock.waits, len(tt.min))
			}
			for i, w := range clock.waits {
				if w < tt.min[i] || w > tt.max[i] {
					t.Errorf("wait %d = %v, want within [%v, %v]", i, w, tt.min[i], tt.max[i])
				}
			}
		})
	}
}

// TestRetryOnConflictContext: a context ended during a wait stops the retries
// and both the conflict and the context's error are reported; an ended
// context runs nothing.
func TestRetryOnConflictContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &instantClock{onArm: cancel} // the clock never moves: only ctx ends the wait
	calls := 0
	done := make(chan error, 1)
	go func() {
		done <- controllerutil.RetryOnConflict(ctx, controllerutil.Backoff{Clock: clock}, func() error {
			calls++
			return conflictErr
		})
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		clock.fake().Step(time.Hour) // let the retry end so no goroutine is left
		<-done
		t.Fatal("RetryOnConflict kept waiting after its context ended")
	}
	if !errors.Is(err, context.Canceled) || !client.IsConflict(err) || calls != 1 {
		t.Fatalf("err = %v after %d calls, want the conflict and context.Canceled after 1", err, calls)
	}
	if n := clock.fake().Timers(); n != 0 {
		t.Errorf("%d timers left armed", n)
	}
	err = controllerutil.RetryOnConflict(ctx, controllerutil.Backoff{}, func() error { calls++; return nil })
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("err = %v, calls %d: fn ran on an ended context", err, calls)
	}
}
