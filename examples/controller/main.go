// Command controller is a small reconciler built with kapi: it mirrors every
// ConfigMap labelled kapi.dev/mirror=true into a Secret of the same name, owned
// by the ConfigMap, and records the mirrored version on the ConfigMap. It runs
// against an embedded reference server by default (and makes a few changes to
// show it working), or against a cluster given -kubeconfig.
//
//	go run ./examples/controller
//	go run ./examples/controller -kubeconfig ~/.kube/config -namespace team-a
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "run against this cluster instead of an embedded reference server (and do not stop by itself)")
	namespace := flag.String("namespace", "default", "namespace to watch")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var err error
	if *kubeconfig != "" {
		err = runCluster(ctx, *kubeconfig, *namespace, log)
	} else {
		err = demo(ctx, os.Stdout, log)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

// start builds the controller on c, starts its informers and workers, and
// returns a function that stops them all.
func start(ctx context.Context, c *client.Client, namespace string, log *slog.Logger) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	factory := informer.NewFactory(c, FactoryConfig(namespace))
	ctl, err := NewController(c, factory, log)
	if err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		cancel()
		factory.Shutdown()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctl.Run(ctx, 2)
	}()
	return func() {
		cancel()
		<-done
		factory.Shutdown()
	}, nil
}

func runCluster(ctx context.Context, kubeconfig, namespace string, log *slog.Logger) error {
	cfg, err := client.Load(client.LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	stop, err := start(ctx, c, namespace, log)
	if err != nil {
		return err
	}
	defer stop()
	<-ctx.Done()
	return ctx.Err()
}

// demo runs the controller against an embedded server, creates and changes a
// ConfigMap, and prints what the controller made of it.
func demo(ctx context.Context, out io.Writer, log *slog.Logger) error {
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
	c, err := client.New(&client.Config{Host: ts.URL})
	if err != nil {
		return err
	}
	stop, err := start(ctx, c, "default", log)
	if err != nil {
		return err
	}
	defer stop()

	cms := client.For[corev1.ConfigMap](c).Namespace("default")
	secrets := client.For[corev1.Secret](c).Namespace("default")
	cm, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{MirrorLabel: "true"}},
		Data:       map[string]string{"mode": "fast"},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	s, err := waitForSecret(ctx, secrets, "settings", "fast")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "secret %s mirrors configmap %s: mode=%s, owner=%s/%s\n", s.Name, cm.Name, s.Data["mode"], s.OwnerReferences[0].Kind, s.OwnerReferences[0].Name)

	// A merge patch changes the one field, whatever else the controller
	// (which annotates the ConfigMap) wrote meanwhile.
	if _, err := cms.Patch(ctx, "settings", client.MergePatchType, []byte(`{"data":{"mode":"safe"}}`), metav1.PatchOptions{}); err != nil {
		return err
	}
	if s, err = waitForSecret(ctx, secrets, "settings", "safe"); err != nil {
		return err
	}
	fmt.Fprintf(out, "after the update: mode=%s\n", s.Data["mode"])
	return nil
}

// waitForSecret watches until the Secret name holds mode.
func waitForSecret(ctx context.Context, secrets client.Resource[corev1.Secret], name, mode string) (*corev1.Secret, error) {
	w, err := secrets.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	for ev := range w.Events() {
		if ev.Err != nil {
			return nil, ev.Err
		}
		if ev.Object != nil && string(ev.Object.Data["mode"]) == mode {
			return ev.Object, nil
		}
	}
	return nil, fmt.Errorf("watch ended before secret %s had mode %s: %w", name, mode, ctx.Err())
}
