package workqueue_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/workqueue"
)

// BenchmarkQueue measures one Add, Get and Done of a distinct item per
// operation.
//
//   - serial: one goroutine adds, gets and finishes each item in turn;
//   - workers=N: the benchmark goroutine adds b.N items while N workers
//     take and finish them;
//   - producers=P/workers=N: P goroutines add and N workers process;
//   - dedup/workers=N: one producer adds from 16 keys, most adds collapse
//     (ns/op is per Add).
func BenchmarkQueue(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		q := workqueue.New[int](workqueue.Config{})
		defer q.ShutDown()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q.Add(i)
			item, _ := q.Get()
			q.Done(item)
		}
	})
	for _, workers := range []int{1, 8} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			benchWorkers(b, 1, workers, func(i int) int { return i })
		})
	}
	b.Run("producers=8/workers=8", func(b *testing.B) {
		benchWorkers(b, 8, 8, func(i int) int { return i })
	})
	b.Run("dedup/workers=8", func(b *testing.B) {
		benchWorkers(b, 1, 8, func(i int) int { return i % 16 })
	})
}

// benchWorkers adds b.N items, key(i) for i in [0, b.N), from producers
// goroutines, while workers goroutines process them, and returns once
// everything queued has been processed.
func benchWorkers(b *testing.B, producers, workers int, key func(int) int) {
	q := workqueue.New[int](workqueue.Config{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(item)
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	var pg sync.WaitGroup
	for p := range producers {
		pg.Go(func() {
			for i := p; i < b.N; i += producers {
				q.Add(key(i))
			}
		})
	}
	pg.Wait()
	q.ShutDown() // workers finish the backlog, then stop
	wg.Wait()
}

// BenchmarkAddAfter measures scheduling distinct items into the delay heap.
func BenchmarkAddAfter(b *testing.B) {
	q := workqueue.NewDelaying[int](workqueue.Config{})
	defer q.ShutDown()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.AddAfter(i, 1<<40)
	}
}
