package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// publicPaths may be read without credentials, as kube-apiserver's default
// system:public-info-viewer role allows anonymous requests to do.
var publicPaths = map[string]bool{
	"/healthz": true, "/livez": true, "/readyz": true, "/version": true, "/version/": true,
}

// requireToken lets through requests that carry "Authorization: Bearer
// token" and answers the others with kube-apiserver's 401 Status. A request
// with no Authorization header is anonymous and may read publicPaths; a
// request with a wrong token is refused on every path, as kube-apiserver
// refuses failed authentication rather than falling back to anonymous.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth == "" && publicPaths[r.URL.Path] && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		scheme, got, ok := strings.Cut(auth, " ")
		// Hashing first makes the comparison constant-time whatever the
		// lengths.
		gotSum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(gotSum[:], want[:]) != 1 {
			unauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unauthorized writes the body kube-apiserver sends for a failed
// authentication: {"kind":"Status",...,"message":"Unauthorized","reason":"Unauthorized","code":401}.
func unauthorized(w http.ResponseWriter) {
	b, err := kjson.Marshal(metav1.NewUnauthorized("Unauthorized"))
	if err != nil {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(append(b, '\n'))
}

// endWatchesWith ends watch requests when stop ends, leaving other requests
// alone, so that a graceful shutdown can end the streams that would otherwise
// keep their connections busy until the shutdown deadline.
func endWatchesWith(stop context.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isWatch(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		unregister := context.AfterFunc(stop, cancel)
		defer unregister()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// isWatch tells a watch request as the apiserver does: a GET with a watch
// parameter that is present and not "0" or "false".
func isWatch(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	if !q.Has("watch") {
		return false
	}
	v := q.Get("watch")
	return v != "0" && !strings.EqualFold(v, "false")
}

// logRequests logs each request at debug level once it is answered.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code == 0 {
			rec.code = http.StatusOK
		}
		logger.LogAttrs(r.Context(), slog.LevelDebug, "request",
			slog.String("method", r.Method),
			slog.String("uri", r.URL.RequestURI()),
			slog.Int("code", rec.code),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", r.RemoteAddr),
			slog.String("userAgent", r.UserAgent()))
	})
}

// statusRecorder remembers the status code of a response. It keeps the
// writer's Flush (watches need it) and exposes the writer to
// http.ResponseController through Unwrap.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
