package webhook

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

// Three versions of one kind: v2 is the hub; v1 has a size, v2 replicas and
// a color, v3 replicas as a string.
type ThingV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int32 `json:"size"`
	} `json:"spec"`
}

type ThingV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas int32  `json:"replicas"`
		Color    string `json:"color,omitempty"`
	} `json:"spec"`
}

type ThingV3 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas string `json:"replicas"`
		Color    string `json:"color,omitempty"`
	} `json:"spec"`
}

// NoTypeMeta has no TypeMeta: its encoding has no apiVersion.
type NoTypeMeta struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func thingKind(version string) client.Kind {
	return client.Kind{Group: "conv.webhook.kapi.dev", Version: version, Resource: "things", Kind: "Thing", Namespaced: true}
}

func init() {
	client.Register[ThingV1](thingKind("v1"))
	client.Register[ThingV2](thingKind("v2"))
	client.Register[ThingV3](thingKind("v3"))
	client.Register[NoTypeMeta](thingKind("v9"))
}

func v1Up(src *ThingV1, dst *ThingV2) error {
	if src.Spec.Size < 0 {
		return errors.New("spec.size is negative")
	}
	if src.Spec.Size == 666 {
		panic("cursed size")
	}
	dst.Spec.Replicas = src.Spec.Size
	dst.Spec.Color = src.Annotations["thing.example.com/color"]
	return nil
}

func v1Down(src *ThingV2, dst *ThingV1) error {
	dst.Spec.Size = src.Spec.Replicas
	if src.Spec.Color != "" {
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations["thing.example.com/color"] = src.Spec.Color
	}
	return nil
}

func v3Up(src *ThingV3, dst *ThingV2) error {
	n, err := strconv.Atoi(src.Spec.Replicas)
	dst.Spec.Replicas, dst.Spec.Color = int32(n), src.Spec.Color
	return err
}

func v3Down(src *ThingV2, dst *ThingV3) error {
	dst.Spec.Replicas, dst.Spec.Color = strconv.Itoa(int(src.Spec.Replicas)), src.Spec.Color
	return nil
}

func newThingConversion(t *testing.T) *Conversion {
	t.Helper()
	c, err := NewConversion[ThingV2](Spoke(v1Up, v1Down), Spoke(v3Up, v3Down))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	thingV1 = `{"apiVersion":"conv.webhook.kapi.dev/v1","kind":"Thing","metadata":{"name":"a","namespace":"ns","uid":"u1","labels":{"l":"1"},"annotations":{"thing.example.com/color":"red"}},"spec":{"size":2}}`
	thingV2 = `{"apiVersion":"conv.webhook.kapi.dev/v2","kind":"Thing","metadata":{"name":"b","namespace":"ns","uid":"u2"},"spec":{"replicas":3,"color":"blue"}}`
	thingV3 = `{"apiVersion":"conv.webhook.kapi.dev/v3","kind":"Thing","metadata":{"name":"c","namespace":"ns","uid":"u3"},"spec":{"replicas":"4"}}`
)

func convReq(desired string, objects ...string) *apiextensionsv1.ConversionRequest {
	r := &apiextensionsv1.ConversionRequest{UID: "conv-uid", DesiredAPIVersion: desired}
	for _, o := range objects {
		r.Objects = append(r.Objects, metav1.RawExtension{Raw: []byte(o)})
	}
	return r
}

func TestConversion(t *testing.T) {
	c := newThingConversion(t)
	cases := []struct {
		name    string
		desired string
		objects []string
		want    []string
	}{
		{"spoke to hub", "conv.webhook.kapi.dev/v2", []string{thingV1},
			[]string{`{"apiVersion":"conv.webhook.kapi.dev/v2","kind":"Thing","metadata":{"name":"a","namespace":"ns","uid":"u1","labels":{"l":"1"},"annotations":{"thing.example.com/color":"red"}},"spec":{"replicas":2,"color":"red"}}`}},
		{"hub to spoke", "conv.webhook.kapi.dev/v1", []string{thingV2},
			[]string{`{"apiVersion":"conv.webhook.kapi.dev/v1","kind":"Thing","metadata":{"name":"b","namespace":"ns","uid":"u2","annotations":{"thing.example.com/color":"blue"}},"spec":{"size":3}}`}},
		{"spoke to spoke through the hub, mixed versions, order kept", "conv.webhook.kapi.dev/v3", []string{thingV1, thingV3, thingV2},
			[]string{
				`{"apiVersion":"conv.webhook.kapi.dev/v3","kind":"Thing","metadata":{"name":"a","namespace":"ns","uid":"u1","labels":{"l":"1"},"annotations":{"thing.example.com/color":"red"}},"spec":{"replicas":"2","color":"red"}}`,
				thingV3, // already in v3: unchanged, byte for byte
				`{"apiVersion":"conv.webhook.kapi.dev/v3","kind":"Thing","metadata":{"name":"b","namespace":"ns","uid":"u2"},"spec":{"replicas":"3","color":"blue"}}`,
			}},
		{"no objects", "conv.webhook.kapi.dev/v1", nil, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := c.Review(context.Background(), convReq(tc.desired, tc.objects...))
			if resp.UID != "conv-uid" || resp.Result.Status != metav1.StatusSuccess || len(resp.ConvertedObjects) != len(tc.want) {
				t.Fatalf("got %+v", resp)
			}
			for i, o := range resp.ConvertedObjects {
				if i == 1 && len(tc.objects) == 3 {
					if string(o.Raw) != tc.want[i] {
						t.Errorf("object %d = %s, want it unchanged", i, o.Raw)
					}
					continue
				}
				if !jsonEqual(t, o.Raw, []byte(tc.want[i])) {
					t.Errorf("object %d\n got %s\nwant %s", i, o.Raw, tc.want[i])
				}
			}
		})
	}
}

func TestConversionFailures(t *testing.T) {
	c := newThingConversion(t)
	negative := strings.Replace(thingV1, `"size":2`, `"size":-1`, 1)
	cursed := strings.Replace(thingV1, `"size":2`, `"size":666`, 1)
	cases := []struct {
		name    string
		req     *apiextensionsv1.ConversionRequest
		message string
	}{
		{"unknown desired version", convReq("conv.webhook.kapi.dev/v7", thingV1),
			`cannot convert to "conv.webhook.kapi.dev/v7": this webhook converts Thing in ["conv.webhook.kapi.dev/v1" "conv.webhook.kapi.dev/v2" "conv.webhook.kapi.dev/v3"]`},
		{"unknown object version", convReq("conv.webhook.kapi.dev/v1", thingV2, strings.Replace(thingV2, "/v2", "/v5", 1)),
			`converting object 1 to conv.webhook.kapi.dev/v1: apiVersion "conv.webhook.kapi.dev/v5" is not one of ["conv.webhook.kapi.dev/v1" "conv.webhook.kapi.dev/v2" "conv.webhook.kapi.dev/v3"]`},
		{"other kind", convReq("conv.webhook.kapi.dev/v1", strings.Replace(thingV2, `"Thing"`, `"Other"`, 1)),
			`converting object 0 to conv.webhook.kapi.dev/v1: kind is "Other", not "Thing"`},
		{"not an object", convReq("conv.webhook.kapi.dev/v1", `[1]`), "converting object 0 to conv.webhook.kapi.dev/v1: not a JSON object: "},
		{"undecodable", convReq("conv.webhook.kapi.dev/v1", strings.Replace(thingV3, `"4"`, `4`, 1)), "converting object 0 to conv.webhook.kapi.dev/v1: "},
		{"conversion error", convReq("conv.webhook.kapi.dev/v3", negative), "converting object 0 to conv.webhook.kapi.dev/v3: spec.size is negative"},
		{"conversion panic", convReq("conv.webhook.kapi.dev/v2", cursed), "conversion webhook panicked: cursed size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := c.Review(context.Background(), tc.req)
			if resp.UID != "conv-uid" || resp.Result.Status != metav1.StatusFailure || resp.ConvertedObjects != nil ||
				!strings.HasPrefix(resp.Result.Message, tc.message) {
				t.Fatalf("got %+v, want Failure %q", resp, tc.message)
			}
		})
	}
}

func TestNewConversionErrors(t *testing.T) {
	type Unregistered struct {
		metav1.ObjectMeta `json:"metadata,omitempty"`
	}
	up := func(*ThingV1, *ThingV2) error { return nil }
	down := func(*ThingV2, *ThingV1) error { return nil }
	if _, err := NewConversion[Unregistered](); err == nil || !strings.Contains(err.Error(), "hub type *webhook.Unregistered is not registered") {
		t.Errorf("unregistered hub: %v", err)
	}
	if _, err := NewConversion[ThingV2](Spoke(up, down), Spoke(up, down)); err == nil || err.Error() != "webhook: two types are version conv.webhook.kapi.dev/v1 of Thing" {
		t.Errorf("duplicate version: %v", err)
	}
	if _, err := NewConversion[ThingV2](Spoke(func(*Unregistered, *ThingV2) error { return nil }, func(*ThingV2, *Unregistered) error { return nil })); err == nil ||
		!strings.Contains(err.Error(), "spoke type *webhook.Unregistered is not registered") {
		t.Errorf("unregistered spoke: %v", err)
	}
	if _, err := NewConversion[ThingV2](Spoke(func(*Gadget, *ThingV2) error { return nil }, func(*ThingV2, *Gadget) error { return nil })); err == nil ||
		!strings.Contains(err.Error(), "is test.webhook.kapi.dev/v1, Kind=Gadget, not a version of conv.webhook.kapi.dev/v2, Kind=Thing") {
		t.Errorf("other kind: %v", err)
	}
	c, err := NewConversion[ThingV2](Spoke(func(*NoTypeMeta, *ThingV2) error { return nil }, func(*ThingV2, *NoTypeMeta) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	resp := c.Review(context.Background(), convReq("conv.webhook.kapi.dev/v9", thingV2))
	if resp.Result.Status != metav1.StatusFailure || !strings.Contains(resp.Result.Message, "does not encode apiVersion and kind") {
		t.Errorf("type without TypeMeta: %+v", resp)
	}
}

func TestConversionServeHTTP(t *testing.T) {
	c := newThingConversion(t)
	for _, v := range conversionVersions {
		body := mustJSON(t, map[string]any{"apiVersion": v, "kind": "ConversionReview",
			"request": map[string]any{"uid": "x", "desiredAPIVersion": "conv.webhook.kapi.dev/v2", "objects": []any{jsonValue(t, thingV1)}}})
		w := post(t, c, "application/json", body)
		var out apiextensionsv1.ConversionReview
		if err := codec.UnmarshalJSON(w.Body.Bytes(), &out); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %s", v, w.Code, w.Body)
		}
		if out.APIVersion != v || out.Kind != "ConversionReview" || out.Response.UID != "x" || len(out.Response.ConvertedObjects) != 1 ||
			out.Response.Result.Status != metav1.StatusSuccess {
			t.Fatalf("%s: answered %s", v, w.Body)
		}
	}
	for _, tc := range []struct {
		body string
		code int
		msg  string
	}{
		{`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, 400, "ConversionReview has no request"},
		{`{"apiVersion":"admission.k8s.io/v1","request":{}}`, 400, `apiVersion "admission.k8s.io/v1" is not supported`},
		{`nope`, 400, "request body is not a review"},
	} {
		if w := post(t, c, "application/json", []byte(tc.body)); w.Code != tc.code || !strings.Contains(w.Body.String(), tc.msg) {
			t.Errorf("%s: %d %s", tc.body, w.Code, w.Body)
		}
	}
	if w := post(t, c, "application/yaml", nil); w.Code != 415 {
		t.Errorf("yaml: %d %s", w.Code, w.Body)
	}
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := codec.UnmarshalJSON([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
