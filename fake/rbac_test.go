package fake_test

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// Options.RBAC and Options.User: the client acts as the user, RBAC
// decides with what is seeded (seeding is the admin's, at start and
// later, and applies to the next request), and without RBAC or without a
// user everything is allowed, with no bootstrap policy by default.
func TestRBAC(t *testing.T) {
	sa := apiserver.User{Name: "system:serviceaccount:web:claimer"}
	role, binding := controllerRole()
	f := fake.NewWithOptions(t, fake.Options{RBAC: true, User: &sa}, settings())
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	if _, err := cms.Get(t.Context(), "settings", metav1.GetOptions{}); !client.IsForbidden(err) {
		t.Fatalf("get before the Role is seeded: %v", err)
	}
	if err := f.Seed(t.Context(), role, binding); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("get once the Role is seeded: %v", err)
	}
	if _, err := cms.Get(t.Context(), "other", metav1.GetOptions{}); !client.IsForbidden(err) {
		t.Errorf("get of a name the Role does not list: %v", err)
	}
	// Discovery is everyone's, as the bootstrap policy says.
	if _, err := f.Client().Discovery().ServerGroups(t.Context()); err != nil {
		t.Errorf("discovery: %v", err)
	}
	crs := client.For[rbacv1.ClusterRole](f.Client())
	if _, err := crs.Get(t.Context(), "view", metav1.GetOptions{}); !client.IsForbidden(err) {
		t.Errorf("get of a ClusterRole as the service account: %v", err)
	}

	for _, opts := range []fake.Options{{User: &sa}, {RBAC: true}} {
		f := fake.NewWithOptions(t, opts, settings())
		if _, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
	}
	list, err := client.For[rbacv1.ClusterRole](fake.NewClient(t)).List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("the default Fake's ClusterRoles: %d %v", len(list.Items), err)
	}
}
