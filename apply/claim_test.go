package apply_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// A zero value whose JSON tag omits it ("paused": false, a container's
// "stdin": false) is applied when claimed: by Claim, or by Extract for a
// manager that applied it.
func TestClaimZeroValues(t *testing.T) {
	ctx := testContext(t)
	// A frozen clock: re-applying a zero value the server does not store
	// restamps the applier's entry (TestExtractEmptyMap).
	now := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	f := fake.NewWithOptions(t, fake.Options{Now: func() time.Time { return now }})
	deps := client.For[appsv1.Deployment](f.Client()).Namespace(ns)
	d := deployment("web")
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "side", Image: "envoy:1"})
	cfg, err := apply.Of(d).Claim(&d.Spec.Paused)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = cfg.Claim(&d.Spec.Template.Spec.Containers[1].Stdin); err != nil {
		t.Fatal(err)
	}
	// The claim names the container by its key: reordering keeps it.
	cs := d.Spec.Template.Spec.Containers
	cs[0], cs[1] = cs[1], cs[0]
	want := `{"metadata":{"labels":{"app":"web"},"name":"web","namespace":"default"},"spec":{"paused":false,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"envoy:1","name":"side","stdin":false},{"image":"nginx:1.27","name":"web"}]}}}}`
	if got := encode(t, cfg); got != want {
		t.Errorf("sent\n got  %s\n want %s", got, want)
	}
	live, err := deps.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "cd"})
	if err != nil {
		t.Fatal(err)
	}
	owned := fieldsOf(t, live.ManagedFields, "cd", "")
	for _, f := range []string{`"f:paused":{}`, `"k:{\"name\":\"side\"}":{".":{},"f:image":{},"f:name":{},"f:stdin":{}}`} {
		if !strings.Contains(owned, f) {
			t.Errorf("cd owns %s, without %s", owned, f)
		}
	}

	// Extract keeps them, and re-applying changes nothing.
	ex, err := apply.Extract(live, "cd")
	if err != nil {
		t.Fatal(err)
	}
	again, err := deps.ApplyConfig(ctx, ex, metav1.ApplyOptions{FieldManager: "cd"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, live) {
		t.Errorf("re-applying the extracted %s changed the object: cd owns %s", encode(t, ex), fieldsOf(t, again.ManagedFields, "cd", ""))
	}
}

func TestClaimErrors(t *testing.T) {
	d := &appsv1.Deployment{}
	other := &appsv1.Deployment{}
	for name, field := range map[string]any{
		"not a pointer":      d.Spec.Paused,
		"nil":                (*bool)(nil),
		"outside the object": &other.Spec.Paused,
		"not in the object":  new(int32),
	} {
		if _, err := apply.Of(d).Claim(field); err == nil {
			t.Errorf("%s: Claim succeeded", name)
		}
	}
	if _, err := apply.Of[appsv1.Deployment](nil).Claim(new(bool)); err == nil {
		t.Error("Claim on a nil object succeeded")
	}
}
