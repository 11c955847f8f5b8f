package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/events"
	"github.com/kapi-dev/kapi/fake"
)

func TestEventFields(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "node-uid"}}

	p := e.pod.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{} // as typed clients return objects
	rec.Eventf(p, node, events.Warning, "FailedScheduling", "Scheduling", "%d of %d nodes fit", 0, 3)
	waitCounters(t, rec, "one event emitted", func(c events.Counters) bool { return c.Emitted == 1 })

	got := v1Events(t, e.f, "demo")
	if len(got) != 1 {
		t.Fatalf("got %d events, want 1", len(got))
	}
	ev := got[0]
	want := eventsv1.Event{
		EventTime:           metav1.NewMicroTime(epoch),
		ReportingController: "example.com/controller",
		ReportingInstance:   "controller-1",
		Action:              "Scheduling",
		Reason:              "FailedScheduling",
		// The pod was given without TypeMeta: kind and apiVersion come
		// from the client's scheme.
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "demo", Name: "web",
			UID: e.pod.UID, ResourceVersion: e.pod.ResourceVersion},
		Related: &corev1.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1", UID: "node-uid"},
		Note:    "0 of 3 nodes fit",
		Type:    "Warning",
	}
	if wantName := "web." + hex(epoch); ev.Name != wantName || ev.Namespace != "demo" {
		t.Errorf("event is %s/%s, want demo/%s", ev.Namespace, ev.Name, wantName)
	}
	ev.TypeMeta, ev.ObjectMeta = metav1.TypeMeta{}, metav1.ObjectMeta{}
	if !ev.EventTime.Time.Equal(want.EventTime.Time) {
		t.Errorf("eventTime %v, want %v", ev.EventTime, want.EventTime)
	}
	ev.EventTime = want.EventTime
	if a, b := mustJSON(t, ev), mustJSON(t, want); a != b {
		t.Errorf("event stored as\n%s\nwant\n%s", a, b)
	}
}

// TestEventLikeKubeAPIServer checks that the body of a create has the fields
// of an Event created on kube-apiserver 1.37 (testdata holds the request
// captured there), no more: no deprecated* field set, no series on a create.
func TestEventLikeKubeAPIServer(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Scaled", "Scale", "")
	waitCounters(t, rec, "one event emitted", func(c events.Counters) bool { return c.Emitted == 1 })

	golden := goldenRequest(t, "testdata/create-events.k8s.io-events.txt")
	var sent map[string]any
	for _, a := range e.f.Actions() {
		if a.Verb == "create" && a.Resource.Group == "events.k8s.io" {
			if err := json.Unmarshal(a.Body, &sent); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sent == nil {
		t.Fatal("no create of an events.k8s.io Event")
	}
	// The Go type encodes the deprecated fields it leaves unset as null or
	// {}, as kube-apiserver itself returns them; they are not set.
	maps.DeleteFunc(sent, func(k string, v any) bool {
		m, isMap := v.(map[string]any)
		return strings.HasPrefix(k, "deprecated") && (v == nil || isMap && len(m) == 0)
	})
	if g, s := slices.Sorted(maps.Keys(golden)), slices.Sorted(maps.Keys(sent)); !slices.Equal(g, s) {
		t.Errorf("sent fields %v, kube-apiserver was sent %v", s, g)
	}
	reg := sent["regarding"].(map[string]any)
	for _, f := range []string{"kind", "namespace", "name"} {
		if reg[f] == nil || reg[f] == "" {
			t.Errorf("regarding.%s missing: %v", f, reg)
		}
	}
}

// goldenRequest returns the JSON body of the request of a capture.
func goldenRequest(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	req, _, _ := bytes.Cut(b, []byte("\n---\n"))
	_, body, _ := bytes.Cut(req, []byte("\n\n"))
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func hex(t time.Time) string { return fmt.Sprintf("%x", t.UnixNano()) }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClusterScopedRegardingGoesToDefault(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	rec.Eventf(namespace("demo"), nil, events.Normal, "Created", "Create", "")
	waitCounters(t, rec, "one event emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	got := v1Events(t, e.f, "default")
	if len(got) != 1 || got[0].Regarding.Kind != "Namespace" || got[0].Regarding.Namespace != "" {
		t.Fatalf("events in default: %+v", got)
	}
}

// TestUnstructuredRegarding checks that an unstructured object is referred
// to by the kind and apiVersion it carries.
func TestUnstructuredRegarding(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "demo", "uid": "w-uid"},
	}}
	rec.Eventf(u, nil, events.Normal, "Created", "Create", "")
	waitCounters(t, rec, "one event emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	want := corev1.ObjectReference{Kind: "Widget", APIVersion: "example.com/v1", Namespace: "demo", Name: "w", UID: "w-uid"}
	if got := v1Events(t, e.f, "demo"); len(got) != 1 || got[0].Regarding != want {
		t.Fatalf("events %+v, want one regarding %+v", got, want)
	}
}

// TestInvalidEventsAreNotSent checks what the server would refuse is
// refused by Eventf, counted and never sent, and that a long note is cut.
func TestInvalidEventsAreNotSent(t *testing.T) {
	type widget struct{ metav1.ObjectMeta } // registered nowhere
	e := newEnv(t)
	rec, stop := start(t, e, e.config())
	var nilPod *corev1.Pod
	cases := []struct {
		name                      string
		regarding                 metav1.Object
		eventtype, reason, action string
	}{
		{"unknown type", e.pod, "Info", "R", "A"},
		{"empty type", e.pod, "", "R", "A"},
		{"no reason", e.pod, events.Normal, "", "A"},
		{"no action", e.pod, events.Normal, "R", ""},
		{"long reason", e.pod, events.Normal, strings.Repeat("r", 129), "A"},
		{"long action", e.pod, events.Normal, "R", strings.Repeat("a", 129)},
		{"nil regarding", nil, events.Normal, "R", "A"},
		{"nil pointer regarding", nilPod, events.Normal, "R", "A"},
		{"nameless regarding", pod("demo", ""), events.Normal, "R", "A"},
		{"unregistered kind", &widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "demo"}}, events.Normal, "R", "A"},
	}
	for i, c := range cases {
		rec.Eventf(c.regarding, nil, c.eventtype, c.reason, c.action, "note")
		if got := rec.Counters().Invalid; got != uint64(i+1) {
			t.Errorf("%s: Invalid = %d, want %d", c.name, got, i+1)
		}
	}
	// The longest reason and action the server takes, and a note cut at
	// 1024 bytes without splitting the rune across the limit.
	note := strings.Repeat("x", events.MaxNoteLength-1) + "é" + "tail"
	rec.Eventf(e.pod, nil, events.Normal, strings.Repeat("r", 128), strings.Repeat("a", 128), note)
	waitCounters(t, rec, "the valid event emitted", func(c events.Counters) bool { return c.Emitted == 1 })
	stop()
	if c := rec.Counters(); c.Invalid != uint64(len(cases)) || c.Failed != 0 {
		t.Errorf("counters %+v", c)
	}
	got := v1Events(t, e.f, "demo")
	if len(got) != 1 {
		t.Fatalf("%d events stored, want 1", len(got))
	}
	if want := strings.Repeat("x", events.MaxNoteLength-1); got[0].Note != want {
		t.Errorf("note of %d bytes stored, want %d", len(got[0].Note), len(want))
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	f := fake.New(t)
	for _, cfg := range []events.Config{
		{},
		{ReportingController: "Not A Name"},
		{ReportingController: "example.com/"},
		{ReportingController: "/x"},
		{ReportingController: "Example.COM/x"},
		{ReportingController: strings.Repeat("c", 64)},
		{ReportingController: "c", ReportingInstance: strings.Repeat("i", 129)},
	} {
		if _, err := events.New(f.Client(), cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	for _, name := range []string{"c", "kubelet", "example.com/my-controller", "a.b_c-d"} {
		if _, err := events.New(f.Client(), events.Config{ReportingController: name}); err != nil {
			t.Errorf("New(%q): %v", name, err)
		}
	}
}

func TestRunTwice(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	waitFor(t, "Run started", func() bool { return e.clock.Timers() == 1 })
	if err := rec.Run(ctx); err == nil {
		t.Fatal("a second Run succeeded")
	}
}

// TestNamesUniqueOnAStoppedClock checks that two Events about one object,
// made while the clock stands still, get names of their own.
func TestNamesUniqueOnAStoppedClock(t *testing.T) {
	e := newEnv(t)
	rec, _ := start(t, e, e.config())
	rec.Eventf(e.pod, nil, events.Normal, "Created", "Create", "")
	rec.Eventf(e.pod, nil, events.Normal, "Updated", "Update", "")
	waitCounters(t, rec, "two events emitted", func(c events.Counters) bool { return c.Emitted+c.Failed == 2 })
	got := v1Events(t, e.f, "demo")
	if len(got) != 2 {
		t.Fatalf("%d events, want 2 (counters %+v)", len(got), rec.Counters())
	}
	slices.SortFunc(got, func(a, b eventsv1.Event) int { return strings.Compare(a.Name, b.Name) })
	if got[0].Name != "web."+hex(epoch) || got[1].Name != "web."+hex(epoch.Add(1)) {
		t.Errorf("names %s and %s", got[0].Name, got[1].Name)
	}
	for _, ev := range got {
		if !ev.EventTime.Time.Equal(epoch) {
			t.Errorf("%s: eventTime %v, want the clock's %v", ev.Name, ev.EventTime, epoch)
		}
	}
}
