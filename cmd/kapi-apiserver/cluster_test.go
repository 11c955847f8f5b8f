package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// getJSON gets path from the server and decodes the answer.
func (s *testServer) getJSON(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	return s.doJSON(t, http.MethodGet, path, "")
}

func (s *testServer) doJSON(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// What the binary creates for itself and its controllers, with the flags
// that configure them: the kubernetes Service (first address of
// --service-cluster-ip-range, port 443 to the server's port) and its
// Endpoints at --advertise-address, kube-root-ca.crt with the TLS CA of the
// kubeconfig, node ports from --service-node-port-range, and --controllers.
func TestClusterObjects(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--tls", "--service-cluster-ip-range=10.0.0.0/24", "--service-node-port-range=31000-31001",
		"--controllers=*,-"+ctrlServiceAccount, "--advertise-address=198.51.100.7")
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())

	code, svc := s.getJSON(t, "/api/v1/namespaces/default/services/kubernetes")
	spec, _ := svc["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	if code != http.StatusOK || spec["clusterIP"] != "10.0.0.1" || len(ports) != 1 {
		t.Fatalf("kubernetes service: %d %v", code, svc)
	}
	if p := ports[0].(map[string]any); p["name"] != "https" || p["port"] != 443.0 || p["targetPort"] != float64(port) {
		t.Errorf("kubernetes service port %v, want https 443 -> %d", p, port)
	}
	code, ep := s.getJSON(t, "/api/v1/namespaces/default/endpoints/kubernetes")
	if want := fmt.Sprintf(`[{"addresses":[{"ip":"198.51.100.7"}],"ports":[{"name":"https","port":%d,"protocol":"TCP"}]}]`, port); code != http.StatusOK || compactJSON(ep["subsets"]) != want {
		t.Errorf("kubernetes endpoints: %d %s, want subsets %s", code, compactJSON(ep["subsets"]), want)
	}
	code, slice := s.getJSON(t, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes")
	if want := `[{"addresses":["198.51.100.7"],"conditions":{"ready":true}}]`; code != http.StatusOK || compactJSON(slice["endpoints"]) != want {
		t.Errorf("kubernetes endpointslice: %d %s, want endpoints %s", code, compactJSON(slice["endpoints"]), want)
	}

	// kube-root-ca.crt holds the CA the kubeconfig trusts.
	ca, err := base64.StdEncoding.DecodeString(readKubeconfig(t, s.kubeconfig).Clusters[0].Cluster.CertificateAuthorityData)
	if err != nil {
		t.Fatal(err)
	}
	code, cm := s.getJSON(t, "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt")
	if data, _ := cm["data"].(map[string]any); code != http.StatusOK || data["ca.crt"] != string(ca) {
		t.Errorf("kube-root-ca.crt: %d %v, want the kubeconfig's CA", code, cm)
	}
	// The serviceaccount controller is off.
	if code, _ := s.getJSON(t, "/api/v1/namespaces/kube-system/serviceaccounts/default"); code != http.StatusNotFound {
		t.Errorf("default service account with the serviceaccount controller off: %d, want 404", code)
	}

	// Node ports come from the configured range, and run out.
	for i, want := range []int{http.StatusCreated, http.StatusCreated, http.StatusInternalServerError} {
		body := fmt.Sprintf(`{"metadata":{"name":"np%d"},"spec":{"type":"NodePort","ports":[{"port":80}]}}`, i)
		code, got := s.doJSON(t, http.MethodPost, "/api/v1/namespaces/default/services", body)
		if code != want {
			t.Fatalf("NodePort service %d: %d %v, want %d", i, code, got, want)
		}
		if code != http.StatusCreated {
			continue
		}
		np := got["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["nodePort"].(float64)
		if np < 31000 || np > 31001 {
			t.Errorf("node port %v outside --service-node-port-range", np)
		}
	}
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Without --advertise-address the kubernetes Service points at the listen
// address, or, when it is loopback or unspecified, at an address of the host
// that is not loopback (kube-apiserver refuses loopback endpoints).
func TestAdvertiseAddress(t *testing.T) {
	if got := advertiseAddress(net.ParseIP("10.1.2.3")); got != netip.MustParseAddr("10.1.2.3") {
		t.Errorf("listen 10.1.2.3: %v", got)
	}
	for _, listen := range []net.IP{net.ParseIP("127.0.0.1"), net.IPv4zero, net.ParseIP("::1"), nil} {
		if got := advertiseAddress(listen); !got.Is4() || got.IsLoopback() || got.IsUnspecified() {
			t.Errorf("listen %v: advertises %v", listen, got)
		}
	}
}
