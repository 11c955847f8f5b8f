package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds, in real time, how long a test waits for something
// that should happen at once.
const waitLimit = 20 * time.Second

// maxRetry is the longest a candidate that does not lead waits between
// two attempts: RetryPeriod with the largest jitter.
const maxRetry = DefaultRetryPeriod + time.Duration(JitterFactor*float64(DefaultRetryPeriod))

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	ns        = "kube-system"
	leaseName = "ctrl"
)

// world is a Fake, a fake clock shared by every candidate, and a record of
// who believed it led when, in fake time.
type world struct {
	t     *testing.T
	f     *fake.Fake
	clock *clocktest.FakeClock
	ctx   context.Context

	// jitter, if set, is every candidate's source of jitter; otherwise
	// each has a random source of its own, seeded by its place.
	jitter func() float64

	mu         sync.Mutex
	intervals  []interval // every leading term, in order of start
	candidates []*candidate
	newLeaders map[string][]string // identity -> OnNewLeader calls
}

// interval is a term of leading, [start, end) in fake time; open while
// end is zero.
type interval struct {
	identity   string
	start, end time.Time
}

func newWorld(t *testing.T) *world {
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit)
	t.Cleanup(cancel)
	return &world{t: t, f: fake.New(t), clock: clocktest.NewFakeClock(epoch), ctx: ctx, newLeaders: map[string][]string{}}
}

// candidate is one running LeaderElector, with a transport that drops all
// its requests while partitioned.
type candidate struct {
	identity    string
	le          *LeaderElector
	cancel      context.CancelFunc
	done        chan struct{}
	err         error
	partitioned atomic.Bool
	worked      atomic.Int32 // OnStartedLeading calls returned
}

type partitionTransport struct {
	next http.RoundTripper
	c    *candidate
}

func (p partitionTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.c.partitioned.Load() {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("partitioned: request dropped")
	}
	return p.next.RoundTrip(r)
}

// config is the election of the tests: client-go's defaults on the fake
// clock.
func (w *world) config(identity string) Config {
	return Config{
		Namespace: ns, Name: leaseName, Identity: identity,
		Clock:            w.clock,
		OnStartedLeading: func(ctx context.Context) { <-ctx.Done() },
		OnNewLeader: func(id string) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.newLeaders[identity] = append(w.newLeaders[identity], id)
		},
	}
}

// start runs a candidate with cfg until it returns or the test ends.
func (w *world) start(cfg Config) *candidate {
	w.t.Helper()
	c := &candidate{identity: cfg.Identity, done: make(chan struct{})}
	ccfg := w.f.Config()
	ccfg.Transport = partitionTransport{ccfg.Transport, c}
	ccfg.QPS, ccfg.MaxRetries = -1, -1
	cl, err := client.New(ccfg)
	if err != nil {
		w.t.Fatal(err)
	}
	work := cfg.OnStartedLeading
	cfg.OnStartedLeading = func(ctx context.Context) {
		defer c.worked.Add(1)
		work(ctx)
	}
	c.le, err = New(cl, cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	c.le.trace = w.trace
	ctx, cancel := context.WithCancel(w.ctx)
	c.cancel = cancel
	w.t.Cleanup(func() { cancel(); <-c.done })
	w.mu.Lock()
	c.le.jitter = w.jitter
	if c.le.jitter == nil {
		c.le.jitter = rand.New(rand.NewPCG(1, uint64(len(w.candidates)))).Float64
	}
	w.candidates = append(w.candidates, c)
	w.mu.Unlock()
	go func() {
		defer close(c.done)
		c.err = c.le.Run(ctx)
	}()
	return c
}

// trace records terms and fails the test at once if two overlap.
func (w *world) trace(identity string, leading bool, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if leading {
		for _, iv := range w.intervals {
			if iv.end.IsZero() {
				w.t.Errorf("split brain: %s leads from %v while %s still leads (since %v)", identity, at.Sub(epoch), iv.identity, iv.start.Sub(epoch))
			} else if iv.end.After(at) {
				w.t.Errorf("split brain: %s leads from %v while %s leads [%v, %v)", identity, at.Sub(epoch), iv.identity, iv.start.Sub(epoch), iv.end.Sub(epoch))
			}
		}
		w.intervals = append(w.intervals, interval{identity: identity, start: at})
		return
	}
	for i := len(w.intervals) - 1; i >= 0; i-- {
		if w.intervals[i].identity == identity && w.intervals[i].end.IsZero() {
			w.intervals[i].end = at
			return
		}
	}
	w.t.Errorf("%s stopped leading at %v without having started", identity, at.Sub(epoch))
}

// settle waits until every running candidate waits on the clock with no
// request in flight: a follower on one timer (its next attempt), a leader
// on two (its next renewal and its deadline).
func (w *world) settle() {
	w.t.Helper()
	deadline := time.Now().Add(waitLimit)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		want := 0
		w.mu.Lock()
		for _, c := range w.candidates {
			select {
			case <-c.done:
				continue
			default:
			}
			want++
			if c.le.IsLeader() {
				want++
			}
		}
		w.mu.Unlock()
		if w.clock.Timers() == want {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("candidates did not settle: %d timers, want %d", w.clock.Timers(), want)
		}
		<-poll.C
	}
}

// step moves the clock by d in steps of at most one second, settling
// after each.
func (w *world) step(d time.Duration) {
	w.t.Helper()
	for d > 0 {
		s := min(d, time.Second)
		w.clock.Step(s)
		d -= s
		w.settle()
	}
}

// leaders returns the candidates that believe they lead.
func (w *world) leaders() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for _, c := range w.candidates {
		if c.le.IsLeader() {
			ids = append(ids, c.identity)
		}
	}
	return ids
}

// leader returns the only leader, failing the test if there is not
// exactly one.
func (w *world) leader() string {
	w.t.Helper()
	l := w.leaders()
	if len(l) != 1 {
		w.t.Fatalf("leaders at %v: %v, want exactly one", w.clock.Now().Sub(epoch), l)
	}
	return l[0]
}

func (w *world) lease() *coordinationv1.Lease {
	w.t.Helper()
	l, err := client.For[coordinationv1.Lease](w.f.Client()).Namespace(ns).Get(w.ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return l
}

// wait waits for c's Run to return.
func (w *world) wait(c *candidate) error {
	w.t.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(waitLimit):
		w.t.Fatalf("%s: Run did not return", c.identity)
		return nil
	}
}

// terms returns the identities of the terms so far, in order.
func (w *world) terms() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for _, iv := range w.intervals {
		ids = append(ids, iv.identity)
	}
	return ids
}

// newLeaderCalls returns identity's OnNewLeader calls once the last one is
// want's last (they are made on their own goroutine), and checks they are
// want.
func (w *world) checkNewLeaderCalls(identity string, want ...string) {
	w.t.Helper()
	deadline := time.Now().Add(waitLimit)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		w.mu.Lock()
		got := slices.Clone(w.newLeaders[identity])
		w.mu.Unlock()
		if len(got) > 0 && got[len(got)-1] == want[len(want)-1] || time.Now().After(deadline) {
			if !slices.Equal(got, want) {
				w.t.Errorf("%s's OnNewLeader calls %v, want %v", identity, got, want)
			}
			return
		}
		<-poll.C
	}
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q", *p)
}
