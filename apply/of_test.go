package apply_test

import (
	"testing"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// What Of sends: the fields an object sets, by Go value, whatever the
// JSON tags omit or not.
func TestOf(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "n"}
	cases := []struct {
		name string
		cfg  any
		want string
	}{
		{"zero struct fields and nil pointers are left out",
			apply.Of(&appsv1.Deployment{ObjectMeta: meta}), `{"metadata":{"name":"n"}}`},
		{"a pointer to a zero value is set",
			apply.Of(&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: new(int32(0)), Selector: &metav1.LabelSelector{}}}),
			`{"metadata":{"name":"n"},"spec":{"replicas":0,"selector":{}}}`},
		{"empty non-nil slices and maps are set, nil ones are not",
			apply.Of(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{}, Finalizers: []string{}}}),
			`{"metadata":{"finalizers":[],"labels":{},"name":"n"}}`},
		{"map values and list items are kept whole, zero values inside items left out",
			apply.Of(&corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"empty": ""}}),
			`{"data":{"empty":""},"metadata":{"name":"n"}}`},
		{"list items keep their set fields only",
			apply.Of(&corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Stdin: false, Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}),
			`{"metadata":{"name":"n"},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}}`},
		{"types with their own JSON: set unless zero",
			apply.Of(&corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
				{Port: 80, TargetPort: intstr.FromString("http")}, {Port: 81}}}}),
			`{"metadata":{"name":"n"},"spec":{"ports":[{"port":80,"targetPort":"http"},{"port":81}]}}`},
		{"quantities and times",
			apply.Of(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "n", CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))},
				Spec: corev1.PodSpec{Overhead: corev1.ResourceList{"cpu": resource.MustParse("100m")}}}),
			`{"metadata":{"creationTimestamp":"2026-01-02T03:04:05Z","name":"n"},"spec":{"overhead":{"cpu":"100m"}}}`},
		{"an unstructured object is sent as it is",
			apply.Of(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "n", "labels": nil}, "data": map[string]any{}}}),
			`{"apiVersion":"v1","data":{},"kind":"ConfigMap","metadata":{"labels":null,"name":"n"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := jsonOf(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	if _, err := apply.Of[corev1.Pod](nil).Encode(); err == nil {
		t.Error("Encode of a nil object succeeded")
	}
	if _, err := apply.Extract[corev1.Pod](nil, "m"); err == nil {
		t.Error("Extract of a nil object succeeded")
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	if _, err := apply.Extract(u, "m"); err == nil {
		t.Error("Extract of an unstructured object succeeded: it has no schema")
	}
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: "Apply",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:a":1}`)}}}}}
	if _, err := apply.Extract(bad, "m"); err == nil {
		t.Error("Extract of invalid managedFields succeeded")
	}
}

func jsonOf(v any) ([]byte, error) {
	type marshaler interface{ MarshalJSON() ([]byte, error) }
	return v.(marshaler).MarshalJSON()
}

// The dynamic client applies an unstructured configuration as it is, with
// ApplyConfig as with Apply.
func TestDynamicApplyConfig(t *testing.T) {
	ctx := testContext(t)
	dyn := client.Dynamic(fake.NewClient(t)).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "dyn"}, "data": map[string]any{"a": "b"}}}
	got, err := dyn.ApplyConfig(ctx, apply.Of(u), metav1.ApplyOptions{FieldManager: "dynamic"})
	if err != nil {
		t.Fatal(err)
	}
	if mf := got.GetManagedFields(); len(mf) != 1 || mf[0].Manager != "dynamic" || string(mf[0].FieldsV1.Raw) != `{"f:data":{"f:a":{}}}` {
		t.Errorf("managedFields %+v", mf)
	}
}
