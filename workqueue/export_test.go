package workqueue

// DefaultControllerRateLimiterWithClock exposes the default controller rate
// limiter with an injected clock, so that tests can check its token bucket
// exactly.
func DefaultControllerRateLimiterWithClock[T comparable](c Clock) RateLimiter[T] {
	return defaultControllerRateLimiter[T](c)
}
