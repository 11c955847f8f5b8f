// Command quickstart is kapi's main job in one program: it starts the embedded
// reference API server (or uses a real cluster given -kubeconfig), creates a
// namespace and a few ConfigMaps with the typed client, runs a shared informer
// whose handler prints each change as it arrives, makes live changes, queries
// the informer's lister by label, and exits by itself (or on Ctrl-C).
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -kubeconfig ~/.kube/config
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/selector"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "use the cluster of this kubeconfig instead of the embedded reference server")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

const namespace = "kapi-quickstart"

func run(ctx context.Context, kubeconfig string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	cfg, stopServer, err := config(kubeconfig, out)
	if err != nil {
		return err
	}
	defer stopServer()
	c, err := client.New(cfg)
	if err != nil {
		return err
	}

	// A namespace and three ConfigMaps, with the typed client.
	nss := client.For[corev1.Namespace](c)
	if _, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !client.IsAlreadyExists(err) {
		return err
	}
	defer func() {
		// Clean up on a real cluster; the embedded server goes away anyway.
		_ = nss.Delete(context.Background(), namespace, metav1.DeleteOptions{})
	}()
	cms := client.For[corev1.ConfigMap](c).Namespace(namespace)
	for _, name := range []string{"frontend", "backend", "cache"} {
		tier := map[string]string{"frontend": "web", "backend": "api", "cache": "api"}[name]
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "shop", "tier": tier}},
			Data:       map[string]string{"replicas": "1"},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s: %w", name, err)
		}
	}
	fmt.Fprintln(out, "created 3 ConfigMaps")

	// A shared informer: its cache follows the server; the handler prints
	// every change as it arrives.
	factory := informer.NewFactory(c, informer.FactoryConfig{Namespace: namespace})
	informerCtx, stopInformers := context.WithCancel(ctx)
	defer func() {
		stopInformers()    // informers run until their context ends…
		factory.Shutdown() // …and Shutdown waits for them
	}()
	inf := informer.For[corev1.ConfigMap](factory)
	events := make(chan string, 16)
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, initial bool) {
			events <- fmt.Sprintf("ADDED    %s (initial list: %v)", cm.Name, initial)
		},
		UpdateFunc: func(old, cm *corev1.ConfigMap) {
			events <- fmt.Sprintf("MODIFIED %s replicas %s -> %s", cm.Name, old.Data["replicas"], cm.Data["replicas"])
		},
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) {
			events <- fmt.Sprintf("DELETED  %s", cm.Name)
		},
	}); err != nil {
		return err
	}
	factory.Start(informerCtx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		return err
	}
	if err := printEvents(ctx, out, events, 3, true); err != nil {
		return err
	}

	// Live changes, seen by the informer as they happen.
	cm, err := cms.Get(ctx, "backend", metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Data["replicas"] = "3"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"app": "shop", "tier": "api"}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := cms.Delete(ctx, "cache", metav1.DeleteOptions{}); err != nil {
		return err
	}
	if err := printEvents(ctx, out, events, 3, false); err != nil {
		return err
	}

	// The lister answers from the informer's cache, without a request.
	api, err := inf.Lister().Namespace(namespace).List(selector.MustParseLabels("tier=api"))
	if err != nil {
		return err
	}
	names := make([]string, len(api))
	for i, cm := range api {
		names[i] = cm.Name
	}
	fmt.Fprintf(out, "lister: tier=api -> %s\n", strings.Join(sortedStrings(names), ", "))
	return nil
}

// printEvents prints the next n events from the handler, in the order they
// came, or sorted (the initial list's order is the cache's, not meaningful).
func printEvents(ctx context.Context, out io.Writer, events <-chan string, n int, sorted bool) error {
	var got []string
	for range n {
		select {
		case e := <-events:
			got = append(got, e)
		case <-ctx.Done():
			return fmt.Errorf("waiting for informer events: %w", ctx.Err())
		}
	}
	if sorted {
		got = sortedStrings(got)
	}
	for _, e := range got {
		fmt.Fprintln(out, "informer:", e)
	}
	return nil
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// config returns the client configuration: the kubeconfig's cluster, or an
// embedded reference server on a loopback port.
func config(kubeconfig string, out io.Writer) (*client.Config, func(), error) {
	if kubeconfig != "" {
		cfg, err := client.Load(client.LoadOptions{Kubeconfig: kubeconfig})
		return cfg, func() {}, err
	}
	// Without the controller that publishes kube-root-ca.crt into every
	// namespace, so that the demo's namespace holds only what it creates.
	srv, err := apiserver.New(apiserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DisableRootCAPublisher: true})
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	fmt.Fprintf(out, "embedded reference server on http://%s\n", ln.Addr())
	return &client.Config{Host: "http://" + ln.Addr().String()}, func() {
		srv.Close() // ends watches, so Close below does not wait for them
		_ = hs.Close()
		<-done
	}, nil
}
