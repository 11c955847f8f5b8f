package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

func mustWatch(t testing.TB, m Interface, prefix string, opts WatchOptions) Watcher {
	t.Helper()
	w, err := m.Watch(context.Background(), prefix, opts)
	if err != nil {
		t.Fatalf("watch %s %+v: %v", prefix, opts, err)
	}
	t.Cleanup(w.Stop)
	return w
}

type evSummary struct {
	typ  EventType
	name string
	rev  uint64
}

func summarize(e Event) evSummary {
	s := evSummary{typ: e.Type, rev: e.Revision}
	if e.Object != nil {
		s.name = e.Object.GetName()
	}
	return s
}

func expectEvents(t testing.TB, w Watcher, want ...evSummary) {
	t.Helper()
	for i, ws := range want {
		e := mustNext(t, w)
		if got := summarize(e); got != ws {
			t.Fatalf("event %d = %+v, want %+v", i, got, ws)
		}
		if e.Object != nil && rv(e.Object) != rvOf(e.Revision) {
			t.Fatalf("event %d: object rv %s, event revision %d", i, rv(e.Object), e.Revision)
		}
	}
}

// expectNoEvent checks that nothing is pending once a later marker event
// arrives: it writes to marker and expects exactly that event next.
func expectOnlyMarker(t testing.TB, m Interface, w Watcher, ns, name string) {
	t.Helper()
	c := mustCreate(t, m, ns, name, map[string]string{"marker": "true", "app": "web"})
	e := mustNext(t, w)
	if e.Object == nil || e.Object.GetName() != name || rv(e.Object) != rv(c) {
		t.Fatalf("got %+v, want the marker %s", summarize(e), name)
	}
}

func TestWatchReplayAndLive(t *testing.T) {
	m := newStore(t, MemoryConfig{})
	mustCreate(t, m, "ns", "a", nil)                   // 1
	mustCreate(t, m, "ns", "b", nil)                   // 2
	mustUpdate(t, m, "ns", "a", nil, "k", "v")         // 3
	mustCreate(t, m, "other", "x", nil)                // 4
	last := mustUpdate(t, m, "ns", "b", nil, "k", "v") // 5
	mustDelete(t, m, "ns", "b")                        // 6

	w := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{ResourceVersion: 1})
	expectEvents(t, w,
		evSummary{Added, "b", 2}, evSummary{Modified, "a", 3}, evSummary{Modified, "b", 5})
	del := mustNext(t, w)
	if del.Type != Deleted || del.Revision != 6 || rv(del.Object) != "6" || !sameStored(del.PrevObject, last) || rv(last) != "5" {
		t.Fatalf("delete event %+v", del)
	}
	mod := mustUpdate(t, m, "ns", "a", nil, "k", "w") // 7
	e := mustNext(t, w)
	if e.Type != Modified || !sameStored(e.Object, mod) || e.PrevObject == nil || rv(e.PrevObject) != "3" {
		t.Fatalf("live event %+v", e)
	}
	mustCreate(t, m, "other", "y", nil) // 8, not under the prefix
	expectOnlyMarker(t, m, w, "ns", "m")

	// From now: only later events.
	now := mustWatch(t, m, "/core/configmaps/", WatchOptions{})
	mustCreate(t, m, "other", "z", nil)
	expectEvents(t, now, evSummary{Added, "z", m.Revision()})

	// From a future revision: the events after it.
	future := mustWatch(t, m, "/core/configmaps/", WatchOptions{ResourceVersion: m.Revision() + 1})
	mustCreate(t, m, "other", "skipped", nil)
	mustCreate(t, m, "other", "seen", nil)
	expectEvents(t, future, evSummary{Added, "seen", m.Revision()})
}

func TestWatchSendInitialEvents(t *testing.T) {
	m := newStore(t, MemoryConfig{})
	mustCreate(t, m, "ns", "b", map[string]string{"app": "web"}) // 1
	mustCreate(t, m, "ns", "a", map[string]string{"app": "db"})  // 2
	mustCreate(t, m, "ns", "c", map[string]string{"app": "web"}) // 3
	mustDelete(t, m, "ns", "c")                                  // 4
	mustUpdate(t, m, "ns", "b", nil, "k", "v")                   // 5

	t.Run("latest", func(t *testing.T) {
		w := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{SendInitialEvents: true})
		expectEvents(t, w, evSummary{Added, "a", 2}, evSummary{Added, "b", 5})
		if e := mustNext(t, w); e.Type != Bookmark || !e.InitialEventsEnd || e.Revision != 5 || e.Object != nil {
			t.Fatalf("end bookmark = %+v", e)
		}
		mustCreate(t, m, "ns", "d", nil)
		expectEvents(t, w, evSummary{Added, "d", 6})
		mustDelete(t, m, "ns", "d")
	})
	t.Run("at a past revision", func(t *testing.T) {
		w := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{SendInitialEvents: true, ResourceVersion: 3})
		expectEvents(t, w, evSummary{Added, "a", 2}, evSummary{Added, "b", 1}, evSummary{Added, "c", 3})
		if e := mustNext(t, w); e.Type != Bookmark || !e.InitialEventsEnd || e.Revision != 3 {
			t.Fatalf("end bookmark = %+v", e)
		}
		expectEvents(t, w, evSummary{Deleted, "c", 4}, evSummary{Modified, "b", 5}, evSummary{Added, "d", 6}, evSummary{Deleted, "d", 7})
	})
	t.Run("with predicate", func(t *testing.T) {
		web := func(o Object) bool { return o.GetLabels()["app"] == "web" }
		w := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{SendInitialEvents: true, ResourceVersion: 3, Predicate: web})
		expectEvents(t, w, evSummary{Added, "b", 1}, evSummary{Added, "c", 3}, evSummary{Bookmark, "", 3},
			evSummary{Deleted, "c", 4}, evSummary{Modified, "b", 5})
		expectOnlyMarker(t, m, w, "ns", "zz-marker")
	})
	t.Run("empty", func(t *testing.T) {
		w := mustWatch(t, m, "/nothing/", WatchOptions{SendInitialEvents: true})
		if e := mustNext(t, w); e.Type != Bookmark || !e.InitialEventsEnd || e.Revision != m.Revision() {
			t.Fatalf("end bookmark = %+v", e)
		}
	})
}

func TestWatchPredicateTransitions(t *testing.T) {
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	m := newStore(t, MemoryConfig{})
	w := mustWatch(t, m, "/core/configmaps/", WatchOptions{Predicate: func(o Object) bool { return o.GetLabels()["app"] == "web" }})
	steps := []struct {
		name string
		do   func() Object
		want EventType // "" for no event
	}{
		{"create matching", func() Object { return mustCreate(t, m, "ns", "a", web) }, Added},
		{"create not matching", func() Object { return mustCreate(t, m, "ns", "b", db) }, ""},
		{"modify matching", func() Object { return mustUpdate(t, m, "ns", "a", web, "k", "1") }, Modified},
		{"modify not matching", func() Object { return mustUpdate(t, m, "ns", "b", db, "k", "1") }, ""},
		{"start matching", func() Object { return mustUpdate(t, m, "ns", "b", web, "k", "2") }, Added},
		{"stop matching", func() Object { return mustUpdate(t, m, "ns", "a", db, "k", "2") }, Deleted},
		{"delete not matching", func() Object { return mustDelete(t, m, "ns", "a") }, ""},
		{"delete matching", func() Object { return mustDelete(t, m, "ns", "b") }, Deleted},
	}
	for _, s := range steps {
		obj := s.do()
		if s.want == "" {
			continue
		}
		e := mustNext(t, w)
		if e.Type != s.want || e.Revision != m.Revision() || rv(e.Object) != rvOf(e.Revision) {
			t.Fatalf("%s: got %+v, want %s", s.name, summarize(e), s.want)
		}
		if s.name == "stop matching" {
			// The previous (matching) state, stamped with the event's revision.
			if e.Object == obj || e.Object.GetLabels()["app"] != "web" || e.PrevObject == nil ||
				e.PrevObject.GetLabels()["app"] != "web" || rv(e.PrevObject) == rv(e.Object) {
				t.Fatalf("%s: Object %v, PrevObject %v", s.name, e.Object, e.PrevObject)
			}
			if rv(obj) != rvOf(e.Revision) || obj.GetLabels()["app"] != "db" {
				t.Fatal("the stored object was modified")
			}
		} else if !sameStored(e.Object, obj) {
			t.Fatalf("%s: not the stored object", s.name)
		}
	}
	expectOnlyMarker(t, m, w, "ns", "marker")
}

func TestWatchBookmarks(t *testing.T) {
	m := newStore(t, MemoryConfig{})
	mustCreate(t, m, "ns", "a", nil)
	w := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{BookmarkInterval: time.Millisecond})
	// No bookmark repeats the revision the watch starts at (or one already
	// sent): writes elsewhere advance it.
	select {
	case e := <-w.ResultChan():
		t.Fatalf("%+v before any write", e)
	case <-time.After(20 * time.Millisecond): // many bookmark intervals: none may come
	}
	mustCreate(t, m, "other", "x", nil)
	e := mustNext(t, w)
	if e.Type != Bookmark || e.Revision != 2 || e.InitialEventsEnd || e.Object != nil {
		t.Fatalf("bookmark = %+v", e)
	}
	mustCreate(t, m, "other", "y", nil)
	if e := mustNext(t, w); e.Type != Bookmark || e.Revision != 3 {
		t.Fatalf("bookmark = %+v, want one at 3", e)
	}
	// Events are delivered before any bookmark that covers them.
	mustCreate(t, m, "ns", "b", nil)
	for {
		e := mustNext(t, w)
		if e.Type == Added {
			if e.Revision != 4 {
				t.Fatalf("added at %d", e.Revision)
			}
			break
		}
		if e.Revision >= 4 {
			t.Fatalf("bookmark at %d before the event at 4", e.Revision)
		}
	}
	// No bookmarks unless asked for.
	plain := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{})
	expectOnlyMarker(t, m, plain, "ns", "marker")
}

func TestSlowWatcher(t *testing.T) {
	m := newStore(t, MemoryConfig{WatchBuffer: 10})
	w := mustWatch(t, m, "/core/configmaps/", WatchOptions{})
	// Nobody reads: writers must not block.
	for i := range 200 {
		mustCreate(t, m, "ns", fmt.Sprintf("cm-%03d", i), nil)
	}
	evs := expectClosed(t, w)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	lastEv := evs[len(evs)-1]
	if lastEv.Type != Failed || !errors.Is(lastEv.Err, ErrTooSlow) {
		t.Fatalf("last event = %+v", lastEv)
	}
	for i, e := range evs[:len(evs)-1] {
		if e.Type != Added || e.Revision != uint64(i+1) {
			t.Fatalf("event %d = %+v", i, summarize(e))
		}
	}
	if len(evs)-1 > 10+maxChanBuffer {
		t.Fatalf("%d events delivered past a buffer of 10", len(evs)-1)
	}
	// A fast watcher on the same store is unaffected.
	fast := mustWatch(t, m, "/core/configmaps/", WatchOptions{})
	for i := range 100 {
		mustCreate(t, m, "fast", fmt.Sprint(i), nil)
		expectEvents(t, fast, evSummary{Added, fmt.Sprint(i), m.Revision()})
	}
}

func TestWatchCompacted(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	for i := range 10 {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	m.Compact(5)
	for _, opts := range []WatchOptions{{ResourceVersion: 4}, {ResourceVersion: 1}, {ResourceVersion: 4, SendInitialEvents: true}} {
		_, err := m.Watch(ctx, "/", opts)
		if se := wantCode(t, err, CodeExpired); se.ResourceVersion != opts.ResourceVersion {
			t.Fatalf("expired rv = %d", se.ResourceVersion)
		}
	}
	w := mustWatch(t, m, "/", WatchOptions{ResourceVersion: 5})
	expectEvents(t, w, evSummary{Added, "5", 6})
	wi := mustWatch(t, m, "/", WatchOptions{ResourceVersion: 5, SendInitialEvents: true})
	for i := range 5 {
		expectEvents(t, wi, evSummary{Added, fmt.Sprint(i), uint64(i + 1)})
	}
}

// TestWatcherBehindCompaction: a watcher whose unread events are compacted
// ends with Expired.
func TestWatcherBehindCompaction(t *testing.T) {
	m := newMemStore(t, MemoryConfig{MaxEvents: 5, WatchBuffer: 100000})
	for i := range 2 * maxChanBuffer {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	// Hold the watcher at its initial events (more than its channel holds),
	// so it cannot read the log.
	w := mustWatch(t, m, "/", WatchOptions{SendInitialEvents: true})
	for i := range 3 * chunkLen {
		mustUpdate(t, m, "ns", "0", nil, "i", fmt.Sprint(i))
	}
	evs := expectClosed(t, w)
	if len(evs) != 2*maxChanBuffer+2 || evs[2*maxChanBuffer].Type != Bookmark {
		t.Fatalf("%d events", len(evs))
	}
	lastEv := evs[len(evs)-1]
	if lastEv.Type != Failed || !errors.Is(lastEv.Err, ErrExpired) {
		t.Fatalf("last event = %+v", lastEv)
	}
}

func TestWatchEnds(t *testing.T) {
	if *backend != "etcd" {
		// On etcd, the member's goroutines come and go; TestMain checks
		// the store's are gone once the members are stopped.
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	}
	m := openStore(t, MemoryConfig{Now: newFakeClock().Now, CompactInterval: time.Millisecond})
	mustCreate(t, m, "ns", "a", nil)

	stopped := mustWatch(t, m, "/", WatchOptions{})
	stopped.Stop()
	stopped.Stop()
	if evs := expectClosed(t, stopped); len(evs) != 0 {
		t.Fatalf("events after Stop: %v", evs)
	}

	ctx, cancel := context.WithCancel(context.Background())
	byCtx, err := m.Watch(ctx, "/", WatchOptions{BookmarkInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	expectClosed(t, byCtx)

	var open []Watcher
	for i := range 50 {
		opts := WatchOptions{ResourceVersion: uint64(i % 2), SendInitialEvents: i%3 == 0, BookmarkInterval: time.Duration(i%2) * time.Hour}
		w, err := m.Watch(context.Background(), "/", opts)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, w)
	}
	waiting := make(chan error)
	go func() {
		_, err := m.Get(context.Background(), "/x", ReadOptions{Match: NotOlderThan, ResourceVersion: 100})
		waiting <- err
	}()
	m.Close()
	for _, w := range open {
		for range w.ResultChan() {
		}
		w.Stop()
	}
	if err := <-waiting; err != ErrClosed {
		t.Fatalf("waiting read: %v", err)
	}
}

// TestWatchExactlyOnce races watch starts against concurrent writers: every
// watcher must see exactly the events after its starting revision under its
// prefix, in order, with no gap and no duplicate.
func TestWatchExactlyOnce(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{WatchBuffer: 1 << 20})
	type write struct {
		rev  uint64
		key  string
		typ  EventType
		name string
	}
	var mu sync.Mutex
	var truth []write
	record := func(obj Object, typ EventType, key string) {
		r, _ := strconv.ParseUint(rv(obj), 10, 64)
		mu.Lock()
		truth = append(truth, write{r, key, typ, obj.GetName()})
		mu.Unlock()
	}
	const writers, ops = 4, 400
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range ops {
				ns := []string{"x", "y"}[r.IntN(2)]
				name := fmt.Sprint(r.IntN(20))
				k := key(ns, name)
				switch r.IntN(3) {
				case 0:
					if o, err := m.Create(ctx, k, cm(ns, name, nil)); err == nil {
						record(o, Added, k)
					}
				case 1:
					o, err := m.GuaranteedUpdate(ctx, k, false, nil, func(cur Object) (Object, error) {
						c := cur.(*corev1.ConfigMap).DeepCopy()
						c.Data = map[string]string{"w": fmt.Sprint(w)}
						return c, nil
					})
					if err == nil {
						record(o, Modified, k)
					}
				case 2:
					if o, err := m.Delete(ctx, k, nil, nil); err == nil {
						record(o, Deleted, k)
					}
				}
			}
		})
	}
	type started struct {
		from, upTo uint64 // the watch starts after a revision in [from, upTo]
		now        bool
		events     chan []Event
	}
	var watches []started
	var wwg sync.WaitGroup
	for i := range 40 {
		var opts WatchOptions
		before := m.Revision()
		if i%2 == 0 && before > uint64(i) {
			opts.ResourceVersion = before - uint64(i)
			before = opts.ResourceVersion
		}
		w, err := m.Watch(ctx, "/core/configmaps/x/", opts)
		if err != nil {
			t.Fatal(err)
		}
		s := started{from: before, upTo: before, events: make(chan []Event, 1)}
		if opts.ResourceVersion == 0 {
			s.upTo, s.now = m.Revision(), true
		}
		watches = append(watches, s)
		wwg.Go(func() {
			defer w.Stop()
			var evs []Event
			for e := range w.ResultChan() {
				evs = append(evs, e)
				if e.Type == Failed || (e.Object != nil && e.Object.GetName() == "final") {
					break
				}
			}
			s.events <- evs
		})
	}
	wg.Wait()
	mustCreate(t, m, "x", "final", nil)
	wwg.Wait()
	slices.SortFunc(truth, func(a, b write) int { return int(a.rev) - int(b.rev) })
	for i, w := range truth {
		if w.rev != uint64(i+1) {
			t.Fatalf("revision %d missing from the recorded writes", i+1)
		}
	}
	truth = append(truth, write{m.Revision(), key("x", "final"), Added, "final"})
	for i, s := range watches {
		evs := <-s.events
		if len(evs) == 0 {
			t.Fatalf("watch %d: no events", i)
		}
		var want []write
		if !s.now {
			for _, w := range truth {
				if w.rev > s.from && strings.HasPrefix(w.key, "/core/configmaps/x/") {
					want = append(want, w)
				}
			}
		} else {
			// Started "now": after some revision in [from, upTo].
			r0 := evs[0].Revision
			if r0 <= s.from {
				t.Fatalf("watch %d started after %d got an event at %d", i, s.from, r0)
			}
			for _, w := range truth {
				if !strings.HasPrefix(w.key, "/core/configmaps/x/") {
					continue
				}
				if w.rev > s.upTo && w.rev < r0 {
					t.Fatalf("watch %d started by %d missed the event at %d", i, s.upTo, w.rev)
				}
				if w.rev >= r0 {
					want = append(want, w)
				}
			}
		}
		if len(evs) != len(want) {
			t.Fatalf("watch %d from [%d,%d]: %d events, want %d", i, s.from, s.upTo, len(evs), len(want))
		}
		for j, e := range evs {
			if e.Type != want[j].typ || e.Revision != want[j].rev || e.Object.GetName() != want[j].name || rv(e.Object) != rvOf(e.Revision) {
				t.Fatalf("watch %d event %d = %+v, want %+v", i, j, summarize(e), want[j])
			}
		}
	}
}

// TestListThenWatchConverges runs the informer pattern (list, then watch from
// the list's revision; or one watch with initial events) against concurrent
// writers: replaying the events on the list must give the final state.
func TestListThenWatchConverges(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{WatchBuffer: 1 << 20})
	for i := range 50 {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprint(r.IntN(80))
				k := key("ns", name)
				switch r.IntN(3) {
				case 0:
					m.Create(ctx, k, cm("ns", name, nil))
				case 1:
					m.GuaranteedUpdate(ctx, k, false, nil, func(cur Object) (Object, error) {
						c := cur.(*corev1.ConfigMap).DeepCopy()
						c.Data = map[string]string{"i": fmt.Sprint(i)}
						return c, nil
					})
				case 2:
					m.Delete(ctx, k, nil, nil)
				}
			}
		})
	}
	type cache struct {
		state  map[string]string // name → resourceVersion
		events <-chan Event
		w      Watcher
	}
	var caches []*cache
	for i := range 10 {
		c := &cache{state: map[string]string{}}
		if i%2 == 0 {
			items, rev := listAll(t, m, "/core/configmaps/ns/", 7, nil)
			for _, o := range items {
				c.state[o.GetName()] = rv(o)
			}
			c.w = mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{ResourceVersion: rev})
		} else {
			c.w = mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{SendInitialEvents: true})
		}
		caches = append(caches, c)
	}
	close(stop)
	wg.Wait()
	final := mustCreate(t, m, "ns", "final", nil)
	want := map[string]string{}
	res, _ := m.List(ctx, "/core/configmaps/ns/", ListOptions{})
	for _, o := range res.Items {
		want[o.GetName()] = rv(o)
	}
	for i, c := range caches {
		for {
			e := mustNext(t, c.w)
			switch e.Type {
			case Added, Modified:
				c.state[e.Object.GetName()] = rv(e.Object)
			case Deleted:
				delete(c.state, e.Object.GetName())
			case Failed:
				t.Fatalf("cache %d: %v", i, e.Err)
			}
			if e.Object != nil && rv(e.Object) == rv(final) {
				break
			}
		}
		if len(c.state) != len(want) {
			t.Fatalf("cache %d has %d objects, want %d", i, len(c.state), len(want))
		}
		for k, v := range want {
			if c.state[k] != v {
				t.Fatalf("cache %d: %s at %s, want %s", i, k, c.state[k], v)
			}
		}
	}
}

// BookmarkAt asks for one bookmark at a time, busy or idle, carrying the
// revision read so far; one in the past asks for none.
func TestWatchBookmarkAt(t *testing.T) {
	m := newStore(t, MemoryConfig{})
	mustCreate(t, m, "ns", "a", nil)
	w := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{BookmarkAt: time.Now().Add(50 * time.Millisecond)})
	mustCreate(t, m, "other", "x", nil)
	e := mustNext(t, w)
	if e.Type != Bookmark || e.InitialEventsEnd || e.Object != nil || e.Revision < 1 {
		t.Fatalf("bookmark = %+v", e)
	}
	mustCreate(t, m, "ns", "b", nil)
	if e := mustNext(t, w); e.Type != Added || e.Revision != 3 {
		t.Fatalf("after the bookmark: %+v, want Added b at 3 (one bookmark only)", e)
	}

	past := mustWatch(t, m, "/core/configmaps/ns/", WatchOptions{BookmarkAt: time.Now().Add(-time.Second)})
	mustCreate(t, m, "ns", "c", nil)
	if e := mustNext(t, past); e.Type != Added || e.Revision != 4 {
		t.Fatalf("with BookmarkAt in the past: %+v, want Added c", e)
	}
}
