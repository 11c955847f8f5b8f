package events

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// The event types the server accepts.
const (
	// Normal is the type of events about things going as expected.
	Normal = "Normal"
	// Warning is the type of events about something that may need
	// attention.
	Warning = "Warning"
)

// Recorder records Events about objects. Eventf queues an event and returns
// at once; the goroutine of Run writes it to the server, folding repeats
// into series. A Recorder is safe for concurrent use.
type Recorder struct {
	cfg    Config
	scheme *client.Scheme
	v1     client.Resource[eventsv1.Event]
	core   client.Resource[corev1.Event]
	queue  chan *eventsv1.Event
	kinds  sync.Map // reflect.Type of a struct → metav1.TypeMeta

	mu      sync.RWMutex // held for writing only to set stopped
	stopped bool
	started atomic.Bool

	emitted, aggregated, seriesUpdates, dropped, invalid, failed, retried atomic.Uint64

	lastStamp atomic.Int64 // the time that named the last Event, Unix ns

	// Owned by the goroutine of Run.
	stopping <-chan struct{} // Run's ctx.Done()
	useCore  bool
	series   map[seriesKey]*series
}

// Counters are what a Recorder did with the events it was given. They only
// grow; read them with Recorder.Counters.
type Counters struct {
	// Emitted is the number of Events created on the server.
	Emitted uint64
	// Aggregated is the number of events folded into the series of an
	// Event already created, instead of creating one.
	Aggregated uint64
	// SeriesUpdates is the number of writes of a series' count.
	SeriesUpdates uint64
	// Dropped is the number of events Eventf dropped because the buffer
	// was full or the recorder had stopped, and of queued events Run could
	// not write before its FlushTimeout.
	Dropped uint64
	// Invalid is the number of events refused before sending because the
	// server would refuse them (see Recorder.Eventf).
	Invalid uint64
	// Failed is the number of writes (creates and series updates) that
	// failed, after their retries.
	Failed uint64
	// Retried is the number of times a write that failed with an error
	// that may pass was made again (see Config.MaxRetries).
	Retried uint64
}

// New returns a Recorder that writes Events with c, or an error when cfg
// lacks ReportingController or holds a value the server would refuse. The
// Recorder does nothing until Run is called.
func New(c *client.Client, cfg Config) (*Recorder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Recorder{
		cfg:    cfg,
		scheme: c.Scheme(),
		v1:     client.For[eventsv1.Event](c),
		core:   client.For[corev1.Event](c),
		queue:  make(chan *eventsv1.Event, cfg.BufferSize),
		series: make(map[seriesKey]*series),
	}, nil
}

// Counters returns what the recorder has done so far; after Run has
// returned, what it did in all.
func (r *Recorder) Counters() Counters {
	return Counters{
		Emitted:       r.emitted.Load(),
		Aggregated:    r.aggregated.Load(),
		SeriesUpdates: r.seriesUpdates.Load(),
		Dropped:       r.dropped.Load(),
		Invalid:       r.invalid.Load(),
		Failed:        r.failed.Load(),
		Retried:       r.retried.Load(),
	}
}

// Eventf records an event about regarding, the object the event is about,
// and related, an optional second object (nil when there is none). It
// never blocks: the event is queued for the goroutine of Run, or dropped
// and counted in Counters.Dropped when the buffer is full or Run has
// returned.
//
// eventtype is Normal or Warning; reason (why, in UpperCamelCase, such as
// "FailedCreate") and action (what was done or failed, such as "Create")
// are required and at most 128 bytes. note is a human-readable message,
// formatted with args as fmt.Sprintf does when there are args, and cut to
// MaxNoteLength bytes. regarding's kind and apiVersion come from its
// TypeMeta or, when it is empty, from the client's scheme. An event the
// server would refuse is logged and counted in Counters.Invalid, not sent.
func (r *Recorder) Eventf(regarding, related metav1.Object, eventtype, reason, action, note string, args ...any) {
	ev, err := r.build(regarding, related, eventtype, reason, action, note, args)
	if err != nil {
		r.invalid.Add(1)
		r.cfg.Logger.Error("events: event refused", "reason", reason, "action", action, "err", err)
		return
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.stopped {
		r.dropped.Add(1)
		return
	}
	select {
	case r.queue <- ev:
	default:
		r.dropped.Add(1)
	}
}

// build makes the Event Eventf records, or says why the server would
// refuse it.
func (r *Recorder) build(regarding, related metav1.Object, eventtype, reason, action, note string, args []any) (*eventsv1.Event, error) {
	if eventtype != Normal && eventtype != Warning {
		return nil, fmt.Errorf("type %q is neither %s nor %s", eventtype, Normal, Warning)
	}
	for _, f := range []struct{ name, v string }{{"reason", reason}, {"action", action}} {
		if f.v == "" {
			return nil, fmt.Errorf("%s is required", f.name)
		}
		if len(f.v) > maxFieldLength {
			return nil, fmt.Errorf("%s is longer than %d bytes", f.name, maxFieldLength)
		}
	}
	if isNil(regarding) {
		return nil, errors.New("regarding is required")
	}
	ref, err := r.reference(regarding)
	if err != nil {
		return nil, fmt.Errorf("regarding: %w", err)
	}
	var rel *corev1.ObjectReference
	if !isNil(related) {
		ref, err := r.reference(related)
		if err != nil {
			return nil, fmt.Errorf("related: %w", err)
		}
		rel = &ref
	}
	if len(args) > 0 {
		note = fmt.Sprintf(note, args...)
	}
	now := r.cfg.Clock.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = "default" // where the server keeps events about cluster-scoped objects
	}
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.Name, r.stamp(now)), Namespace: ns},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.cfg.ReportingController,
		ReportingInstance:   r.cfg.ReportingInstance,
		Action:              action,
		Reason:              reason,
		Regarding:           ref,
		Related:             rel,
		Note:                truncate(note, MaxNoteLength),
		Type:                eventtype,
	}, nil
}

// stamp returns the time in Unix nanoseconds that names an Event made at
// now: now's, or one more than the last stamp if now's is not later (a
// coarse or fake clock), so that two Events one recorder makes about the
// same object never share a name.
func (r *Recorder) stamp(now time.Time) int64 {
	for {
		last, ns := r.lastStamp.Load(), now.UnixNano()
		if ns <= last {
			ns = last + 1
		}
		if r.lastStamp.CompareAndSwap(last, ns) {
			return ns
		}
	}
}

// isNil reports whether o is nil or a nil pointer in an interface.
func isNil(o metav1.Object) bool {
	if o == nil {
		return true
	}
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// reference returns the reference to o an Event carries.
func (r *Recorder) reference(o metav1.Object) (corev1.ObjectReference, error) {
	if o.GetName() == "" {
		return corev1.ObjectReference{}, errors.New("the object has no name")
	}
	tm, err := r.typeMeta(o)
	if err != nil {
		return corev1.ObjectReference{}, err
	}
	return corev1.ObjectReference{
		Kind:            tm.Kind,
		APIVersion:      tm.APIVersion,
		Namespace:       o.GetNamespace(),
		Name:            o.GetName(),
		UID:             o.GetUID(),
		ResourceVersion: o.GetResourceVersion(),
	}, nil
}

// typeMeta returns o's kind and apiVersion: its own if it carries them,
// else those its Go type is registered with in the client's scheme.
func (r *Recorder) typeMeta(o metav1.Object) (metav1.TypeMeta, error) {
	var tm metav1.TypeMeta
	switch o := o.(type) {
	case interface{ GetObjectKind() *metav1.TypeMeta }:
		tm = *o.GetObjectKind()
	case interface {
		GetAPIVersion() string
		GetKind() string
	}:
		tm = metav1.TypeMeta{APIVersion: o.GetAPIVersion(), Kind: o.GetKind()}
	}
	if tm.Kind != "" && tm.APIVersion != "" {
		return tm, nil
	}
	t := reflect.TypeOf(o)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v, ok := r.kinds.Load(t); ok {
		return v.(metav1.TypeMeta), nil
	}
	for _, k := range r.scheme.Kinds() {
		if v, ok := r.scheme.New(k.GroupVersionKind()); ok && reflect.TypeOf(v).Elem() == t {
			r.kinds.Store(t, k.TypeMeta())
			return k.TypeMeta(), nil
		}
	}
	return tm, fmt.Errorf("%v carries no kind and apiVersion and is not registered in the client's scheme", t)
}

// Run writes the events Eventf queues until ctx is done, then writes what
// is still queued and the series counts not yet written, and returns. The
// writes in flight when ctx is done, and those after, have FlushTimeout
// (wall time, as requests' deadlines are) to complete: the queued events
// it leaves unwritten are counted in Counters.Dropped, a write it cuts
// short in Counters.Failed. Run logs the final
// counters. It may be called once; it returns an error if called again.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return errors.New("events: Run called twice")
	}
	// Writes outlive ctx by FlushTimeout: an event being written when ctx
	// is done is not lost to the cancellation.
	wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer wcancel()
	var flushTimer atomic.Pointer[time.Timer]
	stopAfter := context.AfterFunc(ctx, func() {
		flushTimer.Store(time.AfterFunc(r.cfg.FlushTimeout, wcancel)) // at once if negative
	})
	defer func() {
		if !stopAfter() {
			if t := flushTimer.Load(); t != nil {
				t.Stop()
			}
		}
	}()

	r.stopping = ctx.Done()
	clock := r.cfg.Clock
	next := clock.Now().Add(SeriesHeartbeat)
	timer := clock.NewTimerAt(next)
	defer func() { timer.Stop() }()
	for {
		select {
		case <-ctx.Done():
			r.shutdown(wctx, wcancel, nil)
			return nil
		case ev := <-r.queue:
			if ctx.Err() != nil {
				r.shutdown(wctx, wcancel, ev)
				return nil
			}
			r.record(wctx, ev)
		case <-timer.C():
			now := clock.Now()
			r.heartbeat(wctx, now)
			for !next.After(now) {
				next = next.Add(SeriesHeartbeat)
			}
			timer = clock.NewTimerAt(next)
		}
	}
}

// shutdown stops Eventf from queuing, then writes with wctx first (if not
// nil), what is queued and the series counts not yet written, and counts
// as dropped the events it has no time left for. With a negative
// FlushTimeout it cancels wctx (by wcancel) first.
func (r *Recorder) shutdown(wctx context.Context, wcancel context.CancelFunc, first *eventsv1.Event) {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	if r.cfg.FlushTimeout < 0 {
		wcancel()
	}
	flush := func(ev *eventsv1.Event) {
		if wctx.Err() != nil {
			r.dropped.Add(1)
			return
		}
		r.record(wctx, ev)
	}
	if first != nil {
		flush(first)
	}
	for drained := false; !drained; {
		select {
		case ev := <-r.queue:
			flush(ev)
		default:
			drained = true
		}
	}
	for _, s := range r.series {
		if s.count > s.written && wctx.Err() == nil {
			r.writeSeries(wctx, s)
		}
	}
	c := r.Counters()
	r.cfg.Logger.Info("events: recorder stopped", "emitted", c.Emitted, "aggregated", c.Aggregated,
		"seriesUpdates", c.SeriesUpdates, "dropped", c.Dropped, "invalid", c.Invalid, "failed", c.Failed, "retried", c.Retried)
}
