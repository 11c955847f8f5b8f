// Package leaderelection elects one leader among the replicas of a
// controller with a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection does, and stops the leader's work before another replica
// can start.
//
// # Use
//
// Every replica makes a [LeaderElector] from one [Config] and calls Run:
//
//	le, err := leaderelection.New(c, leaderelection.Config{
//		Namespace: "kube-system",
//		Name:      "my-controller",
//		Identity:  podName,
//		OnStartedLeading: func(ctx context.Context) {
//			runControllers(ctx) // must return soon after ctx is cancelled
//		},
//	})
//	if err != nil { … }
//	err = le.Run(ctx) // nil when ctx ends, ErrLeaseLost when the lease is lost
//
// Name, Identity and OnStartedLeading are required; LeaseDuration,
// RenewDeadline and RetryPeriod default to client-go's 15s, 10s and 2s, and
// New rejects settings that cannot be safe (RenewDeadline not below
// LeaseDuration, RetryPeriod not below RenewDeadline, a LeaseDuration that
// is not whole seconds), naming each.
//
// # The Lease
//
// The Lease is written as client-go writes it, so kapi and client-go
// candidates can share one: holderIdentity, leaseDurationSeconds,
// acquireTime and renewTime (MicroTime, the candidate's clock), and
// leaseTransitions, incremented each time the holder changes. A candidate
// creates the Lease if it is missing, renews it while it holds it, and
// takes it over when its holder is empty or when LeaseDuration (the
// holder's leaseDurationSeconds) has passed since the candidate last saw
// it change; it never compares its clock with the renewTime another wrote.
// Every write is an update conditional on the resourceVersion read, so of
// two candidates racing for an expired Lease one wins and the other gets a
// Conflict.
//
// # What is guaranteed when the lease is lost
//
// A leader that cannot renew (the API server is slow or unreachable, its
// writes fail) cancels the context of OnStartedLeading RenewDeadline after
// the start of its last successful renewal, whatever requests are still in
// flight: the deadline is a timer on the Clock, watched by Run's goroutine,
// which never waits on a request. Another candidate counts LeaseDuration
// from no earlier than that renewal, so the work has
// LeaseDuration-RenewDeadline (5s by default) to stop before anyone else
// can start. Run returns only after OnStartedLeading has returned and
// OnStoppedLeading has been called, and a LeaderElector does not stand
// again, so a replica never re-acquires while its old work still runs.
//
// Work that outlives its lease is how leader election goes wrong in
// practice (kapi's issue points to controller-runtime issue 3298;
// cilium/cilium#42920 describes operators whose shutdown ignored the renew
// deadline and ran as two leaders). Here the cancellation is bounded by
// RenewDeadline after the last renewal; what the package cannot bound is
// how long OnStartedLeading takes to return once cancelled. Work that must
// never overlap with another leader's has to stop within
// LeaseDuration-RenewDeadline, or exit the process.
//
// The guarantee assumes the replicas' clocks run at about the same rate (not
// that they agree): as in client-go, time is only ever measured on one
// clock.
//
// # Jitter
//
// A candidate that does not lead tries to acquire every RetryPeriod plus a
// random jitter of up to [JitterFactor] (1.2, client-go's) times
// RetryPeriod, so that followers that saw the Lease expire together do not
// all write it at once. The leader renews every RetryPeriod, without
// jitter.
//
// # Watchdog
//
// [LeaderElector.Check] is a health check, as client-go's HealthzAdaptor:
// it fails when this candidate believes it leads but has not renewed the
// Lease for longer than LeaseDuration plus WatchdogTolerance (20s by
// default). Leading stops RenewDeadline after the last renewal, so this
// only happens when the election itself is stuck; by then another
// candidate may lead, and a liveness probe on Check restarts the process.
// The manager package serves it on /healthz.
//
// # Release on cancel
//
// With ReleaseOnCancel, cancelling Run's context stops the work, waits for
// OnStartedLeading to return, and then clears holderIdentity (and sets
// leaseDurationSeconds to 1) with an update conditional on the last version
// this candidate wrote, so another candidate takes over at its next attempt
// instead of after LeaseDuration. Without it, the Lease simply expires.
//
// # Callbacks
//
// OnStartedLeading runs on its own goroutine. OnStoppedLeading runs on
// Run's goroutine after the work has returned, and only if this candidate
// led. OnNewLeader runs on its own goroutine, in order, with the holders
// seen; a slow callback never delays renewals.
//
// # Testing
//
// Config.Clock takes a workqueue.Clock; with clocktest.FakeClock and the
// fake package, a test moves time by hand. This package's tests do so with
// several candidates, injected conflicts, server errors, writes applied
// whose answer is lost, and dropped requests, and check that no two terms
// of leading overlap in fake time.
package leaderelection
