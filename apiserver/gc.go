package apiserver

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// garbageCollector does what kube-controller-manager's garbage collector does
// on a real cluster (envtest has none): it deletes objects whose owners are
// gone and carries out the Orphan and Foreground propagation policies that
// a delete records as finalizers (resourceStore.Delete).
//
// # How it works
//
// One goroutine, owned by the server and stopped by Close, follows a watch
// of the whole store (prefix "/", starting with the initial state) and keeps
// a graph: every live object by UID, and for every owner UID the UIDs of the
// objects whose ownerReferences name it. Owners need not exist: a dependent
// created with a reference to a missing owner is indexed under that UID too.
// Work is driven by events, one object at a time, so collecting an owner's
// dependents costs O(dependents), never a scan:
//
//   - An object removed from the store: its dependents are examined.
//   - An object whose references name a missing owner (a dangling reference,
//     also at creation) or an owner being deleted in the foreground: it is
//     examined.
//   - An object marked for deletion with the "orphan" finalizer: the
//     references its dependents have to it are removed, then the finalizer.
//   - An object marked for deletion with the "foregroundDeletion" finalizer:
//     its dependents are examined (and so deleted); once no remaining
//     dependent has blockOwnerDeletion set on its reference to it, the
//     finalizer is removed and the object goes.
//
// Examining a dependent classifies each of its references: solid (the owner
// exists, with that UID, in the dependent's namespace or cluster-scoped),
// dangling (no such owner), or waiting (the owner is being deleted in the
// foreground). With a solid owner left, the dangling and waiting references
// are removed and the dependent stays. Without one it is deleted, with a UID
// precondition and only if its references are still those it was judged on:
// in the foreground if an owner waits and it has dependents itself,
// otherwise by the policy its own finalizers say (Background by default).
//
// # Limits
//
// A dependent with a reference to a kind the registry does not serve, or a
// cluster-scoped dependent with a reference to a namespaced kind, is never
// collected: a real cluster's collector cannot look such owners up (no REST
// mapping; an invalid reference it reports as an event) and leaves the
// dependent alone. Cycles of foreground deletions are not detected. Objects of a
// resource the registry cannot name (an unstructured object without kind
// that is stored under no registered resource) count as owners but are not
// collected.
type garbageCollector struct {
	s *Server

	nodes      map[metav1.UID]*gcNode
	dependents map[metav1.UID]map[metav1.UID]struct{} // owner UID -> dependent UIDs
	types      map[reflect.Type]*registry.Resource    // Go type -> resource; nil when several share it

	queue  []metav1.UID
	queued map[metav1.UID]bool

	rev     uint64 // the revision the graph reflects (once ready)
	ready   bool   // the initial state has been read
	waiters []gcWaiter
	idle    chan gcWaiter
}

// gcNode is a live object of the graph.
type gcNode struct {
	obj storage.Object     // latest state, shared with the store (read-only)
	res *registry.Resource // nil if unknown
	key string
}

type gcWaiter struct {
	rev  uint64
	done chan struct{}
}

// startGC starts the server's garbage collector.
func (s *Server) startGC() {
	g := &garbageCollector{s: s, idle: make(chan gcWaiter)}
	g.reset()
	s.gc = g
	// On etcd, one replica collects (elect.go).
	s.runElected(func(ctx context.Context) {
		g.ready = false // a new term reads the whole state again
		g.run(ctx)
	})
}

// reset forgets the graph; the next watch reads the whole state again.
func (g *garbageCollector) reset() {
	g.nodes = map[metav1.UID]*gcNode{}
	g.dependents = map[metav1.UID]map[metav1.UID]struct{}{}
	g.queue, g.queued = nil, map[metav1.UID]bool{}
	g.rev, g.ready = 0, false
}

// waitIdle blocks until the collector has seen every write up to rev and
// has no work left (or ctx ends). Tests use it to check what it leaves
// alone.
func (g *garbageCollector) waitIdle(ctx context.Context, rev uint64) error {
	w := gcWaiter{rev: rev, done: make(chan struct{})}
	select {
	case g.idle <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.s.ctx.Done():
		return g.s.ctx.Err()
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-g.s.ctx.Done():
		return g.s.ctx.Err()
	}
}

func (g *garbageCollector) run(ctx context.Context) {
	for ctx.Err() == nil {
		opts := storage.WatchOptions{ResourceVersion: g.rev}
		if !g.ready {
			g.reset()
			opts = storage.WatchOptions{SendInitialEvents: true}
		}
		w, err := g.s.store.Watch(ctx, "/", opts)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, storage.ErrClosed) {
				return
			}
			if errors.Is(err, storage.ErrExpired) {
				g.ready = false
				continue
			}
			g.s.cfg.Logger.Error("apiserver: garbage collector watch", "err", err)
			return
		}
		g.follow(ctx, w)
		w.Stop()
	}
}

// follow applies the watch's events to the graph and works through the
// queue, draining pending events before each item so that decisions are
// taken on a fresh graph. It returns when the watch ends.
func (g *garbageCollector) follow(ctx context.Context, w storage.Watcher) {
	for {
		g.answerWaiters()
		if g.ready && len(g.queue) > 0 {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok || !g.handle(ev) {
					return
				}
			case wt := <-g.idle:
				g.waiters = append(g.waiters, wt)
			case <-ctx.Done():
				return
			default:
				uid := g.queue[0]
				g.queue = g.queue[1:]
				delete(g.queued, uid)
				g.process(ctx, uid)
			}
			continue
		}
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || !g.handle(ev) {
				return
			}
		case wt := <-g.idle:
			g.waiters = append(g.waiters, wt)
		case <-ctx.Done():
			return
		}
	}
}

func (g *garbageCollector) answerWaiters() {
	if !g.ready || len(g.queue) > 0 {
		return
	}
	kept := g.waiters[:0]
	for _, w := range g.waiters {
		if g.rev >= w.rev {
			close(w.done)
		} else {
			kept = append(kept, w)
		}
	}
	g.waiters = kept
}

// handle applies one event; false ends the watch (it is started again from
// the last revision seen, or from the initial state if that is lost).
func (g *garbageCollector) handle(ev storage.Event) bool {
	switch ev.Type {
	case storage.Failed:
		if !g.ready || errors.Is(ev.Err, storage.ErrExpired) {
			g.ready = false
		}
		return false
	case storage.Bookmark:
		if ev.InitialEventsEnd {
			g.ready = true
			g.rev = ev.Revision
			g.afterInitialState()
		} else if g.ready && ev.Revision > g.rev {
			g.rev = ev.Revision
		}
		return true
	case storage.Added, storage.Modified:
		if ev.Object != nil {
			g.upsert(ev.Object)
			if g.ready && ev.Object.GetDeletionTimestamp() != nil {
				if res := g.resourceOf(ev.Object); res != nil && res.Group == "" && res.Resource == "namespaces" {
					// The elected replica cleans every namespace being
					// deleted, whichever replica took the DELETE.
					g.s.startNamespaceCleanup(ev.Object.GetName())
				}
			}
		}
	case storage.Deleted:
		if ev.Object != nil {
			g.remove(ev.Object)
		}
	}
	if g.ready && ev.Revision > g.rev {
		g.rev = ev.Revision
	}
	return true
}

// afterInitialState queues every object that may need work, and resumes the
// cleanup of terminating namespaces (a persistent store may hold some).
func (g *garbageCollector) afterInitialState() {
	for uid, n := range g.nodes {
		if len(n.obj.GetOwnerReferences()) > 0 || hasGCFinalizer(n.obj) {
			g.enqueue(uid)
		}
		if n.res != nil && n.res.Group == "" && n.res.Resource == "namespaces" && n.obj.GetDeletionTimestamp() != nil {
			g.s.startNamespaceCleanup(n.obj.GetName())
		}
	}
}

func (g *garbageCollector) enqueue(uid metav1.UID) {
	if uid == "" || g.queued[uid] {
		return
	}
	g.queued[uid] = true
	g.queue = append(g.queue, uid)
}

func hasGCFinalizer(obj storage.Object) bool {
	f := obj.GetFinalizers()
	return slices.Contains(f, FinalizerOrphanDependents) || slices.Contains(f, FinalizerDeleteDependents)
}

// deletingDependents reports whether obj is being deleted in the foreground.
func deletingDependents(obj storage.Object) bool {
	return obj.GetDeletionTimestamp() != nil && slices.Contains(obj.GetFinalizers(), FinalizerDeleteDependents)
}

func blocks(r metav1.OwnerReference) bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}

// upsert records an object's new state and queues the work it calls for.
func (g *garbageCollector) upsert(obj storage.Object) {
	uid := obj.GetUID()
	if uid == "" {
		return
	}
	old := g.nodes[uid]
	n := &gcNode{obj: obj}
	if old != nil {
		n.res, n.key = old.res, old.key
	} else {
		n.res = g.resourceOf(obj)
		if n.res != nil {
			n.key = storageKey(n.res, obj.GetNamespace(), obj.GetName())
		}
	}
	g.nodes[uid] = n

	var oldRefs []metav1.OwnerReference
	if old != nil {
		oldRefs = old.obj.GetOwnerReferences()
	}
	newRefs := obj.GetOwnerReferences()
	for _, r := range oldRefs {
		if i := refIndex(newRefs, r.UID); i < 0 {
			g.unindex(r.UID, uid)
			g.ownerMayProceed(r.UID)
		} else if blocks(r) && !blocks(newRefs[i]) {
			g.ownerMayProceed(r.UID)
		}
	}
	examine := false
	for _, r := range newRefs {
		if refIndex(oldRefs, r.UID) < 0 {
			set := g.dependents[r.UID]
			if set == nil {
				set = map[metav1.UID]struct{}{}
				g.dependents[r.UID] = set
			}
			set[uid] = struct{}{}
		}
		if o := g.nodes[r.UID]; o == nil || deletingDependents(o.obj) {
			examine = true // a dangling reference, or an owner waiting for it
		}
	}
	if examine || hasGCFinalizer(obj) && obj.GetDeletionTimestamp() != nil {
		g.enqueue(uid)
	}
	// An owner starting a foreground deletion: its dependents go.
	if deletingDependents(obj) && (old == nil || !deletingDependents(old.obj)) {
		for dep := range g.dependents[uid] {
			g.enqueue(dep)
		}
	}
}

// remove forgets a deleted object; its dependents are examined, and owners
// waiting for it are looked at again.
func (g *garbageCollector) remove(obj storage.Object) {
	uid := obj.GetUID()
	n := g.nodes[uid]
	if n == nil {
		return
	}
	delete(g.nodes, uid)
	for _, r := range n.obj.GetOwnerReferences() {
		g.unindex(r.UID, uid)
		g.ownerMayProceed(r.UID)
	}
	for dep := range g.dependents[uid] {
		g.enqueue(dep)
	}
}

func (g *garbageCollector) unindex(owner, dep metav1.UID) {
	if set := g.dependents[owner]; set != nil {
		delete(set, dep)
		if len(set) == 0 {
			delete(g.dependents, owner)
		}
	}
}

// ownerMayProceed queues an owner being deleted in the foreground, which may
// have lost its last blocking dependent.
func (g *garbageCollector) ownerMayProceed(owner metav1.UID) {
	if o := g.nodes[owner]; o != nil && deletingDependents(o.obj) {
		g.enqueue(owner)
	}
}

func refIndex(refs []metav1.OwnerReference, uid metav1.UID) int {
	for i := range refs {
		if refs[i].UID == uid {
			return i
		}
	}
	return -1
}

// process does the work an object calls for in its current state.
func (g *garbageCollector) process(ctx context.Context, uid metav1.UID) {
	n := g.nodes[uid]
	if n == nil || n.res == nil {
		return
	}
	deleting := n.obj.GetDeletionTimestamp() != nil
	fins := n.obj.GetFinalizers()
	var err error
	switch {
	case deleting && slices.Contains(fins, FinalizerOrphanDependents):
		err = g.orphanDependents(ctx, n)
	case deleting && slices.Contains(fins, FinalizerDeleteDependents):
		err = g.deleteDependents(ctx, n)
	case deleting || len(n.obj.GetOwnerReferences()) == 0:
	default:
		err = g.attemptToDelete(ctx, n)
	}
	if err != nil && ctx.Err() == nil && !ignorableGCError(err) {
		g.s.cfg.Logger.Error("apiserver: garbage collector", "key", n.key, "err", err)
	}
}

// ignorableGCError: the object went or changed meanwhile; its events bring
// it back to the queue if there is still work.
func ignorableGCError(err error) bool {
	return errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) || errors.Is(err, errGCStale) || stageError(err)
}

var errGCStale = errors.New("apiserver: owner references changed since the garbage collector looked")

// orphanDependents removes the references to n from its dependents, then
// n's orphan finalizer.
func (g *garbageCollector) orphanDependents(ctx context.Context, n *gcNode) error {
	owner := n.obj.GetUID()
	for dep := range g.dependents[owner] {
		d := g.nodes[dep]
		if d == nil || d.res == nil {
			continue
		}
		err := g.removeOwnerRefs(ctx, d, func(r metav1.OwnerReference) bool { return r.UID == owner })
		if err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
			return err
		}
	}
	return g.removeFinalizer(ctx, n, FinalizerOrphanDependents)
}

// deleteDependents moves n's foreground deletion on: its blocking
// dependents not yet being deleted are examined (and deleted); when none is
// left, n's foregroundDeletion finalizer is removed.
func (g *garbageCollector) deleteDependents(ctx context.Context, n *gcNode) error {
	owner := n.obj.GetUID()
	blocking := 0
	for dep := range g.dependents[owner] {
		d := g.nodes[dep]
		if d == nil {
			continue
		}
		if i := refIndex(d.obj.GetOwnerReferences(), owner); i < 0 || !blocks(d.obj.GetOwnerReferences()[i]) {
			continue
		}
		blocking++
		if d.obj.GetDeletionTimestamp() == nil {
			g.enqueue(dep)
		}
	}
	if blocking > 0 {
		return nil
	}
	return g.removeFinalizer(ctx, n, FinalizerDeleteDependents)
}

// attemptToDelete examines a dependent that is not being deleted.
func (g *garbageCollector) attemptToDelete(ctx context.Context, n *gcNode) error {
	refs := n.obj.GetOwnerReferences()
	var solid, waiting int
	drop := map[metav1.UID]bool{}
	for _, r := range refs {
		kind := g.refResource(r)
		if kind == nil || n.obj.GetNamespace() == "" && kind.Namespaced {
			// A kind the server does not serve cannot be looked up, and a
			// cluster-scoped object cannot be owned by a namespaced one:
			// kube's collector gives up on such a dependent, and so do we.
			return nil
		}
		o := g.nodes[r.UID]
		switch {
		case o == nil || !ownerMatches(o, kind, r, n.obj.GetNamespace()):
			drop[r.UID] = true // dangling
		case deletingDependents(o.obj):
			drop[r.UID] = true
			waiting++
		default:
			solid++
		}
	}
	switch {
	case solid > 0:
		if len(drop) == 0 {
			return nil
		}
		return g.removeOwnerRefs(ctx, n, func(r metav1.OwnerReference) bool { return drop[r.UID] })
	case waiting > 0 && len(g.dependents[n.obj.GetUID()]) > 0:
		return g.deleteNode(ctx, n, metav1.DeletePropagationForeground)
	}
	policy := metav1.DeletePropagationBackground
	switch fins := n.obj.GetFinalizers(); {
	case slices.Contains(fins, FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case slices.Contains(fins, FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	return g.deleteNode(ctx, n, policy)
}

// deleteNode deletes n with a propagation policy, provided it is still the
// object (UID) and has the references it was judged on.
func (g *garbageCollector) deleteNode(ctx context.Context, n *gcNode, policy metav1.DeletionPropagation) error {
	uid := n.obj.GetUID()
	refs := n.obj.GetOwnerReferences()
	opts := &metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}}
	_, _, err := g.s.storeOf(n.res).deleteIf(ctx, n.obj.GetNamespace(), n.obj.GetName(), opts, func(cur storage.Object) error {
		if !reflect.DeepEqual(cur.GetOwnerReferences(), refs) {
			return errGCStale
		}
		return nil
	}, nil)
	return err
}

// gcWrite is how the collector writes: as kube-controller-manager's
// garbage collector, through the resource's store.
var gcWrite = writeOptions{Manager: managerControllerManager}

// removeOwnerRefs removes the references drop selects from n.
func (g *garbageCollector) removeOwnerRefs(ctx context.Context, n *gcNode, drop func(metav1.OwnerReference) bool) error {
	uid := n.obj.GetUID()
	o := gcWrite
	_, err := g.s.storeOf(n.res).modify(ctx, n.obj.GetNamespace(), n.obj.GetName(), &storage.Preconditions{UID: &uid}, &o, func(cur storage.Object) storage.Object {
		refs := cur.GetOwnerReferences()
		kept := make([]metav1.OwnerReference, 0, len(refs))
		for _, r := range refs {
			if !drop(r) {
				kept = append(kept, r)
			}
		}
		if len(kept) == len(refs) {
			return nil
		}
		if len(kept) == 0 {
			kept = nil
		}
		next := n.res.Copy(cur)
		next.SetOwnerReferences(kept)
		return next
	})
	return err
}

// removeFinalizer removes one of the garbage collector's finalizers from n,
// and n itself if it was the last.
func (g *garbageCollector) removeFinalizer(ctx context.Context, n *gcNode, finalizer string) error {
	uid := n.obj.GetUID()
	o := gcWrite
	_, err := g.s.storeOf(n.res).modify(ctx, n.obj.GetNamespace(), n.obj.GetName(), &storage.Preconditions{UID: &uid}, &o, func(cur storage.Object) storage.Object {
		fins := cur.GetFinalizers()
		if !slices.Contains(fins, finalizer) {
			return nil
		}
		kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == finalizer })
		if len(kept) == 0 {
			kept = nil
		}
		next := n.res.Copy(cur)
		next.SetFinalizers(kept)
		return next
	})
	return err
}

// refResource is the resource of the kind an owner reference names, in its
// version or another of its group; nil if the server serves no such kind.
func (g *garbageCollector) refResource(r metav1.OwnerReference) *registry.Resource {
	group, version, ok := strings.Cut(r.APIVersion, "/")
	if !ok {
		group, version = "", r.APIVersion
	}
	for _, res := range g.s.reg.ForGroupVersion(group, version) {
		if res.Kind == r.Kind {
			return res
		}
	}
	for _, v := range g.s.reg.Groups()[group] {
		for _, res := range g.s.reg.ForGroupVersion(group, v) {
			if res.Kind == r.Kind {
				return res
			}
		}
	}
	return nil
}

// ownerMatches reports whether o is the owner r names for a dependent in
// namespace ns: the same kind and name, and in ns unless cluster-scoped
// (kube's collector looks the owner up by kind, namespace and name, then
// compares UIDs).
func ownerMatches(o *gcNode, kind *registry.Resource, r metav1.OwnerReference, ns string) bool {
	if o.obj.GetName() != r.Name {
		return false
	}
	if o.res != nil && (o.res.Group != kind.Group || o.res.Resource != kind.Resource) {
		return false
	}
	if kind.Namespaced {
		return o.obj.GetNamespace() == ns
	}
	return o.obj.GetNamespace() == ""
}

// resourceOf finds the resource of a stored object: by its Go type when
// one resource has it, else by its apiVersion and kind (custom resources are
// unstructured), else by looking for it under each resource of its type.
func (g *garbageCollector) resourceOf(obj storage.Object) *registry.Resource {
	t := reflect.TypeOf(obj)
	res, known := g.types[t]
	if !known {
		g.learnTypes()
		res = g.types[t]
	}
	if res != nil {
		return res
	}
	if tk, ok := obj.(interface {
		GetAPIVersion() string
		GetKind() string
	}); ok && tk.GetKind() != "" {
		group, version, _ := strings.Cut(tk.GetAPIVersion(), "/")
		if version == "" {
			group, version = "", tk.GetAPIVersion()
		}
		for _, r := range g.s.reg.ForGroupVersion(group, version) {
			if r.Kind == tk.GetKind() {
				return r
			}
		}
	}
	all, _ := g.s.reg.All()
	for _, r := range all {
		if reflect.TypeOf(r.New()) != t {
			continue
		}
		cur, err := g.s.store.Get(g.s.ctx, storageKey(r, obj.GetNamespace(), obj.GetName()), storage.ReadOptions{})
		if err == nil && cur.GetUID() == obj.GetUID() {
			return r
		}
	}
	return nil
}

// learnTypes maps the Go type of each resource's objects to the resource,
// or to nil when several resources share it.
func (g *garbageCollector) learnTypes() {
	g.types = map[reflect.Type]*registry.Resource{}
	all, _ := g.s.reg.All()
	for _, r := range all {
		t := reflect.TypeOf(r.New())
		if prev, ok := g.types[t]; ok && (prev == nil || prev.Group != r.Group || prev.Resource != r.Resource) {
			g.types[t] = nil
			continue
		}
		g.types[t] = r
	}
}
