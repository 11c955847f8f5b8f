package codec_test

import (
	"fmt"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

func ExampleMarshalProtobuf() {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"},
		Data:       map[string]string{"mode": "fast"},
	}
	b, err := codec.MarshalProtobuf(metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, cm)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", b[:4])

	var back corev1.ConfigMap
	typ, err := codec.UnmarshalProtobuf(b, &back)
	if err != nil {
		panic(err)
	}
	fmt.Println(typ.Kind, back.Name, back.Data["mode"])
	// Output:
	// "k8s\x00"
	// ConfigMap settings fast
}

func ExampleUnmarshalJSON() {
	var pod corev1.Pod
	// Field names are case-sensitive, as in kube-apiserver: "Metadata" is not metadata.
	err := codec.UnmarshalJSON([]byte(`{"kind":"Pod","metadata":{"name":"a"},"Metadata":{"name":"b"}}`), &pod)
	fmt.Println(pod.Name, err)
	// Output: a <nil>
}

func ExampleDecodeJSONList() {
	body := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},
	  "items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`
	h, err := codec.DecodeJSONList(strings.NewReader(body), func(cm *corev1.ConfigMap) error {
		fmt.Println("item", cm.Name) // called as each item is decoded
		return nil
	})
	fmt.Println(h.Kind, h.ListMeta.ResourceVersion, err)
	// Output:
	// item a
	// item b
	// ConfigMapList 42 <nil>
}
