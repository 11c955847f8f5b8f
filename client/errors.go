package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// APIStatus is an error that carries a Kubernetes Status. *StatusError
// implements it; a fake client or a reactor may return its own type, and the
// predicates below (IsNotFound, …) work with any of them, wrapped or not.
type APIStatus interface {
	error
	// Status returns the Status the error stands for.
	Status() metav1.Status
}

// StatusError is the error for a request that the server answered with a
// failure: its Status body (code, reason, message, details), or, when the body
// was not a Status, one made up from the HTTP code and the body.
type StatusError struct {
	// ErrStatus is the Status as the server sent it, with Code filled from
	// the HTTP response when the body left it out, and
	// Details.RetryAfterSeconds from the Retry-After header when the body had
	// none.
	ErrStatus metav1.Status
}

var _ APIStatus = (*StatusError)(nil)

// NewStatusError returns the error for st. It copies st.
func NewStatusError(st *metav1.Status) *StatusError {
	return &StatusError{ErrStatus: *st}
}

// Error returns the Status message, as kube-apiserver words it, such as
//
//	configmaps "nope" not found
//
// A Status without a message reads "the server responded with status 404
// (NotFound)".
func (e *StatusError) Error() string {
	if e.ErrStatus.Message != "" {
		return e.ErrStatus.Message
	}
	if e.ErrStatus.Reason != "" {
		return fmt.Sprintf("the server responded with status %d (%s)", e.ErrStatus.Code, e.ErrStatus.Reason)
	}
	return fmt.Sprintf("the server responded with status %d", e.ErrStatus.Code)
}

// Status returns the Status.
func (e *StatusError) Status() metav1.Status { return e.ErrStatus }

// statusOf finds the Status of err, through wrapping.
func statusOf(err error) (metav1.Status, bool) {
	var s APIStatus
	if err != nil && errors.As(err, &s) {
		return s.Status(), true
	}
	return metav1.Status{}, false
}

// ReasonForError returns the reason of the Status err carries, or
// StatusReasonUnknown ("") when err is nil or carries no Status.
func ReasonForError(err error) metav1.StatusReason {
	st, _ := statusOf(err)
	return st.Reason
}

// knownReasons are the reasons the predicates recognise. A Status with one of
// them is judged by its reason alone; one with any other reason (or none) by
// its HTTP code, so that errors from servers that send no reason, or a newer
// one, still classify sensibly. This is client-go's rule.
var knownReasons = map[metav1.StatusReason]bool{
	metav1.StatusReasonUnauthorized:          true,
	metav1.StatusReasonForbidden:             true,
	metav1.StatusReasonNotFound:              true,
	metav1.StatusReasonAlreadyExists:         true,
	metav1.StatusReasonConflict:              true,
	metav1.StatusReasonGone:                  true,
	metav1.StatusReasonInvalid:               true,
	metav1.StatusReasonServerTimeout:         true,
	metav1.StatusReasonStoreReadError:        true,
	metav1.StatusReasonTimeout:               true,
	metav1.StatusReasonTooManyRequests:       true,
	metav1.StatusReasonBadRequest:            true,
	metav1.StatusReasonMethodNotAllowed:      true,
	metav1.StatusReasonNotAcceptable:         true,
	metav1.StatusReasonRequestEntityTooLarge: true,
	metav1.StatusReasonUnsupportedMediaType:  true,
	metav1.StatusReasonInternalError:         true,
	metav1.StatusReasonExpired:               true,
	metav1.StatusReasonServiceUnavailable:    true,
}

// reasonOrCode reports whether err's Status has the reason, or an unknown
// reason and the code.
func reasonOrCode(err error, reason metav1.StatusReason, code int32) bool {
	st, ok := statusOf(err)
	if !ok {
		return false
	}
	if st.Reason == reason {
		return true
	}
	return !knownReasons[st.Reason] && st.Code == code
}

// reasonOrAnyCode reports whether err's Status has the reason or the code,
// whatever its reason.
func reasonOrAnyCode(err error, reason metav1.StatusReason, code int32) bool {
	st, ok := statusOf(err)
	return ok && (st.Reason == reason || st.Code == code)
}

// IsNotFound reports a 404 NotFound: the object (or the resource, or the
// namespace) does not exist.
func IsNotFound(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonNotFound, http.StatusNotFound)
}

// IsAlreadyExists reports a 409 AlreadyExists: a create of an object whose name
// is taken.
func IsAlreadyExists(err error) bool {
	return ReasonForError(err) == metav1.StatusReasonAlreadyExists
}

// IsConflict reports a 409 Conflict: an update with a stale resourceVersion, a
// failed delete precondition, or a server-side apply conflict. Get the object
// again and retry.
func IsConflict(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonConflict, http.StatusConflict)
}

// IsInvalid reports a 422 Invalid: the object, or the request options, failed
// validation; the Status details list the fields.
func IsInvalid(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonInvalid, http.StatusUnprocessableEntity)
}

// IsGone reports a 410 with reason Gone. Servers since Kubernetes 1.17 report
// an expired resourceVersion with reason Expired instead (IsResourceExpired);
// code that restarts a list or watch should check both.
func IsGone(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonGone, http.StatusGone)
}

// IsResourceExpired reports a 410 Expired: the resourceVersion or continue
// token asked for is older than the server keeps. Start again from a fresh
// list.
func IsResourceExpired(err error) bool {
	return ReasonForError(err) == metav1.StatusReasonExpired
}

// IsTooLargeResourceVersion reports the 504 Timeout a server answers a get or
// list for a resourceVersion it has not reached yet: a Timeout whose causes
// include ResourceVersionTooLarge, or, from servers older than that cause,
// whose message says "Too large resource version". Retry later, or list
// without a resourceVersion.
func IsTooLargeResourceVersion(err error) bool {
	if !IsTimeout(err) {
		return false
	}
	if HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	st, _ := statusOf(err)
	return strings.Contains(st.Message, "Too large resource version")
}

// IsTooManyRequests reports a 429: the server (or its priority and fairness
// layer) asks the client to slow down, usually with a Retry-After delay (see
// RetryAfterSeconds).
func IsTooManyRequests(err error) bool {
	return reasonOrAnyCode(err, metav1.StatusReasonTooManyRequests, http.StatusTooManyRequests)
}

// IsTimeout reports a 504 Timeout: the request did not complete in time,
// though it may still complete.
func IsTimeout(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonTimeout, http.StatusGatewayTimeout)
}

// IsServerTimeout reports a ServerTimeout (sent with code 500): the operation
// could not be completed in time and should be retried. It is judged by reason
// alone, as no HTTP code means it.
func IsServerTimeout(err error) bool {
	return ReasonForError(err) == metav1.StatusReasonServerTimeout
}

// IsForbidden reports a 403 Forbidden: the user may not do this, or the
// namespace is being terminated.
func IsForbidden(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonForbidden, http.StatusForbidden)
}

// IsUnauthorized reports a 401 Unauthorized: the request's credentials are
// missing or were not accepted.
func IsUnauthorized(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonUnauthorized, http.StatusUnauthorized)
}

// IsNotAcceptable reports a 406 NotAcceptable: the server has none of the
// representations the Accept header asked for.
func IsNotAcceptable(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonNotAcceptable, http.StatusNotAcceptable)
}

// IsUnsupportedMediaType reports a 415 UnsupportedMediaType: the server does not
// accept the request body's Content-Type (for example a strategic merge patch
// of a custom resource).
func IsUnsupportedMediaType(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonUnsupportedMediaType, http.StatusUnsupportedMediaType)
}

// IsBadRequest reports a 400 BadRequest: the request is malformed (a bad
// selector, body or option).
func IsBadRequest(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonBadRequest, http.StatusBadRequest)
}

// IsMethodNotSupported reports a 405 MethodNotAllowed: the resource does not
// support the verb.
func IsMethodNotSupported(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonMethodNotAllowed, http.StatusMethodNotAllowed)
}

// IsInternalError reports a 500 InternalError.
func IsInternalError(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonInternalError, http.StatusInternalServerError)
}

// IsServiceUnavailable reports a 503 ServiceUnavailable.
func IsServiceUnavailable(err error) bool {
	return reasonOrCode(err, metav1.StatusReasonServiceUnavailable, http.StatusServiceUnavailable)
}

// IsRequestEntityTooLarge reports a 413 RequestEntityTooLarge: the request body
// exceeds the server's limit.
func IsRequestEntityTooLarge(err error) bool {
	return reasonOrAnyCode(err, metav1.StatusReasonRequestEntityTooLarge, http.StatusRequestEntityTooLarge)
}

// IsUnexpectedServerResponse reports an error response whose body was not a
// Status, such as a proxy's HTML page or a plain "404 page not found": the
// error's Status was made up by the client from the HTTP code.
func IsUnexpectedServerResponse(err error) bool {
	return HasStatusCause(err, metav1.CauseTypeUnexpectedServerResponse)
}

// HasStatusCause reports whether err's Status lists a cause of type t.
func HasStatusCause(err error, t metav1.CauseType) bool {
	st, ok := statusOf(err)
	if !ok || st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == t {
			return true
		}
	}
	return false
}

// RetryAfterSeconds returns how many seconds the server asked the client to
// wait before trying again, and whether it asked: a ServerTimeout always asks
// (possibly for 0 seconds); any other Status asks when its details carry a
// positive retryAfterSeconds, which the client also fills from a Retry-After
// header. It does not say whether the request should be retried at all.
func RetryAfterSeconds(err error) (int, bool) {
	st, ok := statusOf(err)
	if !ok || st.Details == nil {
		return 0, false
	}
	if st.Reason == metav1.StatusReasonServerTimeout {
		return int(st.Details.RetryAfterSeconds), true
	}
	if st.Details.RetryAfterSeconds > 0 {
		return int(st.Details.RetryAfterSeconds), true
	}
	return 0, false
}

// maxErrorBody bounds how much of an error response is read. Status bodies are
// small; a larger body is not a Status the client could use anyway.
const maxErrorBody = 1 << 20

// maxSnippet bounds the part of a non-Status body quoted in an error message.
const maxSnippet = 256

// errorFromResponse reads (at most maxErrorBody bytes of) a failed response
// and returns the error for it: the Status the body holds, or one made up from
// the code and the body. verb is the HTTP method; gr and name say what the
// request was about, for the wording of made-up Statuses. The body is not
// closed.
func errorFromResponse(resp *http.Response, verb string, gr metav1.GroupResource, name string) *StatusError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	retryAfter, _ := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if st, ok := decodeStatus(resp.Header.Get("Content-Type"), body); ok {
		if st.Code == 0 {
			st.Code = int32(resp.StatusCode)
		}
		if retryAfter > 0 && (st.Details == nil || st.Details.RetryAfterSeconds == 0) {
			if st.Details == nil {
				st.Details = &metav1.StatusDetails{}
			}
			st.Details.RetryAfterSeconds = int32(retryAfter / time.Second)
		}
		return &StatusError{ErrStatus: *st}
	}
	return unexpectedResponseError(resp.StatusCode, verb, gr, name, body, int32(retryAfter/time.Second))
}

// unexpectedResponseError is the error for a failed response whose body is
// not a Status: the Status Kubernetes' clients make up for the code (reason
// NotFound for 404 and so on, so the predicates work), with the body as a
// cause of type UnexpectedServerResponse and the message ending with the HTTP
// code and the start of the body.
func unexpectedResponseError(code int, verb string, gr metav1.GroupResource, name string, body []byte, retryAfterSeconds int32) *StatusError {
	snippet := bodySnippet(body)
	st := metav1.NewGenericServerResponse(code, verb, gr, name, snippet, retryAfterSeconds, true)
	suffix := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
	if snippet != "" && !strings.Contains(st.Message, snippet) {
		suffix += ": " + snippet
	}
	if st.Message == "" {
		st.Message = suffix
	} else {
		st.Message += " (" + suffix + ")"
	}
	return &StatusError{ErrStatus: *st}
}

// bodySnippet returns the start of body as one trimmed line of text, at most
// maxSnippet bytes, cut on a rune boundary; a binary body is shown as its size.
func bodySnippet(body []byte) string {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return ""
	}
	cut := false
	if len(b) > maxSnippet {
		b = b[:maxSnippet]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
		cut = true
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return fmt.Sprintf("<%d bytes of binary data>", len(body))
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if cut {
		s += " …"
	}
	return s
}

// decodeStatus decodes body as a Status in the representation contentType
// names (JSON when it names none the client knows). It reports false when the
// body is not a Status.
func decodeStatus(contentType string, body []byte) (*metav1.Status, bool) {
	if len(body) == 0 {
		return nil, false
	}
	st := &metav1.Status{}
	if isProtobuf(contentType) || bytes.HasPrefix(body, []byte(codec.EnvelopeMagic)) {
		tm, err := codec.UnmarshalProtobuf(body, st)
		if err != nil || tm.Kind != "Status" {
			return nil, false
		}
		st.TypeMeta = tm
		return st, true
	}
	if err := kjson.Unmarshal(body, st); err != nil || st.Kind != "Status" {
		return nil, false
	}
	return st, true
}

// isProtobuf reports whether a Content-Type is the Kubernetes protobuf one
// (with or without stream=watch).
func isProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == codec.MediaTypeProtobuf
}

// parseRetryAfter reads a Retry-After header: delay-seconds, or an HTTP date
// (relative to now). It reports false when the header is absent or malformed.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := max(t.Sub(now), 0)
		return min(d, maxRetryAfter), true
	}
	return 0, false
}
