package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Retry policy.
//
// A request is retried only when repeating it cannot do anything the first
// attempt did not, and only for faults that say nothing was done, or that
// nothing harmful can have been:
//
//   - Which requests: GET and HEAD (get, list, watch, discovery) always. A PUT
//     (update) only when the object it sends carries a resourceVersion: if the
//     first attempt went through, the repeat fails with 409 Conflict instead of
//     overwriting a change made in between. A DELETE of one object only when it
//     carries a precondition (uid or resourceVersion): without one, a repeat
//     could delete an object re-created under the same name in between. POST
//     (create) and PATCH (patch, apply) never: a create could run twice, and a
//     patch such as a JSON patch "add" to a list is not idempotent.
//     DELETE of a collection never. Request.Retryable overrides this.
//     client-go also repeats a POST answered by 429 with Retry-After (the
//     server did not run it); kapi does not, so that callers never have to
//     wonder whether a create ran twice.
//   - Which faults: 429 Too Many Requests, 503 Service Unavailable and 504
//     Gateway Timeout (including "too large resourceVersion"), and connection
//     failures before a response: refused, reset, or closed (EOF, an HTTP/2
//     GOAWAY). Not 500, not timeouts of the caller's context.
//   - How long to wait: the Retry-After header when the response has one (at
//     most maxRetryAfter), otherwise jittered exponential backoff from
//     retryInitialInterval doubling up to retryMaxInterval, with ±50% jitter
//     so that many clients do not retry in step.
//   - How often: Config.MaxRetries more attempts (default 5), each taking a
//     token from the rate limiter like any request. Waiting stops at once when
//     the context is done.
//
// Every retry is logged at debug level.

const (
	// retryInitialInterval is the first backoff delay: long enough for a
	// restarting server or load balancer to come back, short enough not to
	// be noticed in an interactive tool.
	retryInitialInterval = 250 * time.Millisecond
	// retryMaxInterval caps a backoff delay.
	retryMaxInterval = 30 * time.Second
	// retryJitter is the backoff's randomization factor: a delay d becomes a
	// random delay in [d/2, 3d/2].
	retryJitter = 0.5
	// maxRetryAfter caps the delay a Retry-After header can ask for, so that a
	// misconfigured server cannot park a caller without a deadline for hours.
	maxRetryAfter = 5 * time.Minute
)

// retryableStatus reports whether an HTTP status is worth retrying.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryableConnError reports whether err, from sending a request, is a
// connection failure worth retrying: refused, reset, or closed before a
// response (EOF, broken pipe, HTTP/2 GOAWAY). Context errors are not.
func retryableConnError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed):
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection reset by peer") ||
		strings.Contains(msg, "http2: server sent GOAWAY") ||
		strings.Contains(msg, "server closed idle connection")
}

// retryBackOff is the backoff of one request: exponential with jitter, except
// that a delay the server asked for (Retry-After) is used as is for the next
// wait.
type retryBackOff struct {
	exp       *backoff.ExponentialBackOff
	requested time.Duration
	hasDelay  bool
}

func newRetryBackOff() *retryBackOff {
	exp := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(retryInitialInterval),
		backoff.WithMaxInterval(retryMaxInterval),
		backoff.WithRandomizationFactor(retryJitter),
		backoff.WithMultiplier(2),
		backoff.WithMaxElapsedTime(0), // bounded by the retry count and the context instead
	)
	return &retryBackOff{exp: exp}
}

// setRetryAfter makes the next wait d, as the server asked.
func (b *retryBackOff) setRetryAfter(d time.Duration) { b.requested, b.hasDelay = d, true }

// NextBackOff implements backoff.BackOff. A server-requested delay still
// advances the exponential sequence, so that a server that keeps asking for 0
// seconds is not hammered once it stops asking.
func (b *retryBackOff) NextBackOff() time.Duration {
	next := b.exp.NextBackOff()
	if b.hasDelay {
		next, b.hasDelay = b.requested, false
	}
	return next
}

// Reset implements backoff.BackOff.
func (b *retryBackOff) Reset() {
	b.exp.Reset()
	b.hasDelay = false
}

// realTimer is backoff's timer on the real clock; tests substitute one that
// records the delays and fires at once.
type realTimer struct{ t *time.Timer }

// Start implements backoff.Timer.
func (t *realTimer) Start(d time.Duration) {
	if t.t == nil {
		t.t = time.NewTimer(d)
	} else {
		t.t.Reset(d)
	}
}

// Stop implements backoff.Timer.
func (t *realTimer) Stop() {
	if t.t != nil {
		t.t.Stop()
	}
}

// C implements backoff.Timer.
func (t *realTimer) C() <-chan time.Time { return t.t.C }
