package apiserver

import (
	"context"
	"errors"
	"time"

	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// # Controllers elected among replicas
//
// Servers on one etcd are replicas of one API server; the controllers that
// act on the whole store (the garbage collector) must run on one of them
// only, as kube-controller-manager's run on its leader. A server with
// Config.Etcd runs them while it holds a Lease in kube-system (as the
// controller manager's kube-controller-manager Lease): it renews the Lease
// every third of its duration, takes it over when its holder has not
// renewed it for a whole duration, and stops the controllers when it
// cannot renew it in time. Without etcd the server is alone and runs them
// at once.

// DefaultElectionLeaseDuration is EtcdConfig.ElectionLeaseDuration's
// default: kube-controller-manager's --leader-elect-lease-duration.
const DefaultElectionLeaseDuration = 15 * time.Second

// electionLease is the name of the Lease the replicas elect their
// controllers' leader on.
const electionLease = "kapi-controllers"

var errLeaseHeld = errors.New("the lease is held by another replica")

// runElected runs run (with a context cancelled when the lease is lost or
// the server closes) while this server holds the election lease; without
// etcd, at once until the server closes.
func (s *Server) runElected(run func(ctx context.Context)) {
	counted := run
	run = func(ctx context.Context) {
		s.leading.Add(1)
		defer s.leading.Add(-1)
		counted(ctx)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if len(s.cfg.Etcd.Servers) == 0 {
			run(s.ctx)
			return
		}
		s.elect(run)
	}()
}

func (s *Server) elect(run func(ctx context.Context)) {
	d := s.cfg.Etcd.ElectionLeaseDuration
	if d <= 0 {
		d = DefaultElectionLeaseDuration
	}
	identity := string(s.cfg.NewUID())
	key := keyOf("coordination.k8s.io", "leases", "kube-system", electionLease)
	var (
		cancel  context.CancelFunc
		stopped chan struct{}
		renewed time.Time // the last renewal that succeeded
	)
	stop := func() {
		if cancel != nil {
			cancel()
			<-stopped
			cancel, stopped = nil, nil
		}
	}
	start := func() {
		ctx, c := context.WithCancel(s.ctx)
		cancel, stopped = c, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			run(ctx)
		}(stopped)
	}
	defer stop()
	t := time.NewTicker(d / 3)
	defer t.Stop()
	for {
		now := s.cfg.Now()
		err := s.renewLease(key, identity, d, now)
		switch {
		case err == nil:
			renewed = now
			if cancel == nil {
				start()
			}
		case errors.Is(err, errLeaseHeld) || now.Sub(renewed) >= d:
			stop() // another replica leads, or it may by now
		}
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// renewLease takes or renews the lease for identity at now; errLeaseHeld
// if another holder renewed it less than its duration ago.
func (s *Server) renewLease(key, identity string, d time.Duration, now time.Time) error {
	ctx, cancel := context.WithTimeout(s.ctx, d/3)
	defer cancel()
	_, err := s.base.GuaranteedUpdate(ctx, key, true, nil, func(cur storage.Object) (storage.Object, error) {
		var l *coordinationv1.Lease
		if cur == nil {
			l = &coordinationv1.Lease{
				TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
				ObjectMeta: metav1.ObjectMeta{Name: electionLease, Namespace: "kube-system", UID: s.cfg.NewUID(), CreationTimestamp: metav1.NewTime(now)},
			}
		} else {
			l = cur.(*coordinationv1.Lease).DeepCopy()
		}
		sp := &l.Spec
		mine := sp.HolderIdentity != nil && *sp.HolderIdentity == identity
		if !mine && sp.HolderIdentity != nil && *sp.HolderIdentity != "" && sp.RenewTime != nil && sp.LeaseDurationSeconds != nil &&
			now.Before(sp.RenewTime.Add(time.Duration(*sp.LeaseDurationSeconds)*time.Second)) {
			return nil, errLeaseHeld
		}
		if !mine {
			transitions := int32(0)
			if sp.LeaseTransitions != nil {
				transitions = *sp.LeaseTransitions + 1
			}
			sp.HolderIdentity, sp.LeaseTransitions = &identity, &transitions
			sp.AcquireTime = &metav1.MicroTime{Time: now}
		}
		secs := int32(max(d/time.Second, 1))
		sp.LeaseDurationSeconds = &secs
		sp.RenewTime = &metav1.MicroTime{Time: now}
		return l, nil
	})
	return err
}
