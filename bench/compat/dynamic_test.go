package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// widgetCRD is a namespaced CRD of kind Widget in group, with a schema
// (spec.size an integer, status.ready a boolean) and the status subresource.
func widgetCRD(group string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size":  {Type: "integer"},
							"color": {Type: "string"},
						}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"ready": {Type: "boolean"},
						}},
					},
				}},
			}},
		},
	}
}

// createCRD creates crd, deletes it when the test ends, and waits until it
// is Established.
func createCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ax, err := apiextensionsclient.NewForConfig(restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	if _, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		// Go on with a CRD created in JSON, so that the rest of the test
		// still says what works.
		t.Errorf("create the CRD with the apiextensions clientset: %v", err)
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			t.Fatal(err)
		}
		dc, err := dynamic.NewForConfig(restConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{Object: u}
		obj.SetAPIVersion("apiextensions.k8s.io/v1")
		obj.SetKind("CustomResourceDefinition")
		if _, err := dc.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create the CRD with the dynamic client: %v", err)
		}
	}
	t.Cleanup(func() {
		if err := ax.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("cleanup: delete CRD %s: %v", crd.Name, err)
		}
	})
	eventually(t, 20*time.Second, "CRD Established", func(ctx context.Context) error {
		got, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", got.Status.Conditions)
	})
}

func widget(group, name string, size int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetUnstructuredContent(map[string]any{
		"apiVersion": group + "/v1",
		"kind":       "Widget",
		"spec":       map[string]any{"size": size, "color": "red"},
	})
	u.SetName(name)
	u.SetLabels(map[string]string{"compat": "dynamic"})
	return u
}

func specSize(u *unstructured.Unstructured) int64 {
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
	return n
}

func unstructuredNames(list *unstructured.UnstructuredList) []string {
	var names []string
	for _, it := range list.Items {
		names = append(names, it.GetName())
	}
	slices.Sort(names)
	return names
}

// TestDynamicCRD creates a CRD with the apiextensions clientset and drives
// its resources with the dynamic client (JSON): every verb, the status
// subresource, schema validation and pruning, a watch; and the dynamic
// client on a built-in kind.
func TestDynamicCRD(t *testing.T) {
	ns := newNamespace(t, "dynamic")
	group := "compat" + suffix() + ".kapi.dev"
	createCRD(t, widgetCRD(group))
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	dc, err := dynamic.NewForConfig(restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	widgets := dc.Resource(gvr).Namespace(ns)
	ctx := testContext(t)

	t.Run("discovery", func(t *testing.T) {
		disc, err := discovery.NewDiscoveryClientForConfig(restConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "widgets in discovery", func(ctx context.Context) error {
			rl, err := disc.ServerResourcesForGroupVersion(group + "/v1")
			if err != nil {
				return err
			}
			for _, r := range rl.APIResources {
				if r.Name == "widgets" && r.Kind == "Widget" && r.Namespaced {
					return nil
				}
			}
			return fmt.Errorf("resources %+v", rl.APIResources)
		})
	})

	t.Run("openapi", func(t *testing.T) {
		// The CRD's schema is published in its group version's OpenAPI v3
		// document (the index is read anew each time: no cache).
		name := "dev.kapi." + strings.TrimSuffix(group, ".kapi.dev") + ".v1.Widget"
		disc, err := discovery.NewDiscoveryClientForConfig(restConfig(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := disc.OpenAPIV3().Paths(); err != nil {
			t.Fatalf("OpenAPIV3().Paths: %v", err)
		}
		eventually(t, 20*time.Second, "CRD schema in /openapi/v3", func(ctx context.Context) error {
			paths, err := disc.OpenAPIV3().Paths()
			if err != nil {
				return err
			}
			gv, ok := paths["apis/"+group+"/v1"]
			if !ok {
				return fmt.Errorf("no apis/%s/v1 among %d paths", group, len(paths))
			}
			b, err := gv.Schema("application/json")
			if err != nil {
				return err
			}
			var doc struct {
				Components struct {
					Schemas map[string]struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"schemas"`
				} `json:"components"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				return err
			}
			if _, ok := doc.Components.Schemas[name].Properties["spec"]; !ok {
				return fmt.Errorf("no schema %s with spec in %s", name, b[:min(len(b), 300)])
			}
			return nil
		})
	})

	// A CRD's resources may be served a moment after it is Established.
	var created *unstructured.Unstructured
	ok := t.Run("create", func(t *testing.T) {
		var err error
		eventually(t, 10*time.Second, "widgets served", func(ctx context.Context) error {
			created, err = widgets.Create(ctx, widget(group, "w1", 1), metav1.CreateOptions{})
			if apierrors.IsNotFound(err) {
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if created.GetUID() == "" || created.GetResourceVersion() == "" || specSize(created) != 1 || created.GetKind() != "Widget" || created.GetAPIVersion() != group+"/v1" {
			t.Fatalf("Create returned %v", created.Object)
		}
	})
	if !ok {
		t.Fatal("create failed: the other verbs need the object")
	}
	t.Run("get", func(t *testing.T) {
		got, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if got.GetUID() != created.GetUID() || specSize(got) != 1 {
			t.Fatalf("Get returned %v", got.Object)
		}
	})
	t.Run("list", func(t *testing.T) {
		list, err := widgets.List(ctx, metav1.ListOptions{LabelSelector: "compat=dynamic"})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if names := unstructuredNames(list); !slices.Equal(names, []string{"w1"}) || list.GetResourceVersion() == "" {
			t.Fatalf("List: %v resourceVersion %q", names, list.GetResourceVersion())
		}
		if list.GetKind() != "WidgetList" {
			t.Fatalf("List kind %q, want WidgetList", list.GetKind())
		}
	})
	t.Run("update", func(t *testing.T) {
		got, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		unstructured.SetNestedField(got.Object, int64(2), "spec", "size")
		upd, err := widgets.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if specSize(upd) != 2 || upd.GetResourceVersion() == got.GetResourceVersion() {
			t.Fatalf("Update returned %v", upd.Object)
		}
		// A stale resourceVersion is a conflict.
		if _, err := widgets.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("Update with a stale resourceVersion: %v, want Conflict", err)
		}
	})
	t.Run("status", func(t *testing.T) {
		got, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		unstructured.SetNestedField(got.Object, true, "status", "ready")
		unstructured.SetNestedField(got.Object, int64(99), "spec", "size") // ignored by the status subresource
		upd, err := widgets.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("UpdateStatus: %v", err)
		}
		ready, _, _ := unstructured.NestedBool(upd.Object, "status", "ready")
		if !ready || specSize(upd) != 2 {
			t.Fatalf("UpdateStatus returned %v, want status.ready and spec.size 2", upd.Object)
		}
		// The main resource ignores status.
		upd, err = widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"status":{"ready":false}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if ready, _, _ := unstructured.NestedBool(upd.Object, "status", "ready"); !ready {
			t.Fatalf("a patch of the main resource changed status: %v", upd.Object)
		}
	})
	t.Run("patch-merge", func(t *testing.T) {
		upd, err := widgets.Patch(ctx, "w1", types.MergePatchType, []byte(`{"spec":{"size":3}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if color, _, _ := unstructured.NestedString(upd.Object, "spec", "color"); specSize(upd) != 3 || color != "red" {
			t.Fatalf("merge patch returned %v", upd.Object)
		}
	})
	t.Run("patch-json", func(t *testing.T) {
		upd, err := widgets.Patch(ctx, "w1", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/size","value":4}]`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if specSize(upd) != 4 {
			t.Fatalf("JSON patch returned %v", upd.Object)
		}
	})
	t.Run("patch-strategic-unsupported", func(t *testing.T) {
		// Custom resources have no strategic merge patch: 415.
		_, err := widgets.Patch(ctx, "w1", types.StrategicMergePatchType, []byte(`{"spec":{"size":5}}`), metav1.PatchOptions{})
		if !apierrors.IsUnsupportedMediaType(err) {
			t.Fatalf("strategic merge patch of a custom resource: %v, want UnsupportedMediaType", err)
		}
	})
	t.Run("apply", func(t *testing.T) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(group + "/v1")
		u.SetKind("Widget")
		u.SetName("w1")
		unstructured.SetNestedField(u.Object, "blue", "spec", "color")
		upd, err := widgets.Apply(ctx, "w1", u, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if color, _, _ := unstructured.NestedString(upd.Object, "spec", "color"); color != "blue" || specSize(upd) != 4 {
			t.Fatalf("Apply returned %v", upd.Object)
		}
		if err := hasApplyManager(upd); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("schema", func(t *testing.T) {
		bad := widget(group, "bad", 0)
		unstructured.SetNestedField(bad.Object, "big", "spec", "size")
		_, err := widgets.Create(ctx, bad, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("Create with spec.size a string: %v, want Invalid", err)
		}
		// Unknown fields are pruned (and reported as a warning).
		pruned := widget(group, "pruned", 1)
		unstructured.SetNestedField(pruned.Object, "x", "spec", "unknown")
		got, err := widgets.Create(ctx, pruned, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("Create with an unknown field: %v", err)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "unknown"); found {
			t.Fatalf("spec.unknown was not pruned: %v", got.Object)
		}
	})
	t.Run("watch", func(t *testing.T) {
		list, err := widgets.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		w, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), FieldSelector: "metadata.name=watched"})
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		defer w.Stop()
		if _, err := widgets.Create(ctx, widget(group, "watched", 7), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		expectWidgetEvent(t, w, watch.Added, 7)
		if _, err := widgets.Patch(ctx, "watched", types.MergePatchType, []byte(`{"spec":{"size":8}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("Patch: %v", err)
		}
		expectWidgetEvent(t, w, watch.Modified, 8)
		if err := widgets.Delete(ctx, "watched", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		expectWidgetEvent(t, w, watch.Deleted, 8)
	})
	t.Run("delete", func(t *testing.T) {
		if err := widgets.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := widgets.Get(ctx, "w1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Get after Delete: %v, want NotFound", err)
		}
	})
	t.Run("deletecollection", func(t *testing.T) {
		if _, err := widgets.Create(ctx, widget(group, "w2", 1), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if err := widgets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "compat=dynamic"}); err != nil {
			t.Fatalf("DeleteCollection: %v", err)
		}
		list, err := widgets.List(ctx, metav1.ListOptions{LabelSelector: "compat=dynamic"})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(list.Items) != 0 {
			t.Fatalf("left after DeleteCollection: %v", unstructuredNames(list))
		}
	})
	t.Run("built-in", func(t *testing.T) {
		cms := dc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns)
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "dyn"},
			"data":     map[string]any{"k": "v"},
		}}
		if _, err := cms.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		got, err := cms.Get(ctx, "dyn", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		var cm corev1.ConfigMap
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &cm); err != nil {
			t.Fatalf("convert: %v", err)
		}
		if cm.Data["k"] != "v" || cm.UID == "" {
			t.Fatalf("Get returned %+v", cm)
		}
		if err := cms.Delete(ctx, "dyn", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	})
}

func expectWidgetEvent(t *testing.T, w watch.Interface, typ watch.EventType, size int64) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want %s", typ)
		}
		u, isU := ev.Object.(*unstructured.Unstructured)
		if ev.Type != typ || !isU {
			t.Fatalf("watch event %s %T (%v), want %s of a Widget", ev.Type, ev.Object, ev.Object, typ)
		}
		if u.GetName() != "watched" || specSize(u) != size {
			t.Fatalf("%s event: %v, want watched with size %d", typ, u.Object, size)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(errors.New("no " + string(typ) + " event within 10s"))
	}
}
