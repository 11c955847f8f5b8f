package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"time"

	apiregistrationv1 "github.com/kapi-dev/kapi/api/apiregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// The local APIServices: kube-apiserver keeps one APIService per group
// version it serves itself (registry.LocalAPIServices: no service, always
// Available), written by its autoregister controller with the
// kube-apiserver field manager and labelled
// kube-aggregator.kubernetes.io/automanaged:
//
//   - "onstart" (the built-in group versions) is brought in line at start
//     (created, updated, or deleted when the group version is no longer
//     served) and afterwards only recreated when deleted: changes a user
//     makes to it stay;
//   - "true" (a custom resource's group version) is kept in line all the
//     time: created when a CustomResourceDefinition starts serving its
//     group version, deleted when none does any more;
//   - an APIService without the label is the user's, never touched.
//
// kapi does the same: syncLocalAPIServices at start, then again whenever
// the CRD controller changes what the registry serves and whenever an
// APIService is deleted.

// syncLocalAPIServices brings the stored APIServices in line with the
// group versions the registry serves; onStart says whether those labelled
// "onstart" are synced too (at start) or only recreated.
func (s *Server) syncLocalAPIServices(ctx context.Context, onStart bool) error {
	res := s.reg.Get("apiregistration.k8s.io", "v1", "apiservices")
	if res == nil {
		return nil // a registry without the kind
	}
	rs := s.storeOf(res)
	want := map[string]*apiregistrationv1.APIService{}
	desired := registry.LocalAPIServices(s.reg, metav1.NewTime(s.cfg.Now()))
	for _, a := range desired {
		want[a.Name] = a
	}
	list, err := rs.List(ctx, "", storage.ListOptions{})
	if err != nil {
		return fmt.Errorf("apiserver: listing APIServices: %w", err)
	}
	o := &writeOptions{Manager: managerAPIServer}
	var errs []error
	have := map[string]bool{}
	for _, it := range list.Items {
		cur := it.(*apiregistrationv1.APIService)
		have[cur.Name] = true
		label, managed := cur.Labels[registry.AutomanagedLabel]
		if !managed || label == "onstart" && !onStart {
			continue
		}
		w := want[cur.Name]
		if w == nil {
			uid := cur.UID
			_, _, err := rs.Delete(ctx, "", cur.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			if err != nil && !errors.Is(err, storage.ErrNotFound) && errorStatus(err).Code != http.StatusConflict {
				errs = append(errs, fmt.Errorf("deleting the APIService %s: %w", cur.Name, err))
			}
			continue
		}
		if reflect.DeepEqual(cur.Spec, w.Spec) && label == w.Labels[registry.AutomanagedLabel] {
			continue
		}
		uid := cur.UID
		_, err := rs.modify(ctx, "", cur.Name, &storage.Preconditions{UID: &uid}, o, func(c storage.Object) storage.Object {
			next := c.(*apiregistrationv1.APIService).DeepCopy()
			next.Spec = *w.Spec.DeepCopy()
			if next.Labels == nil {
				next.Labels = map[string]string{}
			}
			next.Labels[registry.AutomanagedLabel] = w.Labels[registry.AutomanagedLabel]
			return next
		})
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			errs = append(errs, fmt.Errorf("updating the APIService %s: %w", cur.Name, err))
		}
	}
	for _, a := range desired {
		if have[a.Name] {
			continue
		}
		a.Status = apiregistrationv1.APIServiceStatus{} // the create's own: Available since now
		if _, err := rs.Create(ctx, a, o); err != nil && errorStatus(err).Code != http.StatusConflict {
			errs = append(errs, fmt.Errorf("creating the APIService %s: %w", a.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("apiserver: %w", err)
	}
	return nil
}

// startLocalAPIServices syncs the local APIServices and starts the
// controller that keeps them in line (stopped by Close): it syncs again
// when localAPIServicesChanged is called and when an APIService is
// deleted.
func (s *Server) startLocalAPIServices() error {
	if s.reg.Get("apiregistration.k8s.io", "v1", "apiservices") == nil {
		return nil
	}
	rev := s.store.Revision()
	if err := s.syncLocalAPIServices(s.ctx, true); err != nil {
		return err
	}
	sync := func(ctx context.Context) {
		if err := s.syncLocalAPIServices(ctx, false); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("apiserver: local APIServices", "err", err)
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-s.apiServicesKick:
				sync(s.ctx)
			}
		}
	}()
	s.followStore(keyOf("apiregistration.k8s.io", "apiservices", "", ""), rev, 100*time.Millisecond,
		func(context.Context) { s.localAPIServicesChanged() },
		func(_ context.Context, ev storage.Event) {
			if ev.Type == storage.Deleted {
				s.localAPIServicesChanged()
			}
		})
	return nil
}

// localAPIServicesChanged tells the local APIServices' controller that
// what the registry serves changed (a custom resource's group version came
// or went), or that an APIService was deleted.
func (s *Server) localAPIServicesChanged() {
	select {
	case s.apiServicesKick <- struct{}{}:
	default: // a sync is due already
	}
}
