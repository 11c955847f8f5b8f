package informer_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/reflector"
)

type cmRecorder = recorder[corev1.ConfigMap, *corev1.ConfigMap]

func newCMRecorder() *cmRecorder { return newRecorder[corev1.ConfigMap]() }

// cmInformer is an informer of the ConfigMaps of namespace "inf".
func cmInformer(e *env, cfg informer.Config[corev1.ConfigMap]) informer.Informer[corev1.ConfigMap] {
	if cfg.Reflector.Logger == nil {
		cfg.Reflector.Logger = quietLogger()
	}
	return informer.New[corev1.ConfigMap](e.cms, cfg)
}

// TestListThenWatch: the initial list is delivered as OnAdd with
// isInitialList, then live changes in order, with the old state of
// updates and the final state of deletes; in JSON and protobuf, with paged
// and streaming lists.
func TestListThenWatch(t *testing.T) {
	for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streaming=%v", ct, streaming), func(t *testing.T) {
				e := newEnvWith(t, apiserver.Config{}, ct)
				a := e.create(t, "a")
				e.create(t, "b")
				e.create(t, "c")
				inf := cmInformer(e, informer.Config[corev1.ConfigMap]{Reflector: reflector.Config[corev1.ConfigMap]{PageSize: 2, UseStreamingList: streaming}})
				rec := newCMRecorder()
				reg, err := inf.AddEventHandler(rec)
				if err != nil {
					t.Fatal(err)
				}
				if reg.HasSynced() || inf.HasSynced() {
					t.Fatal("synced before Run")
				}
				run(t, inf)
				waitSynced(t, reg)
				if !inf.HasSynced() || inf.LastSyncResourceVersion() == "" {
					t.Fatalf("informer synced=%v rv=%q after its handler synced", inf.HasSynced(), inf.LastSyncResourceVersion())
				}
				initial := rec.get()
				if got, want := join(sorted(initial)), "add:a:initial add:b:initial add:c:initial"; got != want {
					t.Fatalf("initial events %q, want %q", got, want)
				}

				d := e.create(t, "d")
				a2 := e.update(t, "a", "1")
				e.delete(t, "b")
				evs := rec.waitCount(t, 6)[3:]
				if got, want := join(strs(evs)), "add:d update:a delete:b"; got != want {
					t.Fatalf("live events %q, want %q", got, want)
				}
				if evs[0].rv != d.ResourceVersion || evs[1].oldRV != a.ResourceVersion || evs[1].rv != a2.ResourceVersion {
					t.Errorf("resourceVersions: %+v; want add of %s, update %s -> %s", evs, d.ResourceVersion, a.ResourceVersion, a2.ResourceVersion)
				}
				if evs[2].rv == "" || evs[2].flag {
					t.Errorf("delete event %+v: want the final state, not a tombstone", evs[2])
				}
				if got, _ := inf.Lister().Namespace("inf").Get("a"); got == nil || got.Data["v"] != "1" {
					t.Errorf("lister has %v, want the updated a", got)
				}
				if n := inf.Indexer().Len(); n != 3 {
					t.Errorf("cache holds %d objects, want 3", n)
				}
			})
		}
	}
}

// TestRelistDeliversTheDifference: changes made while the watch is down
// and compacted away force a relist; handlers get the difference: a
// tombstone for the object that vanished, with its last known state, an
// update for the changed object, an add for the new one, and nothing for
// the unchanged one.
func TestRelistDeliversTheDifference(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	e.create(t, "b")
	c := e.create(t, "c")
	lw := &hookedLW[corev1.ConfigMap]{ListerWatcher: e.cms}
	var b2 *corev1.ConfigMap
	lw.before = func(call int) {
		if call != 1 {
			return
		}
		b2 = e.update(t, "b", "changed")
		e.delete(t, "c")
		e.create(t, "d")
		e.compact()
	}
	var watchErrs []error
	var mu sync.Mutex
	cfg := informer.Config[corev1.ConfigMap]{}
	fastBackoff(&cfg.Reflector)
	cfg.Reflector.WatchErrorHandler = func(err error) {
		mu.Lock()
		watchErrs = append(watchErrs, err)
		mu.Unlock()
	}
	inf := informer.New[corev1.ConfigMap](lw, cfg)
	rec := newCMRecorder()
	if _, err := inf.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	// The relist's changes: deletions first, then the list in order
	// (a unchanged, b updated, d added).
	evs := rec.waitCount(t, 6)
	if got, want := join(sorted(evs[:3])), "add:a:initial add:b:initial add:c:initial"; got != want {
		t.Fatalf("initial events %q, want %q", got, want)
	}
	if got, want := join(strs(evs[3:])), "delete:c:unknown update:b add:d"; got != want {
		t.Fatalf("relist events %q, want %q", got, want)
	}
	if evs[3].rv != c.ResourceVersion {
		t.Errorf("tombstone of c holds resourceVersion %s, want its last known %s", evs[3].rv, c.ResourceVersion)
	}
	if evs[4].rv != b2.ResourceVersion {
		t.Errorf("update of b to %s, want %s", evs[4].rv, b2.ResourceVersion)
	}
	// Any event for a would have come before d's add.
	if got := rec.get(); len(got) != 6 {
		t.Errorf("events %v, want 6", strs(got))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(watchErrs) == 0 {
		t.Error("the 410 that forced the relist was not reported")
	}
}

// TestEveryEventInOrder: a burst of updates to one object reaches every
// handler one by one, each update's old object being the previous one's
// new object: nothing is merged or reordered.
func TestEveryEventInOrder(t *testing.T) {
	e := newEnv(t)
	e.create(t, "x")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	recs := []*cmRecorder{newCMRecorder(), newCMRecorder(), newCMRecorder()}
	var regs []informer.Syncer
	for _, r := range recs {
		reg, err := inf.AddEventHandler(r)
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, reg)
	}
	run(t, inf)
	waitSynced(t, regs...)
	const n = 100
	var rvs []string
	for i := range n {
		rvs = append(rvs, e.update(t, "x", strconv.Itoa(i)).ResourceVersion)
	}
	for i, r := range recs {
		evs := r.waitCount(t, n+1)[1:]
		prev := evs[0].oldRV
		for j, ev := range evs {
			if ev.kind != "update" || ev.oldRV != prev || ev.rv != rvs[j] {
				t.Fatalf("handler %d, event %d: %+v; want update %s -> %s", i, j, ev, prev, rvs[j])
			}
			prev = ev.rv
		}
	}
}

// TestSlowHandlerDoesNotBlockOthers: a handler stuck in its first call
// holds up neither the other handlers nor the cache; once released it gets
// every event, in the same order as the others.
func TestSlowHandlerDoesNotBlockOthers(t *testing.T) {
	e := newEnv(t)
	e.create(t, "first")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	gate := make(chan struct{})
	slow := newCMRecorder()
	var once sync.Once
	slow.block = func(event) { once.Do(func() { <-gate }) }
	fast := newCMRecorder()
	slowReg, err := inf.AddEventHandler(slow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(fast); err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	const n = 30
	for i := range n {
		e.create(t, fmt.Sprintf("cm-%02d", i))
	}
	want := fast.waitCount(t, n+1)
	if inf.Indexer().Len() != n+1 {
		t.Errorf("cache holds %d objects, want %d", inf.Indexer().Len(), n+1)
	}
	if got := slow.get(); len(got) != 0 {
		t.Fatalf("the blocked handler recorded %v", got)
	}
	if slowReg.HasSynced() {
		t.Error("the blocked handler's registration has synced")
	}
	close(gate)
	got := slow.waitCount(t, n+1)
	if !slices.Equal(strs(got), strs(want)) {
		t.Errorf("slow handler got %v, fast %v", strs(got), strs(want))
	}
	waitSynced(t, slowReg)
}

// TestLateHandlerGetsCurrentContents: a handler added to a synced informer
// first gets the cached objects as initial adds, then live events; its
// registration syncs once it has handled them.
func TestLateHandlerGetsCurrentContents(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	e.create(t, "b")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	run(t, inf)
	waitSynced(t, inf)
	e.create(t, "c")
	early := newCMRecorder()
	// A handler added after sync: a, b (and c, if the watch got it
	// already) as initial adds.
	gate := make(chan struct{})
	late := newCMRecorder()
	late.block = func(event) { <-gate }
	reg, err := inf.AddEventHandler(late)
	if err != nil {
		t.Fatal(err)
	}
	if reg.HasSynced() {
		t.Fatal("registration synced before its handler got the contents")
	}
	close(gate)
	waitSynced(t, reg)
	if _, err := inf.AddEventHandler(early); err != nil {
		t.Fatal(err)
	}
	e.create(t, "d")
	evs := late.waitFor(t, "d", func(ev []event) bool { return slices.ContainsFunc(ev, func(e event) bool { return e.name == "d" }) })
	var initial, live []string
	for _, ev := range evs {
		if ev.kind == "add" && ev.flag {
			initial = append(initial, ev.name)
		} else {
			live = append(live, ev.String())
		}
	}
	slices.Sort(initial)
	if len(initial) < 2 || initial[0] != "a" || initial[1] != "b" {
		t.Errorf("initial adds %v, want a, b (and perhaps c)", initial)
	}
	wantLive := "add:c add:d"
	if len(initial) == 3 {
		wantLive = "add:d"
	}
	if join(live) != wantLive {
		t.Errorf("live events %q, want %q", join(live), wantLive)
	}
}

// TestRegistrationHasSynced: a registration syncs when its handler has
// handled the initial list, which may be long after the informer synced;
// a handler added before an empty initial list syncs with the informer.
func TestRegistrationHasSynced(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	e.create(t, "b")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	gate := make(chan struct{})
	held := newCMRecorder()
	held.block = func(event) { <-gate }
	heldReg, err := inf.AddEventHandler(held)
	if err != nil {
		t.Fatal(err)
	}
	quick := newCMRecorder()
	quickReg, err := inf.AddEventHandler(quick)
	if err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	waitSynced(t, inf, quickReg)
	if heldReg.HasSynced() {
		t.Fatal("registration synced while its handler is held in its first call")
	}
	close(gate)
	waitSynced(t, heldReg)
	if n := len(held.get()); n != 2 {
		t.Errorf("registration synced after %d of 2 initial adds", n)
	}

	// An empty collection: the registration syncs with the informer.
	empty := informer.New[corev1.ConfigMap](e.cms.Namespace("default"), informer.Config[corev1.ConfigMap]{})
	emptyReg, err := empty.AddEventHandler(newCMRecorder())
	if err != nil {
		t.Fatal(err)
	}
	run(t, empty)
	waitSynced(t, emptyReg, empty)
}

// TestRemoveEventHandler: a removed handler gets nothing more, the others
// carry on, and a handler can remove itself from its own call.
func TestRemoveEventHandler(t *testing.T) {
	e := newEnv(t)
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	removed, kept := newCMRecorder(), newCMRecorder()
	reg, err := inf.AddEventHandler(removed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(kept); err != nil {
		t.Fatal(err)
	}
	// A handler that removes itself on its first event.
	var selfReg *informer.Registration
	regSet := make(chan struct{})
	self := newCMRecorder()
	self.block = func(event) {
		<-regSet
		if err := inf.RemoveEventHandler(selfReg); err != nil {
			t.Errorf("removing itself: %v", err)
		}
	}
	if selfReg, err = inf.AddEventHandler(self); err != nil {
		t.Fatal(err)
	}
	close(regSet)
	run(t, inf)
	waitSynced(t, reg)

	e.create(t, "before")
	removed.waitCount(t, 1)
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	<-reg.Done()
	e.create(t, "after")
	kept.waitCount(t, 2)
	if got := join(strs(removed.get())); got != "add:before" {
		t.Errorf("removed handler got %q, want only add:before", got)
	}
	<-selfReg.Done()
	if got := join(strs(self.get())); got != "add:before" {
		t.Errorf("self-removing handler got %q, want only add:before", got)
	}
	if err := inf.RemoveEventHandler(reg); !errors.Is(err, informer.ErrUnknownRegistration) {
		t.Errorf("removing twice: %v, want ErrUnknownRegistration", err)
	}
	other := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	if err := other.RemoveEventHandler(selfReg); !errors.Is(err, informer.ErrUnknownRegistration) {
		t.Errorf("removing another informer's registration: %v, want ErrUnknownRegistration", err)
	}
}

// TestRemoveBeforeRun: a handler removed before Run is done at once and
// never called.
func TestRemoveBeforeRun(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	rec := newCMRecorder()
	reg, err := inf.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	<-reg.Done()
	other := newCMRecorder()
	otherReg, err := inf.AddEventHandler(other)
	if err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	waitSynced(t, otherReg)
	if got := rec.get(); len(got) != 0 {
		t.Errorf("removed handler got %v", got)
	}
}

// TestFilteringHandlerTransitions: an object entering the filtered set is
// an add, leaving it a delete, and changes outside it are not seen.
func TestFilteringHandlerTransitions(t *testing.T) {
	e := newEnv(t)
	e.create(t, "x")
	e.create(t, "in", "watch", "yes")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	rec := newCMRecorder()
	reg, err := inf.AddEventHandler(informer.FilteringHandler[corev1.ConfigMap]{
		Filter:  func(cm *corev1.ConfigMap) bool { return cm.Labels["watch"] == "yes" },
		Handler: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	waitSynced(t, reg)
	e.update(t, "x", "1")                 // outside: nothing
	e.update(t, "x", "2", "watch", "yes") // enters: add
	e.update(t, "x", "3")                 // inside: update
	e.update(t, "x", "4", "watch", "no")  // leaves: delete
	e.delete(t, "x")                      // outside: nothing
	e.delete(t, "in")                     // inside: delete
	evs := rec.waitFor(t, "the delete of in", func(ev []event) bool {
		return slices.ContainsFunc(ev, func(e event) bool { return e.String() == "delete:in" })
	})
	if got, want := join(strs(evs)), "add:in:initial add:x update:x delete:x delete:in"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestResync: handlers that implement OnResync get every cached object
// once per period; others get nothing of it.
func TestResync(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	e.create(t, "b")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{ResyncPeriod: 20 * time.Millisecond})
	withResync := resyncRecorder[corev1.ConfigMap, *corev1.ConfigMap]{newCMRecorder()}
	plain := newCMRecorder()
	funcsRec := newCMRecorder()
	for _, h := range []informer.ResourceEventHandler[corev1.ConfigMap]{withResync, plain, informer.HandlerFuncs[corev1.ConfigMap]{
		AddFunc: funcsRec.OnAdd,
	}} {
		if _, err := inf.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
	}
	run(t, inf)
	evs := withResync.waitFor(t, "two rounds of resyncs", func(ev []event) bool {
		n := 0
		for _, e := range ev {
			if e.kind == "resync" {
				n++
			}
		}
		return n >= 4
	})
	counts := map[string]int{}
	for _, ev := range evs[2:] {
		if ev.kind != "resync" {
			t.Fatalf("event %v after the initial adds, want only resyncs", ev)
		}
		counts[ev.name]++
	}
	if counts["a"] < 1 || counts["b"] < 1 {
		t.Errorf("resyncs %v, want both objects", counts)
	}
	e.create(t, "c")
	for _, r := range []*cmRecorder{plain, funcsRec} {
		got := r.waitCount(t, 3)
		if got := join(strs(got)); got != "add:a:initial add:b:initial add:c" && got != "add:b:initial add:a:initial add:c" {
			t.Errorf("handler without OnResync got %q", got)
		}
	}
}

// TestTransform: the transform applies to listed and watched objects
// alike, before caching.
func TestTransform(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{Reflector: reflector.Config[corev1.ConfigMap]{
		Transform: func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			cm.ManagedFields = nil
			cm.Annotations = map[string]string{"seen": "yes"}
			return cm, nil
		},
	}})
	rec := newCMRecorder()
	reg, err := inf.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	waitSynced(t, reg)
	e.create(t, "b")
	rec.waitCount(t, 2)
	for _, cm := range inf.Indexer().List() {
		if cm.Annotations["seen"] != "yes" || cm.ManagedFields != nil {
			t.Errorf("%s not transformed: %v", cm.Name, cm.ObjectMeta)
		}
	}
}

// TestLifecycle: Run runs once, returns ctx's error and stops every
// goroutine (goleak checks); a stopped informer takes no handlers.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	inf := cmInformer(e, informer.Config[corev1.ConfigMap]{})
	rec := newCMRecorder()
	reg, err := inf.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	waitSynced(t, reg)
	if err := inf.Run(ctx); !errors.Is(err, informer.ErrStarted) {
		t.Errorf("second Run: %v, want ErrStarted", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
	<-reg.Done()
	if _, err := inf.AddEventHandler(newCMRecorder()); !errors.Is(err, informer.ErrStopped) {
		t.Errorf("AddEventHandler after stop: %v, want ErrStopped", err)
	}
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Errorf("RemoveEventHandler after stop: %v", err)
	}
	if _, err := inf.AddEventHandler(nil); err == nil {
		t.Error("AddEventHandler(nil) succeeded")
	}
}

// TestIndexersAndLister: indexes from Config and AddIndexers, and the
// lister by namespace and label.
func TestIndexersAndLister(t *testing.T) {
	e := newEnv(t)
	e.namespace(t, "other")
	other := e.cms.Namespace("other")
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "inf", Labels: map[string]string{"app": "web"}}, Data: map[string]string{"tier": "front"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: "inf", Labels: map[string]string{"app": "db"}}, Data: map[string]string{"tier": "back"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "other", Labels: map[string]string{"app": "web"}}, Data: map[string]string{"tier": "front"}},
	} {
		if _, err := other.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	inf := informer.New[corev1.ConfigMap](e.cms.Namespace(""), informer.Config[corev1.ConfigMap]{
		Resource: metav1.GroupResource{Resource: "configmaps"},
	})
	if err := inf.AddIndexers(cache.Indexers[*corev1.ConfigMap]{
		"byTier": func(cm *corev1.ConfigMap) ([]string, error) { return []string{cm.Data["tier"]}, nil },
	}); err != nil {
		t.Fatal(err)
	}
	run(t, inf)
	waitSynced(t, inf)
	if err := inf.AddIndexers(cache.Indexers[*corev1.ConfigMap]{
		"byApp": func(cm *corev1.ConfigMap) ([]string, error) { return []string{cm.Labels["app"]}, nil },
	}); err != nil {
		t.Fatal(err)
	}
	names := func(cms []*corev1.ConfigMap, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, cm := range cms {
			s = append(s, cm.Namespace+"/"+cm.Name)
		}
		slices.Sort(s)
		return join(s)
	}
	l := inf.Lister()
	if got := names(l.List(mustLabels("app=web"))); got != "inf/web-1 other/web-2" {
		t.Errorf("List(app=web) = %s", got)
	}
	if got := names(l.Namespace("inf").List(mustLabels(""))); got != "inf/db-1 inf/web-1" {
		t.Errorf("Namespace(inf).List() = %s", got)
	}
	if got := names(l.Namespace("other").List(mustLabels("app=db"))); got != "" {
		t.Errorf("Namespace(other).List(app=db) = %s", got)
	}
	if got := names(l.ByIndex("byTier", "front")); got != "inf/web-1 other/web-2" {
		t.Errorf("ByIndex(byTier, front) = %s", got)
	}
	if got := names(inf.Indexer().ByIndex("byApp", "db")); got != "inf/db-1" {
		t.Errorf("ByIndex(byApp, db) = %s", got)
	}
	// The cache is the informer's to write: Indexer is a read-only view.
	if _, writable := inf.Indexer().(cache.Store[*corev1.ConfigMap]); writable {
		t.Error("Indexer() can be written to")
	}
	if _, err := l.Namespace("inf").Get("nope"); err == nil || err.Error() != `configmaps "nope" not found` {
		t.Errorf("Get(nope): %v", err)
	}
}
