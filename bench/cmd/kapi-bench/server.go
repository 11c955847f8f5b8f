package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/bench/internal/sidekit"
)

// localServer is kapi's reference server on a loopback port, wrapped in a
// middleware that counts what each side asked for.
type localServer struct {
	url   string
	srv   *apiserver.Server
	hs    *http.Server
	done  chan struct{}
	stats *traffic
}

func startLocalServer() (*localServer, error) {
	srv, err := apiserver.New(apiserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	ls := &localServer{url: "http://" + ln.Addr().String(), srv: srv, done: make(chan struct{}), stats: newTraffic()}
	ls.hs = &http.Server{Handler: ls.stats.wrap(srv), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(ls.done)
		_ = ls.hs.Serve(ln)
	}()
	return ls, nil
}

func (ls *localServer) Close() {
	ls.srv.Close() // ends watches
	_ = ls.hs.Close()
	<-ls.done
}

// sideTraffic is what the server saw from one side (by User-Agent).
type sideTraffic struct {
	Lists, Watches, Other int
	Statuses              map[int]int
	ContentTypes          map[string]int
	Encodings             map[string]int // Content-Encoding of responses ("identity" if none)
	AcceptEncodings       map[string]int
	Bytes                 int64 // response body bytes written
	Failures              []string
	Requests              []string // the first few requests: method, URI, Accept, status, timing
}

func newSideTraffic() *sideTraffic {
	return &sideTraffic{Statuses: map[int]int{}, ContentTypes: map[string]int{}, Encodings: map[string]int{}, AcceptEncodings: map[string]int{}}
}

// traffic counts requests per side.
type traffic struct {
	mu       sync.Mutex
	sides    map[string]*sideTraffic
	inflight map[string]int
	changed  chan struct{} // closed (and replaced) when a request of any side ends
}

func newTraffic() *traffic {
	return &traffic{sides: map[string]*sideTraffic{}, inflight: map[string]int{}, changed: make(chan struct{})}
}

// take returns and resets what side did since the last take. It first
// waits (up to 10 s) for the side's requests in flight to end: a child's
// watch ends on the server only after the child has exited.
func (t *traffic) take(side string) *sideTraffic {
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.inflight[side] > 0 {
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-timeout.C:
			t.mu.Lock()
			return t.takeLocked(side)
		}
		t.mu.Lock()
	}
	return t.takeLocked(side)
}

func (t *traffic) takeLocked(side string) *sideTraffic {
	s := t.sides[side]
	delete(t.sides, side)
	if s == nil {
		s = newSideTraffic()
	}
	return s
}

func (t *traffic) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		side, ok := strings.CutPrefix(r.UserAgent(), sidekit.UserAgentPrefix)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		t.mu.Lock()
		t.inflight[side]++
		t.mu.Unlock()
		cw := &countingWriter{ResponseWriter: w, start: time.Now()}
		h.ServeHTTP(cw, r)
		end := time.Since(cw.start)
		q := r.URL.Query()
		t.mu.Lock()
		defer t.mu.Unlock()
		defer func() {
			t.inflight[side]--
			close(t.changed)
			t.changed = make(chan struct{})
		}()
		s := t.sides[side]
		if s == nil {
			s = newSideTraffic()
			t.sides[side] = s
		}
		switch {
		case r.Method == http.MethodGet && (q.Get("watch") == "true" || q.Get("watch") == "1"):
			s.Watches++
		case r.Method == http.MethodGet:
			s.Lists++
		default:
			s.Other++
		}
		code := cw.code
		if code == 0 {
			code = http.StatusOK
		}
		s.Statuses[code]++
		if ct := cw.Header().Get("Content-Type"); ct != "" {
			s.ContentTypes[ct]++
		}
		enc := cw.Header().Get("Content-Encoding")
		if enc == "" {
			enc = "identity"
		}
		s.Encodings[enc]++
		s.AcceptEncodings[r.Header.Get("Accept-Encoding")]++
		s.Bytes += cw.n
		if len(s.Requests) < 8 {
			first := time.Duration(0)
			if !cw.first.IsZero() {
				first = cw.first.Sub(cw.start)
			}
			s.Requests = append(s.Requests, fmt.Sprintf("%s %s (Accept: %s) → %d, %d bytes, first byte %s, %d flushes, done %s",
				r.Method, r.URL.RequestURI(), r.Header.Get("Accept"), code, cw.n, first.Round(time.Microsecond), cw.flushes, end.Round(time.Microsecond)))
		}
		if code >= 400 && len(s.Failures) < 5 {
			s.Failures = append(s.Failures, r.Method+" "+r.URL.RequestURI()+" -> "+http.StatusText(code)+": "+string(cw.head))
		}
	})
}

// countingWriter counts the bytes of a response and keeps its status and
// the start of an error body. It passes Flush on (watches need it).
type countingWriter struct {
	http.ResponseWriter
	code    int
	n       int64
	head    []byte
	start   time.Time
	first   time.Time
	flushes int
}

func (c *countingWriter) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	if c.code >= 400 && len(c.head) < 512 {
		c.head = append(c.head, b[:min(len(b), 512-len(c.head))]...)
	}
	if c.first.IsZero() {
		c.first = time.Now()
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Flush() {
	c.flushes++
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
