package apiserver

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"os"
	"reflect"
	"testing"
)

// The kubernetes Service, Endpoints and EndpointSlice, and a namespace's
// default ServiceAccount, are what kube-apiserver v1.37.2 and its controller
// manager make (testdata/golden-1.37/cluster), given the same service range
// and advertised address, but for uids, resourceVersions and times.
func TestKubernetesServiceGolden(t *testing.T) {
	srv, err := New(Config{
		ServiceClusterIPRange: netip.MustParsePrefix("10.0.0.0/24"),
		AdvertiseAddress:      netip.MustParseAddr("192.0.2.1"),
		AdvertisePort:         17443,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct{ path, golden string }{
		{"/api/v1/namespaces/default/services/kubernetes", "kubernetes-service.json"},
		{"/api/v1/namespaces/default/endpoints/kubernetes", "kubernetes-endpoints.json"},
		{"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes", "kubernetes-endpointslice.json"},
		{"/api/v1/namespaces/kube-system/serviceaccounts/default", "default-serviceaccount.json"},
	} {
		b, err := os.ReadFile("../testdata/golden-1.37/cluster/" + tc.golden)
		if err != nil {
			t.Fatal(err)
		}
		var want map[string]any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		_, got := serve(t, srv, "GET", tc.path, "")
		for _, o := range []map[string]any{want, got} {
			meta, _ := o["metadata"].(map[string]any)
			for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
				delete(meta, k)
			}
			mf, _ := meta["managedFields"].([]any)
			for _, e := range mf {
				delete(e.(map[string]any), "time")
			}
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s\n got  %s\n want %s", tc.path, g, w)
		}
	}
}

// Deleted, the kubernetes Service, Endpoints and EndpointSlice come back.
func TestKubernetesServiceRecreated(t *testing.T) {
	srv := newTestServer(t)
	for _, o := range []struct{ key, path string }{
		{"/core/services/default/kubernetes", "/api/v1/namespaces/default/services/kubernetes"},
		{"/core/endpoints/default/kubernetes", "/api/v1/namespaces/default/endpoints/kubernetes"},
		{"/discovery.k8s.io/endpointslices/default/kubernetes", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"},
	} {
		old := getObject(srv, o.key)
		if old == nil {
			t.Fatalf("%s missing", o.key)
		}
		mustServe(t, srv, "DELETE", o.path, "", http.StatusOK)
		waitStore(t, srv, o.key+" back", func() bool { n := getObject(srv, o.key); return n != nil && n.GetUID() != old.GetUID() })
	}
	// The service got its address back.
	_, svc := serve(t, srv, "GET", "/api/v1/namespaces/default/services/kubernetes", "")
	if ip := svc["spec"].(map[string]any)["clusterIP"]; ip != "10.96.0.1" {
		t.Errorf("recreated with cluster IP %v", ip)
	}
}
