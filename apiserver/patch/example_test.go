package patch_test

import (
	"fmt"
	"reflect"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
)

// A strategic merge patch changes one container by name and leaves the others.
func ExampleStrategic() {
	pod := []byte(`{"spec":{"containers":[{"name":"app","image":"nginx:1.27"},{"name":"log","image":"fluent-bit"}]}}`)
	p := []byte(`{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}`)
	out, err := patch.Strategic(pod, p, reflect.TypeFor[corev1.Pod]())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output: {"spec":{"containers":[{"image":"nginx:1.28","name":"app"},{"image":"fluent-bit","name":"log"}]}}
}

// A JSON patch whose test fails is answered as kube-apiserver answers it.
func ExampleJSONPatch() {
	_, err := patch.JSONPatch([]byte(`{"data":{"a":"1"}}`), []byte(`[{"op":"test","path":"/data/a","value":"2"}]`))
	if pe, ok := err.(*patch.Error); ok {
		fmt.Println(pe.Code, pe.Message)
	}
	// Output: 422 the server rejected our request due to an error in our request
}

// A merge patch deletes with null and merges objects.
func ExampleMergePatch() {
	out, _ := patch.MergePatch([]byte(`{"data":{"a":"1","b":"2"}}`), []byte(`{"data":{"b":null,"c":"3"}}`))
	fmt.Println(string(out))
	// Output: {"data":{"a":"1","c":"3"}}
}
