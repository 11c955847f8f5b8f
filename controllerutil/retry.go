package controllerutil

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/workqueue"
)

// Backoff says how often and how fast [RetryOnConflict] retries. Its zero
// value is client-go's retry.DefaultRetry: 5 attempts, the first retry after
// 10ms, every later one after the same 10ms (factor 1), each wait lengthened
// by up to 10% at random (jitter 0.1). Zero fields take those defaults one
// by one.
type Backoff struct {
	// Steps is how many times fn runs at most, the first included
	// (default 5).
	Steps int
	// Duration is the wait before the first retry (default 10ms).
	Duration time.Duration
	// Factor multiplies the wait after each retry (default 1: a constant
	// wait; values below 1 count as 1).
	Factor float64
	// Jitter lengthens each wait by a random fraction of it, up to Jitter
	// (default 0.1); a negative value means no jitter.
	Jitter float64
	// Cap bounds each wait, jitter included (default: no bound).
	Cap time.Duration
	// Clock measures the waits (default workqueue.RealClock); tests inject
	// a clocktest.FakeClock.
	Clock workqueue.Clock
}

// DefaultBackoff is the zero Backoff with its defaults spelled out, as
// client-go's retry.DefaultRetry.
var DefaultBackoff = Backoff{Steps: 5, Duration: 10 * time.Millisecond, Factor: 1, Jitter: 0.1}

// withDefaults fills the zero fields of b.
func (b Backoff) withDefaults() Backoff {
	if b.Steps <= 0 {
		b.Steps = DefaultBackoff.Steps
	}
	if b.Duration <= 0 {
		b.Duration = DefaultBackoff.Duration
	}
	if b.Factor < 1 {
		b.Factor = DefaultBackoff.Factor
	}
	switch {
	case b.Jitter == 0:
		b.Jitter = DefaultBackoff.Jitter
	case b.Jitter < 0:
		b.Jitter = 0
	}
	if b.Clock == nil {
		b.Clock = workqueue.RealClock{}
	}
	return b
}

// wait returns the i-th wait (i from 0), jitter and cap applied.
func (b Backoff) wait(i int) time.Duration {
	d := float64(b.Duration)
	for range i {
		d *= b.Factor
	}
	d += d * b.Jitter * rand.Float64()
	w := time.Duration(d)
	if b.Cap > 0 && w > b.Cap {
		w = b.Cap
	}
	return w
}

// RetryOnConflict runs fn until it returns anything but a Conflict
// (client.IsConflict), waiting between attempts as b says, and returns
// fn's last error: nil on success, a non-conflict error at once, the last
// conflict once b.Steps attempts are used up. fn should read the object
// afresh on each attempt, make its change and write it with the
// resourceVersion it read (CreateOrUpdate does).
//
// When ctx ends during a wait, RetryOnConflict stops and returns the last
// conflict together with ctx's error (errors.Is matches both); fn is not
// run once ctx has ended.
func RetryOnConflict(ctx context.Context, b Backoff, fn func() error) error {
	b = b.withDefaults()
	var err error
	for i := range b.Steps {
		if cerr := ctx.Err(); cerr != nil {
			if err == nil {
				return cerr
			}
			return fmt.Errorf("%w (retry stopped: %w)", err, cerr)
		}
		if err = fn(); err == nil || !client.IsConflict(err) || i == b.Steps-1 {
			return err
		}
		t := b.Clock.NewTimerAt(b.Clock.Now().Add(b.wait(i)))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
		}
	}
	return err
}
