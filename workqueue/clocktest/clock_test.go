package clocktest_test

import (
	"testing"
	"time"

	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fired reports whether a value is waiting on c, without blocking.
func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestFakeClock(t *testing.T) {
	c := clocktest.NewFakeClock(epoch)
	if got := c.Now(); !got.Equal(epoch) {
		t.Fatalf("Now() = %v, want %v", got, epoch)
	}

	tests := []struct {
		name      string
		deadline  time.Duration // after the clock's time when armed
		step      time.Duration
		wantFired bool
	}{
		{"past deadline fires at once", -time.Second, 0, true},
		{"deadline now fires at once", 0, 0, true},
		{"before deadline", time.Second, 999 * time.Millisecond, false},
		{"at deadline", time.Second, time.Second, true},
		{"after deadline", time.Second, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timer := c.NewTimerAt(c.Now().Add(tt.deadline))
			defer timer.Stop()
			c.Step(tt.step)
			if got := fired(timer.C()); got != tt.wantFired {
				t.Errorf("fired = %v, want %v", got, tt.wantFired)
			}
		})
	}
}

func TestFakeClockStop(t *testing.T) {
	c := clocktest.NewFakeClock(epoch)
	timer := c.NewTimerAt(epoch.Add(time.Second))
	if c.Timers() != 1 {
		t.Fatalf("Timers() = %d, want 1", c.Timers())
	}
	if !timer.Stop() {
		t.Error("Stop of an armed timer = false, want true")
	}
	if timer.Stop() {
		t.Error("second Stop = true, want false")
	}
	c.Step(time.Hour)
	if fired(timer.C()) {
		t.Error("stopped timer fired")
	}

	// A timer that fired but was not received: Stop discards the value.
	timer = c.NewTimerAt(c.Now().Add(time.Second))
	c.Step(time.Second)
	if timer.Stop() {
		t.Error("Stop of a fired timer = true, want false")
	}
	if fired(timer.C()) {
		t.Error("value received after Stop")
	}
	if c.Timers() != 0 {
		t.Errorf("Timers() = %d, want 0", c.Timers())
	}
}

func TestFakeClockSetTime(t *testing.T) {
	c := clocktest.NewFakeClock(epoch)
	timer := c.NewTimerAt(epoch.Add(time.Minute))
	c.SetTime(epoch.Add(time.Minute))
	if !fired(timer.C()) {
		t.Error("timer did not fire at SetTime to its deadline")
	}
	if got := c.Since(epoch); got != time.Minute {
		t.Errorf("Since(epoch) = %v, want 1m", got)
	}
}
