package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
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
// ones (a persistent store) are kept. Unlike kube-apiserver, which checks
// them every ten seconds, kapi does not recreate them if they are deleted.
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
		path string
		body any
	}{
		{"/api/v1/namespaces/default/services", svc},
		{"/api/v1/namespaces/default/endpoints", endpoints},
		{"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", slice},
	} {
		b, err := json.Marshal(o.body)
		if err != nil {
			return err
		}
		code, resp := s.serveInternal(ctx, http.MethodPost, o.path, string(b), managerAPIServer)
		if code != http.StatusCreated && code != http.StatusConflict {
			return fmt.Errorf("apiserver: creating %s/%s: %d %s", o.path, kubernetesServiceName, code, strings.TrimSpace(string(resp)))
		}
	}
	return nil
}
