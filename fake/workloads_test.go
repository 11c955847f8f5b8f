package fake_test

import (
	"testing"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	autoscalingv2 "github.com/kapi-dev/kapi/api/autoscaling/v2"
	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// typedRoundTrip creates obj through client.For[T] (protobuf, as the types
// encode themselves), then gets, lists, watches, updates and deletes it,
// checking that each step sees it; mutate changes it for the update.
func typedRoundTrip[T any, PT interface {
	*T
	metav1.Object
	DeepCopy() *T
	GetObjectKind() *metav1.TypeMeta
}](t *testing.T, c *client.Client, obj *T, mutate func(*T)) {
	t.Helper()
	ctx := testContext(t)
	r := client.For[T, PT](c).Namespace("work")
	w, err := r.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := r.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	name := PT(created).GetName()
	got, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil || PT(got).GetUID() != PT(created).GetUID() {
		t.Fatalf("get: %v", err)
	}
	list, err := r.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %d items, %v", len(list.Items), err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != client.EventAdded || PT(ev.Object).GetName() != name {
			t.Errorf("watch: %s %v", ev.Type, ev.Object)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch: no ADDED event in 5s")
	}
	mutate(got)
	updated, err := r.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if PT(updated).GetResourceVersion() == PT(created).GetResourceVersion() {
		t.Errorf("update kept resourceVersion %s", PT(updated).GetResourceVersion())
	}
	if err := r.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := r.Get(ctx, name, metav1.GetOptions{}); !client.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
}

// TestWorkloadKinds goes through the typed client's verbs on the fake for
// each workload kind.
func TestWorkloadKinds(t *testing.T) {
	c := fake.New(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "work"}}).Client()
	labels := map[string]string{"app": "web"}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}}
	jobTmpl := tmpl
	jobTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	meta := metav1.ObjectMeta{Name: "web"}
	t.Run("statefulsets", func(t *testing.T) {
		typedRoundTrip(t, c, &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{ServiceName: "web", Selector: sel, Template: tmpl}},
			func(s *appsv1.StatefulSet) { s.Spec.Replicas = new(int32(3)) })
	})
	t.Run("daemonsets", func(t *testing.T) {
		typedRoundTrip(t, c, &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}},
			func(d *appsv1.DaemonSet) { d.Spec.MinReadySeconds = 5 })
	})
	t.Run("replicasets", func(t *testing.T) {
		typedRoundTrip(t, c, &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}},
			func(r *appsv1.ReplicaSet) { r.Spec.Replicas = new(int32(2)) })
	})
	t.Run("controllerrevisions", func(t *testing.T) {
		typedRoundTrip(t, c, &appsv1.ControllerRevision{ObjectMeta: meta, Revision: 1, Data: metav1.RawExtension{Raw: []byte(`{"spec":{}}`)}},
			func(r *appsv1.ControllerRevision) { r.Revision = 2 })
	})
	t.Run("jobs", func(t *testing.T) {
		typedRoundTrip(t, c, &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: jobTmpl}},
			func(j *batchv1.Job) { j.Spec.Suspend = new(true) })
	})
	t.Run("cronjobs", func(t *testing.T) {
		typedRoundTrip(t, c, &batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTmpl}}}},
			func(j *batchv1.CronJob) { j.Spec.Suspend = new(true) })
	})
	t.Run("horizontalpodautoscalers", func(t *testing.T) {
		typedRoundTrip(t, c, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web"}, MaxReplicas: 3}},
			func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 5 })
	})
	t.Run("poddisruptionbudgets", func(t *testing.T) {
		typedRoundTrip(t, c, &policyv1.PodDisruptionBudget{ObjectMeta: meta, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel, MinAvailable: new(intstr.FromInt32(1))}},
			func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = new(intstr.FromString("50%")) })
	})
}
