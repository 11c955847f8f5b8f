package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/metrics"
	"github.com/kapi-dev/kapi/reflector"
	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// register returns a fresh registry and an Exporter registered on it.
func register(t *testing.T) (*prometheus.Registry, *metrics.Exporter) {
	t.Helper()
	reg := prometheus.NewRegistry()
	e, err := metrics.Register(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, e
}

// samples gathers reg and returns every sample of the named metrics as
// `name{label="value",…} value`, sorted; a histogram gives its _count and
// _sum.
func samples(t *testing.T, reg prometheus.Gatherer, names ...string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if len(names) > 0 && !contains(names, mf.GetName()) {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			name := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out = append(out, fmt.Sprintf("%s %g", name, m.GetCounter().GetValue()))
			case m.Gauge != nil:
				out = append(out, fmt.Sprintf("%s %g", name, m.GetGauge().GetValue()))
			case m.Histogram != nil:
				out = append(out, fmt.Sprintf("%s_count %d", name, m.GetHistogram().GetSampleCount()),
					fmt.Sprintf("%s_sum %g", name, m.GetHistogram().GetSampleSum()))
			}
		}
	}
	sort.Strings(out)
	return out
}

func contains(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

func checkSamples(t *testing.T, reg prometheus.Gatherer, want []string, names ...string) {
	t.Helper()
	got := samples(t, reg, names...)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A queue's hook feeds the workqueue metrics, labelled with its name, and
// the work in progress is read when the registry is gathered.
func TestQueue(t *testing.T) {
	reg, e := register(t)
	clock := clocktest.NewFakeClock(epoch)
	q := workqueue.NewRateLimiting[string](nil, workqueue.Config{Clock: clock, Metrics: e.Queue("q")})
	defer q.ShutDown()
	other := workqueue.New[string](workqueue.Config{Clock: clock, Metrics: e.Queue("other")})
	defer other.ShutDown()

	q.Add("a")
	q.Add("b")
	q.Add("a") // already pending
	clock.Step(2 * time.Second)
	a, _ := q.Get()
	clock.Step(3 * time.Second)
	checkSamples(t, reg, []string{
		`workqueue_depth{name="other"} 0`,
		`workqueue_depth{name="q"} 1`,
		`workqueue_adds_total{name="other"} 0`,
		`workqueue_adds_total{name="q"} 2`,
		`workqueue_queue_duration_seconds{name="other"}_count 0`,
		`workqueue_queue_duration_seconds{name="other"}_sum 0`,
		`workqueue_queue_duration_seconds{name="q"}_count 1`,
		`workqueue_queue_duration_seconds{name="q"}_sum 2`,
		`workqueue_unfinished_work_seconds{name="other"} 0`,
		`workqueue_unfinished_work_seconds{name="q"} 3`,
		`workqueue_longest_running_processor_seconds{name="other"} 0`,
		`workqueue_longest_running_processor_seconds{name="q"} 3`,
	}, "workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
		"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds")

	b, _ := q.Get()
	clock.Step(time.Second)
	q.Done(a)
	q.AddRateLimited("a")
	checkSamples(t, reg, []string{
		`workqueue_depth{name="other"} 0`,
		`workqueue_depth{name="q"} 0`,
		`workqueue_work_duration_seconds{name="other"}_count 0`,
		`workqueue_work_duration_seconds{name="other"}_sum 0`,
		`workqueue_work_duration_seconds{name="q"}_count 1`,
		`workqueue_work_duration_seconds{name="q"}_sum 4`,
		`workqueue_retries_total{name="other"} 0`,
		`workqueue_retries_total{name="q"} 1`,
		`workqueue_unfinished_work_seconds{name="other"} 0`,
		`workqueue_unfinished_work_seconds{name="q"} 1`,
		`workqueue_longest_running_processor_seconds{name="other"} 0`,
		`workqueue_longest_running_processor_seconds{name="q"} 1`,
	}, "workqueue_depth", "workqueue_work_duration_seconds", "workqueue_retries_total",
		"workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds")
	q.Done(b)
	// In the exposition format, as a scraper sees it.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP workqueue_retries_total Number of items added to the work queue after a delay (retries and requeues).
# TYPE workqueue_retries_total counter
workqueue_retries_total{name="other"} 0
workqueue_retries_total{name="q"} 1
# HELP workqueue_longest_running_processor_seconds How long the item processed for the longest time so far has been processed, in seconds.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{name="other"} 0
workqueue_longest_running_processor_seconds{name="q"} 0
`), "workqueue_retries_total", "workqueue_longest_running_processor_seconds"); err != nil {
		t.Error(err)
	}
}

// The client hook feeds rest_client_* metrics by verb, code and host: one
// result per attempt, "<error>" without a response.
func TestClient(t *testing.T) {
	reg, e := register(t)
	f := fake.New(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}})
	cfg := f.Config()
	cfg.Metrics = e.Client()
	cfg.QPS, cfg.Burst = 1000, 100
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.Host())
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	ctx := context.Background()
	cms := client.For[corev1.ConfigMap](c).Namespace("default")
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !client.IsNotFound(err) {
		t.Fatalf("Get missing: %v, want NotFound", err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close() // the next request gets no response
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err == nil {
		t.Fatal("Create on a closed server succeeded")
	}
	checkSamples(t, reg, []string{
		`rest_client_requests_total{code="200",host="` + host + `",method="DELETE"} 1`,
		`rest_client_requests_total{code="200",host="` + host + `",method="GET"} 1`,
		`rest_client_requests_total{code="404",host="` + host + `",method="GET"} 1`,
		`rest_client_requests_total{code="<error>",host="` + host + `",method="POST"} 1`,
	}, "rest_client_requests_total")
	// Latencies are the machine's: check how many were observed.
	var counts []string
	for _, s := range samples(t, reg, "rest_client_request_duration_seconds", "rest_client_rate_limiter_duration_seconds") {
		if strings.Contains(s, "_count ") {
			counts = append(counts, s)
		}
	}
	want := []string{
		`rest_client_rate_limiter_duration_seconds{host="` + host + `",verb="DELETE"}_count 1`,
		`rest_client_rate_limiter_duration_seconds{host="` + host + `",verb="GET"}_count 2`,
		`rest_client_rate_limiter_duration_seconds{host="` + host + `",verb="POST"}_count 1`,
		`rest_client_request_duration_seconds{host="` + host + `",verb="DELETE"}_count 1`,
		`rest_client_request_duration_seconds{host="` + host + `",verb="GET"}_count 2`,
		`rest_client_request_duration_seconds{host="` + host + `",verb="POST"}_count 1`,
	}
	if strings.Join(counts, "\n") != strings.Join(want, "\n") {
		t.Errorf("histogram counts:\n%s\nwant:\n%s", strings.Join(counts, "\n"), strings.Join(want, "\n"))
	}
}

// The controller hook feeds controller_runtime_* metrics, labelled with the
// controller's name, and the queue hook its work queue's.
func TestController(t *testing.T) {
	reg, e := register(t)
	const ns = "ctl"
	f := fake.NewWithOptions(t, fake.Options{}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ok", Namespace: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "panics", Namespace: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fails", Namespace: ns}})
	factory := informer.NewFactory(f.Client(), informer.FactoryConfig{Namespace: ns})
	defer factory.Shutdown()
	clock := clocktest.NewFakeClock(epoch)
	var mu sync.Mutex
	calls := map[string]int{}
	r := controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
		mu.Lock()
		calls[req.Name]++
		n := calls[req.Name]
		mu.Unlock()
		clock.Step(time.Second)
		switch {
		case req.Name == "later":
			return controller.Result{RequeueAfter: time.Hour}, nil
		case req.Name == "panics" && n == 1:
			panic("bug")
		case req.Name == "fails" && n == 1:
			return controller.Result{}, errors.New("boom")
		}
		return controller.Result{}, nil
	})
	ctl := controller.New[corev1.ConfigMap](factory, r, controller.Config{
		Name:         "cms",
		Clock:        clock,
		Metrics:      e.Controller("cms"),
		QueueMetrics: e.Queue("cms"),
		RateLimiter:  workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Millisecond, time.Millisecond),
		Logger:       quiet(),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	// The failures' retries wait 1ms on the fake clock, which the
	// reconciles move by a second: step once more in case the last
	// reconcile was a failure.
	for {
		waitCtx, cancelWait := context.WithTimeout(ctx, 50*time.Millisecond)
		err := ctl.WaitIdle(waitCtx)
		cancelWait()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		clock.Step(time.Millisecond)
	}
	checkSamples(t, reg, []string{
		`controller_runtime_reconcile_total{controller="cms",result="error"} 1`,
		`controller_runtime_reconcile_total{controller="cms",result="panic"} 1`,
		`controller_runtime_reconcile_total{controller="cms",result="requeue_after"} 1`,
		`controller_runtime_reconcile_total{controller="cms",result="success"} 3`,
		`controller_runtime_reconcile_errors_total{controller="cms"} 2`,
		`controller_runtime_reconcile_panics_total{controller="cms"} 1`,
		`controller_runtime_reconcile_time_seconds{controller="cms"}_count 6`,
		`controller_runtime_reconcile_time_seconds{controller="cms"}_sum 6`,
		`controller_runtime_active_workers{controller="cms"} 0`,
		`workqueue_adds_total{name="cms"} 6`,
		`workqueue_retries_total{name="cms"} 3`,
		`workqueue_depth{name="cms"} 0`,
	}, "controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
		"controller_runtime_reconcile_panics_total", "controller_runtime_reconcile_time_seconds",
		"controller_runtime_active_workers", "workqueue_adds_total", "workqueue_retries_total", "workqueue_depth")
}

// Registering twice on one registry fails: the names are taken. A
// pedantic registry accepts the metrics (consistent descriptions).
func TestRegisterTwice(t *testing.T) {
	reg, _ := register(t)
	_, err := metrics.Register(reg)
	var already prometheus.AlreadyRegisteredError
	if !errors.As(err, &already) {
		t.Errorf("a second Register on the same registry: %v, want an AlreadyRegisteredError", err)
	}
	// A registry of its own takes them.
	if _, err := metrics.Register(prometheus.NewPedanticRegistry()); err != nil {
		t.Errorf("Register on a pedantic registry: %v", err)
	}
}

// Only the metrics package, and packages that import it, depend on
// Prometheus: the core packages expose hooks.
func TestNoPrometheusInCore(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(gobin, "list", "-deps=false", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/kapi-dev/kapi/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/kapi-dev/kapi/metrics"
	// etcdtest runs a real etcd server (which brings Prometheus) for tests:
	// only test files may import it.
	const etcdtest = "github.com/kapi-dev/kapi/internal/etcdtest"
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		checked++
		if contains(deps, etcdtest) {
			t.Errorf("%s depends on %s, which only tests may import", pkg, etcdtest)
		}
		if pkg == self || pkg == etcdtest || contains(deps, self) {
			continue
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "github.com/prometheus/") {
				t.Errorf("%s depends on %s without going through %s", pkg, d, self)
				break
			}
		}
	}
	if checked < 10 {
		t.Errorf("go list listed %d packages, want the module's", checked)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// The reflector hook feeds reflector_* metrics, labelled with its name:
// here an informer's reflector (informer.Config.Reflector) on the fake.
func TestReflector(t *testing.T) {
	reg, e := register(t)
	f := fake.New(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}})
	hook := e.Reflector("configmaps")
	lw := client.For[corev1.ConfigMap](f.Client()).Namespace("default")
	r := informer.New[corev1.ConfigMap](lw, informer.Config[corev1.ConfigMap]{
		Reflector: reflector.Config[corev1.ConfigMap]{Metrics: hook, Logger: quiet()},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-r.Synced():
	case <-time.After(30 * time.Second):
		t.Fatal("the reflector did not sync")
	}
	// The watch opens after the list: wait for it to be counted.
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(samples(t, reg, "reflector_watches_total"), `reflector_watches_total{name="configmaps"} 1`) {
		if time.Now().After(deadline) {
			t.Fatal("no watch counted")
		}
		runtime.Gosched()
	}
	checkSamples(t, reg, []string{
		`reflector_lists_total{name="configmaps"} 1`,
		`reflector_relists_total{name="configmaps"} 0`,
		`reflector_watches_total{name="configmaps"} 1`,
		`reflector_items_per_list{name="configmaps"}_count 1`,
		`reflector_items_per_list{name="configmaps"}_sum 2`,
	}, "reflector_lists_total", "reflector_relists_total", "reflector_watches_total", "reflector_items_per_list")
}

// A factory's informers get reflector metrics of their own, labelled with
// their resource, through informer.FactoryConfig.ReflectorMetrics.
func TestFactoryReflectors(t *testing.T) {
	reg, e := register(t)
	f := fake.New(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}})
	factory := informer.NewFactory(f.Client(), informer.FactoryConfig{Namespace: "default", Logger: quiet(), ReflectorMetrics: e.Reflector})
	informer.For[corev1.ConfigMap](factory)
	informer.For[corev1.Secret](factory)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	factory.Start(ctx)
	syncCtx, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	if err := factory.WaitForCacheSync(syncCtx); err != nil {
		t.Fatal(err)
	}
	checkSamples(t, reg, []string{
		`reflector_lists_total{name="v1/configmaps"} 1`,
		`reflector_lists_total{name="v1/secrets"} 1`,
		`reflector_items_per_list{name="v1/configmaps"}_count 1`,
		`reflector_items_per_list{name="v1/configmaps"}_sum 2`,
		`reflector_items_per_list{name="v1/secrets"}_count 1`,
		`reflector_items_per_list{name="v1/secrets"}_sum 1`,
	}, "reflector_lists_total", "reflector_items_per_list")
}
