// Package workqueue provides the work queues that controllers use between
// their event handlers and their workers: de-duplicating, never handing one
// item to two workers, able to delay an item, and able to pace retries with
// a rate limiter. It has the processing semantics of client-go's
// k8s.io/client-go/util/workqueue, generic over the item type.
//
// # Queues
//
// Three interfaces build on each other, each made by one constructor:
//
//   - [Queue], from [New]: Add, Get, Done, Len and shutdown;
//   - [DelayingQueue], from [NewDelaying]: adds AddAfter;
//   - [RateLimitingQueue], from [NewRateLimiting]: adds AddRateLimited,
//     Forget and NumRequeues, delaying each retry by a [RateLimiter].
//
// [Queue] itself is composed of [Adder], [Consumer] and [ShutDowner], so code
// that only enqueues (an informer handler) or only processes can ask for
// just that.
//
// Items are any comparable type; controllers use keys such as
// "namespace/name" rather than objects, so that the latest state is read
// from a cache when the key is processed.
//
// # Processing guarantees
//
//   - De-duplication: an item is pending at most once. Adding it again
//     before a worker takes it changes nothing, so a burst of events for one
//     object costs one reconcile.
//   - Exclusivity: Get hands an item to one worker, which owns it until it
//     calls Done. Adding the item meanwhile marks it pending; it is queued
//     again by Done, so the change is processed after, never concurrently.
//   - Order: otherwise items are handed out first in, first out.
//   - Shutdown: after ShutDown, Add is ignored, Get hands out what is still
//     queued and then reports shutdown. ShutDownWithDrain also waits for
//     every item handed out to be Done.
//
// # Delays and rate limits
//
// AddAfter keeps waiting items in a heap ordered by ready time; for each
// item the earliest requested time wins. One goroutine per delaying queue
// sleeps on a timer for the earliest ready time and moves due items to the
// queue. It belongs to the queue: ShutDown stops it and returns only after
// it has exited.
//
// A [RateLimiter] turns an item's failures into a delay.
// [NewItemExponentialFailureRateLimiter] doubles a per-item delay up to a
// cap; [NewBucketRateLimiter] paces all items together with a token bucket
// from golang.org/x/time/rate; [NewMaxOfRateLimiter] takes the longest of
// several. [DefaultControllerRateLimiter] is client-go's default: 5ms
// doubling to 1000s per item, at most 10 retries a second overall with
// bursts of 100. Call Forget when an item is done, or its failure count is
// kept.
//
// # Time and testing
//
// Every queue reads time through the [Clock] in its [Config] (by default
// [RealClock]). The clocktest subpackage provides a fake clock whose Step
// moves time and fires due timers at once, so tests of delays and backoff
// are exact and never sleep.
//
// # Metrics
//
// Set [Config.Metrics] to receive each queue's events (items added, started
// with their time in the queue, finished with their processing time,
// retries) and export them as you wish. There is no global registry. A
// Metrics that is also an [InFlightMetrics] is given a function reporting
// the work in progress, to read when it is scraped. The metrics package
// (github.com/kapi-dev/kapi/metrics) exports them to Prometheus.
//
// # Concurrency
//
// Every method of every queue and rate limiter in this package is safe for
// concurrent use.
package workqueue
