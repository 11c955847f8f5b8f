package controller_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/workqueue"
)

// A step changes objects, and the test checks which requests are reconciled
// because of it. Steps whose change must enqueue nothing end with a
// sentinel object that their source's probe reports, so that the absence of
// a reconcile is checked only once the change has been through the source.
type step struct {
	name   string
	change func(t *testing.T, e *env)
	want   []controller.Request
}

func runSteps[T any](t *testing.T, e *env, ctl *controller.Controller[T], sentinel func(t *testing.T, e *env, i int), steps []step) {
	t.Helper()
	for i, s := range steps {
		e.reset()
		s.change(t, e)
		sentinel(t, e, i)
		waitIdle(e, ctl)
		if got := sorted(e.reconciled()); !slices.Equal(got, sorted(s.want)) {
			t.Errorf("%s: reconciled %v, want %v", s.name, got, s.want)
		}
	}
}

func TestPrimary(t *testing.T) {
	e := newEnv(t, cm("a"), cm("b"))
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
	run(e, ctl)
	waitIdle(e, ctl)
	if got := sorted(e.reconciled()); !slices.Equal(got, []controller.Request{req("a"), req("b")}) {
		t.Fatalf("initial list reconciled %v, want a and b", got)
	}
	// Every step reconciles: its change waits for that.
	runSteps(t, e, ctl, func(*testing.T, *env, int) {}, []step{
		{"update", func(t *testing.T, e *env) { patch(t, cms(e), "a", `{"data":{"k":"v"}}`); e.next() }, []controller.Request{req("a")}},
		{"delete", func(t *testing.T, e *env) { deleted(cms, "b")(t, e); e.next() }, []controller.Request{req("b")}},
		{"create", func(t *testing.T, e *env) { create(t, cms(e), cm("c")); e.next() }, []controller.Request{req("c")}},
	})
}

func TestOwns(t *testing.T) {
	e := newEnv(t)
	probed := make(chan string, 100)
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
	controller.Owns[corev1.Secret](ctl, probe[corev1.Secret](probed))
	run(e, ctl)
	waitIdle(e, ctl)
	created := func(s *corev1.Secret) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) { create(t, secrets(e), s) }
	}
	runSteps(t, e, ctl, secretSentinel(probed), []step{
		{"controller reference to a ConfigMap", created(secret("s1", nil, ownerRef("v1", "ConfigMap", "o1", true))), []controller.Request{req("o1")}},
		{"controller reference after an owner reference", created(secret("s2", nil,
			ownerRef("v1", "ConfigMap", "not-controller", false), ownerRef("v1", "ConfigMap", "o2", true))), []controller.Request{req("o2")}},
		{"owner reference that is not the controller", created(secret("s3", nil, ownerRef("v1", "ConfigMap", "o3", false))), nil},
		{"controller of another kind", created(secret("s4", nil, ownerRef("apps/v1", "Deployment", "o4", true))), nil},
		{"controller of the same kind in another group", created(secret("s5", nil, ownerRef("example.com/v1", "ConfigMap", "o5", true))), nil},
		{"no owner", created(secret("s6", nil)), nil},
		{"update changing the controller: old and new owner", func(t *testing.T, e *env) {
			patch(t, secrets(e), "s1", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o7","uid":"uid-o7","controller":true}]}}`)
		}, []controller.Request{req("o1"), req("o7")}},
		{"delete", deleted(secrets, "s1"), []controller.Request{req("o7")}},
	})
}

func TestWatches(t *testing.T) {
	e := newEnv(t)
	probed := make(chan string, 100)
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
	controller.Watches(ctl, func(s *corev1.Secret) []controller.Request {
		if v := s.Labels["for"]; v != "" {
			return []controller.Request{req(v)}
		}
		return nil
	}, probe[corev1.Secret](probed))
	run(e, ctl)
	waitIdle(e, ctl)
	runSteps(t, e, ctl, secretSentinel(probed), []step{
		{"create mapped", func(t *testing.T, e *env) { create(t, secrets(e), secret("s", map[string]string{"for": "x"})) }, []controller.Request{req("x")}},
		{"update: old and new mapping", func(t *testing.T, e *env) { patch(t, secrets(e), "s", `{"metadata":{"labels":{"for":"y"}}}`) }, []controller.Request{req("x"), req("y")}},
		{"create unmapped", func(t *testing.T, e *env) { create(t, secrets(e), secret("u", nil)) }, nil},
		{"delete", deleted(secrets, "s"), []controller.Request{req("y")}},
	})
}

// secretSentinel creates an unowned, unmapped Secret after each step and
// waits until the probe of the Secrets' source reports it.
func secretSentinel(probed <-chan string) func(t *testing.T, e *env, i int) {
	return func(t *testing.T, e *env, i int) {
		name := "sentinel-" + string(rune('a'+i))
		create(t, secrets(e), secret(name, nil))
		waitFor(t, probed, name)
	}
}

// deleted is a step's change that deletes the object name.
func deleted[T any](resource func(*env) client.Resource[T], name string) func(t *testing.T, e *env) {
	return func(t *testing.T, e *env) {
		if err := resource(e).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPredicatesPerSource checks that each source applies its own
// predicates: the primary kind a custom one, Owns LabelsChanged.
func TestPredicatesPerSource(t *testing.T) {
	e := newEnv(t)
	probedCMs, probedSecrets := make(chan string, 100), make(chan string, 100)
	notSkipped := controller.Predicate[corev1.ConfigMap]{Create: func(c *corev1.ConfigMap) bool { return !strings.HasPrefix(c.Name, "skip") }}
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config(), probe[corev1.ConfigMap](probedCMs), notSkipped)
	controller.Owns[corev1.Secret](ctl, probe[corev1.Secret](probedSecrets), controller.LabelsChanged[corev1.Secret]())
	run(e, ctl)
	waitIdle(e, ctl)
	// A sentinel goes through both sources: a ConfigMap named skip-… that
	// the primary's predicate drops, and an unowned Secret.
	sentinel := func(t *testing.T, e *env, i int) {
		name := "skip-sentinel-" + string(rune('a'+i))
		create(t, cms(e), cm(name))
		create(t, secrets(e), secret(name, nil))
		waitFor(t, probedCMs, name)
		waitFor(t, probedSecrets, name)
	}
	runSteps(t, e, ctl, sentinel, []step{
		{"primary: custom predicate refuses", func(t *testing.T, e *env) { create(t, cms(e), cm("skip-me")) }, nil},
		{"primary: custom predicate lets through", func(t *testing.T, e *env) { create(t, cms(e), cm("keep")) }, []controller.Request{req("keep")}},
		{"owned: create passes LabelsChanged", func(t *testing.T, e *env) {
			create(t, secrets(e), secret("s", map[string]string{"a": "1"}, ownerRef("v1", "ConfigMap", "keep", true)))
		}, []controller.Request{req("keep")}},
		{"owned: update of data only is filtered", func(t *testing.T, e *env) { patch(t, secrets(e), "s", `{"data":{"k":"dg=="}}`) }, nil},
		{"owned: update of labels passes", func(t *testing.T, e *env) { patch(t, secrets(e), "s", `{"metadata":{"labels":{"a":"2"}}}`) }, []controller.Request{req("keep")}},
	})
}

func TestPredicates(t *testing.T) {
	obj := func(gen int64, labels, annotations map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Generation: gen, Labels: labels, Annotations: annotations}}
	}
	l1, l2 := map[string]string{"a": "1"}, map[string]string{"a": "2"}
	preds := map[string]controller.Predicate[corev1.ConfigMap]{
		"GenerationChanged":  controller.GenerationChanged[corev1.ConfigMap](),
		"LabelsChanged":      controller.LabelsChanged[corev1.ConfigMap](),
		"AnnotationsChanged": controller.AnnotationsChanged[corev1.ConfigMap](),
	}
	for _, tc := range []struct {
		name     string
		old, new *corev1.ConfigMap
		want     map[string]bool // by predicate
	}{
		{"nothing changed", obj(1, l1, l1), obj(1, l1, l1), map[string]bool{}},
		{"generation", obj(1, l1, l1), obj(2, l1, l1), map[string]bool{"GenerationChanged": true}},
		{"label value", obj(1, l1, nil), obj(1, l2, nil), map[string]bool{"LabelsChanged": true}},
		{"label removed", obj(1, l1, nil), obj(1, nil, nil), map[string]bool{"LabelsChanged": true}},
		{"annotation", obj(1, nil, l1), obj(1, nil, l2), map[string]bool{"AnnotationsChanged": true}},
		{"everything", obj(1, l1, l1), obj(2, l2, l2), map[string]bool{"GenerationChanged": true, "LabelsChanged": true, "AnnotationsChanged": true}},
	} {
		for name, p := range preds {
			if got := p.Update(tc.old, tc.new); got != tc.want[name] {
				t.Errorf("%s: %s.Update = %v, want %v", tc.name, name, got, tc.want[name])
			}
			// Creates and deletes always pass.
			if p.Create != nil && !p.Create(tc.new) || p.Delete != nil && !p.Delete(tc.new) {
				t.Errorf("%s: %s refuses a create or a delete", tc.name, name)
			}
		}
	}
}

// stepFires moves the fake clock by d and checks that the one delay armed
// fired: it causes a reconcile. (Counting armed timers right after the step
// would race with that reconcile, which may already have failed and armed
// the next delay.)
func (e *env) stepFires(d time.Duration) controller.Request {
	e.t.Helper()
	e.clock.Step(d)
	return e.next()
}

// stepQuiet moves the fake clock by d and checks that the one delay armed
// did not fire.
func (e *env) stepQuiet(d time.Duration) {
	e.t.Helper()
	e.clock.Step(d)
	if n := e.clock.Timers(); n != 1 {
		e.t.Fatalf("after %v more, %d timers armed, want the one still waiting (at %v)", d, n, e.clock.Now().Sub(t0))
	}
}

// failing makes the reconciler fail the calls numbered in fail (from 1).
func failing(fail ...int) func(context.Context, controller.Request) (controller.Result, error) {
	var mu sync.Mutex
	n := 0
	return func(context.Context, controller.Request) (controller.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		if slices.Contains(fail, n) {
			return controller.Result{}, errors.New("boom")
		}
		return controller.Result{}, nil
	}
}

// TestBackoff checks that failures are retried after the rate limiter's
// per-request delay, doubling, and that a success forgets the failures.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		name        string
		limiter     workqueue.RateLimiter[controller.Request]
		first, next time.Duration
	}{
		{"default: 5ms doubling", nil, 5 * time.Millisecond, 10 * time.Millisecond},
		{"Config.RateLimiter", workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute), time.Second, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cm("a"))
			e.do = failing(1, 2, 4)
			cfg := e.config()
			cfg.RateLimiter = tc.limiter
			ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg)
			run(e, ctl)
			e.next() // 1: fails
			e.timers(1)
			e.stepQuiet(tc.first - time.Millisecond)
			e.stepFires(time.Millisecond) // 2: fails
			e.timers(1)
			e.stepQuiet(tc.next - time.Millisecond)
			e.stepFires(time.Millisecond) // 3: succeeds, forgets
			waitIdle(e, ctl)
			patch(t, cms(e), "a", `{"data":{"k":"v"}}`)
			e.next() // 4: fails, as a first failure again
			e.timers(1)
			e.stepQuiet(tc.first - time.Millisecond)
			e.stepFires(time.Millisecond) // 5: succeeds
			waitIdle(e, ctl)
			at := tc.first + tc.next
			if got, want := e.callTimes(), []time.Duration{0, tc.first, at, at, at + tc.first}; !slices.Equal(got, want) {
				t.Errorf("reconciled at %v, want %v", got, want)
			}
		})
	}
}

func TestRequeueAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		res   controller.Result
		err   error
		after time.Duration
	}{
		{"success with RequeueAfter", controller.Result{RequeueAfter: time.Minute}, nil, time.Minute},
		{"an error ignores RequeueAfter", controller.Result{RequeueAfter: time.Hour}, errors.New("boom"), 5 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, cm("a"))
			first := true
			e.do = func(context.Context, controller.Request) (controller.Result, error) {
				if first {
					first = false
					return tc.res, tc.err
				}
				return controller.Result{}, nil
			}
			ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
			run(e, ctl)
			e.next()
			e.timers(1)
			if tc.err == nil && !ctl.Idle() {
				t.Error("not idle while only a RequeueAfter waits")
			}
			e.stepQuiet(tc.after - time.Millisecond)
			e.stepFires(time.Millisecond)
			waitIdle(e, ctl)
			if got, want := e.callTimes(), []time.Duration{0, tc.after}; !slices.Equal(got, want) {
				t.Errorf("reconciled at %v, want %v", got, want)
			}
		})
	}
}

// TestPanic checks that a panic in Reconcile is an error: retried with
// backoff, with the controller still running.
func TestPanic(t *testing.T) {
	e := newEnv(t, cm("a"))
	panicked := false
	e.do = func(context.Context, controller.Request) (controller.Result, error) {
		if !panicked {
			panicked = true
			panic("bug")
		}
		return controller.Result{}, nil
	}
	var logs lockedBuffer
	cfg := e.config()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg)
	run(e, ctl)
	e.next()
	e.timers(1)
	e.stepFires(5 * time.Millisecond)
	waitIdle(e, ctl)
	for _, want := range []string{`msg="reconcile panicked" controller=configmaps request=ctl/a panic=bug`, "controller_test.TestPanic"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs do not have %q:\n%s", want, logs.String())
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestReconcileTimeout(t *testing.T) {
	t.Run("fake clock", func(t *testing.T) {
		e := newEnv(t, cm("a"))
		cause := make(chan error, 1)
		e.do = func(ctx context.Context, _ controller.Request) (controller.Result, error) {
			if len(e.callTimes()) > 1 {
				return controller.Result{}, nil
			}
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return controller.Result{}, ctx.Err()
		}
		cfg := e.config()
		cfg.ReconcileTimeout = 30 * time.Second
		ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg)
		run(e, ctl)
		e.next()
		e.timers(1)
		e.stepQuiet(30*time.Second - time.Millisecond)
		e.clock.Step(time.Millisecond)
		if err := <-cause; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cause %v, want DeadlineExceeded", err)
		}
		e.timers(1) // the retry
		e.clock.Step(5 * time.Millisecond)
		e.next()
		waitIdle(e, ctl)
		e.timers(0) // the second reconcile's timeout timer is stopped
	})
	t.Run("real clock", func(t *testing.T) {
		e := newEnv(t, cm("a"))
		errs := make(chan error, 1)
		e.do = func(ctx context.Context, _ controller.Request) (controller.Result, error) {
			if _, ok := ctx.Deadline(); !ok {
				errs <- errors.New("no deadline")
				return controller.Result{}, nil
			}
			<-ctx.Done()
			errs <- ctx.Err()
			return controller.Result{}, nil
		}
		ctl := controller.New[corev1.ConfigMap](e.factory, e, controller.Config{ReconcileTimeout: time.Millisecond, Logger: quietLogger()})
		run(e, ctl)
		if err := <-errs; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("reconcile's context ended with %v, want DeadlineExceeded", err)
		}
	})
}

// blocking makes every reconcile wait until release is closed, or its
// context is done.
func blocking(release <-chan struct{}) func(context.Context, controller.Request) (controller.Result, error) {
	return func(ctx context.Context, _ controller.Request) (controller.Result, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return controller.Result{}, nil
	}
}

func TestWorkers(t *testing.T) {
	t.Run("three at once", func(t *testing.T) {
		e := newEnv(t, cm("a"), cm("b"), cm("c"))
		release := make(chan struct{})
		e.do = blocking(release)
		cfg := e.config()
		cfg.Workers = 3
		ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg)
		run(e, ctl)
		for range 3 {
			e.next() // all three start before any returns
		}
		close(release)
		waitIdle(e, ctl)
	})
	t.Run("default: one", func(t *testing.T) {
		e := newEnv(t, cm("a"), cm("b"))
		release := make(chan struct{})
		e.do = blocking(release)
		ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
		run(e, ctl)
		e.next()
		select {
		case r := <-e.seen:
			t.Fatalf("%v reconciled while another reconcile is in flight", r)
		case <-time.After(50 * time.Millisecond): // a negative check: no second worker
		}
		close(release)
		e.next()
		waitIdle(e, ctl)
	})
}

func TestDebounce(t *testing.T) {
	e := newEnv(t, cm("a"), cm("sentinel"))
	probed := make(chan string, 100)
	// The probe sees every update; the sentinel's are then dropped, so that
	// it proves the updates before it were enqueued without enqueuing.
	notSentinel := controller.Predicate[corev1.ConfigMap]{Update: func(_, c *corev1.ConfigMap) bool { return c.Name != "sentinel" }}
	cfg := e.config()
	cfg.Debounce = 10 * time.Second
	ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg, probe[corev1.ConfigMap](probed), notSentinel)
	run(e, ctl)
	e.timers(1) // the initial list waits for its window
	if got := e.reconciled(); got != nil {
		t.Fatalf("reconciled %v before the debounce window ended", got)
	}
	e.stepFires(10 * time.Second)
	e.next()
	waitIdle(e, ctl)
	e.reset()
	drain(probed) // the initial list's reports
	for i := range 3 {
		patch(t, cms(e), "a", `{"data":{"k":"`+string(rune('0'+i))+`"}}`)
		patch(t, cms(e), "sentinel", `{"data":{"k":"`+string(rune('0'+i))+`"}}`)
		waitFor(t, probed, "sentinel") // the update of a is enqueued
		e.clock.Step(time.Second)      // within the window opened by the first
	}
	e.timers(1)
	e.stepQuiet(7*time.Second - time.Millisecond)
	if got := e.stepFires(time.Millisecond); got != req("a") {
		t.Errorf("reconciled %v, want a", got)
	}
	waitIdle(e, ctl)
	if got, want := e.callTimes(), []time.Duration{20 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("after a burst of 3 updates, reconciled at %v, want once at %v", got, want)
	}
}

func TestGracefulShutdown(t *testing.T) {
	e := newEnv(t, cm("a"), cm("b"))
	sawCancel, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.do = func(ctx context.Context, _ controller.Request) (controller.Result, error) {
		<-ctx.Done()
		once.Do(func() { close(sawCancel) })
		<-release
		return controller.Result{}, ctx.Err()
	}
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	first := e.next() // the other request is queued behind it
	cancel()
	<-sawCancel
	select {
	case <-done:
		t.Fatal("Run returned with a reconcile in flight")
	case <-time.After(50 * time.Millisecond): // a negative check: Run waits
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	e.factory.Shutdown()
	if got := e.reconciled(); !slices.Equal(got, []controller.Request{first}) {
		t.Errorf("reconciled %v, want only %v: queued requests are dropped on shutdown", got, first)
	}
	if err := ctl.WaitIdle(context.Background()); !errors.Is(err, controller.ErrStopped) {
		t.Errorf("WaitIdle after Run returned: %v, want ErrStopped", err)
	}
	if err := ctl.Run(context.Background()); !errors.Is(err, controller.ErrStarted) {
		t.Errorf("second Run: %v, want ErrStarted", err)
	}
}

func TestWaitIdle(t *testing.T) {
	e := newEnv(t, cm("a"))
	e.do = failing(1)
	var logs lockedBuffer
	cfg := e.config()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctl := controller.New[corev1.ConfigMap](e.factory, e, cfg)
	if ctl.Idle() {
		t.Error("idle before Run")
	}
	run(e, ctl)
	e.next()
	e.timers(1) // a retry waits: that is work left
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ctl.WaitIdle(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitIdle with a retry waiting: %v, want Canceled", err)
	}
	e.stepFires(5 * time.Millisecond)
	waitIdle(e, ctl)
	if err := ctl.WaitIdle(cancelled); err != nil {
		t.Errorf("WaitIdle once idle: %v", err)
	}
	if want := `msg="reconcile failed" controller=configmaps request=ctl/a err=boom`; !strings.Contains(logs.String(), want) {
		t.Errorf("logs do not have %q:\n%s", want, logs.String())
	}
}

// TestOwnsWhileRunning checks that a source added while the controller runs
// is watched (its informer started).
func TestOwnsWhileRunning(t *testing.T) {
	e := newEnv(t)
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config())
	run(e, ctl)
	waitIdle(e, ctl)
	controller.Owns[corev1.Secret](ctl)
	create(t, secrets(e), secret("s", nil, ownerRef("v1", "ConfigMap", "o", true)))
	if got := e.next(); got != req("o") {
		t.Errorf("reconciled %v, want o", got)
	}
}

// TestResync checks that a resync of the primary informer enqueues its
// objects even when the primary's predicates would drop every
// notification.
func TestResync(t *testing.T) {
	e := newEnv(t, cm("a"))
	e.factory = informer.NewFactory(e.f.Client(), informer.FactoryConfig{Namespace: ns, ResyncPeriod: 10 * time.Millisecond, Logger: quietLogger()})
	none := controller.Predicate[corev1.ConfigMap]{
		Create: func(*corev1.ConfigMap) bool { return false },
		Update: func(_, _ *corev1.ConfigMap) bool { return false },
		Delete: func(*corev1.ConfigMap) bool { return false },
	}
	ctl := controller.New[corev1.ConfigMap](e.factory, e, e.config(), none)
	run(e, ctl)
	if got := e.next(); got != req("a") {
		t.Errorf("resync reconciled %v, want a", got)
	}
}

func TestName(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ cfg, want string }{{"", "configmaps"}, {"mirror", "mirror"}} {
		if got := controller.New[corev1.ConfigMap](e.factory, e, controller.Config{Name: tc.cfg}).Name(); got != tc.want {
			t.Errorf("Config.Name %q: Name() = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestOwnsClusterScoped checks that the owner of a namespaced object is
// enqueued without a namespace when the primary kind is cluster-scoped.
func TestOwnsClusterScoped(t *testing.T) {
	e := newEnv(t)
	ctl := controller.New[corev1.Namespace](e.factory, e, e.config())
	controller.Owns[corev1.Secret](ctl)
	run(e, ctl)
	waitIdle(e, ctl) // the namespace "ctl" itself
	e.reset()
	create(t, secrets(e), secret("s", nil, ownerRef("v1", "Namespace", "owner", true)))
	if got, want := e.next(), (controller.Request{Name: "owner"}); got != want {
		t.Errorf("reconciled %v, want %v", got, want)
	}
}
