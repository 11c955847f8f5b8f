package main

import (
	"context"
	"crypto/x509/pkix"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/etcdtest"
)

// TestEtcdServers runs two kapi-apiservers with --etcd-servers on one etcd
// member: kubectl sees through the second what it created through the
// first, and what the first wrote survives it.
func TestEtcdServers(t *testing.T) {
	m, err := etcdtest.Start(etcdtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	flag := "--etcd-servers=" + strings.Join(m.Endpoints, ",")
	a := startServer(t, flag)
	b := startServer(t, flag)
	a.mustKubectl(t, "", "create", "configmap", "shared", "--from-literal=k=v")
	if out := b.mustKubectl(t, "", "get", "configmap", "shared", "-o", "jsonpath={.data.k}"); out != "v" {
		t.Fatalf("through the second server: %q", out)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	c := startServer(t, flag)
	if out := c.mustKubectl(t, "", "get", "configmap", "shared", "-o", "jsonpath={.data.k}"); out != "v" {
		t.Fatalf("after the first server stopped: %q", out)
	}
}

// TestEtcdServersTLS: with --etcd-cafile, --etcd-certfile and
// --etcd-keyfile the server reaches etcd members that serve TLS and
// require client certificates; without a client certificate it cannot.
func TestEtcdServersTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, b)
		return p
	}
	serverCert, serverKey := ca.issue(t, 2, pkix.Name{CommonName: "etcd"}, true)
	clientCert, clientKey := ca.issue(t, 3, pkix.Name{CommonName: "kapi"}, false)
	caFile := file("ca.crt", ca.pem)
	m, err := etcdtest.Start(etcdtest.Config{TLS: &etcdtest.TLSFiles{
		CertFile: file("etcd.crt", serverCert), KeyFile: file("etcd.key", serverKey), CAFile: caFile}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	servers := "--etcd-servers=" + strings.Join(m.Endpoints, ",")
	if !strings.HasPrefix(m.Endpoints[0], "https://") {
		t.Fatalf("endpoints %v are not https", m.Endpoints)
	}
	s := startServer(t, servers, "--etcd-cafile="+caFile,
		"--etcd-certfile="+file("client.crt", clientCert), "--etcd-keyfile="+file("client.key", clientKey))
	s.mustKubectl(t, "", "create", "configmap", "over-tls", "--from-literal=k=v")
	if out := s.mustKubectl(t, "", "get", "configmap", "over-tls", "-o", "jsonpath={.data.k}"); out != "v" {
		t.Fatalf("read back %q", out)
	}
	// Without the client certificate etcd refuses the connection: the
	// server does not start.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, []string{servers, "--etcd-cafile=" + caFile}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "reaching etcd") {
		t.Fatalf("a server without an etcd client certificate: %v", err)
	}
}
