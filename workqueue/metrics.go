package workqueue

import "time"

// Metrics receives a queue's events so that callers can export depth,
// throughput, latency and retry counts to the metrics system of their
// choice. The package keeps no registry of its own: pass an implementation
// in [Config.Metrics], one per queue, and label it however you like.
//
// Methods are called after the queue has released its lock, so they may be
// slow or call back into the queue without deadlock, but calls from
// different goroutines may arrive in any order and concurrently.
// Implementations must be safe for concurrent use. Items are not passed to
// the hooks, which keeps label cardinality bounded.
//
// Queue depth is the number of Added calls minus the number of Started calls.
type Metrics interface {
	// Added is called when an item becomes pending: it was not already
	// waiting to be processed. Adding an item that is already pending is not
	// reported.
	Added()
	// Started is called when Get hands an item to a worker; queued is how
	// long the item was pending, measured from its Added event.
	Started(queued time.Duration)
	// Finished is called when Done is called for an item being processed;
	// worked is how long since Get handed it out.
	Finished(worked time.Duration)
	// Retried is called for every AddAfter (and so every AddRateLimited)
	// accepted by a delaying queue, whatever the delay.
	Retried()
}

// InFlightMetrics is a [Metrics] that also reports the work in progress, as
// client-go's unfinished-work and longest-running-processor gauges: an
// exporter reads it when it is scraped, so no goroutine polls the queue.
type InFlightMetrics interface {
	Metrics
	// ObserveInFlight is called once, by the queue's constructor, with a
	// function that returns, when called, how long the items handed out by
	// Get and not yet Done have been processed in total and the longest of
	// them, on the queue's Clock (zero when no item is being processed).
	// inFlight is safe for concurrent use and takes the queue's lock
	// briefly; it must not be called from the other hooks.
	ObserveInFlight(inFlight func() (total, longest time.Duration))
}
