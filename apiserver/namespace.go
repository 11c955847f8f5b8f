package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
//
// On etcd the garbage collector's elected replica starts it, for every
// namespace it sees being deleted (namespaceCleanupElected); alone, the
// DELETE starts it at once.
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
	// A namespace whose spec.finalizers were emptied (through /finalize)
	// is finalized: the namespace controller leaves it, and its content,
	// alone; the next delete removes it (planDeletion).
	if rs, ok := s.namespaceStore(); ok {
		cur, err := rs.Get(ctx, "", ns, storage.ReadOptions{})
		if errors.Is(err, storage.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if n, ok := cur.(*corev1.Namespace); ok && len(n.Spec.Finalizers) == 0 {
			return true, nil
		}
	}
	remaining := 0
	var left namespaceContent
	for _, res := range s.namespacedResources() {
		rs := s.storeOf(res)
		list, err := s.store.List(ctx, rs.key(ns, ""), storage.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, obj := range list.Items {
			remaining++
			if obj.GetDeletionTimestamp() != nil && !gracePending(obj) {
				left.add(res, obj)
				continue
			}
			out, deleted, err := rs.Delete(ctx, ns, obj.GetName(), &namespaceContentDelete)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				if stageError(err) { // a precondition: the object was replaced meanwhile
					continue
				}
				return false, err
			}
			if err == nil && !deleted {
				left.add(res, out)
			}
		}
	}
	if err := s.reportNamespaceContent(ctx, ns, &left); err != nil {
		return false, err
	}
	if remaining > 0 {
		return false, nil
	}
	return true, s.finalizeNamespace(ctx, ns)
}

// namespaceContent counts what a namespace's cleanup left: objects by
// resource, and the finalizers holding them.
type namespaceContent struct {
	byResource   map[string]int // "configmaps." (resource.group)
	byFinalizer  map[string]int
	numRemaining int
}

func (c *namespaceContent) add(res *registry.Resource, obj storage.Object) {
	if c.byResource == nil {
		c.byResource, c.byFinalizer = map[string]int{}, map[string]int{}
	}
	c.numRemaining++
	c.byResource[res.Resource+"."+res.Group]++
	for _, f := range obj.GetFinalizers() {
		c.byFinalizer[f]++
	}
}

// The status conditions kube-controller-manager's namespace controller
// maintains on a namespace being deleted, in its order, with the reason and
// message of their good state.
var namespaceConditions = []struct {
	typ             corev1.NamespaceConditionType
	reason, message string
}{
	{"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"},
	{"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{"NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
	{"NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// reportNamespaceContent writes, as the namespace controller does, the
// status conditions of a namespace being deleted: what content remains and
// which finalizers hold it. A namespace whose content is all gone at once is
// removed without them.
func (s *Server) reportNamespaceContent(ctx context.Context, ns string, left *namespaceContent) error {
	if left.numRemaining == 0 {
		if cur, err := s.store.Get(ctx, namespaceKey(ns), storage.ReadOptions{}); err != nil ||
			len(cur.(*corev1.Namespace).Status.Conditions) == 0 {
			return nil
		}
	}
	want := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	for _, c := range namespaceConditions {
		want[c.typ] = corev1.NamespaceCondition{Type: c.typ, Status: corev1.ConditionFalse, Reason: c.reason, Message: c.message}
	}
	// counted lists what is left, sorted, as the namespace controller words it.
	counted := func(counts map[string]int, format string) string {
		parts := make([]string, 0, len(counts))
		for k, n := range counts {
			parts = append(parts, fmt.Sprintf(format, k, n))
		}
		slices.Sort(parts)
		return strings.Join(parts, ", ")
	}
	if len(left.byResource) > 0 {
		want["NamespaceContentRemaining"] = corev1.NamespaceCondition{Type: "NamespaceContentRemaining", Status: corev1.ConditionTrue,
			Reason: "SomeResourcesRemain", Message: "Some resources are remaining: " + counted(left.byResource, "%s has %d resource instances")}
	}
	if len(left.byFinalizer) > 0 {
		want["NamespaceFinalizersRemaining"] = corev1.NamespaceCondition{Type: "NamespaceFinalizersRemaining", Status: corev1.ConditionTrue,
			Reason: "SomeFinalizersRemain", Message: "Some content in the namespace has finalizers remaining: " + counted(left.byFinalizer, "%s in %d resource instances")}
	}
	now := metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
	rs, ok := s.namespaceStore()
	if !ok {
		return nil
	}
	// The namespace controller writes the conditions through /status.
	o := writeOptions{Manager: managerControllerManager, Subresource: "status"}
	_, err := rs.modify(ctx, "", ns, nil, &o, func(cur storage.Object) storage.Object {
		n, ok := cur.(*corev1.Namespace)
		if !ok || n.DeletionTimestamp == nil {
			return nil
		}
		next := n.DeepCopy()
		changed := false
		for _, c := range namespaceConditions {
			w := want[c.typ]
			i := slices.IndexFunc(next.Status.Conditions, func(x corev1.NamespaceCondition) bool { return x.Type == c.typ })
			switch {
			case i < 0:
				w.LastTransitionTime = now
				next.Status.Conditions = append(next.Status.Conditions, w)
				changed = true
			case next.Status.Conditions[i].Status != w.Status || next.Status.Conditions[i].Reason != w.Reason || next.Status.Conditions[i].Message != w.Message:
				old := &next.Status.Conditions[i]
				if old.Status != w.Status {
					old.LastTransitionTime = now
				}
				old.Status, old.Reason, old.Message = w.Status, w.Reason, w.Message
				changed = true
			}
		}
		if !changed {
			return nil
		}
		return next
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// namespaceStore is the store of namespaces (false when the registry
// serves none).
func (s *Server) namespaceStore() (resourceStore, bool) {
	res := s.reg.Get("", "v1", "namespaces")
	return s.storeOf(res), res != nil
}

// finalizeNamespace clears the spec.finalizers of a namespace whose content
// is gone (as the namespace controller's /finalize call does) and removes
// it unless metadata.finalizers remain.
func (s *Server) finalizeNamespace(ctx context.Context, ns string) error {
	key := namespaceKey(ns)
	rs, ok := s.namespaceStore()
	if !ok {
		return nil
	}
	// The namespace controller clears them through /finalize.
	o := writeOptions{Manager: managerControllerManager, Subresource: "finalize"}
	out, err := rs.modify(ctx, "", ns, nil, &o, func(cur storage.Object) storage.Object {
		n, ok := cur.(*corev1.Namespace)
		if !ok || len(n.Spec.Finalizers) == 0 {
			return nil
		}
		next := n.DeepCopy()
		next.Spec.Finalizers = nil
		return next
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

// namespaceCleanupElected reports whether namespace cleanups are left to
// the replica elected to run the garbage collector (servers on etcd with
// the collector on), which starts one for every namespace it sees being
// deleted, also those a replica that stopped left half done.
func (s *Server) namespaceCleanupElected() bool {
	return len(s.cfg.Etcd.Servers) > 0 && !s.cfg.DisableGarbageCollector
}
