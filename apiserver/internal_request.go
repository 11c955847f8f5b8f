package apiserver

import (
	"context"
	"net/http/httptest"
	"strings"
)

// serveInternal sends a request to the server itself, as a component of the
// cluster would (kube-apiserver's own controllers, kube-controller-manager's):
// through admission, defaulting and field management like any client's.
// userAgent names the field manager.
func (s *Server) serveInternal(ctx context.Context, method, path, body, userAgent string) (int, []byte) {
	req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// The field managers of the server's own writes, as a cluster names them.
const (
	managerAPIServer         = "kube-apiserver"
	managerControllerManager = "kube-controller-manager"
)
