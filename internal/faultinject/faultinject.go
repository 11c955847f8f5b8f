// Package faultinject wraps an API server handler with the faults a real
// network and a real server produce, for convergence tests: dropped and
// truncated watch streams, 410 on watches and on continue tokens, 429 with
// Retry-After, and 500s. Faults are drawn from a seeded random source, so a
// failing run can be replayed from its seed.
package faultinject

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Config gives the probability of each fault per request (0 to 1).
type Config struct {
	Seed uint64
	// DropWatch ends a watch after a random short time (a clean end).
	DropWatch float64
	// TruncateWatch aborts a watch's connection in the middle of an event.
	TruncateWatch float64
	// GoneWatch answers a watch with a 410 Expired ERROR event.
	GoneWatch float64
	// ExpireContinue answers a list page that carries a continue token with
	// 410 Expired.
	ExpireContinue float64
	// TooManyRequests answers 429 with Retry-After: 1.
	TooManyRequests float64
	// InternalError answers 500.
	InternalError float64
	// MaxWatchLife bounds how long a dropped watch lives (default 200ms).
	MaxWatchLife time.Duration
}

// Handler injects faults in front of next.
type Handler struct {
	next http.Handler
	cfg  Config

	mu  sync.Mutex
	rng *rand.Rand

	enabled atomic.Bool
	// Counts of injected faults, by kind.
	counts sync.Map // string -> *atomic.Int64
}

// New wraps next. Faults start enabled.
func New(next http.Handler, cfg Config) *Handler {
	if cfg.MaxWatchLife <= 0 {
		cfg.MaxWatchLife = 200 * time.Millisecond
	}
	h := &Handler{next: next, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	h.enabled.Store(true)
	return h
}

// SetEnabled turns fault injection on or off (off: a transparent proxy).
func (h *Handler) SetEnabled(on bool) { h.enabled.Store(on) }

// Counts reports how many faults of each kind were injected.
func (h *Handler) Counts() map[string]int64 {
	out := map[string]int64{}
	h.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func (h *Handler) count(kind string) {
	v, _ := h.counts.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (h *Handler) roll(p float64) bool {
	if p <= 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rng.Float64() < p
}

func (h *Handler) duration(max time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Duration(h.rng.Int64N(int64(max)) + 1)
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`+"\n", msg, reason, code)
}

// ServeHTTP serves r, perhaps with a fault.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.enabled.Load() {
		h.next.ServeHTTP(w, r)
		return
	}
	q := r.URL.Query()
	watch := q.Has("watch") && q.Get("watch") != "0" && q.Get("watch") != "false"
	switch {
	case h.roll(h.cfg.InternalError):
		h.count("500")
		status(w, http.StatusInternalServerError, "InternalError", "injected internal error")
		return
	case h.roll(h.cfg.TooManyRequests):
		h.count("429")
		status(w, http.StatusTooManyRequests, "TooManyRequests", "injected: too many requests")
		return
	case r.Method == http.MethodGet && q.Get("continue") != "" && h.roll(h.cfg.ExpireContinue):
		h.count("continue-410")
		status(w, http.StatusGone, "Expired", "injected: the provided continue parameter is too old")
		return
	}
	if !watch {
		h.next.ServeHTTP(w, r)
		return
	}
	switch {
	case h.roll(h.cfg.GoneWatch):
		h.count("watch-410")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected: too old resource version","reason":"Expired","code":410}}`+"\n")
	case h.roll(h.cfg.TruncateWatch):
		h.count("watch-truncated")
		h.next.ServeHTTP(&truncatingWriter{ResponseWriter: w, after: int(h.duration(2000))}, r)
	case h.roll(h.cfg.DropWatch):
		h.count("watch-dropped")
		ctx, cancel := contextWithTimeout(r, h.duration(h.cfg.MaxWatchLife))
		defer cancel()
		h.next.ServeHTTP(w, r.WithContext(ctx))
	default:
		h.next.ServeHTTP(w, r)
	}
}

// truncatingWriter writes the first `after` bytes of the body, then half of
// the write that crosses that point, and aborts the connection.
type truncatingWriter struct {
	http.ResponseWriter
	after   int
	written int
}

func (t *truncatingWriter) Write(b []byte) (int, error) {
	if t.written+len(b) <= t.after {
		t.written += len(b)
		return t.ResponseWriter.Write(b)
	}
	cut := max(t.after-t.written, len(b)/2)
	_, _ = t.ResponseWriter.Write(b[:cut])
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler) // net/http closes the connection mid-body
}

func (t *truncatingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
