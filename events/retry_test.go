package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/fake"
)

// failing answers the recorder's writes (verb on events) with errs, one
// a write, until they run out or stop is called; then writes go to the
// server. It counts the writes.
type failing struct {
	mu     sync.Mutex
	errs   []error
	always error // once errs run out, if set
	writes int
}

func failWrites(f *fake.Fake, verb string, always error, errs ...error) *failing {
	fl := &failing{errs: errs, always: always}
	f.PrependReactor(verb, "events", func(fake.Action) (bool, any, error) {
		fl.mu.Lock()
		defer fl.mu.Unlock()
		fl.writes++
		if len(fl.errs) > 0 {
			err := fl.errs[0]
			fl.errs = fl.errs[1:]
			return true, nil, err
		}
		if fl.always != nil {
			return true, nil, fl.always
		}
		return false, nil, nil
	})
	return fl
}

func (fl *failing) count() int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.writes
}

func (fl *failing) stop() {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.errs, fl.always = nil, nil
}

func status(code int32, reason metav1.StatusReason) error {
	return client.NewStatusError(&metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: string(reason)})
}

var (
	internalError   = errors.New("etcd is down") // a 500
	tooManyRequests = status(429, metav1.StatusReasonTooManyRequests)
	unavailable     = status(503, metav1.StatusReasonServiceUnavailable)
	forbidden       = client.NewStatusError(metav1.NewForbidden(metav1.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", errors.New("no")))
)

// backoff waits until the writer waits on its backoff timer (beside the
// heartbeat's), moves the clock to just before it fires and checks the
// write is not made, then to it, and waits for the write.
func backoff(t *testing.T, e *env, fl *failing, d time.Duration) {
	t.Helper()
	writes := fl.count()
	waitFor(t, fmt.Sprintf("a backoff of %v", d), func() bool { return e.clock.Timers() == 2 })
	e.clock.Step(d - time.Millisecond)
	if n := e.clock.Timers(); n != 2 {
		t.Fatalf("the backoff fired before %v", d)
	}
	e.clock.Step(time.Millisecond)
	waitFor(t, fmt.Sprintf("the write after %v", d), func() bool { return fl.count() == writes+1 })
}

// A write that fails with an error that may pass is made again after a
// backoff doubling from RetryBackoff, up to MaxRetries times; one the
// server refuses is not.
func TestRetries(t *testing.T) {
	for _, tt := range []struct {
		name       string
		maxRetries int
		errs       []error
		always     error
		backoffs   []time.Duration
		want       events.Counters
	}{
		{"500s pass", 0, []error{internalError, internalError}, nil, []time.Duration{time.Second, 2 * time.Second},
			events.Counters{Emitted: 1, Retried: 2}},
		{"429 and 503 pass", 0, []error{tooManyRequests, unavailable, tooManyRequests}, nil, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			events.Counters{Emitted: 1, Retried: 3}},
		{"given up after MaxRetries", 3, nil, internalError, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
			events.Counters{Failed: 1, Retried: 3}},
		{"forbidden is final", 0, []error{forbidden}, nil, nil,
			events.Counters{Failed: 1}},
		{"no retries", -1, []error{internalError}, nil, nil,
			events.Counters{Failed: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			fl := failWrites(e.f, "create", tt.always, tt.errs...)
			cfg := e.config()
			cfg.MaxRetries = tt.maxRetries
			rec, stop := start(t, e, cfg)
			rec.Eventf(e.pod, nil, events.Normal, "Started", "Start", "")
			waitFor(t, "the first write", func() bool { return fl.count() == 1 })
			for _, d := range tt.backoffs {
				backoff(t, e, fl, d)
			}
			waitCounters(t, rec, "the write done", func(c events.Counters) bool { return c.Emitted+c.Failed == 1 })
			if n := e.clock.Timers(); n != 1 {
				t.Errorf("%d timers once the write is done, want the heartbeat's only (no more retries)", n)
			}
			stop()
			if got := rec.Counters(); got != tt.want {
				t.Errorf("counters %+v, want %+v", got, tt.want)
			}
			if n := fl.count(); n != 1+len(tt.backoffs) {
				t.Errorf("%d writes, want %d", n, 1+len(tt.backoffs))
			}
			if n, want := len(v1Events(t, e.f, "demo")), int(tt.want.Emitted); n != want {
				t.Errorf("%d events stored, want %d", n, want)
			}
		})
	}
}

// A create whose answer was lost (it was applied, the client saw a 500)
// is retried, and the AlreadyExists of the retry counts as created.
func TestRetryAfterLostAnswer(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	writes := 0
	e.f.PrependReactor("create", "events", func(a fake.Action) (bool, any, error) {
		mu.Lock()
		defer mu.Unlock()
		if writes++; writes > 1 {
			return false, nil, nil
		}
		var ev eventsv1.Event
		if err := json.Unmarshal(a.Body, &ev); err != nil {
			return true, nil, err
		}
		if err := e.f.Seed(context.Background(), &ev); err != nil {
			return true, nil, err
		}
		return true, nil, internalError
	})
	rec, stop := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Started", "Start", "")
	waitFor(t, "a backoff", func() bool { return e.clock.Timers() == 2 })
	e.clock.Step(events.RetryBackoff)
	waitCounters(t, rec, "the write done", func(c events.Counters) bool { return c.Emitted+c.Failed == 1 })
	stop()
	if got, want := rec.Counters(), (events.Counters{Emitted: 1, Retried: 1}); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
	if n := len(v1Events(t, e.f, "demo")); n != 1 {
		t.Errorf("%d events stored, want 1", n)
	}
}

// A series update that fails is retried as a create is.
func TestSeriesRetried(t *testing.T) {
	e := newEnv(t)
	fl := failWrites(e.f, "patch", nil, unavailable)
	rec, stop := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Started", "Start", "")
	rec.Eventf(e.pod, nil, events.Normal, "Started", "Start", "") // the series starts: a patch
	waitFor(t, "the first patch", func() bool { return fl.count() == 1 })
	backoff(t, e, fl, events.RetryBackoff)
	waitCounters(t, rec, "the series written", func(c events.Counters) bool { return c.SeriesUpdates == 1 })
	stop()
	if got, want := rec.Counters(), (events.Counters{Emitted: 1, Aggregated: 1, SeriesUpdates: 1, Retried: 1}); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
	if evs := v1Events(t, e.f, "demo"); len(evs) != 1 || evs[0].Series == nil || evs[0].Series.Count != 2 {
		t.Errorf("events %+v, want one with a series of 2", evs)
	}
}

// While the writer waits to retry, Eventf still returns at once: it
// queues, then drops and counts.
func TestEventfDuringBackoff(t *testing.T) {
	e := newEnv(t)
	fl := failWrites(e.f, "create", internalError)
	cfg := e.config()
	cfg.BufferSize = 2
	rec, stop := start(t, e, cfg)
	rec.Eventf(e.pod, nil, events.Normal, "Reason0", "A", "")
	waitFor(t, "a backoff", func() bool { return e.clock.Timers() == 2 })
	eventfReturns(t, func() {
		for i := 1; i <= 5; i++ {
			rec.Eventf(e.pod, nil, events.Normal, fmt.Sprintf("Reason%d", i), "A", "")
		}
	})
	if c := rec.Counters(); c.Dropped != 3 {
		t.Fatalf("counters %+v while the writer backs off, want 3 dropped", c)
	}
	fl.stop()
	e.clock.Step(events.RetryBackoff)
	waitCounters(t, rec, "three emitted", func(c events.Counters) bool { return c.Emitted == 3 })
	stop()
}

// When Run's context is done while the writer backs off, it makes its
// last attempt at once and returns, without the clock moving.
func TestShutdownDuringBackoff(t *testing.T) {
	e := newEnv(t)
	fl := failWrites(e.f, "create", internalError)
	rec, stop := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Started", "Start", "")
	waitFor(t, "a backoff", func() bool { return e.clock.Timers() == 2 })
	stop()
	if got, want := rec.Counters(), (events.Counters{Failed: 1, Retried: 1}); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
	if n := fl.count(); n != 2 {
		t.Errorf("%d writes, want 2 (the first, and one at shutdown)", n)
	}
}
