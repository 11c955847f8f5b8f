package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/workqueue"
)

// Request names the object to reconcile. A controller queues requests, not
// objects, so that a reconcile reads the latest state (from the informer's
// cache) and a burst of events for one object costs one reconcile.
type Request struct {
	// Namespace is the object's namespace, "" for a cluster-scoped object.
	Namespace string
	// Name is the object's name.
	Name string
}

// String returns "namespace/name", or "name" for a cluster-scoped object:
// the object's key in an informer's cache.
func (r Request) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Result tells the controller what to do with a request that was
// reconciled without error.
type Result struct {
	// RequeueAfter, if positive, reconciles the request again once it has
	// elapsed (on Config.Clock), even if nothing changes: for state the
	// controller polls, such as a certificate's expiry. Its backoff is
	// reset as for any success. A change to the object before then still
	// reconciles it at once. Zero: reconcile again only when a watched
	// object changes.
	RequeueAfter time.Duration
}

// Reconciler makes the world match the desired state of the object a request
// names. It is level-triggered: it is told which object, not what changed,
// and reads the object's current state itself (typically from the
// informer's Lister; a deleted object is NotFound there).
//
// An error retries the request after a per-request exponential backoff
// (Config.RateLimiter), and its Result is ignored; a nil error resets the
// backoff and follows Result. A panic is recovered and counts as an error.
// The context is done when the reconcile times out
// (Config.ReconcileTimeout) or the controller stops.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// ReconcilerFunc is a Reconciler made of a function.
type ReconcilerFunc func(ctx context.Context, req Request) (Result, error)

// Reconcile calls f.
func (f ReconcilerFunc) Reconcile(ctx context.Context, req Request) (Result, error) {
	return f(ctx, req)
}

// Config configures a Controller. Every zero value is the documented
// default: Config{} is one worker, client-go's rate limiter, no timeout and
// no debounce.
type Config struct {
	// Name names the controller in logs and errors (default: the primary
	// kind's resource, such as "configmaps", or its Go type if it is not in
	// the scheme).
	Name string
	// Workers is how many requests are reconciled at once (default 0: 1).
	// One request is never reconciled by two workers at the same time.
	Workers int
	// RateLimiter paces the retries of failed requests (default nil:
	// workqueue.DefaultControllerRateLimiter, per request 5ms doubling to
	// 1000s, and 10 retries a second with bursts of 100 overall, timed by
	// Clock).
	RateLimiter workqueue.RateLimiter[Request]
	// ReconcileTimeout, if positive, bounds each reconcile: its context is
	// done once it has elapsed on Clock, and the reconcile's error is then
	// retried as any other (default 0: no timeout). With a Clock other
	// than workqueue.RealClock the context is cancelled when that clock
	// reaches the deadline, with context.DeadlineExceeded as its
	// context.Cause.
	ReconcileTimeout time.Duration
	// Debounce, if positive, delays the reconcile a notification asks for
	// by Debounce, and every notification for the same request in that
	// window joins it: a burst of changes to one object within Debounce of
	// its first change is one reconcile, at the window's end (default 0: a
	// notification queues its request at once). It does not delay retries
	// or RequeueAfter. Unlike kube-rs's debounce, the window is not pushed
	// back by each notification, so an object that changes all the time is
	// still reconciled once per window rather than never.
	Debounce time.Duration
	// Logger receives the controller's logs: reconcile errors and panics
	// (default nil: slog.Default()).
	Logger *slog.Logger
	// Clock is the time of backoff, RequeueAfter, Debounce,
	// ReconcileTimeout and metric durations (default nil:
	// workqueue.RealClock). Tests set a clocktest.FakeClock.
	Clock workqueue.Clock
	// Metrics receives every reconcile's outcome and duration (default
	// nil: none). The metrics package exports them to Prometheus.
	Metrics Metrics
	// QueueMetrics receives the events of the controller's work queue, as
	// workqueue.Config.Metrics (default nil: none). The metrics package
	// exports them to Prometheus.
	QueueMetrics workqueue.Metrics
}

// Controller reconciles the objects of a primary kind T, and the owners or
// mapped requests of the other kinds it watches (Owns, Watches), from the
// informers of one factory, with a rate-limited work queue and Config's
// workers. Make one with New, add sources, then Run it.
type Controller[T any] struct {
	name       string
	factory    *informer.Factory
	reconciler Reconciler
	cfg        Config
	kind       client.Kind // the primary kind, from the factory client's scheme
	log        *slog.Logger

	mu         sync.Mutex
	sources    []source
	unregister []func()
	runCtx     context.Context // set by Run; nil before
	queue      workqueue.RateLimitingQueue[Request]
	stopping   bool // Run is shutting down or has returned
	started    bool // workers are running: every source's initial objects are queued
	pending    map[Request]struct{}
	inFlight   int
	changed    chan struct{} // closed and replaced when the controller may have become idle
}

// ErrStarted is returned by a second call to Run: a controller runs once.
var ErrStarted = errors.New("controller: already started")

// ErrStopped is returned by WaitIdle once Run has returned.
var ErrStopped = errors.New("controller: stopped")

// New returns a controller that reconciles, with r, the objects of type T
// that the factory's informer for T holds: an object enqueues its own
// request when it is created, changes or is deleted, and predicates let the
// notification through. A resync of that informer (the factory's
// ResyncPeriod) enqueues every object, predicates or not. Add other sources
// with Owns and Watches; nothing happens until Run.
func New[T any, PT client.ObjectPtr[T]](factory *informer.Factory, r Reconciler, cfg Config, predicates ...Predicate[T]) *Controller[T] {
	k, _ := client.KindFor[T](factory.Client().Scheme())
	name := cfg.Name
	if name == "" {
		name = k.Resource
		if name == "" {
			name = reflect.TypeFor[T]().String()
		}
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = workqueue.RealClock{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Controller[T]{
		name: name, factory: factory, reconciler: r, cfg: cfg, kind: k,
		log:     log.With("controller", name),
		pending: map[Request]struct{}{},
		changed: make(chan struct{}),
	}
	c.sources = []source{watch(informer.For[T, PT](factory), requestFor[T, PT], predicates, true)}
	return c
}

// Name returns the controller's name (Config.Name or its default).
func (c *Controller[T]) Name() string { return c.name }

// addSource registers s now if Run is running, or keeps it for Run.
func (c *Controller[T]) addSource(s source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.stopping:
		return
	case c.runCtx == nil:
		c.sources = append(c.sources, s)
	default:
		unregister, _, err := s.register(c.enqueue)
		if err != nil {
			c.log.Error("adding a source", "err", err)
			return
		}
		c.unregister = append(c.unregister, unregister)
		c.factory.Start(c.runCtx)
	}
}

// enqueue queues req, after the debounce window if there is one, and
// counts it as pending work until a worker takes it.
func (c *Controller[T]) enqueue(req Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping || c.queue == nil {
		return
	}
	c.pending[req] = struct{}{}
	if c.cfg.Debounce > 0 {
		c.queue.AddAfter(req, c.cfg.Debounce)
	} else {
		c.queue.Add(req)
	}
}

// Run starts the informers of the controller's sources that the factory
// has not started (with ctx), registers the controller's handlers, waits
// until they have been handed every object of their informers' initial
// lists, and then reconciles with Config.Workers workers until ctx is done.
//
// Then it shuts down gracefully: requests still queued are not reconciled,
// reconciles in flight see their context done and are waited for, the
// handlers are unregistered, and Run returns once every goroutine it
// started has stopped, with nil. It returns an error if ctx is done before
// the caches have synced (with ctx's error wrapped), if a handler cannot be
// registered, or ErrStarted if Run was called before.
//
// The factory's informers are the factory's: stop them by cancelling the
// contexts they were started with, and wait for them with
// Factory.Shutdown.
func (c *Controller[T]) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.runCtx != nil {
		c.mu.Unlock()
		return ErrStarted
	}
	c.runCtx = ctx
	c.queue = workqueue.NewRateLimiting(c.cfg.RateLimiter, workqueue.Config{Clock: c.cfg.Clock, Metrics: c.cfg.QueueMetrics})
	var syncers []informer.Syncer
	var err error
	for _, s := range c.sources {
		unregister, sync, rerr := s.register(c.enqueue)
		if rerr != nil {
			err = rerr
			break
		}
		c.unregister = append(c.unregister, unregister)
		syncers = append(syncers, sync)
	}
	c.sources = nil
	c.factory.Start(ctx)
	c.mu.Unlock()
	defer c.shutdown()

	if err != nil {
		return err
	}
	if err := informer.WaitForSync(ctx, syncers...); err != nil {
		return fmt.Errorf("controller %s: %w", c.name, err)
	}
	var workers sync.WaitGroup
	for range c.cfg.Workers {
		workers.Go(func() { c.work(ctx) })
	}
	c.mu.Lock()
	c.started = true
	c.signalLocked()
	c.mu.Unlock()
	<-ctx.Done()
	c.queue.ShutDown() // Get hands out what is left; the workers drop it
	workers.Wait()
	return nil
}

// shutdown stops taking requests, stops the queue and unregisters the
// handlers, waiting until none of them is being called.
func (c *Controller[T]) shutdown() {
	c.mu.Lock()
	c.stopping = true
	unregister := c.unregister
	c.unregister = nil
	c.signalLocked()
	c.mu.Unlock()
	c.queue.ShutDown()
	for _, u := range unregister {
		u()
	}
}

// work is one worker: it reconciles requests until the queue shuts down.
func (c *Controller[T]) work(ctx context.Context) {
	for {
		req, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		c.mu.Lock()
		delete(c.pending, req)
		c.inFlight++
		c.mu.Unlock()
		if ctx.Err() == nil {
			c.process(ctx, req)
		}
		c.queue.Done(req)
		c.mu.Lock()
		c.inFlight--
		c.signalLocked()
		c.mu.Unlock()
	}
}

// process reconciles req once and queues what its outcome asks for.
func (c *Controller[T]) process(ctx context.Context, req Request) {
	res, err := c.measuredReconcile(ctx, req)
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return // stopping: the error is most likely ours
		}
		c.log.Error("reconcile failed", "request", req.String(), "err", err)
		c.mu.Lock()
		c.pending[req] = struct{}{} // a retry is work left to do
		c.mu.Unlock()
		c.queue.AddRateLimited(req)
	case res.RequeueAfter > 0:
		c.queue.Forget(req)
		c.queue.AddAfter(req, res.RequeueAfter)
	default:
		c.queue.Forget(req)
	}
}

// measuredReconcile is reconcile reported to Config.Metrics.
func (c *Controller[T]) measuredReconcile(ctx context.Context, req Request) (Result, error) {
	m := c.cfg.Metrics
	if m == nil {
		res, _, err := c.reconcile(ctx, req)
		return res, err
	}
	m.ReconcileStarted()
	start := c.cfg.Clock.Now()
	res, panicked, err := c.reconcile(ctx, req)
	outcome := OutcomeSuccess
	switch {
	case panicked:
		outcome = OutcomePanic
	case err != nil:
		outcome = OutcomeError
	case res.RequeueAfter > 0:
		outcome = OutcomeRequeueAfter
	}
	m.ReconcileFinished(outcome, c.cfg.Clock.Now().Sub(start))
	return res, err
}

// reconcile calls the reconciler with the per-reconcile timeout, turning
// a panic into an error and reporting it.
func (c *Controller[T]) reconcile(ctx context.Context, req Request) (res Result, panicked bool, err error) {
	if d := c.cfg.ReconcileTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = withTimeout(ctx, c.cfg.Clock, d)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("reconcile panicked", "request", req.String(), "panic", p, "stack", string(debug.Stack()))
			res, panicked, err = Result{}, true, fmt.Errorf("controller %s: reconcile %s panicked: %v", c.name, req, p)
		}
	}()
	res, err = c.reconciler.Reconcile(ctx, req)
	return res, false, err
}

// withTimeout is context.WithTimeout on clock: with the real clock it is
// exactly that; with another clock (a fake one), the context is cancelled,
// with context.DeadlineExceeded as its cause, when clock reaches the
// deadline.
func withTimeout(ctx context.Context, clock workqueue.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, real := clock.(workqueue.RealClock); real {
		return context.WithTimeout(ctx, d)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	timer := clock.NewTimerAt(clock.Now().Add(d))
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-timer.C():
			cancel(context.DeadlineExceeded)
		case <-stopped:
		}
	})
	return ctx, func() {
		timer.Stop()
		close(stopped)
		wg.Wait()
		cancel(context.Canceled)
	}
}

// Idle reports whether the controller has nothing to do: Run's workers
// are running, no request is queued, waiting for its debounce window or for
// a retry after an error, and no reconcile is in flight. A request waiting
// for its RequeueAfter is not work to do until its time comes.
//
// It is meant for tests: change objects, wait until the controller is idle,
// then check that it converged.
func (c *Controller[T]) Idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idleLocked()
}

func (c *Controller[T]) idleLocked() bool {
	return c.started && !c.stopping && len(c.pending) == 0 && c.inFlight == 0
}

// WaitIdle waits until the controller is Idle and returns nil, or returns
// ctx's error if ctx is done first, or ErrStopped once Run has returned.
//
// A notification in transit (a change the server made that the informer
// has not yet handed to the controller's handler) is not yet work: after a
// write, wait until the informer has the change, or until the reconcile it
// causes has happened, before waiting for idleness. With a fake Clock,
// debounced requests and retries wait for the test to move the clock.
func (c *Controller[T]) WaitIdle(ctx context.Context) error {
	for {
		c.mu.Lock()
		idle, stopping, changed := c.idleLocked(), c.stopping, c.changed
		c.mu.Unlock()
		switch {
		case idle:
			return nil
		case stopping:
			return ErrStopped
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("controller %s: waiting until idle: %w", c.name, ctx.Err())
		}
	}
}

func (c *Controller[T]) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}
