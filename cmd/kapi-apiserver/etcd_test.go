package main

import (
	"strings"
	"testing"

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
