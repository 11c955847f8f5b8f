package fake_test

import (
	"context"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// typedRoundTrip creates obj through the typed client, reads it back by
// get, list and watch, updates it and deletes it.
func typedRoundTrip[T any, PT client.ObjectPtr[T]](t *testing.T, f *fake.Fake, ns string, obj *T, change func(*T)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := client.For[T, PT](f.Client())
	if ns != "" {
		c = c.Namespace(ns)
	}
	w, err := c.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := PT(created).GetName()
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil || PT(got).GetUID() != PT(created).GetUID() {
		t.Fatalf("get: %v", err)
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v, %d items", err, len(list.Items))
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != client.EventAdded || ev.Object == nil || PT(ev.Object).GetName() != name {
			t.Fatalf("watch event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	change(got)
	if _, err := c.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// The core kinds added for issue 13 work through the typed client on the
// fake: create, get, list, watch, update, delete.
func TestCoreMoreKindsTyped(t *testing.T) {
	f := fake.New(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	label := func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"changed": "yes"} }
	t.Run("limitranges", func(t *testing.T) {
		typedRoundTrip(t, f, "ns", &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "l"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: "Container", Max: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}},
			func(o *corev1.LimitRange) { label(&o.ObjectMeta) })
	})
	t.Run("resourcequotas", func(t *testing.T) {
		typedRoundTrip(t, f, "ns", &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": resource.MustParse("1")}}},
			func(o *corev1.ResourceQuota) { label(&o.ObjectMeta) })
	})
	t.Run("persistentvolumeclaims", func(t *testing.T) {
		typedRoundTrip(t, f, "ns", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1Gi")}}}},
			func(o *corev1.PersistentVolumeClaim) { label(&o.ObjectMeta) })
	})
	t.Run("persistentvolumes", func(t *testing.T) {
		typedRoundTrip(t, f, "", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "v"},
			Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{"storage": resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}},
			func(o *corev1.PersistentVolume) { label(&o.ObjectMeta) })
	})
	t.Run("podtemplates", func(t *testing.T) {
		typedRoundTrip(t, f, "ns", &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Template: tmpl},
			func(o *corev1.PodTemplate) { o.Template.Labels["v"] = "2" })
	})
	t.Run("replicationcontrollers", func(t *testing.T) {
		typedRoundTrip(t, f, "ns", &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "r"},
			Spec: corev1.ReplicationControllerSpec{Template: &tmpl}},
			func(o *corev1.ReplicationController) { o.Spec.MinReadySeconds = 5 })
	})
}
