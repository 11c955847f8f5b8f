package apiserver

import (
	"context"
	"errors"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"sigs.k8s.io/yaml"
)

func yamlToJSON(b []byte) ([]byte, error) { return yaml.YAMLToJSON(b) }

// markTerminating moves a namespace being deleted to the Terminating phase.
func markTerminating(obj storage.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		ns.Status.Phase = corev1.NamespaceTerminating
	}
}

// startNamespaceCleanup does what kube-controller-manager's namespace
// controller does for a namespace being deleted: delete everything in it
// (objects with finalizers are marked and waited for), then remove the
// namespace. It runs in a goroutine owned by the server, driven by a watch on
// the store so that it reacts to finalizers being removed without polling.
func (s *Server) startNamespaceCleanup(ns string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx := s.ctx
		for {
			rev := s.store.Revision()
			done, err := s.cleanNamespace(ctx, ns)
			if err != nil || done {
				if err != nil && ctx.Err() == nil {
					s.cfg.Logger.Error("apiserver: namespace cleanup", "namespace", ns, "err", err)
				}
				return
			}
			// Wait for any write under the namespace, then try again.
			w, err := s.store.Watch(ctx, "/", storage.WatchOptions{ResourceVersion: rev})
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, storage.ErrExpired) {
					s.cfg.Logger.Error("apiserver: namespace cleanup watch", "namespace", ns, "err", err)
				}
				if ctx.Err() != nil {
					return
				}
				continue
			}
			waitForNamespaceChange(ctx, w, ns)
			w.Stop()
			if ctx.Err() != nil {
				return
			}
		}
	}()
}

func waitForNamespaceChange(ctx context.Context, w storage.Watcher, ns string) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == storage.Failed {
				return
			}
			if ev.Object != nil && (ev.Object.GetNamespace() == ns || ev.Object.GetName() == ns) {
				return
			}
		}
	}
}

// cleanNamespace deletes what is left in ns and reports whether the namespace
// itself is gone.
func (s *Server) cleanNamespace(ctx context.Context, ns string) (bool, error) {
	remaining := 0
	for _, g := range s.reg.GroupOrder() {
		for _, v := range s.reg.Groups()[g] {
			for _, res := range s.reg.ForGroupVersion(g, v) {
				if !res.Namespaced {
					continue
				}
				group := res.Group
				if group == "" {
					group = "core"
				}
				prefix := "/" + group + "/" + res.Resource + "/" + ns + "/"
				list, err := s.store.List(ctx, prefix, storage.ListOptions{})
				if err != nil {
					return false, err
				}
				for _, obj := range list.Items {
					remaining++
					if obj.GetDeletionTimestamp() != nil {
						continue
					}
					key := prefix + obj.GetName()
					if _, _, err := s.deleteObject(ctx, res, key, &deleteAll); err != nil && !errors.Is(err, storage.ErrNotFound) {
						return false, err
					}
				}
			}
		}
	}
	if remaining > 0 {
		return false, nil
	}
	_, err := s.store.Delete(ctx, "/core/namespaces/"+ns, nil, nil)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	return true, nil
}

// deleteAll is the DeleteOptions of namespace cleanup: no preconditions.
var deleteAll metav1.DeleteOptions
