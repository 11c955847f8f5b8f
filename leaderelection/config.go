package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
)

// Defaults of Config, those of client-go's leader election.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// DefaultWatchdogTolerance is the default of Config.WatchdogTolerance,
	// the timeout kube-controller-manager gives client-go's
	// HealthzAdaptor.
	DefaultWatchdogTolerance = 20 * time.Second
)

// JitterFactor spreads the attempts to acquire the Lease, as client-go's
// JitterFactor does: a candidate that does not lead waits a random time
// between RetryPeriod and (1+JitterFactor)*RetryPeriod between two
// attempts, so that candidates that saw a Lease expire together do not all
// try to take it at the same instant (and all but one get a Conflict). The
// leader's renewals are not jittered: they come every RetryPeriod, well
// within RenewDeadline.
const JitterFactor = 1.2

// Config configures a [LeaderElector]. Name, Identity and OnStartedLeading
// are required; every other zero value is a documented default.
type Config struct {
	// Namespace is the namespace of the Lease (default: the client's
	// namespace).
	Namespace string
	// Name is the name of the Lease, shared by every candidate of one
	// election. Required.
	Name string
	// Identity names this candidate in the Lease's holderIdentity; it must
	// be unique among the candidates (a pod name, or hostname plus a random
	// suffix). Required.
	Identity string

	// LeaseDuration is how long the other candidates wait, after they last
	// saw the Lease change, before they take it over (default 15s). It is
	// written to the Lease as leaseDurationSeconds, so it must be a whole
	// number of seconds.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps leading without a
	// successful renewal (default 10s): once it has passed since the start
	// of the last successful renewal, the leading context is cancelled. It
	// must be less than LeaseDuration; the difference is the time the
	// leader's work has to stop before another candidate may start.
	RenewDeadline time.Duration
	// RetryPeriod is the time between two attempts to acquire or renew the
	// Lease (default 2s). It must be less than RenewDeadline.
	RetryPeriod time.Duration

	// WatchdogTolerance is how long past LeaseDuration after its last
	// successful renewal a candidate that still believes it leads makes
	// [LeaderElector.Check] fail (default DefaultWatchdogTolerance, 20s).
	// It should never happen, as leading stops RenewDeadline after the
	// last renewal: it means the election's goroutine is stuck, and a
	// liveness probe on Check (the manager's /healthz) restarts the
	// process, as client-go's HealthzAdaptor does.
	WatchdogTolerance time.Duration

	// ReleaseOnCancel releases the Lease when Run's context is cancelled,
	// after OnStartedLeading has returned: holderIdentity is cleared and
	// leaseDurationSeconds set to 1, so another candidate takes over at its
	// next attempt instead of after LeaseDuration. Only set it if the work
	// really has stopped when OnStartedLeading returns.
	ReleaseOnCancel bool

	// OnStartedLeading runs, on its own goroutine, when this candidate
	// becomes the leader. Its context is cancelled when leading stops (lost
	// lease or Run's context cancelled); Run waits for it to return.
	// Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called once OnStartedLeading has returned after
	// leading stopped (optional). Unlike client-go, it is not called by a
	// Run that never led.
	OnStoppedLeading func()
	// OnNewLeader is called when the candidate sees the Lease's holder
	// change to identity, including to itself (optional). Calls are made in
	// order from one goroutine; a slow callback does not delay renewals, and
	// holders seen while it runs may be skipped, but never two calls in a
	// row with one identity. A released (empty) holder is not reported.
	OnNewLeader func(identity string)

	// Clock is the source of time (default workqueue.RealClock). Tests
	// inject a clocktest.FakeClock.
	Clock workqueue.Clock
}

// withDefaults returns cfg with its zero values replaced by their
// defaults, and validates it.
func (cfg Config) withDefaults(clientNamespace string) (Config, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = clientNamespace
	}
	if cfg.LeaseDuration == 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.RenewDeadline == 0 {
		cfg.RenewDeadline = DefaultRenewDeadline
	}
	if cfg.RetryPeriod == 0 {
		cfg.RetryPeriod = DefaultRetryPeriod
	}
	if cfg.WatchdogTolerance == 0 {
		cfg.WatchdogTolerance = DefaultWatchdogTolerance
	}
	if cfg.Clock == nil {
		cfg.Clock = workqueue.RealClock{}
	}
	var errs []error
	if cfg.Namespace == "" {
		errs = append(errs, errors.New("Namespace is empty and the client has no namespace"))
	}
	if cfg.Name == "" {
		errs = append(errs, errors.New("Name (of the Lease) is required"))
	}
	if cfg.Identity == "" {
		errs = append(errs, errors.New("Identity is required"))
	}
	if cfg.OnStartedLeading == nil {
		errs = append(errs, errors.New("OnStartedLeading is required"))
	}
	switch {
	case cfg.LeaseDuration < time.Second:
		errs = append(errs, fmt.Errorf("LeaseDuration %v is less than 1s", cfg.LeaseDuration))
	case cfg.LeaseDuration%time.Second != 0:
		errs = append(errs, fmt.Errorf("LeaseDuration %v is not a whole number of seconds (the Lease stores seconds)", cfg.LeaseDuration))
	case cfg.LeaseDuration > time.Duration(1<<31-1)*time.Second:
		errs = append(errs, fmt.Errorf("LeaseDuration %v does not fit leaseDurationSeconds", cfg.LeaseDuration))
	}
	if cfg.RenewDeadline < 0 || cfg.RetryPeriod < 0 {
		errs = append(errs, fmt.Errorf("RenewDeadline %v and RetryPeriod %v must not be negative", cfg.RenewDeadline, cfg.RetryPeriod))
	}
	if cfg.WatchdogTolerance < 0 {
		errs = append(errs, fmt.Errorf("WatchdogTolerance %v must not be negative", cfg.WatchdogTolerance))
	}
	if cfg.RenewDeadline >= cfg.LeaseDuration {
		errs = append(errs, fmt.Errorf("RenewDeadline %v must be less than LeaseDuration %v, or a lost leader may still work when another starts", cfg.RenewDeadline, cfg.LeaseDuration))
	}
	if cfg.RetryPeriod >= cfg.RenewDeadline {
		errs = append(errs, fmt.Errorf("RetryPeriod %v must be less than RenewDeadline %v, or the leader cannot retry a failed renewal", cfg.RetryPeriod, cfg.RenewDeadline))
	}
	if len(errs) > 0 {
		return cfg, fmt.Errorf("leaderelection: invalid Config: %w", errors.Join(errs...))
	}
	return cfg, nil
}
