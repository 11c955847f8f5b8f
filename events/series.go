package events

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// seriesKey is what makes two events repeats of one another: the same
// objects (whatever their resourceVersion), type, reason and action. The
// reporting controller is the Recorder's own. The note is not part of it:
// a series keeps its first note, as client-go's does.
type seriesKey struct {
	regarding, related corev1.ObjectReference
	eventtype          string
	reason, action     string
}

func keyOf(ev *eventsv1.Event) seriesKey {
	k := seriesKey{regarding: ev.Regarding, eventtype: ev.Type, reason: ev.Reason, action: ev.Action}
	k.regarding.ResourceVersion = ""
	if ev.Related != nil {
		k.related = *ev.Related
		k.related.ResourceVersion = ""
	}
	return k
}

// series is an Event the server has, and the repeats observed since.
type series struct {
	event        *eventsv1.Event // as first created
	core         bool            // created as a core/v1 Event
	count        int32           // observations, the first included
	written      int32           // the count the server has
	lastObserved time.Time
}

// record writes ev, or folds it into the series of an earlier Event.
func (r *Recorder) record(ctx context.Context, ev *eventsv1.Event) {
	k := keyOf(ev)
	now := ev.EventTime.Time
	if s, ok := r.series[k]; ok {
		if now.Sub(s.lastObserved) <= IsomorphismWindow {
			s.count++
			s.lastObserved = now
			r.aggregated.Add(1)
			if s.written == 1 {
				r.writeSeries(ctx, s) // a series is written when it starts
			}
			return
		}
		r.finish(ctx, k, s)
	}
	var core bool
	err := r.write(ctx, func(ctx context.Context, retry bool) (err error) {
		core, err = r.create(ctx, ev, retry)
		return err
	})
	if err != nil {
		r.failed.Add(1)
		r.cfg.Logger.Error("events: writing an event failed", "namespace", ev.Namespace, "name", ev.Name, "reason", ev.Reason, "err", err)
		return
	}
	r.emitted.Add(1)
	if len(r.series) < maxSeries {
		r.series[k] = &series{event: ev, core: core, count: 1, written: 1, lastObserved: now}
	}
}

// heartbeat writes the series that grew since they were last written and
// forgets those not observed for IsomorphismWindow.
func (r *Recorder) heartbeat(ctx context.Context, now time.Time) {
	for k, s := range r.series {
		if now.Sub(s.lastObserved) > IsomorphismWindow {
			r.finish(ctx, k, s)
		} else if s.count > s.written {
			r.writeSeries(ctx, s)
		}
	}
}

// finish writes the last count of a series if need be and forgets it.
func (r *Recorder) finish(ctx context.Context, k seriesKey, s *series) {
	if s.count > s.written {
		r.writeSeries(ctx, s)
	}
	delete(r.series, k)
}

// create creates ev through events.k8s.io/v1 or, on a server without it,
// as a core/v1 Event, and reports which. On a retry, AlreadyExists means
// an earlier attempt created it (Event names are unique): a success.
func (r *Recorder) create(ctx context.Context, ev *eventsv1.Event, retry bool) (core bool, err error) {
	if !r.useCore {
		_, err := r.v1.Namespace(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		if !unserved(err) {
			return false, created(err, retry)
		}
		r.useCore = true
		r.cfg.Logger.Info("events: the server does not serve events.k8s.io/v1; writing core/v1 Events", "err", err)
	}
	_, err = r.core.Namespace(ev.Namespace).Create(ctx, toCore(ev, 1, ev.EventTime.Time), metav1.CreateOptions{})
	return true, created(err, retry)
}

// created is the error of a create: nil for AlreadyExists on a retry.
func created(err error, retry bool) error {
	if retry && client.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// unserved reports whether err is the 404 of a server that does not serve
// events.k8s.io/v1, rather than that of a missing namespace.
func unserved(err error) bool {
	if !client.IsNotFound(err) {
		return false
	}
	var se *client.StatusError
	return !errors.As(err, &se) || se.ErrStatus.Details == nil || se.ErrStatus.Details.Kind != "namespaces"
}

// toCore is ev as an old-style core/v1 Event, observed count times, last
// at last: a source, a count and first and last timestamps, no eventTime
// (which would subject it to the new-style rules).
func toCore(ev *eventsv1.Event, count int32, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: ev.Name, Namespace: ev.Namespace},
		InvolvedObject:      ev.Regarding,
		Related:             ev.Related,
		Reason:              ev.Reason,
		Message:             ev.Note,
		Source:              corev1.EventSource{Component: ev.ReportingController, Host: ev.ReportingInstance},
		FirstTimestamp:      metav1.NewTime(ev.EventTime.Time),
		LastTimestamp:       metav1.NewTime(last),
		Count:               count,
		Type:                ev.Type,
		Action:              ev.Action,
		ReportingController: ev.ReportingController,
		ReportingInstance:   ev.ReportingInstance,
	}
}

// writeSeries writes the count and last observation of s to its Event,
// creating the Event again (with its series) if it is gone, as Events
// expire on the server after an hour.
func (r *Recorder) writeSeries(ctx context.Context, s *series) {
	ev := s.event
	last := s.lastObserved
	err := r.write(ctx, func(ctx context.Context, retry bool) error { return r.patchSeries(ctx, s, last, retry) })
	if err != nil {
		r.failed.Add(1)
		r.cfg.Logger.Error("events: writing a series failed", "namespace", ev.Namespace, "name", ev.Name, "count", s.count, "err", err)
		return
	}
	s.written = s.count
	r.seriesUpdates.Add(1)
}

// patchSeries writes the count of s and its last observation, last, to
// its Event, or creates the Event again if it is gone.
func (r *Recorder) patchSeries(ctx context.Context, s *series, last time.Time, retry bool) error {
	ev := s.event
	var err error
	if s.core {
		patch, _ := json.Marshal(struct {
			Count         int32       `json:"count"`
			LastTimestamp metav1.Time `json:"lastTimestamp"`
		}{s.count, metav1.NewTime(last)})
		core := r.core.Namespace(ev.Namespace)
		_, err = core.Patch(ctx, ev.Name, client.MergePatchType, patch, metav1.PatchOptions{})
		if client.IsNotFound(err) {
			_, err = core.Create(ctx, toCore(ev, s.count, last), metav1.CreateOptions{})
		}
	} else {
		es := eventsv1.EventSeries{Count: s.count, LastObservedTime: metav1.NewMicroTime(last)}
		patch, _ := json.Marshal(struct {
			Series eventsv1.EventSeries `json:"series"`
		}{es})
		v1 := r.v1.Namespace(ev.Namespace)
		_, err = v1.Patch(ctx, ev.Name, client.MergePatchType, patch, metav1.PatchOptions{})
		if client.IsNotFound(err) {
			again := *ev
			again.Series = &es
			_, err = v1.Create(ctx, &again, metav1.CreateOptions{})
		}
	}
	return created(err, retry)
}
