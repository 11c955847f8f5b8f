package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// TestWatch checks watches: the watch parameter, every change after a list's
// resourceVersion exactly once and in order under concurrent writers, the
// initial state of watches without a resourceVersion (golden 95), the
// timeout, bookmarks (golden 93), streaming lists (golden 96, 97), an
// expired resourceVersion (golden 104) and selector transitions.
func TestWatch(t *testing.T) {
	t.Parallel()
	e := target

	t.Run("watch-parameter", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		for _, v := range []string{"1", "true"} {
			list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
			w := e.watch(t, cmPath(ns)+q("watch", v, "resourceVersion", rv(list)))
			c := e.createCM(t, ns, "via-"+v, nil, nil)
			if ev := w.next(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(c) || name(ev.Object) != name(c) {
				t.Errorf("watch=%s: first event %v, want ADDED %s rv=%s", v, ev, name(c), rv(c))
			}
			w.close()
		}
		for _, v := range []string{"false", "0"} {
			list := expect(t, e.get(t, cmPath(ns)+q("watch", v)), http.StatusOK)
			if str(list, "kind") != "ConfigMapList" {
				t.Errorf("watch=%s: want a list, got kind %q", v, str(list, "kind"))
			}
		}
	})

	t.Run("from-list-resourceVersion", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		var base []obj
		for i := range 4 {
			base = append(base, e.createCM(t, ns, fmt.Sprintf("base-%d", i), nil, nil))
		}
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)

		// Each writer creates its object, updates it, updates a base object,
		// and deletes its object; what it did is what the watch must show.
		const nWriters, nUpdates = 4, 5
		results := make([][]write, nWriters)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []string
		started := make(chan struct{})
		var startOnce sync.Once
		for i := range nWriters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := fmt.Sprintf("writer-%d", i)
				step := func(method, path string, body any, code int, typ, objName string) bool {
					r, err := e.send(method, path, body)
					if err != nil || r.Code != code {
						mu.Lock()
						errs = append(errs, fmt.Sprintf("%s %s: %v %v", method, path, err, r))
						mu.Unlock()
						return false
					}
					startOnce.Do(func() { close(started) })
					w := write{typ: typ, name: objName}
					if typ != "DELETED" {
						var o struct {
							Metadata struct{ ResourceVersion string } `json:"metadata"`
						}
						if err := json.Unmarshal(r.Body, &o); err != nil || o.Metadata.ResourceVersion == "" {
							mu.Lock()
							errs = append(errs, fmt.Sprintf("%s %s: no resourceVersion in %s (%v)", method, path, r.Body, err))
							mu.Unlock()
							return false
						}
						w.rv = o.Metadata.ResourceVersion
					}
					results[i] = append(results[i], w)
					return true
				}
				if !step(http.MethodPost, cmPath(ns), configMap(mine, nil, nil), http.StatusCreated, "ADDED", mine) {
					return
				}
				for k := range nUpdates {
					if !step(http.MethodPut, cmPath(ns, mine), configMap(mine, nil, map[string]string{"k": fmt.Sprint(k)}), http.StatusOK, "MODIFIED", mine) {
						return
					}
					b := name(base[(i+k)%len(base)])
					if !step(http.MethodPut, cmPath(ns, b), configMap(b, nil, map[string]string{mine: fmt.Sprint(k)}), http.StatusOK, "MODIFIED", b) {
						return
					}
				}
				step(http.MethodDelete, cmPath(ns, mine), nil, http.StatusOK, "DELETED", mine)
			}()
		}
		// Start watching while the writers are at work.
		select {
		case <-started:
		case <-time.After(e.within(10 * time.Second)):
			wg.Wait()
			t.Fatalf("no writer made progress: %v", errs)
		}
		w := e.watch(t, cmPath(ns)+q("watch", "1", "resourceVersion", rv(list)))
		wg.Wait()
		for _, msg := range errs {
			t.Fatal(msg)
		}
		// A sentinel written after every writer is done: all their events
		// come before its ADDED, and so would any duplicate.
		sentinel := e.createCM(t, ns, "zz-sentinel", nil, nil)
		var got []event
		for {
			ev := w.next(t, 10*time.Second)
			if name(ev.Object) == "zz-sentinel" {
				if ev.Type != "ADDED" || rv(ev.Object) != rv(sentinel) {
					t.Errorf("sentinel event %v, want ADDED rv=%s", ev, rv(sentinel))
				}
				break
			}
			got = append(got, ev)
		}
		// Exactly the writes, each once: per object in the order written,
		// overall in resourceVersion order.
		perObject := map[string][]write{}
		total := 0
		for _, ws := range results {
			for _, w := range ws {
				perObject[w.name] = append(perObject[w.name], w)
				total++
			}
		}
		// Writes to a base object by different writers interleave; their
		// order is the order of their resourceVersions.
		for n, ws := range perObject {
			sortWrites(t, ws)
			perObject[n] = ws
		}
		seen := map[string][]write{}
		var last uint64
		for _, ev := range got {
			n := rvNum(t, rv(ev.Object))
			if n <= last {
				t.Errorf("event %v after resourceVersion %d: out of order", ev, last)
			}
			last = n
			seen[name(ev.Object)] = append(seen[name(ev.Object)], write{typ: ev.Type, name: name(ev.Object), rv: rv(ev.Object)})
		}
		if len(got) != total {
			t.Errorf("got %d events, made %d writes", len(got), total)
		}
		for n, want := range perObject {
			have := seen[n]
			if len(have) != len(want) {
				t.Errorf("%s: events %v, writes %v", n, have, want)
				continue
			}
			for i := range want {
				if have[i].typ != want[i].typ || (want[i].rv != "" && have[i].rv != want[i].rv) {
					t.Errorf("%s: events %v, writes %v", n, have, want)
					break
				}
			}
		}
		for n := range seen {
			if _, ok := perObject[n]; !ok {
				t.Errorf("events for %s, which no writer touched: %v", n, seen[n])
			}
		}
	})

	// golden 95: without a resourceVersion ("most recent") or with "0"
	// ("any"), a watch first sends ADDED for what exists.
	for _, rvParam := range []string{"", "0"} {
		t.Run("initial-state/rv="+rvParam, func(t *testing.T) {
			t.Parallel()
			ns := e.namespace(t)
			secrets := "/api/v1/namespaces/" + ns + "/secrets"
			s1 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s1"}, "data": obj{"k": "dmFsdWU=", "plain": "dGV4dA=="}}), http.StatusCreated)
			s2 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s2"}, "data": obj{"k": "dmFsdWU="}}), http.StatusCreated)
			kv := []string{"watch", "1", "timeoutSeconds", "30"}
			if rvParam != "" {
				kv = append(kv, "resourceVersion", rvParam)
			}
			w := e.watch(t, secrets+q(kv...))
			// Whether the watch starts at the latest state or (with "0") an
			// older one, s1 and s2 arrive as ADDED before s3 does.
			s3 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s3"}}), http.StatusCreated)
			added := map[string]string{}
			goldenEv := decode(t, loadGolden(t, "95-watch-no-rv-initial-state").ResponseBody)
			for {
				ev := w.next(t, 5*time.Second)
				if ev.Type != "ADDED" {
					t.Fatalf("event %v, want only ADDED", ev)
				}
				if name(ev.Object) == "s3" {
					if rv(ev.Object) != rv(s3) {
						t.Errorf("ADDED s3 at %s, created at %s", rv(ev.Object), rv(s3))
					}
					break
				}
				if _, dup := added[name(ev.Object)]; dup {
					t.Errorf("%s added twice", name(ev.Object))
				}
				added[name(ev.Object)] = rv(ev.Object)
				gobj := goldenEv["object"].(map[string]any)
				for _, k := range []string{"kind", "apiVersion", "type"} {
					if ev.Object[k] != gobj[k] {
						t.Errorf("%s: %s = %v, golden 95 has %v", name(ev.Object), k, ev.Object[k], gobj[k])
					}
				}
				if !reflect.DeepEqual(metadataKeys(ev.Object), metadataKeys(gobj)) {
					t.Errorf("%s: metadata fields %v, golden 95 has %v", name(ev.Object), metadataKeys(ev.Object), metadataKeys(gobj))
				}
			}
			if want := versions([]obj{s1, s2}); !reflect.DeepEqual(added, want) {
				t.Errorf("initial ADDED events %v, want %v", added, want)
			}
		})
	}

	// kube-apiserver v1.37: with bookmarks allowed, the ADDED events of the
	// initial state are followed by a BOOKMARK annotated
	// k8s.io/initial-events-end, as after a streaming list.
	for _, rvParam := range []string{"", "0"} {
		t.Run("initial-state-bookmark/rv="+rvParam, func(t *testing.T) {
			t.Parallel()
			ns := e.namespace(t)
			secrets := "/api/v1/namespaces/" + ns + "/secrets"
			s1 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s1"}}), http.StatusCreated)
			kv := []string{"watch", "1", "timeoutSeconds", "30", "allowWatchBookmarks", "true"}
			if rvParam != "" {
				kv = append(kv, "resourceVersion", rvParam)
			}
			w := e.watch(t, secrets+q(kv...))
			ev := w.next(t, 5*time.Second)
			if ev.Type != "ADDED" || name(ev.Object) != "s1" {
				t.Fatalf("first event %s %s, want ADDED s1", ev.Type, compact(ev.Object))
			}
			ev = w.next(t, 5*time.Second)
			if ev.Type != "BOOKMARK" {
				t.Fatalf("event after the initial state: %s %s, want the BOOKMARK ending it", ev.Type, compact(ev.Object))
			}
			checkBookmark(t, ev, "Secret", "v1", true)
			if rvNum(t, rv(ev.Object)) < rvNum(t, rv(s1)) {
				t.Errorf("initial-events-end BOOKMARK at %s, before the state it ends (%s)", rv(ev.Object), rv(s1))
			}
		})
	}

	t.Run("timeoutSeconds", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "timeoutSeconds", "1", "resourceVersion", rv(list)))
		if ev, ok := w.nextOrEnd(t, 15*time.Second); ok {
			t.Fatalf("event %v on an idle namespace", ev)
		}
		if w.err != io.EOF {
			t.Errorf("the stream ended with %v, want a clean end", w.err)
		}
	})

	// golden 93: BOOKMARK objects carry kind, apiVersion and
	// metadata.resourceVersion only. kube-apiserver sends one two seconds
	// before the watch times out (and about every minute); the in-process
	// server too, and every bookmarkInterval.
	t.Run("bookmarks", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "allowWatchBookmarks", "true", "timeoutSeconds", "5", "resourceVersion", rv(list)))
		c := e.createCM(t, ns, "c", nil, nil)
		if ev := w.nextChange(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(c) {
			t.Fatalf("event %v, want ADDED c", ev)
		}
		// A bookmark carries a resourceVersion past the last event: a write
		// elsewhere provides one.
		e.createCM(t, e.namespace(t), "advance", nil, nil)
		var bm event
		for {
			ev, ok := w.nextOrEnd(t, 15*time.Second)
			if !ok {
				t.Fatalf("the watch ended (%v) without a BOOKMARK", w.err)
			}
			if ev.Type != "BOOKMARK" {
				t.Fatalf("event %v on an idle namespace", ev)
			}
			bm = ev
			break
		}
		checkBookmark(t, bm, "ConfigMap", "v1", false)
		if rvNum(t, rv(bm.Object)) < rvNum(t, rv(c)) {
			t.Errorf("BOOKMARK at %s, before the event at %s it follows", rv(bm.Object), rv(c))
		}
	})

	// A watch that allows bookmarks gets one shortly before its timeout
	// (kube-apiserver's cacher: two seconds before the deadline), whatever
	// the bookmark interval (here kube-apiserver's minute), so that the
	// client resumes from a recent resourceVersion. A bookmark only ever
	// carries a resourceVersion past what the watch has seen: a write
	// elsewhere provides one.
	t.Run("bookmarks/before-timeout", func(t *testing.T) {
		t.Parallel()
		e := withDefaults(t, func(c *apiserver.Config) { c.BookmarkInterval = time.Minute })
		ns, elsewhere := e.namespace(t), e.namespace(t)
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		start := time.Now()
		w := e.watch(t, cmPath(ns)+q("watch", "1", "allowWatchBookmarks", "true", "timeoutSeconds", "6", "resourceVersion", rv(list)))
		other := e.createCM(t, elsewhere, "advance", nil, nil)
		var bookmarks []time.Duration
		for {
			ev, ok := w.nextOrEnd(t, 15*time.Second)
			if !ok {
				break
			}
			if ev.Type != "BOOKMARK" {
				t.Fatalf("event %v on an idle namespace", ev)
			}
			checkBookmark(t, ev, "ConfigMap", "v1", false)
			if rvNum(t, rv(ev.Object)) < rvNum(t, rv(other)) {
				t.Errorf("BOOKMARK at %s, before the write at %s", rv(ev.Object), rv(other))
			}
			bookmarks = append(bookmarks, time.Since(start))
		}
		if w.err != io.EOF {
			t.Errorf("the stream ended with %v, want a clean end", w.err)
		}
		// Due 4s after the start; kube-apiserver's cacher sends bookmarks
		// on a one-second clock, and may send a second one on its next tick
		// when its resourceVersion has moved on meanwhile.
		inWindow := len(bookmarks) > 0
		for _, at := range bookmarks {
			inWindow = inWindow && at >= 2500*time.Millisecond && at <= 5500*time.Millisecond
		}
		if !inWindow {
			t.Errorf("bookmarks at %v after the start (the watch ended after %v), want them about 4s after, 2s before the timeout", bookmarks, time.Since(start))
		}
	})

	// golden 96: a streaming list sends the state as ADDED events, then a
	// BOOKMARK annotated k8s.io/initial-events-end, then changes.
	for _, rvParam := range []string{"", "list"} {
		t.Run("sendInitialEvents/rv="+rvParam, func(t *testing.T) {
			t.Parallel()
			ns := e.namespace(t)
			secrets := "/api/v1/namespaces/" + ns + "/secrets"
			s1 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s1"}}), http.StatusCreated)
			s2 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s2"}}), http.StatusCreated)
			kv := []string{"watch", "1", "timeoutSeconds", "30", "sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan", "allowWatchBookmarks", "true"}
			if rvParam == "list" {
				list := expect(t, e.get(t, secrets), http.StatusOK)
				kv = append(kv, "resourceVersion", rv(list))
			}
			w := e.watch(t, secrets+q(kv...))
			added := map[string]string{}
			var end event
			for {
				ev := w.next(t, 5*time.Second)
				if ev.Type == "BOOKMARK" {
					end = ev
					break
				}
				if ev.Type != "ADDED" {
					t.Fatalf("initial event %v, want ADDED", ev)
				}
				added[name(ev.Object)] = rv(ev.Object)
			}
			if want := versions([]obj{s1, s2}); !reflect.DeepEqual(added, want) {
				t.Errorf("initial events %v, want %v", added, want)
			}
			checkBookmark(t, end, "Secret", "v1", true)
			if rvNum(t, rv(end.Object)) < rvNum(t, rv(s2)) {
				t.Errorf("initial-events-end BOOKMARK at %s, before the state it ends (%s)", rv(end.Object), rv(s2))
			}
			s3 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s3"}}), http.StatusCreated)
			if ev := w.nextChange(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(s3) {
				t.Errorf("event after the initial events: %v, want ADDED s3", ev)
			}
		})
	}

	// As a Table, the bookmark that ends the initial events is printed like
	// any event: a row for the bookmark's empty object, whose metadata
	// (PartialObjectMetadata) carries the initial-events-end annotation.
	t.Run("sendInitialEvents/table", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		secrets := "/api/v1/namespaces/" + ns + "/secrets"
		expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s1"}}), http.StatusCreated)
		w := e.watch(t, secrets+q("watch", "1", "timeoutSeconds", "30", "sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan", "allowWatchBookmarks", "true"),
			"Accept", tableAccept)
		for {
			ev := w.next(t, 5*time.Second)
			if str(ev.Object, "kind") != "Table" {
				t.Fatalf("event %s object %s, want a Table", ev.Type, compact(ev.Object))
			}
			if ev.Type != "BOOKMARK" {
				continue
			}
			rows := asList(ev.Object["rows"])
			if len(rows) != 1 {
				t.Fatalf("bookmark Table %s, want one row", compact(ev.Object))
			}
			o, _ := field(rows[0], "object")
			row, _ := o.(map[string]any)
			if str(row, "kind") != "PartialObjectMetadata" || str(row, "metadata", "annotations", "k8s.io/initial-events-end") != "true" ||
				str(row, "metadata", "resourceVersion") != rv(ev.Object) {
				t.Errorf("bookmark row %s, want the empty object's metadata with k8s.io/initial-events-end at the Table's resourceVersion", compact(rows[0]))
			}
			return
		}
	})

	// sendInitialEvents only on a watch, and only with
	// resourceVersionMatch=NotOlderThan: anything else is refused as invalid
	// ListOptions (422), as kube-apiserver validates them.
	t.Run("sendInitialEvents/invalid", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ query, msg string }{
			{q("watch", "1", "sendInitialEvents", "true"), "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
			{q("watch", "1", "sendInitialEvents", "true", "resourceVersionMatch", "Exact", "resourceVersion", "1"), "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
			{q("sendInitialEvents", "true"), "sendInitialEvents is forbidden for list"},
		} {
			checkStatus(t, e.get(t, "/api/v1/configmaps"+tc.query), http.StatusUnprocessableEntity, "Invalid", tc.msg)
		}
	})

	// golden 97: without allowWatchBookmarks, no BOOKMARK at all.
	t.Run("sendInitialEvents/no-bookmarks", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		secrets := "/api/v1/namespaces/" + ns + "/secrets"
		s1 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s1"}}), http.StatusCreated)
		w := e.watch(t, secrets+q("watch", "1", "timeoutSeconds", "30", "sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan"))
		if ev := w.next(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(s1) {
			t.Fatalf("first event %v, want ADDED s1", ev)
		}
		s2 := expect(t, e.post(t, secrets, obj{"metadata": obj{"name": "s2"}}), http.StatusCreated)
		if ev := w.next(t, 5*time.Second); ev.Type != "ADDED" || rv(ev.Object) != rv(s2) {
			t.Errorf("event after the initial events: %v, want ADDED s2 (and no BOOKMARK)", ev)
		}
	})

	// golden 104: a watch from a compacted resourceVersion is answered 200,
	// then one ERROR event carrying a 410 Expired Status, then the end.
	t.Run("compacted", func(t *testing.T) {
		t.Parallel()
		e := isolated(t, "forcing compaction of storage")
		ns := e.namespace(t)
		old := e.createCM(t, ns, "old", nil, nil)
		cur := e.updateData(t, ns, old, map[string]string{"v": "2"})
		e.createCM(t, ns, "after", nil, nil)
		e.compact(t, rv(cur))
		g := loadGolden(t, "104-watch-compacted-rv")
		w := e.watch(t, "/api/v1/configmaps"+q("watch", "1", "timeoutSeconds", "2", "resourceVersion", rv(old)))
		ev := w.next(t, 5*time.Second)
		want := decode(t, g.ResponseBody)
		have := obj{"type": ev.Type, "object": ev.Object}
		if !reflect.DeepEqual(have, want) {
			t.Errorf("event\n%s\nwant golden 104's\n%s", compact(have), compact(want))
		}
		if ev, ok := w.nextOrEnd(t, 10*time.Second); ok {
			t.Errorf("event %v after the ERROR", ev)
		}
	})

	// An object that stops matching the selector is DELETED for the watcher
	// (with its previous state, at the event's resourceVersion, as
	// kube-apiserver sends it); one that starts matching is ADDED.
	t.Run("selector-transitions", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		w := e.watch(t, cmPath(ns)+q("watch", "1", "labelSelector", "app=x", "resourceVersion", rv(list)))
		relabel := func(o obj, app string) obj {
			next := clone(o)
			next["metadata"].(map[string]any)["labels"] = obj{"app": app}
			return expect(t, e.put(t, cmPath(ns, name(o)), next), http.StatusOK)
		}
		m1 := e.createCM(t, ns, "m", map[string]string{"app": "x"}, nil)
		other := e.createCM(t, ns, "other", map[string]string{"app": "y"}, nil)
		m2 := relabel(m1, "y")
		m3 := relabel(m2, "x")
		m4 := e.updateData(t, ns, m3, map[string]string{"v": "1"})
		e.updateData(t, ns, other, map[string]string{"v": "1"}) // never matches: no event
		expect(t, e.del(t, cmPath(ns, "m"), nil), http.StatusOK)

		ev := w.next(t, 5*time.Second)
		if ev.Type != "ADDED" || rv(ev.Object) != rv(m1) {
			t.Fatalf("event 1: %v, want ADDED m at %s", ev, rv(m1))
		}
		ev = w.next(t, 5*time.Second)
		if ev.Type != "DELETED" || name(ev.Object) != "m" || rv(ev.Object) != rv(m2) {
			t.Fatalf("event 2: %v, want DELETED m at %s (it stopped matching)", ev, rv(m2))
		}
		t.Run("deleted-carries-previous-state", func(t *testing.T) {
			if l := str(ev.Object, "metadata", "labels", "app"); l != "x" {
				t.Errorf("DELETED for a selector transition carries app=%q, want the previous state (app=x)", l)
			}
		})
		ev = w.next(t, 5*time.Second)
		if ev.Type != "ADDED" || rv(ev.Object) != rv(m3) || str(ev.Object, "metadata", "labels", "app") != "x" {
			t.Fatalf("event 3: %v, want ADDED m at %s (it matches again)", ev, rv(m3))
		}
		ev = w.next(t, 5*time.Second)
		if ev.Type != "MODIFIED" || rv(ev.Object) != rv(m4) {
			t.Fatalf("event 4: %v, want MODIFIED m at %s", ev, rv(m4))
		}
		ev = w.next(t, 5*time.Second)
		if ev.Type != "DELETED" || name(ev.Object) != "m" {
			t.Fatalf("event 5: %v, want DELETED m (other never matched)", ev)
		}
	})
}

// checkBookmark checks a BOOKMARK's object: only kind, apiVersion and
// metadata.resourceVersion (kube-apiserver also writes creationTimestamp:
// null, which is absent), plus for the end of initial events the
// k8s.io/initial-events-end annotation.
func checkBookmark(t *testing.T, ev event, kind, apiVersion string, initialEnd bool) {
	t.Helper()
	o := ev.Object
	if str(o, "kind") != kind || str(o, "apiVersion") != apiVersion {
		t.Errorf("BOOKMARK object %s, want kind %s apiVersion %s", compact(o), kind, apiVersion)
	}
	for k := range o {
		if k != "kind" && k != "apiVersion" && k != "metadata" {
			t.Errorf("BOOKMARK object has %q: %s", k, compact(o))
		}
	}
	meta, _ := o["metadata"].(map[string]any)
	if str(o, "metadata", "resourceVersion") == "" {
		t.Errorf("BOOKMARK without a resourceVersion: %s", compact(o))
	}
	for k, v := range meta {
		switch {
		case k == "resourceVersion":
		case k == "creationTimestamp" && v == nil:
		case k == "annotations" && initialEnd:
			ann := v.(map[string]any)
			if ann["k8s.io/initial-events-end"] != "true" {
				t.Errorf("BOOKMARK annotations %v, want k8s.io/initial-events-end: \"true\"", ann)
			}
			for a := range ann {
				// kube-apiserver v1.32 also describes the list type.
				if a != "k8s.io/initial-events-end" && a != "kubernetes.io/initial-events-list-blueprint" {
					t.Errorf("BOOKMARK annotation %q", a)
				}
			}
		default:
			t.Errorf("BOOKMARK metadata has %q: %s", k, compact(o))
		}
	}
	if initialEnd && !has(o, "metadata", "annotations") {
		t.Errorf("the BOOKMARK ending the initial events lacks the k8s.io/initial-events-end annotation: %s", compact(o))
	}
}

// sortWrites orders the writes to one object by resourceVersion; a delete
// (whose resourceVersion the client does not learn) is the last write.
func sortWrites(t *testing.T, ws []write) {
	key := func(w write) uint64 {
		if w.rv == "" {
			return math.MaxUint64
		}
		return rvNum(t, w.rv)
	}
	sort.SliceStable(ws, func(i, j int) bool { return key(ws[i]) < key(ws[j]) })
}

// write is one write a case made, as a watch must report it.
type write struct {
	typ, name, rv string // rv is empty for a delete (the response is a Status)
}
