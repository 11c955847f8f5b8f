package apiserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// TestEquivalentConversion: with a CRD that converts through a webhook
// (Resource.Convert), the object sent as an equivalent version is
// converted to it, and what a mutating webhook gives back is converted to
// the version the object was in; without conversion only the apiVersion
// changes.
func TestEquivalentConversion(t *testing.T) {
	// v1 has spec.size, v2 spec.replicas.
	convert := func(_ context.Context, o registry.Object, version string) (registry.Object, error) {
		u := o.(*unstructured.Unstructured).DeepCopy()
		spec, _ := u.Object["spec"].(map[string]any)
		switch version {
		case "v1":
			spec["size"] = spec["replicas"]
			delete(spec, "replicas")
		case "v2":
			spec["replicas"] = spec["size"]
			delete(spec, "size")
		default:
			return nil, fmt.Errorf("no version %s", version)
		}
		u.SetAPIVersion("g.example.com/" + version)
		return u, nil
	}
	withType := func(version string) func(registry.Object) registry.Object {
		return func(o registry.Object) registry.Object {
			u := o.(*unstructured.Unstructured).DeepCopy()
			u.SetAPIVersion("g.example.com/" + version)
			return u
		}
	}
	v1 := &registry.Resource{Group: "g.example.com", Version: "v1", Resource: "gears", Custom: true, Convert: convert, WithTypeMeta: withType("v1")}
	v2 := &registry.Resource{Group: "g.example.com", Version: "v2", Resource: "gears", Custom: true, Convert: convert, WithTypeMeta: withType("v2")}
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "g.example.com/v2", "kind": "Gear", "spec": map[string]any{"replicas": int64(3)}}}

	as1, err := inVersion(ctx, v2, v1, obj)
	if err != nil {
		t.Fatal(err)
	}
	if u := as1.(*unstructured.Unstructured); u.GetAPIVersion() != "g.example.com/v1" || u.Object["spec"].(map[string]any)["size"] != int64(3) {
		t.Fatalf("v2 object as v1: %v", u.Object)
	}
	if same, _ := inVersion(ctx, v2, v2, obj); same != registry.Object(obj) {
		t.Error("an object in its own version is converted")
	}
	if none, _ := inVersion(ctx, v2, v1, nil); none != nil {
		t.Error("no object became one")
	}
	as1.(*unstructured.Unstructured).Object["spec"].(map[string]any)["size"] = int64(7) // the mutating webhook's change
	back, err := backFrom(ctx, v2, as1, obj)
	if err != nil {
		t.Fatal(err)
	}
	if u := back.(*unstructured.Unstructured); u.GetAPIVersion() != "g.example.com/v2" || u.Object["spec"].(map[string]any)["replicas"] != int64(7) {
		t.Fatalf("changed v1 object back as v2: %v", u.Object)
	}

	// No conversion: the apiVersion the object had is restored.
	plain1 := &registry.Resource{Group: "g.example.com", Version: "v1", Resource: "gears", Custom: true, WithTypeMeta: withType("v1")}
	plain2 := &registry.Resource{Group: "g.example.com", Version: "v2", Resource: "gears", Custom: true, WithTypeMeta: withType("v2")}
	stored := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "g.example.com/v1", "kind": "Gear", "spec": map[string]any{"size": int64(1)}}}
	as2, _ := inVersion(ctx, plain1, plain2, stored)
	if as2.(*unstructured.Unstructured).GetAPIVersion() != "g.example.com/v2" {
		t.Fatalf("unconverted object as v2: %v", as2)
	}
	back, _ = backFrom(ctx, plain1, as2, stored)
	if back.(*unstructured.Unstructured).GetAPIVersion() != "g.example.com/v1" {
		t.Fatalf("unconverted object back: %v", back)
	}
}
