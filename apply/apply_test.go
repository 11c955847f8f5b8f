package apply_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
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

// roundTrip applies a as manager "a" and b as manager "b" (status: to the
// status subresource), extracts a's fields from the live object, checks
// that they encode as want, and applies them again as "a": the object must
// come back unchanged (same resourceVersion, same managedFields).
func roundTrip[T any, PT client.ObjectPtr[T]](t *testing.T, res client.Resource[T], a, b apply.Config[T], status bool, want string) {
	t.Helper()
	ctx := testContext(t)
	applyFn, extract := res.ApplyConfig, apply.Extract[T]
	if status {
		applyFn, extract = res.ApplyConfigStatus, apply.ExtractStatus[T]
	}
	if _, err := applyFn(ctx, a, metav1.ApplyOptions{FieldManager: "a"}); err != nil {
		t.Fatalf("apply a: %v", err)
	}
	live, err := applyFn(ctx, b, metav1.ApplyOptions{FieldManager: "b"})
	if err != nil {
		t.Fatalf("apply b: %v", err)
	}
	cfg, err := extract(live, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, cfg); got != want {
		t.Errorf("extracted\n got  %s\n want %s", got, want)
	}
	again, err := applyFn(ctx, cfg, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatalf("applying the extracted configuration: %v", err)
	}
	if PT(again).GetResourceVersion() != PT(live).GetResourceVersion() {
		t.Errorf("re-apply changed resourceVersion %s to %s", PT(live).GetResourceVersion(), PT(again).GetResourceVersion())
	}
	if !reflect.DeepEqual(again, live) {
		g, _ := kjson.Marshal(again)
		l, _ := kjson.Marshal(live)
		t.Errorf("re-apply changed the object\n now    %s\n before %s", g, l)
	}
}

func TestExtractRoundTrip(t *testing.T) {
	c := fake.NewClient(t)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }

	t.Run("ConfigMap", func(t *testing.T) {
		a := &corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"x": "1", "empty": ""}}
		a.Labels = map[string]string{"team": "a"}
		b := &corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"y": "2"}}
		roundTrip(t, client.For[corev1.ConfigMap](c).Namespace(ns), apply.Of(a), apply.Of(b), false,
			`{"apiVersion":"v1","data":{"empty":"","x":"1"},"kind":"ConfigMap","metadata":{"labels":{"team":"a"},"name":"cm","namespace":"default"}}`)
	})
	t.Run("Deployment", func(t *testing.T) {
		b := &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{Replicas: new(int32(3))}}
		roundTrip(t, client.For[appsv1.Deployment](c).Namespace(ns), apply.Of(deployment("web")), apply.Of(b), false,
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"web"},"name":"web","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","name":"web"}]}}}}`)
	})
	t.Run("DeploymentStatus", func(t *testing.T) {
		deps := client.For[appsv1.Deployment](c).Namespace(ns)
		if _, err := deps.ApplyConfig(testContext(t), apply.Of(deployment("st")), metav1.ApplyOptions{FieldManager: "cd"}); err != nil {
			t.Fatal(err)
		}
		a := &appsv1.Deployment{ObjectMeta: meta("st"), Status: appsv1.DeploymentStatus{ObservedGeneration: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}}}
		b := &appsv1.Deployment{ObjectMeta: meta("st"), Status: appsv1.DeploymentStatus{
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue}}}}
		roundTrip(t, deps, apply.Of(a), apply.Of(b), true,
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"st","namespace":"default"},"status":{"conditions":[{"reason":"MinimumReplicasAvailable","status":"True","type":"Available"}],"observedGeneration":1}}`)
	})
	t.Run("Service", func(t *testing.T) {
		a := &corev1.Service{ObjectMeta: meta("svc"), Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
		b := &corev1.Service{ObjectMeta: meta("svc"), Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "metrics", Port: 9090, Protocol: corev1.ProtocolTCP}}}}
		roundTrip(t, client.For[corev1.Service](c).Namespace(ns), apply.Of(a), apply.Of(b), false,
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc","namespace":"default"},"spec":{"ports":[{"name":"http","port":80,"targetPort":8080}],"selector":{"app":"web"}}}`)
	})
	t.Run("Pod", func(t *testing.T) {
		a := &corev1.Pod{ObjectMeta: meta("pod"), Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1.27", Ports: []corev1.ContainerPort{{ContainerPort: 80}}},
			{Name: "sidecar", Image: "envoy:1", Args: []string{"-v"}},
		}}}
		b := &corev1.Pod{ObjectMeta: meta("pod")}
		b.Labels = map[string]string{"b": "yes"}
		roundTrip(t, client.For[corev1.Pod](c).Namespace(ns), apply.Of(a), apply.Of(b), false,
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod","namespace":"default"},"spec":{"containers":[{"image":"nginx:1.27","name":"web","ports":[{"containerPort":80}]},{"args":["-v"],"image":"envoy:1","name":"sidecar"}]}}`)
	})
}

// An extracted configuration is changed and applied again, as client-go's
// ExtractDeployment is used: the manager's fields change, nobody else's.
func TestExtractModifyApply(t *testing.T) {
	ctx := testContext(t)
	deps := client.For[appsv1.Deployment](fake.NewClient(t)).Namespace(ns)
	if _, err := deps.ApplyConfig(ctx, apply.Of(deployment("web")), metav1.ApplyOptions{FieldManager: "cd"}); err != nil {
		t.Fatal(err)
	}
	scale := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: appsv1.DeploymentSpec{Replicas: new(int32(3))}}
	live, err := deps.ApplyConfig(ctx, apply.Of(scale), metav1.ApplyOptions{FieldManager: "scaler"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := apply.Extract(live, "scaler")
	if err != nil {
		t.Fatal(err)
	}
	*cfg.Object().Spec.Replicas = 5
	cfg.Object().Annotations = map[string]string{"scaled-by": "test"}
	got, err := deps.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "scaler"})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 5 || got.Annotations["scaled-by"] != "test" {
		t.Errorf("replicas %d, annotations %v", *got.Spec.Replicas, got.Annotations)
	}
	if f := fieldsOf(t, got.ManagedFields, "scaler", ""); f != `{"f:metadata":{"f:annotations":{"f:scaled-by":{}}},"f:spec":{"f:replicas":{}}}` {
		t.Errorf("scaler owns %s", f)
	}
	if a, b := fieldsOf(t, got.ManagedFields, "cd", ""), fieldsOf(t, live.ManagedFields, "cd", ""); a != b {
		t.Errorf("cd's fields changed: %s → %s", b, a)
	}
	// A manager with no Apply entry extracts to the name alone.
	none, err := apply.Extract(got, "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if e := encode(t, none); e != `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"}}` {
		t.Errorf("extract of an unknown manager: %s", e)
	}
}

// An empty map a manager applied is not stored, but the manager owns it:
// Extract gives it back empty, so applying the result keeps the manager's
// fields. Structured-merge-diff counts applying an empty map (or a zero
// value omitempty drops) that the object lacks as a change, so the entry's
// time moves, and with it the resourceVersion, as on kube-apiserver: the
// server's clock ticks between the writes here.
func TestExtractEmptyMap(t *testing.T) {
	ctx := testContext(t)
	now := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	f := fake.NewWithOptions(t, fake.Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace(ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: ns, Annotations: map[string]string{}}, Data: map[string]string{"k": "v"}}
	live, err := cms.ApplyConfig(ctx, apply.Of(cm), metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	owned := fieldsOf(t, live.ManagedFields, "a", "")
	if owned != `{"f:data":{"f:k":{}},"f:metadata":{"f:annotations":{}}}` {
		t.Fatalf("a owns %s", owned)
	}
	cfg, err := apply.Extract(live, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := encode(t, cfg); got != `{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"empty","namespace":"default"}}` {
		t.Errorf("extracted %s", got)
	}
	again, err := cms.ApplyConfig(ctx, cfg, metav1.ApplyOptions{FieldManager: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fieldsOf(t, again.ManagedFields, "a", ""); got != owned {
		t.Errorf("a owns %s after re-applying, before %s", got, owned)
	}
}
