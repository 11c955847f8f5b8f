package informer_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/reflector"
)

// TestConvergenceUnderFaults runs an informer against a server that drops and
// truncates watches, answers 410 to watches and continue tokens, 429 and 500,
// and compacts its history aggressively, while random creates, updates and
// deletes go on. When the churn stops, the informer's cache must equal the
// server's list (same objects, same resourceVersions), and each handler's
// events must be consistent: no update before an add, nothing after a delete
// of that object, and the last event equal to the final state.
//
// Each seed is a different fault and write schedule. KAPI_CONVERGENCE_SEEDS
// sets how many seeds run (default 6, quick enough for CI; the bar
// is 1,000); KAPI_CONVERGENCE_SEED replays one. A summary line gives the
// number of seeds, divergent seeds and faults of each kind injected:
//
//	KAPI_CONVERGENCE_SEEDS=1000 go test ./informer -run TestConvergenceUnderFaults -count=1 -v
func TestConvergenceUnderFaults(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if s := os.Getenv("KAPI_CONVERGENCE_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("KAPI_CONVERGENCE_SEEDS=%q: want a positive number", s)
		}
		seeds = seeds[:0]
		for i := range n {
			seeds = append(seeds, uint64(i+1))
		}
	}
	if s := os.Getenv("KAPI_CONVERGENCE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{n}
	}
	var tally faultTally
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				converge(t, seed, &tally)
			})
		}
	})
	tally.mu.Lock()
	defer tally.mu.Unlock()
	kinds := slices.Sorted(maps.Keys(tally.faults))
	var total int64
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s=%d", k, tally.faults[k])
		total += tally.faults[k]
	}
	t.Logf("convergence: %d seeds, %d divergent; %d faults injected: %s", tally.seeds, tally.divergent, total, strings.Join(parts, " "))
}

// faultTally adds up the faults injected over the seeds of a run.
type faultTally struct {
	mu               sync.Mutex
	seeds, divergent int
	faults           map[string]int64
}

func (f *faultTally) add(counts map[fake.FaultKind]int, failed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seeds++
	if failed {
		f.divergent++
	}
	if f.faults == nil {
		f.faults = map[string]int64{}
	}
	for k, n := range counts {
		f.faults[string(k)] += int64(n)
	}
}

// uidEvents is one object's (one uid's) event history as a handler saw it.
type uidEvents struct {
	name    string
	events  []string // "add", "update", "delete"
	lastRV  string
	deleted bool
}

type historyHandler struct {
	t   *testing.T
	mu  sync.Mutex
	by  map[metav1.UID]*uidEvents
	bad []string
}

func (h *historyHandler) record(kind string, cm *corev1.ConfigMap) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.by[cm.UID]
	if e == nil {
		e = &uidEvents{name: cm.Name}
		h.by[cm.UID] = e
	}
	switch {
	case e.deleted:
		h.bad = append(h.bad, fmt.Sprintf("%s of %s (uid %s) after its delete", kind, cm.Name, cm.UID))
	case kind != "add" && len(e.events) == 0:
		h.bad = append(h.bad, fmt.Sprintf("%s of %s (uid %s) before any add", kind, cm.Name, cm.UID))
	case kind == "add" && len(e.events) > 0:
		h.bad = append(h.bad, fmt.Sprintf("second add of %s (uid %s)", cm.Name, cm.UID))
	}
	e.events = append(e.events, kind)
	e.lastRV = cm.ResourceVersion
	e.deleted = kind == "delete"
}

func (h *historyHandler) OnAdd(cm *corev1.ConfigMap, _ bool)    { h.record("add", cm) }
func (h *historyHandler) OnUpdate(_, cm *corev1.ConfigMap)      { h.record("update", cm) }
func (h *historyHandler) OnDelete(cm *corev1.ConfigMap, _ bool) { h.record("delete", cm) }

// converge runs one seed and adds the faults it injected, and whether it
// failed, to tally. The informer's lists and watches go through the fake's
// fault injector; the writes do not, and a short history window makes the
// server compact its history while they go on, so that watches and
// continue tokens also expire for real.
func converge(t *testing.T, seed uint64, tally *faultTally) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := fake.NewWithOptions(t, fake.Options{
		Logger: quiet, BookmarkInterval: 20 * time.Millisecond, HistoryWindow: 50 * time.Millisecond,
		MaxRetries: -1,
		Faults: fake.Faults{
			Seed: seed, DropWatch: 0.7, TruncateWatch: 0.5, ExpiredWatch: 0.2,
			ExpiredContinue: 0.2, TooManyRequests: 0.01, InternalError: 0.1,
			Verbs: []string{"list", "watch"},
		},
	})
	defer func() { tally.add(f.FaultCounts(), t.Failed()) }()
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("default")

	inf := informer.New[corev1.ConfigMap](cms, informer.Config[corev1.ConfigMap]{
		Reflector: reflector.Config[corev1.ConfigMap]{
			PageSize: 7, InitialBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond,
			MinWatchTimeout: time.Second, Logger: quiet,
		},
	})
	handlers := []*historyHandler{}
	for range 2 {
		h := &historyHandler{t: t, by: map[metav1.UID]*uidEvents{}}
		if _, err := inf.AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
		handlers = append(handlers, h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = inf.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()

	// Churn: random writes, while the server compacts its history.
	rng := rand.New(rand.NewPCG(seed, 42))
	pace := time.NewTicker(3 * time.Millisecond) // spread the writes over about a second of faults
	defer pace.Stop()
	injected := func() (n int64) {
		for _, c := range f.FaultCounts() {
			n += int64(c)
		}
		return n
	}
	// At least 600 writes, and on until the informer has met at least 5
	// faults (how many requests it makes depends on timing).
	for i := 0; i < 600 || injected() < 5; i++ {
		if i == 6000 {
			t.Fatalf("seed %d: only %d faults injected after %d writes (%v)", seed, injected(), i, f.FaultCounts())
		}
		<-pace.C
		name := fmt.Sprintf("cm-%02d", rng.IntN(30))
		var err error
		switch op := rng.IntN(10); {
		case op < 4:
			_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.CreateOptions{})
		case op < 8:
			var cm *corev1.ConfigMap
			if cm, err = cms.Get(ctx, name, metav1.GetOptions{}); err == nil {
				cm.Data = map[string]string{"i": fmt.Sprint(i)}
				_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			}
		default:
			err = cms.Delete(ctx, name, metav1.DeleteOptions{})
		}
		if err != nil && !client.IsAlreadyExists(err) && !client.IsNotFound(err) && !client.IsConflict(err) {
			t.Fatalf("seed %d: write %d: %v", seed, i, err)
		}
	}
	f.StopFaults()

	// Converge: the cache must equal the server's list.
	final, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, cm := range final.Items {
		want[cm.Name] = cm.ResourceVersion
	}
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond) // waiting on a condition, with a deadline
	defer tick.Stop()
	for {
		got := map[string]string{}
		for _, cm := range inf.Indexer().List() {
			got[cm.Name] = cm.ResourceVersion
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed %d: the cache did not converge (faults %v)\n cache  %v\n server %v", seed, f.FaultCounts(), got, want)
		}
		<-tick.C
	}
	// Every handler has seen the final state of every object, and nothing
	// inconsistent on the way.
	for hi, h := range handlers {
		h.mu.Lock()
		for _, msg := range h.bad {
			t.Errorf("seed %d handler %d: %s", seed, hi, msg)
		}
		seen := map[string]string{}
		for _, e := range h.by {
			if !e.deleted {
				if prev, dup := seen[e.name]; dup {
					t.Errorf("seed %d handler %d: %s live twice (rv %s and %s)", seed, hi, e.name, prev, e.lastRV)
				}
				seen[e.name] = e.lastRV
			}
		}
		h.mu.Unlock()
		waitHandler(t, h, want, seed, hi)
	}
	t.Logf("seed %d: faults injected %v", seed, f.FaultCounts())
}

// waitHandler waits until handler h's view (the last event of every live
// object) equals want.
func waitHandler(t *testing.T, h *historyHandler, want map[string]string, seed uint64, hi int) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		got := map[string]string{}
		for _, e := range h.by {
			if !e.deleted {
				got[e.name] = e.lastRV
			}
		}
		h.mu.Unlock()
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed %d handler %d: events end in\n %v\nnot the server's\n %v", seed, hi, got, want)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline, not synchronising on time
	}
}
