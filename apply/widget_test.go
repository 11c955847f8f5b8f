package apply_test

import (
	"reflect"

	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// Widget is a custom resource type as a user writes it: its merge tags
// (listType, listMapKey) are what its CRD's x-kubernetes-list-type and
// x-kubernetes-list-map-keys say, so the client derives the schema the
// server uses.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Color  string       `json:"color"`
	Size   *int64       `json:"size,omitempty"`
	Ports  []WidgetPort `json:"ports" listType:"map" listMapKey:"name"`
	Tags   []string     `json:"tags" listType:"set"`
	Paused bool         `json:"paused"`
	Limit  *int64       `json:"limit"`
}

type WidgetPort struct {
	Name   string `json:"name"`
	Port   int32  `json:"port"`
	Weight *int32 `json:"weight,omitempty"`
}

type WidgetStatus struct {
	Ready      bool               `json:"ready"`
	Conditions []metav1.Condition `json:"conditions,omitempty" listType:"map" listMapKey:"type"`
}

func (w *Widget) DeepCopy() *Widget {
	out := *w
	out.ObjectMeta = *w.ObjectMeta.DeepCopy()
	out.Spec.Ports = append([]WidgetPort(nil), w.Spec.Ports...)
	for i, p := range out.Spec.Ports {
		if p.Weight != nil {
			out.Spec.Ports[i].Weight = new(*p.Weight)
		}
	}
	out.Spec.Tags = append([]string(nil), w.Spec.Tags...)
	out.Status.Conditions = append([]metav1.Condition(nil), w.Status.Conditions...)
	if w.Spec.Size != nil {
		out.Spec.Size = new(*w.Spec.Size)
	}
	if w.Spec.Limit != nil {
		out.Spec.Limit = new(*w.Spec.Limit)
	}
	return &out
}

// widgets serves Widgets on a fake and returns their client.
func widgets(t *testing.T) client.Resource[Widget] {
	t.Helper()
	reg := registry.Builtin()
	if err := reg.Add(registry.Typed[Widget](&registry.Resource{Group: "example.com", Version: "v1",
		Resource: "widgets", Kind: "Widget", Namespaced: true, StatusSubresource: true, Generation: true})); err != nil {
		t.Fatal(err)
	}
	f := fake.NewWithOptions(t, fake.Options{Registry: reg})
	s := client.NewBuiltinScheme()
	if err := client.Add[Widget](s, client.Kind{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	return client.For[Widget](f.Client().WithScheme(s)).Namespace(ns)
}

func TestExtractRoundTripCustomResource(t *testing.T) {
	res := widgets(t)
	meta := metav1.ObjectMeta{Name: "w", Namespace: ns}
	t.Run("spec", func(t *testing.T) {
		a := &Widget{ObjectMeta: meta, Spec: WidgetSpec{Color: "red", Size: new(int64(0)),
			Ports: []WidgetPort{{Name: "http", Port: 80}}, Tags: []string{"x"}}}
		b := &Widget{ObjectMeta: meta, Spec: WidgetSpec{Ports: []WidgetPort{{Name: "grpc", Port: 9000}}, Tags: []string{"y"}}}
		roundTrip(t, res, apply.Of(a), apply.Of(b), false,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":{"color":"red","ports":[{"name":"http","port":80}],"size":0,"tags":["x"]}}`)
	})
	t.Run("status", func(t *testing.T) {
		a := &Widget{ObjectMeta: meta, Status: WidgetStatus{Ready: true,
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "ok"}}}}
		b := &Widget{ObjectMeta: meta, Status: WidgetStatus{
			Conditions: []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "Fine"}}}}
		roundTrip(t, res, apply.Of(a), apply.Of(b), true,
			`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"status":{"conditions":[{"message":"ok","reason":"Up","status":"True","type":"Ready"}],"ready":true}}`)
	})
}

// Fields a manager applied at their zero value ("paused": false, "color":
// "") are extracted and applied again: Extract claims every field the
// manager owns, whatever its Go value.
func TestExtractKeepsZeroValues(t *testing.T) {
	ctx := testContext(t)
	res := widgets(t)
	raw := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"z","namespace":"default"},"spec":{"color":"","paused":false}}`
	live, err := res.Patch(ctx, "z", client.ApplyPatchType, []byte(raw), metav1.PatchOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := apply.Extract(live, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, cfg); got != raw {
		t.Errorf("extracted\n got  %s\n want %s", got, raw)
	}
	// Of the same object claims none of them.
	if got := encode(t, apply.Of(cfg.Object())); got != `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"z","namespace":"default"}}` {
		t.Errorf("Of: %s", got)
	}
	again, err := res.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != live.ResourceVersion || !reflect.DeepEqual(again.ManagedFields, live.ManagedFields) {
		t.Errorf("re-apply changed the object: resourceVersion %s → %s, managedFields %v → %v",
			live.ResourceVersion, again.ResourceVersion, live.ManagedFields, again.ManagedFields)
	}
}

// Setting a field of an extracted configuration to nil releases it, even
// when its JSON tag does not omit it (a nil pointer is unset, as for Of).
func TestExtractReleaseByNil(t *testing.T) {
	ctx := testContext(t)
	res := widgets(t)
	a := &Widget{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns}, Spec: WidgetSpec{Color: "red", Limit: new(int64(5)),
		Ports: []WidgetPort{{Name: "http", Weight: new(int32(2))}, {Name: "grpc", Weight: new(int32(3))}}}}
	live, err := res.ApplyConfig(ctx, apply.Of(a), metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := apply.Extract(live, "a")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Object().Spec.Limit = nil
	cfg.Object().Spec.Ports[0].Weight = nil // the whole item claimed nothing else but its key
	if got := encode(t, cfg); got != `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"r","namespace":"default"},"spec":{"color":"red","ports":[{"name":"http"},{"name":"grpc","weight":3}]}}` {
		t.Errorf("sent %s", got)
	}
	got, err := res.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Limit != nil || fieldsOf(t, got.ManagedFields, "a", "") != `{"f:spec":{"f:color":{},"f:ports":{"k:{\"name\":\"grpc\"}":{".":{},"f:name":{},"f:weight":{}},"k:{\"name\":\"http\"}":{".":{},"f:name":{}}}}}` {
		t.Errorf("limit %v, a owns %s", got.Spec.Limit, fieldsOf(t, got.ManagedFields, "a", ""))
	}
}
