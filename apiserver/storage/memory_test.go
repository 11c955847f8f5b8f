package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

func TestCreateGet(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	if m.Revision() != 0 {
		t.Fatalf("fresh revision = %d", m.Revision())
	}
	a := mustCreate(t, m, "ns", "a", nil, "k", "v")
	if rv(a) != "1" || m.Revision() != 1 {
		t.Fatalf("rv = %q, revision = %d, want 1", rv(a), m.Revision())
	}
	_, err := m.Create(ctx, key("ns", "a"), cm("ns", "a", nil))
	se := wantCode(t, err, CodeAlreadyExists)
	if se.Key != key("ns", "a") || !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("error = %#v", se)
	}
	if m.Revision() != 1 {
		t.Fatalf("failed create moved the revision to %d", m.Revision())
	}

	for _, ro := range []ReadOptions{{}, {Match: Any}, {Match: NotOlderThan, ResourceVersion: 1}, {Match: Exact, ResourceVersion: 1}} {
		got, err := m.Get(ctx, key("ns", "a"), ro)
		if err != nil || !sameStored(got, a) {
			t.Fatalf("Get(%+v) = %v, %v; want the stored object", ro, got, err)
		}
	}
	_, err = m.Get(ctx, key("ns", "missing"), ReadOptions{})
	if se := wantCode(t, err, CodeNotFound); se.Key != key("ns", "missing") {
		t.Fatalf("key = %q", se.Key)
	}
	if _, err := m.Create(ctx, "k", nil); err == nil {
		t.Fatal("nil object accepted")
	}
	var nilCM *corev1.ConfigMap
	if _, err := m.Create(ctx, "k", nilCM); err == nil {
		t.Fatal("typed nil object accepted")
	}
}

func TestUpdateDeleteAndHistory(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	a1 := mustCreate(t, m, "ns", "a", nil, "v", "1") // rev 1
	a2 := mustUpdate(t, m, "ns", "a", nil, "v", "2") // rev 2
	if rv(a1) != "1" || rv(a2) != "2" || a2.Data["v"] != "2" {
		t.Fatalf("versions: %s %s %v", rv(a1), rv(a2), a2.Data)
	}
	mustCreate(t, m, "ns", "b", nil) // rev 3
	gone := mustDelete(t, m, "ns", "a")
	if rv(gone) != "4" || gone.Data["v"] != "2" {
		t.Fatalf("delete returned rv %s data %v", rv(gone), gone.Data)
	}
	if rv(a2) != "2" {
		t.Fatalf("delete modified the stored object: rv %s", rv(a2))
	}
	if gone == a2 {
		t.Fatal("delete returned the shared stored object")
	}
	a5 := mustCreate(t, m, "ns", "a", nil, "v", "new") // rev 5

	tests := []struct {
		rev  uint64
		want string // data v, or "" for not found
	}{{1, "1"}, {2, "2"}, {3, "2"}, {4, ""}, {5, "new"}}
	for _, tt := range tests {
		got, err := m.Get(ctx, key("ns", "a"), ReadOptions{Match: Exact, ResourceVersion: tt.rev})
		if tt.want == "" {
			wantCode(t, err, CodeNotFound)
			continue
		}
		if err != nil || got.(*corev1.ConfigMap).Data["v"] != tt.want {
			t.Fatalf("Get at %d = %v, %v; want v=%s", tt.rev, got, err, tt.want)
		}
	}
	got, _ := m.Get(ctx, key("ns", "a"), ReadOptions{})
	if !sameStored(got, a5) {
		t.Fatal("latest is not the re-created object")
	}
	if _, err := m.Delete(ctx, key("ns", "zzz"), nil, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete missing: %v", err)
	}
	// Deleting twice.
	mustDelete(t, m, "ns", "b")
	if _, err := m.Delete(ctx, key("ns", "b"), nil, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestGuaranteedUpdateSemantics(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	a := mustCreate(t, m, "ns", "a", nil)

	t.Run("missing without allowCreate", func(t *testing.T) {
		_, err := m.GuaranteedUpdate(ctx, key("ns", "nope"), false, nil, func(Object) (Object, error) {
			t.Fatal("tryUpdate called")
			return nil, nil
		})
		wantCode(t, err, CodeNotFound)
	})
	t.Run("allowCreate", func(t *testing.T) {
		obj, err := m.GuaranteedUpdate(ctx, key("ns", "new"), true, nil, func(cur Object) (Object, error) {
			if cur != nil {
				t.Fatalf("current = %v, want nil", cur)
			}
			return cm("ns", "new", nil), nil
		})
		if err != nil || rv(obj) != rvOf(m.Revision()) {
			t.Fatalf("create on update: %v %v", obj, err)
		}
	})
	t.Run("no-op returns current", func(t *testing.T) {
		before := m.Revision()
		obj, err := m.GuaranteedUpdate(ctx, key("ns", "a"), false, nil, func(cur Object) (Object, error) { return cur, nil })
		if err != nil || !sameStored(obj, a) || m.Revision() != before {
			t.Fatalf("no-op: %v %v revision %d→%d", obj, err, before, m.Revision())
		}
	})
	t.Run("tryUpdate error returned as is", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := m.GuaranteedUpdate(ctx, key("ns", "a"), false, nil, func(Object) (Object, error) { return nil, boom })
		if err != boom {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("stale resourceVersion", func(t *testing.T) {
		_, err := m.GuaranteedUpdate(ctx, key("ns", "a"), false, nil, func(cur Object) (Object, error) {
			c := cur.(*corev1.ConfigMap).DeepCopy()
			c.ResourceVersion = "999"
			return c, nil
		})
		se := wantCode(t, err, CodeConflict)
		if !strings.Contains(se.Message, "the object has been modified") {
			t.Fatalf("message = %q", se.Message)
		}
	})
	t.Run("matching resourceVersion", func(t *testing.T) {
		obj, err := m.GuaranteedUpdate(ctx, key("ns", "a"), false, nil, func(cur Object) (Object, error) {
			c := cur.(*corev1.ConfigMap).DeepCopy()
			c.Data = map[string]string{"x": "y"}
			return c, nil // resourceVersion copied from current
		})
		if err != nil || rv(obj) != rvOf(m.Revision()) {
			t.Fatalf("update: %v %v", obj, err)
		}
	})
}

func TestPreconditions(t *testing.T) {
	ctx := context.Background()
	uid := func(s string) *metav1.UID { u := metav1.UID(s); return &u }
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		pre     *Preconditions
		wantErr string // substring of the conflict message; "" for success
	}{
		{"none", nil, ""},
		{"empty", &Preconditions{}, ""},
		{"uid ok", &Preconditions{UID: uid("uid-ns-a")}, ""},
		{"uid bad", &Preconditions{UID: uid("other")}, "the UID in the precondition (other) does not match the UID in record (uid-ns-a)"},
		{"rv ok", &Preconditions{ResourceVersion: str("1")}, ""},
		{"rv bad", &Preconditions{ResourceVersion: str("7")}, "the ResourceVersion in the precondition (7) does not match the ResourceVersion in record (1). The object might have been modified"},
		{"both, rv bad", &Preconditions{UID: uid("uid-ns-a"), ResourceVersion: str("7")}, "ResourceVersion in the precondition (7)"},
	}
	for _, tt := range tests {
		for _, op := range []string{"update", "delete"} {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				m := newStore(t, MemoryConfig{})
				mustCreate(t, m, "ns", "a", nil)
				var err error
				if op == "update" {
					_, err = m.GuaranteedUpdate(ctx, key("ns", "a"), false, tt.pre, func(cur Object) (Object, error) {
						return cur.(*corev1.ConfigMap).DeepCopy(), nil
					})
				} else {
					_, err = m.Delete(ctx, key("ns", "a"), tt.pre, nil)
				}
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("err = %v", err)
					}
					return
				}
				se := wantCode(t, err, CodeConflict)
				if !strings.Contains(se.Message, tt.wantErr) || se.Key != key("ns", "a") {
					t.Fatalf("error = %q (key %q), want %q", se.Message, se.Key, tt.wantErr)
				}
				if m.Revision() != 1 {
					t.Fatal("failed write moved the revision")
				}
			})
		}
	}
}

func TestDeleteValidateAndCopy(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	mustCreate(t, m, "ns", "a", nil)
	veto := errors.New("veto")
	if _, err := m.Delete(ctx, key("ns", "a"), nil, func(Object) error { return veto }); err != veto {
		t.Fatalf("validate error = %v", err)
	}

	skipOnEtcd(t, "the rest tests MemoryConfig.Copy: etcd decodes the last state of a deleted object")
	// An object type without a way to copy it.
	type bare struct{ metav1.ObjectMeta }
	if _, err := m.Create(ctx, "/bare/x", &bare{}); err != nil {
		t.Fatal(err)
	}
	_, err := m.Delete(ctx, "/bare/x", nil, nil)
	if se := wantCode(t, err, CodeInvalidObject); !strings.Contains(se.Message, "MemoryConfig.Copy") {
		t.Fatalf("message = %q", se.Message)
	}

	// A configured Copy is used.
	calls := 0
	m2 := newStore(t, MemoryConfig{Copy: func(o Object) Object {
		calls++
		b := *o.(*bare)
		return &b
	}})
	if _, err := m2.Create(ctx, "/bare/x", &bare{}); err != nil {
		t.Fatal(err)
	}
	obj, err := m2.Delete(ctx, "/bare/x", nil, nil)
	if err != nil || calls != 1 || rv(obj) != "2" {
		t.Fatalf("delete with Copy: %v %v calls=%d", obj, err, calls)
	}
}

// TestConcurrentGuaranteedUpdate increments one counter from many goroutines:
// no increment may be lost, and a retry must always see a fresh object.
func TestConcurrentGuaranteedUpdate(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	mustCreate(t, m, "ns", "counter", nil, "n", "0")
	const workers, each = 16, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range workers {
		wg.Go(func() {
			for range each {
				var last Object
				_, err := m.GuaranteedUpdate(ctx, key("ns", "counter"), false, nil, func(cur Object) (Object, error) {
					if last != nil && cur == last {
						mu.Lock()
						failures = append(failures, "tryUpdate saw the same stale object twice")
						mu.Unlock()
					}
					last = cur
					c := cur.(*corev1.ConfigMap).DeepCopy()
					n, _ := strconv.Atoi(c.Data["n"])
					c.Data["n"] = strconv.Itoa(n + 1)
					return c, nil
				})
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures, first: %s", len(failures), failures[0])
	}
	got, _ := m.Get(ctx, key("ns", "counter"), ReadOptions{})
	if n := got.(*corev1.ConfigMap).Data["n"]; n != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, want %d", n, workers*each)
	}
	if m.Revision() != workers*each+1 {
		t.Fatalf("revision = %d", m.Revision())
	}
}

func TestExactReadsAndCompaction(t *testing.T) {
	ctx := context.Background()
	m := newMemStore(t, MemoryConfig{})
	for i := range 5 {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil) // revs 1..5
	}
	mustUpdate(t, m, "ns", "0", nil, "k", "v") // 6
	mustDelete(t, m, "ns", "1")                // 7
	m.Compact(6)
	if m.CompactedRevision() != 6 {
		t.Fatalf("compacted = %d", m.CompactedRevision())
	}
	for _, r := range []uint64{0, 1, 5} {
		_, err := m.Get(ctx, key("ns", "0"), ReadOptions{Match: Exact, ResourceVersion: r})
		wantCode(t, err, CodeExpired)
		_, err = m.List(ctx, "/core/configmaps/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: r}})
		if se := wantCode(t, err, CodeExpired); se.ResourceVersion != r {
			t.Fatalf("expired rv = %d", se.ResourceVersion)
		}
	}
	// The compaction revision itself stays readable, as etcd keeps it.
	res, err := m.List(ctx, "/core/configmaps/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: 6}})
	if err != nil || strings.Join(names(res.Items), ",") != "ns/0,ns/1,ns/2,ns/3,ns/4" || res.Revision != 6 {
		t.Fatalf("list at 6: %v %v", res, err)
	}
	// Revision 7 still sees the state kept from before the compaction.
	res, err = m.List(ctx, "/core/configmaps/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: 7}})
	if err != nil || strings.Join(names(res.Items), ",") != "ns/0,ns/2,ns/3,ns/4" || res.Revision != 7 {
		t.Fatalf("list at 7: %v %v", res, err)
	}
	o, err := m.Get(ctx, key("ns", "0"), ReadOptions{Match: Exact, ResourceVersion: 7})
	if err != nil || rv(o) != "6" {
		t.Fatalf("get at 7: %v %v", o, err)
	}
	// Compaction removed the superseded version and the tombstone.
	if e := m.keys[key("ns", "0")]; len(e.versions) != 1 {
		t.Fatalf("versions of ns/0: %d", len(e.versions))
	}
	m.Compact(7)
	if _, ok := m.keys[key("ns", "1")]; ok || m.index.Len() != 4 {
		t.Fatalf("tombstone of ns/1 not dropped (index %d)", m.index.Len())
	}
	m.Compact(3) // backwards: no-op
	m.Compact(100)
	if m.CompactedRevision() != 7 {
		t.Fatalf("compacted = %d after clamped compaction", m.CompactedRevision())
	}
}

func TestCompactionByCount(t *testing.T) {
	ctx := context.Background()
	m := newMemStore(t, MemoryConfig{MaxEvents: 10})
	for i := range 25 {
		mustCreate(t, m, "ns", fmt.Sprintf("%02d", i), nil)
	}
	if m.CompactedRevision() != 15 {
		t.Fatalf("compacted = %d, want 15", m.CompactedRevision())
	}
	_, err := m.Get(ctx, key("ns", "00"), ReadOptions{Match: Exact, ResourceVersion: 14})
	wantCode(t, err, CodeExpired)
	res, err := m.List(ctx, "/core/configmaps/ns/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: 15}})
	if err != nil || len(res.Items) != 15 {
		t.Fatalf("list at 15: %d items, %v", len(res.Items), err)
	}
	if _, err := m.Watch(ctx, "/", WatchOptions{ResourceVersion: 14}); !errors.Is(err, ErrExpired) {
		t.Fatalf("watch from 14: %v", err)
	}
	w, err := m.Watch(ctx, "/", WatchOptions{ResourceVersion: 15})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for want := uint64(16); want <= 25; want++ {
		if e := mustNext(t, w); e.Revision != want || e.Type != Added {
			t.Fatalf("event %+v, want Added at %d", e, want)
		}
	}
	// Lots of history: the chunked log drops whole chunks.
	for i := range 3 * chunkLen {
		mustUpdate(t, m, "ns", "00", nil, "i", fmt.Sprint(i))
	}
	if v := m.log.Load(); len(v.chunks) > 2 {
		t.Fatalf("log keeps %d chunks for 10 events", len(v.chunks))
	}
	if e := m.keys[key("ns", "00")]; len(e.versions) > 11 {
		t.Fatalf("key keeps %d versions", len(e.versions))
	}
}

// TestCompactedAtCurrentRevision: once history is compacted up to the current
// revision (what an idle store's compactor does), lists at that revision
// still page, Exact reads at it work and a watch can start from it.
func TestCompactedAtCurrentRevision(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{})
	for i := range 5 {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	m.Compact(m.Revision())
	items, rev := listAll(t, m, "/core/configmaps/ns/", 2, nil)
	if len(items) != 5 || rev != 5 {
		t.Fatalf("paged list: %d items at %d", len(items), rev)
	}
	if _, err := m.Get(ctx, key("ns", "0"), ReadOptions{Match: Exact, ResourceVersion: 5}); err != nil {
		t.Fatal(err)
	}
	w, err := m.Watch(ctx, "/", WatchOptions{ResourceVersion: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreate(t, m, "ns", "new", nil)
	if e := mustNext(t, w); e.Type != Added || e.Revision != 6 {
		t.Fatalf("event = %+v", e)
	}
}

func TestCompactionByTime(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	m := newMemStore(t, MemoryConfig{Now: clock.Now, HistoryWindow: time.Minute})
	mustCreate(t, m, "ns", "a", nil) // 1 at t0
	mustCreate(t, m, "ns", "b", nil) // 2 at t0
	clock.Advance(30 * time.Second)
	mustUpdate(t, m, "ns", "a", nil, "k", "v") // 3 at t0+30s
	if m.compactExpired() || m.CompactedRevision() != 0 {
		t.Fatal("compacted inside the window")
	}
	clock.Advance(31 * time.Second) // t0+61s: revisions 1 and 2 are older than a minute
	if !m.compactExpired() || m.CompactedRevision() != 2 {
		t.Fatalf("compacted = %d, want 2", m.CompactedRevision())
	}
	_, err := m.Get(ctx, key("ns", "a"), ReadOptions{Match: Exact, ResourceVersion: 1})
	wantCode(t, err, CodeExpired)
	if _, err := m.Get(ctx, key("ns", "b"), ReadOptions{Match: Exact, ResourceVersion: 2}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	m.compactExpired()
	if m.CompactedRevision() != 3 {
		t.Fatalf("compacted = %d, want 3", m.CompactedRevision())
	}
	// Latest reads are unaffected.
	if res, err := m.List(ctx, "/", ListOptions{}); err != nil || len(res.Items) != 2 {
		t.Fatalf("latest list: %v %v", res, err)
	}
}

func TestBackgroundCompactor(t *testing.T) {
	clock := newFakeClock()
	passes := make(chan struct{}, 1)
	cfg := MemoryConfig{Now: clock.Now, HistoryWindow: time.Minute, CompactInterval: time.Millisecond}
	cfg.afterCompact = func() {
		select {
		case passes <- struct{}{}:
		default:
		}
	}
	m := newMemStore(t, cfg)
	for i := range 3 {
		mustCreate(t, m, "ns", fmt.Sprint(i), nil)
	}
	clock.Advance(2 * time.Minute)
	deadline := time.After(10 * time.Second)
	for m.CompactedRevision() != 3 {
		select {
		case <-passes:
		case <-deadline:
			t.Fatalf("background compactor did not compact: %d", m.CompactedRevision())
		}
	}
}

func TestTooLargeResourceVersion(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{TooLargeWait: 5 * time.Millisecond})
	mustCreate(t, m, "ns", "a", nil)
	for _, ro := range []ReadOptions{{Match: NotOlderThan, ResourceVersion: 9}, {Match: Exact, ResourceVersion: 9}} {
		_, err := m.Get(ctx, key("ns", "a"), ro)
		se := wantCode(t, err, CodeTooLargeResourceVersion)
		if se.ResourceVersion != 1 || se.Message != "Too large resource version: 9, current: 1" {
			t.Fatalf("error = %#v", se)
		}
		_, err = m.List(ctx, "/", ListOptions{ReadOptions: ro})
		wantCode(t, err, CodeTooLargeResourceVersion)
	}
	_, err := m.Watch(ctx, "/", WatchOptions{ResourceVersion: 9, SendInitialEvents: true})
	wantCode(t, err, CodeTooLargeResourceVersion)

	// Negative: fail at once.
	m2 := newStore(t, MemoryConfig{TooLargeWait: -1})
	_, err = m2.Get(ctx, key("ns", "a"), ReadOptions{Match: NotOlderThan, ResourceVersion: 1})
	wantCode(t, err, CodeTooLargeResourceVersion)
}

// TestWaitForRevision: a read ahead of the store is served once a write
// brings the store there.
func TestWaitForRevision(t *testing.T) {
	ctx := context.Background()
	m := newStore(t, MemoryConfig{TooLargeWait: time.Minute})
	mustCreate(t, m, "ns", "a", nil)
	type result struct {
		obj Object
		res *ListResult
		err error
	}
	got := make(chan result, 3)
	go func() {
		o, err := m.Get(ctx, key("ns", "a"), ReadOptions{Match: NotOlderThan, ResourceVersion: 2})
		got <- result{obj: o, err: err}
	}()
	go func() {
		r, err := m.List(ctx, "/", ListOptions{ReadOptions: ReadOptions{Match: Exact, ResourceVersion: 2}})
		got <- result{res: r, err: err}
	}()
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := m.Get(cctx, key("ns", "a"), ReadOptions{Match: NotOlderThan, ResourceVersion: 100})
		got <- result{err: err}
	}()
	cancel()
	// The other two cannot return before the store reaches revision 2.
	if r := <-got; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("first result = %+v, want the cancelled read", r)
	}
	mustUpdate(t, m, "ns", "a", nil, "k", "v")
	for range 2 {
		r := <-got
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.obj != nil && rv(r.obj) != "2" {
			t.Fatalf("get rv = %s", rv(r.obj))
		}
		if r.res != nil && (r.res.Revision != 2 || len(r.res.Items) != 1) {
			t.Fatalf("list = %+v", r.res)
		}
	}
}

func TestContextAndClosed(t *testing.T) {
	m := openStore(t, MemoryConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Create(ctx, "/a", cm("", "a", nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with cancelled ctx: %v", err)
	}
	if _, err := m.List(ctx, "/", ListOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("list with cancelled ctx: %v", err)
	}
	m.Close()
	m.Close()
	bg := context.Background()
	if _, err := m.Create(bg, "/a", cm("", "a", nil)); err != ErrClosed {
		t.Fatalf("create after close: %v", err)
	}
	if _, err := m.Get(bg, "/a", ReadOptions{}); err != ErrClosed {
		t.Fatalf("get after close: %v", err)
	}
	if _, err := m.List(bg, "/", ListOptions{}); err != ErrClosed {
		t.Fatalf("list after close: %v", err)
	}
	if _, err := m.Watch(bg, "/", WatchOptions{}); err != ErrClosed {
		t.Fatalf("watch after close: %v", err)
	}
	if _, err := m.GuaranteedUpdate(bg, "/a", true, nil, func(Object) (Object, error) { return cm("", "a", nil), nil }); err != ErrClosed {
		t.Fatalf("update after close: %v", err)
	}
}

func TestErrorText(t *testing.T) {
	err := &Error{Code: CodeNotFound, Key: "/k"}
	if err.Error() != "/k: not found" || !errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		t.Fatalf("error = %q", err)
	}
}
