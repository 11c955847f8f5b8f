package events_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: every Run
// must return once its context is done.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait for something that should happen at once.
const waitLimit = 10 * time.Second

var epoch = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

// env is a Fake with namespace "demo" and pod demo/web, and a fake clock.
type env struct {
	f     *fake.Fake
	clock *clocktest.FakeClock
	pod   *corev1.Pod // as stored, with uid and resourceVersion
}

func newEnv(t *testing.T) *env {
	t.Helper()
	f := fake.New(t, namespace("demo"), pod("demo", "web"))
	p, err := fakePod(f)
	if err != nil {
		t.Fatal(err)
	}
	return &env{f: f, clock: clocktest.NewFakeClock(epoch), pod: p}
}

func fakePod(f *fake.Fake) (*corev1.Pod, error) {
	return clientPods(f).Get(context.Background(), "web", metav1.GetOptions{})
}

// config is the Config tests start from.
func (e *env) config() events.Config {
	return events.Config{
		ReportingController: "example.com/controller",
		ReportingInstance:   "controller-1",
		Clock:               e.clock,
		Logger:              slog.New(slog.DiscardHandler),
	}
}

// start makes a Recorder with cfg and runs it until the test ends; the
// returned stop cancels Run and waits for it to return.
func start(t *testing.T, e *env, cfg events.Config) (*events.Recorder, func()) {
	t.Helper()
	rec, err := events.New(e.f.Client(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	stopped := false
	stop := func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("Run did not return")
		}
	}
	t.Cleanup(stop)
	return rec, stop
}

// waitFor waits until cond holds, failing the test after waitLimit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // polling a condition, not synchronising
	}
}

// waitCounters waits until the recorder's counters satisfy cond.
func waitCounters(t *testing.T, rec *events.Recorder, what string, cond func(events.Counters) bool) {
	t.Helper()
	waitFor(t, what, func() bool { return cond(rec.Counters()) })
}

func clientPods(f *fake.Fake) client.Resource[corev1.Pod] {
	return client.For[corev1.Pod](f.Client()).Namespace("demo")
}

// v1Events returns the events.k8s.io/v1 Events of namespace ns.
func v1Events(t *testing.T, f *fake.Fake, ns string) []eventsv1.Event {
	t.Helper()
	l, err := client.For[eventsv1.Event](f.Client()).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// coreEvents returns the core/v1 Events of namespace ns.
func coreEvents(t *testing.T, f *fake.Fake, ns string) []corev1.Event {
	t.Helper()
	l, err := client.For[corev1.Event](f.Client()).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}
