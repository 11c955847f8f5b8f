package client

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// fault is what the fault-injecting server does with one request.
type fault int

const (
	pass           fault = iota // answer 200 with a pod
	tooMany                     // 429, Retry-After: 7
	tooManyNoWait               // 429, Retry-After: 0
	unavailable                 // 503 without Retry-After
	gatewayTimeout              // 504 Status, Retry-After: 1
	reset                       // hijack the connection and reset it
	internal                    // 500
)

// faultServer answers the n-th request with script[n-1] (and pass after the
// script ends).
func faultServer(t *testing.T, script ...fault) *recorder {
	t.Helper()
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request, n int) {
		f := pass
		if n <= len(script) {
			f = script[n-1]
		}
		switch f {
		case pass:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"test","resourceVersion":"5"}}`))
		case tooMany:
			w.Header().Set("Retry-After", "7")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too many requests, please try again later","reason":"TooManyRequests","details":{"retryAfterSeconds":7},"code":429}`))
		case tooManyNoWait:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case unavailable:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("upstream connect error"))
		case gatewayTimeout:
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGatewayTimeout)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Timeout: Too large resource version: 99, current: 3","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`))
		case reset:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.(*net.TCPConn).SetLinger(0) // close with RST
			_ = conn.Close()
		case internal:
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
}

// Requests safe to repeat are retried on 429, 503, 504 and reset
// connections, waiting what Retry-After says or a jittered backoff.
func TestRetries(t *testing.T) {
	pods := func(c *Client) Resource[corev1.Pod] { return For[corev1.Pod](c) }
	get := func(ctx context.Context, c *Client) error {
		_, err := pods(c).Get(ctx, "p", metav1.GetOptions{})
		return err
	}
	withRV := newPod("p")
	withRV.ResourceVersion = "5"
	uid := metav1.UID("u1")
	cases := []struct {
		name     string
		script   []fault
		send     func(context.Context, *Client) error
		attempts int
		// delays are the waits wanted: exact ones for Retry-After, else a
		// backoff within [lo, hi].
		delays [][2]time.Duration
		check  func(*testing.T, error)
	}{
		{name: "GET 429 Retry-After", script: []fault{tooMany, tooMany}, send: get, attempts: 3,
			delays: [][2]time.Duration{{7 * time.Second, 7 * time.Second}, {7 * time.Second, 7 * time.Second}}},
		{name: "GET 429 Retry-After 0", script: []fault{tooManyNoWait}, send: get, attempts: 2,
			delays: [][2]time.Duration{{0, 0}}},
		{name: "GET 503 backoff", script: []fault{unavailable, unavailable}, send: get, attempts: 3,
			delays: [][2]time.Duration{{125 * time.Millisecond, 375 * time.Millisecond}, {250 * time.Millisecond, 750 * time.Millisecond}}},
		{name: "GET 504", script: []fault{gatewayTimeout}, send: get, attempts: 2,
			delays: [][2]time.Duration{{time.Second, time.Second}}},
		{name: "GET reset connection", script: []fault{reset}, send: get, attempts: 2,
			delays: [][2]time.Duration{{125 * time.Millisecond, 375 * time.Millisecond}}},
		{name: "GET 500 is not retried", script: []fault{internal}, send: get, attempts: 1,
			check: func(t *testing.T, err error) {
				if !IsInternalError(err) {
					t.Errorf("err %v", err)
				}
			}},
		{name: "list is retried", script: []fault{unavailable}, attempts: 2,
			delays: [][2]time.Duration{{125 * time.Millisecond, 375 * time.Millisecond}},
			send: func(ctx context.Context, c *Client) error {
				_, err := For[corev1.Pod](c).List(ctx, metav1.ListOptions{})
				return err
			}},
		{name: "POST 429 is not retried", script: []fault{tooMany}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				_, err := pods(c).Create(ctx, newPod("p"), metav1.CreateOptions{})
				return err
			},
			check: func(t *testing.T, err error) {
				if !IsTooManyRequests(err) {
					t.Errorf("err %v", err)
				}
				if n, ok := RetryAfterSeconds(err); !ok || n != 7 {
					t.Errorf("RetryAfterSeconds %d %v", n, ok)
				}
			}},
		{name: "POST reset is not retried", script: []fault{reset}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				_, err := pods(c).Create(ctx, newPod("p"), metav1.CreateOptions{})
				return err
			}},
		{name: "PATCH 503 is not retried", script: []fault{unavailable}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				_, err := pods(c).Patch(ctx, "p", MergePatchType, []byte(`{}`), metav1.PatchOptions{})
				return err
			}},
		{name: "apply reset is not retried", script: []fault{reset}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				_, err := pods(c).Apply(ctx, newPod("p"), metav1.ApplyOptions{FieldManager: "me"})
				return err
			}},
		{name: "dynamic PATCH 429 is not retried", script: []fault{tooManyNoWait}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				_, err := Dynamic(c).Resource(GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("test").
					Patch(ctx, "p", JSONPatchType, []byte(`[]`), metav1.PatchOptions{})
				return err
			}},
		{name: "PUT with resourceVersion is retried", script: []fault{unavailable}, attempts: 2,
			delays: [][2]time.Duration{{125 * time.Millisecond, 375 * time.Millisecond}},
			send: func(ctx context.Context, c *Client) error {
				_, err := pods(c).Update(ctx, withRV, metav1.UpdateOptions{})
				return err
			}},
		{name: "PUT without resourceVersion is not retried", script: []fault{unavailable}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				_, err := pods(c).Update(ctx, newPod("p"), metav1.UpdateOptions{})
				return err
			}},
		{name: "DELETE with precondition is retried", script: []fault{reset}, attempts: 2,
			delays: [][2]time.Duration{{125 * time.Millisecond, 375 * time.Millisecond}},
			send: func(ctx context.Context, c *Client) error {
				return pods(c).Delete(ctx, "p", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			}},
		{name: "DELETE without precondition is not retried", script: []fault{unavailable}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				return pods(c).Delete(ctx, "p", metav1.DeleteOptions{})
			}},
		{name: "DELETE collection is not retried", script: []fault{unavailable}, attempts: 1,
			send: func(ctx context.Context, c *Client) error {
				return pods(c).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			}},
		{name: "retries are bounded", script: []fault{unavailable, unavailable, unavailable, unavailable, unavailable, unavailable, unavailable},
			send: get, attempts: 6, // MaxRetries 5 (the default) + 1
			check: func(t *testing.T, err error) {
				if !IsServiceUnavailable(err) {
					t.Errorf("err %v", err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := faultServer(t, tc.script...)
			c := newTestClient(t, &Config{Host: srv.srv.URL})
			delays := recordDelays(c)
			err := tc.send(testContext(t), c)
			if tc.check != nil {
				tc.check(t, err)
			} else if err != nil && len(tc.delays) > 0 {
				t.Fatalf("request failed after retries: %v", err)
			} else if err == nil && tc.attempts == 1 {
				t.Fatalf("a request that was not retried succeeded")
			}
			if got := srv.count(); got != tc.attempts {
				t.Errorf("%d attempts, want %d", got, tc.attempts)
			}
			got := delays()
			if tc.delays == nil {
				if len(got) != tc.attempts-1 {
					t.Errorf("delays %v for %d attempts", got, tc.attempts)
				}
				return
			}
			if len(got) != len(tc.delays) {
				t.Fatalf("delays %v, want %d", got, len(tc.delays))
			}
			for i, d := range got {
				if d < tc.delays[i][0] || d > tc.delays[i][1] {
					t.Errorf("delay %d = %v, want within %v", i, d, tc.delays[i])
				}
			}
		})
	}
}

func TestRetryConfig(t *testing.T) {
	t.Run("MaxRetries negative disables retries", func(t *testing.T) {
		srv := faultServer(t, unavailable)
		c := newTestClient(t, &Config{Host: srv.srv.URL, MaxRetries: -1})
		if _, err := For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{}); !IsServiceUnavailable(err) {
			t.Errorf("err %v", err)
		}
		if srv.count() != 1 {
			t.Errorf("%d attempts", srv.count())
		}
	})
	t.Run("MaxRetries bounds", func(t *testing.T) {
		srv := faultServer(t, unavailable, unavailable, unavailable, unavailable)
		c := newTestClient(t, &Config{Host: srv.srv.URL, MaxRetries: 2})
		recordDelays(c)
		if _, err := For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{}); !IsServiceUnavailable(err) {
			t.Errorf("err %v", err)
		}
		if srv.count() != 3 {
			t.Errorf("%d attempts, want 3", srv.count())
		}
	})
	t.Run("Retryable overrides", func(t *testing.T) {
		srv := faultServer(t, unavailable)
		c := newTestClient(t, &Config{Host: srv.srv.URL})
		recordDelays(c)
		if _, err := c.NewRequest(http.MethodPost).AbsPath("/x").Retryable(true).DoRaw(testContext(t)); err != nil {
			t.Errorf("err %v", err)
		}
		if srv.count() != 2 {
			t.Errorf("%d attempts, want 2", srv.count())
		}
	})
}

// A refused connection is retried; the error says what happened.
func TestRetryRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newTestClient(t, &Config{Host: "http://" + addr, MaxRetries: 2})
	delays := recordDelays(c)
	_, err = For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err %v, want connection refused", err)
	}
	if n := len(delays()); n != 2 {
		t.Errorf("%d retries, want 2", n)
	}
}

// Waiting for a retry ends as soon as the context does.
func TestRetryWaitHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(testContext(t))
	srv := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Retry-After", "300")
		w.WriteHeader(http.StatusTooManyRequests)
		cancel() // the client is about to wait five minutes
	})
	c := newTestClient(t, &Config{Host: srv.srv.URL})
	_, err := For[corev1.Pod](c).Get(ctx, "p", metav1.GetOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if srv.count() != 1 {
		t.Errorf("%d attempts", srv.count())
	}
}

// Retries are logged at debug level.
func TestRetriesAreLogged(t *testing.T) {
	srv := faultServer(t, unavailable)
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newTestClient(t, &Config{Host: srv.srv.URL, Logger: logger})
	recordDelays(c)
	if _, err := For[corev1.Pod](c).Get(testContext(t), "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"level=DEBUG", "retrying request", "method=GET", "attempt=1", "/api/v1/namespaces/test/pods/p"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// The rate limiter spaces requests, and waiting for it honours the context.
func TestRateLimit(t *testing.T) {
	srv := faultServer(t)
	c := newTestClient(t, &Config{Host: srv.srv.URL, QPS: 0.01, Burst: 1})
	ctx := testContext(t)
	pods := For[corev1.Pod](c)
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// The bucket is empty: the next token comes in 100s.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := pods.Get(short, "p", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "rate limiter") {
		t.Errorf("second request: %v, want a rate limiter error", err)
	}
	cancelled, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := pods.Get(cancelled, "p", metav1.GetOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
	if srv.count() != 1 {
		t.Errorf("%d requests reached the server, want 1", srv.count())
	}
	// Burst allows that many at once.
	c2 := newTestClient(t, &Config{Host: srv.srv.URL, QPS: 0.01, Burst: 3})
	for range 3 {
		if _, err := For[corev1.Pod](c2).Get(ctx, "p", metav1.GetOptions{}); err != nil {
			t.Errorf("burst request: %v", err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A retried request sends its whole body again.
func TestRetryResendsBody(t *testing.T) {
	srv := faultServer(t, reset, unavailable)
	c := newTestClient(t, &Config{Host: srv.srv.URL})
	recordDelays(c)
	p := newPod("p")
	p.ResourceVersion = "5"
	if _, err := For[corev1.Pod](c).Update(testContext(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.all()
	if len(reqs) != 3 {
		t.Fatalf("%d attempts, want 3", len(reqs))
	}
	for i, r := range reqs {
		if len(r.Body) == 0 || !bytes.Equal(r.Body, reqs[0].Body) {
			t.Errorf("attempt %d body %q, first %q", i+1, r.Body, reqs[0].Body)
		}
	}
	if !strings.Contains(string(reqs[2].Body), `"resourceVersion":"5"`) {
		t.Errorf("body %s", reqs[2].Body)
	}
}
