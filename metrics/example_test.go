package metrics_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/metrics"
	"github.com/kapi-dev/kapi/workqueue"
	"github.com/prometheus/client_golang/prometheus"
)

// Register the metrics on a registry, give a work queue its hook, and read
// what a scrape would.
func ExampleRegister() {
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		panic(err)
	}
	q := workqueue.New[string](workqueue.Config{Metrics: m.Queue("example")})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	q.Add("a") // already pending: not an add

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "workqueue_adds_total":
			fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		case "workqueue_depth":
			fmt.Println(f.GetName(), f.GetMetric()[0].GetGauge().GetValue())
		}
	}
	// Output:
	// workqueue_adds_total 2
	// workqueue_depth 2
}
