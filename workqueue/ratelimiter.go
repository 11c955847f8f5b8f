package workqueue

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long an item must wait before it is retried.
// Implementations must be safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When records a failure of item and returns how long to wait before
	// retrying it.
	When(item T) time.Duration
	// Forget stops tracking item, whether it finally succeeded or was given
	// up on; its next failure counts as the first.
	Forget(item T)
	// NumRequeues returns how many failures of item are being tracked.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter returns the rate limiter client-go gives
// controllers: the larger of a per-item exponential backoff (5ms, doubling,
// capped at 1000s) and an overall token bucket (10 retries per second, bursts
// of 100). The backoff keeps one failing item from spinning; the bucket keeps
// many failing items from flooding the API server together.
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return defaultControllerRateLimiter[T](RealClock{})
}

func defaultControllerRateLimiter[T comparable](clock Clock) RateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](rate.NewLimiter(rate.Limit(10), 100), clock),
	)
}

// NewItemExponentialFailureRateLimiter returns a per-item exponential
// backoff: the n-th consecutive failure of an item (counting from 0) waits
// base * 2^n, capped at maxDelay. The count grows until Forget; expiring
// items after too many failures is up to the caller (see NumRequeues).
func NewItemExponentialFailureRateLimiter[T comparable](base, maxDelay time.Duration) RateLimiter[T] {
	return &itemExponential[T]{
		failures: make(map[T]int),
		base:     max(base, 0),
		maxDelay: max(maxDelay, 0),
	}
}

type itemExponential[T comparable] struct {
	mu       sync.Mutex
	failures map[T]int
	base     time.Duration
	maxDelay time.Duration
}

// When implements [RateLimiter].
func (r *itemExponential[T]) When(item T) time.Duration {
	r.mu.Lock()
	n := r.failures[item]
	r.failures[item] = n + 1
	r.mu.Unlock()
	return backoff(r.base, r.maxDelay, n)
}

// backoff returns min(base*2^n, maxDelay) without overflowing; base and
// maxDelay are not negative.
func backoff(base, maxDelay time.Duration, n int) time.Duration {
	if base == 0 {
		return 0
	}
	// base*2^n <= maxDelay exactly when base <= maxDelay/2^n, rounded down.
	if n >= 63 || base > maxDelay>>n {
		return maxDelay
	}
	return base << n
}

// Forget implements [RateLimiter].
func (r *itemExponential[T]) Forget(item T) {
	r.mu.Lock()
	delete(r.failures, item)
	r.mu.Unlock()
}

// NumRequeues implements [RateLimiter].
func (r *itemExponential[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// NewBucketRateLimiter returns a rate limiter shared by all items: every
// When takes a token from limiter and returns how long until that token is
// available. It tracks no items, so Forget does nothing and NumRequeues is 0.
// A limiter whose burst is 0 can never grant a token; When then returns
// [rate.InfDuration].
//
// clock supplies the time passed to limiter (nil means [RealClock]); the
// limiter may be shared, or retuned with SetLimit and SetBurst, while in use.
func NewBucketRateLimiter[T comparable](limiter *rate.Limiter, clock Clock) RateLimiter[T] {
	if clock == nil {
		clock = RealClock{}
	}
	return &bucket[T]{limiter: limiter, clock: clock}
}

type bucket[T comparable] struct {
	limiter *rate.Limiter
	clock   Clock
}

// When implements [RateLimiter].
func (r *bucket[T]) When(T) time.Duration {
	now := r.clock.Now()
	return r.limiter.ReserveN(now, 1).DelayFrom(now)
}

// Forget implements [RateLimiter]; it does nothing.
func (r *bucket[T]) Forget(T) {}

// NumRequeues implements [RateLimiter]; it returns 0.
func (r *bucket[T]) NumRequeues(T) int { return 0 }

// NewMaxOfRateLimiter combines limiters: When asks every one of them (so each
// records the failure) and returns the longest wait, NumRequeues returns the
// largest count, and Forget is passed to all.
//
// With a token bucket among the limiters, a token is taken even when another
// limiter's wait is longer, so the bucket may look exceeded over a short
// window.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) RateLimiter[T] {
	return maxOf[T](append([]RateLimiter[T](nil), limiters...))
}

type maxOf[T comparable] []RateLimiter[T]

// When implements [RateLimiter].
func (m maxOf[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range m {
		d = max(d, l.When(item))
	}
	return d
}

// Forget implements [RateLimiter].
func (m maxOf[T]) Forget(item T) {
	for _, l := range m {
		l.Forget(item)
	}
}

// NumRequeues implements [RateLimiter].
func (m maxOf[T]) NumRequeues(item T) int {
	var n int
	for _, l := range m {
		n = max(n, l.NumRequeues(item))
	}
	return n
}
