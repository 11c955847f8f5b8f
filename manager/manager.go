package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/leaderelection"
	"github.com/kapi-dev/kapi/workqueue"
)

// DefaultGracefulShutdownTimeout is the default of
// Config.GracefulShutdownTimeout, controller-runtime's.
const DefaultGracefulShutdownTimeout = 30 * time.Second

// Config configures a [Manager]. Every zero value is a documented default:
// Config{} is a manager with a factory caching all namespaces, no leader
// election (every runnable runs at once), no HTTP server and a 30s
// graceful shutdown.
type Config struct {
	// Factory configures the manager's informer factory (Manager.Factory).
	Factory informer.FactoryConfig
	// Client configures the cached clients [Client] returns (default:
	// deep copies, and a Get waits up to 10s for the cache to see the
	// client's own writes; see informer.ClientConfig).
	Client informer.ClientConfig

	// LeaderElection, if set, makes the runnables that need leader
	// election (see [LeaderElectionRunnable]) run only while this replica
	// holds the Lease it describes (default nil: no election, they run at
	// once). OnStartedLeading must be nil: the manager runs the leader-only
	// runnables. OnStoppedLeading and OnNewLeader are called as given. Its
	// Clock defaults to Config.Clock. /healthz fails when its watchdog does
	// (see Manager.Handler and leaderelection.Config.WatchdogTolerance).
	LeaderElection *leaderelection.Config

	// HealthAddr is the address ("host:port", ":8081") of the HTTP server
	// of the probes /healthz and /readyz (default "": not served).
	HealthAddr string
	// MetricsAddr is the address of the HTTP server of /metrics (default
	// "": not served). It may be HealthAddr: one server then serves the
	// three paths.
	MetricsAddr string
	// Metrics serves /metrics (default nil: /metrics answers 404). With
	// Prometheus and the metrics package it is
	// promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), on the registry
	// given to metrics.Register; the manager itself does not import
	// Prometheus.
	Metrics http.Handler

	// GracefulShutdownTimeout bounds how long stopping waits for the
	// runnables to return once their context is done (default 0: 30s;
	// negative: do not wait). When ctx is done or a runnable fails, it
	// bounds the leader-only runnables and the others together; after a
	// lost lease, the leader-only runnables get it from when leading
	// stopped, and the others from when they are stopped. Runnables still
	// running then are left behind and Start returns an error saying so:
	// the process should exit.
	GracefulShutdownTimeout time.Duration

	// Logger receives the manager's logs (default nil: slog.Default()).
	Logger *slog.Logger
	// Clock times the graceful shutdown, and the leader election when
	// LeaderElection.Clock is nil (default nil: workqueue.RealClock).
	// Tests set a clocktest.FakeClock.
	Clock workqueue.Clock
}

// Runnable is work the manager runs: Start runs until ctx is done and
// then returns nil, or returns an error at any time, which stops the
// manager. Start returning nil before ctx is done is not an error: the
// work is over.
//
// A Runnable needs leader election unless it implements
// [LeaderElectionRunnable] and says otherwise, as in controller-runtime:
// work that writes should not run on two replicas at once.
type Runnable interface {
	Start(ctx context.Context) error
}

// RunnableFunc is a function used as a [Runnable] (needing leader
// election).
type RunnableFunc func(ctx context.Context) error

// Start calls f(ctx).
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// LeaderElectionRunnable is a [Runnable] that says whether it needs leader
// election. One that does not runs on every replica, from the start.
type LeaderElectionRunnable interface {
	Runnable
	NeedLeaderElection() bool
}

// Controller adapts a controller, such as a *controller.Controller[T]
// (anything with Run(ctx) error), to a Runnable that needs leader
// election.
func Controller(ctl interface {
	Run(ctx context.Context) error
}) Runnable {
	return RunnableFunc(ctl.Run)
}

// WithoutLeaderElection returns r as a Runnable that runs on every replica,
// leading or not (a cache warmer, a server of webhooks).
func WithoutLeaderElection(r Runnable) Runnable { return everywhere{r} }

type everywhere struct{ Runnable }

func (everywhere) NeedLeaderElection() bool { return false }

func needsLeaderElection(r Runnable) bool {
	if le, ok := r.(LeaderElectionRunnable); ok {
		return le.NeedLeaderElection()
	}
	return true
}

// ErrStarted is returned by a second call to Start, and by Add once Start
// has been called.
var ErrStarted = errors.New("manager: already started")

// Manager runs, with one context, an informer factory, the runnables added
// to it (controllers), leader election and the HTTP servers of probes and
// metrics, and stops them in order. Make one with [New], Add runnables,
// and call Start once.
type Manager struct {
	cfg     Config
	factory *informer.Factory
	log     *slog.Logger
	elector *leaderelection.LeaderElector // nil without election

	mu        sync.Mutex
	runnables []Runnable
	started   bool
	leaders   []Runnable // set by Start, read by lead
	leadGroup *group     // the leader-only runnables, once started

	ready       atomic.Bool
	elected     chan struct{}
	healthAddr  atomic.Pointer[string]
	metricsAddr atomic.Pointer[string]

	failOnce sync.Once
	failed   chan struct{}
	err      error // the first error, set before failed is closed
}

// New returns a manager of c's objects configured by cfg. It makes the
// informer factory, and the leader elector if cfg asks for one, and
// returns an error if cfg.LeaderElection is invalid. Nothing runs, and no
// address is bound, until Start.
func New(c *client.Client, cfg Config) (*Manager, error) {
	if cfg.GracefulShutdownTimeout == 0 {
		cfg.GracefulShutdownTimeout = DefaultGracefulShutdownTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = workqueue.RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{
		cfg:     cfg,
		factory: informer.NewFactory(c, cfg.Factory),
		log:     cfg.Logger,
		elected: make(chan struct{}),
		failed:  make(chan struct{}),
	}
	if cfg.LeaderElection != nil {
		lec := *cfg.LeaderElection
		if lec.OnStartedLeading != nil {
			return nil, errors.New("manager: LeaderElection.OnStartedLeading must be nil: the manager runs the leader-only runnables (Add them)")
		}
		lec.OnStartedLeading = m.lead
		if lec.Clock == nil {
			lec.Clock = cfg.Clock
		}
		le, err := leaderelection.New(c, lec)
		if err != nil {
			return nil, fmt.Errorf("manager: %w", err)
		}
		m.elector = le
	}
	return m, nil
}

// Factory returns the manager's informer factory: informers and
// controllers made on it before Start are started and waited for by
// Start.
func (m *Manager) Factory() *informer.Factory { return m.factory }

// Client returns a client of objects of type T that reads from the
// manager's caches and writes to the server (informer.Cached on the
// manager's factory, configured by Config.Client): controller-runtime's
// manager.GetClient(), per type. A reconciler takes it as the
// client.Resource[T] it would take from client.For:
//
//	cms := manager.Client[corev1.ConfigMap](m)
//	cm, err := cms.Namespace(req.Namespace).Get(ctx, req.Name, metav1.GetOptions{})
//
// Asked for before Start, its informer is started and synced by Start
// with the others (so /readyz waits for it); asked for after, by its first
// read. Its cache is scoped by Config.Factory (ByObject for T).
func Client[T any, PT client.ObjectPtr[T]](m *Manager) client.Resource[T] {
	return informer.Cached[T, PT](m.factory, m.cfg.Client)
}

// Add adds a runnable, to be run by Start. It returns ErrStarted once
// Start has been called: add every runnable before.
func (m *Manager) Add(r Runnable) error {
	if r == nil {
		return errors.New("manager: Add(nil)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return ErrStarted
	}
	m.runnables = append(m.runnables, r)
	return nil
}

// Elected returns a channel closed when the leader-only runnables are
// started: when this replica becomes the leader, or once the caches have
// synced without leader election.
func (m *Manager) Elected() <-chan struct{} { return m.elected }

// HealthAddr returns the address the probes are served on, once Start
// has bound it ("" before, or without Config.HealthAddr). With port 0 in
// Config.HealthAddr, it tells the port chosen.
func (m *Manager) HealthAddr() string { return load(&m.healthAddr) }

// MetricsAddr returns the address /metrics is served on, once Start has
// bound it ("" before, or without Config.MetricsAddr).
func (m *Manager) MetricsAddr() string { return load(&m.metricsAddr) }

func load(p *atomic.Pointer[string]) string {
	if s := p.Load(); s != nil {
		return *s
	}
	return ""
}

// Handler returns the handler of the manager's HTTP servers: /healthz,
// /readyz and /metrics, to mount on a server of one's own.
//
// /healthz answers 200 while the manager runs, unless the leader
// election's watchdog fails (leaderelection.LeaderElector.Check: this
// replica believes it leads but has not renewed its Lease for longer than
// LeaseDuration plus WatchdogTolerance); it then answers 500, so that a
// liveness probe restarts a replica whose election is stuck, as client-go's
// HealthzAdaptor does. /readyz answers 200 once
// the factory's caches have synced, and 503 before and once stopping has
// begun; it does not depend on leadership (as controller-runtime's probes
// do not), so a replica waiting for the Lease is ready: a readiness that
// waited for leadership would keep standby replicas out of a rollout.
// /metrics is Config.Metrics.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if m.elector != nil {
			if err := m.elector.Check(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !m.ready.Load() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	if m.cfg.Metrics != nil {
		mux.Handle("/metrics", m.cfg.Metrics)
	}
	return mux
}

// fail records err as the manager's error, if it is the first, and makes
// Start stop.
func (m *Manager) fail(err error) {
	m.failOnce.Do(func() {
		m.err = err
		close(m.failed)
	})
}

// Start runs the manager until ctx is done or something fails, and then
// stops it; it returns once every goroutine it started has stopped (save
// runnables that outlive GracefulShutdownTimeout).
//
// In order, it binds and serves the HTTP servers, starts the factory's
// informers and waits for their caches, starts the runnables that do not
// need leader election, and then either stands for election, starting the
// leader-only runnables while it leads, or, without election, starts them
// at once.
//
// It stops when ctx is done, when a runnable returns an error, or when
// the lease is lost, in this order: the leader-only runnables (their
// context is cancelled, and they are waited for), the others, the
// factory's informers, then the HTTP servers. The runnables are waited
// for as Config.GracefulShutdownTimeout says; /readyz answers 503 from the
// moment stopping begins.
//
// It returns nil when stopped by ctx, else the first error: a runnable's,
// leaderelection.ErrLeaseLost (wrapped) when the lease is lost, an address
// that cannot be bound, or the runnables that did not stop in time. As
// controller-runtime's, a manager that lost its lease does not stand again:
// the process should exit.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return ErrStarted
	}
	m.started = true
	var others []Runnable
	for _, r := range m.runnables {
		if needsLeaderElection(r) {
			m.leaders = append(m.leaders, r)
		} else {
			others = append(others, r)
		}
	}
	m.mu.Unlock()

	// Each stage has a context of its own, so that they stop in order;
	// they keep ctx's values.
	base := context.WithoutCancel(ctx)

	servers, err := m.serve()
	if err != nil {
		return err
	}
	defer servers.shutdown(m.log)

	factoryCtx, stopFactory := context.WithCancel(base)
	defer m.factory.Shutdown()
	defer stopFactory()
	m.factory.Start(factoryCtx)
	if err := m.factory.WaitForCacheSync(ctx); err != nil {
		return nil // ctx is done: nothing else was started
	}

	othersCtx, stopOthers := context.WithCancel(base)
	defer stopOthers()
	otherGroup := m.startGroup(othersCtx, others)

	leadersCtx, stopLeaders := context.WithCancel(base)
	defer stopLeaders()
	electionDone := make(chan struct{})
	if m.elector != nil {
		go func() {
			defer close(electionDone)
			if err := m.elector.Run(leadersCtx); err != nil {
				m.fail(fmt.Errorf("manager: %w", err))
			}
		}()
	} else {
		close(electionDone)
		m.startLeaders(leadersCtx)
	}
	m.ready.Store(true)

	select {
	case <-ctx.Done():
	case <-m.failed:
	}
	m.ready.Store(false)
	deadline := m.cfg.Clock.Now().Add(m.cfg.GracefulShutdownTimeout)

	// The leader-only runnables first: the elector returns once lead
	// has, which waits for them.
	stopLeaders()
	<-electionDone
	m.mu.Lock()
	lg := m.leadGroup
	m.mu.Unlock()
	if lg != nil && !m.waitGroup(lg, deadline) {
		m.fail(fmt.Errorf("manager: leader-only runnables still running %v after being stopped", m.cfg.GracefulShutdownTimeout))
	}
	stopOthers()
	if !m.waitGroup(otherGroup, deadline) {
		m.fail(fmt.Errorf("manager: runnables still running %v after being stopped", m.cfg.GracefulShutdownTimeout))
	}
	// The deferred calls stop the factory, then the servers. fail(nil)
	// ends the recording of errors (nil if none came before ctx was done).
	m.fail(nil)
	return m.err
}

// lead is OnStartedLeading: it runs the leader-only runnables until ctx
// is done, and waits for them up to the graceful shutdown deadline.
func (m *Manager) lead(ctx context.Context) {
	g := m.startLeaders(ctx)
	<-ctx.Done()
	if !m.waitGroup(g, m.cfg.Clock.Now().Add(m.cfg.GracefulShutdownTimeout)) {
		m.fail(fmt.Errorf("manager: leader-only runnables still running %v after leading stopped", m.cfg.GracefulShutdownTimeout))
	}
}

// startLeaders starts the leader-only runnables with ctx.
func (m *Manager) startLeaders(ctx context.Context) *group {
	m.mu.Lock()
	g := m.startGroup(ctx, m.leaders)
	m.leadGroup = g
	m.mu.Unlock()
	close(m.elected)
	return g
}

// group is runnables started together; done is closed once all have
// returned.
type group struct {
	done chan struct{}
}

func (m *Manager) startGroup(ctx context.Context, rs []Runnable) *group {
	g := &group{done: make(chan struct{})}
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			if err := r.Start(ctx); err != nil {
				m.fail(err)
			}
		})
	}
	go func() {
		wg.Wait()
		close(g.done)
	}()
	return g
}

// waitGroup waits until g is done or the clock reaches deadline; false
// if the deadline came first.
func (m *Manager) waitGroup(g *group, deadline time.Time) bool {
	select {
	case <-g.done:
		return true
	default:
	}
	if m.cfg.GracefulShutdownTimeout < 0 {
		return false
	}
	t := m.cfg.Clock.NewTimerAt(deadline)
	defer t.Stop()
	select {
	case <-g.done:
		return true
	case <-t.C():
		return false
	}
}

// servers are the manager's running HTTP servers.
type servers struct {
	srvs []*http.Server
	wg   sync.WaitGroup
}

// serve binds Config's addresses and serves them.
func (m *Manager) serve() (*servers, error) {
	s := &servers{}
	type bind struct {
		addr string
		mux  *http.ServeMux
		into []*atomic.Pointer[string]
	}
	var binds []*bind
	h := m.Handler()
	add := func(addr string, into *atomic.Pointer[string], paths ...string) {
		if addr == "" {
			return
		}
		for _, b := range binds {
			if b.addr == addr {
				for _, p := range paths {
					b.mux.Handle(p, h)
				}
				b.into = append(b.into, into)
				return
			}
		}
		b := &bind{addr: addr, mux: http.NewServeMux(), into: []*atomic.Pointer[string]{into}}
		for _, p := range paths {
			b.mux.Handle(p, h)
		}
		binds = append(binds, b)
	}
	add(m.cfg.HealthAddr, &m.healthAddr, "/healthz", "/readyz")
	add(m.cfg.MetricsAddr, &m.metricsAddr, "/metrics")
	var lns []net.Listener
	for _, b := range binds {
		ln, err := net.Listen("tcp", b.addr)
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, fmt.Errorf("manager: %w", err)
		}
		lns = append(lns, ln)
		addr := ln.Addr().String()
		for _, p := range b.into {
			p.Store(&addr)
		}
	}
	for i, b := range binds {
		srv := &http.Server{Handler: b.mux, ReadHeaderTimeout: 10 * time.Second}
		s.srvs = append(s.srvs, srv)
		ln := lns[i]
		s.wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.log.Error("manager: serving", "addr", ln.Addr().String(), "err", err)
			}
		})
	}
	return s, nil
}

// shutdown stops the servers, giving requests in flight a few seconds.
func (s *servers) shutdown(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.srvs {
		if err := srv.Shutdown(ctx); err != nil {
			log.Warn("manager: stopping server", "err", err)
			_ = srv.Close()
		}
	}
	s.wg.Wait()
}
