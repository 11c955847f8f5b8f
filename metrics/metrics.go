package metrics

import (
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/workqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// Exporter holds kapi's Prometheus metrics, registered on one
// prometheus.Registerer, and hands out the hooks that feed them: Queue for
// workqueue.Config.Metrics (and controller.Config.QueueMetrics), Client
// for client.Config.Metrics, Controller for controller.Config.Metrics,
// Reflector for reflector.Config.Metrics.
// Its methods are safe for concurrent use.
type Exporter struct {
	queueDepth    *prometheus.GaugeVec
	queueAdds     *prometheus.CounterVec
	queueLatency  *prometheus.HistogramVec
	queueWork     *prometheus.HistogramVec
	queueRetries  *prometheus.CounterVec
	queueInFlight *inFlightCollector

	requestLatency *prometheus.HistogramVec
	requestResults *prometheus.CounterVec
	rateLimiter    *prometheus.HistogramVec

	reconciles      *prometheus.CounterVec
	reconcileErrors *prometheus.CounterVec
	reconcilePanics *prometheus.CounterVec
	reconcileTime   *prometheus.HistogramVec
	activeWorkers   *prometheus.GaugeVec

	reflector reflectorMetrics
}

// Buckets of the histograms, in seconds.
var (
	// queueBuckets span 10ns to 100s: an item may wait or be worked on
	// for anything from nothing to minutes.
	queueBuckets = prometheus.ExponentialBuckets(1e-8, 10, 11)
	// requestBuckets span a fast answer in the same cluster to a minute.
	requestBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}
	// reconcileBuckets span a cache-only reconcile to a minute.
	reconcileBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// Register creates kapi's metrics and registers them on reg (nil:
// prometheus.DefaultRegisterer). It fails if reg refuses one of them, such
// as when they are already registered on it: register once per registry and
// share the Exporter.
func Register(reg prometheus.Registerer) (*Exporter, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	queue := []string{"name"}
	ctl := []string{"controller"}
	e := &Exporter{
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "workqueue_depth",
			Help: "Current number of items waiting in the work queue.",
		}, queue),
		queueAdds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_adds_total",
			Help: "Number of items that became pending in the work queue.",
		}, queue),
		queueLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workqueue_queue_duration_seconds",
			Help:    "How long an item waited in the work queue before a worker took it, in seconds.",
			Buckets: queueBuckets,
		}, queue),
		queueWork: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workqueue_work_duration_seconds",
			Help:    "How long a worker processed an item taken from the work queue, in seconds.",
			Buckets: queueBuckets,
		}, queue),
		queueRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workqueue_retries_total",
			Help: "Number of items added to the work queue after a delay (retries and requeues).",
		}, queue),
		queueInFlight: newInFlightCollector(),

		requestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency until the response headers arrive, in seconds, by verb (HTTP method) and host.",
			Buckets: requestBuckets,
		}, []string{"verb", "host"}),
		requestResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of request attempts, by status code (<error> without a response), method and host.",
		}, []string{"code", "method", "host"}),
		rateLimiter: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_rate_limiter_duration_seconds",
			Help:    "Time requests waited for the client's rate limiter, in seconds, by verb (HTTP method) and host.",
			Buckets: requestBuckets,
		}, []string{"verb", "host"}),

		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Number of reconciles by controller and result (success, requeue_after, error, panic).",
		}, []string{"controller", "result"}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total",
			Help: "Number of reconciles that failed, with an error or a panic, by controller.",
		}, ctl),
		reconcilePanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_panics_total",
			Help: "Number of reconciles that panicked, by controller.",
		}, ctl),
		reconcileTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "controller_runtime_reconcile_time_seconds",
			Help:    "How long reconciles took, in seconds, by controller.",
			Buckets: reconcileBuckets,
		}, ctl),
		activeWorkers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers",
			Help: "Number of workers reconciling now, by controller.",
		}, ctl),
		reflector: newReflectorMetrics(),
	}
	var errs []error
	for _, c := range append([]prometheus.Collector{
		e.queueDepth, e.queueAdds, e.queueLatency, e.queueWork, e.queueRetries, e.queueInFlight,
		e.requestLatency, e.requestResults, e.rateLimiter,
		e.reconciles, e.reconcileErrors, e.reconcilePanics, e.reconcileTime, e.activeWorkers,
	}, e.reflector.collectors()...) {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return e, nil
}

// Queue returns the hook of the work queue called name, for
// workqueue.Config.Metrics or controller.Config.QueueMetrics: it feeds the
// workqueue_* metrics with label name. Give each queue its own hook; queues
// with the same name add up.
func (e *Exporter) Queue(name string) workqueue.InFlightMetrics {
	return &queueMetrics{
		name:    name,
		in:      e.queueInFlight,
		depth:   e.queueDepth.WithLabelValues(name),
		adds:    e.queueAdds.WithLabelValues(name),
		latency: e.queueLatency.WithLabelValues(name),
		work:    e.queueWork.WithLabelValues(name),
		retries: e.queueRetries.WithLabelValues(name),
	}
}

// queueMetrics is the hook of one queue.
type queueMetrics struct {
	name          string
	in            *inFlightCollector
	depth         prometheus.Gauge
	adds, retries prometheus.Counter
	latency, work prometheus.Observer
}

func (q *queueMetrics) Added() {
	q.adds.Inc()
	q.depth.Inc()
}

func (q *queueMetrics) Started(queued time.Duration) {
	q.depth.Dec()
	q.latency.Observe(queued.Seconds())
}

func (q *queueMetrics) Finished(worked time.Duration) { q.work.Observe(worked.Seconds()) }

func (q *queueMetrics) Retried() { q.retries.Inc() }

func (q *queueMetrics) ObserveInFlight(f func() (total, longest time.Duration)) {
	q.in.add(q.name, f)
}

// inFlightCollector reads the work in progress of every queue when it is
// scraped: workqueue_unfinished_work_seconds and
// workqueue_longest_running_processor_seconds.
type inFlightCollector struct {
	unfinished, longest *prometheus.Desc

	mu     sync.Mutex
	queues map[string][]func() (total, longest time.Duration)
}

func newInFlightCollector() *inFlightCollector {
	return &inFlightCollector{
		unfinished: prometheus.NewDesc("workqueue_unfinished_work_seconds",
			"How long the items being processed have been processed, in seconds, summed: a large value with few completions means stuck workers.",
			[]string{"name"}, nil),
		longest: prometheus.NewDesc("workqueue_longest_running_processor_seconds",
			"How long the item processed for the longest time so far has been processed, in seconds.",
			[]string{"name"}, nil),
		queues: map[string][]func() (time.Duration, time.Duration){},
	}
}

func (c *inFlightCollector) add(name string, f func() (total, longest time.Duration)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queues[name] = append(c.queues[name], f)
}

// Describe implements prometheus.Collector.
func (c *inFlightCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.unfinished
	ch <- c.longest
}

// Collect implements prometheus.Collector.
func (c *inFlightCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	queues := make(map[string][]func() (time.Duration, time.Duration), len(c.queues))
	for name, fs := range c.queues {
		queues[name] = fs
	}
	c.mu.Unlock()
	for name, fs := range queues {
		var total, longest time.Duration
		for _, f := range fs {
			t, l := f()
			total += t
			longest = max(longest, l)
		}
		ch <- prometheus.MustNewConstMetric(c.unfinished, prometheus.GaugeValue, total.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(c.longest, prometheus.GaugeValue, longest.Seconds(), name)
	}
}

// Client returns the hook for client.Config.Metrics: it feeds the
// rest_client_* metrics, labelled by verb (HTTP method), host and, for
// results, status code.
func (e *Exporter) Client() client.RequestMetrics { return clientMetrics{e} }

// clientMetrics is the hook of clients.
type clientMetrics struct{ e *Exporter }

func (m clientMetrics) RateLimited(host, method string, waited time.Duration) {
	m.e.rateLimiter.WithLabelValues(method, host).Observe(waited.Seconds())
}

func (m clientMetrics) Requested(host, method string, code int, latency time.Duration) {
	m.e.requestLatency.WithLabelValues(method, host).Observe(latency.Seconds())
	c := "<error>"
	if code != 0 {
		c = strconv.Itoa(code)
	}
	m.e.requestResults.WithLabelValues(c, method, host).Inc()
}

// Controller returns the hook of the controller called name, for
// controller.Config.Metrics: it feeds the controller_runtime_* metrics with
// label controller. A panic counts as a reconcile with result "panic", an
// error and a panic.
func (e *Exporter) Controller(name string) controller.Metrics {
	m := &controllerMetrics{
		results: map[controller.Outcome]prometheus.Counter{},
		errors:  e.reconcileErrors.WithLabelValues(name),
		panics:  e.reconcilePanics.WithLabelValues(name),
		time:    e.reconcileTime.WithLabelValues(name),
		active:  e.activeWorkers.WithLabelValues(name),
	}
	for _, o := range []controller.Outcome{controller.OutcomeSuccess, controller.OutcomeRequeueAfter, controller.OutcomeError, controller.OutcomePanic} {
		m.results[o] = e.reconciles.WithLabelValues(name, string(o))
	}
	return m
}

// controllerMetrics is the hook of one controller. Its results are
// created up front, so every result appears from the start (at 0).
type controllerMetrics struct {
	results        map[controller.Outcome]prometheus.Counter
	errors, panics prometheus.Counter
	time           prometheus.Observer
	active         prometheus.Gauge
}

func (m *controllerMetrics) ReconcileStarted() { m.active.Inc() }

func (m *controllerMetrics) ReconcileFinished(o controller.Outcome, took time.Duration) {
	m.active.Dec()
	m.time.Observe(took.Seconds())
	if c, ok := m.results[o]; ok {
		c.Inc()
	}
	switch o {
	case controller.OutcomePanic:
		m.panics.Inc()
		m.errors.Inc()
	case controller.OutcomeError:
		m.errors.Inc()
	}
}
