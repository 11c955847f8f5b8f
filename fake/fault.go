package fake

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/workqueue"
)

// Faults configure the faults a Fake injects into its clients' requests, so
// that a test can prove a controller converges when the API server and the
// network misbehave. The zero value injects nothing.
//
// Each rate is the probability (0 to 1) that one request gets that fault;
// a request gets at most one failing fault (the first drawn, in the order of
// the fields below) and may also be slowed. Each fault looks exactly as the
// real kube-apiserver's answer looks, so the client reports it with its usual
// typed errors (client.IsConflict, client.IsResourceExpired, …).
//
// # Determinism
//
// Whether a request gets a fault is decided from Seed, the request's verb,
// resource, subresource, namespace and name, and how many requests with that
// same verb, resource, subresource, namespace and name the Fake received
// before it. The same seed and the same requests therefore give the same
// faults, on every run, also when requests about different objects (or of
// different verbs) run concurrently, as a controller's workers do: their
// interleaving does not change which request fails. Only the order of
// concurrent requests with the same verb on the same object (or two
// concurrent lists or watches of the same resource and namespace) is left to
// the scheduler; so is whether a truncated or dropped watch has events to
// carry before it ends, which depends on when the writes it watches happen.
//
// Faults apply to the requests of the Fake's clients, not to seeding, and
// are decided before reactors see the request (a fault stands for the
// server and the network in front of everything else). [Fake.FaultCounts]
// tells how many faults of each kind were injected, and [Fake.StopFaults]
// stops injecting them, typically before checking that the controller
// converged.
type Faults struct {
	// Seed seeds the decisions. Log it and set it again to replay a run.
	Seed uint64

	// InternalError answers a request with 500 InternalError, as a server
	// failing transiently does: "Internal error occurred: …" (any verb).
	InternalError float64
	// TooManyRequests answers a request with 429 and a Retry-After header,
	// as kube-apiserver's priority and fairness (or max-in-flight) filter
	// does: that answer is text, not a Status, and the client makes up the
	// TooManyRequests Status with RetryAfterSeconds from the header (any
	// verb). The client retries such requests by itself unless the Fake's
	// Options.MaxRetries is negative, waiting the Retry-After delay on the
	// wall clock.
	TooManyRequests float64
	// Conflict answers an update or a patch (also of the status) with 409
	// Conflict, as when another writer updated the object first:
	// `Operation cannot be fulfilled on configmaps "x": the object has been
	// modified; please apply your changes to the latest version and try
	// again`.
	Conflict float64
	// ExpiredContinue answers a list that carries a continue token with 410
	// Expired, as when the token's resourceVersion has been compacted
	// away: the client must start the list again.
	ExpiredContinue float64
	// ExpiredWatch answers a watch with 200 and one ERROR event holding the
	// 410 Expired Status ("The resourceVersion for the provided watch is too
	// old."), as for a watch from a compacted resourceVersion: the client
	// must list again.
	ExpiredWatch float64
	// TruncateWatch serves a watch that breaks in the middle of an event,
	// as a connection that drops: after a few complete events (0 to
	// WatchEvents-1, drawn from the seed), half of the next one, then the
	// stream fails with io.ErrUnexpectedEOF.
	TruncateWatch float64
	// DropWatch serves a watch that ends cleanly after a few events (0 to
	// WatchEvents-1, drawn from the seed), as when a server or load
	// balancer closes a watch early: the client must watch again from the
	// last resourceVersion it saw.
	DropWatch float64
	// Slow delays a request by SlowDelay before it is answered (any verb;
	// it combines with the faults above).
	Slow float64

	// RetryAfterSeconds is the Retry-After of TooManyRequests (default 1).
	RetryAfterSeconds int
	// WatchEvents bounds the events a truncated or dropped watch carries
	// (default 3).
	WatchEvents int
	// SlowDelay is how long Slow delays a request (default 100ms).
	SlowDelay time.Duration
	// Clock times SlowDelay (default workqueue.RealClock). With a
	// clocktest.FakeClock a slowed request waits until the test steps the
	// clock past its delay; its timer is armed before the request reaches
	// the server.
	Clock workqueue.Clock

	// Verbs limits faults to requests with these Kubernetes verbs (get,
	// list, watch, create, update, patch, delete, deletecollection);
	// empty means every verb.
	Verbs []string
	// Resources limits faults to requests for these resources, written as
	// for Fake.PrependReactor ("pods", "pods/status", "*/status"); empty
	// means every resource.
	Resources []string
}

// FaultKind names a kind of injected fault in [Fake.FaultCounts].
type FaultKind string

// The kinds of faults, one per rate of [Faults].
const (
	FaultInternalError   FaultKind = "InternalError"
	FaultTooManyRequests FaultKind = "TooManyRequests"
	FaultConflict        FaultKind = "Conflict"
	FaultExpiredContinue FaultKind = "ExpiredContinue"
	FaultExpiredWatch    FaultKind = "ExpiredWatch"
	FaultTruncateWatch   FaultKind = "TruncateWatch"
	FaultDropWatch       FaultKind = "DropWatch"
	FaultSlow            FaultKind = "Slow"
)

// tooManyRequestsBody is what kube-apiserver's priority and fairness and
// max-in-flight filters write with a 429 (http.Error, so text/plain).
const tooManyRequestsBody = "Too many requests, please try again later.\n"

// validate checks the rates and fills in the defaults.
func (c *Faults) validate() error {
	for _, r := range []struct {
		name string
		p    float64
	}{
		{"InternalError", c.InternalError}, {"TooManyRequests", c.TooManyRequests}, {"Conflict", c.Conflict},
		{"ExpiredContinue", c.ExpiredContinue}, {"ExpiredWatch", c.ExpiredWatch},
		{"TruncateWatch", c.TruncateWatch}, {"DropWatch", c.DropWatch}, {"Slow", c.Slow},
	} {
		if !(r.p >= 0 && r.p <= 1) {
			return fmt.Errorf("fake: Faults.%s is %v, want a probability from 0 to 1", r.name, r.p)
		}
	}
	if c.RetryAfterSeconds <= 0 {
		c.RetryAfterSeconds = 1
	}
	if c.WatchEvents <= 0 {
		c.WatchEvents = 3
	}
	if c.SlowDelay <= 0 {
		c.SlowDelay = 100 * time.Millisecond
	}
	if c.Clock == nil {
		c.Clock = workqueue.RealClock{}
	}
	return nil
}

// injector decides and counts the faults of a Fake.
type injector struct {
	cfg     Faults
	stopped atomic.Bool

	mu      sync.Mutex
	ordinal map[string]uint64 // requests seen per identity (verb, resource, object)
	counts  map[FaultKind]int
}

// newInjector returns the injector for cfg (already validated), or nil when
// cfg injects nothing.
func newInjector(cfg Faults) *injector {
	if cfg.InternalError == 0 && cfg.TooManyRequests == 0 && cfg.Conflict == 0 && cfg.ExpiredContinue == 0 &&
		cfg.ExpiredWatch == 0 && cfg.TruncateWatch == 0 && cfg.DropWatch == 0 && cfg.Slow == 0 {
		return nil
	}
	return &injector{cfg: cfg, ordinal: map[string]uint64{}, counts: map[FaultKind]int{}}
}

// fault is what the injector decided for one request.
type fault struct {
	kind   FaultKind     // the failing fault, "" for none
	events int           // for TruncateWatch and DropWatch: the complete events sent
	delay  time.Duration // for Slow, 0 otherwise

	retryAfterSeconds int // for TooManyRequests
}

// decide draws the faults of action a.
func (in *injector) decide(a Action) fault {
	if in == nil || in.stopped.Load() || !in.applies(a) {
		return fault{}
	}
	id := a.Verb + "\x00" + a.Resource.Group + "\x00" + a.Resource.Resource + "\x00" + a.Subresource + "\x00" + a.Namespace + "\x00" + a.Name
	in.mu.Lock()
	n := in.ordinal[id]
	in.ordinal[id] = n + 1
	in.mu.Unlock()
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write(strconv.AppendUint(nil, n, 10))
	rng := rand.New(rand.NewPCG(in.cfg.Seed, h.Sum64()))

	d := fault{retryAfterSeconds: in.cfg.RetryAfterSeconds}
	// Every candidate draws, applicable or not, so that one rate does not
	// shift the draws of the others.
	hit := func(p float64, applies bool) bool { return rng.Float64() < p && applies }
	if hit(in.cfg.Slow, true) {
		d.delay = in.cfg.SlowDelay
	}
	isWatch := a.Verb == "watch"
	switch {
	case hit(in.cfg.InternalError, true):
		d.kind = FaultInternalError
	case hit(in.cfg.TooManyRequests, true):
		d.kind = FaultTooManyRequests
	case hit(in.cfg.Conflict, a.Verb == "update" || a.Verb == "patch"):
		d.kind = FaultConflict
	case hit(in.cfg.ExpiredContinue, a.Verb == "list" && a.Query.Get("continue") != ""):
		d.kind = FaultExpiredContinue
	case hit(in.cfg.ExpiredWatch, isWatch):
		d.kind = FaultExpiredWatch
	case hit(in.cfg.TruncateWatch, isWatch):
		d.kind = FaultTruncateWatch
	case hit(in.cfg.DropWatch, isWatch):
		d.kind = FaultDropWatch
	}
	d.events = rng.IntN(in.cfg.WatchEvents)
	in.mu.Lock()
	if d.delay > 0 {
		in.counts[FaultSlow]++
	}
	if d.kind != "" {
		in.counts[d.kind]++
	}
	in.mu.Unlock()
	return d
}

// applies reports whether a passes the Verbs and Resources filters.
func (in *injector) applies(a Action) bool {
	ok := len(in.cfg.Verbs) == 0
	for _, v := range in.cfg.Verbs {
		ok = ok || v == a.Verb
	}
	if !ok {
		return false
	}
	if len(in.cfg.Resources) == 0 {
		return true
	}
	for _, r := range in.cfg.Resources {
		if resourceMatches(r, a.Resource.Resource, a.Subresource) {
			return true
		}
	}
	return false
}

// wait sleeps for d on the configured clock, or until ctx ends or the Fake
// closes.
func (in *injector) wait(ctx context.Context, d time.Duration, closing <-chan struct{}) error {
	t := in.cfg.Clock.NewTimerAt(in.cfg.Clock.Now().Add(d))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-closing:
		return errClosed
	}
}

// respond is the answer of a fault that replaces the server's, or nil when
// the request goes on (perhaps to be served by wrap).
func (d fault) respond(req *http.Request, a Action) *http.Response {
	gr := metav1.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}
	switch d.kind {
	case FaultInternalError:
		return statusResponse(req, metav1.NewInternalError(errors.New("injected by fake.Faults")))
	case FaultTooManyRequests:
		h := http.Header{}
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Retry-After", strconv.Itoa(d.retryAfterSeconds))
		return response(req, http.StatusTooManyRequests, h, []byte(tooManyRequestsBody))
	case FaultConflict:
		return statusResponse(req, metav1.NewConflict(gr, a.Name, errors.New(metav1.OptimisticLockErrorMsg)))
	case FaultExpiredContinue:
		return statusResponse(req, metav1.NewContinueExpired(""))
	case FaultExpiredWatch:
		return watchStatusResponse(req, metav1.NewWatchExpired())
	}
	return nil
}

// watchStatusResponse is a watch that sends one ERROR event holding st and
// ends, as kube-apiserver answers a watch it cannot serve (golden 104).
func watchStatusResponse(req *http.Request, st *metav1.Status) *http.Response {
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	var buf bytesWriter
	h := http.Header{}
	if mt, err := codec.Negotiate(req.Header.Get("Accept"), offersJSONProtobuf); err == nil && mt.Subtype == mtProtobuf.Subtype {
		if b, err := codec.MarshalProtobuf(st.TypeMeta, st); err == nil && codec.NewProtobufWatchEncoder(&buf).Encode("ERROR", b) == nil {
			h.Set("Content-Type", codec.MediaTypeProtobufWatch)
			return response(req, http.StatusOK, h, []byte(buf))
		}
	}
	b, err := kjson.Marshal(st)
	if err == nil {
		err = codec.NewJSONWatchEncoder(&buf).Encode("ERROR", b)
	}
	if err != nil {
		return statusResponse(req, metav1.NewInternalError(fmt.Errorf("fake: encoding an injected watch error: %w", err)))
	}
	h.Set("Content-Type", codec.MediaTypeJSON)
	return response(req, http.StatusOK, h, []byte(buf))
}

// bytesWriter collects what is written to it.
type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// wrap returns the handler serving a request with fault d: next itself, or
// next behind a writer that cuts or ends the watch stream.
func (d fault) wrap(next http.Handler) http.Handler {
	if d.kind != FaultTruncateWatch && d.kind != FaultDropWatch {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		cw := &cuttingWriter{ResponseWriter: w, left: d.events, truncate: d.kind == FaultTruncateWatch, cancel: cancel}
		next.ServeHTTP(cw, r.WithContext(ctx))
	})
}

// cuttingWriter passes a watch's first events through and then ends the
// stream: cleanly (drop), by ending the handler's context and refusing
// further events, or (truncate) in the middle of the next event, by
// aborting the handler as a broken connection does. Watch encoders write
// one event per Write.
type cuttingWriter struct {
	http.ResponseWriter
	left     int  // complete events still to pass through
	truncate bool // cut the next event in half rather than end cleanly
	cancel   context.CancelFunc
}

// errDropped is what the server's writes of a dropped watch get.
var errDropped = errors.New("fake: watch dropped by fake.Faults")

func (c *cuttingWriter) Write(p []byte) (int, error) {
	if c.left > 0 {
		c.left--
		n, err := c.ResponseWriter.Write(p)
		if c.left == 0 && !c.truncate {
			c.Flush()
			c.cancel()
		}
		return n, err
	}
	if !c.truncate {
		c.cancel()
		return 0, errDropped
	}
	_, _ = c.ResponseWriter.Write(p[:len(p)/2])
	c.Flush()
	panic(http.ErrAbortHandler) // the connection breaks mid-event
}

// WriteHeader ends a dropped watch that is to carry no event as soon as it
// has started.
func (c *cuttingWriter) WriteHeader(code int) {
	c.ResponseWriter.WriteHeader(code)
	if c.left == 0 && !c.truncate {
		c.cancel()
	}
}

func (c *cuttingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// FaultCounts returns how many faults of each kind the Fake has injected
// (kinds never injected are absent). A fault is counted when it is decided:
// a truncated watch that ends before its cut (its context done, the Fake
// closed) is counted too.
func (f *Fake) FaultCounts() map[FaultKind]int {
	out := map[FaultKind]int{}
	if f.faults == nil {
		return out
	}
	f.faults.mu.Lock()
	defer f.faults.mu.Unlock()
	for k, n := range f.faults.counts {
		out[k] = n
	}
	return out
}

// StopFaults stops injecting faults: requests from now on are served as
// configured without Options.Faults (requests already slowed or cut keep
// their fault). It cannot be undone; a test calls it when the chaos is over,
// before checking that its controller converged.
func (f *Fake) StopFaults() {
	if f.faults != nil {
		f.faults.stopped.Store(true)
	}
}
