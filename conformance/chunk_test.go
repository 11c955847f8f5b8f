package conformance

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"
)

// writers runs concurrent writers in a namespace until stop is called: each
// creates objects, updates one of the given names and deletes what it made
// before. Every completed write is signalled on the returned channel (without
// blocking). stop waits for the writers and fails the test on any write
// error.
func writers(t *testing.T, e *env, ns string, n int, update []string) (progress <-chan struct{}, stop func()) {
	t.Helper()
	done := make(chan struct{})
	prog := make(chan struct{}, 1)
	signal := func() {
		select {
		case prog <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	fail := func(format string, args ...any) {
		mu.Lock()
		errs = append(errs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				mine := fmt.Sprintf("w%d-%04d", i, k)
				if r, err := e.send(http.MethodPost, cmPath(ns), configMap(mine, nil, nil)); err != nil || r.Code != http.StatusCreated {
					fail("writer %d create: %v %v", i, err, r)
					return
				}
				signal()
				if len(update) > 0 {
					target := update[(k*n+i)%len(update)]
					body := configMap(target, nil, map[string]string{"by": mine})
					if r, err := e.send(http.MethodPut, cmPath(ns, target), body); err != nil || r.Code != http.StatusOK {
						fail("writer %d update: %v %v", i, err, r)
						return
					}
					signal()
				}
				if k > 0 {
					prev := fmt.Sprintf("w%d-%04d", i, k-1)
					if r, err := e.send(http.MethodDelete, cmPath(ns, prev), nil); err != nil || r.Code != http.StatusOK {
						fail("writer %d delete: %v %v", i, err, r)
						return
					}
					signal()
				}
			}
		}()
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			for _, msg := range errs {
				t.Error(msg)
			}
		})
	}
	t.Cleanup(stop)
	return prog, stop
}

// waitProgress waits for a write to complete.
func waitProgress(t *testing.T, e *env, progress <-chan struct{}) {
	t.Helper()
	timer := time.NewTimer(e.within(10 * time.Second))
	defer timer.Stop()
	select {
	case <-progress:
	case <-timer.C:
		t.Fatal("the writers made no progress")
	}
}

// TestListChunking checks paged lists: every page comes from the first page's
// snapshot while writers change the collection; remainingItemCount is sent
// only when known (golden 29–31); bad and expired continue tokens (golden 35,
// 100).
func TestListChunking(t *testing.T) {
	t.Parallel()
	e := target

	t.Run("consistent-under-writes", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		var base []string
		for i := range 30 {
			n := fmt.Sprintf("obj-%02d", i)
			e.createCM(t, ns, n, nil, nil)
			base = append(base, n)
		}
		progress, stop := writers(t, e, ns, 4, base)
		const limit = 4
		first := expect(t, e.get(t, cmPath(ns)+q("limit", fmt.Sprint(limit))), http.StatusOK)
		snapshot := rv(first)
		all := items(t, first)
		page := first
		pages := 1
		for str(page, "metadata", "continue") != "" {
			// Let a write land between every two pages.
			waitProgress(t, e, progress)
			if n := len(items(t, page)); n != limit {
				t.Errorf("page %d has %d items, want %d (more follow)", pages, n, limit)
			}
			page = expect(t, e.get(t, cmPath(ns)+q("limit", fmt.Sprint(limit), "continue", str(page, "metadata", "continue"))), http.StatusOK)
			pages++
			if rv(page) != snapshot {
				t.Fatalf("page %d at resourceVersion %s, first page at %s", pages, rv(page), snapshot)
			}
			all = append(all, items(t, page)...)
		}
		stop()
		// The union of the pages is the collection at the snapshot.
		exact := expect(t, e.get(t, cmPath(ns)+q("resourceVersion", snapshot, "resourceVersionMatch", "Exact")), http.StatusOK)
		if rv(exact) != snapshot {
			t.Fatalf("Exact list at %s answered at %s", snapshot, rv(exact))
		}
		want := versions(items(t, exact))
		if got := versions(all); !reflect.DeepEqual(got, want) {
			t.Errorf("pages (%d of them) hold %d objects %v;\nthe collection at %s holds %d: %v", pages, len(got), got, snapshot, len(want), want)
		}
		if len(all) != len(want) {
			t.Errorf("pages hold %d items (duplicates?), snapshot %d", len(all), len(want))
		}
		latest := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		if reflect.DeepEqual(versions(items(t, latest)), want) {
			t.Errorf("the collection did not change while paging: the case proves nothing")
		}
	})

	t.Run("remainingItemCount", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		base := e.baseline(t, ns)
		// The objects of golden 29–31.
		e.createCM(t, ns, "cm1", nil, nil)
		for i := range 5 {
			e.createCM(t, ns, fmt.Sprintf("page-%d", i), map[string]string{"page": "yes"}, nil)
		}
		type step struct {
			query     []string
			names     []string
			remaining any // json number as int64, or nil for absent
			more      bool
			golden    string // compare the metadata fields with this capture
		}
		run := func(t *testing.T, steps []step) {
			token := ""
			for i, s := range steps {
				kv := s.query
				if token != "" {
					kv = append(append([]string{}, kv...), "continue", token)
				}
				list := expect(t, e.get(t, cmPath(ns)+q(kv...)), http.StatusOK)
				if got := names(items(t, list)); !reflect.DeepEqual(got, s.names) {
					t.Errorf("step %d (%v): items %v, want %v", i, kv, got, s.names)
				}
				n, ok := num(list, "metadata", "remainingItemCount")
				switch {
				case s.remaining == nil && has(list, "metadata", "remainingItemCount"):
					t.Errorf("step %d (%v): remainingItemCount %v, want it absent", i, kv, list["metadata"])
				case s.remaining != nil && (!ok || n != s.remaining.(int64)):
					t.Errorf("step %d (%v): metadata %v, want remainingItemCount %d", i, kv, list["metadata"], s.remaining)
				}
				token = str(list, "metadata", "continue")
				if (token != "") != s.more {
					t.Errorf("step %d (%v): continue %q, want one: %v", i, kv, token, s.more)
				}
				if s.golden != "" {
					want := metadataKeysOf(goldenObject(t, s.golden))
					if got := metadataKeysOf(list); !reflect.DeepEqual(got, want) {
						t.Errorf("step %d (%v): list metadata fields %v, golden %s has %v", i, kv, got, s.golden, want)
					}
				}
			}
		}
		// Everything in the namespace, in key order, in pages of two.
		all := sortedKeys(withBaseline(map[string]string{"cm1": "", "page-0": "", "page-1": "", "page-2": "", "page-3": "", "page-4": ""}, base))
		t.Run("no-selector", func(t *testing.T) {
			var steps []step
			for i := 0; i < len(all); i += 2 {
				s := step{query: []string{"limit", "2"}, names: all[i:min(i+2, len(all))], more: i+2 < len(all)}
				if s.more {
					s.remaining = int64(len(all) - i - 2)
				}
				if i == 0 {
					s.golden = "31-list-configmaps-limit2-noselector"
				}
				steps = append(steps, s)
			}
			run(t, steps)
		})
		t.Run("label-selector", func(t *testing.T) {
			run(t, []step{
				{[]string{"limit", "2", "labelSelector", "page=yes"}, []string{"page-0", "page-1"}, nil, true, "29-list-configmaps-limit2"},
				{[]string{"limit", "2", "labelSelector", "page=yes"}, []string{"page-2", "page-3"}, nil, true, "30-list-configmaps-continue"},
				{[]string{"limit", "2", "labelSelector", "page=yes"}, []string{"page-4"}, nil, false, ""},
			})
		})
		t.Run("field-selector", func(t *testing.T) {
			run(t, []step{
				{[]string{"limit", "1", "fieldSelector", "metadata.name!=cm1"}, all[1:2], nil, true, ""},
			})
		})
		t.Run("no-limit", func(t *testing.T) {
			run(t, []step{{nil, all, nil, false, ""}})
		})
		t.Run("limit-equals-size", func(t *testing.T) {
			run(t, []step{{[]string{"limit", fmt.Sprint(len(all))}, all, nil, false, ""}})
		})
		t.Run("limit-above-size", func(t *testing.T) {
			run(t, []step{{[]string{"limit", "500"}, all, nil, false, ""}})
		})
	})

	t.Run("bad-continue", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		checkGoldenStatus(t, e.get(t, cmPath(ns)+"?limit=2&continue=garbage"), "35-list-bad-continue")
	})

	t.Run("expired-continue", func(t *testing.T) {
		t.Parallel()
		e := isolated(t, "forcing compaction of storage")
		ns := e.namespace(t)
		base := e.baseline(t, ns)
		e.createCM(t, ns, "a", nil, nil)
		b := e.createCM(t, ns, "b", nil, nil)
		c := e.createCM(t, ns, "c", nil, nil)
		first := expect(t, e.get(t, cmPath(ns)+q("limit", "1")), http.StatusOK)
		token := str(first, "metadata", "continue")
		if token == "" || !reflect.DeepEqual(names(items(t, first)), []string{"a"}) {
			t.Fatalf("first page: %v %v", first["metadata"], names(items(t, first)))
		}
		b2 := e.updateData(t, ns, b, map[string]string{"v": "2"})
		e.compact(t, rv(b2))
		st := checkGoldenStatus(t, e.get(t, cmPath(ns)+q("limit", "1", "continue", token)), "100-list-expired-continue")
		fresh := str(st, "metadata", "continue")
		if fresh == "" {
			t.Fatal("the 410 carries no continue token to go on with")
		}
		// The fresh token continues after the last key served, at the latest
		// state: an inconsistent but complete continuation, which shows what
		// was written since.
		d := e.createCM(t, ns, "d", nil, nil)
		rest, restRV := listPages(t, e, cmPath(ns), 1, fresh)
		if got, want := versions(rest), withBaseline(versions([]obj{b2, c, d}), base); !reflect.DeepEqual(got, want) {
			t.Errorf("continuing with the fresh token: %v, want %v", got, want)
		}
		if restRV == rv(first) {
			t.Errorf("the continuation is served at the expired resourceVersion %s", restRV)
		}
	})

	// etcd keeps the revision it compacts at readable; so must a server whose
	// store compacted everything up to its current revision (what a
	// background compactor does once the server has been idle for its history
	// window): lists served at that revision must page, Exact reads at it
	// must work, and a watch from it must start.
	t.Run("compacted-at-current-revision", func(t *testing.T) {
		t.Parallel()
		e := isolated(t, "forcing compaction of storage")
		ns := e.namespace(t)
		base := e.baseline(t, ns)
		e.createCM(t, ns, "a", nil, nil)
		last := e.createCM(t, ns, "b", nil, nil)
		e.compact(t, rv(last))
		all, listRV := listAll(t, e, cmPath(ns), 1)
		if !reflect.DeepEqual(names(all), sortedKeys(withBaseline(map[string]string{"a": "", "b": ""}, base))) {
			t.Errorf("paged list after compaction: %v", names(all))
		}
		expect(t, e.get(t, cmPath(ns)+q("resourceVersion", listRV, "resourceVersionMatch", "Exact")), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "resourceVersion", listRV))
		c := e.createCM(t, ns, "c", nil, nil)
		if ev := w.next(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(c) {
			t.Errorf("watch from the compacted-at revision: %v, want ADDED c", ev)
		}
	})
}

// metadataKeysOf returns the keys of a list's metadata.
func metadataKeysOf(o obj) []string {
	m, _ := o["metadata"].(map[string]any)
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sortStrings(k)
	return k
}
