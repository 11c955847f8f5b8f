package apply_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/goleak"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/internal/kjson"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

const ns = "default"

// deployment is a whole, valid deployment: what the manager that creates it
// (a CD tool) applies, leaving replicas to an autoscaler.
func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

// fieldsOf returns the fieldsV1 of manager's entry in obj's managedFields
// for subresource sub, as compact JSON, "" without one.
func fieldsOf(t *testing.T, mf []metav1.ManagedFieldsEntry, manager, sub string) string {
	t.Helper()
	for _, e := range mf {
		if e.Manager == manager && e.Subresource == sub {
			b, err := kjson.Marshal(e.FieldsV1)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	return ""
}

func encode[T any](t *testing.T, c apply.Config[T]) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Applying a configuration that sets only replicas claims .spec.replicas
// alone, beside the manager owning the selector and the template; applying
// the same Go struct with Apply claims its zero values and conflicts.
func TestApplyClaimsOnlySetFields(t *testing.T) {
	ctx := testContext(t)
	deps := client.For[appsv1.Deployment](fake.NewClient(t)).Namespace(ns)
	if _, err := deps.ApplyConfig(ctx, apply.Of(deployment("web")), metav1.ApplyOptions{FieldManager: "cd"}); err != nil {
		t.Fatal(err)
	}

	scale := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: new(int32(3))}}
	if got := encode(t, apply.Of(scale)); got != `{"metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}` {
		t.Errorf("configuration sent: %s", got)
	}
	// The problem ApplyConfig solves: the struct's zero values (selector
	// null, template without containers) are claimed and conflict.
	if _, err := deps.Apply(ctx, scale, metav1.ApplyOptions{FieldManager: "scaler"}); !client.IsConflict(err) {
		t.Errorf("Apply of the Go struct: %v, want a conflict on its zero values", err)
	}
	got, err := deps.ApplyConfig(ctx, apply.Of(scale), metav1.ApplyOptions{FieldManager: "scaler"})
	if err != nil {
		t.Fatalf("ApplyConfig of replicas only: %v", err)
	}
	if f := fieldsOf(t, got.ManagedFields, "scaler", ""); f != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("scaler owns %s, want .spec.replicas alone", f)
	}
	if *got.Spec.Replicas != 3 || got.Spec.Selector == nil || len(got.Spec.Template.Spec.Containers) != 1 {
		t.Errorf("after scaling: replicas %d, selector %v, containers %v", *got.Spec.Replicas, got.Spec.Selector, got.Spec.Template.Spec.Containers)
	}
	want := `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	if f := fieldsOf(t, got.ManagedFields, "cd", ""); f != want {
		t.Errorf("cd owns %s\nwant    %s", f, want)
	}
}
