package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "github.com/kapi-dev/kapi/api/admission/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// certPair is a serving certificate for 127.0.0.1 and its key.
type certPair struct{ cert, key []byte }

func newCertPair(t *testing.T) certPair {
	t.Helper()
	c, k, err := SelfSigned(time.Hour, "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	return certPair{c, k}
}

// newCertPairLike returns a new pair whose files have the sizes of p's, so
// that only their content (and inode) tells them apart.
func newCertPairLike(t *testing.T, p certPair) certPair {
	t.Helper()
	for range 1000 {
		q := newCertPair(t)
		if len(q.cert) == len(p.cert) && len(q.key) == len(p.key) {
			return q
		}
	}
	t.Fatal("no certificate of the same size in 1000 tries")
	return certPair{}
}

func (p certPair) serial(t *testing.T) string {
	t.Helper()
	b, _ := pem.Decode(p.cert)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.String()
}

// write writes p as tls.crt and tls.key in dir, with mtime unless it is
// zero.
func (p certPair) write(t *testing.T, dir string, mtime time.Time) {
	t.Helper()
	for f, b := range map[string][]byte{"tls.crt": p.cert, "tls.key": p.key} {
		writeFile(t, filepath.Join(dir, f), b)
		if !mtime.IsZero() {
			if err := os.Chtimes(filepath.Join(dir, f), mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// running is a started Server.
type running struct {
	addr string
	done chan error
	stop context.CancelFunc
}

// start starts a server on 127.0.0.1 with cfg (Listener and Handlers filled
// in) and stops it at the end of the test, checking Start returns nil.
func start(t *testing.T, cfg ServerConfig) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener = ln
	if cfg.Handlers == nil {
		cfg.Handlers = map[string]http.Handler{"/validate": Validating(sizeLimit)}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{addr: ln.Addr().String(), done: make(chan error, 1), stop: cancel}
	go func() { r.done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return r
}

// servedSerial makes a new TLS connection and returns the serial number of
// the certificate the server presents.
func (r *running) servedSerial(t *testing.T) string {
	t.Helper()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // the test compares serials
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// wantServing checks a new TLS connection is served p's certificate.
func (r *running) wantServing(t *testing.T, p certPair, what string) {
	t.Helper()
	if got, want := r.servedSerial(t), p.serial(t); got != want {
		t.Fatalf("%s: serving %s, want %s", what, got, want)
	}
}

// httpsClient returns an HTTPS client that trusts ca.
func httpsClient(t *testing.T, ca []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func TestServerServesWebhooks(t *testing.T) {
	dir := t.TempDir()
	p := newCertPair(t)
	p.write(t, dir, time.Time{})
	r := start(t, ServerConfig{CertDir: dir})
	c := httpsClient(t, p.cert)

	body := mustJSON(t, admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: request(admissionv1.Create, gadget, "")})
	resp, err := c.Post("https://"+r.addr+"/validate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"allowed":true`) || !strings.Contains(string(b), `"uid":"uid-1"`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	for _, path := range []string{"/validate/", "/", "/other"} {
		resp, err := c.Post("https://"+r.addr+path, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
}

func TestServerMinTLSVersion(t *testing.T) {
	dir := t.TempDir()
	p := newCertPair(t)
	p.write(t, dir, time.Time{})
	for _, tc := range []struct {
		min, client uint16
		ok          bool
	}{
		{0, tls.VersionTLS11, false},
		{0, tls.VersionTLS12, true},
		{tls.VersionTLS13, tls.VersionTLS12, false},
		{tls.VersionTLS13, tls.VersionTLS13, true},
	} {
		r := start(t, ServerConfig{CertDir: dir, MinVersion: tc.min})
		d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10, MaxVersion: tc.client}}
		conn, err := d.DialContext(context.Background(), "tcp", r.addr)
		if (err == nil) != tc.ok {
			t.Errorf("server min %s, client max %s: err %v", tls.VersionName(tc.min), tls.VersionName(tc.client), err)
		}
		if conn != nil {
			conn.Close()
		}
	}
}

// TestServerReloadsCertificate rotates the certificate files in the ways
// they are rotated, and checks the next TLS handshake sees the new one.
func TestServerReloadsCertificate(t *testing.T) {
	t.Run("rewritten in place", func(t *testing.T) {
		dir := t.TempDir()
		crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		p1, p2 := newCertPair(t), newCertPair(t)
		writeFile(t, crt, p1.cert)
		writeFile(t, key, p1.key)
		r := start(t, ServerConfig{CertDir: dir})
		r.wantServing(t, p1, "")
		writeFile(t, crt, p2.cert)
		// Half rotated: the new certificate does not match the old key, so
		// the old pair is still served.
		r.wantServing(t, p1, "half rotated")
		writeFile(t, key, p2.key)
		r.wantServing(t, p2, "")
	})

	t.Run("rewritten within the timestamp granularity", func(t *testing.T) {
		// The new pair has the old one's sizes and is given its mtime: only
		// the content differs. The files changed less than racyWindow ago,
		// so the server compares their content.
		dir := t.TempDir()
		p1 := newCertPair(t)
		p2 := newCertPairLike(t, p1)
		mtime := time.Now().Truncate(time.Second)
		p1.write(t, dir, mtime)
		r := start(t, ServerConfig{CertDir: dir, Clock: clocktest.NewFakeClock(mtime.Add(time.Second))})
		r.wantServing(t, p1, "")
		p2.write(t, dir, mtime)
		r.wantServing(t, p2, "")
	})

	t.Run("Secret volume symlink swap", func(t *testing.T) {
		// A mounted Secret: tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>,
		// rotated by pointing ..data at a new directory in one rename. The
		// new files have the old ones' sizes and mtimes, and the clock is
		// far ahead (nothing is recent): only their inodes differ.
		dir := t.TempDir()
		mtime := time.Now().Add(-time.Hour).Truncate(time.Second)
		version := func(name string, p certPair) {
			t.Helper()
			if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
				t.Fatal(err)
			}
			p.write(t, filepath.Join(dir, name), mtime)
			if err := os.Symlink(name, filepath.Join(dir, "..data_tmp")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
				t.Fatal(err)
			}
		}
		p1 := newCertPair(t)
		p2 := newCertPairLike(t, p1)
		version("..2026_01", p1)
		for _, f := range []string{"tls.crt", "tls.key"} {
			if err := os.Symlink(filepath.Join("..data", f), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		r := start(t, ServerConfig{CertDir: dir, Clock: clocktest.NewFakeClock(time.Now().Add(time.Hour))})
		r.wantServing(t, p1, "")
		version("..2026_02", p2)
		r.wantServing(t, p2, "")
	})

	t.Run("stat cache", func(t *testing.T) {
		// With files older than the racy window, only a changed stat makes
		// the server read them again.
		dir := t.TempDir()
		crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		p1 := newCertPair(t)
		p2, p3 := newCertPairLike(t, p1), newCertPair(t)
		old := time.Now().Add(-time.Hour).Truncate(time.Second)
		p1.write(t, dir, old)
		clock := clocktest.NewFakeClock(time.Now().Add(time.Hour))
		r := start(t, ServerConfig{CertFile: crt, KeyFile: key, Clock: clock})
		r.wantServing(t, p1, "")
		// Same inode, mtime and size, not recent: the cache is trusted and
		// the files are not read on each handshake.
		p2.write(t, dir, old)
		r.wantServing(t, p1, "unchanged stat")
		p3.write(t, dir, old.Add(time.Second))
		r.wantServing(t, p3, "changed mtime")
	})

	t.Run("files removed", func(t *testing.T) {
		dir := t.TempDir()
		p1 := newCertPair(t)
		p1.write(t, dir, time.Time{})
		r := start(t, ServerConfig{CertDir: dir})
		r.wantServing(t, p1, "")
		if err := os.Remove(filepath.Join(dir, "tls.key")); err != nil {
			t.Fatal(err)
		}
		r.wantServing(t, p1, "key removed")
	})
}

func TestNewServerErrors(t *testing.T) {
	h := map[string]http.Handler{"/v": Validating(sizeLimit)}
	for _, tc := range []struct {
		cfg ServerConfig
		msg string
	}{
		{ServerConfig{Handlers: h, MinVersion: tls.VersionTLS11}, "webhook: MinVersion TLS 1.1 is below TLS 1.2"},
		{ServerConfig{}, "webhook: ServerConfig.Handlers is empty"},
		{ServerConfig{Handlers: map[string]http.Handler{"v": h["/v"]}}, `webhook: handler path "v" must start with / and have a handler`},
		{ServerConfig{Handlers: map[string]http.Handler{"/v": nil}}, `webhook: handler path "/v" must start with / and have a handler`},
	} {
		if _, err := NewServer(tc.cfg); err == nil || err.Error() != tc.msg {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.msg)
		}
	}
}

func TestServerStartErrors(t *testing.T) {
	dir := t.TempDir()
	h := map[string]http.Handler{"/v": Validating(sizeLimit)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(ServerConfig{CertDir: dir, Handlers: h, Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Start(context.Background())
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "webhook: serving certificate") {
		t.Fatalf("missing certificate: %v", err)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the listener was not closed: Accept returned %v", err)
	}

	p := newCertPair(t)
	writeFile(t, filepath.Join(dir, "tls.crt"), p.cert)
	writeFile(t, filepath.Join(dir, "tls.key"), newCertPair(t).key)
	s, _ = NewServer(ServerConfig{CertDir: dir, Handlers: h, Addr: "127.0.0.1:0"})
	if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "private key does not match public key") {
		t.Fatalf("mismatched key: %v", err)
	}

	writeFile(t, filepath.Join(dir, "tls.key"), p.key)
	s, _ = NewServer(ServerConfig{CertDir: dir, Handlers: h, Addr: "127.0.0.1:-1"})
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("bad address: nil error")
	}
}

var _ workqueue.Clock = (*clocktest.FakeClock)(nil)

// TestServerShutdown: when its context is done, Start lets a request in
// flight finish (up to ShutdownTimeout), then returns.
func TestServerShutdown(t *testing.T) {
	dir := t.TempDir()
	p := newCertPair(t)
	p.write(t, dir, time.Time{})
	for _, tc := range []struct {
		name     string
		timeout  time.Duration
		finished bool
	}{
		{"request finishes", time.Minute, true},
		{"timeout closes it", time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(entered)
				<-release
				io.WriteString(w, "done")
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewServer(ServerConfig{CertDir: dir, Listener: ln, ShutdownTimeout: tc.timeout,
				Handlers: map[string]http.Handler{"/slow": slow}, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			started := make(chan error, 1)
			go func() { started <- s.Start(ctx) }()
			got := make(chan string, 1)
			go func() {
				resp, err := httpsClient(t, p.cert).Post("https://"+ln.Addr().String()+"/slow", "text/plain", nil)
				if err != nil {
					got <- "error"
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- string(b)
			}()
			<-entered
			cancel()
			if tc.finished {
				// Shutdown has begun once the listener is closed: only then
				// is the request let finish.
				waitFor(t, "the listener to close", func() bool {
					c, err := net.Dial("tcp", ln.Addr().String())
					if err == nil {
						c.Close()
					}
					return err != nil
				})
				select {
				case err := <-started:
					t.Fatalf("Start returned %v with a request in flight", err)
				default:
				}
				close(release)
			}
			if err := <-started; err != nil {
				t.Fatalf("Start: %v", err)
			}
			if !tc.finished {
				close(release)
			}
			if want := map[bool]string{true: "done", false: "error"}[tc.finished]; <-got != want {
				t.Fatalf("response %q", want)
			}
		})
	}
}

// waitFor polls cond until it holds, failing the test after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
