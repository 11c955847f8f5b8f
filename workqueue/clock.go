package workqueue

import "time"

// Clock is the source of time for a queue: it reads the current time and
// arms timers. The zero Config uses [RealClock]; tests inject a fake such as
// [github.com/kapi-dev/kapi/workqueue/clocktest.FakeClock] so that delays
// elapse only when the test says so.
//
// Timers are armed for an absolute deadline rather than a duration. A fake
// clock can then never lose a wake-up: a timer armed for a deadline the clock
// has already passed fires at once, however the arming goroutine and the
// goroutine moving the clock interleave.
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimerAt returns a timer that fires once, when the clock reaches
	// deadline, or immediately if it already has.
	NewTimerAt(deadline time.Time) Timer
}

// Timer is a one-shot timer made by a [Clock].
type Timer interface {
	// C returns the channel on which the timer delivers the time it fired.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the call
	// stopped the timer, false if it had already fired or been stopped.
	// After Stop returns, no value is received from C.
	Stop() bool
}

// RealClock is the [Clock] of the running system, backed by the time package.
// Its zero value is ready to use.
type RealClock struct{}

var _ Clock = RealClock{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// NewTimerAt returns a [time.Timer] that fires at deadline.
func (RealClock) NewTimerAt(deadline time.Time) Timer {
	return realTimer{time.NewTimer(time.Until(deadline))}
}

// realTimer adapts *time.Timer, whose channel is a field, to [Timer].
type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }

// Stop relies on the Go 1.23 timer semantics: once Stop returns, no stale
// value is left in the channel.
func (r realTimer) Stop() bool { return r.t.Stop() }
