package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

// Request is an admission request with its objects decoded as T.
//
// The embedded AdmissionRequest holds everything kube-apiserver sent (UID,
// Kind, Operation, UserInfo, DryRun, Options, and the raw objects as
// Request.AdmissionRequest.Object and .OldObject); Object and OldObject are the
// same objects decoded:
//
//	operation  Object   OldObject
//	CREATE     new      nil
//	UPDATE     new      current
//	DELETE     nil      the object being deleted (nil if the server sent none)
//	CONNECT    nil      nil (the raw Object holds the connect options, not a T)
type Request[T any] struct {
	admissionv1.AdmissionRequest
	// Object is the object being admitted. A mutating handler changes it in
	// place; the package answers with the JSON patch from what was received
	// to what Object has become.
	Object *T
	// OldObject is the object before the change.
	OldObject *T
}

// Response is the answer to an admission request. The zero Response denies
// without a reason: a handler has to say Allowed.
type Response struct {
	// Allowed admits the request.
	Allowed bool
	// Code is the HTTP code of a denial, which the API client receives;
	// 0 means 403.
	Code int32
	// Reason is the machine-readable reason of a denial; "" means Forbidden
	// when Code is 0 or 403, and is left empty otherwise.
	Reason metav1.StatusReason
	// Message says why the request is denied.
	Message string
	// Details are the denial's details (causes with field paths), as in a
	// Status; nil means none.
	Details *metav1.StatusDetails
	// Warnings are shown to the API client (kubectl prints them), allowed or
	// not.
	Warnings []string
	// AuditAnnotations are added to the request's audit event.
	AuditAnnotations map[string]string
}

// Allowed admits a request, with optional warnings.
func Allowed(warnings ...string) Response { return Response{Allowed: true, Warnings: warnings} }

// Denied refuses a request with 403 Forbidden and message.
func Denied(message string) Response { return Response{Message: message} }

// Errored refuses a request because of err: with the Status err carries, if it
// is a client.APIStatus (such as a *client.StatusError), else with code and
// err's message.
func Errored(code int32, err error) Response {
	if s, ok := errors.AsType[client.APIStatus](err); ok {
		st := s.Status()
		return Response{Code: st.Code, Reason: st.Reason, Message: st.Message, Details: st.Details}
	}
	return Response{Code: code, Message: err.Error()}
}

// status returns the Status of a denial.
func (r Response) status() *metav1.Status {
	code, reason := r.Code, r.Reason
	if code == 0 {
		code = http.StatusForbidden
	}
	if reason == "" && code == http.StatusForbidden {
		reason = metav1.StatusReasonForbidden
	}
	return &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: r.Message, Details: r.Details}
}

// Admission is an http.Handler that answers admission.k8s.io AdmissionReviews
// with a typed handler. Build one with Validating, Mutating, FromValidator or
// FromDefaulter, and register it on a Server (or any http.ServeMux) under the
// path of the webhook configuration's clientConfig.
type Admission struct {
	review func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse
}

var _ http.Handler = (*Admission)(nil)

// admissionVersions are the AdmissionReview versions the handlers answer; the
// two have the same shape, and the answer carries the version asked.
var admissionVersions = []string{"admission.k8s.io/v1", "admission.k8s.io/v1beta1"}

// ServeHTTP reads an AdmissionReview from r and writes the answer. A request
// that is not a POST of application/json AdmissionReview with a request gets
// an HTTP error (405, 415, 413 or 400) with a plain-text message; every
// admission request gets a 200 with an AdmissionReview of the version it was
// sent with, whose response carries its uid.
func (a *Admission) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in admissionv1.AdmissionReview
	version, err := readReview(w, r, &in, func() string { return in.APIVersion }, admissionVersions...)
	if err == nil && in.Request == nil {
		err = &httpError{http.StatusBadRequest, "AdmissionReview has no request"}
	}
	if err != nil {
		writeReview(w, nil, err)
		return
	}
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: version, Kind: "AdmissionReview"},
		Response: a.Review(r.Context(), in.Request),
	}
	writeReview(w, &out, nil)
}

// Review answers one admission request: the handler's answer with req's uid,
// a denial with 400 when req cannot be decoded as the handler's type, or with
// 500 when the handler panics. Tests can call it without HTTP.
func (a *Admission) Review(ctx context.Context, req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse) {
	defer func() {
		if p := recover(); p != nil {
			slog.ErrorContext(ctx, "webhook: admission handler panicked", "uid", req.UID, "panic", p, "stack", string(debug.Stack()))
			resp = toResponse(req.UID, Response{Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError,
				Message: fmt.Sprintf("admission webhook panicked: %v", p)}, nil)
		}
	}()
	return a.review(ctx, req)
}

func toResponse(uid metav1.UID, r Response, patch []byte) *admissionv1.AdmissionResponse {
	out := &admissionv1.AdmissionResponse{UID: uid, Allowed: r.Allowed, Warnings: r.Warnings, AuditAnnotations: r.AuditAnnotations}
	if !r.Allowed {
		out.Result = r.status()
		return out
	}
	if len(patch) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		out.Patch, out.PatchType = patch, &pt
	}
	return out
}

// decode builds the typed request of req, or says why it cannot.
func decode[T any, PT client.ObjectPtr[T]](req *admissionv1.AdmissionRequest) (Request[T], *Response) {
	typed := Request[T]{AdmissionRequest: *req}
	if k, ok := client.KindFor[T](client.DefaultScheme()); ok {
		if req.Kind.Group != k.Group || req.Kind.Version != k.Version || req.Kind.Kind != k.Kind {
			return typed, &Response{Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest,
				Message: fmt.Sprintf("this webhook admits %s, not %s", gvkString(k.Group, k.Version, k.Kind), gvkString(req.Kind.Group, req.Kind.Version, req.Kind.Kind))}
		}
	}
	var newRequired, oldRequired, oldOptional bool
	switch req.Operation {
	case admissionv1.Create:
		newRequired = true
	case admissionv1.Update:
		newRequired, oldRequired = true, true
	case admissionv1.Delete:
		oldOptional = true
	case admissionv1.Connect:
	default:
		return typed, badRequest(fmt.Sprintf("operation %q is not one of CREATE, UPDATE, DELETE, CONNECT", req.Operation))
	}
	var err error
	if newRequired {
		if typed.Object, err = decodeObject[T](req.Object.Raw, "object"); err != nil {
			return typed, badRequest(err.Error())
		}
	}
	if oldRequired || (oldOptional && len(req.OldObject.Raw) > 0) {
		if typed.OldObject, err = decodeObject[T](req.OldObject.Raw, "oldObject"); err != nil {
			return typed, badRequest(err.Error())
		}
	}
	return typed, nil
}

func decodeObject[T any](raw []byte, field string) (*T, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("request has no %s", field)
	}
	obj := new(T)
	if err := codec.UnmarshalJSON(raw, obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", field, err)
	}
	return obj, nil
}

func badRequest(msg string) *Response {
	return &Response{Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: msg}
}

func gvkString(group, version, kind string) string {
	if group == "" {
		return version + ", Kind=" + kind
	}
	return group + "/" + version + ", Kind=" + kind
}

// Validating returns a webhook that admits or denies with fn. fn gets the
// request's objects decoded as T (see Request for which are set for each
// operation); the request is denied with 400 before fn is called when they
// cannot be decoded, or when T is registered in client.DefaultScheme as a
// kind other than the request's.
func Validating[T any, PT client.ObjectPtr[T]](fn func(context.Context, Request[T]) Response) *Admission {
	return &Admission{review: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		typed, bad := decode[T, PT](req)
		if bad != nil {
			return toResponse(req.UID, *bad, nil)
		}
		return toResponse(req.UID, fn(ctx, typed), nil)
	}}
}

// Mutating returns a webhook that changes objects with fn: fn changes
// *req.Object in place and allows the request, and the webhook answers with
// the JSON patch (RFC 6902) from the object as received to the object fn left.
// The patch is computed against the received bytes and touches only what fn
// changed: fields T does not know, and fields the Go encoding of T would
// write differently (a null creationTimestamp, an empty status), are left as
// they were. On DELETE and CONNECT req.Object is nil and no patch is sent.
// A denial carries no patch.
func Mutating[T any, PT client.ObjectPtr[T]](fn func(context.Context, Request[T]) Response) *Admission {
	return &Admission{review: func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		typed, bad := decode[T, PT](req)
		if bad != nil {
			return toResponse(req.UID, *bad, nil)
		}
		var before []byte
		if typed.Object != nil {
			var err error
			if before, err = codec.MarshalJSON(typed.Object); err != nil {
				return toResponse(req.UID, *badRequest("encoding object: " + err.Error()), nil)
			}
		}
		resp := fn(ctx, typed)
		if !resp.Allowed || typed.Object == nil {
			return toResponse(req.UID, resp, nil)
		}
		after, err := codec.MarshalJSON(typed.Object)
		if err != nil {
			return toResponse(req.UID, Errored(http.StatusInternalServerError, fmt.Errorf("encoding mutated object: %w", err)), nil)
		}
		patch, err := CreatePatch(req.Object.Raw, before, after)
		if err != nil {
			return toResponse(req.UID, Errored(http.StatusInternalServerError, fmt.Errorf("computing patch: %w", err)), nil)
		}
		return toResponse(req.UID, resp, patch)
	}}
}

// Validator validates one kind of object, operation by operation. An error
// denies the request: with the Status it carries when it is a
// client.APIStatus, else with 403 Forbidden and its message. Warnings are
// returned to the API client either way.
type Validator[T any] interface {
	ValidateCreate(ctx context.Context, obj *T) (warnings []string, err error)
	ValidateUpdate(ctx context.Context, oldObj, newObj *T) (warnings []string, err error)
	// ValidateDelete gets the object being deleted (nil if kube-apiserver
	// sent none).
	ValidateDelete(ctx context.Context, oldObj *T) (warnings []string, err error)
}

// FromValidator returns a validating webhook that calls v's method for the
// request's operation. CONNECT requests are allowed.
func FromValidator[T any, PT client.ObjectPtr[T]](v Validator[T]) *Admission {
	return Validating[T, PT](func(ctx context.Context, req Request[T]) Response {
		var warnings []string
		var err error
		switch req.Operation {
		case admissionv1.Create:
			warnings, err = v.ValidateCreate(ctx, req.Object)
		case admissionv1.Update:
			warnings, err = v.ValidateUpdate(ctx, req.OldObject, req.Object)
		case admissionv1.Delete:
			warnings, err = v.ValidateDelete(ctx, req.OldObject)
		}
		if err != nil {
			r := Errored(http.StatusForbidden, err)
			r.Warnings = warnings
			return r
		}
		return Allowed(warnings...)
	})
}

// Defaulter sets defaults on one kind of object. An error denies the request
// as a Validator's does.
type Defaulter[T any] interface {
	Default(ctx context.Context, obj *T) error
}

// FromDefaulter returns a mutating webhook that calls d on the object of
// CREATE and UPDATE requests and answers with the patch of what it changed.
func FromDefaulter[T any, PT client.ObjectPtr[T]](d Defaulter[T]) *Admission {
	return Mutating[T, PT](func(ctx context.Context, req Request[T]) Response {
		if req.Object == nil {
			return Allowed()
		}
		if err := d.Default(ctx, req.Object); err != nil {
			return Errored(http.StatusForbidden, err)
		}
		return Allowed()
	})
}
