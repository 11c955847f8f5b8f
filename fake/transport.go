package fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
)

// bufferLimit is how much of a response is held before it streams. A
// handler's output is held until it flushes, passes bufferLimit, or returns,
// as net/http's server holds it in its own buffers. Most responses (a get, a
// create, an error) are therefore handed over whole; a watch (which flushes
// its headers at once) or a large list switches to streaming through a
// streamPipe.
const bufferLimit = 32 << 10

var (
	// errClosed is the error of requests made after Fake.Close.
	errClosed = errors.New("fake: the fake API server is closed")
	// errBodyClosed is what reading a closed response body returns, as with
	// net/http.
	errBodyClosed = errors.New("http: read on closed response body")
	// errAborted is the error of a request whose handler aborted before
	// answering (http.ErrAbortHandler, or a panic the server did not
	// recover): to the client it looks like a dropped connection.
	errAborted = fmt.Errorf("fake: the server aborted the request: %w", io.ErrUnexpectedEOF)
)

// seedingKey marks the context of the fake's own requests (seeding), which
// are neither recorded nor given to reactors.
type seedingKey struct{}

// transport is the http.RoundTripper of a Fake's clients: it records the
// request, offers it to the reactors, and otherwise serves it by calling the
// reference server's ServeHTTP, with no socket in between.
type transport struct{ f *Fake }

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readRequestBody(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, isResource := parseAction(req, body)
	if t.f.authenticates && ctx.Value(seedingKey{}) != nil {
		req = req.Clone(ctx)
		req.Header.Set("Authorization", "Bearer "+adminToken) // seeding is the admin's
	}
	handler := t.f.handler
	if isResource && ctx.Value(seedingKey{}) == nil {
		t.f.record(a)
		d := t.f.faults.decide(a)
		if d.delay > 0 {
			if err := t.f.faults.wait(ctx, d.delay, t.f.closing); err != nil {
				return nil, err
			}
		}
		if resp := d.respond(req, a); resp != nil {
			return resp, nil
		}
		if resp, ok := t.f.react(req, a); ok {
			return resp, nil
		}
		handler = d.wrap(handler)
	}
	return t.f.serve(req, body, isResource && singleObject(a), handler)
}

// singleObject reports whether the server answers the action with one
// object (or a Status), never a stream: a get, create, update, patch or
// delete of an object or of its status. Those are served on the caller's
// goroutine, which saves a goroutine start and hand-off per request (a
// third of a get's time through the fake, BenchmarkGet). Everything else
// (lists, watches, other subresources, discovery) is served on a goroutine
// of its own, so that it can stream.
func singleObject(a Action) bool {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
		return a.Subresource == "" || a.Subresource == "status"
	}
	return false
}

// readRequestBody reads and closes the request body, as a RoundTripper must
// close it even on errors.
func readRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("fake: reading the request body: %w", err)
	}
	return b, nil
}

// serve runs handler (the server's, perhaps behind a fault) for req. With
// inline set, the handler runs on the caller's goroutine and its response is handed over whole when
// it returns. Otherwise it runs on a goroutine owned by the Fake and the
// response is returned as soon as its headers are known; the body then
// streams as the handler writes. Either way the handler's context ends when
// req's does or when the Fake closes, and also, for a streamed response,
// when its body is closed; a handler still writing then gets write errors,
// so that it returns.
func (f *Fake) serve(req *http.Request, body []byte, inline bool, handler http.Handler) (*http.Response, error) {
	hctx, cancel := context.WithCancel(req.Context())
	ex := &exchange{cancel: cancel, ready: make(chan struct{})}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		cancel()
		return nil, errClosed
	}
	f.active[ex] = struct{}{}
	f.wg.Add(1)
	f.mu.Unlock()
	done := func() {
		cancel()
		f.forget(ex)
		f.wg.Done()
	}

	sreq := serverRequest(hctx, req, body)
	w := &responseWriter{ex: ex, req: req, logger: f.logger, header: http.Header{},
		head: req.Method == http.MethodHead, whole: inline}
	if inline {
		w.run(handler, sreq)
		done()
		if err := req.Context().Err(); err != nil {
			return nil, err
		}
		return ex.resp, ex.err
	}
	// Cancelling the request aborts the exchange at once, as closing the
	// connection would: reads of the body fail and the handler's writes
	// stop blocking.
	stop := context.AfterFunc(req.Context(), func() { ex.abort(req.Context().Err()) })
	go func() {
		defer done()
		defer stop()
		w.run(handler, sreq)
	}()
	select {
	case <-ex.ready:
		if err := req.Context().Err(); err != nil {
			// Cancelled as the response arrived (the handler may have
			// returned because of it): the request failed, as over a
			// connection that was closed. The AfterFunc has aborted the
			// stream.
			return nil, err
		}
		return ex.resp, ex.err
	case <-req.Context().Done():
		// The AfterFunc aborts the exchange; a response delivered meanwhile
		// has had its stream closed and is dropped.
		return nil, req.Context().Err()
	}
}

// forget removes a finished exchange from the active set.
func (f *Fake) forget(ex *exchange) {
	f.mu.Lock()
	delete(f.active, ex)
	f.mu.Unlock()
}

// serverRequest is req as the server receives it: a clone with ctx as its
// context, the body already read, and the fields a server-side request has.
func serverRequest(ctx context.Context, req *http.Request, body []byte) *http.Request {
	r := req.Clone(ctx)
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		r.Body = http.NoBody
	}
	r.ContentLength = int64(len(body))
	r.GetBody = nil
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "127.0.0.1:0"
	r.Host = req.URL.Host
	if r.Proto == "" {
		r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	}
	return r
}

// exchange is one request being served: the handoff of the response to
// RoundTrip, and what aborting it must undo.
type exchange struct {
	cancel context.CancelFunc // ends the handler's context
	ready  chan struct{}      // closed once resp or err is set
	resp   *http.Response
	err    error

	mu      sync.Mutex
	aborted error       // why the exchange was aborted, nil if not
	stream  *streamPipe // the streaming body, once there is one
}

// abort ends the exchange: the handler's context is cancelled, and the
// streaming body, if any, is closed with err, so that the client's reads
// fail with err and the handler's writes fail. It is safe to call more than
// once, from any goroutine.
func (ex *exchange) abort(err error) {
	ex.mu.Lock()
	if ex.aborted == nil {
		ex.aborted = err
	}
	stream := ex.stream
	ex.mu.Unlock()
	ex.cancel()
	if stream != nil {
		stream.CloseRead(err)
	}
}

// responseWriter is the http.ResponseWriter (and http.Flusher) the handler
// writes to. Only the handler's goroutine uses it.
type responseWriter struct {
	ex     *exchange
	req    *http.Request
	logger *slog.Logger
	header http.Header
	head   bool // a HEAD request: the body is discarded
	whole  bool // never stream: the response is handed over when the handler returns

	code      int         // the status, once WriteHeader has been called
	sent      http.Header // the headers as of WriteHeader
	buf       []byte      // the body before it streams
	delivered bool        // the response has been handed to RoundTrip

	streaming bool
	stream    *streamPipe // nil if the exchange was aborted before it streamed
	err       error       // the first write error once streaming
}

// Header implements http.ResponseWriter.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter. As with net/http, the headers
// are those set before the call, informational (1xx) codes are not the
// response, and later calls are ignored.
func (w *responseWriter) WriteHeader(code int) {
	if w.code != 0 || code < 200 {
		return
	}
	w.code = code
	w.sent = w.header.Clone()
}

// Write implements http.ResponseWriter.
func (w *responseWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.head {
		return len(p), nil
	}
	if !w.streaming {
		w.buf = append(w.buf, p...)
		if len(w.buf) > bufferLimit && !w.whole {
			w.startStream()
		}
		return len(p), nil
	}
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.stream.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// Flush implements http.Flusher: the headers and everything written so far
// reach the client now. (Once the response streams, every write reaches the
// client as it is made; a response served inline is handed over when the
// handler returns, as nobody could read it before.)
func (w *responseWriter) Flush() {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.streaming && !w.whole {
		w.startStream()
	}
}

// startStream hands the response to RoundTrip with a body that streams:
// what was buffered, then what the handler writes through the pipe.
func (w *responseWriter) startStream() {
	w.streaming = true
	ex := w.ex
	ex.mu.Lock()
	if ex.aborted != nil {
		w.err = ex.aborted
		ex.mu.Unlock()
		w.fail(ex.aborted) // nobody waits for it; writes fail from now on
		return
	}
	stream := newStreamPipe()
	stream.buf, w.buf = w.buf, nil // what was held goes first
	ex.stream = stream
	ex.mu.Unlock()
	w.stream = stream
	w.deliver(&responseBody{r: stream, ex: ex, ctx: w.req.Context()}, -1)
}

// run serves the request and then ends the response: a buffered body is
// handed over whole, a streaming one is closed (EOF once read).
func (w *responseWriter) run(h http.Handler, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			// http.ErrAbortHandler (or a panic the server let through): the
			// client sees a dropped connection, as with net/http, which
			// also logs any other panic.
			if v != http.ErrAbortHandler {
				w.logger.Error("fake: panic serving request", "method", r.Method, "path", r.URL.Path,
					"panic", v, "stack", string(debug.Stack()))
			}
			if w.streaming {
				if w.stream != nil {
					w.stream.CloseWrite(errAborted)
				}
				return
			}
			w.fail(errAborted)
		}
	}()
	h.ServeHTTP(w, r)
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.streaming {
		w.deliver(&responseBody{r: bytes.NewReader(w.buf), ex: w.ex, ctx: w.req.Context()}, int64(len(w.buf)))
		return
	}
	if w.stream != nil { // nil: aborted before the stream started
		w.stream.CloseWrite(nil)
	}
}

// deliver hands the response to RoundTrip.
func (w *responseWriter) deliver(body io.ReadCloser, length int64) {
	if w.delivered {
		return
	}
	w.delivered = true
	h := w.sent
	var te []string
	if h.Get("Transfer-Encoding") != "" || length < 0 {
		// net/http moves the transfer coding out of the header map.
		h.Del("Transfer-Encoding")
		te = []string{"chunked"}
	}
	if length >= 0 {
		h.Set("Content-Length", strconv.FormatInt(length, 10))
	}
	w.ex.resp = &http.Response{
		Status:           strconv.Itoa(w.code) + " " + http.StatusText(w.code),
		StatusCode:       w.code,
		Proto:            "HTTP/1.1",
		ProtoMajor:       1,
		ProtoMinor:       1,
		Header:           h,
		Body:             body,
		ContentLength:    length,
		TransferEncoding: te,
		Request:          w.req,
	}
	close(w.ex.ready)
}

// fail makes RoundTrip return err instead of a response.
func (w *responseWriter) fail(err error) {
	if w.delivered {
		return
	}
	w.delivered = true
	w.ex.err = err
	close(w.ex.ready)
}

// responseBody is the body of a response from the server: buffered bytes,
// or a stream fed by the handler. Closing it ends the exchange, so that a
// handler still writing (a watch) returns.
type responseBody struct {
	r      io.Reader
	ex     *exchange
	ctx    context.Context // the request's
	closed atomic.Bool
}

// Read implements io.Reader. As with net/http, reading fails once the body
// is closed or the request's context is done, and a stream cut short
// reports why (the context's error, the Fake closing, the handler
// aborting).
func (b *responseBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errBodyClosed
	}
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	return b.r.Read(p)
}

// Close implements io.Closer. It may be called concurrently with Read, and
// more than once.
func (b *responseBody) Close() error {
	if !b.closed.Swap(true) {
		b.ex.abort(errBodyClosed)
	}
	return nil
}
