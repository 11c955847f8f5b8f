// Command controller is a small controller built on kapi's toolkit: it
// mirrors every ConfigMap labelled kapi.dev/mirror=true into a Secret of the
// same name that the ConfigMap controls, deletes that Secret through a
// finalizer when the ConfigMap is deleted, and records events. A
// manager.Manager runs it all: the informers, the controller (only while
// this replica holds the Lease "configmap-mirror"), the event recorder, and,
// with -addr, an HTTP server of Prometheus metrics (/metrics) and probes
// (/healthz, /readyz).
//
// It runs against an embedded reference server by default (and makes a few
// changes to show it working), or against a cluster given -kubeconfig,
// where it needs to list, watch and patch ConfigMaps, to manage Secrets and
// Leases, and to create Events in -namespace, and runs until interrupted:
//
//	go run ./examples/controller
//	go run ./examples/controller -kubeconfig ~/.kube/config -namespace team-a -addr :8080 -identity a
//	kubectl -n team-a create configmap settings --from-literal=mode=fast
//	kubectl -n team-a label configmap settings kapi.dev/mirror=true
//	kubectl -n team-a get secret settings; kubectl -n team-a get events
//	curl localhost:8080/metrics
//
// Run two replicas (distinct -addr and -identity) and only the one holding
// the Lease reconciles; stop it and the other takes over, at once after an
// interrupt (which releases the Lease), after the lease duration (15s) if
// it is killed. A lost lease ends the process with an error.
//
// TestCluster runs two replicas of this against a cluster when
// KAPI_EXAMPLE_KUBECONFIG names a kubeconfig (in KAPI_EXAMPLE_NAMESPACE,
// default kapi-example-test), and checks that only the leader reconciles
// and that the other takes over when it stops:
//
//	KAPI_EXAMPLE_KUBECONFIG=~/.kube/config go test -run TestCluster -v ./examples/controller
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "run against this cluster instead of an embedded reference server (and do not stop by itself)")
	namespace := flag.String("namespace", "default", "namespace to watch (with -kubeconfig)")
	addr := flag.String("addr", "", "serve /metrics, /healthz and /readyz on this address (default: not served)")
	identity := flag.String("identity", "", "this replica's name in the Lease (default: host name and process id)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *kubeconfig == "" {
		if err := demo(ctx, os.Stdout, *addr, log); err != nil {
			fmt.Fprintln(os.Stderr, "controller:", err)
			os.Exit(1)
		}
		return
	}
	if *identity == "" {
		host, _ := os.Hostname()
		*identity = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if err := run(ctx, *kubeconfig, Config{Namespace: *namespace, Identity: *identity, Addr: *addr, Logger: log}, nil); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

// run runs the controller against the cluster of kubeconfig until ctx is
// done (nil) or it fails, as a lost lease does. cfg's Metrics and
// MetricsHandler are set here, on a registry of run's own. started, if
// not nil, is handed the Mirror and its client before it runs (tests use
// it).
func run(ctx context.Context, kubeconfig string, cfg Config, started func(*Mirror, *client.Client)) error {
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		return err
	}
	cfg.Metrics, cfg.MetricsHandler = m, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	ccfg, err := client.Load(client.LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	ccfg.Metrics = m.Client()
	var idle idleCloser
	ccfg.WrapTransport = idle.wrap
	defer idle.close()
	c, err := client.New(ccfg)
	if err != nil {
		return err
	}
	mirror, err := New(c, cfg)
	if err != nil {
		return err
	}
	if started != nil {
		started(mirror, c)
	}
	return mirror.Run(ctx)
}

// demo runs the controller against an embedded server, creates, changes and
// deletes a ConfigMap, and prints what the controller made of it.
func demo(ctx context.Context, out io.Writer, addr string, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	srv, err := apiserver.New(apiserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	ts := httptest.NewServer(srv)
	defer func() {
		srv.Close()
		ts.Close()
	}()
	reg := prometheus.NewRegistry()
	m, err := metrics.Register(reg)
	if err != nil {
		return err
	}
	c, err := client.New(&client.Config{Host: ts.URL, Metrics: m.Client()})
	if err != nil {
		return err
	}
	mirror, err := New(c, Config{Namespace: "default", Metrics: m, MetricsHandler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), Addr: addr, Logger: log})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mirror.Run(runCtx) }()
	if err := showMirror(ctx, out, c, "default", "settings"); err != nil {
		stop()
		return errors.Join(err, <-done)
	}
	stop()
	return <-done
}

// showMirror creates, changes and deletes the ConfigMap namespace/name,
// and prints the Secret the controller keeps for it.
func showMirror(ctx context.Context, out io.Writer, c *client.Client, namespace, name string) error {
	cms := client.For[corev1.ConfigMap](c).Namespace(namespace)
	secrets := client.For[corev1.Secret](c).Namespace(namespace)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{MirrorLabel: "true"}},
		Data:       map[string]string{"mode": "fast"},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	s, err := waitForSecret(ctx, secrets, name, "", func(s *corev1.Secret) bool { return string(s.Data["mode"]) == "fast" })
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "secret %s mirrors configmap %s: mode=%s, owner=%s/%s\n", s.Name, cm.Name, s.Data["mode"], s.OwnerReferences[0].Kind, s.OwnerReferences[0].Name)

	// A merge patch changes the one field, whatever else the controller
	// (which adds its finalizer to the ConfigMap) wrote meanwhile.
	if _, err := cms.Patch(ctx, name, client.MergePatchType, []byte(`{"data":{"mode":"safe"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if s, err = waitForSecret(ctx, secrets, name, s.ResourceVersion, func(s *corev1.Secret) bool { return string(s.Data["mode"]) == "safe" }); err != nil {
		return err
	}
	fmt.Fprintf(out, "after the update: mode=%s\n", s.Data["mode"])

	if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	if _, err := waitForSecret(ctx, secrets, name, s.ResourceVersion, nil); err != nil {
		return err
	}
	fmt.Fprintln(out, "after the delete: the finalizer deleted the secret")
	return nil
}

// waitForSecret watches the Secret name from resourceVersion until done
// holds for it, or, with a nil done, until it is deleted.
func waitForSecret(ctx context.Context, secrets client.Resource[corev1.Secret], name, resourceVersion string, done func(*corev1.Secret) bool) (*corev1.Secret, error) {
	w, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: resourceVersion})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	for ev := range w.Events() {
		switch {
		case ev.Err != nil:
			return nil, ev.Err
		case ev.Object == nil:
		case done == nil && ev.Type == client.EventDeleted, done != nil && ev.Type != client.EventDeleted && done(ev.Object):
			return ev.Object, nil
		}
	}
	return nil, fmt.Errorf("watch of secret %s ended early: %w", name, ctx.Err())
}

// idleCloser keeps the transport a client builds (as its WrapTransport) to
// close its idle connections once the client is no longer used.
type idleCloser struct{ rt http.RoundTripper }

func (ic *idleCloser) wrap(rt http.RoundTripper) http.RoundTripper {
	ic.rt = rt
	return rt
}

func (ic *idleCloser) close() {
	if c, ok := ic.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
