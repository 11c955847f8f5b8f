package registry

import (
	"fmt"
	"reflect"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	eventsv1 "github.com/kapi-dev/kapi/api/events/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Events of events.k8s.io/v1 are core/v1 Events seen in another shape, as
// kube-apiserver stores them: one object under two resources, written
// through either. Creates and updates through events.k8s.io are validated
// strictly (the new Events API's rules, with the core type's field names
// in the causes, as kube-apiserver words them); through core/v1, leniently.

// The lengths kube-apiserver allows in a new-style Event.
const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

func eventsKinds(Options, services) []*Resource {
	return []*Resource{kind[eventsv1.Event]("events.k8s.io", "v1", "events", Resource{
		Meta:     MetaRules{Name: NameIsDNSSubdomain},
		StoredAs: &StoredAs{Group: "", Resource: "events", ToStorage: eventToCore, FromStorage: eventFromCore},
		Validate: func(o, old Object) metav1.FieldErrors {
			var prev *corev1.Event
			if old != nil {
				prev = eventToCore(old).(*corev1.Event)
			}
			return validateEventsV1(eventToCore(o).(*corev1.Event), prev)
		},
		SelectableFields: func(o Object) map[string]string {
			e := o.(*eventsv1.Event)
			return map[string]string{
				"regarding.kind":            e.Regarding.Kind,
				"regarding.namespace":       e.Regarding.Namespace,
				"regarding.name":            e.Regarding.Name,
				"regarding.uid":             string(e.Regarding.UID),
				"regarding.apiVersion":      e.Regarding.APIVersion,
				"regarding.resourceVersion": e.Regarding.ResourceVersion,
				"regarding.fieldPath":       e.Regarding.FieldPath,
				"reason":                    e.Reason,
				"reportingController":       e.ReportingController,
				"type":                      e.Type,
			}
		},
		Printer: &Printer{
			Columns: builtinPrinters["/events"].Columns,
			Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
				return eventRow(eventToCore(o).(*corev1.Event), now), nil
			},
		},
	})}
}

// eventToCore converts an events.k8s.io/v1 Event to the core/v1 Event it
// is stored as.
func eventToCore(o Object) Object {
	e := o.(*eventsv1.Event)
	c := &corev1.Event{
		ObjectMeta:          *e.ObjectMeta.DeepCopy(),
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Action:              e.Action,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
	}
	if e.Series != nil {
		c.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	if e.Related != nil {
		r := *e.Related
		c.Related = &r
	}
	return c
}

// eventFromCore converts a stored core/v1 Event to events.k8s.io/v1.
func eventFromCore(o Object) Object {
	c := o.(*corev1.Event)
	e := &eventsv1.Event{
		ObjectMeta:               *c.ObjectMeta.DeepCopy(),
		EventTime:                c.EventTime,
		ReportingController:      c.ReportingController,
		ReportingInstance:        c.ReportingInstance,
		Action:                   c.Action,
		Reason:                   c.Reason,
		Regarding:                c.InvolvedObject,
		Note:                     c.Message,
		Type:                     c.Type,
		DeprecatedSource:         c.Source,
		DeprecatedFirstTimestamp: c.FirstTimestamp,
		DeprecatedLastTimestamp:  c.LastTimestamp,
		DeprecatedCount:          c.Count,
	}
	if c.Series != nil {
		e.Series = &eventsv1.EventSeries{Count: c.Series.Count, LastObservedTime: c.Series.LastObservedTime}
	}
	if c.Related != nil {
		r := *c.Related
		e.Related = &r
	}
	return e
}

// legacyEventErrors are the checks every Event passes, written through
// either API; reportingField names reportingController in the causes
// (core/v1 calls it reportingComponent).
func legacyEventErrors(e *corev1.Event, reportingField string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	mismatch := func() {
		errs = append(errs, metav1.FieldInvalid("involvedObject.namespace", e.InvolvedObject.Namespace, "does not match event.namespace"))
	}
	if e.EventTime.IsZero() {
		// An old-style event: its namespace is its object's.
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != "" && e.Namespace != "default" {
				mismatch()
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			mismatch()
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != "default" && e.Namespace != "kube-system" {
		mismatch()
	}
	if e.ReportingController == "" {
		errs = append(errs, metav1.FieldRequired(reportingField, ""))
	}
	for _, msg := range ValidateQualifiedName(e.ReportingController) {
		errs = append(errs, metav1.FieldInvalid(reportingField, e.ReportingController, msg))
	}
	limit := func(field, v string, max int) {
		if len(v) > max {
			errs = append(errs, metav1.FieldInvalid(field, "", fmt.Sprintf("can have at most %d characters", max)))
		}
	}
	if e.ReportingInstance == "" {
		errs = append(errs, metav1.FieldRequired("reportingInstance", ""))
	}
	limit("reportingInstance", e.ReportingInstance, eventReportingInstanceLimit)
	if e.Action == "" {
		errs = append(errs, metav1.FieldRequired("action", ""))
	}
	limit("action", e.Action, eventActionLimit)
	if e.Reason == "" {
		errs = append(errs, metav1.FieldRequired("reason", ""))
	}
	limit("reason", e.Reason, eventReasonLimit)
	limit("message", e.Message, eventNoteLimit)
	return errs
}

// validateEventsV1 is the strict validation of a create (old nil) or an
// update of an Event through events.k8s.io/v1, on its core shape.
func validateEventsV1(e, old *corev1.Event) metav1.FieldErrors {
	errs := legacyEventErrors(e, "reportingController")
	series := func() {
		if s := e.Series; s != nil {
			if s.Count < 2 {
				errs = append(errs, metav1.FieldInvalid("series.count", "", "should be at least 2"))
			}
			if s.LastObservedTime.IsZero() {
				errs = append(errs, metav1.FieldRequired("series.lastObservedTime", ""))
			}
		}
	}
	if old == nil {
		series()
		if e.EventTime.IsZero() {
			errs = append(errs, metav1.FieldRequired("eventTime", ""))
		}
		if e.Type != "Normal" && e.Type != "Warning" {
			errs = append(errs, metav1.FieldInvalid("type", "", "has invalid value: "+e.Type))
		}
		unset := func(field string, set bool) {
			if set {
				errs = append(errs, metav1.FieldInvalid(field, "", "needs to be unset"))
			}
		}
		unset("firstTimestamp", !e.FirstTimestamp.IsZero())
		unset("lastTimestamp", !e.LastTimestamp.IsZero())
		unset("count", e.Count != 0)
		unset("source", e.Source.Component != "" || e.Source.Host != "")
		return errs
	}
	if !reflect.DeepEqual(e.Series, old.Series) {
		series()
	}
	immutable := func(field string, v, was any, dump any) {
		if !reflect.DeepEqual(v, was) {
			errs = append(errs, metav1.FieldInvalid(field, dump, msgImmutable))
		}
	}
	immutable("involvedObject", e.InvolvedObject, old.InvolvedObject, goDump{e.InvolvedObject})
	immutable("reason", e.Reason, old.Reason, e.Reason)
	immutable("message", e.Message, old.Message, e.Message)
	immutable("source", e.Source, old.Source, goDump{e.Source})
	immutable("firstTimestamp", e.FirstTimestamp, old.FirstTimestamp, e.FirstTimestamp)
	immutable("lastTimestamp", e.LastTimestamp, old.LastTimestamp, e.LastTimestamp)
	immutable("count", e.Count, old.Count, e.Count)
	immutable("reason", e.Reason, old.Reason, e.Reason)
	immutable("type", e.Type, old.Type, e.Type)
	immutable("eventTime", e.EventTime, old.EventTime, e.EventTime)
	immutable("action", e.Action, old.Action, e.Action)
	immutable("related", e.Related, old.Related, goDump{e.Related})
	immutable("reportingController", e.ReportingController, old.ReportingController, e.ReportingController)
	immutable("reportingInstance", e.ReportingInstance, old.ReportingInstance, e.ReportingInstance)
	return errs
}
