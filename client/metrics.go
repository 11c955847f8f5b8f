package client

import "time"

// RequestMetrics receives a client's request metrics, so that callers can
// export them to the metrics system of their choice without the client
// importing one: set it in [Config.Metrics]. The metrics package
// (github.com/kapi-dev/kapi/metrics) exports them to Prometheus under
// client-go's names.
//
// Methods are called from the goroutines making requests, concurrently;
// implementations must be safe for concurrent use and should not block.
// Paths and names are not passed, which keeps label cardinality bounded.
type RequestMetrics interface {
	// RateLimited is called each time a request attempt has waited for the
	// client's rate limiter (Config.QPS and Burst), however briefly, with
	// the server's host (as in Config.Host, such as "10.0.0.1:6443"), the
	// request's HTTP method (the verb) and the wait. It is not called when
	// the limit is disabled.
	RateLimited(host, method string, waited time.Duration)
	// Requested is called once per attempt that reached the transport (a
	// retried request is reported once per attempt), with the server's
	// host, the HTTP method, the status code (0 when there was no
	// response, such as a connection error or a cancelled context) and the
	// time until the response's headers arrived. For a watch or a streamed
	// list, the body that follows is not counted.
	Requested(host, method string, code int, latency time.Duration)
}
