package storage

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("/core/configmaps/ns-%d/cm-%07d", i%10, i)
	}
	return keys
}

func benchObj(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm-" + strconv.Itoa(i), Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"k": "v"},
	}
}

func fill(b *testing.B, m Interface, n int) []string {
	b.Helper()
	keys := benchKeys(n)
	for i, k := range keys {
		if _, err := m.Create(context.Background(), k, benchObj(i)); err != nil {
			b.Fatal(err)
		}
	}
	return keys
}

// BenchmarkCreate measures a Create (including building the object).
func BenchmarkCreate(b *testing.B) {
	m := newStore(b, MemoryConfig{})
	keys := benchKeys(b.N)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := m.Create(ctx, keys[i], benchObj(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate8 measures Creates from 8 goroutines (with -backend=bbolt,
// acknowledged writes sharing fsyncs).
func BenchmarkCreate8(b *testing.B) {
	m := newStore(b, MemoryConfig{})
	keys := benchKeys(b.N)
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1) - 1)
			if _, err := m.Create(ctx, keys[i], benchObj(i)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkUpdate measures a GuaranteedUpdate of one of 10,000 objects.
func BenchmarkUpdate(b *testing.B) {
	m := newStore(b, MemoryConfig{})
	keys := fill(b, m, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		_, err := m.GuaranteedUpdate(ctx, keys[i%len(keys)], false, nil, func(cur Object) (Object, error) {
			c := *cur.(*corev1.ConfigMap)
			return &c, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet reads one of 10,000 objects at the latest revision.
func BenchmarkGet(b *testing.B) {
	m := newStore(b, MemoryConfig{})
	keys := fill(b, m, 10_000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := m.Get(ctx, keys[i%len(keys)], ReadOptions{}); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
}

// BenchmarkList lists 10,000 and 50,000 objects, whole and in pages of 500
// (one op is the whole collection either way).
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10_000, 50_000} {
		m := newStore(b, MemoryConfig{})
		keys := fill(b, m, n)
		// Some history, so reads pick among versions.
		for _, k := range keys[:n/10] {
			m.GuaranteedUpdate(ctx, k, false, nil, func(cur Object) (Object, error) {
				c := *cur.(*corev1.ConfigMap)
				return &c, nil
			})
		}
		b.Run(fmt.Sprintf("%d/whole", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				res, err := m.List(ctx, "/core/configmaps/", ListOptions{})
				if err != nil || len(res.Items) != n {
					b.Fatal(err, len(res.Items))
				}
			}
		})
		b.Run(fmt.Sprintf("%d/paged500", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				token, got := "", 0
				for {
					res, err := m.List(ctx, "/core/configmaps/", ListOptions{Limit: 500, Continue: token})
					if err != nil {
						b.Fatal(err)
					}
					got += len(res.Items)
					if token = res.Continue; token == "" {
						break
					}
				}
				if got != n {
					b.Fatal(got)
				}
			}
		})
		b.Run(fmt.Sprintf("%d/predicate-1%%-limit500", n), func(b *testing.B) {
			pred := func(o Object) bool { return len(o.GetName()) > 0 && o.GetName()[len(o.GetName())-2:] == "00" }
			b.ReportAllocs()
			for range b.N {
				if _, err := m.List(ctx, "/core/configmaps/", ListOptions{Limit: 500, Predicate: pred}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatchFanout has one writer updating objects in bursts of 500
// while watchers (each drained by a consumer) follow the collection; after
// each burst the writer waits until every watcher has received it, so no
// watcher overflows its default buffer. ns/op is the time per write until all
// watchers have it; writer-ns/write is the time spent in the writes alone
// (on few CPUs it includes sharing them with the watchers); events/s counts
// the events delivered to all watchers.
func BenchmarkWatchFanout(b *testing.B) {
	const burst = 500
	for _, watchers := range []int{0, 1, 10, 200} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			m := newStore(b, MemoryConfig{})
			keys := fill(b, m, 1000)
			ctx := context.Background()
			var burstEnd atomic.Uint64
			var caughtUp sync.WaitGroup
			var consumers sync.WaitGroup
			for range watchers {
				w, err := m.Watch(ctx, "/core/configmaps/", WatchOptions{})
				if err != nil {
					b.Fatal(err)
				}
				consumers.Go(func() {
					for e := range w.ResultChan() {
						if e.Type == Failed {
							b.Error(e.Err)
							caughtUp.Done()
							return
						}
						if e.Revision == burstEnd.Load() {
							caughtUp.Done()
						}
					}
				})
				b.Cleanup(w.Stop)
			}
			var writing time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(burst, b.N-done)
				burstEnd.Store(m.Revision() + uint64(n))
				caughtUp.Add(watchers)
				t0 := time.Now()
				for i := range n {
					_, err := m.GuaranteedUpdate(ctx, keys[(done+i)%len(keys)], false, nil, func(cur Object) (Object, error) {
						c := *cur.(*corev1.ConfigMap)
						return &c, nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				writing += time.Since(t0)
				caughtUp.Wait()
				done += n
			}
			b.StopTimer()
			b.ReportMetric(float64(writing.Nanoseconds())/float64(b.N), "writer-ns/write")
			if watchers > 0 {
				b.ReportMetric(float64(watchers)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			}
		})
	}
}

// BenchmarkWriteIdleWatchers measures writes while 200 watchers follow a
// prefix nothing is written to: they wake up and scan but deliver nothing.
func BenchmarkWriteIdleWatchers(b *testing.B) {
	for _, watchers := range []int{0, 200} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			m := newStore(b, MemoryConfig{})
			keys := fill(b, m, 1000)
			ctx := context.Background()
			for range watchers {
				mustWatch(b, m, "/elsewhere/", WatchOptions{})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				_, err := m.GuaranteedUpdate(ctx, keys[i%len(keys)], false, nil, func(cur Object) (Object, error) {
					c := *cur.(*corev1.ConfigMap)
					return &c, nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
