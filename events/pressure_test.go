package events_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/fake"
)

// blockWrites makes every write of an Event wait until the returned release
// is called; entered receives once per write that started waiting.
func blockWrites(t *testing.T, f *fake.Fake) (entered <-chan struct{}, release func()) {
	in := make(chan struct{}, 100)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	f.PrependReactor("*", "events", func(fake.Action) (bool, any, error) {
		in <- struct{}{}
		<-gate
		return false, nil, nil
	})
	return in, release
}

// eventfReturns calls fn and fails the test if it does not return at once.
func eventfReturns(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("Eventf blocked")
	}
}

// TestEventfNeverBlocks checks that with the writer stuck on the server,
// Eventf fills the buffer, then drops and counts, and returns at once.
func TestEventfNeverBlocks(t *testing.T) {
	e := newEnv(t)
	entered, release := blockWrites(t, e.f)
	cfg := e.config()
	cfg.BufferSize = 2
	rec, stop := start(t, e, cfg)

	emit := func(i int) {
		rec.Eventf(e.pod, nil, events.Normal, fmt.Sprintf("Reason%d", i), "A", "")
	}
	emit(0)
	select {
	case <-entered: // the writer holds event 0
	case <-time.After(waitLimit):
		t.Fatal("no write started")
	}
	eventfReturns(t, func() {
		for i := 1; i <= 10; i++ {
			emit(i) // 1 and 2 fill the buffer, 3 to 10 are dropped
		}
	})
	if c := rec.Counters(); c.Dropped != 8 || c.Emitted != 0 {
		t.Fatalf("counters %+v while the writer is stuck, want 8 dropped", c)
	}
	release()
	waitCounters(t, rec, "three emitted", func(c events.Counters) bool { return c.Emitted == 3 })
	stop()
	if c := rec.Counters(); c.Dropped != 8 || c.Failed != 0 {
		t.Fatalf("counters %+v", c)
	}
	if n := len(v1Events(t, e.f, "demo")); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
}

// TestShutdownFlushes checks that Run, once its context is done, writes
// the events still queued and the series counts not yet written, and that
// Eventf after Run returned drops.
func TestShutdownFlushes(t *testing.T) {
	e := newEnv(t)
	rec, stop := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Synced", "Sync", "")
	waitCounters(t, rec, "emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	for range 2 {
		e.clock.Step(time.Second)
		rec.Eventf(e.pod, nil, events.Normal, "Synced", "Sync", "")
	}
	waitCounters(t, rec, "repeats", func(c events.Counters) bool { return c.Aggregated == 2 })
	// Count 3 waits for the heartbeat, which never comes: Run's end writes it.
	stop()
	wantSeries(t, oneEvent(t, e.f), 3, e.clock.Now())

	rec.Eventf(e.pod, nil, events.Normal, "Late", "Sync", "")
	if c := rec.Counters(); c.Dropped != 1 || c.Emitted != 1 || c.SeriesUpdates != 2 {
		t.Fatalf("counters %+v, want the late event dropped", c)
	}
}

// runCancelled queues n distinct events on a Recorder made with cfg, then
// runs it with a context already done.
func runCancelled(t *testing.T, e *env, cfg events.Config, n int) *events.Recorder {
	t.Helper()
	rec, err := events.New(e.f.Client(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		rec.Eventf(e.pod, nil, events.Normal, fmt.Sprintf("Reason%d", i), "A", "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rec.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestShutdownWritesQueue checks that events queued when Run's context is
// done are written, not lost, even if Run only starts then.
func TestShutdownWritesQueue(t *testing.T) {
	e := newEnv(t)
	rec := runCancelled(t, e, e.config(), 3)
	if c := rec.Counters(); c.Emitted != 3 || c.Dropped != 0 {
		t.Fatalf("counters %+v, want 3 emitted", c)
	}
}

// TestShutdownReportsDropped checks that what Run cannot write within
// FlushTimeout (here none) is counted as dropped.
func TestShutdownReportsDropped(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.FlushTimeout = -1 // no time to flush
	rec := runCancelled(t, e, cfg, 3)
	if c := rec.Counters(); c.Emitted != 0 || c.Dropped != 3 {
		t.Fatalf("counters %+v, want 3 dropped", c)
	}
	if n := len(v1Events(t, e.f, "demo")); n != 0 {
		t.Fatalf("%d events written", n)
	}
}

// TestConcurrentEventf checks that Eventf may be called from many
// goroutines while Run writes, and that every call is accounted for.
func TestConcurrentEventf(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.BufferSize = 16
	rec, stop := start(t, e, cfg)
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				rec.Eventf(e.pod, nil, events.Normal, "Synced", "Sync", "")
			}
		})
	}
	wg.Wait()
	stop()
	c := rec.Counters()
	if c.Emitted != 1 || c.Emitted+c.Aggregated+c.Dropped != goroutines*each || c.Failed != 0 {
		t.Fatalf("counters %+v: not every call accounted for", c)
	}
	wantSeries(t, oneEvent(t, e.f), int32(1+c.Aggregated), epoch)
}

// TestShutdownFinishesWriteInFlight checks that the write under way when
// Run's context is done completes instead of being cancelled with it.
func TestShutdownFinishesWriteInFlight(t *testing.T) {
	e := newEnv(t)
	entered, release := blockWrites(t, e.f)
	rec, err := events.New(e.f.Client(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	rec.Eventf(e.pod, nil, events.Normal, "Synced", "Sync", "")
	select {
	case <-entered:
	case <-time.After(waitLimit):
		t.Fatal("no write started")
	}
	cancel()
	release()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Run did not return")
	}
	if c := rec.Counters(); c.Emitted != 1 || c.Failed != 0 {
		t.Fatalf("counters %+v, want the event in flight emitted", c)
	}
}
