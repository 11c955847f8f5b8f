package controllerutil_test

import (
	"context"
	"slices"
	"testing"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/fake"
)

// TestDynamic: the helpers work on unstructured objects through the
// dynamic client as on Go types.
func TestDynamic(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, configMap("web", "owner"))
	dyn := client.Dynamic(f.Client())
	cms := dyn.Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	owner, err := cms.Namespace("web").Get(ctx, "owner", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	obj.SetNamespace("web")
	obj.SetName("owned")
	result, err := controllerutil.CreateOrPatch(ctx, cms, obj, func(u *unstructured.Unstructured) error {
		if err := unstructured.SetNestedField(u.Object, "fast", "data", "mode"); err != nil {
			return err
		}
		return controllerutil.SetControllerReference(owner, u, controllerutil.OwnerOptions{})
	})
	if err != nil || result != controllerutil.Created {
		t.Fatalf("result %q, err %v", result, err)
	}
	if !controllerutil.IsControlledBy(obj, owner) {
		t.Errorf("owner references %+v", obj.GetOwnerReferences())
	}
	if c := controllerutil.GetControllerOf(obj); c.APIVersion != "v1" || c.Kind != "ConfigMap" {
		t.Errorf("controller reference %+v", c)
	}

	var events []controllerutil.EventType
	_, err = controllerutil.Finalize(ctx, cms, fin, obj, func(_ context.Context, ev controllerutil.Event[unstructured.Unstructured]) (struct{}, error) {
		events = append(events, ev.Type)
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cms.Namespace("web").Get(ctx, "owned", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.GetFinalizers(), []string{fin}) || !slices.Equal(events, []controllerutil.EventType{controllerutil.Apply}) {
		t.Errorf("finalizers %q, events %v", got.GetFinalizers(), events)
	}
}
