package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"go.uber.org/goleak"
)

// listRBAC lists a resource of the RBAC group from srv's store.
func listRBAC(t *testing.T, srv *Server, resource string) []storage.Object {
	t.Helper()
	list, err := srv.store.List(t.Context(), keyOf(rbacGroup, resource, "", ""), storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// A new server has the bootstrap policy of a v1.37.2 cluster, every
// object as captured, created by kube-apiserver, with the aggregated
// admin, edit and view roles holding the rules they hold on the cluster
// (testdata/rbac/aggregated.json) once New returns. A second server of
// the process (which reuses the managed fields the first tracked) gets the
// same objects. DisableBootstrapPolicy and SkipSystemNamespaces leave the
// policy out.
func TestBootstrapPolicy(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	policy, err := loadBootstrapPolicy()
	if err != nil {
		t.Fatal(err)
	}
	var servers []*Server
	for range 2 {
		srv, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		servers = append(servers, srv)
	}
	for _, c := range []struct {
		resource string
		want     int
	}{{"clusterroles", len(policy.ClusterRoles)}, {"clusterrolebindings", len(policy.ClusterRoleBindings)}, {"roles", len(policy.Roles)}, {"rolebindings", len(policy.RoleBindings)}} {
		first, second := listRBAC(t, servers[0], c.resource), listRBAC(t, servers[1], c.resource)
		if len(first) != c.want || len(second) != c.want || c.want == 0 {
			t.Errorf("%s: %d and %d, want %d", c.resource, len(first), len(second), c.want)
			continue
		}
		for i := range first {
			a, b := first[i], second[i]
			if a.GetLabels()["kubernetes.io/bootstrapping"] != "rbac-defaults" || a.GetAnnotations()["rbac.authorization.kubernetes.io/autoupdate"] != "true" {
				t.Errorf("%s %s: labels %v annotations %v", c.resource, a.GetName(), a.GetLabels(), a.GetAnnotations())
			}
			mf := a.GetManagedFields()
			if len(mf) == 0 || mf[len(mf)-1].Manager != managerAPIServer && mf[0].Manager != managerAPIServer {
				t.Errorf("%s %s: managed fields %+v", c.resource, a.GetName(), mf)
			}
			if !reflect.DeepEqual(withoutServerFields(a), withoutServerFields(b)) {
				t.Errorf("%s %s differs between servers:\n%+v\n%+v", c.resource, a.GetName(), a, b)
			}
		}
	}

	raw, err := os.ReadFile("testdata/rbac/aggregated.json")
	if err != nil {
		t.Fatal(err)
	}
	var aggregated []struct {
		Name  string
		Rules []rbacv1.PolicyRule
	}
	if err := json.Unmarshal(raw, &aggregated); err != nil {
		t.Fatal(err)
	}
	for _, a := range aggregated {
		obj, err := servers[1].store.Get(t.Context(), keyOf(rbacGroup, "clusterroles", "", a.Name), storage.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := obj.(*rbacv1.ClusterRole).Rules; !reflect.DeepEqual(got, a.Rules) {
			t.Errorf("%s: rules\n%+v\nwant\n%+v", a.Name, got, a.Rules)
		}
	}

	// One synchronous pass of the controller aggregates roles aggregated
	// in turn (view's rules go to edit, then to admin).
	once, err := New(Config{DisableClusterRoleAggregation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer once.Close()
	once.aggregateClusterRoles(t.Context())
	for _, a := range aggregated {
		obj, err := once.store.Get(t.Context(), keyOf(rbacGroup, "clusterroles", "", a.Name), storage.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := obj.(*rbacv1.ClusterRole).Rules; !reflect.DeepEqual(got, a.Rules) {
			t.Errorf("%s after one pass: %d rules, want %d", a.Name, len(got), len(a.Rules))
		}
	}

	for _, cfg := range []Config{{DisableBootstrapPolicy: true}, {SkipSystemNamespaces: true}} {
		srv, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(listRBAC(t, srv, "clusterroles")); n != 0 {
			t.Errorf("%+v: %d cluster roles", cfg, n)
		}
		srv.Close()
	}
}

// withoutServerFields is o without what differs between two servers
// creating it: uid, resourceVersion, times.
func withoutServerFields(o storage.Object) storage.Object {
	c := reflect.ValueOf(o).MethodByName("DeepCopy").Call(nil)[0].Interface().(storage.Object)
	c.SetUID("")
	c.SetResourceVersion("")
	c.SetCreationTimestamp(metav1.Time{})
	mf := c.GetManagedFields()
	for i := range mf {
		mf[i].Time = nil
	}
	// Entries are ordered by time, which may differ by a second.
	slices.SortFunc(mf, func(a, b metav1.ManagedFieldsEntry) int { return strings.Compare(a.Manager, b.Manager) })
	return c
}

// The aggregation controller gives a ClusterRole with an aggregationRule
// the rules of the ClusterRoles its selectors match, and keeps them
// current as those are created, changed, relabelled and deleted; it stops
// with Close. DisableClusterRoleAggregation turns it off.
func TestClusterRoleAggregation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const crs = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
	rules := func(srv *Server) []rbacv1.PolicyRule {
		obj, err := srv.store.Get(t.Context(), keyOf(rbacGroup, "clusterroles", "", "agg"), storage.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*rbacv1.ClusterRole).Rules
	}
	eventually := func(srv *Server, want []rbacv1.PolicyRule) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !reflect.DeepEqual(rules(srv), want) {
			if time.Now().After(deadline) {
				t.Fatalf("rules %+v, want %+v", rules(srv), want)
			}
			time.Sleep(time.Millisecond) // polling a condition with a deadline
		}
	}
	r1 := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	r2 := rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}}
	srv, err := New(Config{SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, body := range []string{
		`{"metadata":{"name":"b-part","labels":{"agg":"yes"}},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`,
		// It matches its own selector: its own rules are not its sources.
		`{"metadata":{"name":"agg","labels":{"agg":"yes"}},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"agg":"yes"}}]}}`,
	} {
		if code, b := serve(t, srv, "POST", crs, body); code != http.StatusCreated {
			t.Fatalf("%d %v", code, b)
		}
	}
	eventually(srv, []rbacv1.PolicyRule{r1})
	// A second role, sorting before the first, with the same rule and one more.
	if code, b := serve(t, srv, "POST", crs, `{"metadata":{"name":"a-part","labels":{"agg":"yes"}},"rules":[{"verbs":["list"],"apiGroups":["apps"],"resources":["deployments"]},{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`); code != http.StatusCreated {
		t.Fatalf("%d %v", code, b)
	}
	eventually(srv, []rbacv1.PolicyRule{r2, r1})
	if rec := send(t, srv, "PATCH", crs+"/a-part", `{"metadata":{"labels":{"agg":null}}}`, "application/merge-patch+json"); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	eventually(srv, []rbacv1.PolicyRule{r1})
	if code, b := serve(t, srv, "DELETE", crs+"/b-part", ""); code != http.StatusOK {
		t.Fatalf("%d %v", code, b)
	}
	eventually(srv, nil)

	off, err := New(Config{SkipSystemNamespaces: true, DisableClusterRoleAggregation: true})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	for _, body := range []string{
		`{"metadata":{"name":"b-part","labels":{"agg":"yes"}},"rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}`,
		`{"metadata":{"name":"agg"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"agg":"yes"}}]}}`,
	} {
		if code, b := serve(t, off, "POST", crs, body); code != http.StatusCreated {
			t.Fatalf("%d %v", code, b)
		}
	}
	if got := rules(off); len(got) != 0 {
		t.Errorf("aggregated while disabled: %+v", got)
	}
}
