// Package manager runs the parts of a controller process with one
// context: an informer factory, the controllers and other runnables,
// leader election, and the HTTP servers of health probes and metrics, as
// controller-runtime's manager does, and stops them in order.
//
// # Use
//
// Make a Manager from one [Config], make controllers on its factory, Add
// them, and Start it:
//
//	m, err := manager.New(c, manager.Config{
//		HealthAddr:  ":8081",
//		MetricsAddr: ":8080",
//		Metrics:     promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
//		LeaderElection: &leaderelection.Config{
//			Namespace: "kube-system", Name: "my-controller", Identity: podName,
//		},
//	})
//	if err != nil { … }
//	ctl := controller.New[corev1.ConfigMap](m.Factory(), reconciler, controller.Config{})
//	if err := m.Add(manager.Controller(ctl)); err != nil { … }
//	if err := m.Start(ctx); err != nil { … } // blocks; exit on error
//
// Every zero value of Config is a default: no leader election, no HTTP
// server, a factory caching every namespace, a 30s graceful shutdown.
//
// # Reading from the caches
//
// [Client] returns a client.Resource[T] that reads from the manager's
// factory and writes to the server (informer.Cached, configured by
// Config.Client), as controller-runtime's manager.GetClient(): asked for
// before Start, its cache is synced by Start before the runnables run.
//
//	cms := manager.Client[corev1.ConfigMap](m)
//
// # Runnables
//
// A [Runnable] is anything with Start(ctx) error; [Controller] adapts a
// *controller.Controller[T] (its Run), [RunnableFunc] a function. As in
// controller-runtime, a runnable needs leader election unless it
// implements [LeaderElectionRunnable] and returns false
// ([WithoutLeaderElection] wraps one so): without election that makes no
// difference, with it the leader-only runnables run only while this
// replica leads. Runnables are added before Start.
//
// # Starting and stopping
//
// Start binds the HTTP servers, starts the factory's informers (those
// asked for before Start: controllers ask for theirs in controller.New)
// and waits for their caches, starts the runnables that do not need
// leader election, and then stands for election, or starts the leader-only
// runnables at once without it.
//
// When ctx is done, a runnable fails, or the lease is lost, Start stops,
// in this order, each stage waited for before the next: the leader-only
// runnables, the others, the factory's informers, the HTTP servers. The
// runnables have GracefulShutdownTimeout, measured on Config.Clock, to
// return once their context is done; those that do not are left behind
// and Start says so in its error. Start returns nil when stopped by ctx,
// otherwise the first error.
//
// # Leader election
//
// With Config.LeaderElection the manager runs a leaderelection.LeaderElector
// on a Lease. A replica that loses its lease stops its leader-only
// runnables when leaderelection cancels their context (RenewDeadline after
// the last renewal), then everything else, and Start returns an error
// wrapping leaderelection.ErrLeaseLost: as with controller-runtime, the
// process should exit, and a new one stands again. For the leader-only
// work to stop before another replica can start, it must return within
// LeaseDuration-RenewDeadline (5s by default) of its context being
// cancelled; set GracefulShutdownTimeout no longer than that so that Start
// returns (and the process can exit) in time even if it does not.
//
// # Probes and metrics
//
// /healthz answers 200 while the manager serves, and 500 when the leader
// election's watchdog fails: this replica believes it leads but has not
// renewed the Lease for LeaseDuration plus LeaderElection.WatchdogTolerance
// (20s by default), which means its election is stuck and another replica
// may lead (client-go's HealthzAdaptor); a liveness probe on it restarts
// the process. /readyz answers 200 once
// the caches have synced and until stopping begins, 503 otherwise. It does
// not wait for leadership, as controller-runtime's probes do not: standby
// replicas are ready, or a rollout would wait for a Lease only one replica
// can hold. /metrics serves Config.Metrics: the manager does not import
// Prometheus; pass promhttp.HandlerFor on the registry given to
// metrics.Register. With HealthAddr equal to MetricsAddr one server serves
// the three paths; [Manager.Handler] serves them on a server of one's own.
package manager
