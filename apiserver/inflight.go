package apiserver

import (
	"net/http"
	"slices"
	"strings"
)

// The in-flight limit, as kube-apiserver's max-in-flight filter (the one
// it runs with --enable-priority-and-fairness=false): two bounds, one for
// read-only requests (verbs get, list, watch) and one for every other
// request; a request beyond its bound gets 429 with Retry-After: 1 and a
// plain-text body, unless its user is in system:masters, which is always
// served. Long-running requests (watches, proxies, exec, attach,
// port-forward, logs) are not counted.

// Default bounds, kube-apiserver's defaults of --max-requests-inflight and
// --max-mutating-requests-inflight.
const (
	defaultMaxRequestsInFlight         = 400
	defaultMaxMutatingRequestsInFlight = 200
)

// tooManyRequestsBody is what kube-apiserver's max-in-flight filter
// answers beyond a bound (testdata/inflight/429.txt is its capture).
const tooManyRequestsBody = "Too many requests, please try again later.\n"

// privilegedGroup is exempt from the bounds, as kube-apiserver exempts it:
// its members always get an answer.
const privilegedGroup = "system:masters"

// inFlight holds the two bounds: a slot of a channel is a request served;
// a nil channel has no bound.
type inFlight struct {
	readOnly, mutating chan struct{}
}

// newInFlight makes the bounds of Config's MaxRequestsInFlight and
// MaxMutatingRequestsInFlight (0: the default, negative: no bound).
func newInFlight(readOnly, mutating int) inFlight {
	bound := func(n, def int) chan struct{} {
		switch {
		case n == 0:
			n = def
		case n < 0:
			return nil
		}
		return make(chan struct{}, n)
	}
	return inFlight{
		readOnly: bound(readOnly, defaultMaxRequestsInFlight),
		mutating: bound(mutating, defaultMaxMutatingRequestsInFlight),
	}
}

// admit takes a slot of r's bound for a request of user; ok is false when
// the bound is full and user is not privileged. release gives the slot
// back (it does nothing for requests not counted).
func (l inFlight) admit(r *http.Request, user User) (release func(), ok bool) {
	longRunning, mutating := inflightClass(r)
	c := l.readOnly
	if mutating {
		c = l.mutating
	}
	if longRunning || c == nil {
		return func() {}, true
	}
	select {
	case c <- struct{}{}:
		return func() { <-c }, true
	default:
		return func() {}, slices.Contains(user.Groups, privilegedGroup)
	}
}

// tooManyRequests answers a request beyond its bound, as kube-apiserver's
// filter does (net/http's plain-text error, not a Status).
func tooManyRequests(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(tooManyRequestsBody))
}

// inflightClass tells how the bounds count r, as kube-apiserver does from
// its request info (requestAttributes): long-running are the watch and
// proxy verbs, the attach, exec, proxy, log and portforward subresources,
// and the non-resource paths under /debug/pprof/; a request is mutating
// unless its verb is get, list or watch (a non-resource request's verb is
// its lower-case method, so only a GET of one is read-only).
func inflightClass(r *http.Request) (longRunning, mutating bool) {
	a := requestAttributes(r, User{})
	switch {
	case a.Verb == "watch" || a.Verb == "proxy":
		longRunning = true
	case a.ResourceRequest:
		switch a.Subresource {
		case "attach", "exec", "proxy", "log", "portforward":
			longRunning = true
		}
	default:
		longRunning = strings.HasPrefix(a.Path, "/debug/pprof/")
	}
	return longRunning, a.Verb != "get" && a.Verb != "list" && a.Verb != "watch"
}
