// Package controller runs reconcilers: it turns the notifications of a
// factory's informers into requests ("namespace/name"), queues them in a
// rate-limited work queue, and calls a Reconciler for each with a pool of
// workers, retrying failures with backoff. It is controller-runtime's
// builder and controller, and kube-rs's Controller, on kapi's informer and
// workqueue packages.
//
// # Sources
//
// New makes a controller for a primary kind T, read from the factory's
// informer for T (informer.For): every change to a T enqueues that T's
// request. Owns adds a kind whose objects enqueue their controlling owner
// (the ownerReference with controller: true whose group and kind are T's),
// as a Deployment owns its ReplicaSets; Watches adds a kind whose objects
// are mapped to requests by a function.
//
//	ctl := controller.New[corev1.ConfigMap](factory, reconciler, controller.Config{Workers: 2})
//	controller.Owns[corev1.Secret](ctl)
//	controller.Watches(ctl, func(ns *corev1.Namespace) []controller.Request { ... })
//	err := ctl.Run(ctx)
//
// Each source takes predicates, typed filters of its notifications:
// GenerationChanged, LabelsChanged, AnnotationsChanged, or a Predicate
// of your own functions. A source enqueues only what all its predicates
// let through.
//
// # Reconciling
//
// A Reconciler gets a Request and reads the object's current state itself,
// usually from the informer's Lister: it is told which object to look at,
// never what changed, so a missed or merged notification loses nothing.
// Its outcome decides what happens to the request:
//
//   - an error (or a panic, recovered and turned into an error) retries it
//     after the per-request exponential backoff of Config.RateLimiter;
//   - success forgets its backoff, and, if Result.RequeueAfter is set,
//     reconciles it again after that delay;
//   - a request is never reconciled by two workers at once: a change during
//     a reconcile queues it again for after.
//
// Config.ReconcileTimeout bounds every reconcile through its context;
// Config.Debounce merges a burst of notifications for one request into one
// reconcile, as kube-rs's debounce.
//
// # Running and stopping
//
// Run starts the informers the controller needs, waits until its handlers
// have seen every existing object, and then runs Config.Workers workers
// until its context is done. It then stops taking requests, waits for the
// reconciles in flight (their context is done too), and returns once every
// goroutine it started has stopped.
//
// # Time and testing
//
// Backoff, RequeueAfter, Debounce and ReconcileTimeout read Config.Clock,
// so a test with a clocktest.FakeClock decides when they elapse. A test
// on the fake server (package fake) changes objects, waits with WaitIdle
// until nothing is queued, waiting to be retried or being reconciled, and
// checks the result.
//
// # Metrics
//
// Config.Metrics ([Metrics]) is told each reconcile's [Outcome] and
// duration, and Config.QueueMetrics the work queue's events; the metrics
// package (github.com/kapi-dev/kapi/metrics) exports both to Prometheus.
package controller
