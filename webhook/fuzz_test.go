package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	"github.com/kapi-dev/kapi/codec"
)

// FuzzAdmissionReview sends arbitrary bodies to a validating and a mutating
// handler: each answers with an HTTP error or a review of the same uid, and
// never with the 500 of a panic (Review recovers, so a panic in decoding
// would otherwise go unnoticed).
func FuzzAdmissionReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"test.webhook.kapi.dev","version":"v1","kind":"Gadget"},"operation":"CREATE","object":` + gadget + `}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":{"group":"test.webhook.kapi.dev","version":"v1","kind":"Gadget"},"operation":"UPDATE","object":{"spec":{"tags":{"a/b":"~"}}},"oldObject":{"spec":[]}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"u","kind":{"group":"test.webhook.kapi.dev","version":"v1","kind":"Gadget"},"operation":"DELETE","oldObject":{"metadata":{"name":1}}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","request":null}`))
	f.Add([]byte(`[]`))
	validating := Validating(func(_ context.Context, r Request[Gadget]) Response { return Allowed() })
	mutating := Mutating(func(_ context.Context, r Request[Gadget]) Response {
		if r.Object != nil {
			r.Object.Spec.Size++
			r.Object.Spec.Tags = map[string]string{"a/b~c": "d"}
		}
		return Allowed()
	})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, h := range []*Admission{validating, mutating} {
			w := post(t, h, "application/json", body)
			if w.Code != http.StatusOK {
				if w.Code != http.StatusBadRequest {
					t.Fatalf("HTTP %d: %s", w.Code, w.Body)
				}
				continue
			}
			var in, out admissionv1.AdmissionReview
			if err := codec.UnmarshalJSON(body, &in); err != nil {
				t.Fatalf("answered 200 to a body that does not decode: %v", err)
			}
			if err := codec.UnmarshalJSON(w.Body.Bytes(), &out); err != nil || out.Response == nil {
				t.Fatalf("answer %s: %v", w.Body, err)
			}
			if out.Response.UID != in.Request.UID {
				t.Fatalf("uid %q answered as %q", in.Request.UID, out.Response.UID)
			}
			if r := out.Response.Result; r != nil && (r.Code == 500 || strings.Contains(r.Message, "panicked")) {
				t.Fatalf("handler failed: %+v", r)
			}
			if out.Response.Patch != nil {
				p, err := jsonpatch.DecodePatch(out.Response.Patch)
				if err != nil {
					t.Fatalf("patch %s: %v", out.Response.Patch, err)
				}
				if _, err := p.Apply(in.Request.Object.Raw); err != nil {
					t.Fatalf("patch %s does not apply to %s: %v", out.Response.Patch, in.Request.Object.Raw, err)
				}
			}
		}
	})
}

// FuzzCreatePatch: no input panics CreatePatch, and when the original is what
// the handler started from, the patch turns it into what the handler left.
func FuzzCreatePatch(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":"c"}]}`), []byte(`{"a":[2,{"b":"d"}],"e/~":null}`))
	f.Add([]byte(`{"l":[1,2,3]}`), []byte(`{"l":[3,2,1,0]}`))
	f.Add([]byte(`{"a":1}`), []byte(`{"a":{"b":[]}}`))
	f.Fuzz(func(t *testing.T, from, to []byte) {
		var fv, tv any
		if json.Unmarshal(from, &fv) != nil || json.Unmarshal(to, &tv) != nil {
			_, _ = CreatePatch(from, from, to) // must not panic
			return
		}
		_, fobj := fv.(map[string]any)
		_, tobj := tv.(map[string]any)
		if !fobj || !tobj { // objects are JSON objects (json-patch cannot replace a root by a scalar)
			_, _ = CreatePatch(from, from, to)
			return
		}
		from, _ = json.Marshal(fv) // one value per key, as kube-apiserver sends
		to, _ = json.Marshal(tv)
		patch, err := CreatePatch(from, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(from)+string(to), `"":`) {
			// The path of an empty key ("/" + "") is right by RFC 6901, but
			// evanphx/json-patch (as kube-apiserver's copy) cannot follow it.
			return
		}
		got := from
		if patch != nil {
			p, err := jsonpatch.DecodePatch(patch)
			if err != nil {
				t.Fatal(err)
			}
			if got, err = p.Apply(from); err != nil {
				t.Fatalf("%s does not apply to %s: %v", patch, from, err)
			}
		}
		if !jsonEqual(t, got, to) {
			t.Fatalf("%s → %s: patch %s gives %s", from, to, patch, got)
		}
	})
}

// FuzzConversionReview sends arbitrary bodies to a conversion webhook: it
// answers with an HTTP error or a review of the same uid, never a panic's
// failure, and a success has one object per object sent.
func FuzzConversionReview(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"conv.webhook.kapi.dev/v3","objects":[` + thingV1 + `,` + thingV2 + `]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","request":{"uid":"u","desiredAPIVersion":"conv.webhook.kapi.dev/v1","objects":[{"apiVersion":"conv.webhook.kapi.dev/v3","kind":"Thing","metadata":[],"spec":{"replicas":"x"}}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1beta1","request":{"objects":null}}`))
	c, err := NewConversion[ThingV2](Spoke(v1Up, v1Down), Spoke(v3Up, v3Down))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := post(t, c, "application/json", body)
		if w.Code != http.StatusOK {
			if w.Code != http.StatusBadRequest {
				t.Fatalf("HTTP %d: %s", w.Code, w.Body)
			}
			return
		}
		var in, out apiextensionsv1.ConversionReview
		if err := codec.UnmarshalJSON(body, &in); err != nil {
			t.Fatalf("answered 200 to a body that does not decode: %v", err)
		}
		if err := codec.UnmarshalJSON(w.Body.Bytes(), &out); err != nil || out.Response == nil || out.Response.UID != in.Request.UID {
			t.Fatalf("answer %s: %v", w.Body, err)
		}
		r := out.Response
		if strings.Contains(r.Result.Message, "panicked") && !strings.Contains(r.Result.Message, "cursed") {
			t.Fatalf("panic: %s", r.Result.Message)
		}
		if r.Result.Status == "Success" && len(r.ConvertedObjects) != len(in.Request.Objects) {
			t.Fatalf("%d objects for %d", len(r.ConvertedObjects), len(in.Request.Objects))
		}
	})
}
