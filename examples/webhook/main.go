// Command webhook shows admission on a custom resource, end to end: a CRD in
// two versions whose schemas have CEL rules (x-kubernetes-validations), a
// ValidatingAdmissionPolicy, and a mutating, a validating and a conversion
// webhook written with kapi's webhook package, served over HTTPS with a
// self-signed certificate the configurations trust (caBundle). It starts the
// embedded reference server (or uses a cluster given -kubeconfig, which must
// reach 127.0.0.1 of this machine, as a local kube-apiserver does), installs
// them, creates, updates and deletes widgets that each check refuses, prints
// what the server answered, and removes what it installed.
//
//	go run ./examples/webhook
//	go run ./examples/webhook -kubeconfig ~/.kube/config
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
	"path/filepath"
	"syscall"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/webhook"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "use the cluster of this kubeconfig instead of the embedded reference server")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, out io.Writer) error {
	cfg, stopServer, err := config(kubeconfig, out)
	if err != nil {
		return err
	}
	defer stopServer()
	c, err := client.New(cfg)
	if err != nil {
		return err
	}
	return demo(ctx, c, out)
}

// demo serves the webhooks, installs the CRD, the policy and the webhook
// configurations, and shows each check at work.
func demo(ctx context.Context, c *client.Client, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	baseURL, caBundle, stopWebhooks, err := serveWebhooks(ctx)
	if err != nil {
		return err
	}
	defer stopWebhooks()
	uninstall, err := install(ctx, c, baseURL, caBundle)
	if err != nil {
		return err
	}
	defer uninstall()
	fmt.Fprintln(out, "installed the Widget CRD (two versions, CEL rules), a ValidatingAdmissionPolicy, two admission webhooks and a conversion webhook")

	widgets := client.For[Widget](c).Namespace(namespace)
	step := func(what string, do func() (*Widget, error)) {
		w, err := do()
		switch {
		case err != nil:
			fmt.Fprintf(out, "%s: %s\n", what, describe(err))
		case w == nil:
			fmt.Fprintf(out, "%s: done\n", what)
		default:
			fmt.Fprintf(out, "%s: ok, spec %+v\n", what, w.Spec)
		}
	}
	create := func(w *Widget) func() (*Widget, error) {
		return func() (*Widget, error) { return widgets.Create(ctx, w, metav1.CreateOptions{}) }
	}
	patch := func(name, p string) func() (*Widget, error) {
		return func() (*Widget, error) {
			return widgets.Patch(ctx, name, client.MergePatchType, []byte(p), metav1.PatchOptions{})
		}
	}
	remove := func(name string) func() (*Widget, error) {
		return func() (*Widget, error) { return nil, widgets.Delete(ctx, name, metav1.DeleteOptions{}) }
	}

	step("create a (2 replicas; the mutating webhook sets size and maxReplicas)", create(newWidget("a", 2, "")))
	noTeam := newWidget("b", 1, "")
	noTeam.Labels = nil
	step("create b without a team label (the policy)", create(noTeam))
	step("create c with 5 replicas, more than maxReplicas (a CEL rule)", create(newWidget("c", 5, "")))
	step("create d small with 3 replicas (the validating webhook)", create(&Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"team": "blue"}},
		Spec:       WidgetSpec{Replicas: 3, MaxReplicas: 5, Size: "small"}}))
	step("change a's size to large (a CEL transition rule)", patch("a", `{"spec":{"size":"large"}}`))
	step("label a protected", patch("a", `{"metadata":{"labels":{"protected":"true"}}}`))
	step("delete a (the validating webhook sees the old object)", remove("a"))
	step("unlabel a", patch("a", `{"metadata":{"labels":{"protected":null}}}`))

	// v1alpha1 is served through the conversion webhook: objects written
	// in it are stored as v1, and v1 objects are read in it.
	old := client.For[WidgetV1alpha1](c).Namespace(namespace)
	oldWidget := func(name string, count, maxCount int32) *WidgetV1alpha1 {
		w := &WidgetV1alpha1{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "blue"}}}
		w.Spec.Count, w.Spec.MaxCount, w.Spec.Size = count, maxCount, "large"
		return w
	}
	for _, tc := range []struct {
		what string
		w    *WidgetV1alpha1
	}{
		{"create e as v1alpha1 (count 1, maxCount 2, size large)", oldWidget("e", 1, 2)},
		{"create f as v1alpha1 with count 4, more than maxCount 3 (the v1alpha1 CEL rule)", oldWidget("f", 4, 3)},
	} {
		if _, err := old.Create(ctx, tc.w, metav1.CreateOptions{}); err != nil {
			fmt.Fprintf(out, "%s: %s\n", tc.what, describe(err))
		} else {
			fmt.Fprintf(out, "%s: ok\n", tc.what)
		}
	}
	step("get e as v1", func() (*Widget, error) { return widgets.Get(ctx, "e", metav1.GetOptions{}) })
	if a, err := old.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		fmt.Fprintf(out, "get a as v1alpha1: %s\n", describe(err))
	} else {
		fmt.Fprintf(out, "get a as v1alpha1: ok, spec %+v\n", a.Spec)
	}

	step("delete a", remove("a"))
	return nil
}

// serveWebhooks serves the two webhooks on a loopback port with a new
// self-signed certificate, and returns their base URL and the certificate
// for the configurations' caBundle.
func serveWebhooks(ctx context.Context) (baseURL string, caBundle []byte, stop func(), err error) {
	dir, err := os.MkdirTemp("", "kapi-webhook-example")
	if err != nil {
		return "", nil, nil, err
	}
	cert, key, err := webhook.SelfSigned(time.Hour, "127.0.0.1")
	if err == nil {
		err = errors.Join(os.WriteFile(filepath.Join(dir, "tls.crt"), cert, 0o600), os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600))
	}
	var srv *webhook.Server
	var ln net.Listener
	var conversion *webhook.Conversion
	if err == nil {
		conversion, err = webhook.NewConversion[Widget](webhook.Spoke(up, down))
	}
	if err == nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err == nil {
		srv, err = webhook.NewServer(webhook.ServerConfig{
			Listener: ln,
			CertDir:  dir,
			Handlers: map[string]http.Handler{
				"/default-widget":  webhook.FromDefaulter[Widget](widgetDefaulter{}),
				"/validate-widget": webhook.FromValidator[Widget](widgetValidator{}),
				"/convert":         conversion,
			},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	}
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		os.RemoveAll(dir)
		return "", nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	return "https://" + ln.Addr().String(), cert, func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "webhook server:", err)
		}
		os.RemoveAll(dir)
	}, nil
}

// config returns the client configuration: the kubeconfig's cluster, or an
// embedded reference server on a loopback port.
func config(kubeconfig string, out io.Writer) (*client.Config, func(), error) {
	if kubeconfig != "" {
		cfg, err := client.Load(client.LoadOptions{Kubeconfig: kubeconfig})
		return cfg, func() {}, err
	}
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
		srv.Close()
		_ = hs.Close()
		<-done
	}, nil
}
