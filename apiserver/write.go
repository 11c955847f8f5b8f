package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
)

func (h *handler) dryRun(values []string) bool { return len(values) > 0 }

func (h *handler) create() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, st := queryOptions(h, metav1.DecodeCreateOptions, metav1.ValidateCreateOptions, "CreateOptions")
	if st != nil {
		h.fail(st)
		return
	}
	obj, st := h.decodeBody()
	if st != nil {
		h.fail(st)
		return
	}
	if h.ri.Sub != "" {
		h.methodNotAllowed()
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	if obj.GetResourceVersion() != "" {
		h.fail(metav1.NewBadRequest("resourceVersion should not be set on objects to be created"))
		return
	}
	generated := obj.GetName() == "" && obj.GetGenerateName() != ""
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
	h.track(nil, obj)
	h.prepareCreate(obj)
	stored := false
	defer func() {
		if !stored && h.res.Release != nil {
			h.res.Release(obj) // give back what prepareCreate reserved (a cluster IP)
		}
	}()
	ctx := h.r.Context()
	// The namespace is looked up first, as kube-apiserver's
	// NamespaceLifecycle admission does before validation.
	if st := h.checkNamespaceExists(ctx, obj.GetNamespace(), obj.GetName()); st != nil {
		h.fail(st)
		return
	}
	if st := h.admitAndValidate(nil, obj); st != nil {
		h.fail(st)
		return
	}
	if h.dryRun(opts.DryRun) {
		// A dry run stores nothing but fails as the write would on a name
		// that is taken.
		_, err := h.s.store.Get(ctx, h.key(obj.GetNamespace(), obj.GetName()), storage.ReadOptions{})
		switch {
		case err == nil:
			h.fail(metav1.NewAlreadyExists(h.res.GroupResource(), obj.GetName()))
		case errors.Is(err, storage.ErrNotFound):
			h.writeObject(mt, http.StatusCreated, obj)
		default:
			h.fail(h.storageStatus(err, obj.GetName()))
		}
		return
	}
	created, err := h.storeCreate(ctx, obj, generated)
	if err != nil {
		h.fail(h.storageStatus(err, obj.GetName()))
		return
	}
	stored = true
	h.writeObject(mt, http.StatusCreated, created)
}

// storeCreate stores a new object. A name the server generated is drawn again
// if it is taken; a name the client chose is not.
func (h *handler) storeCreate(ctx context.Context, obj registry.Object, generated bool) (registry.Object, error) {
	for attempt := 0; ; attempt++ {
		created, err := h.s.store.Create(ctx, h.key(obj.GetNamespace(), obj.GetName()), obj)
		if err == nil || !errors.Is(err, storage.ErrAlreadyExists) || !generated || attempt == 4 {
			return created, err
		}
		obj.SetName(h.generateName(obj.GetGenerateName()))
	}
}

// maxGeneratedPrefix is the longest part of a generateName kept in a
// generated name, so that with the 5 random characters it fits in 63.
const maxGeneratedPrefix = 63 - 5

// generateName draws a name from a generateName as kube-apiserver does: the
// prefix, cut to 58 characters, and a random suffix.
func (h *handler) generateName(prefix string) string {
	if len(prefix) > maxGeneratedPrefix {
		prefix = prefix[:maxGeneratedPrefix]
	}
	return prefix + h.s.cfg.NameSuffix()
}

// admit runs the resource's admission checks (nil when it has none).
func (h *handler) admit(obj, old registry.Object) *metav1.Status {
	if h.res.Admit == nil {
		return nil
	}
	return h.res.Admit(obj, old)
}

// prepareCreate sets the system fields of a new object.
func (h *handler) prepareCreate(obj registry.Object) {
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(h.generateName(obj.GetGenerateName()))
	}
	obj.SetUID(h.s.cfg.NewUID())
	obj.SetCreationTimestamp(metav1.NewTime(h.s.cfg.Now().UTC().Truncate(time.Second)))
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	if h.res.Generation {
		obj.SetGeneration(1)
	} // else the client's, as kube-apiserver keeps it
	if h.res.PrepareForCreate != nil {
		h.res.PrepareForCreate(obj)
	}
}

func (h *handler) update() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, st := queryOptions(h, metav1.DecodeUpdateOptions, metav1.ValidateUpdateOptions, "UpdateOptions")
	if st != nil {
		h.fail(st)
		return
	}
	obj, st := h.decodeBody()
	if st != nil {
		h.fail(st)
		return
	}
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
	if obj.GetName() != h.ri.Name {
		h.fail(metav1.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), h.ri.Name)))
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	h.writeUpdate(mt, func(storage.Object) (registry.Object, *metav1.Status) { return obj, nil },
		h.res.AllowCreateOnUpdate && h.ri.Sub == "", h.dryRun(opts.DryRun))
}

// build returns the object a write asks for, given the stored one (nil when
// there is none): the decoded body of an update, a patch applied to cur, an
// apply configuration merged into cur.
type build func(cur storage.Object) (registry.Object, *metav1.Status)

// writeUpdate stores the object want builds as the new state of the named
// object (an update or patch of the resource or of a subresource) and writes
// the response. allowCreate lets it create a missing object (201). With
// dryRun it runs every stage but stores nothing.
func (h *handler) writeUpdate(mt codec.MediaType, want build, allowCreate, dryRun bool) {
	ctx := h.r.Context()
	key := h.key(h.ri.Namespace, h.ri.Name)
	created := false
	var lastCur storage.Object // the stored state the last attempt saw
	tryUpdate := func(cur storage.Object) (storage.Object, error) {
		lastCur = cur
		if cur == nil && !allowCreate {
			return nil, storage.ErrNotFound
		}
		in, st := want(cur)
		if st != nil {
			return nil, asError(st)
		}
		if cur != nil {
			next, st := h.mergeUpdate(cur, in)
			if st != nil {
				return nil, asError(st)
			}
			return next, nil
		}
		if st := h.checkNamespaceExists(ctx, h.ri.Namespace, h.ri.Name); st != nil {
			return nil, asError(st)
		}
		next := h.res.Copy(in)
		next.SetResourceVersion("")
		h.track(nil, next)
		h.prepareCreate(next)
		if st := h.admitAndValidate(nil, next); st != nil {
			h.release(next)
			return nil, asError(st)
		}
		created = true
		return next, nil
	}
	var out storage.Object
	var err error
	if dryRun {
		var cur storage.Object
		cur, err = h.s.store.Get(ctx, key, storage.ReadOptions{})
		if errors.Is(err, storage.ErrNotFound) {
			cur, err = nil, nil
		}
		if err == nil {
			out, err = tryUpdate(cur)
			if created {
				h.release(out)
			}
		}
	} else {
		out, err = h.s.updateOrFinish(ctx, h.res, key, allowCreate, nil, tryUpdate)
	}
	if h.res.Retain != nil {
		// Free what the update reserved and the stored state does not use.
		switch {
		case err == nil && !dryRun && !created:
			h.res.Retain(out)
		case lastCur != nil && (err != nil || dryRun):
			h.res.Retain(lastCur)
		}
	}
	if err != nil {
		h.fail(h.storageStatus(err, h.ri.Name))
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	h.writeObject(mt, code, out)
}

// admitAndValidate runs admission and validation on a create (old nil) or
// update.
func (h *handler) admitAndValidate(old, obj registry.Object) *metav1.Status {
	if st := h.admit(obj, old); st != nil {
		return st
	}
	return h.validate(obj, old)
}

// mergeUpdate builds the next state of cur from the client's object: system
// fields are kept, the status (for updates of the main resource) or everything
// but the status (for /status) comes from the stored object, the generation
// moves when the spec changes. It returns cur itself when nothing changes.
func (h *handler) mergeUpdate(cur, in storage.Object) (storage.Object, *metav1.Status) {
	next := h.res.Copy(in)
	if rv := next.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, metav1.NewConflict(h.res.GroupResource(), h.ri.Name, errors.New(metav1.OptimisticLockErrorMsg))
	}
	if uid := next.GetUID(); uid != "" && uid != cur.GetUID() {
		return nil, metav1.NewConflict(h.res.GroupResource(), h.ri.Name,
			fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, cur.GetUID()))
	}
	if h.ri.Sub == "status" {
		// /status changes the status and, for built-in kinds, some
		// metadata; the rest is the stored object's.
		in := next
		next = h.res.Copy(cur)
		registry.CopyStatus(next, in)
		if h.res.StatusMetadata != nil {
			h.res.StatusMetadata(next, in)
		}
	} else if h.res.StatusSubresource {
		registry.CopyStatus(next, cur)
	}
	next.SetResourceVersion(cur.GetResourceVersion())
	next.SetUID(cur.GetUID())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
	next.SetGeneration(cur.GetGeneration())
	h.track(cur, next)
	if h.ri.Sub == "" {
		if h.res.PrepareForUpdate != nil {
			h.res.PrepareForUpdate(next, cur)
		}
		if st := h.admit(next, cur); st != nil {
			return nil, st
		}
	}
	if h.res.GenerationChanged(cur, next) {
		next.SetGeneration(cur.GetGeneration() + 1)
	}
	if st := h.validate(next, cur); st != nil {
		return nil, st
	}
	if reflect.DeepEqual(next, cur) {
		return cur, nil
	}
	return next, nil
}

// release gives back what the resource reserved for obj (nil-safe).
func (h *handler) release(obj registry.Object) {
	if h.res.Release != nil {
		h.res.Release(obj)
	}
}

// errEmptiedFinalizers stops an update that completes a deletion (see
// updateOrFinish).
type errEmptiedFinalizers struct {
	next storage.Object // the object the update built
	rv   string         // the resourceVersion it was built on
}

func (e *errEmptiedFinalizers) Error() string {
	return "apiserver: the update removes the last finalizer"
}

// completesDeletion reports whether writing next over cur completes cur's
// deletion, as kube-apiserver's ShouldDeleteDuringUpdate decides: cur is
// marked for deletion without a pending grace period and next has no
// finalizers left (nor, for a namespace, spec.finalizers: its cleanup is
// not done).
func completesDeletion(cur, next storage.Object) bool {
	if cur == nil || cur.GetDeletionTimestamp() == nil || len(next.GetFinalizers()) > 0 || namespaceHeld(next) {
		return false
	}
	return !gracePending(cur)
}

// updateOrFinish is store.GuaranteedUpdate, except that an update that
// completes a deletion (completesDeletion) is not written: the object is
// removed instead, as kube-apiserver does, so watchers see DELETED carrying
// its last stored state, finalizers included, and no MODIFIED without them.
// The result is then the object the update built (what kube-apiserver
// answers).
func (s *Server) updateOrFinish(ctx context.Context, res *registry.Resource, key string, allowCreate bool, pre *storage.Preconditions, tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	for attempt := 0; ; attempt++ {
		out, err := s.store.GuaranteedUpdate(ctx, key, allowCreate, pre, func(cur storage.Object) (storage.Object, error) {
			next, err := tryUpdate(cur)
			if err == nil && completesDeletion(cur, next) {
				return nil, &errEmptiedFinalizers{next: next, rv: cur.GetResourceVersion()}
			}
			return next, err
		})
		var done *errEmptiedFinalizers
		if !errors.As(err, &done) {
			return out, err
		}
		removed, err := s.store.Delete(ctx, key, &storage.Preconditions{ResourceVersion: &done.rv}, nil)
		switch {
		case err == nil:
			s.released(res, removed)
			return done.next, nil
		case errors.Is(err, storage.ErrNotFound):
			return done.next, nil // removed by a racing update
		case errors.Is(err, storage.ErrConflict) && attempt < 100:
			continue // written meanwhile: judge the update again
		}
		return nil, err
	}
}
