package workqueue_test

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// TestRandomizedConcurrent drives a rate-limiting queue with random Add,
// AddAfter and AddRateLimited calls from several producers while workers
// process items and a driver moves the fake clock, then checks the
// invariants:
//
//   - no item is ever held by two workers at once;
//   - Len never exceeds the number of distinct items;
//   - no add is lost: every item's last add is followed by a Get;
//   - de-duplication: there are never more Gets than adds.
//
// Seeds make the choices repeatable; the interleaving is up to the
// scheduler, which is the point.
func TestRandomizedConcurrent(t *testing.T) {
	tests := []struct {
		name                        string
		seed                        uint64
		workers, producers, keys, n int
		delays                      bool // also AddAfter and AddRateLimited
	}{
		{name: "few keys, many workers", seed: 1, workers: 16, producers: 4, keys: 3, n: 2000},
		{name: "many keys", seed: 2, workers: 8, producers: 8, keys: 500, n: 2000},
		{name: "one worker", seed: 3, workers: 1, producers: 4, keys: 10, n: 2000},
		{name: "delays, few keys", seed: 4, workers: 8, producers: 4, keys: 4, n: 1000, delays: true},
		{name: "delays, many keys", seed: 5, workers: 8, producers: 4, keys: 200, n: 1000, delays: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktest.NewFakeClock(epoch)
			q := workqueue.NewRateLimiting(
				workqueue.NewItemExponentialFailureRateLimiter[int](time.Millisecond, 8*time.Millisecond),
				workqueue.Config{Clock: clock})
			const probe = -1
			var (
				tick             atomic.Uint64 // orders adds and gets
				lastAdd          = make([]atomic.Uint64, tt.keys)
				lastGet          = make([]atomic.Uint64, tt.keys)
				inFlight         = make([]atomic.Int32, tt.keys)
				adds, gets       atomic.Int64
				probeSeen        = make(chan struct{})
				workers, drivers sync.WaitGroup
				producers        sync.WaitGroup
				stopClock        = make(chan struct{})
				maxLen           atomic.Uint64
			)

			for w := range tt.workers {
				rng := rand.New(rand.NewPCG(tt.seed, uint64(1000+w)))
				workers.Go(func() {
					for {
						item, shutdown := q.Get()
						if shutdown {
							return
						}
						if item == probe {
							close(probeSeen)
							q.Done(item)
							continue
						}
						storeMax(&lastGet[item], tick.Add(1))
						gets.Add(1)
						if n := inFlight[item].Add(1); n != 1 {
							t.Errorf("item %d held by %d workers", item, n)
						}
						if rng.IntN(4) == 0 {
							runtime.Gosched() // hold it a little longer
						}
						if rng.IntN(3) == 0 {
							q.Forget(item)
						}
						inFlight[item].Add(-1)
						q.Done(item)
					}
				})
			}
			if tt.delays {
				drivers.Go(func() {
					for {
						select {
						case <-stopClock:
							return
						default:
							clock.Step(time.Millisecond)
							runtime.Gosched()
						}
					}
				})
			}
			for p := range tt.producers {
				rng := rand.New(rand.NewPCG(tt.seed, uint64(p)))
				producers.Go(func() {
					for range tt.n {
						item := rng.IntN(tt.keys)
						storeMax(&lastAdd[item], tick.Add(1))
						adds.Add(1)
						switch op := rng.IntN(4); {
						case !tt.delays || op < 2:
							q.Add(item)
						case op == 2:
							q.AddAfter(item, time.Duration(rng.IntN(10))*time.Millisecond)
						default:
							q.AddRateLimited(item)
						}
						storeMax(&maxLen, uint64(q.Len()))
						if rng.IntN(4) == 0 {
							runtime.Gosched() // let the workers catch up
						}
					}
				})
			}

			within(t, "producers", producers.Wait)
			close(stopClock)
			within(t, "clock driver", drivers.Wait)
			// Everything delayed is due within 10ms; the probe is due after
			// all of it, so once a worker takes the probe, every delayed
			// item has been queued.
			q.AddAfter(probe, time.Second)
			clock.Step(time.Second)
			waitClosed(t, probeSeen, "probe")
			q.ShutDown() // workers take what is queued, then stop
			within(t, "workers to stop after ShutDown", workers.Wait)

			for item := range tt.keys {
				if a, g := lastAdd[item].Load(), lastGet[item].Load(); a > g {
					t.Errorf("item %d: last add at tick %d, last get at %d: an add was lost", item, a, g)
				}
			}
			if g, a := gets.Load(), adds.Load(); g > a {
				t.Errorf("%d gets for %d adds", g, a)
			}
			if n := maxLen.Load(); n > uint64(tt.keys)+1 {
				t.Errorf("Len reached %d with %d distinct items", n, tt.keys)
			}
			t.Logf("%d adds, %d gets", adds.Load(), gets.Load())
		})
	}
}

// FuzzQueueModel checks a single-goroutine sequence of operations against a
// reference model of the queue. Each byte is one operation on one of four
// items; the fuzzer's corpus explores orders that hand-written cases miss.
func FuzzQueueModel(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0x02, 0x06, 0x04, 0x05, 0xff, 0x01, 0x01})
	f.Add([]byte{0x00, 0x04, 0x01, 0x00, 0x02, 0x01, 0x02})
	f.Add([]byte{0x00, 0x04, 0x08, 0x01, 0x01, 0x01, 0x01, 0x0e, 0x02, 0x06})
	f.Fuzz(func(t *testing.T, ops []byte) {
		q := workqueue.New[int](workqueue.Config{})
		defer q.ShutDown()
		m := newModel()
		for i, b := range ops {
			item := int(b>>2) % 4
			switch {
			case b == 0xff:
				q.ShutDown()
				m.shutDown()
			case b&3 == 0:
				q.Add(item)
				m.add(item)
			case b&3 == 1:
				want, ok := m.get()
				if !ok && !m.shut {
					continue // Get would block
				}
				got, shutdown := q.Get()
				if shutdown == ok || ok && got != want {
					t.Fatalf("op %d: Get = %d, %v; want %d, %v", i, got, shutdown, want, !ok)
				}
			default:
				q.Done(item)
				m.done(item)
			}
			if got, want := q.Len(), len(m.order); got != want {
				t.Fatalf("op %d: Len = %d, want %d", i, got, want)
			}
		}
	})
}

// model is the obvious, slow implementation of the queue's rules.
type model struct {
	order             []int
	dirty, processing map[int]bool
	shut              bool
}

func newModel() *model {
	return &model{dirty: map[int]bool{}, processing: map[int]bool{}}
}

func (m *model) add(item int) {
	if m.shut || m.dirty[item] {
		return
	}
	m.dirty[item] = true
	if !m.processing[item] {
		m.order = append(m.order, item)
	}
}

func (m *model) get() (int, bool) {
	if len(m.order) == 0 {
		return 0, false
	}
	item := m.order[0]
	m.order = m.order[1:]
	delete(m.dirty, item)
	m.processing[item] = true
	return item, true
}

func (m *model) done(item int) {
	if !m.processing[item] {
		return
	}
	delete(m.processing, item)
	if m.dirty[item] {
		m.order = append(m.order, item)
	}
}

func (m *model) shutDown() { m.shut = true }
