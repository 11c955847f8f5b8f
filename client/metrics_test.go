package client

import (
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// requestRecorder is a RequestMetrics that records every call.
type requestRecorder struct {
	mu        sync.Mutex
	limited   []string // "host METHOD waited"
	requested []string // "host METHOD code latency"
}

func (r *requestRecorder) RateLimited(host, method string, waited time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limited = append(r.limited, host+" "+method+" "+waited.String())
}

func (r *requestRecorder) Requested(host, method string, code int, latency time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requested = append(r.requested, host+" "+method+" "+http.StatusText(code)+" "+latency.String())
}

// tickingClock returns a clock that moves by step at each reading.
func tickingClock(step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

// Every attempt of a request is reported to Config.Metrics with its method,
// status code (0 without a response) and latency, and so is every wait for
// the rate limiter.
func TestRequestMetrics(t *testing.T) {
	srv := faultServer(t, reset, unavailable, pass)
	m := &requestRecorder{}
	c := newTestClient(t, &Config{Host: srv.srv.URL, QPS: 1000, Burst: 100, Metrics: m})
	recordDelays(c)
	c.now = tickingClock(time.Second)
	if _, err := For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.srv.URL)
	host := u.Host
	m.mu.Lock()
	defer m.mu.Unlock()
	if want := []string{host + " GET 1s", host + " GET 1s", host + " GET 1s"}; !slices.Equal(m.limited, want) {
		t.Errorf("RateLimited calls %q, want %q", m.limited, want)
	}
	want := []string{
		host + " GET  1s", // reset: no response, code 0
		host + " GET Service Unavailable 1s",
		host + " GET OK 1s",
	}
	if !slices.Equal(m.requested, want) {
		t.Errorf("Requested calls %q, want %q", m.requested, want)
	}
}

// Without a rate limit, no wait is reported.
func TestRequestMetricsNoLimiter(t *testing.T) {
	srv := faultServer(t)
	m := &requestRecorder{}
	c := newTestClient(t, &Config{Host: srv.srv.URL, QPS: -1, Metrics: m})
	if _, err := For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.limited) != 0 || len(m.requested) != 1 {
		t.Errorf("RateLimited %q, Requested %q; want none and one", m.limited, m.requested)
	}
}

// WrapTransport wraps kapi's transport from the outside: the wrapper sees
// the credentials kapi sets, and its requests reach the server.
func TestWrapTransport(t *testing.T) {
	srv := faultServer(t)
	var mu sync.Mutex
	var seen []string
	wrap := func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			seen = append(seen, req.Method+" "+req.Header.Get("Authorization"))
			mu.Unlock()
			req = req.Clone(req.Context())
			req.Header.Set("X-Wrapped", "yes")
			return next.RoundTrip(req)
		})
	}
	c := newTestClient(t, &Config{Host: srv.srv.URL, BearerToken: "secret", WrapTransport: wrap})
	if _, err := For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"GET Bearer secret"}; !slices.Equal(seen, want) {
		t.Errorf("the wrapper saw %q, want %q", seen, want)
	}
	reqs := srv.all()
	if len(reqs) != 1 || reqs[0].Header.Get("X-Wrapped") != "yes" || reqs[0].Header.Get("Authorization") != "Bearer secret" {
		t.Errorf("the server got %+v, want one request through the wrapper with the token", reqs)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
