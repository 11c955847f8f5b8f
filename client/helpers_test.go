package client

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
)

// Encodings the tests run in.
var encodings = []struct {
	name        string
	contentType string
}{
	{"json", codec.MediaTypeJSON},
	{"protobuf", codec.MediaTypeProtobuf},
}

// testServer is the reference server on a loopback listener, recording the
// media types of every exchange.
type testServer struct {
	api  *apiserver.Server
	http *httptest.Server

	mu        sync.Mutex
	exchanges []exchange
}

// exchange is what the tests check of a request to the reference server.
type exchange struct {
	Method, Path                         string
	ContentType, Accept, RespContentType string
	Status                               int
}

// newTestServer starts a reference server with namespace "test", closed when
// the test ends.
func newTestServer(t testing.TB) *testServer {
	return newTestServerWith(t, apiserver.Config{})
}

func newTestServerWith(t testing.TB, cfg apiserver.Config) *testServer {
	t.Helper()
	// The cases count the objects they create: no controller adds a
	// ServiceAccount or the kube-root-ca.crt ConfigMap to their namespaces.
	cfg.DisableServiceAccountController, cfg.DisableRootCAPublisher = true, true
	// Without the serviceaccount controller, pods would be refused for want
	// of their "default" ServiceAccount: the ServiceAccount admission plugin
	// is off too, as envtest turns it off.
	cfg.DisableAdmissionPlugins = append(cfg.DisableAdmissionPlugins, "ServiceAccount")
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	api, err := apiserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{api: api}
	s.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w}
		api.ServeHTTP(rw, r)
		s.mu.Lock()
		s.exchanges = append(s.exchanges, exchange{Method: r.Method, Path: r.URL.Path,
			ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"),
			RespContentType: w.Header().Get("Content-Type"), Status: rw.status})
		s.mu.Unlock()
	}))
	hs := s.http
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		api.Close()
	})
	c := s.client(t, codec.MediaTypeJSON)
	if _, err := For[corev1.Namespace](c).Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace test: %v", err)
	}
	return s
}

// last returns the last exchange with method.
func (s *testServer) last(method string) exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.exchanges) - 1; i >= 0; i-- {
		if s.exchanges[i].Method == method {
			return s.exchanges[i]
		}
	}
	return exchange{}
}

// recordingWriter records the status code and passes Flush on, for watches.
type recordingWriter struct {
	http.ResponseWriter
	status int
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// client returns a client of s in namespace "test" with no rate limit.
func (s *testServer) client(t testing.TB, contentType string) *Client {
	t.Helper()
	return newTestClient(t, &Config{Host: s.http.URL, ContentType: contentType})
}

// newTestClient builds a client from cfg, with no rate limit and namespace
// "test" unless cfg says otherwise, and a silent logger.
func newTestClient(t testing.TB, cfg *Config) *Client {
	t.Helper()
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "test"
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
}

// recordedRequest is one request a recorder saw.
type recordedRequest struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// recorder is a test server that records requests and answers each with
// respond (by default 200 with an empty JSON object).
type recorder struct {
	mu       sync.Mutex
	requests []recordedRequest
	respond  func(w http.ResponseWriter, r *http.Request, n int)
	srv      *httptest.Server
}

func newRecorder(t testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *recorder {
	t.Helper()
	rec := &recorder{respond: respond}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.requests = append(rec.requests, recordedRequest{Method: r.Method, Path: r.URL.EscapedPath(),
			RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		n := len(rec.requests)
		rec.mu.Unlock()
		if rec.respond == nil {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{}`))
			return
		}
		rec.respond(w, r, n)
	}))
	t.Cleanup(func() {
		rec.srv.CloseClientConnections()
		rec.srv.Close()
	})
	return rec
}

// all returns the requests so far.
func (r *recorder) all() []recordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedRequest(nil), r.requests...)
}

// count returns the number of requests so far.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// testContext returns a context that ends with the test, bounded so that a
// hang fails the test rather than the whole run.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeTimer fires at once and records the delays asked of it.
type fakeTimer struct {
	mu     *sync.Mutex
	delays *[]time.Duration
	c      chan time.Time
}

func (f *fakeTimer) Start(d time.Duration) {
	f.mu.Lock()
	*f.delays = append(*f.delays, d)
	f.mu.Unlock()
	f.c <- time.Now()
}
func (f *fakeTimer) Stop()               {}
func (f *fakeTimer) C() <-chan time.Time { return f.c }

// recordDelays makes c's retries wait no time, and returns the delays they
// asked for.
func recordDelays(c *Client) func() []time.Duration {
	var mu sync.Mutex
	var delays []time.Duration
	c.newTimer = func() backoff.Timer { return &fakeTimer{mu: &mu, delays: &delays, c: make(chan time.Time, 1)} }
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), delays...)
	}
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}
