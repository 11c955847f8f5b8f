package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// inflightClass reads a request's verb and subresource as kube-apiserver's
// request info does, and counts what its long-running check leaves out.
func TestInflightClass(t *testing.T) {
	for _, c := range []struct {
		method, path          string
		longRunning, mutating bool
	}{
		{"GET", "/api/v1/namespaces/ns/pods", false, false},
		{"GET", "/api/v1/namespaces/ns/pods/p", false, false},
		{"HEAD", "/api/v1/namespaces/ns/pods/p", false, false},
		{"GET", "/api/v1/pods?watch=true", true, false},
		{"GET", "/api/v1/pods?watch=1", true, false},
		{"GET", "/api/v1/pods?watch=false", false, false},
		{"GET", "/api/v1/pods?watch=0", false, false},
		{"GET", "/api/v1/watch/namespaces/ns/pods", true, false},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments?watch=true", true, false},
		{"GET", "/apis/apps/v1/watch/deployments", true, false},
		// a name: get, whatever the watch parameter says
		{"GET", "/api/v1/namespaces/ns/pods/p?watch=true", false, false},
		{"POST", "/api/v1/namespaces/ns/pods", false, true},
		{"PUT", "/api/v1/namespaces/ns/pods/p", false, true},
		{"PATCH", "/api/v1/namespaces/ns/pods/p", false, true},
		{"DELETE", "/api/v1/namespaces/ns/pods/p", false, true},
		{"DELETE", "/api/v1/namespaces/ns/pods", false, true},
		{"OPTIONS", "/api/v1/namespaces/ns/pods", false, true},
		{"PUT", "/api/v1/namespaces/ns/status", false, true},
		{"PUT", "/api/v1/namespaces/ns/finalize", false, true},
		{"GET", "/api/v1/namespaces/ns", false, false},
		{"GET", "/api/v1/namespaces/ns/pods/p/log", true, false},
		{"GET", "/api/v1/namespaces/ns/pods/p/log?follow=false", true, false},
		{"POST", "/api/v1/namespaces/ns/pods/p/exec", true, true},
		{"GET", "/api/v1/namespaces/ns/pods/p/exec", true, false},
		{"POST", "/api/v1/namespaces/ns/pods/p/attach", true, true},
		{"POST", "/api/v1/namespaces/ns/pods/p/portforward", true, true},
		{"GET", "/api/v1/namespaces/ns/pods/p/proxy/some/path", true, false},
		{"POST", "/api/v1/namespaces/ns/services/s/proxy", true, true},
		{"GET", "/api/v1/proxy/namespaces/ns/pods/p", true, true},
		{"POST", "/api/v1/namespaces/ns/pods/p/eviction", false, true},
		{"POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", false, true},
		{"PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale", false, true},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/d/status", false, false},
		// non-resource requests: the verb is the method
		{"GET", "/healthz", false, false},
		{"HEAD", "/healthz", false, true},
		{"GET", "/version", false, false},
		{"GET", "/api", false, false},
		{"GET", "/api/v1", false, false},
		{"GET", "/apis/apps", false, false},
		{"GET", "/apis/apps/v1", false, false},
		{"GET", "/openapi/v3/apis/apps/v1", false, false},
		{"POST", "/apis/apps/v1", false, true},
		{"GET", "/debug/pprof/profile", true, false},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		lr, mut := inflightClass(r)
		if lr != c.longRunning || mut != c.mutating {
			t.Errorf("%s %s: long-running %v, mutating %v; want %v, %v", c.method, c.path, lr, mut, c.longRunning, c.mutating)
		}
	}
}

// The bounds: each is full at its size for users outside system:masters,
// independently of the other, and frees a slot when a request ends;
// long-running requests take none; zero is the default, negative none.
func TestInFlightAdmit(t *testing.T) {
	user := User{Name: "u", Groups: []string{"system:authenticated"}}
	l := newInFlight(2, 1)
	get := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps/c", nil)
	post := httptest.NewRequest("POST", "/api/v1/namespaces/ns/configmaps", nil)
	watch := httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps?watch=1", nil)

	admit := func(r *http.Request, u User, want bool) func() {
		t.Helper()
		release, ok := l.admit(r, u)
		if ok != want {
			t.Fatalf("%s %s by %s: admitted %v, want %v", r.Method, r.URL, u.Name, ok, want)
		}
		return release
	}
	m1 := admit(post, user, true)
	admit(post, user, false)
	admit(post, AdminUser, true)() // system:masters: served beyond the bound
	r1 := admit(get, user, true)   // the read-only bound is another
	r2 := admit(get, user, true)
	admit(get, user, false)
	for range 10 {
		admit(watch, user, true) // not counted
	}
	m1()
	m2 := admit(post, user, true)
	admit(post, user, false)
	r1()
	admit(get, user, true)
	admit(get, user, false)
	m2()
	r2()

	if d := newInFlight(0, 0); cap(d.readOnly) != 400 || cap(d.mutating) != 200 {
		t.Errorf("default bounds %d and %d, want 400 and 200", cap(d.readOnly), cap(d.mutating))
	}
	none := newInFlight(-1, -1)
	for range 1000 {
		if _, ok := none.admit(post, user); !ok {
			t.Fatal("a negative bound refused a request")
		}
	}
}

// tooManyRequests answers as kube-apiserver's max-in-flight filter, whose
// answer the conformance case TestMaxInFlight compares with a capture.
func TestTooManyRequests(t *testing.T) {
	rec := httptest.NewRecorder()
	tooManyRequests(rec)
	if rec.Code != http.StatusTooManyRequests || rec.Body.String() != "Too many requests, please try again later.\n" {
		t.Errorf("%d %q", rec.Code, rec.Body)
	}
	for k, v := range map[string]string{"Retry-After": "1", "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

// heldWriter is a ResponseWriter whose first Write signals written and then
// waits for release: the request it answers stays in flight until then.
type heldWriter struct {
	*httptest.ResponseRecorder
	written chan struct{}
	release chan struct{}
}

func newHeldWriter() *heldWriter {
	return &heldWriter{ResponseRecorder: httptest.NewRecorder(), written: make(chan struct{}), release: make(chan struct{})}
}

func (w *heldWriter) Write(b []byte) (int, error) {
	select {
	case <-w.written:
	default:
		close(w.written)
		<-w.release
	}
	return w.ResponseRecorder.Write(b)
}

// hold serves r with a heldWriter and returns once the server is writing
// its answer; the returned function releases it and waits for the end.
func hold(t *testing.T, s *Server, r *http.Request) func() *httptest.ResponseRecorder {
	t.Helper()
	w := newHeldWriter()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(w, r)
	}()
	select {
	case <-w.written:
	case <-done:
		t.Fatalf("%s %s was answered without a write", r.Method, r.URL)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s: no answer", r.Method, r.URL)
	}
	return func() *httptest.ResponseRecorder {
		close(w.release)
		<-done
		return w.ResponseRecorder
	}
}

// Through ServeHTTP: a request held in flight fills the read-only bound; a
// user's next read gets 429, while system:masters is still served and the
// mutating bound is another; the slot comes back at the end.
func TestInFlightServeHTTP(t *testing.T) {
	s, err := New(Config{MaxRequestsInFlight: 1, MaxMutatingRequestsInFlight: 1,
		Authentication:                  &Authentication{Tokens: map[string]User{"user": {Name: "u"}, "admin": AdminUser}},
		DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	request := func(method, path, token string) *http.Request {
		r := httptest.NewRequest(method, path, strings.NewReader(`{"metadata":{"name":"c"}}`))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	do := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	end := hold(t, s, request("GET", "/api/v1/namespaces", "user"))
	if w := do(request("GET", "/api/v1/namespaces/default", "user")); w.Code != http.StatusTooManyRequests || w.Body.String() != tooManyRequestsBody ||
		w.Header().Get("Retry-After") != "1" || w.Header().Get("Cache-Control") != "no-cache, private" {
		t.Errorf("beyond the bound: %d %v %q", w.Code, w.Header(), w.Body)
	}
	if w := do(request("GET", "/api/v1/namespaces/default", "admin")); w.Code != http.StatusOK {
		t.Errorf("system:masters beyond the bound: %d %s", w.Code, w.Body)
	}
	if w := do(request("POST", "/api/v1/namespaces/default/configmaps", "user")); w.Code != http.StatusCreated {
		t.Errorf("a write while the read-only bound is full: %d %s", w.Code, w.Body)
	}
	if rec := end(); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "NamespaceList") {
		t.Errorf("held list: %d %s", rec.Code, rec.Body)
	}
	if w := do(request("GET", "/api/v1/namespaces/default", "user")); w.Code != http.StatusOK {
		t.Errorf("after the end: %d %s", w.Code, w.Body)
	}
}
