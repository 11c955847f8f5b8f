package manager_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/leaderelection"
	"github.com/kapi-dev/kapi/manager"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds, in real time, waits for what should happen at once.
const waitLimit = 20 * time.Second

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// started runs m.Start in a goroutine; the returned function cancels it
// and returns Start's error. The test fails if Start has not returned
// within waitLimit.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func start(t *testing.T, m *manager.Manager) *run {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &run{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = m.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// wait waits until Start has returned and returns its error.
func (r *run) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(waitLimit):
		t.Fatal("Start did not return")
		return nil
	}
}

func (r *run) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

func waitFor(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// eventually polls cond until it holds, for waitLimit.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// log records events in order.
type log struct {
	mu     sync.Mutex
	events []string
}

func (l *log) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events, " ")
}

// recorder is a runnable that logs its start and stop and runs until its
// context is done, calling onStop then.
type recorder struct {
	ctx     context.Context // Start's, set before started is closed
	name    string
	log     *log
	started chan struct{}
	onStop  func()
	leader  bool
}

func newRecorder(name string, l *log, leader bool) *recorder {
	return &recorder{name: name, log: l, started: make(chan struct{}), leader: leader}
}

func (r *recorder) Start(ctx context.Context) error {
	r.ctx = ctx
	r.log.add(r.name + "+")
	close(r.started)
	<-ctx.Done()
	if r.onStop != nil {
		r.onStop()
	}
	r.log.add(r.name + "-")
	return nil
}

func (r *recorder) NeedLeaderElection() bool { return r.leader }

// Runnables start after the caches have synced, leader-only ones last;
// they stop leader-only first, then the others, while the HTTP servers
// still answer.
func TestStartAndStopInOrder(t *testing.T) {
	f := fake.New(t)
	m, err := manager.New(f.Client(), manager.Config{HealthAddr: "127.0.0.1:0", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	cms := informer.For[corev1.ConfigMap](m.Factory())
	var l log
	other := newRecorder("other", &l, false)
	leader := newRecorder("leader", &l, true)
	ctlStarted := make(chan struct{})
	ctl := manager.Controller(runFunc(func(ctx context.Context) error {
		close(ctlStarted)
		<-ctx.Done()
		l.add("ctl-")
		return nil
	}))
	var healthAtStop int
	other.onStop = func() {
		code, _ := get(t, "http://"+m.HealthAddr()+"/healthz")
		healthAtStop = code
		// The informers still watch: they stop after the runnables.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "default"}}
		if _, err := client.For[corev1.ConfigMap](f.Client()).Namespace("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating a ConfigMap: %v", err)
			return
		}
		eventually(t, "the informer to see a ConfigMap created while runnables stop", func() bool {
			_, err := cms.Lister().Namespace("default").Get("late")
			return err == nil
		})
	}
	leader.onStop = func() {
		if other.ctx.Err() != nil {
			t.Errorf("the leader-only runnable stops after the others were stopped")
		}
	}
	for _, r := range []manager.Runnable{leader, other, ctl} {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	syncedAtStart := make(chan bool, 1)
	if err := m.Add(manager.WithoutLeaderElection(manager.RunnableFunc(func(ctx context.Context) error {
		select {
		case <-cms.Synced():
			syncedAtStart <- true
		default:
			syncedAtStart <- false
		}
		return nil // finished: not an error
	}))); err != nil {
		t.Fatal(err)
	}
	r := start(t, m)
	waitFor(t, "the leader runnable", leader.started)
	waitFor(t, "the other runnable", other.started)
	waitFor(t, "the controller", ctlStarted)
	waitFor(t, "Elected", m.Elected())
	if !<-syncedAtStart {
		t.Error("a runnable started before the caches synced")
	}
	if err := m.Add(other); !errors.Is(err, manager.ErrStarted) {
		t.Errorf("Add after Start: %v, want ErrStarted", err)
	}
	if err := m.Start(context.Background()); !errors.Is(err, manager.ErrStarted) {
		t.Errorf("second Start: %v, want ErrStarted", err)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if got := l.String(); !strings.HasSuffix(got, "other-") {
		t.Errorf("events %q, want the other runnable stopped last", got)
	}
	if healthAtStop != http.StatusOK {
		t.Errorf("/healthz while runnables stop: %d, want 200 (servers stop last)", healthAtStop)
	}
	if _, err := http.Get("http://" + m.HealthAddr() + "/healthz"); err == nil {
		t.Error("the health server still answers after Start returned")
	}
}

// runFunc is a type with Run, as controller.Controller has.
type runFunc func(ctx context.Context) error

func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

// hangingList returns a manager with a ConfigMap informer whose list
// hangs until release is closed; listing is closed once it hangs.
func hangingList(t *testing.T) (m *manager.Manager, listing, release chan struct{}) {
	t.Helper()
	f := fake.New(t)
	listing, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.PrependReactor("list", "configmaps", func(fake.Action) (bool, any, error) {
		once.Do(func() { close(listing) })
		<-release
		return false, nil, nil
	})
	m, err := manager.New(f.Client(), manager.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	informer.For[corev1.ConfigMap](m.Factory())
	return m, listing, release
}

// /readyz answers 503 until the caches have synced, then 200; /healthz
// answers 200 from the start.
func TestReadyzAfterSync(t *testing.T) {
	m, listing, release := hangingList(t)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	started := make(chan struct{})
	if err := m.Add(manager.WithoutLeaderElection(manager.RunnableFunc(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return nil
	}))); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before Start: %d, want 503", code)
	}
	r := start(t, m)
	waitFor(t, "the informer's list", listing)
	if code, _ := get(t, srv.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d, want 200", code)
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while the list hangs: %d, want 503", code)
	}
	select {
	case <-started:
		t.Error("a runnable started before the caches synced")
	default:
	}
	close(release)
	eventually(t, "/readyz 200", func() bool { code, _ := get(t, srv.URL+"/readyz"); return code == http.StatusOK })
	waitFor(t, "the runnable", started)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz after stopping: %d, want 503", code)
	}
}

// Stopped before the caches sync, Start returns nil without starting a
// runnable.
func TestStopBeforeSync(t *testing.T) {
	m, _, release := hangingList(t)
	defer close(release)
	ran := false
	_ = m.Add(manager.RunnableFunc(func(context.Context) error { ran = true; return nil }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Start(ctx); err != nil {
		t.Errorf("Start: %v", err)
	}
	if ran {
		t.Error("a runnable ran")
	}
}

// /metrics serves Config.Metrics, on the probes' server when the
// addresses are one, on a server of its own otherwise.
func TestMetricsServed(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "kapi_up 1\n")
	})
	for _, tc := range []struct {
		name            string
		health, metr    string
		healthOnMetrics bool
	}{
		{"one server", "127.0.0.1:0", "127.0.0.1:0", true},
		{"two servers", "127.0.0.1:0", "localhost:0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := manager.Config{Metrics: metrics, HealthAddr: tc.health, MetricsAddr: tc.metr, Logger: quiet()}
			m, err := manager.New(fake.NewClient(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := start(t, m)
			waitFor(t, "Elected", m.Elected()) // after the servers are bound
			if code, body := get(t, "http://"+m.MetricsAddr()+"/metrics"); code != 200 || body != "kapi_up 1\n" {
				t.Errorf("/metrics: %d %q", code, body)
			}
			if code, _ := get(t, "http://"+m.HealthAddr()+"/readyz"); code != 200 {
				t.Errorf("/readyz: %d", code)
			}
			code, _ := get(t, "http://"+m.MetricsAddr()+"/healthz")
			if got := code == 200; got != tc.healthOnMetrics {
				t.Errorf("/healthz on the metrics address: %d", code)
			}
			if err := r.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An address that cannot be bound fails Start at once.
func TestBindError(t *testing.T) {
	m, err := manager.New(fake.NewClient(t), manager.Config{HealthAddr: "256.0.0.1:0", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(t.Context()); err == nil {
		t.Error("Start with an address that cannot be bound: nil error")
	}
}

// A runnable's error stops the manager, and Start returns it.
func TestFailingRunnableStops(t *testing.T) {
	m, err := manager.New(fake.NewClient(t), manager.Config{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	var l log
	other := newRecorder("other", &l, false)
	leader := newRecorder("leader", &l, true)
	boom := errors.New("boom")
	leader.onStop = func() {
		if other.ctx.Err() != nil {
			t.Errorf("the leader-only runnable stops after the others were stopped")
		}
	}
	for _, r := range []manager.Runnable{other, leader, manager.RunnableFunc(func(ctx context.Context) error {
		<-leader.started
		<-other.started
		return boom
	})} {
		_ = m.Add(r)
	}
	r := start(t, m)
	if err := r.wait(t); !errors.Is(err, boom) {
		t.Errorf("Start: %v, want boom", err)
	}
	if got := l.String(); !strings.HasSuffix(got, "leader- other-") {
		t.Errorf("events %q, want the leader-only runnable stopped first", got)
	}
}

// A runnable that ignores its context is waited for
// GracefulShutdownTimeout on the manager's clock, then Start returns an
// error.
func TestGracefulShutdownTimeout(t *testing.T) {
	clock := clocktest.NewFakeClock(epoch)
	m, err := manager.New(fake.NewClient(t), manager.Config{Clock: clock, GracefulShutdownTimeout: 10 * time.Second, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	_ = m.Add(manager.RunnableFunc(func(ctx context.Context) error {
		close(started)
		<-release // ignores ctx
		return nil
	}))
	r := start(t, m)
	waitFor(t, "the runnable", started)
	r.cancel()
	eventually(t, "the shutdown timer", func() bool { return clock.Timers() > 0 })
	select {
	case <-r.done:
		t.Fatal("Start returned before the timeout")
	default:
	}
	clock.Step(10 * time.Second)
	err = r.wait(t)
	close(release)
	if err == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("Start: %v, want an error about runnables still running", err)
	}
}

func TestNewRejectsOnStartedLeading(t *testing.T) {
	c := fake.NewClient(t)
	_, err := manager.New(c, manager.Config{LeaderElection: &leaderelection.Config{
		Name: "x", Identity: "a", Namespace: "default", OnStartedLeading: func(context.Context) {},
	}})
	if err == nil {
		t.Error("New accepted LeaderElection.OnStartedLeading")
	}
	_, err = manager.New(c, manager.Config{LeaderElection: &leaderelection.Config{Namespace: "default"}})
	if err == nil || !strings.Contains(err.Error(), "Identity") {
		t.Errorf("New with an invalid LeaderElection: %v", err)
	}
}
