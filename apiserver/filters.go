package apiserver

import "net/http"

// The request filters every request passes before its route (ServeHTTP).

// authenticateRequest finds who makes r (and whom it impersonates), and
// returns r with that user in its context; it answers 401 (400, 403 for
// impersonation) itself and returns false when r's credentials do not
// authenticate (authn.go, authn_impersonate.go).
func (s *Server) authenticateRequest(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	u := AdminUser
	if s.cfg.Authentication != nil {
		var err error
		if u, err = s.authenticate(r); err != nil {
			s.unauthorized(w, r)
			return r, false
		}
	}
	return s.impersonate(w, r.WithContext(withUser(r.Context(), u)))
}

// limitInFlight admits r within the in-flight bounds or answers 429 and
// returns false; release ends r's share.
func (s *Server) limitInFlight(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, ok = s.inflight.admit(r, s.requestUser(r)) // inflight.go
	if !ok {
		tooManyRequests(w)
	}
	return release, ok
}

// authorizeRequest asks the authorizer whether r's user may make r; it
// answers 403 itself and returns false when not (rbac_request.go).
func (s *Server) authorizeRequest(w http.ResponseWriter, r *http.Request) bool {
	return s.authorize(w, r)
}
