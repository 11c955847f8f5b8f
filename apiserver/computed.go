package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// A computed resource (registry.Resource.Computed: componentstatuses) is
// not stored: its get and list are answered with what Computed returns at
// each request, filtered by the list's selectors, as kube-apiserver's
// REST storage for it does. Its lists carry no resourceVersion; a watch is
// refused (405) as kube-apiserver refuses it, and any other verb is not
// routed at all (405 without the resource's Warning).

// serveComputed serves a request of a computed resource.
func (h *handler) serveComputed() {
	if h.ri.Sub != "" || h.ri.Verb != "get" && h.ri.Verb != "list" && h.ri.Verb != "watch" {
		h.methodNotAllowed()
		return
	}
	if h.res.Warning != "" {
		h.w.Header().Add("Warning", fmt.Sprintf("299 - %q", h.res.Warning))
	}
	if h.ri.Verb == "watch" {
		h.fail(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
			Message: fmt.Sprintf("watch is not supported on resources of kind %q", h.res.Resource),
			Details: &metav1.StatusDetails{Kind: h.res.Resource}})
		return
	}
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	env := registry.ComputeEnv{StorageHealth: h.s.storageHealth}
	if h.ri.Verb == "get" {
		if _, st := queryOptions(h, metav1.DecodeGetOptions, nil, "GetOptions"); st != nil {
			h.fail(st)
			return
		}
		objs, st := h.res.Computed(h.r.Context(), env, h.ri.Name)
		if st == nil && len(objs) == 0 {
			st = metav1.NewNotFound(h.res.GroupResource(), h.ri.Name)
		}
		if st != nil {
			h.fail(st)
			return
		}
		h.writeObject(mt, http.StatusOK, objs[0])
		return
	}
	_, pred, st := h.listOptions()
	if st != nil {
		h.fail(st)
		return
	}
	objs, st := h.res.Computed(h.r.Context(), env, "")
	if st != nil {
		h.fail(st)
		return
	}
	items := make([]storage.Object, 0, len(objs))
	for _, o := range objs {
		if pred == nil || pred(o) {
			items = append(items, o)
		}
	}
	h.writeList(mt, &metav1.ListMeta{}, items)
}

// storageHealth returns nil when the server's storage answers a read.
func (s *Server) storageHealth(ctx context.Context) error {
	_, err := s.store.Get(ctx, namespaceKey("default"), storage.ReadOptions{Match: storage.Latest})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}
