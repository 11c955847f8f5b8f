package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/etcdtest"
)

func TestEtcdKey(t *testing.T) {
	for in, want := range map[string]string{
		"/":                                                     "/",
		"/core/configmaps/":                                     "/configmaps/",
		"/core/configmaps/ns/a":                                 "/configmaps/ns/a",
		"/core/namespaces/ns":                                   "/namespaces/ns",
		"/core/services/default/kubernetes":                     "/services/specs/default/kubernetes",
		"/core/endpoints/default/kubernetes":                    "/services/endpoints/default/kubernetes",
		"/core/nodes/n1":                                        "/minions/n1",
		"/core/replicationcontrollers/ns/r":                     "/controllers/ns/r",
		"/apps/deployments/ns/d":                                "/deployments/ns/d",
		"/networking.k8s.io/ingresses/ns/i":                     "/ingress/ns/i",
		"/coordination.k8s.io/leases/ns/l":                      "/leases/ns/l",
		"/rbac.authorization.k8s.io/clusterroles/admin":         "/clusterroles/admin",
		"/apiextensions.k8s.io/customresourcedefinitions/a.b.c": "/apiextensions.k8s.io/customresourcedefinitions/a.b.c",
		"/apiregistration.k8s.io/apiservices/v1.apps":           "/apiregistration.k8s.io/apiservices/v1.apps",
		"/test.kapi.dev/gadgets/ns/g":                           "/test.kapi.dev/gadgets/ns/g",
		"/test.kapi.dev/gadgets/":                               "/test.kapi.dev/gadgets/",
		"/core/":                                                "/core/",
	} {
		if got := etcdKey(in); got != want {
			t.Errorf("etcdKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// startEtcd starts an etcd member (or a cluster of members) for the test,
// stopped at its end.
func startEtcd(t testing.TB, members ...int) *etcdtest.Member {
	t.Helper()
	m, err := etcdtest.Start(etcdtest.Config{Members: append(members, 1)[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// newEtcdServer starts a server on the etcd cluster m, closed at the end
// of the test.
func newEtcdServer(t testing.TB, m *etcdtest.Member, edits ...func(*Config)) *Server {
	t.Helper()
	return newEtcdServerOn(t, m.Endpoints, edits...)
}

// newEtcdServerOn starts a server on the etcd members at endpoints.
func newEtcdServerOn(t testing.TB, endpoints []string, edits ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{Etcd: EtcdConfig{Servers: endpoints}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, e := range edits {
		e(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestEtcdReplicas runs two servers on one etcd: each sees the other's
// writes (in a watch and in a consistent list), and an update based on a
// version the other replaced fails with 409 whichever server gets it. On a
// cluster of three members, each server talks to a member of its own.
func TestEtcdReplicas(t *testing.T) {
	for _, members := range []int{1, 3} {
		t.Run(fmt.Sprintf("members=%d", members), func(t *testing.T) {
			m := startEtcd(t, members)
			a := newEtcdServerOn(t, m.Endpoints[:1])
			b := newEtcdServerOn(t, m.Endpoints[len(m.Endpoints)-1:])
			testReplicas(t, a, b)
		})
	}
}

func testReplicas(t *testing.T, a, b *Server) {
	hb := httptest.NewServer(b)
	defer hb.Close()
	defer hb.CloseClientConnections()

	// A watch through b, from now.
	rec := crdServe(t, b, "GET", "/api/v1/namespaces/default/configmaps", "")
	var list struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 {
		t.Fatalf("list through b: %d %s", rec.Code, rec.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hb.URL+"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion="+list.Metadata.ResourceVersion, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewScanner(resp.Body)

	// A create through a: b's watch and b's list see it.
	rec = crdServe(t, a, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"shared"},"data":{"k":"1"}}`)
	if rec.Code != 201 {
		t.Fatalf("create through a: %d %s", rec.Code, rec.Body)
	}
	created := decodeMap(t, rec)
	createdRV := created["metadata"].(map[string]any)["resourceVersion"].(string)
	if !events.Scan() {
		t.Fatalf("b's watch ended: %v", events.Err())
	}
	var ev struct {
		Type   string
		Object struct {
			Metadata struct{ Name, ResourceVersion string } `json:"metadata"`
		}
	}
	if err := json.Unmarshal(events.Bytes(), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "shared" || ev.Object.Metadata.ResourceVersion != createdRV {
		t.Fatalf("b's watch: %s (%v), want ADDED shared at %s", events.Bytes(), err, createdRV)
	}
	rec = crdServe(t, b, "GET", "/api/v1/namespaces/default/configmaps/shared", "")
	if rec.Code != 200 || decodeMap(t, rec)["metadata"].(map[string]any)["resourceVersion"] != createdRV {
		t.Fatalf("get through b: %d %s", rec.Code, rec.Body)
	}

	// b updates it; a's update based on the first version is a conflict.
	rec = crdServe(t, b, "PUT", "/api/v1/namespaces/default/configmaps/shared",
		`{"metadata":{"name":"shared","resourceVersion":"`+createdRV+`"},"data":{"k":"b"}}`)
	if rec.Code != 200 {
		t.Fatalf("update through b: %d %s", rec.Code, rec.Body)
	}
	updatedRV := decodeMap(t, rec)["metadata"].(map[string]any)["resourceVersion"].(string)
	rec = crdServe(t, a, "PUT", "/api/v1/namespaces/default/configmaps/shared",
		`{"metadata":{"name":"shared","resourceVersion":"`+createdRV+`"},"data":{"k":"a"}}`)
	if rec.Code != http.StatusConflict {
		t.Fatalf("stale update through a: %d %s, want 409", rec.Code, rec.Body)
	}
	// A list through a at b's update's resourceVersion is consistent.
	rec = crdServe(t, a, "GET", "/api/v1/namespaces/default/configmaps?resourceVersion="+updatedRV+"&resourceVersionMatch=Exact", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"k":"b"`) {
		t.Fatalf("exact list through a: %d %s", rec.Code, rec.Body)
	}
	if !events.Scan() || !strings.Contains(events.Text(), `"MODIFIED"`) || !strings.Contains(events.Text(), updatedRV) {
		t.Fatalf("b's watch after b's update: %s %v", events.Text(), events.Err())
	}
}

// TestEtcdLayout checks what a server writes to etcd: kube-apiserver's
// keys, protobuf in the Kubernetes envelope for built-in kinds, JSON for
// custom resources, no resourceVersion in the stored object, and a mod
// revision that is the object's resourceVersion.
func TestEtcdLayout(t *testing.T) {
	m := startEtcd(t)
	srv := newEtcdServer(t, m)
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD},
		{"POST", "/apis/test.kapi.dev/v1/namespaces/default/gadgets", `{"apiVersion":"test.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"replicas":3}}`},
		{"POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"cm"},"data":{"k":"v"}}`},
	} {
		if rec := crdServe(t, srv, w.method, w.path, w.body); rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", w.method, w.path, rec.Code, rec.Body)
		}
	}
	rec := crdServe(t, srv, "GET", "/api/v1/namespaces/default/configmaps/cm", "")
	cmRV := decodeMap(t, rec)["metadata"].(map[string]any)["resourceVersion"].(string)

	cli, err := clientv3.New(clientv3.Config{Endpoints: m.Endpoints, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	get := func(key string) ([]byte, int64) {
		t.Helper()
		resp, err := cli.Get(context.Background(), key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd get %s: %v %v", key, resp, err)
		}
		return resp.Kvs[0].Value, resp.Kvs[0].ModRevision
	}
	data, rev := get("/registry/configmaps/default/cm")
	if !bytes.HasPrefix(data, []byte(codec.EnvelopeMagic)) {
		t.Fatalf("configmap in etcd: %q", data)
	}
	obj, err := newStorageCodec(srv.reg).Decode("/configmaps/default/cm", data)
	if err != nil || obj.GetName() != "cm" || obj.GetResourceVersion() != "" {
		t.Fatalf("configmap in etcd decodes to %v (%v), want cm without a resourceVersion", obj, err)
	}
	if strconv.FormatInt(rev, 10) != cmRV {
		t.Fatalf("configmap's mod revision %d, resourceVersion %s", rev, cmRV)
	}
	for _, k := range []string{"/registry/services/specs/default/kubernetes", "/registry/namespaces/kube-system",
		"/registry/apiextensions.k8s.io/customresourcedefinitions/gadgets.test.kapi.dev"} {
		if data, _ := get(k); !bytes.HasPrefix(data, []byte(codec.EnvelopeMagic)) && !strings.HasPrefix(k, "/registry/apiextensions") {
			t.Fatalf("%s: %q", k, data)
		}
	}
	data, _ = get("/registry/test.kapi.dev/gadgets/default/g")
	var u map[string]any
	if err := json.Unmarshal(data, &u); err != nil || u["kind"] != "Gadget" {
		t.Fatalf("custom resource in etcd: %q %v", data, err)
	}
	if _, ok := u["metadata"].(map[string]any)["resourceVersion"]; ok {
		t.Fatalf("custom resource stored with a resourceVersion: %s", data)
	}
}

// TestEtcdElectedCollector runs two replicas on one etcd: one runs the
// garbage collector, elected on the Lease kube-system/kapi-controllers,
// and collects for both; when it stops, the other takes over.
func TestEtcdElectedCollector(t *testing.T) {
	m := startEtcd(t)
	short := func(c *Config) { c.Etcd.ElectionLeaseDuration = time.Second }
	a := newEtcdServer(t, m, short)
	b := newEtcdServer(t, m, short)
	leaders := func() (la, lb int32) { return a.leading.Load(), b.leading.Load() }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				la, lb := leaders()
				t.Fatalf("timed out waiting for %s (a leads %d, b leads %d)", what, la, lb)
			}
			time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
		}
	}
	waitFor("a leader", func() bool { la, lb := leaders(); return la+lb == 1 })
	// Never both, for a few renewals.
	for range 30 {
		if la, lb := leaders(); la+lb > 1 {
			t.Fatalf("both replicas run the collector (a %d, b %d)", la, lb)
		}
		time.Sleep(20 * time.Millisecond) // sampling, not synchronisation
	}
	collects := func(srv *Server, name string) {
		t.Helper()
		rec := crdServe(t, srv, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"`+name+`-owner"}}`)
		if rec.Code != 201 {
			t.Fatalf("owner: %d %s", rec.Code, rec.Body)
		}
		uid := decodeMap(t, rec)["metadata"].(map[string]any)["uid"].(string)
		rec = crdServe(t, srv, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"`+name+`-dep","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"`+name+`-owner","uid":"`+uid+`"}]}}`)
		if rec.Code != 201 {
			t.Fatalf("dependent: %d %s", rec.Code, rec.Body)
		}
		if rec := crdServe(t, srv, "DELETE", "/api/v1/namespaces/default/configmaps/"+name+"-owner", ""); rec.Code != 200 {
			t.Fatalf("delete owner: %d %s", rec.Code, rec.Body)
		}
		waitFor(name+"'s dependent collected", func() bool {
			return crdServe(t, srv, "GET", "/api/v1/namespaces/default/configmaps/"+name+"-dep", "").Code == 404
		})
	}
	leader, other := a, b
	if la, _ := leaders(); la == 0 {
		leader, other = b, a
	}
	collects(other, "first") // written through the replica that does not collect
	leader.Close()
	waitFor("the other replica to lead", func() bool { return other.leading.Load() == 1 })
	collects(other, "second")
}

// TestEtcdWithKubeAPIServer runs kapi on the etcd of a real kube-apiserver
// and checks that each reads what the other wrote, at the same
// resourceVersions, and that optimistic concurrency holds between them. It
// needs a cluster of its own, never the shared one (kapi writes into its
// etcd): KAPI_ETCD_FIDELITY names the root of a realk8s kit started for it,
// e.g.
//
//	REALK8S_ROOT=/tmp/kapi-etcd-fidelity API_PORT=17643 ETCD_PORT=24990 \
//	  ETCD_PEER_PORT=24995 KCM_PORT=17457 ../shared/realk8s/realk8s.sh start --no-controllers
//	KAPI_ETCD_FIDELITY=/tmp/kapi-etcd-fidelity go test ./apiserver -run TestEtcdWithKubeAPIServer
func TestEtcdWithKubeAPIServer(t *testing.T) {
	root := os.Getenv("KAPI_ETCD_FIDELITY")
	if root == "" {
		t.Skip("needs a kube-apiserver and etcd of its own: set KAPI_ETCD_FIDELITY to the root of a realk8s kit started for it (see the test's comment)")
	}
	ports := map[string]string{}
	data, err := os.ReadFile(filepath.Join(root, "ports.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Fields(string(data)) {
		k, v, _ := strings.Cut(l, "=")
		ports[k] = v
	}
	token, err := os.ReadFile(filepath.Join(root, "pki", "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(root, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	kubeClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer kubeClient.CloseIdleConnections()
	kube := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, "https://127.0.0.1:"+ports["API_PORT"]+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := kubeClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	// kapi on the same etcd, without the controllers that would act on the
	// cluster's objects.
	srv, err := New(Config{
		Etcd:                    EtcdConfig{Servers: []string{"http://127.0.0.1:" + ports["ETCD_PORT"]}, CompactInterval: -1},
		SkipSystemNamespaces:    true,
		DisableGarbageCollector: true, DisableNamespaceController: true,
		DisableServiceAccountController: true, DisableRootCAPublisher: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	kapi := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		rec := crdServe(t, srv, method, path, body)
		var m map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, m
	}
	meta := func(m map[string]any) map[string]any { mm, _ := m["metadata"].(map[string]any); return mm }
	ns := fmt.Sprintf("kapi-etcd-%d", time.Now().UnixNano())
	if code, m := kube("POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`); code != 201 {
		t.Fatalf("namespace through kube-apiserver: %d %v", code, m)
	}
	defer kube("DELETE", "/api/v1/namespaces/"+ns, "")

	// kapi reads the namespace kube-apiserver wrote, and the kubernetes Service.
	for _, p := range []string{"/api/v1/namespaces/" + ns, "/api/v1/namespaces/default/services/kubernetes"} {
		kc, km := kube("GET", p, "")
		pc, pm := kapi("GET", p, "")
		if kc != 200 || pc != 200 || meta(km)["resourceVersion"] != meta(pm)["resourceVersion"] || meta(km)["uid"] != meta(pm)["uid"] {
			t.Fatalf("GET %s: kube-apiserver %d %v, kapi %d %v", p, kc, meta(km), pc, meta(pm))
		}
	}

	// kube-apiserver reads what kapi wrote: a ConfigMap and a Deployment
	// (protobuf), at the same resourceVersion.
	writes := []struct{ path, body string }{
		{"/api/v1/namespaces/" + ns + "/configmaps", `{"metadata":{"name":"from-kapi","labels":{"a":"b"}},"data":{"k":"v"}}`},
		{"/apis/apps/v1/namespaces/" + ns + "/deployments", `{"metadata":{"name":"from-kapi"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`},
	}
	for _, w := range writes {
		code, pm := kapi("POST", w.path, w.body)
		if code != 201 {
			t.Fatalf("POST %s through kapi: %d %v", w.path, code, pm)
		}
		code, km := kube("GET", w.path+"/from-kapi", "")
		if code != 200 || meta(km)["resourceVersion"] != meta(pm)["resourceVersion"] || meta(km)["uid"] != meta(pm)["uid"] {
			t.Fatalf("kube-apiserver reads %s: %d %v, kapi wrote %v", w.path, code, meta(km), meta(pm))
		}
		if strings.Contains(w.path, "configmaps") && fmt.Sprint(km["data"]) != "map[k:v]" {
			t.Fatalf("kube-apiserver reads the ConfigMap's data as %v", km["data"])
		}
	}

	// A custom resource (JSON in etcd) kapi writes, of a CRD kube-apiserver
	// created: kapi serves the CRD it finds in etcd, kube-apiserver reads
	// the object.
	group := ns + ".i18.kapi.dev"
	crd := strings.ReplaceAll(gadgetCRD, "test.kapi.dev", group)
	if code, m := kube("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); code != 201 {
		t.Fatalf("CRD through kube-apiserver: %d %v", code, m)
	}
	defer kube("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets."+group, "")
	crPath := "/apis/" + group + "/v1/namespaces/" + ns + "/gadgets"
	var cr map[string]any
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, m := kapi("POST", crPath, `{"apiVersion":"`+group+`/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"replicas":3}}`)
		if code == 201 {
			cr = m
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("custom resource through kapi: %d %v", code, m)
		}
		time.Sleep(50 * time.Millisecond) // until kapi serves the CRD: polling with a deadline
	}
	for {
		code, km := kube("GET", crPath+"/g", "")
		if code == 200 {
			if meta(km)["resourceVersion"] != meta(cr)["resourceVersion"] || fmt.Sprint(km["spec"]) != fmt.Sprint(cr["spec"]) {
				t.Fatalf("kube-apiserver reads the custom resource as %v, kapi wrote %v", km, cr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver reads the custom resource: %d %v", code, km)
		}
		time.Sleep(50 * time.Millisecond) // until kube-apiserver serves the CRD
	}

	// Optimistic concurrency between them: kube-apiserver updates the
	// ConfigMap; kapi's update from the older version is a conflict.
	_, pm := kapi("GET", "/api/v1/namespaces/"+ns+"/configmaps/from-kapi", "")
	old := meta(pm)["resourceVersion"].(string)
	if code, km := kube("PUT", "/api/v1/namespaces/"+ns+"/configmaps/from-kapi",
		`{"metadata":{"name":"from-kapi","resourceVersion":"`+old+`"},"data":{"k":"kube"}}`); code != 200 {
		t.Fatalf("update through kube-apiserver: %d %v", code, km)
	}
	if code, m := kapi("PUT", "/api/v1/namespaces/"+ns+"/configmaps/from-kapi",
		`{"metadata":{"name":"from-kapi","resourceVersion":"`+old+`"},"data":{"k":"kapi"}}`); code != http.StatusConflict {
		t.Fatalf("stale update through kapi: %d %v, want 409", code, m)
	}
	if _, pm := kapi("GET", "/api/v1/namespaces/"+ns+"/configmaps/from-kapi", ""); fmt.Sprint(pm["data"]) != "map[k:kube]" {
		t.Fatalf("kapi reads %v after kube-apiserver's update", pm["data"])
	}
}

// TestEtcdNamespaceCleanupElected: on etcd the replica that runs the
// garbage collector cleans up every namespace being deleted, also one that
// another replica left Terminating (as a replica that stopped half-way
// leaves it) and one deleted through the replica that does not lead.
func TestEtcdNamespaceCleanupElected(t *testing.T) {
	m := startEtcd(t)
	short := func(c *Config) { c.Etcd.ElectionLeaseDuration = time.Second }
	a := newEtcdServer(t, m, short)
	b := newEtcdServer(t, m, short)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
		}
	}
	waitFor("a leader", func() bool { return a.leading.Load()+b.leading.Load() == 1 })
	other := b
	if b.leading.Load() == 1 {
		other = a
	}
	for _, ns := range []string{"left", "deleted"} {
		if rec := crdServe(t, other, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`); rec.Code != 201 {
			t.Fatalf("namespace %s: %d %s", ns, rec.Code, rec.Body)
		}
		if rec := crdServe(t, other, "POST", "/api/v1/namespaces/"+ns+"/configmaps", `{"metadata":{"name":"content"}}`); rec.Code != 201 {
			t.Fatalf("configmap in %s: %d %s", ns, rec.Code, rec.Body)
		}
	}
	// What a replica that stopped right after marking the namespace leaves.
	key := keyOf("", "namespaces", "", "left")
	if _, err := other.base.GuaranteedUpdate(context.Background(), key, false, nil, func(cur storage.Object) (storage.Object, error) {
		n := cur.(*corev1.Namespace).DeepCopy()
		now := metav1.Now()
		n.DeletionTimestamp = &now
		n.Status.Phase = corev1.NamespaceTerminating
		return n, nil
	}); err != nil {
		t.Fatal(err)
	}
	if rec := crdServe(t, other, "DELETE", "/api/v1/namespaces/deleted", ""); rec.Code != 200 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	for _, ns := range []string{"left", "deleted"} {
		waitFor(ns+" cleaned up", func() bool {
			return crdServe(t, other, "GET", "/api/v1/namespaces/"+ns, "").Code == 404
		})
	}
	if other.leading.Load() != 0 {
		t.Fatal("the leader changed during the test")
	}
}
