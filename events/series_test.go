package events_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/fake"
)

// patches counts the patches of Events the client sent.
func patches(f *fake.Fake) int {
	n := 0
	for _, a := range f.Actions() {
		if a.Verb == "patch" && a.Resource.Resource == "events" {
			n++
		}
	}
	return n
}

// oneEvent returns the only events.k8s.io Event of namespace demo.
func oneEvent(t *testing.T, f *fake.Fake) eventsv1.Event {
	t.Helper()
	got := v1Events(t, f, "demo")
	if len(got) != 1 {
		t.Fatalf("%d events, want 1", len(got))
	}
	return got[0]
}

func wantSeries(t *testing.T, ev eventsv1.Event, count int32, last time.Time) {
	t.Helper()
	if ev.Series == nil || ev.Series.Count != count || !ev.Series.LastObservedTime.Time.Equal(last) {
		t.Fatalf("series %+v, want count %d last observed %v", ev.Series, count, last)
	}
}

// TestSeries checks repeats of an event: the first repeat starts the
// series on the server at once, later ones are written together at the
// heartbeat, and a repeat after the isomorphism window starts a new Event.
func TestSeries(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	waitFor(t, "the heartbeat armed", func() bool { return e.clock.Timers() == 1 })
	emit := func(reason string) {
		rec.Eventf(e.pod, nil, events.Normal, reason, "Sync", "synced")
	}

	emit("Synced")
	waitCounters(t, rec, "emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	first := oneEvent(t, e.f)
	if first.Series != nil {
		t.Fatalf("a new event has a series: %+v", first.Series)
	}

	e.clock.Step(time.Second)
	t1 := e.clock.Now()
	// The pod changes: its resourceVersion does not break the series.
	e.pod.ResourceVersion += "0"
	emit("Synced")
	waitCounters(t, rec, "the series started", func(c events.Counters) bool { return c.SeriesUpdates == 1 })
	ev := oneEvent(t, e.f)
	wantSeries(t, ev, 2, t1)
	if ev.Name != first.Name || ev.Note != "synced" || !ev.EventTime.Time.Equal(first.EventTime.Time) {
		t.Fatalf("series written to another event: %+v", ev)
	}

	e.clock.Step(time.Second)
	emit("Synced")
	e.clock.Step(time.Second)
	t3 := e.clock.Now()
	emit("Synced")
	waitCounters(t, rec, "two more repeats", func(c events.Counters) bool { return c.Aggregated == 3 })
	if n := patches(e.f); n != 1 {
		t.Fatalf("%d patches before the heartbeat, want 1 (repeats wait for it)", n)
	}
	wantSeries(t, oneEvent(t, e.f), 2, t1)

	e.clock.SetTime(epoch.Add(events.SeriesHeartbeat))
	waitCounters(t, rec, "the heartbeat wrote the series", func(c events.Counters) bool { return c.SeriesUpdates == 2 })
	wantSeries(t, oneEvent(t, e.f), 4, t3)

	// A heartbeat with nothing new writes nothing.
	e.clock.Step(events.SeriesHeartbeat)
	emit("Other") // another reason: another Event
	waitCounters(t, rec, "the other event", func(c events.Counters) bool { return c.Emitted == 2 })
	if c := rec.Counters(); c.SeriesUpdates != 2 {
		t.Fatalf("counters %+v after an idle heartbeat", c)
	}

	// Past the isomorphism window a repeat is a new Event. The last
	// heartbeat before it is over (6 minutes after epoch) keeps the series;
	// the repeat comes 4 seconds later, before the next heartbeat.
	e.clock.SetTime(epoch.Add(events.IsomorphismWindow))
	waitFor(t, "the heartbeat re-armed", func() bool { return e.clock.Timers() == 1 })
	e.clock.SetTime(t3.Add(events.IsomorphismWindow + time.Second))
	emit("Synced")
	waitCounters(t, rec, "a new event", func(c events.Counters) bool { return c.Emitted == 3 })
	if c := rec.Counters(); c.Aggregated != 3 || c.Failed != 0 {
		t.Fatalf("counters %+v", c)
	}
	n := 0
	for _, ev := range v1Events(t, e.f, "demo") {
		if ev.Reason == "Synced" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d Synced events, want 2", n)
	}
}

// TestSeriesRecreatesExpiredEvent checks that a series whose Event is gone
// (Events expire on the server) is written by creating it again.
func TestSeriesRecreatesExpiredEvent(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Synced", "Sync", "")
	waitCounters(t, rec, "emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	name := oneEvent(t, e.f).Name
	if err := client.For[eventsv1.Event](e.f.Client()).Namespace("demo").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Second)
	rec.Eventf(e.pod, nil, events.Normal, "Synced", "Sync", "")
	waitCounters(t, rec, "series written", func(c events.Counters) bool { return c.SeriesUpdates == 1 })
	ev := oneEvent(t, e.f)
	if ev.Name != name {
		t.Fatalf("recreated as %s, want %s", ev.Name, name)
	}
	wantSeries(t, ev, 2, e.clock.Now())
}

// unservedEvents makes f answer every request about events.k8s.io Events
// with a 404, as a server without the API does.
func unservedEvents(f *fake.Fake) {
	f.PrependReactor("*", "events", func(a fake.Action) (bool, any, error) {
		if a.Resource.Group != "events.k8s.io" {
			return false, nil, nil
		}
		return true, nil, client.NewStatusError(metav1.NewNotFound(metav1.GroupResource{Group: "events.k8s.io", Resource: "events"}, a.Name))
	})
}

// TestCoreFallback checks that on a server without events.k8s.io/v1 the
// recorder writes old-style core/v1 Events, series as count and
// lastTimestamp, and stops trying events.k8s.io.
func TestCoreFallback(t *testing.T) {
	e := newEnv(t)
	unservedEvents(e.f)
	rec, _ := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Warning, "BackOff", "Restart", "restarting %s", "c")
	waitCounters(t, rec, "emitted", func(c events.Counters) bool { return c.Emitted == 1 })

	got := coreEvents(t, e.f, "demo")
	if len(got) != 1 {
		t.Fatalf("%d core events, want 1", len(got))
	}
	ev := got[0]
	ts := metav1.NewTime(epoch)
	want := corev1.Event{
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "demo", Name: "web",
			UID: e.pod.UID, ResourceVersion: e.pod.ResourceVersion},
		Reason:              "BackOff",
		Message:             "restarting c",
		Source:              corev1.EventSource{Component: "example.com/controller", Host: "controller-1"},
		FirstTimestamp:      ts,
		LastTimestamp:       ts,
		Count:               1,
		Type:                "Warning",
		Action:              "Restart",
		ReportingController: "example.com/controller",
		ReportingInstance:   "controller-1",
	}
	if ev.Name != "web."+hex(epoch) {
		t.Errorf("name %s", ev.Name)
	}
	ev.TypeMeta, ev.ObjectMeta = metav1.TypeMeta{}, metav1.ObjectMeta{}
	if a, b := mustJSON(t, ev), mustJSON(t, want); a != b {
		t.Errorf("core event stored as\n%s\nwant\n%s", a, b)
	}

	e.clock.Step(2 * time.Second)
	rec.Eventf(e.pod, nil, events.Warning, "BackOff", "Restart", "restarting %s", "c")
	waitCounters(t, rec, "series written", func(c events.Counters) bool { return c.SeriesUpdates == 1 })
	ev = coreEvents(t, e.f, "demo")[0]
	if ev.Count != 2 || !ev.LastTimestamp.Time.Equal(epoch.Add(2*time.Second)) || !ev.FirstTimestamp.Time.Equal(epoch) {
		t.Errorf("after a repeat: count %d first %v last %v", ev.Count, ev.FirstTimestamp, ev.LastTimestamp)
	}

	rec.Eventf(e.pod, nil, events.Normal, "Other", "Restart", "")
	waitCounters(t, rec, "second event", func(c events.Counters) bool { return c.Emitted == 2 })
	tries := 0
	for _, a := range e.f.Actions() {
		if a.Resource.Group == "events.k8s.io" {
			tries++
		}
	}
	if tries != 1 {
		t.Errorf("%d requests to events.k8s.io, want 1 (the first create only)", tries)
	}
	if c := rec.Counters(); c.Failed != 0 {
		t.Errorf("counters %+v", c)
	}
}

// TestMissingNamespaceIsNotFallback checks that the 404 of a create in a
// namespace that does not exist fails that event only.
func TestMissingNamespaceIsNotFallback(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	rec.Eventf(pod("nowhere", "p"), nil, events.Normal, "R", "A", "")
	waitCounters(t, rec, "failed", func(c events.Counters) bool { return c.Failed == 1 })
	rec.Eventf(e.pod, nil, events.Normal, "R", "A", "")
	waitCounters(t, rec, "emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	var groups []string
	for _, a := range e.f.Actions() {
		if a.Verb == "create" {
			groups = append(groups, a.Resource.Group)
		}
	}
	if !slices.Equal(groups, []string{"events.k8s.io", "events.k8s.io"}) {
		t.Fatalf("creates in groups %q, want both through events.k8s.io", groups)
	}
}
