package fake_test

import (
	"context"
	"fmt"
	"log"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
)

// controllerRole is the Role a controller ships with (its manifests'),
// and the binding that gives it to the controller's service account.
func controllerRole() (*rbacv1.Role, *rbacv1.RoleBinding) {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "claimer", Namespace: "web"},
		Rules: []rbacv1.PolicyRule{{
			Verbs: []string{"get", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings"},
		}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "claimer", Namespace: "web"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "claimer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "claimer", Namespace: "web"}},
	}
	return role, binding
}

// With RBAC on, the Fake's client acts as the given user and the server
// allows it only what its bindings do, as a cluster would: a unit test
// checks that a controller's Role grants what the controller does, and
// no more. The seeds (the Role and its binding among them) are created by
// the admin.
func ExampleOptions_rbac() {
	ctx := context.Background()
	role, binding := controllerRole()
	sa := apiserver.User{Name: "system:serviceaccount:web:claimer", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:web"}}
	f, err := fake.Start(ctx, fake.Options{RBAC: true, User: &sa}, settings(), role, binding)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	// The code under test gets and updates the "settings" ConfigMap: the
	// Role allows it.
	fmt.Println("claim:", claim(ctx, f.Client(), "web", "claimer"))
	// Anything else is forbidden.
	_, err = client.For[corev1.ConfigMap](f.Client()).Namespace("web").List(ctx, metav1.ListOptions{})
	fmt.Println("list forbidden:", client.IsForbidden(err))
	fmt.Println(err)
	// Output:
	// claim: <nil>
	// list forbidden: true
	// configmaps is forbidden: User "system:serviceaccount:web:claimer" cannot list resource "configmaps" in API group "" in the namespace "web"
}
