package controller_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait of the tests; none should come close.
const waitTimeout = 15 * time.Second

const ns = "ctl"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func cm(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
}

// secret returns a Secret with the given owner references and labels.
func secret(name string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owners}}
}

func ownerRef(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: metav1.UID("uid-" + name), Controller: &controller}
}

func req(name string) controller.Request { return controller.Request{Namespace: ns, Name: name} }

// call is one reconcile a test saw: its request and the fake time.
type call struct {
	req controller.Request
	at  time.Time
}

// env is a fake server with a factory, a fake clock and a reconciler that
// records its calls and then runs the test's function.
type env struct {
	t       *testing.T
	ctx     context.Context
	f       *fake.Fake
	factory *informer.Factory
	clock   *clocktest.FakeClock

	mu    sync.Mutex
	calls []call
	seen  chan controller.Request // every reconcile, as it starts
	do    func(ctx context.Context, r controller.Request) (controller.Result, error)
}

func newEnv(t *testing.T, objects ...any) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	t.Cleanup(cancel)
	objects = append([]any{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}}, objects...)
	f := fake.NewWithOptions(t, fake.Options{DisableGarbageCollector: true, Logger: quietLogger()}, objects...)
	return &env{
		t: t, ctx: ctx, f: f,
		factory: informer.NewFactory(f.Client(), informer.FactoryConfig{Namespace: ns, Logger: quietLogger()}),
		clock:   clocktest.NewFakeClock(t0),
		seen:    make(chan controller.Request, 1000),
	}
}

// config is the tests' default Config: the fake clock, no logs.
func (e *env) config() controller.Config {
	return controller.Config{Clock: e.clock, Logger: quietLogger()}
}

func (e *env) Reconcile(ctx context.Context, r controller.Request) (controller.Result, error) {
	e.mu.Lock()
	e.calls = append(e.calls, call{r, e.clock.Now()})
	do := e.do
	e.mu.Unlock()
	e.seen <- r
	if do == nil {
		return controller.Result{}, nil
	}
	return do(ctx, r)
}

// reconciled returns the requests reconciled so far, in order.
func (e *env) reconciled() []controller.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rs []controller.Request
	for _, c := range e.calls {
		rs = append(rs, c.req)
	}
	return rs
}

func (e *env) callTimes() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ds []time.Duration
	for _, c := range e.calls {
		ds = append(ds, c.at.Sub(t0))
	}
	return ds
}

func (e *env) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = nil
	for {
		select {
		case <-e.seen:
		default:
			return
		}
	}
}

// run runs ctl until the test ends (or stop is called), and checks that Run
// returned nil; it stops the factory's informers too.
func run[T any](e *env, ctl *controller.Controller[T]) (stop func()) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					e.t.Errorf("Run: %v", err)
				}
			case <-time.After(waitTimeout):
				e.t.Errorf("Run did not return")
			}
			e.factory.Shutdown()
		})
	}
	e.t.Cleanup(stop)
	return stop
}

// waitIdle waits until ctl is idle.
func waitIdle[T any](e *env, ctl *controller.Controller[T]) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if err := ctl.WaitIdle(ctx); err != nil {
		e.t.Fatal(err)
	}
}

// next waits for the next reconcile and returns its request.
func (e *env) next() controller.Request {
	e.t.Helper()
	select {
	case r := <-e.seen:
		return r
	case <-time.After(waitTimeout):
		e.t.Fatal("no reconcile")
		return controller.Request{}
	}
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// timers waits until the fake clock has n armed timers: a delay (a
// retry, a RequeueAfter, a debounce window, a timeout) has been scheduled.
func (e *env) timers(n int) {
	e.t.Helper()
	eventually(e.t, "armed timers", func() bool { return e.clock.Timers() == n })
}

// probe is a predicate that lets everything through and reports the name
// of every object it is asked about on ch. A source calls its predicates
// and then enqueues, in its handler's one goroutine, so once a probe
// reports an object, every notification before it has been enqueued.
func probe[O any, PO client.ObjectPtr[O]](ch chan<- string) controller.Predicate[O] {
	report := func(o *O) bool { ch <- PO(o).GetName(); return true }
	return controller.Predicate[O]{
		Create: report,
		Update: func(_, o *O) bool { return report(o) },
		Delete: report,
	}
}

// waitFor waits until ch reports name.
func waitFor(t *testing.T, ch <-chan string, name string) {
	t.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case n := <-ch:
			if n == name {
				return
			}
		case <-timeout:
			t.Fatalf("%s never reached the source", name)
		}
	}
}

func sorted(rs []controller.Request) []controller.Request {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b controller.Request) int {
		if a.Namespace != b.Namespace {
			if a.Namespace < b.Namespace {
				return -1
			}
			return 1
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return rs
}

func cms(e *env) client.Resource[corev1.ConfigMap] {
	return client.For[corev1.ConfigMap](e.f.Client()).Namespace(ns)
}

func secrets(e *env) client.Resource[corev1.Secret] {
	return client.For[corev1.Secret](e.f.Client()).Namespace(ns)
}

// patch merge-patches the object name of r.
func patch[T any](t *testing.T, r client.Resource[T], name, patch string) {
	t.Helper()
	if _, err := r.Patch(context.Background(), name, client.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// create creates obj with r.
func create[T any](t *testing.T, r client.Resource[T], obj *T) {
	t.Helper()
	if _, err := r.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// drain empties ch.
func drain(ch chan string) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}
