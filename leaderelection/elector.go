package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// ErrLeaseLost is returned by Run when the leader could not renew the Lease
// within RenewDeadline.
var ErrLeaseLost = errors.New("leaderelection: lease lost: not renewed within RenewDeadline")

// LeaderElector is one candidate of an election. Make it with [New] and
// call Run once.
type LeaderElector struct {
	cfg    Config
	leases client.Resource[coordinationv1.Lease]

	running atomic.Bool
	leading atomic.Bool
	leader  atomic.Pointer[string] // last holder seen
	renewed atomic.Int64           // start of the last successful renewal while leading, Unix ns

	// jitter returns a number in [0, 1) that spreads the attempts to
	// acquire (rand.Float64; tests set their own).
	jitter func() float64

	// Owned by Run's goroutine.
	observed     *coordinationv1.Lease // last version of the Lease seen
	observedTime time.Time             // when it was first seen

	notify *notifier

	// trace, set by tests, is told the instants leading starts and stops.
	trace func(identity string, leading bool, at time.Time)
}

// New returns a candidate of the election cfg describes, on the Leases of
// coordination.k8s.io/v1 through c. It returns an error naming every
// invalid field of cfg.
func New(c *client.Client, cfg Config) (*LeaderElector, error) {
	cfg, err := cfg.withDefaults(c.Namespace())
	if err != nil {
		return nil, err
	}
	return &LeaderElector{
		cfg:    cfg,
		leases: client.For[coordinationv1.Lease](c).Namespace(cfg.Namespace),
		jitter: rand.Float64,
	}, nil
}

// Check is a health check of the election, for a liveness probe (the
// manager's /healthz), as client-go's HealthzAdaptor: it returns an error
// when this candidate believes it leads but has not renewed the Lease for
// longer than LeaseDuration plus WatchdogTolerance (by then another
// candidate may lead: this one's election is stuck), and nil otherwise,
// also when it does not lead.
func (le *LeaderElector) Check() error {
	if !le.leading.Load() {
		return nil
	}
	last := time.Unix(0, le.renewed.Load())
	if since := le.cfg.Clock.Now().Sub(last); since > le.cfg.LeaseDuration+le.cfg.WatchdogTolerance {
		return fmt.Errorf("leaderelection: leading the Lease %s/%s without renewing it for %v (LeaseDuration %v, WatchdogTolerance %v)",
			le.cfg.Namespace, le.cfg.Name, since, le.cfg.LeaseDuration, le.cfg.WatchdogTolerance)
	}
	return nil
}

// IsLeader reports whether this candidate leads now: OnStartedLeading's
// context has not been cancelled.
func (le *LeaderElector) IsLeader() bool { return le.leading.Load() }

// Leader returns the holder of the Lease when this candidate last read or
// wrote it ("" before the first read, or when released).
func (le *LeaderElector) Leader() string {
	if p := le.leader.Load(); p != nil {
		return *p
	}
	return ""
}

// Run takes part in the election until ctx is cancelled or the lease is
// lost. It tries to acquire the Lease every RetryPeriod; once it has, it
// runs OnStartedLeading and renews the Lease every RetryPeriod. When ctx is
// cancelled Run returns nil, when the lease is lost ErrLeaseLost; either
// way only after OnStartedLeading has returned and OnStoppedLeading has been
// called. A LeaderElector runs once: to stand again after losing, make a new
// one (after the work has stopped, which Run's return ensures).
func (le *LeaderElector) Run(ctx context.Context) error {
	if !le.running.CompareAndSwap(false, true) {
		return errors.New("leaderelection: Run called twice")
	}
	le.notify = newNotifier(le.cfg.OnNewLeader)
	defer le.notify.stop()

	start, ok := le.acquire(ctx)
	if !ok {
		return nil
	}
	return le.lead(ctx, start)
}

// acquire tries to acquire the Lease until it does, every RetryPeriod
// plus a random jitter of up to JitterFactor times RetryPeriod, and returns
// the time its successful attempt started; false when ctx ends.
func (le *LeaderElector) acquire(ctx context.Context) (time.Time, bool) {
	for {
		start := le.cfg.Clock.Now()
		if le.tryAcquireOrRenew(ctx, start) == nil {
			return start, true
		}
		wait := le.cfg.RetryPeriod + time.Duration(le.jitter()*JitterFactor*float64(le.cfg.RetryPeriod))
		if !le.wait(ctx, start.Add(wait)) {
			return time.Time{}, false
		}
	}
}

// wait waits until the clock reaches t; false if ctx ends first.
func (le *LeaderElector) wait(ctx context.Context, t time.Time) bool {
	timer := le.cfg.Clock.NewTimerAt(t)
	defer timer.Stop()
	select {
	case <-timer.C():
		return true
	case <-ctx.Done():
		return false
	}
}

// renewal is the result of an attempt to renew started at start.
type renewal struct {
	start time.Time
	err   error
}

// lead runs OnStartedLeading and renews the Lease acquired by the attempt
// started at start, until the renew deadline passes or ctx ends.
//
// The deadline is RenewDeadline after the start of the last successful
// renewal (the renewTime it wrote): other candidates count LeaseDuration
// from no earlier than that, so the leading context is cancelled at least
// LeaseDuration-RenewDeadline before any of them can acquire. It is armed
// on the clock, and watched by this goroutine alone, which never blocks on
// a request: renewals run on their own goroutine, and one in flight is
// cancelled at the deadline.
func (le *LeaderElector) lead(ctx context.Context, start time.Time) error {
	leadCtx, cancelLead := context.WithCancel(ctx)
	defer cancelLead()
	le.renewed.Store(start.UnixNano())
	le.leading.Store(true)
	le.traceLeading(true, start)
	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		le.cfg.OnStartedLeading(leadCtx)
	}()

	deadline := start.Add(le.cfg.RenewDeadline)
	deadlineTimer := le.cfg.Clock.NewTimerAt(deadline)
	retry := le.cfg.Clock.NewTimerAt(start.Add(le.cfg.RetryPeriod))
	var (
		results   = make(chan renewal, 1)
		inFlight  bool
		cancelReq context.CancelFunc = func() {}
		lost      bool
	)
	for !lost && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-deadlineTimer.C():
			lost = true
		case <-retry.C():
			reqCtx, cancel := context.WithCancel(ctx)
			cancelReq, inFlight = cancel, true
			s := le.cfg.Clock.Now()
			go func() { results <- renewal{s, le.tryAcquireOrRenew(reqCtx, s)} }()
		case r := <-results:
			inFlight = false
			cancelReq()
			select {
			case <-deadlineTimer.C(): // the deadline passed first
				lost = true
				continue
			default:
			}
			if r.err == nil {
				le.renewed.Store(r.start.UnixNano())
				deadlineTimer.Stop()
				deadline = r.start.Add(le.cfg.RenewDeadline)
				deadlineTimer = le.cfg.Clock.NewTimerAt(deadline)
			}
			retry = le.cfg.Clock.NewTimerAt(r.start.Add(le.cfg.RetryPeriod))
		}
	}
	// Stop leading first, then let everything else finish.
	end := le.cfg.Clock.Now()
	if lost {
		end = deadline
	}
	le.leading.Store(false)
	le.traceLeading(false, end)
	cancelLead()
	deadlineTimer.Stop()
	retry.Stop()
	cancelReq()
	if inFlight {
		<-results
	}
	<-workDone
	if !lost && le.cfg.ReleaseOnCancel {
		le.release(ctx, deadline)
	}
	if le.cfg.OnStoppedLeading != nil {
		le.cfg.OnStoppedLeading()
	}
	if lost {
		return ErrLeaseLost
	}
	return nil
}

// release gives the Lease up, if this candidate still holds it (the update
// is conditional on the last version it wrote) and deadline has not
// passed; the request is cancelled at deadline.
func (le *LeaderElector) release(ctx context.Context, deadline time.Time) {
	now := le.cfg.Clock.Now()
	if !now.Before(deadline) || le.observed == nil || holder(le.observed) != le.cfg.Identity {
		return
	}
	reqCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	timer := le.cfg.Clock.NewTimerAt(deadline)
	defer timer.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-timer.C():
			cancel()
		case <-stop:
		}
	}()
	lease := le.observed.DeepCopy()
	t := metav1.NewMicroTime(now.UTC().Truncate(time.Microsecond))
	lease.Spec.HolderIdentity = nil
	lease.Spec.LeaseDurationSeconds = ptr(int32(1))
	lease.Spec.AcquireTime = &t
	lease.Spec.RenewTime = &t
	if updated, err := le.leases.Update(reqCtx, lease, metav1.UpdateOptions{}); err == nil {
		le.observe(updated, now)
	}
}

// tryAcquireOrRenew reads the Lease and, unless another candidate holds it
// and it has not expired, writes it with this candidate as holder and
// renewTime start, conditional on the version read. It returns nil when
// the write succeeded.
func (le *LeaderElector) tryAcquireOrRenew(ctx context.Context, start time.Time) error {
	now := metav1.NewMicroTime(start.UTC().Truncate(time.Microsecond))
	desired := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr(le.cfg.Identity),
		LeaseDurationSeconds: ptr(int32(le.cfg.LeaseDuration / time.Second)),
		AcquireTime:          &now,
		RenewTime:            &now,
		LeaseTransitions:     ptr(int32(0)),
	}
	lease, err := le.leases.Get(ctx, le.cfg.Name, metav1.GetOptions{})
	if client.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: le.cfg.Name, Namespace: le.cfg.Namespace},
			Spec:       desired,
		}
		created, err := le.leases.Create(ctx, lease, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		le.observe(created, le.cfg.Clock.Now())
		return nil
	}
	if err != nil {
		return err
	}
	// Read after the response: others' leases expire no earlier than
	// LeaseDuration after this candidate saw them change.
	le.observe(lease, le.cfg.Clock.Now())
	old := lease.Spec
	if h := holder(lease); h != "" && h != le.cfg.Identity {
		d := le.cfg.LeaseDuration
		if old.LeaseDurationSeconds != nil && *old.LeaseDurationSeconds > 0 {
			d = time.Duration(*old.LeaseDurationSeconds) * time.Second
		}
		if le.cfg.Clock.Now().Before(le.observedTime.Add(d)) {
			return fmt.Errorf("leaderelection: lease %s/%s is held by %q", le.cfg.Namespace, le.cfg.Name, h)
		}
	}
	if old.LeaseTransitions != nil {
		desired.LeaseTransitions = old.LeaseTransitions
	}
	if holder(lease) == le.cfg.Identity {
		if old.AcquireTime != nil {
			desired.AcquireTime = old.AcquireTime
		}
	} else {
		desired.LeaseTransitions = ptr(*desired.LeaseTransitions + 1)
	}
	desired.Strategy, desired.PreferredHolder = old.Strategy, old.PreferredHolder
	lease = lease.DeepCopy()
	lease.Spec = desired
	updated, err := le.leases.Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	le.observe(updated, le.cfg.Clock.Now())
	return nil
}

// observe records lease as the last version seen, at now if it changed,
// and reports a new holder.
func (le *LeaderElector) observe(lease *coordinationv1.Lease, now time.Time) {
	if le.observed == nil || le.observed.ResourceVersion != lease.ResourceVersion {
		le.observed, le.observedTime = lease, now
	}
	h := holder(lease)
	le.leader.Store(&h)
	if h != "" {
		le.notify.report(h)
	}
}

func (le *LeaderElector) traceLeading(leading bool, at time.Time) {
	if le.trace != nil {
		le.trace(le.cfg.Identity, leading, at)
	}
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func ptr[T any](v T) *T { return &v }

// notifier calls OnNewLeader from its own goroutine with the latest holder
// reported, so that a slow callback never delays the election.
type notifier struct {
	fn      func(string)
	mu      sync.Mutex
	latest  string
	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

func newNotifier(fn func(string)) *notifier {
	n := &notifier{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	if fn == nil {
		close(n.stopped)
		return n
	}
	go n.loop()
	return n
}

func (n *notifier) report(identity string) {
	if n.fn == nil {
		return
	}
	n.mu.Lock()
	n.latest = identity
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *notifier) loop() {
	defer close(n.stopped)
	var reported string
	for {
		select {
		case <-n.wake:
		case <-n.done:
			return
		}
		n.mu.Lock()
		h := n.latest
		n.mu.Unlock()
		if h != reported {
			reported = h
			n.fn(h)
		}
	}
}

// stop ends the loop, after the call in progress, and waits for it.
func (n *notifier) stop() {
	close(n.done)
	<-n.stopped
}
