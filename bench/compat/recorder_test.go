package compat

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
)

// exchange is one request a client made and what it got back.
type exchange struct {
	method, path, accept, contentType string
	watch                             bool
	// initial: a list, or a watch with sendInitialEvents (a streaming
	// list, which client-go's informers use by default)
	initial bool
	status  int
	// partial reports whether the response body (read so far) carried a
	// PartialObjectMetadata or PartialObjectMetadataList: the kind's name
	// is in the body in JSON and in protobuf alike.
	partial *atomic.Bool
}

// recorder records the exchanges of a client (through rest.Config's
// WrapTransport, which leaves the client's behaviour as it is).
type recorder struct {
	mu  sync.Mutex
	log []exchange
}

func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		e := exchange{
			method: req.Method, path: req.URL.Path, accept: req.Header.Get("Accept"),
			watch:   req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1",
			partial: &atomic.Bool{},
		}
		e.initial = !e.watch || req.URL.Query().Get("sendInitialEvents") == "true"
		if resp != nil {
			e.contentType, e.status = resp.Header.Get("Content-Type"), resp.StatusCode
			resp.Body = &sniffer{ReadCloser: resp.Body, found: e.partial}
		}
		r.mu.Lock()
		r.log = append(r.log, e)
		r.mu.Unlock()
		return resp, err
	})
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// matching returns the exchanges of method on path.
func (r *recorder) matching(method, path string, watch bool) []exchange {
	var out []exchange
	for _, e := range r.exchanges() {
		if e.method == method && e.path == path && e.watch == watch {
			out = append(out, e)
		}
	}
	return out
}

// initialSyncs returns the lists and streaming lists (watches with
// sendInitialEvents) of path.
func (r *recorder) initialSyncs(path string) []exchange {
	var out []exchange
	for _, e := range r.exchanges() {
		if e.method == "GET" && e.path == path && e.initial {
			out = append(out, e)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

var partialKind = []byte("PartialObjectMetadata")

// sniffer passes a body through and sets found once partialKind went by.
type sniffer struct {
	io.ReadCloser
	found *atomic.Bool
	tail  []byte
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if n > 0 && !s.found.Load() {
		buf := append(s.tail, p[:n]...)
		if bytes.Contains(buf, partialKind) {
			s.found.Store(true)
		}
		s.tail = append(s.tail[:0], buf[max(0, len(buf)-len(partialKind)):]...)
	}
	return n, err
}
