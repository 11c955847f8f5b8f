package events

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// newBare returns a Recorder on a Fake holding pod demo/web, whose
// writer's methods the test calls itself (Run is not started).
func newBare(t *testing.T) (*Recorder, *clocktest.FakeClock, *corev1.Pod) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
	f := fake.New(t, p)
	clock := clocktest.NewFakeClock(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	r, err := New(f.Client(), Config{ReportingController: "c", Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return r, clock, p
}

func (r *Recorder) mustBuild(t *testing.T, p *corev1.Pod, reason string) {
	t.Helper()
	ev, err := r.build(p, nil, Normal, reason, "A", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.record(context.Background(), ev)
}

// TestSeriesMemoryIsBounded checks that past maxSeries remembered series,
// events are written each as an Event of their own instead of remembered.
func TestSeriesMemoryIsBounded(t *testing.T) {
	r, _, p := newBare(t)
	for i := range maxSeries {
		r.series[seriesKey{reason: fmt.Sprint(i)}] = &series{count: 1, written: 1}
	}
	r.mustBuild(t, p, "R")
	r.mustBuild(t, p, "R")
	if c := r.Counters(); c.Emitted != 2 || c.Aggregated != 0 || len(r.series) != maxSeries {
		t.Fatalf("counters %+v, %d series remembered", c, len(r.series))
	}
}

// TestHeartbeatForgetsIdleSeries checks that the heartbeat forgets a series
// not observed for IsomorphismWindow, after writing its last count.
func TestHeartbeatForgetsIdleSeries(t *testing.T) {
	r, clock, p := newBare(t)
	r.mustBuild(t, p, "R")
	r.mustBuild(t, p, "R")
	r.mustBuild(t, p, "R") // count 3, waiting for the heartbeat
	r.heartbeat(context.Background(), clock.Now().Add(IsomorphismWindow))
	if len(r.series) != 1 {
		t.Fatal("a series forgotten within the window")
	}
	r.mustBuild(t, p, "R") // count 4
	r.heartbeat(context.Background(), clock.Now().Add(IsomorphismWindow+time.Nanosecond))
	if c := r.Counters(); len(r.series) != 0 || c.SeriesUpdates != 3 {
		t.Fatalf("counters %+v, %d series remembered; want none, and the last count written", c, len(r.series))
	}
}
