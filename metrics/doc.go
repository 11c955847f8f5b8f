// Package metrics exports kapi's metrics to Prometheus. It is the only
// kapi package that imports github.com/prometheus/client_golang: the
// packages it instruments (workqueue, client, controller, reflector)
// expose small
// hook interfaces in their Config structs, nil by default, and this
// package implements them.
//
// # Use
//
// Register the metrics once on a registry and pass the Exporter's hooks to
// the components' configs:
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.Register(reg)
//	cfg.Metrics = m.Client() // client.Config
//	ctl := controller.New[corev1.ConfigMap](factory, r, controller.Config{
//		Name:         "configmaps",
//		Metrics:      m.Controller("configmaps"),
//		QueueMetrics: m.Queue("configmaps"),
//	})
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
// The names and labels are client-go's and controller-runtime's, so that
// their dashboards and alerts carry over:
//
//   - work queues, by name: workqueue_depth, workqueue_adds_total,
//     workqueue_retries_total, workqueue_queue_duration_seconds,
//     workqueue_work_duration_seconds, workqueue_unfinished_work_seconds
//     and workqueue_longest_running_processor_seconds (these two are read
//     from the queue when the registry is gathered, with no goroutine);
//   - clients, by verb (HTTP method), host and status code:
//     rest_client_request_duration_seconds, rest_client_requests_total
//     (one per attempt; code "<error>" without a response) and
//     rest_client_rate_limiter_duration_seconds;
//   - controllers, by controller: controller_runtime_reconcile_total (by
//     result: success, requeue_after, error, panic),
//     controller_runtime_reconcile_errors_total (errors and panics),
//     controller_runtime_reconcile_panics_total,
//     controller_runtime_reconcile_time_seconds and
//     controller_runtime_active_workers;
//   - reflectors, by name (client-go dropped its reflector metrics; these
//     follow their names): reflector_lists_total, reflector_relists_total
//     (lists after the first), reflector_watches_total and
//     reflector_items_per_list (set informer.FactoryConfig.ReflectorMetrics
//     to m.Reflector, and each of the factory's informers is labelled with
//     its resource, such as "v1/configmaps"; or set reflector.Config.Metrics,
//     or informer.Config.Reflector.Metrics, to m.Reflector(name)).
//
// Durations are measured on the components' clocks (workqueue.Config.Clock,
// controller.Config.Clock), so tests with a fake clock see exact values.
//
// # Tracing
//
// Tracing needs no hook here: client.Config.WrapTransport wraps the
// client's network transport (inside its credentials), for example with
// OpenTelemetry's otelhttp.NewTransport.
package metrics
