package apiserver

import (
	"context"
	"errors"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"reflect"
	"slices"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// immortalNamespaces may not be deleted: kube-apiserver's NamespaceLifecycle
// admission refuses it (403), since the cluster's own objects live there.
var immortalNamespaces = []string{"default", "kube-system", "kube-public"}

// The finalizers of the garbage collector (see gc.go), which a delete adds
// for the Orphan and Foreground propagation policies.
const (
	// FinalizerOrphanDependents holds an object being deleted until the
	// garbage collector has removed the owner references its dependents have
	// to it.
	FinalizerOrphanDependents = "orphan"
	// FinalizerDeleteDependents holds an object being deleted until the
	// garbage collector has deleted its dependents that block owner deletion.
	FinalizerDeleteDependents = "foregroundDeletion"
)

// gcPolicy is the garbage collection default of a resource, as
// kube-apiserver's DefaultGarbageCollectionPolicy of its strategy.
type gcPolicy int

const (
	gcDeleteDependents gcPolicy = iota // Background unless asked otherwise
	gcOrphanDependents                 // Orphan unless asked otherwise
	gcUnsupported                      // propagation options are ignored
)

// defaultGCPolicy is kube-apiserver's default propagation for a plain
// delete of res: Background (the dependents are collected) for most kinds,
// custom resources included; Orphan where older API versions orphaned before
// server-side garbage collection existed (core/v1 ReplicationControllers,
// batch/v1 Jobs, the beta versions of the apps kinds and of CronJobs, so
// kubectl, which sends Background, is needed to cascade); and none for
// Events, which are never owners.
func defaultGCPolicy(res *registry.Resource) gcPolicy {
	switch gv := res.GroupVersion(); {
	case res.Resource == "events" && (res.Group == "" || res.Group == "events.k8s.io"):
		return gcUnsupported
	case gv == "v1" && res.Resource == "replicationcontrollers",
		gv == "batch/v1" && res.Resource == "jobs",
		gv == "batch/v1beta1" || gv == "batch/v2alpha1",
		gv == "extensions/v1beta1" || gv == "apps/v1beta1" || gv == "apps/v1beta2":
		return gcOrphanDependents
	}
	return gcDeleteDependents
}

// gcFinalizers decides, as kube-apiserver does, whether deleting cur with
// opts orphans its dependents or deletes them in the foreground: an explicit
// orphanDependents or propagationPolicy wins, then a garbage collector
// finalizer the object already has, then the resource's default.
func gcFinalizers(res *registry.Resource, cur storage.Object, opts *metav1.DeleteOptions) (orphan, foreground bool) {
	def := defaultGCPolicy(res)
	if def == gcUnsupported {
		return false, false
	}
	if opts.OrphanDependents != nil {
		return *opts.OrphanDependents, false
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return true, false
		case metav1.DeletePropagationForeground:
			return false, true
		case metav1.DeletePropagationBackground:
			return false, false
		}
	}
	fins := cur.GetFinalizers()
	switch {
	case slices.Contains(fins, FinalizerOrphanDependents):
		return true, false
	case slices.Contains(fins, FinalizerDeleteDependents):
		return false, true
	}
	return def == gcOrphanDependents, false
}

// deletePlan is what a delete does to an object: write next (when not nil),
// then remove the object (when remove is set). Neither means the object is
// already in the state the delete asks for (a graceful deletion pending).
type deletePlan struct {
	next   storage.Object
	remove bool
}

// planDeletion decides, as kube-apiserver's generic store does, what a delete
// with opts does to cur:
//
//   - a resource with graceful deletion (Resource.GracePeriod, pods) is
//     marked with deletionTimestamp (now plus the grace period) and
//     deletionGracePeriodSeconds; it is kept while the period is positive,
//     and otherwise removed right after that write, so that watchers see the
//     marked object, then its deletion. A later delete may only shorten a
//     pending period (moving deletionTimestamp earlier); one that does not
//     changes nothing;
//   - an object with finalizers, once the garbage collector's are settled
//     for the propagation policy, is marked (deletionTimestamp now,
//     deletionGracePeriodSeconds 0, a bumped generation) and kept; a
//     namespace is always kept, for its cleanup, and has no grace period
//     (golden 101);
//   - anything else is removed at once.
func (s *Server) planDeletion(res *registry.Resource, cur storage.Object, opts *metav1.DeleteOptions) deletePlan {
	now := s.cfg.Now().UTC()
	requested := opts.GracePeriodSeconds
	if requested != nil && *requested < 0 {
		requested = new(int64(1)) // negative periods mean 1s on the delete path
	}
	graceful := false
	var period int64
	var deletionTS *metav1.Time
	if res.GracePeriod != nil {
		switch dts, dgps := cur.GetDeletionTimestamp(), cur.GetDeletionGracePeriodSeconds(); {
		case dts == nil:
			graceful = true
			period = res.GracePeriod(cur, requested)
			deletionTS = new(metav1.NewTime(now.Truncate(time.Second).Add(time.Duration(period) * time.Second)))
		case dgps == nil || *dgps == 0:
			// Marked without a grace period: a plain deletion follows.
		case requested == nil || *requested >= *dgps:
			return deletePlan{} // pending: only a shorter period changes it
		default:
			graceful = true
			period = *requested
			ts := dts.Add(time.Duration(period-*dgps) * time.Second)
			if ts.Before(now) {
				ts = now.Truncate(time.Second)
				if period != 0 {
					period = 1 // the period is over, but the delete asked for a graceful one
				}
			}
			deletionTS = new(metav1.NewTime(ts))
		}
	}

	if res.Group == crdGroup && res.Resource == crdResourceName && cur.GetDeletionTimestamp() == nil {
		// The first delete of a CustomResourceDefinition is its storage's
		// (crdStore marks it Terminating), whatever its finalizers and the
		// propagation policy: kube-apiserver's CRD storage sets
		// deletionTimestamp and its cleanup finalizer itself, without the
		// generation bump of an object marked deleting.
		return deletePlan{remove: true}
	}
	fins := cur.GetFinalizers()
	newFins := fins
	if defaultGCPolicy(res) != gcUnsupported {
		orphan, foreground := gcFinalizers(res, cur, opts)
		newFins = make([]string, 0, len(fins)+1)
		for _, f := range fins {
			if f != FinalizerOrphanDependents && f != FinalizerDeleteDependents {
				newFins = append(newFins, f)
			}
		}
		if orphan {
			newFins = append(newFins, FinalizerOrphanDependents)
		}
		if foreground {
			newFins = append(newFins, FinalizerDeleteDependents)
		}
	}
	isNamespace := res.Group == "" && res.Resource == "namespaces"
	if !graceful && len(newFins) == 0 && !isNamespace {
		return deletePlan{remove: true}
	}
	if isNamespace && cur.GetDeletionTimestamp() != nil && len(newFins) == 0 && len(cur.(*corev1.Namespace).Spec.Finalizers) == 0 {
		// A terminating namespace with nothing left to finalize (its
		// spec.finalizers emptied through /finalize) goes at the next
		// delete, as kube-apiserver's namespace storage does.
		return deletePlan{remove: true}
	}
	next := res.Copy(cur)
	if !slices.Equal(newFins, fins) {
		if len(newFins) == 0 {
			newFins = nil
		}
		next.SetFinalizers(newFins)
	}
	if next.GetDeletionTimestamp() == nil {
		if g := next.GetGeneration(); g > 0 {
			next.SetGeneration(g + 1) // as kube-apiserver marks an object deleting
		}
		markTerminating(next)
	}
	if graceful {
		next.SetDeletionTimestamp(deletionTS)
		next.SetDeletionGracePeriodSeconds(&period)
	} else {
		if ts := next.GetDeletionTimestamp(); ts == nil || ts.After(now) {
			next.SetDeletionTimestamp(new(metav1.NewTime(now.Truncate(time.Second))))
		}
		if !isNamespace {
			next.SetDeletionGracePeriodSeconds(new(int64(0)))
		}
	}
	plan := deletePlan{next: next, remove: graceful && period == 0 && len(newFins) == 0}
	if reflect.DeepEqual(next, cur) {
		plan.next = nil // nothing to write
	}
	return plan
}

// errDeleteRetry makes a delete start again: the object's finalizers
// changed between its read and its write.
var errDeleteRetry = errors.New("apiserver: finalizers changed during delete")

// Delete deletes the named object, or, if it has finalizers (its own, or
// the garbage collector's that the propagation policy of opts asks for),
// marks it for deletion (planDeletion). deleted reports which happened; out
// is the object's last or new state. With opts.DryRun nothing is written
// and out is what would be.
func (rs resourceStore) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (out storage.Object, deleted bool, err error) {
	return rs.deleteIf(ctx, namespace, name, opts, nil, nil)
}

// deleteIf is Delete with a check, if not nil, that the current object
// must pass for any write (the garbage collector's: the owner references
// it decided on are still the object's), and warnings, if not nil,
// receiving the warnings of the admission of the delete (the request's
// handler).
func (rs resourceStore) deleteIf(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions, valid func(storage.Object) error, warnings warner) (out storage.Object, deleted bool, err error) {
	res := rs.res
	if res.Group == "" && res.Resource == "namespaces" && slices.Contains(immortalNamespaces, name) && rs.s.admissionOn("NamespaceLifecycle") {
		return nil, false, asError(metav1.NewForbidden(res.GroupResource(), name, errors.New("this namespace may not be deleted")))
	}
	key := rs.key(namespace, name)
	for attempt := 0; ; attempt++ {
		out, deleted, err = rs.s.tryDelete(ctx, res, key, opts, valid, warnings)
		if !errors.Is(err, errDeleteRetry) || attempt == 100 {
			if errors.Is(err, errDeleteRetry) {
				err = storage.ErrConflict
			}
			return out, deleted, rs.fail(err, name, 0)
		}
	}
}

// stageError reports whether err is a Status that a stage of a write
// answered (a precondition, admission, validation) rather than a failure of
// the storage.
func stageError(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.err == nil
}

func (s *Server) tryDelete(ctx context.Context, res *registry.Resource, key string, opts *metav1.DeleteOptions, valid func(storage.Object) error, warnings warner) (storage.Object, bool, error) {
	check := func(cur storage.Object) error {
		if opts.Preconditions != nil {
			if st := opts.Preconditions.Check(res.GroupKind(), cur); st != nil {
				return asError(st)
			}
		}
		if valid != nil {
			return valid(cur)
		}
		return nil
	}
	cur, err := s.storageOf(res).Get(ctx, key, storage.ReadOptions{})
	if err != nil {
		return nil, false, err
	}
	if err := check(cur); err != nil {
		return nil, false, err
	}
	if st := s.admitDelete(ctx, res, cur, opts, &writeOptions{DryRun: len(opts.DryRun) > 0, Warnings: warnings}); st != nil {
		return nil, false, asError(st)
	}
	plan := s.planDeletion(res, cur, opts)
	if len(opts.DryRun) > 0 {
		switch {
		case plan.remove && plan.next != nil:
			return plan.next, true, nil
		case plan.remove:
			return cur, true, nil
		case plan.next != nil:
			return plan.next, false, nil
		}
		return cur, false, nil
	}
	if plan.next == nil && !plan.remove {
		// Already marked as this delete would: a pending graceful deletion,
		// or a namespace being cleaned up (resumed if it is not).
		if res.Group == "" && res.Resource == "namespaces" && !s.namespaceCleanupElected() {
			s.startNamespaceCleanup(cur.GetName())
		}
		return cur, false, nil
	}
	if plan.next != nil {
		out, err := s.storageOf(res).GuaranteedUpdate(ctx, key, false, nil, func(cur storage.Object) (storage.Object, error) {
			if err := check(cur); err != nil {
				return nil, err
			}
			p := s.planDeletion(res, cur, opts)
			if p.next == nil || p.remove != plan.remove {
				return nil, errDeleteRetry // the object changed meanwhile
			}
			return p.next, nil
		})
		if err != nil {
			return nil, false, err
		}
		if !plan.remove {
			if res.Group == "" && res.Resource == "namespaces" && !s.namespaceCleanupElected() {
				s.startNamespaceCleanup(out.GetName())
			}
			return out, false, nil
		}
		// A graceful deletion with no period left: the marked object goes
		// now, as kube-apiserver deletes it after that write.
		rv := out.GetResourceVersion()
		removed, err := s.storageOf(res).Delete(ctx, key, &storage.Preconditions{ResourceVersion: &rv}, nil)
		if errors.Is(err, storage.ErrNotFound) {
			return out, true, nil // someone else removed it meanwhile
		}
		if err != nil {
			return nil, false, err
		}
		s.removed(ctx, res, removed)
		return removed, true, nil
	}
	out, err := s.storageOf(res).Delete(ctx, key, nil, func(cur storage.Object) error {
		if p := s.planDeletion(res, cur, opts); !p.remove || p.next != nil {
			return errDeleteRetry // finalizers appeared meanwhile
		}
		return check(cur)
	})
	if err != nil {
		return nil, false, err
	}
	s.removed(ctx, res, out)
	// A store may mark instead of deleting (a CustomResourceDefinition
	// waits for its objects to go, crdStore): the response is then the
	// marked object, as kube-apiserver answers.
	kept := out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) > 0
	return out, !kept, nil
}

// released gives back what the resource reserved for a removed object.
func (s *Server) released(res *registry.Resource, obj storage.Object) {
	if res.Release != nil {
		res.Release(obj)
	}
}

// removed is released, and what the cluster's controllers do at once
// when an object goes (recountQuotasOf).
func (s *Server) removed(ctx context.Context, res *registry.Resource, obj storage.Object) {
	s.released(res, obj)
	s.recountQuotasOf(ctx, res, obj)
}
