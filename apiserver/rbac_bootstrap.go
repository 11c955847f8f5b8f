package apiserver

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	rbacv1 "github.com/kapi-dev/kapi/api/rbac/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// bootstrapPolicyJSON is the RBAC policy a kube-apiserver v1.37.2 creates
// at start (its rbac/bootstrap-roles post-start hook): every ClusterRole,
// ClusterRoleBinding, Role and RoleBinding labelled
// kubernetes.io/bootstrapping=rbac-defaults, captured from a real server
// with the metadata the server sets removed, and the rules of the
// aggregated ClusterRoles (admin, edit, view) left to the aggregation
// controller (rbac_aggregate.go), as the hook leaves them.
//
//go:embed rbac_bootstrap.json
var bootstrapPolicyJSON []byte

// bootstrapPolicy is the policy of bootstrapPolicyJSON.
type bootstrapPolicy struct {
	ClusterRoles        []rbacv1.ClusterRole        `json:"clusterRoles"`
	ClusterRoleBindings []rbacv1.ClusterRoleBinding `json:"clusterRoleBindings"`
	Roles               []rbacv1.Role               `json:"roles"`
	RoleBindings        []rbacv1.RoleBinding        `json:"roleBindings"`
}

// loadBootstrapPolicy decodes the policy once per process; callers copy
// what they store.
var loadBootstrapPolicy = sync.OnceValues(func() (*bootstrapPolicy, error) {
	var p bootstrapPolicy
	if err := json.Unmarshal(bootstrapPolicyJSON, &p); err != nil {
		return nil, fmt.Errorf("apiserver: the bootstrap RBAC policy: %w", err)
	}
	return &p, nil
})

// bootstrapPolicyEnabled reports whether New creates the bootstrap policy:
// as kube-apiserver, whenever the RBAC API is served, unless disabled, or
// left out with the other objects a server makes for itself
// (SkipSystemNamespaces).
func (s *Server) bootstrapPolicyEnabled() bool {
	return !s.cfg.SkipSystemNamespaces && !s.cfg.DisableBootstrapPolicy && s.reg.Get(rbacGroup, "v1", "clusterroles") != nil
}

// createBootstrapPolicy creates the objects of the bootstrap policy that
// are missing, as kube-apiserver's post-start hook does; existing ones
// are kept as they are.
func (s *Server) createBootstrapPolicy(ctx context.Context) error {
	p, err := loadBootstrapPolicy()
	if err != nil {
		return err
	}
	for i := range p.ClusterRoles {
		if err := s.createBootstrapObject(ctx, "clusterroles", p.ClusterRoles[i].DeepCopy()); err != nil {
			return err
		}
	}
	for i := range p.ClusterRoleBindings {
		if err := s.createBootstrapObject(ctx, "clusterrolebindings", p.ClusterRoleBindings[i].DeepCopy()); err != nil {
			return err
		}
	}
	for i := range p.Roles {
		if err := s.createBootstrapObject(ctx, "roles", p.Roles[i].DeepCopy()); err != nil {
			return err
		}
	}
	for i := range p.RoleBindings {
		if err := s.createBootstrapObject(ctx, "rolebindings", p.RoleBindings[i].DeepCopy()); err != nil {
			return err
		}
	}
	return nil
}

// createBootstrapObject creates obj, a resource of the RBAC group, unless
// an object of its name exists.
func (s *Server) createBootstrapObject(ctx context.Context, resource string, obj registry.Object) error {
	res := s.reg.Get(rbacGroup, "v1", resource)
	if res == nil {
		return nil // a registry without the kind
	}
	rs := s.storeOf(res)
	if _, err := rs.Get(ctx, obj.GetNamespace(), obj.GetName(), storage.ReadOptions{}); err == nil {
		return nil
	}
	o := &writeOptions{Manager: managerAPIServer}
	key := resource + "/" + obj.GetNamespace() + "/" + obj.GetName()
	if cached, ok := bootstrapManagedFields.Load(key); ok {
		// The fields are those the first server of the process tracked
		// for the same object: only the time differs.
		entries := slices.Clone(cached.([]metav1.ManagedFieldsEntry))
		now := metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
		for i := range entries {
			entries[i].Time = &now
		}
		obj.SetManagedFields(entries)
		o.Applying = true // tracked already
	}
	out, err := rs.Create(ctx, obj, o)
	if err != nil {
		if errorStatus(err).Code == http.StatusConflict {
			return nil
		}
		return fmt.Errorf("apiserver: creating the bootstrap %s %s: %w", res.Kind, obj.GetName(), err)
	}
	if !o.Applying {
		entries := slices.Clone(out.GetManagedFields())
		for i := range entries {
			entries[i].Time = nil
		}
		bootstrapManagedFields.Store(key, entries)
	}
	return nil
}

// bootstrapManagedFields caches, per process, the managedFields the
// bootstrap objects get when created (by resource/namespace/name, without
// their time): tracking them is most of the cost of creating the policy,
// and they are the same for every server.
var bootstrapManagedFields sync.Map
