package metrics

import (
	"github.com/kapi-dev/kapi/reflector"
	"github.com/prometheus/client_golang/prometheus"
)

// reflectorMetrics are the reflector_* metrics, by reflector name.
type reflectorMetrics struct {
	lists, relists, watches *prometheus.CounterVec
	items                   *prometheus.HistogramVec
}

func newReflectorMetrics() reflectorMetrics {
	name := []string{"name"}
	return reflectorMetrics{
		lists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reflector_lists_total",
			Help: "Number of lists (paged or streaming) that replaced a reflector's store, the first included.",
		}, name),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reflector_relists_total",
			Help: "Number of lists after a reflector's first (its watch expired, or an error).",
		}, name),
		watches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reflector_watches_total",
			Help: "Number of watches a reflector opened.",
		}, name),
		items: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "reflector_items_per_list",
			Help:    "Number of objects a reflector's lists stored.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 11), // 1 to about a million
		}, name),
	}
}

func (m reflectorMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.lists, m.relists, m.watches, m.items}
}

// Reflector returns the hook of the reflector called name, for
// reflector.Config.Metrics (informer.Config.Reflector.Metrics): it feeds
// the reflector_* metrics with label name. Reflector itself is the
// informer.FactoryConfig.ReflectorMetrics of a factory whose informers
// are labelled with their resource ("v1/configmaps"). Reflectors given
// one name share its metrics.
func (e *Exporter) Reflector(name string) reflector.Metrics {
	return &reflectorHook{
		lists:   e.reflector.lists.WithLabelValues(name),
		relists: e.reflector.relists.WithLabelValues(name),
		watches: e.reflector.watches.WithLabelValues(name),
		items:   e.reflector.items.WithLabelValues(name),
	}
}

// reflectorHook is the hook of one reflector.
type reflectorHook struct {
	lists, relists, watches prometheus.Counter
	items                   prometheus.Observer
}

func (h *reflectorHook) Listed(items int, relist bool) {
	h.lists.Inc()
	if relist {
		h.relists.Inc()
	}
	h.items.Observe(float64(items))
}

func (h *reflectorHook) Watched() { h.watches.Inc() }
