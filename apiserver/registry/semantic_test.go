package registry

import (
	"encoding/json"
	"testing"
	"time"

	authenticationv1 "github.com/kapi-dev/kapi/api/authentication/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
	"github.com/kapi-dev/kapi/api/unstructured"
)

func TestSemanticEqual(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"nil and empty slice", corev1.PodSpec{Tolerations: nil}, corev1.PodSpec{Tolerations: []corev1.Toleration{}}, true},
		{"nil and empty map", corev1.PodSpec{NodeSelector: nil}, corev1.PodSpec{NodeSelector: map[string]string{}}, true},
		{"nested empty", corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
			corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{}, Ports: []corev1.ContainerPort{}}}}, true},
		{"a change", corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}, corev1.PodSpec{NodeSelector: map[string]string{"a": "c"}}, false},
		{"a missing key", map[string]string{"a": "b"}, map[string]string{"c": "b"}, false},
		{"longer list", []string{"a"}, []string{"a", "b"}, false},
		{"equal quantities in other notations", corev1.ResourceList{"cpu": resource.MustParse("1")}, corev1.ResourceList{"cpu": resource.MustParse("1000m")}, true},
		{"other quantities", corev1.ResourceList{"cpu": resource.MustParse("1")}, corev1.ResourceList{"cpu": resource.MustParse("2")}, false},
		{"the same instant elsewhere", metav1.NewTime(at), metav1.NewTime(at.In(time.FixedZone("x", 3600))), true},
		{"nil and set pointer", &metav1.Time{}, (*metav1.Time)(nil), false},
		{"nil pointers", (*metav1.Time)(nil), (*metav1.Time)(nil), true},
		{"other types", []string{}, []int{}, false},
		{"nil", nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SemanticEqual(c.a, c.b); got != c.want {
				t.Errorf("SemanticEqual(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
			}
			if got := SemanticEqual(c.b, c.a); got != c.want {
				t.Errorf("SemanticEqual(%v, %v) = %v, want %v (reversed)", c.b, c.a, got, c.want)
			}
		})
	}
}

// TestStoredForm checks that a built-in object is stored as protobuf
// keeps it: empty lists and maps are gone, empty byte strings and the map
// entries holding them stay.
func TestStoredForm(t *testing.T) {
	reg := Builtin()
	pods := reg.Get("", "v1", "pods")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{}, Annotations: map[string]string{}, Finalizers: []string{}},
		Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{}, NodeSelector: map[string]string{},
			Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{}, Args: []string{"x"},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{}}}}},
	}
	pods.StoredForm(p)
	assertJSON(t, p, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","args":["x"],"resources":{}}]},"status":{}}`)

	secrets := reg.Get("", "v1", "secrets")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"empty": {}, "v": []byte("x")}, StringData: map[string]string{}}
	secrets.StoredForm(s)
	assertJSON(t, s, `{"metadata":{"name":"s"},"data":{"empty":"","v":"eA=="}}`)

	reviews := reg.Get("authentication.k8s.io", "v1", "tokenreviews")
	tr := &authenticationv1.TokenReview{Status: authenticationv1.TokenReviewStatus{User: authenticationv1.UserInfo{
		Extra: map[string]authenticationv1.ExtraValue{"none": {}, "some": {"a"}}, Groups: []string{}}}}
	reviews.StoredForm(tr)
	if v, ok := tr.Status.User.Extra["none"]; !ok || v != nil || len(tr.Status.User.Extra["some"]) != 1 || tr.Status.User.Groups != nil {
		t.Errorf("extra %#v, groups %#v: want the empty value nil, its entry and the other value kept, groups nil", tr.Status.User.Extra, tr.Status.User.Groups)
	}
}

// TestStoredFormLeavesSharedValues: an updated object shares lists, maps
// and pointees with the stored object it was made from (which watchers
// encode at the same time), so StoredForm changes copies, never them.
func TestStoredFormLeavesSharedValues(t *testing.T) {
	reg := Builtin()
	pods := reg.Get("", "v1", "pods")
	stored := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{}}},
			SecurityContext: &corev1.PodSecurityContext{SupplementalGroups: []int64{}}},
	}
	before, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	next := *stored // shares Containers, Labels and SecurityContext
	pods.StoredForm(&next)
	assertJSON(t, &next, `{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","resources":{}}],"securityContext":{}},"status":{}}`)
	if stored.Spec.Containers[0].Env == nil || stored.Spec.SecurityContext.SupplementalGroups == nil {
		t.Errorf("StoredForm cleared the stored object's lists: env %#v, supplementalGroups %#v", stored.Spec.Containers[0].Env, stored.Spec.SecurityContext.SupplementalGroups)
	}
	assertJSON(t, stored, string(before))
	if testing.AllocsPerRun(10, func() { pods.StoredForm(&next) }) != 0 {
		t.Error("StoredForm of an object with nothing to clear allocates (it copies what it need not)")
	}
}

func assertJSON(t *testing.T, o any, want string) {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("stored form\n%s\nwant\n%s", b, want)
	}
}

func TestCompactCustomMetadata(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "w", "annotations": map[string]any{}, "labels": map[string]any{"a": "b"},
			"finalizers": []any{}, "ownerReferences": []any{}, "managedFields": []any{}},
		"spec": map[string]any{"tags": []any{}, "extra": map[string]any{}},
	}}
	CompactCustomMetadata(u)
	assertJSON(t, u.Object, `{"metadata":{"labels":{"a":"b"},"name":"w"},"spec":{"extra":{},"tags":[]}}`)
	CompactCustomMetadata(&corev1.Pod{}) // not a custom resource: nothing to do
}
