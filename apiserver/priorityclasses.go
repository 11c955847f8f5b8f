package apiserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// createSystemPriorityClasses creates the PriorityClasses kube-apiserver
// creates at start (system-node-critical, system-cluster-critical, its
// own objects, written by the kube-apiserver field manager), when the
// registry serves PriorityClasses and they do not exist yet (a persistent
// store keeps them). They go through the resource's store like any write.
func (s *Server) createSystemPriorityClasses(ctx context.Context) error {
	res := s.reg.Get("scheduling.k8s.io", "v1", "priorityclasses")
	if res == nil {
		return nil // a registry without the kind
	}
	rs := s.storeOf(res)
	for _, pc := range registry.NewSystemPriorityClasses() {
		if _, err := rs.Get(ctx, "", pc.Name, storage.ReadOptions{}); err == nil {
			continue
		}
		if _, err := rs.Create(ctx, pc, &writeOptions{Manager: managerAPIServer}); err != nil && errorStatus(err).Code != http.StatusConflict {
			return fmt.Errorf("apiserver: creating the priority class %s: %w", pc.Name, err)
		}
	}
	return nil
}
