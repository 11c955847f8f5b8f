package apiserver

import (
	"context"
	"errors"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
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
// controller does for a namespace being deleted: delete everything in it, of
// every namespaced resource registered (built-in and custom), with
// Background propagation (objects with finalizers are marked and waited
// for), then finalize the namespace: its spec.finalizers are cleared and it
// is removed, at once or, if it has metadata.finalizers (the garbage
// collector's, for instance), when the last of them goes (updateOrFinish).
//
// It runs in a goroutine owned by the server, driven by a watch on the store
// so that it reacts to finalizers being removed without polling. At most one
// runs per namespace; a second delete of a terminating namespace does not
// start another.
func (s *Server) startNamespaceCleanup(ns string) {
	if s.cfg.DisableNamespaceController {
		return
	}
	if _, running := s.nsCleanups.LoadOrStore(ns, struct{}{}); running {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.nsCleanups.Delete(ns)
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

// namespacedResources returns one served version of every namespaced
// resource (storage keys do not depend on the version).
func (s *Server) namespacedResources() []*registry.Resource {
	var out []*registry.Resource
	seen := map[string]bool{}
	for _, g := range s.reg.GroupOrder() {
		for _, v := range s.reg.Groups()[g] {
			for _, res := range s.reg.ForGroupVersion(g, v) {
				if !res.Namespaced || seen[res.Group+"/"+res.Resource] {
					continue
				}
				seen[res.Group+"/"+res.Resource] = true
				out = append(out, res)
			}
		}
	}
	return out
}

// cleanNamespace deletes what is left in ns and reports whether the namespace
// is finalized (gone, or waiting only on its metadata.finalizers).
func (s *Server) cleanNamespace(ctx context.Context, ns string) (bool, error) {
	remaining := 0
	for _, res := range s.namespacedResources() {
		prefix := storagePrefix(res) + ns + "/"
		list, err := s.store.List(ctx, prefix, storage.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, obj := range list.Items {
			remaining++
			if obj.GetDeletionTimestamp() != nil && !gracePending(obj) {
				continue
			}
			key := prefix + obj.GetName()
			if _, _, err := s.deleteObject(ctx, res, key, &namespaceContentDelete); err != nil && !errors.Is(err, storage.ErrNotFound) {
				var se *statusError
				if errors.As(err, &se) { // a precondition: the object was replaced meanwhile
					continue
				}
				return false, err
			}
		}
	}
	if remaining > 0 {
		return false, nil
	}
	return true, s.finalizeNamespace(ctx, ns)
}

// finalizeNamespace clears the spec.finalizers of a namespace whose content
// is gone (as the namespace controller's /finalize call does) and removes
// it unless metadata.finalizers remain.
func (s *Server) finalizeNamespace(ctx context.Context, ns string) error {
	key := "/core/namespaces/" + ns
	out, err := s.store.GuaranteedUpdate(ctx, key, false, nil, func(cur storage.Object) (storage.Object, error) {
		n, ok := cur.(*corev1.Namespace)
		if !ok || len(n.Spec.Finalizers) == 0 {
			return cur, nil
		}
		next := n.DeepCopy()
		next.Spec.Finalizers = nil
		return next, nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(out.GetFinalizers()) > 0 {
		return nil
	}
	_, err = s.store.Delete(ctx, key, nil, func(cur storage.Object) error {
		if len(cur.GetFinalizers()) > 0 {
			return errNamespaceHeld
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, errNamespaceHeld) {
		return nil // updateOrFinish removes it when its last finalizer goes
	}
	return err
}

var errNamespaceHeld = errors.New("apiserver: namespace held by finalizers")

// namespaceHeld reports whether obj is a namespace whose content has not
// been deleted yet (its spec.finalizers still hold "kubernetes").
func namespaceHeld(obj storage.Object) bool {
	n, ok := obj.(*corev1.Namespace)
	return ok && len(n.Spec.Finalizers) > 0
}

// storagePrefix is the storage key prefix of a resource's objects
// ("/core/configmaps/"); namespaced keys continue with "NAMESPACE/NAME",
// cluster-scoped ones with "NAME".
func storagePrefix(res *registry.Resource) string {
	group := res.Group
	if group == "" {
		group = "core"
	}
	return "/" + group + "/" + res.Resource + "/"
}

// namespaceContentDelete is the DeleteOptions of namespace cleanup: no
// preconditions, Background propagation (the namespace controller's), and a
// grace period of 0. The namespace controller deletes pods gracefully and a
// kubelet finishes the deletion once their containers stop; kapi runs no
// kubelet, so its cleanup removes them at once, with the same end state.
var namespaceContentDelete = metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationBackground), GracePeriodSeconds: new(int64(0))}

// gracePending reports whether obj's graceful deletion is waiting for its
// grace period (deletionGracePeriodSeconds above 0).
func gracePending(obj storage.Object) bool {
	p := obj.GetDeletionGracePeriodSeconds()
	return p != nil && *p > 0
}

// deleteAll is DeleteOptions with nothing set: no preconditions, the
// resource's default propagation.
var deleteAll metav1.DeleteOptions
