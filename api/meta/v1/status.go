package v1

import (
	"fmt"
	"github.com/kapi-dev/kapi/internal/kjson"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// This file holds the constructors of the Status objects kube-apiserver
// answers failed requests with, and the field errors that make up a 422
// Invalid Status.
//
// Status does not implement error. A Status is a response body, and one with
// status Success is not an error at all; implementing error on *Status would
// also invite the classic mistake of returning a nil *Status as a non-nil
// error. The constructors therefore return *Status, which servers write as the
// response body and the client package wraps in its own error type (a
// StatusError holding the Status).
//
// Every constructor sets kind "Status" and apiVersion "v1", which is how
// kube-apiserver serializes a Status under every API group, and fills
// status, message, reason, details and code exactly as kube-apiserver v1.32
// does; the tests compare them with the golden exchanges.

// Values of Status.Status.
const (
	// StatusSuccess is the status of a Status that reports success, such as
	// the answer to a delete that completed at once.
	StatusSuccess = "Success"
	// StatusFailure is the status of every error Status.
	StatusFailure = "Failure"
)

// GroupResource names a resource type by API group and plural resource name,
// without version: {"", "configmaps"}, {"apps", "deployments"}. Its wire
// form is Kubernetes' (storagemigration's StorageVersionMigration holds one).
type GroupResource struct {
	// Group is the API group, "" for the core group.
	Group string `json:"group" protobuf:"bytes,1,opt,name=group"`
	// Resource is the plural, lower-case resource name, such as "configmaps".
	Resource string `json:"resource" protobuf:"bytes,2,opt,name=resource"`
}

// String formats gr as Kubernetes does in messages: the resource alone in the
// core group ("configmaps"), resource.group otherwise ("deployments.apps").
func (gr GroupResource) String() string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// GroupKind names a kind by API group and kind, without version:
// {"", "ConfigMap"}, {"meta.k8s.io", "ListOptions"}.
type GroupKind struct {
	// Group is the API group, "" for the core group.
	Group string
	// Kind is the kind, such as "ConfigMap".
	Kind string
}

// String formats gk as Kubernetes does in messages: the kind alone in the
// core group ("ConfigMap"), kind.group otherwise ("ListOptions.meta.k8s.io").
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// OptimisticLockErrorMsg is what kube-apiserver says when an update carries a
// resourceVersion that is no longer current (golden 50). Pass it to
// NewConflict.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// Messages of the 410 Expired Status kube-apiserver's storage answers with.
const (
	expiredListMsg     = "The resourceVersion for the provided list is too old."
	expiredWatchMsg    = "The resourceVersion for the provided watch is too old."
	continueExpiredMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter."
	inconsistentContinueMsg = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response " +
		"to retrieve the remainder of the results. Continuing with the provided token results in an " +
		"inconsistent list - objects that were created, modified, or deleted between the time the first " +
		"chunk was returned and now may show up in the list."
	tooLargeResourceVersionCauseMsg = "Too large resource version"
)

// newFailure returns a failure Status with the given code, reason, message and
// details.
func newFailure(code int32, reason StatusReason, message string, details *StatusDetails) *Status {
	return &Status{
		TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   StatusFailure,
		Message:  message,
		Reason:   reason,
		Details:  details,
		Code:     code,
	}
}

// errText formats err for a message, with nil as "<nil>" the way fmt does.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// NewNotFound returns the 404 NotFound Status for the object name of resource
// gr (golden 45, 47, 52, 82):
//
//	configmaps "nope" not found
//
// The details name the resource, not the kind: {"name":"nope","kind":"configmaps"}.
func NewNotFound(gr GroupResource, name string) *Status {
	return newFailure(http.StatusNotFound, StatusReasonNotFound,
		fmt.Sprintf("%s %q not found", gr, name),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewAlreadyExists returns the 409 AlreadyExists Status for a create of an
// object that exists (golden 46):
//
//	configmaps "cm1" already exists
func NewAlreadyExists(gr GroupResource, name string) *Status {
	return newFailure(http.StatusConflict, StatusReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists", gr, name),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewGenerateNameConflict returns the 409 AlreadyExists Status for a create
// with generateName whose generated name was taken; the client may retry
// after retryAfterSeconds.
func NewGenerateNameConflict(gr GroupResource, name string, retryAfterSeconds int32) *Status {
	return newFailure(http.StatusConflict, StatusReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists, the server was not able to generate a unique name for the object", gr, name),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name, RetryAfterSeconds: retryAfterSeconds})
}

// NewConflict returns the 409 Conflict Status for an operation on the object
// name of resource gr that cannot be carried out because of err, such as an
// update with a stale resourceVersion (golden 50):
//
//	NewConflict(gr, "cm1", errors.New(OptimisticLockErrorMsg))
//	Operation cannot be fulfilled on configmaps "cm1": the object has been modified; ...
//
// Failed delete preconditions use the kind in place of the resource; see
// Preconditions.Check.
func NewConflict(gr GroupResource, name string, err error) *Status {
	return newFailure(http.StatusConflict, StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", gr, name, errText(err)),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewApplyConflict returns the 409 Conflict Status for a server-side apply
// that conflicts with other field managers: one cause of type
// CauseTypeFieldManagerConflict per field, and message the summary
// (golden 75).
func NewApplyConflict(causes []StatusCause, message string) *Status {
	return newFailure(http.StatusConflict, StatusReasonConflict, message, &StatusDetails{Causes: causes})
}

// NewUnauthorized returns the 401 Unauthorized Status; an empty reason reads
// "not authorized".
func NewUnauthorized(reason string) *Status {
	if reason == "" {
		reason = "not authorized"
	}
	return newFailure(http.StatusUnauthorized, StatusReasonUnauthorized, reason, nil)
}

// NewForbidden returns the 403 Forbidden Status for an action on the object
// name of resource gr, forbidden because of err (golden 102, whose admission
// plugin then adds a cause):
//
//	configmaps "late" is forbidden: unable to create new content in namespace golden because it is being terminated
//
// Without a name the message reads `configmaps is forbidden: ...`, and without
// a resource `forbidden: ...`.
func NewForbidden(gr GroupResource, name string, err error) *Status {
	var msg string
	switch {
	case gr == GroupResource{}:
		msg = "forbidden: " + errText(err)
	case name == "":
		msg = fmt.Sprintf("%s is forbidden: %s", gr, errText(err))
	default:
		msg = fmt.Sprintf("%s %q is forbidden: %s", gr, name, errText(err))
	}
	return newFailure(http.StatusForbidden, StatusReasonForbidden, msg,
		&StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name})
}

// NewGone returns a 410 Gone Status. Kubernetes has reported expired
// resourceVersions with NewResourceExpired (reason Expired) instead since
// v1.17; clients should accept both.
func NewGone(message string) *Status {
	return newFailure(http.StatusGone, StatusReasonGone, message, nil)
}

// NewResourceExpired returns a 410 Expired Status: the requested data is no
// longer available, usually because the resourceVersion is older than what
// storage keeps. The client must start again from a fresh list.
func NewResourceExpired(message string) *Status {
	return newFailure(http.StatusGone, StatusReasonExpired, message, nil)
}

// NewListExpired returns the 410 Expired Status for a list at a
// resourceVersion storage has compacted away (golden 103):
//
//	The resourceVersion for the provided list is too old.
func NewListExpired() *Status { return NewResourceExpired(expiredListMsg) }

// NewWatchExpired returns the 410 Expired Status for a watch from a
// resourceVersion storage has compacted away, sent as the object of an ERROR
// watch event (golden 104):
//
//	The resourceVersion for the provided watch is too old.
func NewWatchExpired() *Status { return NewResourceExpired(expiredWatchMsg) }

// NewContinueExpired returns the 410 Expired Status for a list whose continue
// token is too old (golden 100). When the server can still serve the rest of
// the list at a newer resourceVersion, it passes a fresh token for that in
// continueToken: the Status then carries it in metadata.continue and says so.
// With an empty continueToken the message only tells the client to start over.
func NewContinueExpired(continueToken string) *Status {
	if continueToken == "" {
		return NewResourceExpired(continueExpiredMsg)
	}
	s := NewResourceExpired(inconsistentContinueMsg)
	s.ListMeta.Continue = continueToken
	return s
}

// NewInvalid returns the 422 Invalid Status for the object name of kind gk
// that fails validation with errs (golden 48, 88; for options see
// NewInvalidOptions). Each field error becomes a cause; the message lists the
// distinct errors, bracketed when there are several:
//
//	ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": ...
//	Widget.example.com "w2" is invalid: [spec.color: Unsupported value: ..., spec.size: Invalid value: ...]
func NewInvalid(gk GroupKind, name string, errs FieldErrors) *Status {
	causes := make([]StatusCause, 0, len(errs))
	for _, e := range errs {
		if e != nil {
			causes = append(causes, e.Cause())
		}
	}
	msg := fmt.Sprintf("%s %q is invalid", gk, name)
	if agg := errs.Message(); agg != "" {
		msg += ": " + agg
	}
	return newFailure(http.StatusUnprocessableEntity, StatusReasonInvalid, msg,
		&StatusDetails{Group: gk.Group, Kind: gk.Kind, Name: name, Causes: causes})
}

// NewBadRequest returns a 400 BadRequest Status with message as is, such as
// for an undecodable body or query (golden 35, 36, 49, 56, 57).
func NewBadRequest(message string) *Status {
	return newFailure(http.StatusBadRequest, StatusReasonBadRequest, message, nil)
}

// NewTooManyRequests returns a 429 TooManyRequests Status asking the client to
// retry after retryAfterSeconds; servers send the same number in a
// Retry-After header.
func NewTooManyRequests(message string, retryAfterSeconds int32) *Status {
	return newFailure(http.StatusTooManyRequests, StatusReasonTooManyRequests, message,
		&StatusDetails{RetryAfterSeconds: retryAfterSeconds})
}

// NewServiceUnavailable returns a 503 ServiceUnavailable Status.
func NewServiceUnavailable(reason string) *Status {
	return newFailure(http.StatusServiceUnavailable, StatusReasonServiceUnavailable, reason, nil)
}

// NewMethodNotSupported returns the 405 MethodNotAllowed Status for an action
// (a verb such as "create") a resource does not support:
//
//	create is not supported on resources of kind "nodes/proxy"
//
// A request whose HTTP method no route accepts gets the generic answer
// instead (golden 60):
// NewGenericServerResponse(http.StatusMethodNotAllowed, "", GroupResource{}, "", "", 0, false).
func NewMethodNotSupported(gr GroupResource, action string) *Status {
	return newFailure(http.StatusMethodNotAllowed, StatusReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", action, gr),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource})
}

// NewServerTimeout returns a 500 ServerTimeout Status: the operation on
// resource gr could not be completed in time, and the client may retry after
// retryAfterSeconds.
func NewServerTimeout(gr GroupResource, operation string, retryAfterSeconds int32) *Status {
	return newFailure(http.StatusInternalServerError, StatusReasonServerTimeout,
		fmt.Sprintf("The %s operation against %s could not be completed at this time, please try again.", operation, gr),
		&StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: operation, RetryAfterSeconds: retryAfterSeconds})
}

// NewInternalError returns a 500 InternalError Status for err.
func NewInternalError(err error) *Status {
	return newFailure(http.StatusInternalServerError, StatusReasonInternalError,
		"Internal error occurred: "+errText(err),
		&StatusDetails{Causes: []StatusCause{{Message: errText(err)}}})
}

// NewTimeout returns a 504 Timeout Status: the request did not complete in
// time, though it may still complete. The message is prefixed with
// "Timeout: ".
func NewTimeout(message string, retryAfterSeconds int32) *Status {
	return newFailure(http.StatusGatewayTimeout, StatusReasonTimeout, "Timeout: "+message,
		&StatusDetails{RetryAfterSeconds: retryAfterSeconds})
}

// NewTooLargeResourceVersion returns the 504 Timeout Status kube-apiserver
// answers a get or list for a resourceVersion it has not reached yet, after
// waiting for it in vain (golden 40, 41). requested is the resourceVersion
// asked for, current the newest the server has; servers also send
// retryAfterSeconds as a Retry-After header.
//
//	Timeout: Too large resource version: 99999999, current: 213
func NewTooLargeResourceVersion(requested, current uint64, retryAfterSeconds int32) *Status {
	s := NewTimeout(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), retryAfterSeconds)
	s.Details.Causes = []StatusCause{{Type: CauseTypeResourceVersionTooLarge, Message: tooLargeResourceVersionCauseMsg}}
	return s
}

// NewRequestEntityTooLarge returns a 413 RequestEntityTooLarge Status.
func NewRequestEntityTooLarge(message string) *Status {
	return newFailure(http.StatusRequestEntityTooLarge, StatusReasonRequestEntityTooLarge,
		"Request entity too large: "+message, nil)
}

// NewNotAcceptable returns the 406 NotAcceptable Status for a request whose
// Accept header allows none of the available media types (golden 54):
//
//	406: Not Acceptable
//
//	Available representations: application/json, application/yaml, application/vnd.kubernetes.protobuf
func NewNotAcceptable(available []string) *Status {
	return NewGenericServerResponse(http.StatusNotAcceptable, "", GroupResource{}, "",
		"406: Not Acceptable\n\nAvailable representations: "+strings.Join(available, ", "), 0, false)
}

// NewNotAcceptableMediaTypes returns the 406 NotAcceptable Status
// kube-apiserver answers when the Accept header names a media type it has
// but asks for it in a form it cannot serve (a conversion it does not know,
// as=Table in protobuf, a watch in YAML): "only the following media types
// are accepted: " and accepted, comma-separated.
func NewNotAcceptableMediaTypes(accepted []string) *Status {
	return NewNotAcceptableMessage("only the following media types are accepted: " + strings.Join(accepted, ", "))
}

// NewNotAcceptableMessage returns a 406 NotAcceptable Status with message,
// as kube-apiserver answers a conversion that does not apply to the object
// ("you requested PartialObjectMetadataList, but the requested object is not
// a list (*core.ConfigMap)").
func NewNotAcceptableMessage(message string) *Status {
	return newFailure(http.StatusNotAcceptable, StatusReasonNotAcceptable, message, nil)
}

// NewUnsupportedMediaType returns the 415 UnsupportedMediaType Status for a
// request body whose Content-Type is none of the accepted ones (golden 55).
func NewUnsupportedMediaType(accepted []string) *Status {
	return newFailure(http.StatusUnsupportedMediaType, StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "),
		nil)
}

// NewDeleted returns the 200 Success Status kube-apiserver answers a delete
// that removed the object at once, instead of returning the object (golden
// 81). It has no code and no message.
func NewDeleted(gr GroupResource, name string, uid UID) *Status {
	return &Status{
		TypeMeta: TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   StatusSuccess,
		Details:  &StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name, UID: uid},
	}
}

// NewGenericServerResponse returns a Status for an HTTP response code, with
// the generic wording Kubernetes uses when there is nothing more specific to
// say. Servers use it for requests no route matches (golden 58: 404 "the
// server could not find the requested resource"), methods no route accepts
// (golden 60), and JSON patches that fail (golden 71). Clients use it for
// error responses whose body is not a Status (golden 59): verb is the HTTP
// method, gr and name the object, serverMessage the body, and
// isUnexpectedResponse records the body as a cause of type
// CauseTypeUnexpectedServerResponse.
//
// serverMessage is the message itself for 403, 406 (unless empty or
// "unknown") and 415; the other codes have fixed messages. When gr is set
// the message ends with the request, such as " (get configmaps cm1)". Details
// are always present, even when empty.
func NewGenericServerResponse(code int, verb string, gr GroupResource, name, serverMessage string, retryAfterSeconds int32, isUnexpectedResponse bool) *Status {
	reason := StatusReasonUnknown
	msg := fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
	switch code {
	case http.StatusConflict:
		if verb == http.MethodPost {
			reason = StatusReasonAlreadyExists
		} else {
			reason = StatusReasonConflict
		}
		msg = "the server reported a conflict"
	case http.StatusNotFound:
		reason = StatusReasonNotFound
		msg = "the server could not find the requested resource"
	case http.StatusBadRequest:
		reason = StatusReasonBadRequest
		msg = "the server rejected our request for an unknown reason"
	case http.StatusUnauthorized:
		reason = StatusReasonUnauthorized
		msg = "the server has asked for the client to provide credentials"
	case http.StatusForbidden:
		reason = StatusReasonForbidden
		msg = serverMessage
	case http.StatusNotAcceptable:
		reason = StatusReasonNotAcceptable
		if serverMessage == "" || serverMessage == "unknown" {
			msg = "the server was unable to respond with a content type that the client supports"
		} else {
			msg = serverMessage
		}
	case http.StatusUnsupportedMediaType:
		reason = StatusReasonUnsupportedMediaType
		msg = serverMessage
	case http.StatusMethodNotAllowed:
		reason = StatusReasonMethodNotAllowed
		msg = "the server does not allow this method on the requested resource"
	case http.StatusUnprocessableEntity:
		reason = StatusReasonInvalid
		msg = "the server rejected our request due to an error in our request"
	case http.StatusServiceUnavailable:
		reason = StatusReasonServiceUnavailable
		msg = "the server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		reason = StatusReasonTimeout
		msg = "the server was unable to return a response in the time allotted, but may still be processing the request"
	case http.StatusTooManyRequests:
		reason = StatusReasonTooManyRequests
		msg = "the server has received too many requests and has asked us to try again later"
	default:
		if code >= 500 {
			reason = StatusReasonInternalError
			msg = fmt.Sprintf("an error on the server (%q) has prevented the request from succeeding", serverMessage)
		}
	}
	if gr != (GroupResource{}) {
		if name != "" {
			msg = fmt.Sprintf("%s (%s %s %s)", msg, strings.ToLower(verb), gr, name)
		} else {
			msg = fmt.Sprintf("%s (%s %s)", msg, strings.ToLower(verb), gr)
		}
	}
	var causes []StatusCause
	if isUnexpectedResponse {
		causes = []StatusCause{{Type: CauseTypeUnexpectedServerResponse, Message: serverMessage}}
	}
	return newFailure(int32(code), reason, msg, &StatusDetails{
		Group:             gr.Group,
		Kind:              gr.Resource,
		Name:              name,
		Causes:            causes,
		RetryAfterSeconds: retryAfterSeconds,
	})
}

// FieldError is one validation failure of one field: a 422 Invalid Status
// carries one StatusCause per FieldError. Build it with the Field*
// constructors, which fill BadValue and Detail the way Kubernetes' messages
// expect.
type FieldError struct {
	// Type is the kind of failure, one of the CauseTypeField* values (or
	// CauseTypeForbidden, CauseTypeTooLong, CauseTypeTooMany,
	// CauseTypeInternal, CauseTypeTypeInvalid).
	Type CauseType
	// Field is the path of the field, such as "metadata.name" or
	// "resourceVersionMatch".
	Field string
	// BadValue is the rejected value, shown in the message for the types
	// that show one. A pointer shows what it points to, nil as null.
	BadValue any
	// Detail explains the failure; it may be empty.
	Detail string
}

// Error returns the field path and the ErrorBody, as in a 422 message:
//
//	resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided
func (e *FieldError) Error() string {
	return e.Field + ": " + e.ErrorBody()
}

// ErrorBody returns the message without the field path, as in a StatusCause:
// the type's wording, then for invalid, unsupported, duplicate, not-found and
// too-many errors the bad value, then the detail:
//
//	Unsupported value: "Sometimes": supported values: "Exact", "NotOlderThan", ""
//
// The value is formatted as kube-apiserver v1.32 does: strings quoted, numbers
// and booleans plain, anything with a String method by it, anything else in
// Go syntax ([]string{"Some"}, golden 62).
func (e *FieldError) ErrorBody() string {
	s := fieldErrorWording(e.Type)
	switch e.Type {
	case CauseTypeFieldValueRequired, CauseTypeForbidden, CauseTypeTooLong, CauseTypeInternal:
	default:
		if _, omit := e.BadValue.(omittedValue); !omit {
			s += ": " + formatBadValue(e.BadValue)
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Cause returns e as the StatusCause of a 422 body: its type as the reason,
// ErrorBody as the message and the field path.
func (e *FieldError) Cause() StatusCause {
	return StatusCause{Type: e.Type, Message: e.ErrorBody(), Field: e.Field}
}

// omittedValue is the BadValue of field errors whose message shows no value.
type omittedValue struct{}

// OmitValue, as a FieldError's BadValue, leaves the value out of the
// message: "spec: Invalid value: must be set" rather than "spec: Invalid
// value: {...}: must be set", as kube-apiserver words errors about objects
// and lists.
var OmitValue any = omittedValue{}

// fieldErrorWording returns the words a message starts with for each type.
func fieldErrorWording(t CauseType) string {
	switch t {
	case CauseTypeFieldValueNotFound:
		return "Not found"
	case CauseTypeFieldValueRequired:
		return "Required value"
	case CauseTypeFieldValueDuplicate:
		return "Duplicate value"
	case CauseTypeFieldValueInvalid, CauseTypeTypeInvalid:
		return "Invalid value"
	case CauseTypeFieldValueNotSupported:
		return "Unsupported value"
	case CauseTypeForbidden:
		return "Forbidden"
	case CauseTypeTooLong:
		return "Too long"
	case CauseTypeTooMany:
		return "Too many"
	case CauseTypeInternal:
		return "Internal error"
	}
	return string(t)
}

// formatBadValue renders a rejected value for a message.
func formatBadValue(v any) string {
	if v == nil {
		return "null"
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "null"
		}
		v = rv.Elem().Interface()
	}
	switch t := v.(type) {
	case int64, int32, float64, float32, bool:
		return fmt.Sprint(t)
	case string:
		return strconv.Quote(t)
	case fmt.Stringer:
		return t.String()
	}
	// Lists, maps and structs are shown as compact JSON, as kube-apiserver
	// does since v1.33 (before, Go syntax: []string{"x"}).
	if b, err := kjson.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%#v", v)
}

// FieldRequired reports a required field that is missing or empty.
func FieldRequired(field, detail string) *FieldError {
	return &FieldError{Type: CauseTypeFieldValueRequired, Field: field, BadValue: "", Detail: detail}
}

// FieldForbidden reports a field that may not be set, or not to this value,
// under the circumstances.
func FieldForbidden(field, detail string) *FieldError {
	return &FieldError{Type: CauseTypeForbidden, Field: field, BadValue: "", Detail: detail}
}

// FieldInvalid reports a malformed value.
func FieldInvalid(field string, value any, detail string) *FieldError {
	return &FieldError{Type: CauseTypeFieldValueInvalid, Field: field, BadValue: value, Detail: detail}
}

// FieldTypeInvalid reports a value of the wrong type for its field.
func FieldTypeInvalid(field string, value any, detail string) *FieldError {
	return &FieldError{Type: CauseTypeTypeInvalid, Field: field, BadValue: value, Detail: detail}
}

// FieldNotSupported reports a value outside an enumeration; the detail lists
// the supported values, quoted, in the order given.
func FieldNotSupported(field string, value any, supported []string) *FieldError {
	detail := ""
	if len(supported) > 0 {
		quoted := make([]string, len(supported))
		for i, v := range supported {
			quoted[i] = strconv.Quote(v)
		}
		detail = "supported values: " + strings.Join(quoted, ", ")
	}
	return &FieldError{Type: CauseTypeFieldValueNotSupported, Field: field, BadValue: value, Detail: detail}
}

// FieldDuplicate reports a value that must be unique but is not.
func FieldDuplicate(field string, value any) *FieldError {
	return &FieldError{Type: CauseTypeFieldValueDuplicate, Field: field, BadValue: value}
}

// FieldNotFound reports a value that refers to something that does not exist.
func FieldNotFound(field string, value any) *FieldError {
	return &FieldError{Type: CauseTypeFieldValueNotFound, Field: field, BadValue: value}
}

// FieldTooLong reports a value longer than maxBytes; the message does not
// repeat the value. A negative maxBytes leaves the limit out.
func FieldTooLong(field string, maxBytes int) *FieldError {
	detail := "value is too long"
	if maxBytes >= 0 {
		detail = fmt.Sprintf("may not be more than %d bytes", maxBytes)
	}
	return &FieldError{Type: CauseTypeTooLong, Field: field, BadValue: "<value omitted>", Detail: detail}
}

// FieldTooMany reports a list with more than maxItems items. A negative
// actual or maxItems leaves that number out.
func FieldTooMany(field string, actual, maxItems int) *FieldError {
	detail := "has too many items"
	if maxItems >= 0 {
		detail = fmt.Sprintf("must have at most %d items", maxItems)
	}
	var value any = omittedValue{}
	if actual >= 0 {
		value = actual
	}
	return &FieldError{Type: CauseTypeTooMany, Field: field, BadValue: value, Detail: detail}
}

// FieldInternal reports a failure of the validation itself rather than of the
// value.
func FieldInternal(field string, err error) *FieldError {
	return &FieldError{Type: CauseTypeInternal, Field: field, Detail: errText(err)}
}

// FieldErrors is a list of field errors, as validation functions return it;
// nil or empty means valid. NewInvalid turns it into a 422 Status.
type FieldErrors []*FieldError

// Message returns the errors as the part of a 422 message after "is invalid:
// ": the Error of each distinct error, in order, separated by ", " and
// bracketed when there is more than one. It returns "" for no errors.
func (l FieldErrors) Message() string {
	seen := make(map[string]bool, len(l))
	var msgs []string
	for _, e := range l {
		if e == nil {
			continue
		}
		m := e.Error()
		if seen[m] {
			continue
		}
		seen[m] = true
		msgs = append(msgs, m)
	}
	switch len(msgs) {
	case 0:
		return ""
	case 1:
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// Causes returns one StatusCause per error, duplicates included, as a 422
// body lists them.
func (l FieldErrors) Causes() []StatusCause {
	var causes []StatusCause
	for _, e := range l {
		if e != nil {
			causes = append(causes, e.Cause())
		}
	}
	return causes
}
