package fake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// These tests exercise the transport with handlers of their own, in place of
// the server, to control exactly when they write, flush and return.

const waitLimit = 10 * time.Second

// handlerFake returns a Fake whose requests go to h, and an HTTP client on
// its transport.
func handlerFake(t *testing.T, h http.HandlerFunc) (*Fake, *http.Client) {
	t.Helper()
	f, err := start(Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	f.handler = h
	t.Cleanup(func() { f.Close() })
	return f, &http.Client{Transport: &transport{f: f}}
}

// activeRequests is how many handlers are running.
func (f *Fake) activeRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.active)
}

// waitIdle fails the test unless every handler returns soon.
func waitIdle(t *testing.T, f *Fake) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for f.activeRequests() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d handlers still running", f.activeRequests())
		}
		time.Sleep(time.Millisecond)
	}
}

func get(t *testing.T, c *http.Client, ctx context.Context, method string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, Host+"/api/v1/namespaces/web/pods?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

// readN reads exactly n bytes, failing the test on error or after waitLimit.
func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	done := make(chan struct{})
	buf := make([]byte, n)
	var err error
	go func() {
		defer close(done)
		_, err = io.ReadFull(r, buf)
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("reading %d bytes: nothing came", n)
	}
	if err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return string(buf)
}

// A flush hands the response over at once, and each later flush delivers
// what was written, while the handler is still running.
func TestStreamDeliversFlushes(t *testing.T) {
	step := make(chan struct{})
	f, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Header().Set("X-Late", "ignored") // after WriteHeader: not sent
		_, _ = w.Write([]byte("one"))
		w.(http.Flusher).Flush()
		<-step
		_, _ = w.Write([]byte("two"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	resp, err := get(t, c, context.Background(), http.MethodGet)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Late") != "" || resp.ContentLength != -1 {
		t.Errorf("status %d header %v length %d", resp.StatusCode, resp.Header, resp.ContentLength)
	}
	if got := readN(t, resp.Body, 3); got != "one" {
		t.Errorf("read %q", got)
	}
	close(step)
	if got := readN(t, resp.Body, 3); got != "two" {
		t.Errorf("read %q", got)
	}
	if f.activeRequests() != 1 {
		t.Errorf("%d handlers running, want the streaming one", f.activeRequests())
	}
	resp.Body.Close() // ends the handler, as closing a connection would
	waitIdle(t, f)
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("read after Close succeeded")
	}
}

// A handler that returns without flushing is handed over whole, with its
// length, as net/http's server does for small responses.
func TestBufferedResponse(t *testing.T) {
	_, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Kind", "buffered")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("short "))
		_, _ = w.Write([]byte("body"))
	})
	resp, err := get(t, c, context.Background(), http.MethodGet)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTeapot || resp.Header.Get("X-Kind") != "buffered" || string(b) != "short body" || resp.ContentLength != 10 {
		t.Errorf("status %d header %v body %q length %d", resp.StatusCode, resp.Header, b, resp.ContentLength)
	}
}

// A handler that writes nothing answers 200 with an empty body; a HEAD
// response has no body.
func TestEmptyAndHead(t *testing.T) {
	for _, tt := range []struct {
		method string
		write  bool
	}{{http.MethodGet, false}, {http.MethodHead, true}} {
		t.Run(tt.method, func(t *testing.T) {
			_, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.write {
					_, _ = w.Write([]byte("not for HEAD"))
				}
			})
			resp, err := get(t, c, context.Background(), tt.method)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || len(b) != 0 {
				t.Errorf("status %d body %q", resp.StatusCode, b)
			}
		})
	}
}

// A response that outgrows the buffer streams before the handler returns.
func TestLargeBodyStreams(t *testing.T) {
	release := make(chan struct{})
	chunk := bytes.Repeat([]byte("x"), 1000)
	const chunks = 200
	f, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
		for i := range chunks {
			_, _ = w.Write(chunk)
			if i == bufferLimit/len(chunk)+1 {
				<-release // the response must already be on its way
			}
		}
	})
	resp, err := get(t, c, context.Background(), http.MethodGet)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		t.Errorf("length %d, want unknown (streaming)", resp.ContentLength)
	}
	readN(t, resp.Body, bufferLimit)
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if n := bufferLimit + len(rest); n != chunks*len(chunk) {
		t.Errorf("read %d bytes, want %d", n, chunks*len(chunk))
	}
	waitIdle(t, f)
}

// The server sees the request the client sent.
func TestServerRequest(t *testing.T) {
	type seen struct {
		method, uri, path, query, header, body string
		length                                 int64
	}
	got := make(chan seen, 1)
	_, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.URL.Path, r.URL.Query().Get("dryRun"), r.Header.Get("Content-Type"), string(b), r.ContentLength}
	})
	req, _ := http.NewRequest(http.MethodPost, Host+"/api/v1/namespaces/web/configmaps?dryRun=All", strings.NewReader(`{"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := seen{http.MethodPost, "/api/v1/namespaces/web/configmaps?dryRun=All", "/api/v1/namespaces/web/configmaps", "All", "application/json", `{"a":1}`, 7}
	if s := <-got; s != want {
		t.Errorf("server saw %+v, want %+v", s, want)
	}
}

// Cancelling the request's context ends the handler, before or after the
// response arrived; reads of the body then fail with the context's error.
func TestCancelEndsHandler(t *testing.T) {
	for _, flush := range []bool{false, true} {
		name := map[bool]string{false: "before headers", true: "while streaming"}[flush]
		t.Run(name, func(t *testing.T) {
			started, ended := make(chan struct{}), make(chan struct{})
			f, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
				defer close(ended)
				close(started)
				if flush {
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done()
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if !flush {
				// Cancel once the handler runs: cancelled earlier, the
				// request would never reach it.
				go func() {
					select {
					case <-started:
						cancel()
					case <-ctx.Done():
					}
				}()
				if _, err := get(t, c, ctx, http.MethodGet); !errors.Is(err, context.Canceled) {
					t.Errorf("err %v, want context.Canceled", err)
				}
			} else {
				resp, err := get(t, c, ctx, http.MethodGet)
				if err != nil {
					t.Fatal(err)
				}
				cancel()
				if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
					t.Errorf("read err %v, want context.Canceled", err)
				}
				resp.Body.Close()
			}
			select {
			case <-ended:
			case <-time.After(waitLimit):
				t.Fatal("handler still running")
			}
			waitIdle(t, f)
		})
	}
}

// A handler that aborts (http.ErrAbortHandler) looks like a dropped
// connection: an error before the response, a truncated body after.
func TestAbortedHandler(t *testing.T) {
	t.Run("before the response", func(t *testing.T) {
		_, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("partial"))
			panic(http.ErrAbortHandler)
		})
		if _, err := get(t, c, context.Background(), http.MethodGet); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("err %v, want io.ErrUnexpectedEOF", err)
		}
	})
	t.Run("while streaming", func(t *testing.T) {
		_, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		})
		resp, err := get(t, c, context.Background(), http.MethodGet)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if string(b) != "partial" || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("read %q, %v; want the partial body and io.ErrUnexpectedEOF", b, err)
		}
	})
}

// Close does not wait for a client that neither reads nor closes a body: it
// ends the handler, and the body's reads fail.
func TestCloseAbandonedBody(t *testing.T) {
	f, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("y"), 4096)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	resp, err := get(t, c, context.Background(), http.MethodGet)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Close hangs on an abandoned body")
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("reading after Close succeeded")
	}
	resp.Body.Close()
	if _, err := get(t, c, context.Background(), http.MethodGet); !errors.Is(err, errClosed) {
		t.Errorf("request after Close: %v", err)
	}
}

// A watch through the real server ends its handler when it is stopped, and
// when its context is cancelled.
func TestWatchEndsHandler(t *testing.T) {
	f, err := start(Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cms := client.For[corev1.ConfigMap](f.Client())
	for _, stop := range []string{"Stop", "cancel"} {
		t.Run(stop, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := cms.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if f.activeRequests() != 1 {
				t.Errorf("%d handlers running during the watch", f.activeRequests())
			}
			if stop == "Stop" {
				w.Stop()
			} else {
				cancel()
				for range w.ResultChan() { // closed once the watch goroutine ends
				}
			}
			waitIdle(t, f)
		})
	}
}

// A request for one object is served on the caller's goroutine: its
// response is handed over whole when the handler returns, even if the
// handler flushes or writes more than the buffer; cancelling it ends the
// handler; an abort is an error.
func TestInline(t *testing.T) {
	const path = Host + "/api/v1/namespaces/web/pods/a"
	big := bytes.Repeat([]byte("z"), 3*bufferLimit)
	t.Run("whole response", func(t *testing.T) {
		f, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			w.(http.Flusher).Flush()
			_, _ = w.Write(big)
		})
		req, _ := http.NewRequest(http.MethodPost, Host+"/api/v1/namespaces/web/pods", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if f.activeRequests() != 0 {
			t.Error("the handler is still running after the response was returned")
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusCreated || resp.ContentLength != int64(len(big)) || !bytes.Equal(b, big) {
			t.Errorf("status %d length %d read %d bytes, %v", resp.StatusCode, resp.ContentLength, len(b), err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		f, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		if _, err := c.Do(req); !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
		waitIdle(t, f)
	})
	t.Run("abort", func(t *testing.T) {
		_, c := handlerFake(t, func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
		req, _ := http.NewRequest(http.MethodGet, path, nil)
		if _, err := c.Do(req); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("err %v, want io.ErrUnexpectedEOF", err)
		}
	})
}

// Which requests are served inline, and which on a goroutine that can
// stream.
func TestSingleObject(t *testing.T) {
	tests := []struct {
		method, path string
		want         bool
	}{
		{http.MethodGet, "/api/v1/namespaces/web/pods/a", true},
		{http.MethodPut, "/api/v1/namespaces/web/pods/a/status", true},
		{http.MethodPost, "/apis/apps/v1/namespaces/web/deployments", true},
		{http.MethodPatch, "/api/v1/nodes/n1", true},
		{http.MethodDelete, "/api/v1/namespaces/web", true},
		{http.MethodGet, "/api/v1/namespaces/web/pods", false},         // list
		{http.MethodGet, "/api/v1/namespaces/web/pods?watch=1", false}, // watch
		{http.MethodDelete, "/api/v1/namespaces/web/pods", false},      // deletecollection
		{http.MethodGet, "/api/v1/namespaces/web/pods/a/log", false},   // may stream (follow)
		{http.MethodPost, "/api/v1/namespaces/web/pods/a/exec", false}, // an upgrade
		{http.MethodGet, "/apis", false},                               // discovery
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, Host+tt.path, nil)
		a, ok := parseAction(req, nil)
		if got := ok && singleObject(a); got != tt.want {
			t.Errorf("%s %s: inline %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}
