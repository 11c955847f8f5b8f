package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
)

// The reference server over TLS: the CA verifies it, a client certificate
// is presented, and without the CA the handshake fails (and is not retried).
func TestTLS(t *testing.T) {
	ca := newTLSTestCA(t)
	certPEM, keyPEM := ca.issue(t, "server", nil, []net.IP{net.ParseIP("127.0.0.1")})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	api, err := apiserver.New(apiserver.Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	var clientCN string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) > 0 {
			clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		api.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool}
	srv.Config.ErrorLog = discardLog()
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); api.Close() })
	ctx := testContext(t)

	clientCert, clientKey := ca.issue(t, "alice", nil, nil)
	c := newTestClient(t, &Config{Host: srv.URL, TLS: TLSConfig{CAData: ca.pem, CertData: clientCert, KeyData: clientKey},
		ContentType: codec.MediaTypeProtobuf})
	if _, err := For[corev1.Namespace](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	if clientCN != "alice" {
		t.Errorf("client certificate CN %q", clientCN)
	}

	insecure := newTestClient(t, &Config{Host: srv.URL, TLS: TLSConfig{Insecure: true}})
	if _, err := For[corev1.Namespace](insecure).Get(ctx, "test", metav1.GetOptions{}); err != nil {
		t.Errorf("insecure: %v", err)
	}

	untrusted := newTestClient(t, &Config{Host: srv.URL})
	delays := recordDelays(untrusted)
	_, err = For[corev1.Namespace](untrusted).Get(ctx, "test", metav1.GetOptions{})
	var uae x509.UnknownAuthorityError
	if !errors.As(err, &uae) {
		t.Errorf("without the CA: %v", err)
	}
	if len(delays()) != 0 {
		t.Errorf("a certificate error was retried %d times", len(delays()))
	}

	if _, err := New(&Config{Host: srv.URL, TLS: TLSConfig{CAData: []byte("not PEM")}}); err == nil {
		t.Error("bad CA accepted")
	}
}

// Credentials, user agent, path prefix and proxy reach the server.
func TestRequestHeadersAndRouting(t *testing.T) {
	rec := newRecorder(t, nil)
	ctx := testContext(t)
	get := func(cfg *Config) recordedRequest {
		t.Helper()
		n := rec.count()
		c := newTestClient(t, cfg)
		if _, err := c.NewRequest(http.MethodGet).AbsPath("/version").DoRaw(ctx); err != nil {
			t.Fatal(err)
		}
		return rec.all()[n]
	}

	r := get(&Config{Host: rec.srv.URL, BearerToken: "tok"})
	if r.Header.Get("Authorization") != "Bearer tok" {
		t.Errorf("bearer: %q", r.Header.Get("Authorization"))
	}
	if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "kapi/") || !strings.HasSuffix(ua, ")") {
		t.Errorf("default User-Agent %q", ua)
	}

	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := get(&Config{Host: rec.srv.URL, BearerTokenFile: file, BearerToken: "ignored"}); r.Header.Get("Authorization") != "Bearer from-file" {
		t.Errorf("token file: %q", r.Header.Get("Authorization"))
	}

	r = get(&Config{Host: rec.srv.URL, Username: "u", Password: "p", UserAgent: "my-controller/1.0"})
	if u, p, ok := (&http.Request{Header: r.Header}).BasicAuth(); !ok || u != "u" || p != "p" {
		t.Errorf("basic auth: %q", r.Header.Get("Authorization"))
	}
	if ua := r.Header.Get("User-Agent"); ua != "my-controller/1.0" {
		t.Errorf("User-Agent %q", ua)
	}

	if r := get(&Config{Host: rec.srv.URL + "/k8s/clusters/c-1/"}); r.Path != "/k8s/clusters/c-1/version" {
		t.Errorf("path prefix: %s", r.Path)
	}

	// Through a proxy: the request arrives at the proxy for the real host.
	var proxied *http.Request
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied = r.Clone(context.Background())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(proxy.Close)
	c := newTestClient(t, &Config{Host: "http://kapi.invalid:6443", ProxyURL: proxy.URL})
	if _, err := c.NewRequest(http.MethodGet).AbsPath("/version").DoRaw(ctx); err != nil {
		t.Fatalf("via proxy: %v", err)
	}
	if proxied == nil || proxied.Host != "kapi.invalid:6443" || proxied.URL.Path != "/version" {
		t.Errorf("proxied request %+v", proxied)
	}
}

func TestNewErrors(t *testing.T) {
	cases := map[string]*Config{
		"nil":           nil,
		"no host":       {},
		"bad scheme":    {Host: "ftp://x"},
		"query in host": {Host: "https://x/?a=b"},
		"content type":  {Host: "https://x", ContentType: "application/yaml"},
		"proxy scheme":  {Host: "https://x", ProxyURL: "ftp://proxy"},
	}
	for name, cfg := range cases {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	c, err := New(&Config{Host: "10.0.0.1:6443"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Host() != "https://10.0.0.1:6443" || c.Namespace() != DefaultNamespace || c.Scheme() != DefaultScheme() {
		t.Errorf("defaults: host %s namespace %s", c.Host(), c.Namespace())
	}
	if c.limiter == nil || c.limiter.Limit() != DefaultQPS || c.limiter.Burst() != DefaultBurst || c.retries != DefaultMaxRetries {
		t.Errorf("defaults: limiter %v retries %d", c.limiter, c.retries)
	}
}

// Config.Timeout bounds requests, including the reading of their body, but
// not watches.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			_, _ = w.Write([]byte(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"late"}}}`))
			return
		}
		<-r.Context().Done() // never answers
	})
	c := newTestClient(t, &Config{Host: srv.srv.URL, Timeout: 50 * time.Millisecond, MaxRetries: -1})
	ctx := testContext(t)
	if _, err := For[corev1.Pod](c).Get(ctx, "p", metav1.GetOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get against a server that never answers: %v", err)
	}
	w, err := For[corev1.Pod](c).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Outlive the timeout, then let the event through.
	<-time.After(200 * time.Millisecond)
	close(release)
	if ev := next(t, w); ev.Type != EventAdded || ev.Object.Name != "late" {
		t.Errorf("watch event after the timeout: %s %v", ev.Type, ev.Err)
	}
}

// discardLog is a server error log that drops the expected handshake
// failures.
func discardLog() *log.Logger { return log.New(io.Discard, "", 0) }
