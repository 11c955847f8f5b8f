package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// TestCluster runs the example's run against the cluster of the
// kubeconfig in $KAPI_EXAMPLE_KUBECONFIG, in the namespace
// $KAPI_EXAMPLE_NAMESPACE (default kapi-example-test, created if missing;
// no other replica of the example may run there). It is skipped when
// KAPI_EXAMPLE_KUBECONFIG is not set:
//
//	KAPI_EXAMPLE_KUBECONFIG=$HOME/.kube/config go test -run TestCluster -v ./examples/controller
//
// The replica must win the Lease; then a labelled ConfigMap is created,
// changed and deleted, and its Secret must follow, the finalizer delete
// it, events tell it, the HTTP server answer /healthz, /readyz and
// /metrics, and the Lease be released when run stops.
func TestCluster(t *testing.T) {
	kubeconfig := os.Getenv("KAPI_EXAMPLE_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("KAPI_EXAMPLE_KUBECONFIG is not set: not running against a cluster")
	}
	ns := cmp.Or(os.Getenv("KAPI_EXAMPLE_NAMESPACE"), "kapi-example-test")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	ccfg, err := client.Load(client.LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	var idle idleCloser
	ccfg.WrapTransport = idle.wrap
	defer idle.close()
	c, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.For[corev1.Namespace](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !client.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	identity := fmt.Sprintf("test-%d", time.Now().UnixNano())
	type started struct{ m *Mirror }
	ready := make(chan started, 1)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, kubeconfig, Config{Namespace: ns, Identity: identity, Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			func(m *Mirror, _ *client.Client) { ready <- started{m} })
	}()
	stopped := false
	stopRun := func() {
		if !stopped {
			stopped = true
			stop()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
	}
	defer stopRun()
	var mirror *Mirror
	select {
	case s := <-ready:
		mirror = s.m
	case err := <-done:
		stopped = true
		t.Fatalf("run returned before starting: %v", err)
	}
	select {
	case <-mirror.mgr.Elected():
	case <-ctx.Done():
		t.Fatalf("replica %s did not win the Lease %s/%s (is another replica running there?)", identity, ns, Name)
	}

	name := fmt.Sprintf("kapi-example-%d", time.Now().UnixNano())
	var out strings.Builder
	if err := showMirror(ctx, &out, c, ns, name); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("secret %[1]s mirrors configmap %[1]s: mode=fast, owner=ConfigMap/%[1]s\n", name) +
		"after the update: mode=safe\n" +
		"after the delete: the finalizer deleted the secret\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	poll(ctx, t, func() error { return recorded(ctx, c, ns, "Mirrored/"+name, "CleanedUp/"+name) })

	base := "http://" + mirror.Addr()
	for path, want := range map[string]string{
		"/healthz": "ok", "/readyz": "ok",
		"/metrics": `controller_runtime_reconcile_total{controller="configmap-mirror",result="success"}`,
	} {
		body, code, err := get(ctx, base+path)
		if err != nil || code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %.200q %v, want 200 with %q", path, code, body, err, want)
		}
	}

	stopRun()
	lease, err := client.For[coordinationv1.Lease](c).Namespace(ns).Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("Lease still held by %q after run stopped, want it released", *h)
	}
}

// poll calls check until it returns nil, or fails the test with its last
// error once ctx is done.
func poll(ctx context.Context, t *testing.T, check func() error) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%v: %v", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func get(ctx context.Context, url string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, err
}
