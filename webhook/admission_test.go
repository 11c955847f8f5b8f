package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

const gadget = `{"apiVersion":"test.webhook.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g","namespace":"ns"},"spec":{"size":3}}`

// sizeLimit denies gadgets larger than 10 and warns about size 0.
func sizeLimit(_ context.Context, req Request[Gadget]) Response {
	if req.Object == nil {
		return Allowed()
	}
	if req.Object.Spec.Size > 10 {
		return Response{Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: "spec.size must be at most 10"}
	}
	if req.Object.Spec.Size == 0 {
		return Allowed("spec.size is 0")
	}
	if req.Object.Spec.Size == 7 {
		return Denied("size 7 is unlucky")
	}
	return Allowed()
}

func TestValidatingReview(t *testing.T) {
	h := Validating(sizeLimit)
	cases := []struct {
		name string
		req  *admissionv1.AdmissionRequest
		want admissionv1.AdmissionResponse
	}{
		{"allowed", request(admissionv1.Create, gadget, ""), admissionv1.AdmissionResponse{UID: "uid-1", Allowed: true}},
		{"allowed with warning", request(admissionv1.Create, strings.Replace(gadget, `"size":3`, `"size":0`, 1), ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Allowed: true, Warnings: []string{"spec.size is 0"}}},
		{"denied with code and reason", request(admissionv1.Create, strings.Replace(gadget, `"size":3`, `"size":11`, 1), ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Result: &metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: "spec.size must be at most 10"}}},
		{"denied with defaults", request(admissionv1.Create, strings.Replace(gadget, `"size":3`, `"size":7`, 1), ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Result: &metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "size 7 is unlucky"}}},
		{"create without object", request(admissionv1.Create, "", ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Result: &metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "request has no object"}}},
		{"update without old object", request(admissionv1.Update, gadget, ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Result: &metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest, Message: "request has no oldObject"}}},
		{"undecodable object", request(admissionv1.Create, `{"spec":{"size":"big"}}`, ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Result: &metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest}}},
		{"unknown operation", request("PATCH", gadget, ""),
			admissionv1.AdmissionResponse{UID: "uid-1", Result: &metav1.Status{Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest, Message: `operation "PATCH" is not one of CREATE, UPDATE, DELETE, CONNECT`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := h.Review(context.Background(), tc.req)
			if tc.name == "undecodable object" && got.Result != nil && strings.HasPrefix(got.Result.Message, "decoding object: ") {
				got.Result.Message = "" // the decoder's wording is not ours
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("response\n got %+v %+v\nwant %+v %+v", *got, got.Result, tc.want, tc.want.Result)
			}
		})
	}
}

// TestValidatingKindMismatch: a request for another kind than the handler's
// registered type is refused before the handler runs.
func TestValidatingKindMismatch(t *testing.T) {
	called := false
	h := Validating(func(context.Context, Request[Gadget]) Response { called = true; return Allowed() })
	req := request(admissionv1.Create, gadget, "")
	req.Kind.Version = "v2"
	got := h.Review(context.Background(), req)
	if got.Allowed || called || got.Result.Code != 400 ||
		got.Result.Message != "this webhook admits test.webhook.kapi.dev/v1, Kind=Gadget, not test.webhook.kapi.dev/v2, Kind=Gadget" {
		t.Fatalf("got %+v %+v, handler called %v", got, got.Result, called)
	}
}

// TestRequestObjectsPerOperation checks which objects are decoded for each
// operation; on DELETE the object being deleted is OldObject.
func TestRequestObjectsPerOperation(t *testing.T) {
	old := strings.Replace(gadget, `"size":3`, `"size":1`, 1)
	cases := []struct {
		op               admissionv1.Operation
		object, oldObj   string
		wantNew, wantOld int32 // sizes; -1 = nil
	}{
		{admissionv1.Create, gadget, "", 3, -1},
		{admissionv1.Update, gadget, old, 3, 1},
		{admissionv1.Delete, "", old, -1, 1},
		{admissionv1.Delete, "null", "", -1, -1},
		{admissionv1.Connect, `{"kind":"PodExecOptions","command":["sh"]}`, "", -1, -1},
	}
	size := func(g *Gadget) int32 {
		if g == nil {
			return -1
		}
		return g.Spec.Size
	}
	for _, tc := range cases {
		t.Run(string(tc.op), func(t *testing.T) {
			var gotNew, gotOld int32 = -2, -2
			h := Validating(func(_ context.Context, r Request[Gadget]) Response {
				gotNew, gotOld = size(r.Object), size(r.OldObject)
				if r.Operation != tc.op || r.Name != "g" || r.UID != "uid-1" {
					t.Errorf("request fields not passed: %+v", r.AdmissionRequest)
				}
				return Allowed()
			})
			if resp := h.Review(context.Background(), request(tc.op, tc.object, tc.oldObj)); !resp.Allowed {
				t.Fatalf("denied: %+v", resp.Result)
			}
			if gotNew != tc.wantNew || gotOld != tc.wantOld {
				t.Fatalf("object sizes %d, %d; want %d, %d", gotNew, gotOld, tc.wantNew, tc.wantOld)
			}
		})
	}
}

// TestHandlerPanic: a panicking handler denies with 500, and the handler
// keeps answering.
func TestHandlerPanic(t *testing.T) {
	h := Validating(func(_ context.Context, r Request[Gadget]) Response {
		if r.Object.Spec.Size == 3 {
			panic("boom")
		}
		return Allowed()
	})
	got := h.Review(context.Background(), request(admissionv1.Create, gadget, ""))
	if got.Allowed || got.UID != "uid-1" || got.Result.Code != 500 || got.Result.Reason != metav1.StatusReasonInternalError ||
		got.Result.Message != "admission webhook panicked: boom" {
		t.Fatalf("got %+v %+v", got, got.Result)
	}
	w := post(t, h, "application/json", mustJSON(t, admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  request(admissionv1.Create, gadget, "")}))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"code":500`) {
		t.Fatalf("over HTTP: %d %s", w.Code, w.Body)
	}
	if got := h.Review(context.Background(), request(admissionv1.Create, strings.Replace(gadget, `"size":3`, `"size":4`, 1), "")); !got.Allowed {
		t.Fatalf("after a panic: %+v", got.Result)
	}
}

// TestServeHTTP checks the HTTP side: the answer's apiVersion is the one
// asked, the uid is echoed, and requests that are not reviews get HTTP errors.
func TestServeHTTP(t *testing.T) {
	h := Validating(sizeLimit)
	review := func(apiVersion string) []byte {
		return mustJSON(t, admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: "AdmissionReview"},
			Request: request(admissionv1.Create, gadget, "")})
	}
	for _, v := range []string{"admission.k8s.io/v1", "admission.k8s.io/v1beta1"} {
		w := post(t, h, "application/json; charset=utf-8", review(v))
		var out admissionv1.AdmissionReview
		if err := codec.UnmarshalJSON(w.Body.Bytes(), &out); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %s %v", v, w.Code, w.Body, err)
		}
		if out.APIVersion != v || out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != "uid-1" || !out.Response.Allowed ||
			w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: answered %s", v, w.Body)
		}
	}
	errs := []struct {
		name, method, contentType string
		body                      []byte
		code                      int
		msg                       string
	}{
		{"GET", http.MethodGet, "application/json", review("admission.k8s.io/v1"), 405, "method GET is not allowed"},
		{"wrong content type", http.MethodPost, "text/plain", review("admission.k8s.io/v1"), 415, `content type "text/plain" is not supported`},
		{"no content type", http.MethodPost, "", review("admission.k8s.io/v1"), 415, `content type "" is not supported`},
		{"empty body", http.MethodPost, "application/json", nil, 400, "request body is empty"},
		{"bad JSON", http.MethodPost, "application/json", []byte(`{"request":`), 400, "request body is not a review"},
		{"no request", http.MethodPost, "application/json", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), 400, "AdmissionReview has no request"},
		{"unknown apiVersion", http.MethodPost, "application/json", review("admission.k8s.io/v2"), 400, `apiVersion "admission.k8s.io/v2" is not supported`},
		{"too large", http.MethodPost, "application/json", make([]byte, MaxRequestBytes+1), 413, "request body is larger than"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptestRequest(tc.method, tc.contentType, tc.body))
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.msg) {
				t.Fatalf("got %d %q, want %d %q", w.Code, w.Body, tc.code, tc.msg)
			}
		})
	}
}

// TestMutating checks the patch of a mutating handler: only what it changed,
// fields the Go type does not know kept, no patch when denied or unchanged.
func TestMutating(t *testing.T) {
	h := Mutating(func(_ context.Context, r Request[Gadget]) Response {
		switch r.Object.Spec.Size {
		case 11:
			r.Object.Spec.Color = "red" // changed, then denied: no patch
			return Denied("too big")
		case 5:
			return Allowed("unchanged")
		}
		r.Object.Spec.Color = "blue"
		if r.Object.Labels == nil {
			r.Object.Labels = map[string]string{}
		}
		r.Object.Labels["example.com/colored"] = "true"
		return Allowed()
	})
	object := `{"apiVersion":"test.webhook.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g","namespace":"ns","uid":"u"},"spec":{"size":3,"future":{"a":1}},"status":{"x":1}}`
	resp := h.Review(context.Background(), request(admissionv1.Create, object, ""))
	if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("got %+v", resp)
	}
	want := `[{"op":"add","path":"/metadata/labels","value":{"example.com/colored":"true"}},{"op":"add","path":"/spec/color","value":"blue"}]`
	if string(resp.Patch) != want {
		t.Fatalf("patch\n got %s\nwant %s", resp.Patch, want)
	}
	p, _ := jsonpatch.DecodePatch(resp.Patch)
	patched, err := p.Apply([]byte(object))
	if err != nil {
		t.Fatal(err)
	}
	wantObject := `{"apiVersion":"test.webhook.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g","namespace":"ns","uid":"u","labels":{"example.com/colored":"true"}},"spec":{"size":3,"color":"blue","future":{"a":1}},"status":{"x":1}}`
	if !jsonEqual(t, patched, []byte(wantObject)) {
		t.Fatalf("patched object %s", patched)
	}

	for _, tc := range []struct {
		name string
		req  *admissionv1.AdmissionRequest
		ok   bool
	}{
		{"denied", request(admissionv1.Create, strings.Replace(gadget, `"size":3`, `"size":11`, 1), ""), false},
		{"unchanged", request(admissionv1.Create, strings.Replace(gadget, `"size":3`, `"size":5`, 1), ""), true},
		{"delete", request(admissionv1.Delete, "", gadget), true},
	} {
		if tc.name == "delete" {
			h = Mutating(func(_ context.Context, r Request[Gadget]) Response { return Allowed() })
		}
		resp := h.Review(context.Background(), tc.req)
		if resp.Allowed != tc.ok || resp.Patch != nil || resp.PatchType != nil {
			t.Errorf("%s: got %+v", tc.name, resp)
		}
	}
}

type gadgetValidator struct{ calls []string }

func (v *gadgetValidator) ValidateCreate(_ context.Context, obj *Gadget) ([]string, error) {
	v.calls = append(v.calls, "create "+obj.Name)
	if obj.Spec.Size > 10 {
		return []string{"big"}, errors.New("spec.size: must be at most 10")
	}
	return nil, nil
}

func (v *gadgetValidator) ValidateUpdate(_ context.Context, oldObj, newObj *Gadget) ([]string, error) {
	v.calls = append(v.calls, "update "+oldObj.Name+" "+newObj.Name)
	if newObj.Spec.Size < oldObj.Spec.Size {
		return nil, client.NewStatusError(&metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid, Message: "spec.size: may not shrink",
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "FieldValueInvalid", Field: "spec.size"}}}})
	}
	return []string{"updated"}, nil
}

func (v *gadgetValidator) ValidateDelete(_ context.Context, oldObj *Gadget) ([]string, error) {
	v.calls = append(v.calls, "delete "+oldObj.Name)
	return nil, nil
}

func TestFromValidator(t *testing.T) {
	v := &gadgetValidator{}
	h := FromValidator[Gadget](v)
	bigger := strings.Replace(gadget, `"size":3`, `"size":11`, 1)
	smaller := strings.Replace(gadget, `"size":3`, `"size":1`, 1)

	if r := h.Review(context.Background(), request(admissionv1.Create, gadget, "")); !r.Allowed {
		t.Fatalf("create: %+v", r.Result)
	}
	r := h.Review(context.Background(), request(admissionv1.Create, bigger, ""))
	if r.Allowed || r.Result.Code != 403 || r.Result.Reason != metav1.StatusReasonForbidden || r.Result.Message != "spec.size: must be at most 10" || !reflect.DeepEqual(r.Warnings, []string{"big"}) {
		t.Fatalf("create big: %+v %+v", r, r.Result)
	}
	r = h.Review(context.Background(), request(admissionv1.Update, smaller, gadget))
	if r.Allowed || r.Result.Code != 422 || r.Result.Details == nil || r.Result.Details.Causes[0].Field != "spec.size" {
		t.Fatalf("update shrink: %+v %+v", r, r.Result)
	}
	if r = h.Review(context.Background(), request(admissionv1.Update, bigger, gadget)); !r.Allowed || !reflect.DeepEqual(r.Warnings, []string{"updated"}) {
		t.Fatalf("update: %+v", r)
	}
	if r = h.Review(context.Background(), request(admissionv1.Delete, "", gadget)); !r.Allowed {
		t.Fatalf("delete: %+v", r.Result)
	}
	if r = h.Review(context.Background(), request(admissionv1.Connect, `{}`, "")); !r.Allowed {
		t.Fatalf("connect: %+v", r.Result)
	}
	want := []string{"create g", "create g", "update g g", "update g g", "delete g"}
	if !reflect.DeepEqual(v.calls, want) {
		t.Fatalf("calls %q, want %q", v.calls, want)
	}
}

type gadgetDefaulter struct{}

func (gadgetDefaulter) Default(_ context.Context, g *Gadget) error {
	if g.Spec.Size < 0 {
		return errors.New("spec.size: must not be negative")
	}
	if g.Spec.Color == "" {
		g.Spec.Color = "grey"
	}
	return nil
}

func TestFromDefaulter(t *testing.T) {
	h := FromDefaulter[Gadget](gadgetDefaulter{})
	r := h.Review(context.Background(), request(admissionv1.Create, gadget, ""))
	if !r.Allowed || string(r.Patch) != `[{"op":"add","path":"/spec/color","value":"grey"}]` {
		t.Fatalf("create: %+v %s", r, r.Patch)
	}
	r = h.Review(context.Background(), request(admissionv1.Update, strings.Replace(gadget, `"size":3`, `"size":-1`, 1), gadget))
	if r.Allowed || r.Result.Code != 403 || r.Patch != nil {
		t.Fatalf("negative: %+v %+v", r, r.Result)
	}
	if r = h.Review(context.Background(), request(admissionv1.Delete, "", gadget)); !r.Allowed || r.Patch != nil {
		t.Fatalf("delete: %+v", r)
	}
}
