package client

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/codec"
)

var (
	configMapsGVR = GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podsGVR       = GroupVersionResource{Version: "v1", Resource: "pods"}
	widgetsGVR    = GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

func newConfigMap(name string, data map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "web"}},
		"data":     data,
	}}
}

// The dynamic client goes through every verb the reference server serves, in
// JSON whatever the Config prefers.
func TestDynamicConfigMaps(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServer(t)
			ctx := testContext(t)
			cms := Dynamic(s.client(t, enc.contentType)).Resource(configMapsGVR).Namespace("test")

			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer w.Stop()

			created, err := cms.Create(ctx, newConfigMap("cm1", map[string]any{"k": "v"}), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			checkWire(t, s, http.MethodPost, codec.MediaTypeJSON)
			if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetNamespace() != "test" {
				t.Errorf("created %v", created.Object)
			}
			if _, err := cms.Create(ctx, newConfigMap("cm2", nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}

			got, err := cms.Get(ctx, "cm1", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			checkWire(t, s, http.MethodGet, codec.MediaTypeJSON)
			if v, _, _ := unstructured.NestedString(got.Object, "data", "k"); v != "v" || got.GetKind() != "ConfigMap" {
				t.Errorf("Get %v", got.Object)
			}

			if err := unstructured.SetNestedField(got.Object, "w", "data", "k"); err != nil {
				t.Fatal(err)
			}
			updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if v, _, _ := unstructured.NestedString(updated.Object, "data", "k"); v != "w" {
				t.Errorf("Update %v", updated.Object)
			}
			if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !IsConflict(err) {
				t.Errorf("stale Update: %v", err)
			}

			list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(list.Items) != 2 || list.Kind != "ConfigMapList" || list.APIVersion != "v1" || list.ResourceVersion == "" {
				t.Fatalf("List: %d items, %+v", len(list.Items), list)
			}
			for _, it := range list.Items {
				if it.GetKind() != "ConfigMap" || it.GetAPIVersion() != "v1" {
					t.Errorf("item %s kind %q apiVersion %q", it.GetName(), it.GetKind(), it.GetAPIVersion())
				}
			}
			all, err := Dynamic(s.client(t, enc.contentType)).Resource(configMapsGVR).List(ctx, metav1.ListOptions{})
			if err != nil || len(all.Items) != 2 {
				t.Errorf("List across namespaces: %v %v", all, err)
			}

			if err := cms.Delete(ctx, "cm1", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if _, err := cms.Get(ctx, "cm1", metav1.GetOptions{}); !IsNotFound(err) {
				t.Errorf("Get after Delete: %v", err)
			}
			if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"}); err != nil {
				t.Fatalf("DeleteCollection: %v", err)
			}
			if list, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
				t.Errorf("after DeleteCollection: %v %v", list, err)
			}

			var types []EventType
			var names []string
			for len(types) < 5 {
				ev := next(t, w)
				if ev.Type == EventError {
					t.Fatalf("watch: %v", ev.Err)
				}
				types = append(types, ev.Type)
				names = append(names, ev.Object.GetName())
				if ev.Object.GetKind() != "ConfigMap" {
					t.Errorf("event object kind %q", ev.Object.GetKind())
				}
			}
			wantTypes := []EventType{EventAdded, EventAdded, EventModified, EventDeleted, EventDeleted}
			if !reflect.DeepEqual(types, wantTypes) || !reflect.DeepEqual(names, []string{"cm1", "cm2", "cm1", "cm1", "cm2"}) {
				t.Errorf("events %v %v", types, names)
			}
		})
	}
}

func TestDynamicStatusAndSubresources(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	pods := Dynamic(s.client(t, codec.MediaTypeJSON)).Resource(podsGVR).Namespace("test")
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
	}}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(created.Object, "Running", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	st, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("UpdateStatus: %v", err)
	}
	if x := s.last(http.MethodPut); x.Path != "/api/v1/namespaces/test/pods/p/status" {
		t.Errorf("UpdateStatus went to %s", x.Path)
	}
	if phase, _, _ := unstructured.NestedString(st.Object, "status", "phase"); phase != "Running" {
		t.Errorf("phase %q", phase)
	}
	var viaSub unstructured.Unstructured
	if err := pods.GetSubresource(ctx, "p", "status", &viaSub, metav1.GetOptions{}); err != nil {
		t.Fatalf("Get status: %v", err)
	}
	if phase, _, _ := unstructured.NestedString(viaSub.Object, "status", "phase"); phase != "Running" {
		t.Errorf("status subresource phase %q", phase)
	}

	// Cluster-scoped resources take no namespace.
	nss, err := Dynamic(s.client(t, codec.MediaTypeJSON)).Resource(GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	var nsNames []string
	if nss != nil {
		for _, it := range nss.Items {
			nsNames = append(nsNames, it.GetName())
		}
	}
	if err != nil || !slices.Equal(nsNames, []string{"default", "kube-node-lease", "kube-public", "kube-system", "test"}) {
		t.Errorf("namespaces: %v %v", nsNames, err)
	}

	// Bodies must say what they are.
	if _, err := pods.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}, metav1.CreateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "kind") {
		t.Errorf("Create without kind: %v", err)
	}
	if _, err := pods.Patch(ctx, "p", MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status", "more"); err == nil {
		t.Error("two subresources accepted")
	}
}

// A custom resource, by GroupVersionResource alone.
func TestDynamicWidgets(t *testing.T) {
	s := newWidgetServer(t)
	ctx := testContext(t)
	widgets := Dynamic(s.client(t, codec.MediaTypeProtobuf)).Resource(widgetsGVR).Namespace("test")
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"color": "blue", "size": int64(2)},
	}}
	created, err := widgets.Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(created.Object, "spec", "size"); size != 2 {
		t.Errorf("size %d", size)
	}
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetKind() != "Widget" {
		t.Fatalf("List %v %v", list, err)
	}
	// The typed client reads what the dynamic one wrote.
	typed, err := For[Widget](s.client(t, codec.MediaTypeJSON).WithScheme(widgetScheme(t))).Get(ctx, "w1", metav1.GetOptions{})
	if err != nil || typed.Spec.Color != "blue" || typed.Spec.Size != 2 {
		t.Errorf("typed Get %+v %v", typed, err)
	}
}

// Patch and apply requests carry the patch type, the options and the body
// as given; their answers decode. (The reference server does not serve
// PATCH yet; a recording server stands in.)
func TestDynamicPatchAndApplyRequests(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"test"},"spec":{"size":4}}`))
	})
	c := newTestClient(t, &Config{Host: rec.srv.URL})
	ctx := testContext(t)
	widgets := Dynamic(c).Resource(widgetsGVR).Namespace("test")
	got, err := widgets.Patch(ctx, "w1", MergePatchType, []byte(`{"spec":{"size":4}}`), metav1.PatchOptions{FieldManager: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 4 {
		t.Errorf("patched size %d", size)
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": int64(4)}}}
	if _, err := widgets.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "me", Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.ApplyStatus(ctx, cfg, metav1.ApplyOptions{FieldManager: "me"}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	want := []recordedRequest{
		{Method: "PATCH", Path: "/apis/example.com/v1/namespaces/test/widgets/w1", RawQuery: "fieldManager=me",
			Body: []byte(`{"spec":{"size":4}}`)},
		{Method: "PATCH", Path: "/apis/example.com/v1/namespaces/test/widgets/w1", RawQuery: "fieldManager=me&force=true",
			Body: []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":4}}`)},
		{Method: "PATCH", Path: "/apis/example.com/v1/namespaces/test/widgets/w1/status", RawQuery: "fieldManager=me&force=false"},
	}
	cts := []string{codec.MediaTypeMergePatch, codec.MediaTypeApplyPatch, codec.MediaTypeApplyPatch}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.Method || r.Path != w.Path || r.RawQuery != w.RawQuery {
			t.Errorf("request %d: %s %s?%s, want %s %s?%s", i, r.Method, r.Path, r.RawQuery, w.Method, w.Path, w.RawQuery)
		}
		if w.Body != nil && string(r.Body) != string(w.Body) {
			t.Errorf("request %d body %s, want %s", i, r.Body, w.Body)
		}
		if ct := r.Header.Get("Content-Type"); ct != cts[i] {
			t.Errorf("request %d Content-Type %q, want %q", i, ct, cts[i])
		}
	}
}
