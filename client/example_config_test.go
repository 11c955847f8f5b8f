package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/kapi-dev/kapi/client"
)

// Load finds the configuration where kubectl would: --kubeconfig,
// $KUBECONFIG, ~/.kube/config, then the pod's service account.
func ExampleLoad() {
	cfg, err := client.Load(client.LoadOptions{
		Context:   "", // the kubeconfig's current-context
		Namespace: "", // the context's (or pod's) namespace
	})
	if err != nil {
		if errors.Is(err, client.ErrNotInCluster) {
			fmt.Println("no kubeconfig and not in a pod:", err)
			return
		}
		fmt.Println(err)
		return
	}
	fmt.Println("talking to", cfg.Host, "in namespace", cfg.Namespace)
}

// Several kubeconfig files merge as in KUBECONFIG=a:b: the first file to
// name a cluster, user or context wins, and so does its current-context.
func ExampleLoadKubeconfig() {
	kc, err := client.LoadKubeconfig(
		filepath.Join("testdata", "kubeconfig", "merge-a.yaml"),
		filepath.Join("testdata", "kubeconfig", "merge-b.yaml"),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("current context:", kc.CurrentContext)
	for _, name := range []string{"", "b-ctx"} {
		cfg, err := kc.Config(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("context %q: %s namespace=%s\n", name, cfg.Host, cfg.Namespace)
	}
	// Output:
	// current context: a-ctx
	// context "": https://a.example:6443 namespace=a-ns
	// context "b-ctx": https://only-b.example:6443 namespace=default
}

// Errors name the file, the context and what is wrong.
func ExampleKubeconfig_Config() {
	kc, err := client.LoadKubeconfig(filepath.Join("testdata", "kubeconfig", "inline.yaml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := kc.Config("inline")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Host, cfg.TLS.ServerName, cfg.ProxyURL, string(cfg.TLS.CAData))

	_, err = kc.Config("staging")
	fmt.Println(err)
	// Output:
	// https://inline.example:6443 api.inline.example socks5://proxy.example:1080 inline CA
	// kubeconfig testdata/kubeconfig/inline.yaml: context "staging" not found
}

// In a pod, the service account's token, CA and namespace configure the
// client; elsewhere ErrNotInCluster says so.
func ExampleInClusterConfig() {
	cfg, err := client.InClusterConfig()
	if errors.Is(err, client.ErrNotInCluster) {
		fmt.Println("not in a pod")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Host, cfg.Namespace)
}

// TLSClientConfig turns the TLS fields of a Config into a *tls.Config.
func ExampleConfig_TLSClientConfig() {
	cfg := &client.Config{
		Host: "https://10.0.0.1:6443",
		TLS:  client.TLSConfig{ServerName: "kubernetes.default.svc", Insecure: true},
	}
	tc, err := cfg.TLSClientConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tc.ServerName, tc.InsecureSkipVerify)

	// A CA and Insecure contradict each other.
	cfg.TLS.CAData = []byte("-----BEGIN CERTIFICATE-----")
	_, err = cfg.TLSClientConfig()
	fmt.Println(err)
	// Output:
	// kubernetes.default.svc true
	// TLS.Insecure is set together with a CA (TLS.CAFile or TLS.CAData): use one or the other
}

// AuthRoundTripper adds a Config's credentials to requests.
func ExampleConfig_AuthRoundTripper() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("Authorization"))
	}))
	defer srv.Close()

	cfg := &client.Config{Host: srv.URL, BearerToken: "my-token"}
	rt, err := cfg.AuthRoundTripper(http.DefaultTransport)
	if err != nil {
		fmt.Println(err)
		return
	}
	hc := &http.Client{Transport: rt}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(string(b))
	// Output:
	// Bearer my-token
}

// An exec plugin (here a made-up "example-auth") supplies a token or a client
// certificate; the authenticator caches it until it expires.
func ExampleNewExecAuthenticator() {
	a, err := client.NewExecAuthenticator(&client.ExecConfig{
		Command:         "example-auth",
		Args:            []string{"token", "--cluster", "prod"},
		APIVersion:      "client.authentication.k8s.io/v1",
		InteractiveMode: "Never",
		InstallHint:     "install example-auth from https://example.com/auth",
	}, &client.ExecCluster{Server: "https://prod.example.com"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Use it on requests (Authorization header, one refresh on 401) …
	_ = a.WrapTransport(http.DefaultTransport)
	// … or ask for the credential directly.
	tok, err := a.Token(context.Background())
	if err != nil {
		fmt.Println(err) // names the command and shows the install hint
		return
	}
	_ = tok
}

// A TokenFileSource follows a token file that is rewritten (as the kubelet
// rotates service-account tokens).
func ExampleNewTokenFileSource() {
	dir, err := os.MkdirTemp("", "token-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "token")

	src := client.NewTokenFileSource(path, "")
	_ = os.WriteFile(path, []byte("first\n"), 0o600)
	tok, _ := src.Token(context.Background())
	fmt.Println(tok)
	_ = os.WriteFile(path, []byte("second, longer\n"), 0o600)
	tok, _ = src.Token(context.Background())
	fmt.Println(tok)
	// Output:
	// first
	// second, longer
}
