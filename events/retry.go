package events

import (
	"context"
	"errors"

	"github.com/kapi-dev/kapi/client"
)

// write runs op, the write of an Event or of a series, and retries it
// while it fails with an error that may pass (see retriable), up to
// Config.MaxRetries times, after a backoff on Config.Clock: RetryBackoff,
// doubling up to MaxRetryBackoff. retry tells op whether an earlier
// attempt may have been applied (its answer lost). Once Run's context is
// done (r.stopping), a failed write is retried once more, at once, and no
// more. It returns op's last error.
func (r *Recorder) write(ctx context.Context, op func(ctx context.Context, retry bool) error) error {
	delay, last := RetryBackoff, false
	for attempt := 0; ; attempt++ {
		err := op(ctx, attempt > 0)
		if err == nil || last || attempt >= r.cfg.MaxRetries || !retriable(err) || ctx.Err() != nil {
			return err
		}
		r.retried.Add(1)
		timer := r.cfg.Clock.NewTimerAt(r.cfg.Clock.Now().Add(delay))
		select {
		case <-timer.C():
		case <-r.stopping: // flushing: the last attempt, at once
			timer.Stop()
			last = true
		case <-ctx.Done():
			timer.Stop()
			return err
		}
		delay = min(2*delay, MaxRetryBackoff)
	}
}

// retriable reports whether a write that failed with err may succeed if
// made again: the server was overloaded or failing (429, 500, 503, 504, a
// server timeout) or the connection failed. What the server refused
// (400s: invalid, forbidden, conflict, a missing namespace) and the end
// of the writer's context are final.
func retriable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var se *client.StatusError
	if !errors.As(err, &se) {
		return true // no answer: the connection failed
	}
	return client.IsTooManyRequests(err) || client.IsInternalError(err) || client.IsServiceUnavailable(err) ||
		client.IsServerTimeout(err) || client.IsTimeout(err)
}
