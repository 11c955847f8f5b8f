// Package clocktest provides a fake [workqueue.Clock] for tests: time stands
// still until the test moves it with Step or SetTime, and timers fire exactly
// when the fake time reaches their deadline. Tests built on it never sleep
// and give the same result on a loaded machine as on an idle one.
package clocktest

import (
	"sync"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
)

// FakeClock is a [workqueue.Clock] whose time changes only when told to. It
// is safe for concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

var _ workqueue.Clock = (*FakeClock)(nil)

// NewFakeClock returns a FakeClock whose time is start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: make(map[*fakeTimer]struct{})}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since returns the fake time elapsed since t.
func (c *FakeClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// NewTimerAt returns a timer that fires when the fake time reaches deadline,
// at once if it already has.
func (c *FakeClock) NewTimerAt(deadline time.Time) workqueue.Timer {
	t := &fakeTimer{clock: c, deadline: deadline, c: make(chan time.Time, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !deadline.After(c.now) {
		t.c <- c.now
		return t
	}
	c.timers[t] = struct{}{}
	return t
}

// Step moves the fake time forward by d and fires every timer whose deadline
// has been reached. A negative d moves time backward and fires nothing.
func (c *FakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// SetTime sets the fake time to t and fires every timer whose deadline has
// been reached.
func (c *FakeClock) SetTime(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(t)
}

func (c *FakeClock) setLocked(t time.Time) {
	c.now = t
	for timer := range c.timers {
		if !timer.deadline.After(t) {
			delete(c.timers, timer)
			timer.c <- t // capacity 1, and a timer fires once: never blocks
		}
	}
}

// Timers returns the number of armed timers that have neither fired nor been
// stopped.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

type fakeTimer struct {
	clock    *FakeClock
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// Stop disarms the timer and discards a firing not yet received, so that no
// value arrives on C after Stop returns.
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	_, armed := t.clock.timers[t]
	delete(t.clock.timers, t)
	select {
	case <-t.c:
	default:
	}
	return armed
}
