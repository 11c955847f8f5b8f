package apiserver

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/selector"
)

// managerClusterRoleAggregation is the field manager of the aggregated
// rules, kube-controller-manager's controller's.
const managerClusterRoleAggregation = "clusterrole-aggregation-controller"

// startClusterRoleAggregation runs, in a goroutine the server owns
// (stopped by Close), what kube-controller-manager's
// clusterrole-aggregation-controller does: a ClusterRole with an
// aggregationRule gets as rules the union of the rules of the other
// ClusterRoles its selectors match (in the order of the selectors, each
// selector's roles by name, a rule once), kept current as ClusterRoles
// change. The ClusterRoles stored already are aggregated before it
// returns, so that a new server's admin, edit and view have their rules
// at once.
func (s *Server) startClusterRoleAggregation() {
	res := s.reg.Get(rbacGroup, "v1", "clusterroles")
	if res == nil {
		return // a registry without the kind
	}
	prefix := keyOf(rbacGroup, "clusterroles", "", "")
	rev := s.store.Revision()
	s.aggregateClusterRoles(s.ctx)
	s.followStore(prefix, rev, time.Second, s.aggregateClusterRoles, func(ctx context.Context, ev storage.Event) {
		s.aggregateClusterRoles(ctx)
	})
}

// aggregateClusterRoles brings the rules of every aggregating ClusterRole
// up to date. Failures are logged; the next change retries.
func (s *Server) aggregateClusterRoles(ctx context.Context) {
	res := s.reg.Get(rbacGroup, "v1", "clusterroles")
	list, err := s.store.List(ctx, keyOf(rbacGroup, "clusterroles", "", ""), storage.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Logger.Error("apiserver: clusterrole aggregation", "err", err)
		}
		return
	}
	roles := make([]*rbacv1.ClusterRole, 0, len(list.Items))
	for _, o := range list.Items {
		if r, ok := o.(*rbacv1.ClusterRole); ok {
			roles = append(roles, r)
		}
	}
	slices.SortFunc(roles, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	// Aggregated roles may be aggregated in turn (edit's rules go to
	// admin): the rules are computed until none changes (a pass per role
	// at most, for cycles), then written.
	want := map[string][]rbacv1.PolicyRule{}
	for range roles {
		changed := false
		for i, r := range roles {
			if r.AggregationRule == nil {
				continue
			}
			rules := aggregatedRules(r, roles)
			if sameRules(rules, r.Rules) {
				continue
			}
			c := *r // the stored object is shared: a shallow copy with the new rules
			c.Rules = rules
			roles[i] = &c
			want[r.Name] = rules
			changed = true
		}
		if !changed {
			break
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		rules := want[name]
		_, err := s.storeOf(res).modify(ctx, "", name, nil, &writeOptions{Manager: managerClusterRoleAggregation}, func(cur storage.Object) storage.Object {
			c, ok := cur.(*rbacv1.ClusterRole)
			if !ok || c.AggregationRule == nil {
				return nil
			}
			c = c.DeepCopy()
			c.Rules = rules
			return c
		})
		if err != nil && ctx.Err() == nil {
			if st := errorStatus(err); st.Code != 404 && st.Code != 409 {
				s.cfg.Logger.Error("apiserver: clusterrole aggregation", "clusterrole", name, "err", err)
			}
		}
	}
}

// sameRules reports whether two rule lists are the same (nil and empty
// alike).
func sameRules(a, b []rbacv1.PolicyRule) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

// aggregatedRules is the union of the rules of the roles (sorted by name)
// that r's selectors match, r itself excepted.
func aggregatedRules(r *rbacv1.ClusterRole, roles []*rbacv1.ClusterRole) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for i := range r.AggregationRule.ClusterRoleSelectors {
		sel, err := selector.FromLabelSelector(&r.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			continue // validation refuses such selectors
		}
		for _, other := range roles {
			if other.Name == r.Name || !sel.Matches(selector.Set(other.Labels)) {
				continue
			}
			for _, rule := range other.Rules {
				if !slices.ContainsFunc(rules, func(x rbacv1.PolicyRule) bool { return reflect.DeepEqual(x, rule) }) {
					rules = append(rules, rule)
				}
			}
		}
	}
	return rules
}
