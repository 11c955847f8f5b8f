package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// kubernetesServiceName is the Service (and Endpoints and EndpointSlice) in
// the default namespace through which pods reach the API server.
const kubernetesServiceName = "kubernetes"

// firstServiceIP is the address kube-apiserver gives the kubernetes Service:
// the first usable one of the service range.
func firstServiceIP(p netip.Prefix) netip.Addr {
	return p.Masked().Addr().Next()
}

// createKubernetesService creates what kube-apiserver creates for itself in
// the default namespace: the kubernetes Service (ClusterIP the first address
// of the service range, port 443 named https to the server's port), and
// its Endpoints and EndpointSlice pointing at the server's advertised
// address, with the labels and fields kube-apiserver v1.37 writes. Existing
// ones (a persistent store) are kept; those the registry does not serve are
// left out.
func (s *Server) createKubernetesService(ctx context.Context) error {
	addr, port := s.cfg.AdvertiseAddress, s.cfg.AdvertisePort
	svc := map[string]any{
		"metadata": map[string]any{"name": kubernetesServiceName,
			"labels": map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		"spec": map[string]any{
			"type":                  "ClusterIP",
			"clusterIP":             firstServiceIP(s.cfg.ServiceClusterIPRange).String(),
			"ports":                 []any{map[string]any{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}},
			"sessionAffinity":       "None",
			"ipFamilyPolicy":        "SingleStack",
			"internalTrafficPolicy": "Cluster",
		},
	}
	endpoints := map[string]any{
		"metadata": map[string]any{"name": kubernetesServiceName,
			"labels": map[string]string{"endpointslice.kubernetes.io/skip-mirror": "true"}},
		"subsets": []any{map[string]any{
			"addresses": []any{map[string]any{"ip": addr.String()}},
			"ports":     []any{map[string]any{"name": "https", "port": port, "protocol": "TCP"}},
		}},
	}
	addressType := "IPv4"
	if addr.Is6() {
		addressType = "IPv6"
	}
	slice := map[string]any{
		"metadata": map[string]any{"name": kubernetesServiceName,
			"labels": map[string]string{"kubernetes.io/service-name": kubernetesServiceName}},
		"addressType": addressType,
		"endpoints":   []any{map[string]any{"addresses": []string{addr.String()}, "conditions": map[string]any{"ready": true}}},
		"ports":       []any{map[string]any{"name": "https", "protocol": "TCP", "port": port}},
	}
	for _, o := range []struct {
		group, resource string
		body            any
	}{
		{"", "services", svc},
		{"", "endpoints", endpoints},
		{"discovery.k8s.io", "endpointslices", slice},
	} {
		res := s.reg.Get(o.group, "v1", o.resource)
		if res == nil {
			continue // a registry without the kind
		}
		rs := s.storeOf(res)
		if _, err := rs.Get(ctx, "default", kubernetesServiceName, storage.ReadOptions{}); err == nil {
			continue
		}
		b, err := json.Marshal(o.body)
		if err != nil {
			return err
		}
		obj := res.New()
		if err := kjson.Unmarshal(b, obj); err != nil {
			return fmt.Errorf("apiserver: the %s of the kubernetes service: %w", o.resource, err)
		}
		obj.SetNamespace("default")
		if _, err := rs.Create(ctx, obj, &writeOptions{Manager: managerAPIServer}); err != nil && errorStatus(err).Code != http.StatusConflict {
			return fmt.Errorf("apiserver: creating %s %s/%s: %w", o.resource, "default", kubernetesServiceName, err)
		}
	}
	return nil
}

// startKubernetesServiceController recreates the kubernetes Service,
// Endpoints and EndpointSlice when they are deleted, in a goroutine the
// server owns (stopped by Close), as kube-apiserver's own controllers do
// (they check every ten seconds; kapi follows a watch). They are not put
// back when changed.
func (s *Server) startKubernetesServiceController() {
	// A delete gives back the Service's cluster IP just after the store
	// removes it, so a create that follows the event at once may find the
	// address still taken: retry, backing off to kube-apiserver's own period
	// of ten seconds.
	recreate := func(ctx context.Context) {
		for wait := 50 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
			err := s.createKubernetesService(ctx)
			if err == nil || ctx.Err() != nil {
				return
			}
			if wait >= time.Second {
				s.cfg.Logger.Error("apiserver: recreating the kubernetes service", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
	s.followStore("/", s.store.Revision(), 100*time.Millisecond, recreate, func(ctx context.Context, ev storage.Event) {
		if ev.Type == storage.Deleted && ev.Object != nil && ev.Object.GetNamespace() == "default" && ev.Object.GetName() == kubernetesServiceName {
			recreate(ctx)
		}
	})
}
