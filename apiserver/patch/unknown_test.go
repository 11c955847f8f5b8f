package patch

import (
	"reflect"
	"slices"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

func TestUnknownFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		doc  string
		want []string
	}{
		{"none", reflect.TypeFor[corev1.ConfigMap](), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"}}`, nil},
		{"top and nested", reflect.TypeFor[corev1.ConfigMap](), `{"metadata":{"name":"a","bogus":1},"extra":{"deep":true}}`, []string{"extra", "metadata.bogus"}},
		{"in lists", reflect.TypeFor[appsv1.Deployment](),
			`{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","imagee":"x","ports":[{"containerPort":1,"hostport":2}]}]}}}}`,
			[]string{"spec.template.spec.containers[1].imagee", "spec.template.spec.containers[1].ports[0].hostport"}},
		{"opaque values are not looked into", reflect.TypeFor[corev1.Pod](),
			`{"metadata":{"creationTimestamp":{"x":1}},"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":{"y":2}}}}]}}`, nil},
		{"wrong shapes are not unknown fields", reflect.TypeFor[corev1.ConfigMap](), `{"metadata":[],"data":"x"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UnknownFields([]byte(tc.doc), tc.typ)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("UnknownFields = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := UnknownFields([]byte(`{"a":`), reflect.TypeFor[corev1.ConfigMap]()); err == nil {
		t.Error("malformed JSON: no error")
	}
}
