package apply_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"slices"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// An autoscaler applies replicas alone, beside the deployment's owner; then
// it extracts what it owns, changes it and applies it again.
func Example() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	deps := client.For[appsv1.Deployment](f.Client()).Namespace("default")

	// The owner applies the whole deployment, without replicas.
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := deps.ApplyConfig(ctx, apply.Of(web), metav1.ApplyOptions{FieldManager: "cd"}); err != nil {
		log.Fatal(err)
	}

	// The autoscaler sets replicas only: that is all it sends and owns.
	scale := apply.Of(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(3))},
	})
	b, _ := scale.MarshalJSON()
	fmt.Printf("sent: %s\n", b)
	d, err := deps.ApplyConfig(ctx, scale, metav1.ApplyOptions{FieldManager: "autoscaler"})
	if err != nil {
		log.Fatal(err)
	}
	// (managedFields are ordered by time, to the second: print by manager.)
	owns := map[string]string{}
	for _, e := range d.ManagedFields {
		owns[e.Manager] = string(e.FieldsV1.Raw)
	}
	for _, m := range slices.Sorted(maps.Keys(owns)) {
		fmt.Printf("%s owns %s\n", m, owns[m])
	}

	// Later, it reads back what it owns, typed, and scales again.
	cfg, err := apply.Extract(d, "autoscaler")
	if err != nil {
		log.Fatal(err)
	}
	*cfg.Object().Spec.Replicas = 5
	d, err = deps.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "autoscaler"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("replicas:", *d.Spec.Replicas, "containers:", len(d.Spec.Template.Spec.Containers))

	// Applying the extracted configuration unchanged is a no-op.
	again, err := apply.Extract(d, "autoscaler")
	if err != nil {
		log.Fatal(err)
	}
	same, err := deps.ApplyConfig(ctx, again, metav1.ApplyOptions{FieldManager: "autoscaler"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("resourceVersion unchanged:", same.ResourceVersion == d.ResourceVersion)
	// Output:
	// sent: {"metadata":{"name":"web"},"spec":{"replicas":3}}
	// autoscaler owns {"f:spec":{"f:replicas":{}}}
	// cd owns {"f:spec":{"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}
	// replicas: 5 containers: 1
	// resourceVersion unchanged: true
}

// Claim applies a field at its zero value, which Of leaves out: here a
// deployment that must not be paused, whoever paused it.
func ExampleConfig_Claim() {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}
	cfg, err := apply.Of(d).Claim(&d.Spec.Paused)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := cfg.MarshalJSON()
	fmt.Printf("%s\n", b)
	// Output:
	// {"metadata":{"name":"web","namespace":"default"},"spec":{"paused":false}}
}
