package unstructured_test

import (
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/api/unstructured"
)

// Build an object of a kind the program has no Go type for, and encode it.
func Example() {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetNamespace("default")
	u.SetName("w1")
	u.SetLabels(map[string]string{"app": "web"})
	if err := unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas"); err != nil {
		panic(err)
	}

	b, err := u.MarshalJSON()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output:
	// {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"labels":{"app":"web"},"name":"w1","namespace":"default"},"spec":{"replicas":3}}
}

// Integers decode as int64 and other numbers as float64, as in Kubernetes.
func ExampleUnstructured_UnmarshalJSON() {
	var u unstructured.Unstructured
	err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","generation":2},"ratio":0.5}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(u.GetName(), u.GetGeneration())
	fmt.Printf("%T %T\n", u.Object["metadata"].(map[string]any)["generation"], u.Object["ratio"])

	// Kubernetes refuses objects without a kind.
	err = u.UnmarshalJSON([]byte(`{"apiVersion":"v1"}`))
	fmt.Println(errors.Is(err, unstructured.ErrMissingKind))
	// Output:
	// cm 2
	// int64 float64
	// true
}

// Decode tells lists from single objects; list items without a kind get the
// list's.
func ExampleDecode() {
	obj, err := unstructured.Decode([]byte(`{
		"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "213"},
		"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]
	}`))
	if err != nil {
		panic(err)
	}
	list := obj.(*unstructured.UnstructuredList)
	fmt.Println(list.GetKind(), list.GetResourceVersion())
	_ = list.EachListItem(func(item *unstructured.Unstructured) error {
		fmt.Println(item.GetAPIVersion(), item.GetKind(), item.GetName())
		return nil
	})
	// Output:
	// PodList 213
	// v1 Pod a
	// v1 Pod b
}

// The Nested getters report whether a field was found, and a wrong type as an
// error naming the path.
func ExampleNestedInt64() {
	obj := map[string]any{"spec": map[string]any{"replicas": "3"}}

	_, found, err := unstructured.NestedInt64(obj, "spec", "replicas")
	fmt.Println(found, err)

	_, found, err = unstructured.NestedInt64(obj, "spec", "paused")
	fmt.Println(found, err)
	// Output:
	// false .spec.replicas accessor error: 3 is of the type string, expected int64
	// false <nil>
}

func ExampleSetNestedStringMap() {
	obj := map[string]any{}
	_ = unstructured.SetNestedStringMap(obj, map[string]string{"app": "web"}, "spec", "selector", "matchLabels")
	labels, found, err := unstructured.NestedStringMap(obj, "spec", "selector", "matchLabels")
	fmt.Println(labels, found, err)

	unstructured.RemoveNestedField(obj, "spec", "selector")
	fmt.Println(obj)
	// Output:
	// map[app:web] true <nil>
	// map[spec:map[]]
}

func ExampleSplitAPIVersion() {
	for _, apiVersion := range []string{"apps/v1", "v1"} {
		group, version, _ := unstructured.SplitAPIVersion(apiVersion)
		fmt.Printf("%q %q\n", group, version)
	}
	// Output:
	// "apps" "v1"
	// "" "v1"
}
