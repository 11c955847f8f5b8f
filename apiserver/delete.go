package apiserver

import (
	"bytes"
	"context"
	"errors"
	"net/http"
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
	h.s.writeObject(h.w, mt, http.StatusOK, h.res, out)
}

// deleteObject deletes the object at key, or, if it has finalizers, marks it
// for deletion. deleted reports which happened; out is the object's last or
// new state.
func (s *Server) deleteObject(ctx context.Context, res *registry.Resource, key string, opts *metav1.DeleteOptions) (out storage.Object, deleted bool, err error) {
	check := func(cur storage.Object) error {
		if opts.Preconditions != nil {
			if st := opts.Preconditions.Check(res.GroupKind(), cur); st != nil {
				return asError(st)
			}
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
	hasFinalizers := len(cur.GetFinalizers()) > 0 || res.Resource == "namespaces"
	if len(opts.DryRun) > 0 {
		return cur, !hasFinalizers, nil
	}
	if !hasFinalizers {
		out, err := s.store.Delete(ctx, key, nil, func(cur storage.Object) error {
			if len(cur.GetFinalizers()) > 0 {
				return storage.ErrConflict
			}
			return check(cur)
		})
		if errors.Is(err, storage.ErrConflict) {
			return s.deleteObject(ctx, res, key, opts) // finalizers appeared meanwhile
		}
		if err == nil && res.Release != nil {
			res.Release(out)
		}
		return out, err == nil, err
	}
	out, err = s.store.GuaranteedUpdate(ctx, key, false, nil, func(cur storage.Object) (storage.Object, error) {
		if err := check(cur); err != nil {
			return nil, err
		}
		if cur.GetDeletionTimestamp() != nil {
			return cur, nil
		}
		next := res.Copy(cur)
		now := metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
		next.SetDeletionTimestamp(&now)
		if res.Resource != "namespaces" { // a namespace has no grace period (golden 101)
			zero := int64(0)
			next.SetDeletionGracePeriodSeconds(&zero)
		}
		markTerminating(next)
		return next, nil
	})
	if err != nil {
		return nil, false, err
	}
	if res.Resource == "namespaces" {
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
