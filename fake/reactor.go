package fake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// ReactionFunc may answer a request instead of the server. It returns
// handled false to let the request go on (to the next reactor, and finally
// to the server). With handled true, the client receives, as the server
// would send it:
//
//   - err, when not nil: an error carrying a Status (client.APIStatus, such
//     as client.NewStatusError(metav1.NewConflict(…))) is answered with that
//     Status and its code; any other error with a 500 InternalError whose
//     message is err's.
//   - otherwise obj: a *metav1.Status is answered as a Status with its code
//     (a Failure without a code is a 500, a Success a 200); any other value
//     is encoded as the response body, with status 201 for a create and 200
//     otherwise, in JSON, or in protobuf when the client asked for it and
//     obj's type encodes itself. A typed object or list without kind and
//     apiVersion gets those of the resource (or of its list), as server
//     responses carry them.
//   - neither: a Success Status, with code 201 for a create and 200
//     otherwise.
//
// A watch can only be failed by a reactor (an error, or a Failure Status);
// an object answering a watch is a 500 explaining so.
//
// A ReactionFunc runs on the goroutine of the request, and may run
// concurrently with itself for concurrent requests.
type ReactionFunc func(action Action) (handled bool, obj any, err error)

// reactor is a registered ReactionFunc with the requests it applies to.
type reactor struct {
	verb, resource string
	fn             ReactionFunc
}

// PrependReactor adds a reactor that sees requests before every reactor
// added so far, and before the server.
//
// verb is a Kubernetes verb (get, list, watch, create, update, patch,
// delete, deletecollection) or "*" for any. resource is the plural
// resource name, such as "pods" (which also matches every subresource of
// pods, as client-go's reactors do), "pods/status" for one subresource only,
// "pods/*" for any subresource of pods, "*/status" for the status of any
// resource, or "*" for any. The group is not matched; look at
// Action.Resource.Group in fn when two groups share a resource name.
//
// Reactors apply to requests the client makes, not to the Fake's own
// seeding.
func (f *Fake) PrependReactor(verb, resource string, fn ReactionFunc) {
	f.reactorMu.Lock()
	defer f.reactorMu.Unlock()
	f.reactors = append([]reactor{{verb, resource, fn}}, f.reactors...)
}

// AddReactor adds a reactor that sees requests after every reactor added so
// far, and before the server. verb and resource are as for PrependReactor.
func (f *Fake) AddReactor(verb, resource string, fn ReactionFunc) {
	f.reactorMu.Lock()
	defer f.reactorMu.Unlock()
	f.reactors = append(slices.Clip(f.reactors), reactor{verb, resource, fn})
}

// react offers the action to the reactors in order and returns the answer
// of the first that handles it.
func (f *Fake) react(req *http.Request, a Action) (*http.Response, bool) {
	f.reactorMu.RLock()
	reactors := f.reactors // never modified in place
	f.reactorMu.RUnlock()
	for _, r := range reactors {
		if !a.Matches(r.verb, r.resource) {
			continue
		}
		handled, obj, err := r.fn(a)
		if handled {
			return f.reaction(req, a, obj, err), true
		}
	}
	return nil, false
}

// reaction renders a reactor's answer as the server would write it.
func (f *Fake) reaction(req *http.Request, a Action, obj any, err error) *http.Response {
	if err != nil {
		var as client.APIStatus
		if errors.As(err, &as) {
			st := as.Status()
			return statusResponse(req, &st)
		}
		return statusResponse(req, metav1.NewInternalError(err))
	}
	success := func() *metav1.Status {
		code := int32(http.StatusOK)
		if a.Verb == "create" {
			code = http.StatusCreated
		}
		return &metav1.Status{Status: metav1.StatusSuccess, Code: code}
	}
	switch o := obj.(type) {
	case nil:
		return statusResponse(req, success())
	case *metav1.Status:
		if o == nil {
			return statusResponse(req, success())
		}
		st := *o
		return statusResponse(req, &st)
	case metav1.Status:
		return statusResponse(req, &o)
	}
	if a.Verb == "watch" {
		return statusResponse(req, metav1.NewInternalError(fmt.Errorf(
			"fake: a reactor answered a watch of %s with a %T; a reactor can only fail a watch (return an error) or let it through", a.Resource.Resource, obj)))
	}
	code := http.StatusOK
	if a.Verb == "create" {
		code = http.StatusCreated
	}
	b, ct, err := f.encodeReaction(req, a, obj)
	if err != nil {
		return statusResponse(req, metav1.NewInternalError(fmt.Errorf("fake: encoding a reactor's %T: %w", obj, err)))
	}
	h := http.Header{}
	h.Set("Content-Type", ct)
	return response(req, code, h, b)
}

// encodeReaction encodes a reactor's object in the representation the
// request accepts, with the kind and apiVersion of the action's resource
// when the object has none.
func (f *Fake) encodeReaction(req *http.Request, a Action, obj any) ([]byte, string, error) {
	tm := f.typeMetaFor(a)
	if has, ok := obj.(interface{ GetObjectKind() *metav1.TypeMeta }); ok && *has.GetObjectKind() != (metav1.TypeMeta{}) {
		tm = *has.GetObjectKind()
	}
	offers := offersJSON
	pm, isProto := obj.(codec.ProtoMarshaler)
	if isProto && tm.Kind != "" {
		if t := reflect.TypeOf(obj); t.Kind() == reflect.Pointer && codec.HasOwnProtobuf(t.Elem()) {
			offers = offersJSONProtobuf
		}
	}
	if mt, err := codec.Negotiate(req.Header.Get("Accept"), offers); err == nil && mt.Subtype == mtProtobuf.Subtype {
		b, err := codec.MarshalProtobuf(tm, pm)
		return b, codec.MediaTypeProtobuf, err
	}
	b, err := kjson.Marshal(obj)
	if err != nil {
		return nil, "", err
	}
	return withTypeMeta(b, tm), codec.MediaTypeJSON, nil
}

// typeMetaFor is the kind and apiVersion of what answers the action: the
// resource's kind, or its list kind for a list; none for a subresource
// other than status (a scale is not of the resource's kind) or a resource
// the server does not serve.
func (f *Fake) typeMetaFor(a Action) metav1.TypeMeta {
	res := f.server.Registry().Get(a.Resource.Group, a.Resource.Version, a.Resource.Resource)
	if res == nil || (a.Subresource != "" && a.Subresource != "status") {
		return metav1.TypeMeta{}
	}
	tm := res.TypeMeta()
	if a.Verb == "list" || a.Verb == "deletecollection" {
		tm.Kind = res.ListKind
	}
	return tm
}

// withTypeMeta adds kind and apiVersion to a JSON object that has neither.
func withTypeMeta(b []byte, tm metav1.TypeMeta) []byte {
	if tm == (metav1.TypeMeta{}) || len(b) < 2 || b[0] != '{' {
		return b
	}
	var have metav1.TypeMeta
	if err := kjson.Unmarshal(b, &have); err != nil || have != (metav1.TypeMeta{}) {
		return b
	}
	head, err := kjson.Marshal(&tm)
	if err != nil {
		return b
	}
	out := make([]byte, 0, len(head)+len(b))
	out = append(out, head[:len(head)-1]...)
	if rest := bytes.TrimSpace(b[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}

// statusResponse writes a Status as the server does: its code (500 for a
// Failure without one, 200 for a Success), JSON or protobuf as the request
// accepts, and Retry-After for 429, 503 and 504 with a delay.
func statusResponse(req *http.Request, st *metav1.Status) *http.Response {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
		if st.Code >= 200 && st.Code < 300 {
			st.Status = metav1.StatusSuccess
		}
	}
	code := int(st.Code)
	switch {
	case code != 0:
	case st.Status == metav1.StatusSuccess:
		code = http.StatusOK
	default:
		code = http.StatusInternalServerError
	}
	h := http.Header{}
	if (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout) &&
		st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	if mt, err := codec.Negotiate(req.Header.Get("Accept"), offersJSONProtobuf); err == nil && mt.Subtype == mtProtobuf.Subtype {
		if b, err := codec.MarshalProtobuf(st.TypeMeta, st); err == nil {
			h.Set("Content-Type", codec.MediaTypeProtobuf)
			return response(req, code, h, b)
		}
	}
	b, err := kjson.Marshal(st)
	if err != nil {
		b = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"fake: encoding a Status failed","reason":"InternalError","code":500}`)
		code = http.StatusInternalServerError
	}
	h.Set("Content-Type", codec.MediaTypeJSON)
	return response(req, code, h, append(b, '\n'))
}

// response is a complete response with body b.
func response(req *http.Request, code int, h http.Header, b []byte) *http.Response {
	h.Set("Content-Length", strconv.Itoa(len(b)))
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       req,
	}
}

// The representations a reactor's answer can take, JSON first as the
// server offers them.
var (
	mtJSON             = mustMediaType(codec.MediaTypeJSON)
	mtProtobuf         = mustMediaType(codec.MediaTypeProtobuf)
	offersJSON         = []codec.MediaType{mtJSON}
	offersJSONProtobuf = []codec.MediaType{mtJSON, mtProtobuf}
)

// mustMediaType parses a media type constant.
func mustMediaType(s string) codec.MediaType {
	mt, err := codec.ParseMediaType(s)
	if err != nil {
		panic(err) // constants only
	}
	return mt
}
