package workqueue

// RateLimitingQueue is a [DelayingQueue] that asks a [RateLimiter] how long to
// delay each retry. A typical worker calls Forget after an item succeeds (or
// is given up on) and AddRateLimited after it fails, and Done in both cases.
type RateLimitingQueue[T comparable] interface {
	DelayingQueue[T]
	// AddRateLimited adds item after the delay the rate limiter returns for
	// it, recording one more failure. After ShutDown it does nothing and
	// the rate limiter is not consulted.
	AddRateLimited(item T)
	// Forget tells the rate limiter to stop tracking item. It does not
	// remove the item from the queue and does not replace Done.
	Forget(item T)
	// NumRequeues returns how many failures the rate limiter tracks for
	// item.
	NumRequeues(item T) int
}

// NewRateLimiting returns an empty [RateLimitingQueue] whose retries are
// paced by limiter; nil means [DefaultControllerRateLimiter] (timed by
// cfg.Clock). Like [NewDelaying], it owns one goroutine, stopped by
// ShutDown.
//
// Call Forget when an item is finished, or its failures are remembered for
// as long as the queue lives.
func NewRateLimiting[T comparable](limiter RateLimiter[T], cfg Config) RateLimitingQueue[T] {
	if limiter == nil {
		limiter = defaultControllerRateLimiter[T](cfg.clock())
	}
	return &rateLimiting[T]{delaying: newDelaying[T](cfg), limiter: limiter}
}

type rateLimiting[T comparable] struct {
	*delaying[T]
	limiter RateLimiter[T]
}

var _ RateLimitingQueue[string] = (*rateLimiting[string])(nil)

// AddRateLimited implements [RateLimitingQueue].
func (q *rateLimiting[T]) AddRateLimited(item T) {
	if q.ShuttingDown() {
		return
	}
	q.AddAfter(item, q.limiter.When(item))
}

// Forget implements [RateLimitingQueue].
func (q *rateLimiting[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues implements [RateLimitingQueue].
func (q *rateLimiting[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
