package controller

import "time"

// Outcome is how a reconcile ended, as reported to [Metrics]: the values
// are controller-runtime's "result" label values where they coincide.
type Outcome string

const (
	// OutcomeSuccess: no error and no RequeueAfter.
	OutcomeSuccess Outcome = "success"
	// OutcomeRequeueAfter: no error and a positive Result.RequeueAfter.
	OutcomeRequeueAfter Outcome = "requeue_after"
	// OutcomeError: the reconciler returned an error (including a
	// timeout's, and an error returned because the controller is stopping).
	OutcomeError Outcome = "error"
	// OutcomePanic: the reconciler panicked; the panic is retried as an
	// error.
	OutcomePanic Outcome = "panic"
)

// Metrics receives a controller's reconciles, so that callers can export
// them to the metrics system of their choice without the controller
// importing one: set it in [Config.Metrics], one per controller. The
// metrics package (github.com/kapi-dev/kapi/metrics) exports them to
// Prometheus under controller-runtime's names.
//
// Methods are called by the workers, concurrently; implementations must be
// safe for concurrent use and should not block. Requests are not passed,
// which keeps label cardinality bounded. The number of workers reconciling
// is the number of ReconcileStarted calls minus the number of
// ReconcileFinished calls.
type Metrics interface {
	// ReconcileStarted is called when a worker calls the reconciler.
	ReconcileStarted()
	// ReconcileFinished is called when the reconciler has returned (or
	// panicked), with how it ended and how long it took on Config.Clock.
	ReconcileFinished(outcome Outcome, took time.Duration)
}
