package reflector

// Metrics receives a reflector's lists and watches, so that callers can
// export them to the metrics system of their choice without the reflector
// importing one: set it in [Config.Metrics], one per reflector. The
// metrics package (github.com/kapi-dev/kapi/metrics) exports them to
// Prometheus.
//
// Methods are called from Run's goroutine; implementations must be safe
// for concurrent use (a scrape reads what they record) and should not
// block.
type Metrics interface {
	// Listed is called when a list, paged or streaming, has replaced the
	// store's contents, with the number of objects stored; relist is false
	// for the reflector's first list and true for every later one (after
	// its watch expired, or an error).
	Listed(items int, relist bool)
	// Watched is called each time a watch is opened: after a list, again
	// after a watch ends, and for a streaming list.
	Watched()
}

// listed reports a list of items to Config.Metrics and marks the store
// synced at rv.
func (r *Reflector[T]) listed(items int, rv string) {
	if m := r.cfg.Metrics; m != nil {
		m.Listed(items, r.synced.Load())
	}
	r.setSynced(rv)
}

// watched reports an opened watch to Config.Metrics.
func (r *Reflector[T]) watched() {
	if m := r.cfg.Metrics; m != nil {
		m.Watched()
	}
}
