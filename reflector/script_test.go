package reflector_test

// Scripted servers: a ListerWatcher that answers each list and watch call as
// the test says, with no apiserver, to walk the reflector through every edge
// of its state machine.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/reflector"
)

type cmEvent = client.Event[corev1.ConfigMap]

// script is a ListerWatcher whose answers are the test's functions; it
// records the options of every call. n counts calls of each kind from 1.
type script struct {
	mu      sync.Mutex
	cond    *sync.Cond
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	stopped int // scripted watches stopped by the reflector
	// abandoned counts lists the reflector stopped taking items from
	// (the pager's context was cancelled while it handed one over).
	abandoned int
	list      func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error)
	watch     func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error)
}

func newScript() *script {
	s := &script{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// record appends a call's options to calls and returns its number.
func (s *script) record(calls *[]metav1.ListOptions, opts metav1.ListOptions) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	*calls = append(*calls, opts)
	s.cond.Broadcast()
	return len(*calls)
}

func (s *script) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*corev1.ConfigMap) error) (metav1.ListMeta, error) {
	n := s.record(&s.lists, opts)
	if s.list == nil {
		// Not expected: the call is recorded (the test checks the calls)
		// and hangs until the reflector stops.
		<-ctx.Done()
		return metav1.ListMeta{}, ctx.Err()
	}
	items, meta, err := s.list(n, opts)
	if err != nil {
		return meta, err
	}
	for _, it := range items {
		if err := fn(it); err != nil {
			s.mu.Lock()
			s.abandoned++
			s.cond.Broadcast()
			s.mu.Unlock()
			return meta, err
		}
	}
	return meta, nil
}

// Watch answers with the scripted events; the watch then ends (the channel
// closes) if end, or stays open until the reflector stops it.
func (s *script) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[corev1.ConfigMap], error) {
	n := s.record(&s.watches, opts)
	if s.watch == nil {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	evs, end, err := s.watch(n, opts)
	if err != nil {
		return nil, err
	}
	ch := make(chan cmEvent)
	stop := make(chan struct{})
	go func() {
		defer close(ch)
		for _, ev := range evs {
			select {
			case ch <- ev:
			case <-stop:
				return
			}
		}
		if !end {
			<-stop
		}
	}()
	return client.NewWatcher(ch, func() {
		close(stop)
		s.mu.Lock()
		s.stopped++
		s.cond.Broadcast()
		s.mu.Unlock()
	}), nil
}

// waitFor blocks until cond holds of the script or the deadline passes.
func (s *script) waitFor(t *testing.T, what string, cond func(s *script) bool) {
	t.Helper()
	waitOn(t, s.cond, func() bool { return cond(s) }, func() string {
		return fmt.Sprintf("timed out waiting for %s: lists %+v, watches %+v", what, s.lists, s.watches)
	})
}

// eventually polls cond until it holds, failing the test after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond) // polling a condition, with a deadline
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// waitSynced waits for r's first list, failing the test after a deadline.
func waitSynced(t *testing.T, r *reflector.Reflector[corev1.ConfigMap]) {
	t.Helper()
	select {
	case <-r.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for the first list")
	}
}

// calls returns copies of the recorded options.
func (s *script) calls() (lists, watches []metav1.ListOptions) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lists), slices.Clone(s.watches)
}

// waits records the waits Run asks for between retries, without waiting.
// A reflector that retries more than maxRetries times is looping on an error
// no script means to last: its Run is ended, and the test waiting for the
// script to move on times out.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

const maxRetries = 50

var errTooManyRetries = errors.New("reflector_test: too many retries")

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.d) == maxRetries {
		return errTooManyRetries
	}
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.d)
}

// start runs a reflector over the script into a new store, recording its
// waits; the test's cleanup stops it.
func start(t *testing.T, s *script, cfg reflector.Config[corev1.ConfigMap]) (*reflector.Reflector[corev1.ConfigMap], *mapStore, *waits) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	store := newMapStore()
	r := reflector.New[corev1.ConfigMap](s, store, cfg)
	w := &waits{}
	reflector.SetSleep(r, w.sleep)
	run(t, r)
	return r, store, w
}

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "s", ResourceVersion: rv}}
}

func added(name, rv string) cmEvent { return cmEvent{Type: client.EventAdded, Object: cm(name, rv)} }

func modified(name, rv string) cmEvent {
	return cmEvent{Type: client.EventModified, Object: cm(name, rv)}
}

func bookmark(rv string) cmEvent {
	return cmEvent{Type: client.EventBookmark, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}}
}

// initialEventsEnd is the bookmark that ends a streaming list's initial events.
func initialEventsEnd(rv string) cmEvent {
	ev := bookmark(rv)
	ev.Object.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	return ev
}

func statusErr(code int32, reason metav1.StatusReason, retryAfter int32) error {
	st := &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: string(reason)}
	if retryAfter > 0 {
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: retryAfter}
	}
	return client.NewStatusError(st)
}

var (
	errExpired = statusErr(http.StatusGone, metav1.StatusReasonExpired, 0)
	errGone    = statusErr(http.StatusGone, metav1.StatusReasonGone, 0)
)

func errorEvent(err error) cmEvent { return cmEvent{Type: client.EventError, Err: err} }

func page(rv string, items ...*corev1.ConfigMap) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	return items, metav1.ListMeta{ResourceVersion: rv}, nil
}

func (s *mapStore) snapshot() (map[string]string, int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.items), s.replaces, slices.Clone(s.replaced)
}

// TestScriptListFallbackToLatest: the first list asks for resourceVersion
// "0"; a server that cannot serve it (410, or 504 too large) is asked for
// the latest ("") at once, without a backoff.
func TestScriptListFallbackToLatest(t *testing.T) {
	tooLarge := client.NewStatusError(&metav1.Status{Code: http.StatusGatewayTimeout, Reason: metav1.StatusReasonTimeout,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge}}}})
	for name, refusal := range map[string]error{"expired": errExpired, "gone": errGone, "too large": tooLarge} {
		t.Run(name, func(t *testing.T) {
			s := newScript()
			s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
				if opts.ResourceVersion == "0" {
					return nil, metav1.ListMeta{}, refusal
				}
				return page("7", cm("a", "7"))
			}
			s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) { return nil, false, nil }
			_, store, w := start(t, s, reflector.Config[corev1.ConfigMap]{})
			s.waitFor(t, "the watch", func(s *script) bool { return len(s.watches) == 1 })
			lists, watches := s.calls()
			if len(lists) != 2 || lists[0].ResourceVersion != "0" || lists[1].ResourceVersion != "" || lists[1].ResourceVersionMatch != "" {
				t.Errorf("lists %+v, want rv \"0\" then \"\"", lists)
			}
			if watches[0].ResourceVersion != "7" {
				t.Errorf("watch from %q, want the list's 7", watches[0].ResourceVersion)
			}
			if items, _, _ := store.snapshot(); !maps.Equal(items, map[string]string{"a": "7"}) {
				t.Errorf("store %v", items)
			}
			if d := w.get(); len(d) != 0 {
				t.Errorf("waited %v before the fallback, want no backoff", d)
			}
		})
	}
}

// TestScriptGoneRelists: a 410 on the watch, as an event or as the answer to
// the watch request, relists the latest state at once and watches from the
// new list.
func TestScriptGoneRelists(t *testing.T) {
	for _, asEvent := range []bool{true, false} {
		name := map[bool]string{true: "error event", false: "watch refused"}[asEvent]
		t.Run(name, func(t *testing.T) {
			s := newScript()
			s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
				if n == 1 {
					return page("10", cm("a", "5"), cm("b", "10"))
				}
				// b was deleted and c created while the watch was broken.
				return page("20", cm("a", "5"), cm("c", "20"))
			}
			s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
				switch {
				case n == 1 && asEvent:
					return []cmEvent{modified("a", "11"), errorEvent(errExpired)}, true, nil
				case n == 1:
					return nil, false, errGone
				}
				return nil, false, nil
			}
			r, store, w := start(t, s, reflector.Config[corev1.ConfigMap]{})
			s.waitFor(t, "the watch after the relist", func(s *script) bool { return len(s.watches) == 2 })
			lists, watches := s.calls()
			if len(lists) != 2 || lists[1].ResourceVersion != "" {
				t.Errorf("lists %+v, want a relist of the latest state", lists)
			}
			if watches[1].ResourceVersion != "20" {
				t.Errorf("second watch from %q, want the relist's 20", watches[1].ResourceVersion)
			}
			items, replaces, _ := store.snapshot()
			if !maps.Equal(items, map[string]string{"a": "5", "c": "20"}) || replaces != 2 {
				t.Errorf("store %v after %d replaces, want the relist's contents after 2", items, replaces)
			}
			if r.LastSyncResourceVersion() != "20" {
				t.Errorf("LastSyncResourceVersion %q", r.LastSyncResourceVersion())
			}
			if d := w.get(); len(d) != 0 {
				t.Errorf("waited %v before relisting, want none", d)
			}
		})
	}
}

// TestScriptExpiredContinueFullList: the continue token expires after the
// first page; the pager lists everything again in one request, and the items
// of the first page are dropped before the full list's are gathered (a
// deleted object must not survive, nothing is stored twice).
func TestScriptExpiredContinueFullList(t *testing.T) {
	s := newScript()
	s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		switch {
		case opts.Continue == "" && opts.Limit == 2:
			return []*corev1.ConfigMap{cm("a", "1"), cm("b", "2")}, metav1.ListMeta{ResourceVersion: "3", Continue: "page-2"}, nil
		case opts.Continue == "page-2":
			return nil, metav1.ListMeta{}, errExpired
		case opts.Continue == "" && opts.Limit == 0 && opts.ResourceVersion == "":
			// The latest state: a was deleted, c and d created.
			return page("9", cm("b", "2"), cm("c", "8"), cm("d", "9"))
		}
		t.Errorf("unexpected list %+v", opts)
		return nil, metav1.ListMeta{}, errors.New("unexpected")
	}
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) { return nil, false, nil }
	_, store, _ := start(t, s, reflector.Config[corev1.ConfigMap]{PageSize: 2})
	s.waitFor(t, "the watch", func(s *script) bool { return len(s.watches) == 1 })
	items, replaces, replaced := store.snapshot()
	if !slices.Equal(replaced, []string{"b", "c", "d"}) || replaces != 1 {
		t.Errorf("stored %v (%d replaces), want the full list [b c d] once", replaced, replaces)
	}
	if !maps.Equal(items, map[string]string{"b": "2", "c": "8", "d": "9"}) {
		t.Errorf("store %v", items)
	}
	if _, watches := s.calls(); watches[0].ResourceVersion != "9" {
		t.Errorf("watch from %q, want the full list's 9", watches[0].ResourceVersion)
	}
}

// TestScriptPagedList: a list of three pages is taken a page at a time;
// continuations carry only the token, the store is replaced once, after the
// last page, with every page's items in order, and the watch starts from the
// list's resourceVersion.
func TestScriptPagedList(t *testing.T) {
	s := newScript()
	s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		switch opts.Continue {
		case "":
			return []*corev1.ConfigMap{cm("a", "1"), cm("b", "2")}, metav1.ListMeta{ResourceVersion: "5", Continue: "page-2"}, nil
		case "page-2":
			return []*corev1.ConfigMap{cm("c", "3"), cm("d", "4")}, metav1.ListMeta{ResourceVersion: "5", Continue: "page-3"}, nil
		case "page-3":
			return page("5", cm("e", "5"))
		}
		t.Errorf("unexpected list %+v", opts)
		return nil, metav1.ListMeta{}, errors.New("unexpected")
	}
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) { return nil, false, nil }
	_, store, _ := start(t, s, reflector.Config[corev1.ConfigMap]{PageSize: 2})
	s.waitFor(t, "the watch", func(s *script) bool { return len(s.watches) == 1 })
	lists, watches := s.calls()
	if len(lists) != 3 || lists[0].ResourceVersion != "0" || lists[0].Limit != 2 {
		t.Fatalf("lists %+v, want 3 pages from rv \"0\"", lists)
	}
	for _, o := range lists[1:] {
		if o.ResourceVersion != "" || o.ResourceVersionMatch != "" || o.Continue == "" {
			t.Errorf("a continuation must carry only the token: %+v", o)
		}
	}
	if _, replaces, replaced := store.snapshot(); !slices.Equal(replaced, []string{"a", "b", "c", "d", "e"}) || replaces != 1 {
		t.Errorf("stored %v (%d replaces), want every page's items once", replaced, replaces)
	}
	if watches[0].ResourceVersion != "5" {
		t.Errorf("watch from %q, want the list's 5", watches[0].ResourceVersion)
	}
}

// readAhead lists two pages at rv 9: a and second, then four objects, more
// than the pager buffers at PageSize 2, so that it waits for room while the
// reflector holds the first page.
func readAhead(second string) func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	return func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		if opts.Continue == "" {
			return []*corev1.ConfigMap{cm("a", "1"), cm(second, "2")}, metav1.ListMeta{ResourceVersion: "9", Continue: "page-2"}, nil
		}
		return page("9", cm("c", "3"), cm("d", "4"), cm("e", "5"), cm("f", "6"))
	}
}

// TestScriptListAbandoned: a list that fails mid-way (here the transform of
// an object of the first page, while the pager is already reading the
// second) stops the pager at once, backs off, and lists again from the first
// page at the same resourceVersion; nothing of the failed attempt is stored.
func TestScriptListAbandoned(t *testing.T) {
	s := newScript()
	s.list = readAhead("bad")
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) { return nil, false, nil }
	failed := false
	_, store, w := start(t, s, reflector.Config[corev1.ConfigMap]{PageSize: 2, Transform: func(obj *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if obj.Name == "bad" && !failed {
			failed = true
			waitLists(s, 2) // fail once the pager is reading ahead
			return nil, errors.New("transform failed")
		}
		return obj, nil
	}})
	s.waitFor(t, "the abandoned list to stop", func(s *script) bool { return s.abandoned == 1 })
	s.waitFor(t, "the watch", func(s *script) bool { return len(s.watches) == 1 })
	lists, watches := s.calls()
	if len(lists) != 4 || lists[2].ResourceVersion != "0" || lists[2].Continue != "" || lists[3].Continue != "page-2" {
		t.Errorf("lists %+v, want the list again from its first page at rv \"0\"", lists)
	}
	if _, replaces, replaced := store.snapshot(); !slices.Equal(replaced, []string{"a", "bad", "c", "d", "e", "f"}) || replaces != 1 {
		t.Errorf("stored %v (%d replaces), want the second attempt's items once", replaced, replaces)
	}
	if watches[0].ResourceVersion != "9" {
		t.Errorf("watch from %q", watches[0].ResourceVersion)
	}
	if d := w.get(); len(d) != 1 {
		t.Errorf("waits %v, want one backoff", d)
	}
}

// TestScriptListCancelled: Run, stopped between two pages of a list while
// the pager reads ahead, returns only once the pager has stopped.
func TestScriptListCancelled(t *testing.T) {
	s := newScript()
	s.list = readAhead("b")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := reflector.New[corev1.ConfigMap](s, newMapStore(), reflector.Config[corev1.ConfigMap]{
		PageSize: 2,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Transform: func(obj *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if obj.Name == "b" {
				// The last object of the first page: stop Run once the pager
				// reads the second.
				waitLists(s, 2)
				cancel()
			}
			return obj, nil
		},
	})
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lists) != 2 || s.abandoned != 1 {
		t.Errorf("after Run returned: %d lists, %d stopped; want the second page's stopped", len(s.lists), s.abandoned)
	}
}

// waitLists waits until the script has been asked for n lists, or 10
// seconds. It does not fail the test: it runs in Run's goroutine, and the
// test fails later if the list never comes.
func waitLists(s *script, n int) {
	wake := time.AfterFunc(10*time.Second, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer wake.Stop()
	deadline := time.Now().Add(10 * time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.lists) < n && time.Now().Before(deadline) {
		s.cond.Wait()
	}
}

// TestScriptStreamingList: with UseStreamingList the collection arrives as
// ADDED events on a sendInitialEvents watch, is stored in one Replace at the
// bookmark that ends them, and the same watch goes on; nothing is listed.
// After a 410 the relist streams again.
func TestScriptStreamingList(t *testing.T) {
	s := newScript()
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
		if opts.SendInitialEvents == nil || !*opts.SendInitialEvents || opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !opts.AllowWatchBookmarks {
			t.Errorf("watch %d is not a streaming list: %+v", n, opts)
		}
		if n == 1 {
			return []cmEvent{added("a", "5"), added("b", "6"), initialEventsEnd("10"), modified("a", "11"), errorEvent(errExpired)}, true, nil
		}
		return []cmEvent{added("b", "6"), initialEventsEnd("12")}, false, nil
	}
	r, store, w := start(t, s, reflector.Config[corev1.ConfigMap]{UseStreamingList: true})
	waitSynced(t, r)
	s.waitFor(t, "the streaming relist after the 410", func(s *script) bool { return len(s.watches) == 2 })
	store.waitFor(t, "the relist's contents", func(m map[string]string) bool { return maps.Equal(m, map[string]string{"b": "6"}) })
	if lists, _ := s.calls(); len(lists) != 0 {
		t.Errorf("listed %+v; a streaming list lists nothing", lists)
	}
	if _, replaces, _ := store.snapshot(); replaces != 2 {
		t.Errorf("%d replaces, want 2 (the initial events of each streaming list)", replaces)
	}
	eventually(t, "the resourceVersion of the relist", func() bool { return r.LastSyncResourceVersion() == "12" })
	if d := w.get(); len(d) != 0 {
		t.Errorf("waited %v, want no backoff", d)
	}
}

// TestScriptStreamingListFirstEvents: the store holds the initial events
// after the end bookmark, then follows the changes on the same watch.
func TestScriptStreamingListFirstEvents(t *testing.T) {
	s := newScript()
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
		return []cmEvent{added("a", "5"), added("b", "6"), initialEventsEnd("10"), modified("a", "11")}, false, nil
	}
	r, store, _ := start(t, s, reflector.Config[corev1.ConfigMap]{UseStreamingList: true})
	store.waitFor(t, "the change after the initial events", func(m map[string]string) bool {
		return maps.Equal(m, map[string]string{"a": "11", "b": "6"})
	})
	if _, replaces, replaced := store.snapshot(); replaces != 1 || !slices.Equal(replaced, []string{"a", "b"}) {
		t.Errorf("replaced with %v %d times, want [a b] once", replaced, replaces)
	}
	eventually(t, "rv 11", func() bool { return r.LastSyncResourceVersion() == "11" })
	if _, watches := s.calls(); len(watches) != 1 {
		t.Errorf("%d watches, want the streaming one only", len(watches))
	}
}

// TestScriptStreamingRefused: a server that answers sendInitialEvents with
// 400 or 422 gets paged lists instead, for good: the relist after a 410
// lists too.
func TestScriptStreamingRefused(t *testing.T) {
	for _, code := range []int32{http.StatusBadRequest, http.StatusUnprocessableEntity} {
		reason := map[int32]metav1.StatusReason{400: metav1.StatusReasonBadRequest, 422: metav1.StatusReasonInvalid}[code]
		t.Run(string(reason), func(t *testing.T) {
			s := newScript()
			s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
				return page("10", cm("a", "10"))
			}
			s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
				if opts.SendInitialEvents != nil {
					return nil, false, statusErr(code, reason, 0)
				}
				if n == 2 {
					return []cmEvent{errorEvent(errExpired)}, true, nil
				}
				return nil, false, nil
			}
			_, store, w := start(t, s, reflector.Config[corev1.ConfigMap]{UseStreamingList: true})
			s.waitFor(t, "the watch after the relist", func(s *script) bool { return len(s.watches) == 3 })
			lists, watches := s.calls()
			if len(lists) != 2 || lists[0].ResourceVersion != "0" || lists[1].ResourceVersion != "" {
				t.Errorf("lists %+v, want the paged list then the relist", lists)
			}
			if watches[0].SendInitialEvents == nil || watches[1].SendInitialEvents != nil || watches[2].SendInitialEvents != nil {
				t.Errorf("watches %+v: only the first may stream", watches)
			}
			if items, _, _ := store.snapshot(); !maps.Equal(items, map[string]string{"a": "10"}) {
				t.Errorf("store %v", items)
			}
			if d := w.get(); len(d) != 0 {
				t.Errorf("waited %v, want no backoff", d)
			}
		})
	}
}

// TestScriptStreamingIgnored: a server or proxy that drops sendInitialEvents
// never sends the bookmark that ends the initial events. The reflector falls
// back to paged lists InitialEventsTimeout after the last event, or at once
// when a change event shows that the watch is a plain one.
func TestScriptStreamingIgnored(t *testing.T) {
	cases := map[string]struct {
		events  []cmEvent
		timeout time.Duration
	}{
		// An old server's watch from "" starts with the existing objects as
		// ADDED, then is silent.
		"silent": {[]cmEvent{added("a", "5"), added("b", "6")}, 50 * time.Millisecond},
		"change": {[]cmEvent{added("a", "5"), modified("a", "7")}, time.Hour},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := newScript()
			s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
				return page("10", cm("a", "7"), cm("b", "6"))
			}
			s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
				if n == 1 {
					return c.events, false, nil
				}
				return nil, false, nil
			}
			r, store, _ := start(t, s, reflector.Config[corev1.ConfigMap]{UseStreamingList: true, InitialEventsTimeout: c.timeout})
			waitSynced(t, r)
			s.waitFor(t, "the watch after the list", func(s *script) bool { return len(s.watches) == 2 && s.stopped >= 1 })
			lists, watches := s.calls()
			if len(lists) != 1 || lists[0].ResourceVersion != "0" || watches[1].SendInitialEvents != nil || watches[1].ResourceVersion != "10" {
				t.Errorf("lists %+v, watches %+v: want a paged list, then a plain watch from it", lists, watches)
			}
			if items, _, _ := store.snapshot(); !maps.Equal(items, map[string]string{"a": "7", "b": "6"}) {
				t.Errorf("store %v", items)
			}
		})
	}
}

// TestScriptBookmarks: the reflector asks for bookmarks, and a bookmark
// moves the resourceVersion the next watch starts from (no relist).
func TestScriptBookmarks(t *testing.T) {
	s := newScript()
	s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		return page("10", cm("a", "10"))
	}
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
		if n == 1 && opts.AllowWatchBookmarks {
			// Bookmarks are sent only to watches that ask for them; then the
			// watch times out.
			return []cmEvent{bookmark("15"), bookmark("20")}, true, nil
		}
		return nil, false, nil
	}
	r, _, _ := start(t, s, reflector.Config[corev1.ConfigMap]{})
	s.waitFor(t, "the second watch", func(s *script) bool { return len(s.watches) == 2 })
	lists, watches := s.calls()
	if !watches[0].AllowWatchBookmarks || !watches[1].AllowWatchBookmarks {
		t.Errorf("watches %+v do not ask for bookmarks", watches)
	}
	if watches[1].ResourceVersion != "20" {
		t.Errorf("second watch from %q, want the last bookmark's 20", watches[1].ResourceVersion)
	}
	if r.LastSyncResourceVersion() != "20" {
		t.Errorf("LastSyncResourceVersion %q, want 20", r.LastSyncResourceVersion())
	}
	if len(lists) != 1 {
		t.Errorf("%d lists, want 1", len(lists))
	}
}

// TestScriptTruncatedStream: a watch that breaks (an error event, or the
// stream closing early) is re-opened from the last event's resourceVersion,
// without a relist; only a broken stream waits a backoff.
func TestScriptTruncatedStream(t *testing.T) {
	for _, broken := range []bool{true, false} {
		t.Run(map[bool]string{true: "error event", false: "closed"}[broken], func(t *testing.T) {
			s := newScript()
			s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
				return page("10", cm("a", "10"))
			}
			s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
				if n == 1 {
					evs := []cmEvent{added("b", "11")}
					if broken {
						evs = append(evs, errorEvent(io.ErrUnexpectedEOF))
					}
					return evs, true, nil
				}
				return []cmEvent{modified("a", "12")}, false, nil
			}
			_, store, w := start(t, s, reflector.Config[corev1.ConfigMap]{InitialBackoff: time.Millisecond})
			store.waitFor(t, "the event of the second watch", func(m map[string]string) bool {
				return maps.Equal(m, map[string]string{"a": "12", "b": "11"})
			})
			lists, watches := s.calls()
			if len(lists) != 1 || watches[1].ResourceVersion != "11" {
				t.Errorf("lists %+v, watches %+v: want one list, the second watch from 11", lists, watches)
			}
			if d := w.get(); broken != (len(d) == 1) {
				t.Errorf("waits %v (broken stream: %v)", d, broken)
			}
		})
	}
}

// TestScriptRetryAfter: a 429's Retry-After is waited out (Run asks for at
// least that long); other errors wait the backoff.
func TestScriptRetryAfter(t *testing.T) {
	s := newScript()
	s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		switch n {
		case 1:
			return nil, metav1.ListMeta{}, statusErr(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, 7)
		case 2:
			return nil, metav1.ListMeta{}, statusErr(http.StatusInternalServerError, metav1.StatusReasonInternalError, 0)
		}
		return page("10", cm("a", "10"))
	}
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) { return nil, false, nil }
	var mu sync.Mutex
	var reported []error
	_, _, w := start(t, s, reflector.Config[corev1.ConfigMap]{
		InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		WatchErrorHandler: func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		},
	})
	s.waitFor(t, "the watch", func(s *script) bool { return len(s.watches) == 1 })
	d := w.get()
	if len(d) != 2 || d[0] != 7*time.Second || d[1] >= time.Second {
		t.Errorf("waits %v, want 7s (Retry-After) then a short backoff", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 2 || !client.IsTooManyRequests(reported[0]) || !client.IsInternalError(reported[1]) {
		t.Errorf("reported %v, want the 429 and the 500", reported)
	}
}

// TestScriptUndecodableEvent: an event whose object does not decode is
// reported and skipped, and its resourceVersion still moves the next watch
// past it.
func TestScriptUndecodableEvent(t *testing.T) {
	s := newScript()
	s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		return page("10", cm("a", "10"))
	}
	bad := &client.DecodeError{Type: client.EventModified, Namespace: "s", Name: "a", ResourceVersion: "15", Err: errors.New("bad field")}
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
		if n == 1 {
			return []cmEvent{{Type: client.EventModified, Err: bad}}, true, nil
		}
		return nil, false, nil
	}
	var mu sync.Mutex
	var reported []error
	start(t, s, reflector.Config[corev1.ConfigMap]{WatchErrorHandler: func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}})
	s.waitFor(t, "the second watch", func(s *script) bool { return len(s.watches) == 2 })
	if _, watches := s.calls(); watches[1].ResourceVersion != "15" {
		t.Errorf("second watch from %q, want past the undecodable event, 15", watches[1].ResourceVersion)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !errors.Is(reported[0], bad) {
		t.Errorf("reported %v, want the decode error", reported)
	}
}

// TestScriptDropManagedFields: with DropManagedFields the objects of lists
// and watches reach the Transform, and the store, without managedFields,
// whatever the ListerWatcher decoded; the DropManagedFields transform does
// the same.
func TestScriptDropManagedFields(t *testing.T) {
	withFields := func(name, rv string) *corev1.ConfigMap {
		o := cm(name, rv)
		o.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
		return o
	}
	s := newScript()
	s.list = func(n int, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
		return page("10", withFields("a", "10"))
	}
	s.watch = func(n int, opts metav1.ListOptions) ([]cmEvent, bool, error) {
		return []cmEvent{{Type: client.EventAdded, Object: withFields("b", "11")}}, false, nil
	}
	var mu sync.Mutex
	kept := map[string]int{} // name -> managedFields entries the Transform saw
	_, store, _ := start(t, s, reflector.Config[corev1.ConfigMap]{
		DropManagedFields: true,
		Transform: func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			mu.Lock()
			kept[cm.Name] = len(cm.ManagedFields)
			mu.Unlock()
			return cm, nil
		},
	})
	store.waitFor(t, "the watch event", func(m map[string]string) bool { return len(m) == 2 })
	mu.Lock()
	if !maps.Equal(kept, map[string]int{"a": 0, "b": 0}) {
		t.Errorf("managedFields entries reaching the Transform: %v, want none", kept)
	}
	mu.Unlock()

	drop := reflector.DropManagedFields[corev1.ConfigMap]
	if o, err := drop(withFields("c", "1")); err != nil || o.ManagedFields != nil {
		t.Errorf("DropManagedFields left %v (%v)", o.ManagedFields, err)
	}
}
