package client

import (
	"net/http"
	"reflect"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/codec"
)

// Widget is a custom resource type as a user would write it outside kapi:
// TypeMeta and ObjectMeta embedded, its own spec and status, no protobuf
// methods of its own (ObjectMeta's are promoted to it).
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Color string `json:"color,omitempty"`
	Size  int64  `json:"size,omitempty"`
}

type WidgetStatus struct {
	Ready bool `json:"ready,omitempty"`
}

// DeepCopy lets the reference server's registry store widgets.
func (w *Widget) DeepCopy() *Widget {
	out := *w
	out.ObjectMeta = *w.ObjectMeta.DeepCopy()
	return &out
}

var widgetKind = Kind{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true}

// widgetScheme returns the built-in scheme plus Widget.
func widgetScheme(t testing.TB) *Scheme {
	t.Helper()
	s := NewBuiltinScheme()
	if err := Add[Widget](s, widgetKind); err != nil {
		t.Fatal(err)
	}
	return s
}

// newWidgetServer is the reference server with widgets registered as a
// resource of its own. (The reference server does not serve
// CustomResourceDefinitions yet; registering the Go type directly gives the
// same wire behaviour for the verbs it serves.)
func newWidgetServer(t testing.TB) *testServer {
	t.Helper()
	reg := registry.Builtin()
	if err := reg.Add(registry.Typed[Widget](&registry.Resource{Group: "example.com", Version: "v1",
		Resource: "widgets", Kind: "Widget", Namespaced: true, StatusSubresource: true, Generation: true})); err != nil {
		t.Fatal(err)
	}
	return newTestServerWith(t, apiserver.Config{Registry: reg})
}

// Protobuf detection: built-in kinds encode themselves; Widget only inherits
// ObjectMeta's methods; CustomResourceDefinition has none; and a registered
// kind that does not declare protobuf never uses it.
func TestProtobufDetection(t *testing.T) {
	s := widgetScheme(t)
	if !UsesProtobuf[corev1.Pod](s) {
		t.Error("Pod should use protobuf")
	}
	if UsesProtobuf[Widget](s) {
		t.Error("Widget uses protobuf through ObjectMeta's promoted methods")
	}
	if _, ok := any(&Widget{}).(codec.ProtoMarshaler); !ok {
		t.Fatal("test premise: *Widget should have ObjectMeta's promoted protobuf methods")
	}
	if codec.HasOwnProtobuf(reflect.TypeFor[Widget]()) {
		t.Error("codec.HasOwnProtobuf(Widget) = true")
	}
	if !codec.HasOwnProtobuf(reflect.TypeFor[corev1.Pod]()) || !codec.HasOwnProtobuf(reflect.TypeFor[metav1.ObjectMeta]()) {
		t.Error("ownsProtobufMethods of a generated type = false")
	}
	// A struct embedding a type with its own methods, and declaring its own
	// that shadow them, owns them.
	if !codec.HasOwnProtobuf(reflect.TypeFor[shadowing]()) {
		t.Error("codec.HasOwnProtobuf(shadowing) = false")
	}
	noPB := NewScheme()
	if err := Add[corev1.Pod](noPB, Kind{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	if UsesProtobuf[corev1.Pod](noPB) {
		t.Error("Pod registered without Protobuf uses it")
	}
}

// shadowing embeds a kind and declares the protobuf methods itself.
type shadowing struct {
	corev1.Pod
}

func (s *shadowing) Size() int                                  { return s.Pod.Size() }
func (s *shadowing) MarshalToSizedBuffer(b []byte) (int, error) { return s.Pod.MarshalToSizedBuffer(b) }
func (s *shadowing) Unmarshal(b []byte) error                   { return s.Pod.Unmarshal(b) }

func TestRegisterConflicts(t *testing.T) {
	s := NewScheme()
	if err := Add[Widget](s, widgetKind); err != nil {
		t.Fatal(err)
	}
	if err := Add[Widget](s, widgetKind); err != nil {
		t.Errorf("registering the same kind again: %v", err)
	}
	other := widgetKind
	other.Resource = "gadgets"
	if err := Add[Widget](s, other); err == nil {
		t.Error("registering Widget as a second kind succeeded")
	}
	if err := Add[corev1.Pod](s, widgetKind); err == nil {
		t.Error("registering a second type for example.com/v1 Widget succeeded")
	}
	if err := Add[corev1.Pod](s, Kind{Resource: "pods"}); err == nil {
		t.Error("registering an incomplete kind succeeded")
	}
	if k, ok := KindFor[Widget](s); !ok || k.ListKind != "WidgetList" {
		t.Errorf("KindFor(Widget) = %+v %v", k, ok)
	}
}

// A custom resource type defined outside kapi goes through every verb the
// reference server serves, in JSON even when the client prefers protobuf.
func TestWidgetAgainstServer(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newWidgetServer(t)
			ctx := testContext(t)
			widgets := For[Widget](s.client(t, enc.contentType).WithScheme(widgetScheme(t)))

			w, err := widgets.Create(ctx, &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Spec: WidgetSpec{Color: "red", Size: 3}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			checkWire(t, s, http.MethodPost, codec.MediaTypeJSON)
			if w.Spec.Color != "red" || w.Kind != "Widget" || w.APIVersion != "example.com/v1" || w.UID == "" {
				t.Errorf("created %+v", w)
			}
			if x := s.last(http.MethodPost); x.Path != "/apis/example.com/v1/namespaces/test/widgets" {
				t.Errorf("created at %s", x.Path)
			}

			watcher, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: w.ResourceVersion})
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer watcher.Stop()

			w.Spec.Size = 4
			w2, err := widgets.Update(ctx, w, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			w2.Status.Ready = true
			w3, err := widgets.UpdateStatus(ctx, w2, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("UpdateStatus: %v", err)
			}
			if !w3.Status.Ready || w3.Spec.Size != 4 {
				t.Errorf("after UpdateStatus %+v", w3)
			}
			got, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
			if err != nil || got.Spec.Size != 4 || !got.Status.Ready || got.Generation != 2 {
				t.Fatalf("Get: %+v %v", got, err)
			}
			list, err := widgets.List(ctx, metav1.ListOptions{})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name != "w1" || list.Kind != "WidgetList" {
				t.Fatalf("List: %+v %v", list, err)
			}
			if err := widgets.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("Delete: %v", err)
			}

			var types []EventType
			for ev := range watcher.ResultChan() {
				if ev.Type == EventError {
					t.Fatalf("watch error: %v", ev.Err)
				}
				types = append(types, ev.Type)
				if ev.Object.Name != "w1" || ev.Object.Kind != "Widget" {
					t.Errorf("event object %+v", ev.Object.ObjectMeta)
				}
				if len(types) == 3 {
					break
				}
			}
			want := []EventType{EventModified, EventModified, EventDeleted}
			if !reflect.DeepEqual(types, want) {
				t.Errorf("events %v, want %v", types, want)
			}
		})
	}
}
