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
// Two replicas run. The first must win the Lease; then a labelled
// ConfigMap is created, changed and deleted, and its Secret must follow,
// the finalizer delete it, events tell it, and the HTTP server answer
// /healthz, /readyz and /metrics, while the second replica, ready too,
// reconciles nothing. When the first stops it releases the Lease, and the
// second takes over and mirrors the next ConfigMap; it releases the Lease
// in turn.
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

	test := fmt.Sprintf("test-%d", time.Now().UnixNano())
	first := startReplica(ctx, t, kubeconfig, ns, test+"-a")
	defer first.stop(t)
	waitElected(ctx, t, first)
	second := startReplica(ctx, t, kubeconfig, ns, test+"-b")
	defer second.stop(t)

	mirrorOne(ctx, t, c, ns, test+"-1")
	for _, r := range []*replica{first, second} {
		for _, want := range []string{"/healthz ok", "/readyz ok", "/metrics " + reconciled} {
			path, want, _ := strings.Cut(want, " ")
			body, code, err := get(ctx, "http://"+r.m.Addr()+path)
			if err != nil || code != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("%s: GET %s: %d %.200q %v, want 200 with %q", r.identity, path, code, body, err, want)
			}
		}
	}
	if n := served(ctx, t, first); n == 0 {
		t.Errorf("the leader reconciled nothing")
	}
	if n := served(ctx, t, second); n != 0 {
		t.Errorf("the standby reconciled %v times", n)
	}

	// The first releases the Lease: the second takes over at its next
	// attempt (RetryPeriod with jitter, under 5s).
	first.stop(t)
	if h := holder(ctx, t, c, ns); h != "" {
		t.Errorf("Lease held by %q after the leader stopped, want it released", h)
	}
	waitElected(ctx, t, second)
	mirrorOne(ctx, t, c, ns, test+"-2")
	if n := served(ctx, t, second); n == 0 {
		t.Errorf("the new leader reconciled nothing")
	}
	second.stop(t)
	if h := holder(ctx, t, c, ns); h != "" {
		t.Errorf("Lease held by %q after the last replica stopped, want it released", h)
	}
}

// reconciled is the metric of successful reconciles.
const reconciled = `controller_runtime_reconcile_total{controller="configmap-mirror",result="success"}`

// replica is a run of the example.
type replica struct {
	identity string
	m        *Mirror
	cancel   context.CancelFunc
	done     chan error
	stopped  bool
}

// startReplica calls run in a goroutine and returns once it has made its
// Mirror.
func startReplica(ctx context.Context, t *testing.T, kubeconfig, ns, identity string) *replica {
	t.Helper()
	ready := make(chan *Mirror, 1)
	runCtx, cancel := context.WithCancel(ctx)
	r := &replica{identity: identity, cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- run(runCtx, kubeconfig, Config{Namespace: ns, Identity: identity, Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			func(m *Mirror, _ *client.Client) { ready <- m })
	}()
	select {
	case r.m = <-ready:
	case err := <-r.done:
		cancel()
		r.stopped = true
		t.Fatalf("%s: run returned before starting: %v", identity, err)
	}
	return r
}

// stop cancels the replica's run and checks it returned nil (once).
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("%s: run: %v", r.identity, err)
	}
}

func waitElected(ctx context.Context, t *testing.T, r *replica) {
	t.Helper()
	select {
	case <-r.m.mgr.Elected():
	case <-ctx.Done():
		t.Fatalf("replica %s did not win the Lease %s (is another replica running there?)", r.identity, Name)
	}
}

// mirrorOne has the leader mirror a ConfigMap name through its life, and
// checks what it printed and the events it recorded.
func mirrorOne(ctx context.Context, t *testing.T, c *client.Client, ns, name string) {
	t.Helper()
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
}

// served reads the replica's successful reconciles from its /metrics.
func served(ctx context.Context, t *testing.T, r *replica) float64 {
	t.Helper()
	body, _, err := get(ctx, "http://"+r.m.Addr()+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), reconciled+" "); ok {
			var n float64
			if _, err := fmt.Sscan(v, &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s: no %s in /metrics", r.identity, reconciled)
	return 0
}

// holder returns the holder of the Lease ("" when released).
func holder(ctx context.Context, t *testing.T, c *client.Client, ns string) string {
	t.Helper()
	lease, err := client.For[coordinationv1.Lease](c).Namespace(ns).Get(ctx, Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
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
