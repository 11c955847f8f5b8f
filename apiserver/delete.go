package apiserver

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// deleteOptions merges DeleteOptions from the body (if any) and the query.
func (h *handler) deleteOptions() (metav1.DeleteOptions, *metav1.Status) {
	opts, err := metav1.DecodeDeleteOptions(h.r.URL.Query())
	if err != nil {
		return opts, metav1.NewBadRequest(err.Error())
	}
	body, st := h.readBody()
	if st != nil {
		return opts, st
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var fromBody metav1.DeleteOptions
		if err := kjson.Unmarshal(body, &fromBody); err != nil {
			return opts, metav1.NewBadRequest("the body of the request could not be decoded as DeleteOptions: " + err.Error())
		}
		mergeDeleteOptions(&opts, &fromBody)
	}
	if errs := metav1.ValidateDeleteOptions(opts); len(errs) > 0 {
		return opts, metav1.NewInvalidOptions("DeleteOptions", errs)
	}
	return opts, nil
}

// mergeDeleteOptions fills what the query left unset from the body.
func mergeDeleteOptions(dst, src *metav1.DeleteOptions) {
	if dst.GracePeriodSeconds == nil {
		dst.GracePeriodSeconds = src.GracePeriodSeconds
	}
	if dst.Preconditions == nil {
		dst.Preconditions = src.Preconditions
	}
	if dst.OrphanDependents == nil {
		dst.OrphanDependents = src.OrphanDependents
	}
	if dst.PropagationPolicy == nil {
		dst.PropagationPolicy = src.PropagationPolicy
	}
	if len(dst.DryRun) == 0 {
		dst.DryRun = src.DryRun
	}
}

func (h *handler) delete() {
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
	if !ok {
		return
	}
	if h.ri.Sub != "" {
		h.methodNotAllowed()
		return
	}
	opts, st := h.deleteOptions()
	if st != nil {
		h.fail(st)
		return
	}
	out, deleted, err := h.s.deleteObject(h.r.Context(), h.res, h.key(h.ri.Namespace, h.ri.Name), &opts)
	if err != nil {
		h.fail(h.storageStatus(err, h.ri.Name))
		return
	}
	if deleted {
		st := metav1.NewDeleted(h.res.GroupResource(), h.ri.Name, out.GetUID())
		h.s.writeStatusAs(h.w, mt, st)
		return
	}
	// kube-apiserver answers 202 Accepted to a delete that did not remove the
	// object when the client asked for cascading with the deprecated
	// orphanDependents=false, and 200 otherwise (kept for old clients).
	code := http.StatusOK
	if opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	h.s.writeObject(h.w, mt, code, h.res, out)
}

// The finalizers of the garbage collector (see gc.go), which deleteObject adds
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

// markForDeletion returns the state a delete with opts moves cur to: nil
// when the object can be removed at once (no finalizers once the garbage
// collector's are settled, and not a namespace, which its cleanup removes),
// cur itself when it is already marked as it would be, or a marked copy
// (deletionTimestamp, deletionGracePeriodSeconds 0, the garbage collector's
// finalizer for the policy, a bumped generation, a Terminating phase).
func (s *Server) markForDeletion(res *registry.Resource, cur storage.Object, opts *metav1.DeleteOptions) storage.Object {
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
	if len(newFins) == 0 && !isNamespace {
		return nil
	}
	if cur.GetDeletionTimestamp() != nil && slices.Equal(newFins, fins) {
		return cur
	}
	next := res.Copy(cur)
	if !slices.Equal(newFins, fins) {
		if len(newFins) == 0 {
			newFins = nil
		}
		next.SetFinalizers(newFins)
	}
	if next.GetDeletionTimestamp() == nil {
		now := metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
		next.SetDeletionTimestamp(&now)
		if g := next.GetGeneration(); g > 0 {
			next.SetGeneration(g + 1) // as kube-apiserver marks an object deleting
		}
		markTerminating(next)
	}
	if !isNamespace { // a namespace has no grace period (golden 101)
		zero := int64(0)
		next.SetDeletionGracePeriodSeconds(&zero)
	}
	return next
}

// errDeleteRetry makes deleteObject start again: the object's finalizers
// changed between its read and its write.
var errDeleteRetry = errors.New("apiserver: finalizers changed during delete")

// deleteObject deletes the object at key, or, if it has finalizers (its own,
// or the garbage collector's that the propagation policy of opts asks for),
// marks it for deletion. deleted reports which happened; out is the object's
// last or new state. With opts.DryRun nothing is written and out is what
// would be.
func (s *Server) deleteObject(ctx context.Context, res *registry.Resource, key string, opts *metav1.DeleteOptions) (out storage.Object, deleted bool, err error) {
	return s.deleteObjectIf(ctx, res, key, opts, nil)
}

// deleteObjectIf is deleteObject with a check, if not nil, that the current
// object must pass for any write (the garbage collector's: the owner
// references it decided on are still the object's).
func (s *Server) deleteObjectIf(ctx context.Context, res *registry.Resource, key string, opts *metav1.DeleteOptions, valid func(storage.Object) error) (out storage.Object, deleted bool, err error) {
	for attempt := 0; ; attempt++ {
		out, deleted, err = s.tryDelete(ctx, res, key, opts, valid)
		if !errors.Is(err, errDeleteRetry) || attempt == 100 {
			if errors.Is(err, errDeleteRetry) {
				err = storage.ErrConflict
			}
			return out, deleted, err
		}
	}
}

func (s *Server) tryDelete(ctx context.Context, res *registry.Resource, key string, opts *metav1.DeleteOptions, valid func(storage.Object) error) (storage.Object, bool, error) {
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
	cur, err := s.store.Get(ctx, key, storage.ReadOptions{})
	if err != nil {
		return nil, false, err
	}
	if err := check(cur); err != nil {
		return nil, false, err
	}
	next := s.markForDeletion(res, cur, opts)
	if len(opts.DryRun) > 0 {
		if next == nil {
			return cur, true, nil
		}
		return next, false, nil
	}
	if next == nil {
		out, err := s.store.Delete(ctx, key, nil, func(cur storage.Object) error {
			if s.markForDeletion(res, cur, opts) != nil {
				return errDeleteRetry // finalizers appeared meanwhile
			}
			return check(cur)
		})
		if err != nil {
			return nil, false, err
		}
		if res.Release != nil {
			res.Release(out)
		}
		// A store may mark instead of deleting (a CustomResourceDefinition
		// waits for its objects to go, crdStore): the response is then the
		// marked object, as kube-apiserver answers.
		kept := out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) > 0
		return out, !kept, nil
	}
	out, err := s.store.GuaranteedUpdate(ctx, key, false, nil, func(cur storage.Object) (storage.Object, error) {
		if err := check(cur); err != nil {
			return nil, err
		}
		next := s.markForDeletion(res, cur, opts)
		if next == nil {
			return nil, errDeleteRetry // the finalizers went meanwhile
		}
		return next, nil
	})
	if err != nil {
		return nil, false, err
	}
	if res.Group == "" && res.Resource == "namespaces" {
		s.startNamespaceCleanup(out.GetName())
	}
	return out, false, nil
}

func (h *handler) deleteCollection() {
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
	if !ok {
		return
	}
	opts, st := h.deleteOptions()
	if st != nil {
		h.fail(st)
		return
	}
	lopts, pred, st := h.listOptions()
	if st != nil {
		h.fail(st)
		return
	}
	_ = lopts
	ctx := h.r.Context()
	result, err := h.s.store.List(ctx, h.key(h.ri.Namespace, ""), storage.ListOptions{Predicate: pred})
	if err != nil {
		h.fail(h.storageStatus(err, ""))
		return
	}
	// The response lists what was deleted as it was listed (golden 83), and
	// objects kept for their finalizers in their new state, at the list's
	// resourceVersion.
	items := make([]storage.Object, 0, len(result.Items))
	for _, it := range result.Items {
		out, deleted, err := h.s.deleteObject(ctx, h.res, h.key(it.GetNamespace(), it.GetName()), &opts)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			h.fail(h.storageStatus(err, it.GetName()))
			return
		}
		if deleted {
			out = it
		}
		items = append(items, out)
	}
	meta := metav1.ListMeta{ResourceVersion: strconv.FormatUint(result.Revision, 10)}
	h.s.writeList(h.w, mt, h.res, &meta, items)
}
