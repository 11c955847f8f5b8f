package fake_test

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// faultyFake is a Fake in namespace web with configmaps a, b and c, client
// retries off (an injected fault reaches the caller) and faults.
func faultyFake(t *testing.T, faults fake.Faults, opts ...func(*fake.Options)) *fake.Fake {
	t.Helper()
	o := fake.Options{Namespace: "web", MaxRetries: -1, Faults: faults}
	for _, fn := range opts {
		fn(&o)
	}
	return fake.NewWithOptions(t, o, configMap("web", "a"), configMap("web", "b"), configMap("web", "c"))
}

func protobuf(o *fake.Options) { o.ContentType = "application/vnd.kubernetes.protobuf" }

// Each kind of fault reaches the client as the error the real server's
// answer gives, in JSON and in protobuf, and is counted.
func TestFaultKinds(t *testing.T) {
	for _, enc := range []struct {
		name string
		opts []func(*fake.Options)
	}{{"json", nil}, {"protobuf", []func(*fake.Options){protobuf}}} {
		t.Run(enc.name, func(t *testing.T) {
			ctx := testContext(t)
			for _, tt := range []struct {
				name   string
				faults fake.Faults
				kind   fake.FaultKind
				do     func(cms client.Resource[corev1.ConfigMap]) error
				check  func(t *testing.T, err error)
			}{{
				name:   "internal error",
				faults: fake.Faults{InternalError: 1},
				kind:   fake.FaultInternalError,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					_, err := cms.Get(ctx, "a", metav1.GetOptions{})
					return err
				},
				check: func(t *testing.T, err error) {
					if !client.IsInternalError(err) || !strings.Contains(err.Error(), "Internal error occurred: injected by fake.Faults") {
						t.Errorf("err %v, want a 500 InternalError", err)
					}
				},
			}, {
				name:   "too many requests",
				faults: fake.Faults{TooManyRequests: 1, RetryAfterSeconds: 7},
				kind:   fake.FaultTooManyRequests,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					_, err := cms.List(ctx, metav1.ListOptions{})
					return err
				},
				check: func(t *testing.T, err error) {
					if !client.IsTooManyRequests(err) {
						t.Errorf("err %v, want a 429", err)
					}
					if s, ok := client.RetryAfterSeconds(err); !ok || s != 7 {
						t.Errorf("RetryAfterSeconds %d, %v, want 7", s, ok)
					}
				},
			}, {
				name:   "conflict on update",
				faults: fake.Faults{Conflict: 1},
				kind:   fake.FaultConflict,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					cm, err := cms.Get(ctx, "a", metav1.GetOptions{}) // not an update: no conflict
					if err != nil {
						return fmt.Errorf("get: %w", err)
					}
					cm.Data = map[string]string{"k": "v"}
					_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
					return err
				},
				check: func(t *testing.T, err error) {
					want := `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`
					if !client.IsConflict(err) || !strings.Contains(err.Error(), want) {
						t.Errorf("err %v, want %q", err, want)
					}
				},
			}, {
				name:   "conflict on patch",
				faults: fake.Faults{Conflict: 1},
				kind:   fake.FaultConflict,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					_, err := cms.Patch(ctx, "b", client.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{})
					return err
				},
				check: func(t *testing.T, err error) {
					if !client.IsConflict(err) {
						t.Errorf("err %v, want a Conflict", err)
					}
				},
			}, {
				name:   "expired continue",
				faults: fake.Faults{ExpiredContinue: 1},
				kind:   fake.FaultExpiredContinue,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					page, err := cms.List(ctx, metav1.ListOptions{Limit: 1}) // no continue token: served
					if err != nil {
						return fmt.Errorf("first page: %w", err)
					}
					_, err = cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.Continue})
					return err
				},
				check: func(t *testing.T, err error) {
					if !client.IsResourceExpired(err) || !strings.Contains(err.Error(), "The provided continue parameter is too old") {
						t.Errorf("err %v, want 410 Expired", err)
					}
				},
			}, {
				name:   "expired watch",
				faults: fake.Faults{ExpiredWatch: 1},
				kind:   fake.FaultExpiredWatch,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
					if err != nil { // kube-apiserver starts the watch, then sends the error
						return fmt.Errorf("watch refused (%v), want 200 and an ERROR event", err)
					}
					defer w.Stop()
					ev := next(t, w)
					waitClosed(t, w)
					if ev.Type != client.EventError {
						return fmt.Errorf("first event %s, want ERROR", ev.Type)
					}
					return ev.Err
				},
				check: func(t *testing.T, err error) {
					if !client.IsResourceExpired(err) || !strings.Contains(err.Error(), "The resourceVersion for the provided watch is too old.") {
						t.Errorf("err %v, want 410 Expired", err)
					}
				},
			}, {
				name:   "truncated watch",
				faults: fake.Faults{TruncateWatch: 1, WatchEvents: 1},
				kind:   fake.FaultTruncateWatch,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					w, err := cms.Watch(ctx, metav1.ListOptions{}) // starts with the 3 configmaps
					if err != nil {
						return fmt.Errorf("watch: %w", err)
					}
					defer w.Stop()
					ev := next(t, w) // cut in the middle of the first event
					waitClosed(t, w)
					if ev.Type != client.EventError {
						return fmt.Errorf("first event %s %v, want ERROR", ev.Type, ev.Object)
					}
					return ev.Err
				},
				check: func(t *testing.T, err error) {
					if !errors.Is(err, io.ErrUnexpectedEOF) {
						t.Errorf("err %v, want a broken stream", err)
					}
				},
			}, {
				name:   "dropped watch",
				faults: fake.Faults{DropWatch: 1, WatchEvents: 1},
				kind:   fake.FaultDropWatch,
				do: func(cms client.Resource[corev1.ConfigMap]) error {
					w, err := cms.Watch(ctx, metav1.ListOptions{}) // would start with the 3 configmaps
					if err != nil {
						return fmt.Errorf("watch: %w", err)
					}
					defer w.Stop()
					for ev := range w.Events() {
						return fmt.Errorf("event %s %v, want a clean end at once", ev.Type, ev.Err)
					}
					return nil
				},
				check: func(t *testing.T, err error) {
					if err != nil {
						t.Error(err)
					}
				},
			}} {
				t.Run(tt.name, func(t *testing.T) {
					f := faultyFake(t, tt.faults, enc.opts...)
					tt.check(t, tt.do(client.For[corev1.ConfigMap](f.Client()).Namespace("web")))
					if got, want := f.FaultCounts(), map[fake.FaultKind]int{tt.kind: 1}; !maps.Equal(got, want) {
						t.Errorf("FaultCounts %v, want %v", got, want)
					}
				})
			}
		})
	}
}

// The raw answers are those of kube-apiserver: a 429 is text with a
// Retry-After header, a Conflict a Status.
func TestFaultWire(t *testing.T) {
	ctx := testContext(t)
	f := faultyFake(t, fake.Faults{TooManyRequests: 1, RetryAfterSeconds: 3, Verbs: []string{"get"}})
	hc := &http.Client{Transport: f.Config().Transport}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fake.Host+"/api/v1/namespaces/web/configmaps/a", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		string(body) != "Too many requests, please try again later.\n" {
		t.Errorf("%d %v %q", resp.StatusCode, resp.Header, body)
	}
}

// A dropped watch carries its events whole and ends cleanly; a truncated
// one breaks after its complete events. The number of events is drawn
// from the seed, below WatchEvents.
func TestFaultWatchEvents(t *testing.T) {
	ctx := testContext(t)
	for _, truncate := range []bool{false, true} {
		for seed := range uint64(8) {
			faults := fake.Faults{Seed: seed, DropWatch: 1, WatchEvents: 3}
			if truncate {
				faults = fake.Faults{Seed: seed, TruncateWatch: 1, WatchEvents: 3}
			}
			f := faultyFake(t, faults)
			w, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var added int
			var last client.Event[corev1.ConfigMap]
			for ev := range w.Events() {
				if ev.Type == client.EventAdded {
					added++
				}
				last = ev
			}
			broke := last.Type == client.EventError && errors.Is(last.Err, io.ErrUnexpectedEOF)
			if added > 2 || broke != truncate || (!truncate && last.Type == client.EventError) {
				t.Errorf("truncate=%v seed %d: %d events, last %s %v", truncate, seed, added, last.Type, last.Err)
			}
		}
	}
}

// A dropped watch ends after its events even when no other event comes.
func TestFaultDropIdleWatch(t *testing.T) {
	ctx := testContext(t)
	for seed := range uint64(6) {
		f := faultyFake(t, fake.Faults{Seed: seed, DropWatch: 1, WatchEvents: 2})
		w, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=a"})
		if err != nil {
			t.Fatal(err)
		}
		waitClosed(t, w) // one initial event at most, then the end
	}
}

// A slow request waits for SlowDelay on the configured clock.
func TestFaultSlow(t *testing.T) {
	ctx := testContext(t)
	clock := clocktest.NewFakeClock(time.Unix(1e9, 0))
	f := faultyFake(t, fake.Faults{Slow: 1, SlowDelay: time.Minute, Clock: clock})
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	done := make(chan error, 1)
	go func() {
		_, err := cms.Get(ctx, "a", metav1.GetOptions{})
		done <- err
	}()
	deadline := time.Now().Add(waitLimit)
	for clock.Timers() == 0 { // the request's delay is armed
		if time.Now().After(deadline) {
			t.Fatal("no delay armed")
		}
		time.Sleep(time.Millisecond) // polling a condition with a deadline
	}
	clock.Step(time.Minute - time.Second)
	select {
	case err := <-done:
		t.Fatalf("answered before its delay: %v", err)
	default:
	}
	clock.Step(time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("not answered after its delay")
	}
	if got := f.FaultCounts(); !maps.Equal(got, map[fake.FaultKind]int{fake.FaultSlow: 1}) {
		t.Errorf("FaultCounts %v", got)
	}
}

// outcomes runs the same sequence of requests against a Fake with faults
// and returns what each got.
func outcomes(t *testing.T, faults fake.Faults) ([]string, map[fake.FaultKind]int) {
	t.Helper()
	ctx := testContext(t)
	f := faultyFake(t, faults)
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	var out []string
	note := func(err error) {
		out = append(out, string(client.ReasonForError(err)))
	}
	for i := range 60 {
		name := []string{"a", "b", "c"}[i%3]
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		note(err)
		if err == nil {
			cm.Data = map[string]string{"i": fmt.Sprint(i)}
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			note(err)
		}
		page, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
		note(err)
		if err == nil {
			_, err = cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: page.Continue})
			note(err)
		}
	}
	return out, f.FaultCounts()
}

// The same seed and the same requests give the same faults; another seed
// other faults.
func TestFaultDeterminism(t *testing.T) {
	faults := fake.Faults{Seed: 42, InternalError: 0.1, TooManyRequests: 0.1, Conflict: 0.3, ExpiredContinue: 0.3}
	first, firstCounts := outcomes(t, faults)
	again, againCounts := outcomes(t, faults)
	if strings.Join(first, ",") != strings.Join(again, ",") || !maps.Equal(firstCounts, againCounts) {
		t.Errorf("seed 42 twice:\n %v %v\n %v %v", first, firstCounts, again, againCounts)
	}
	// Every fault counted reached the client as its error, and no other
	// error did (the continue token's 410 has reason Expired).
	seen := map[fake.FaultKind]int{}
	for _, reason := range first {
		switch reason {
		case "":
		case "Expired":
			seen[fake.FaultExpiredContinue]++
		default:
			seen[fake.FaultKind(reason)]++
		}
	}
	if !maps.Equal(seen, firstCounts) {
		t.Errorf("errors seen %v, FaultCounts %v", seen, firstCounts)
	}
	for _, k := range []fake.FaultKind{fake.FaultInternalError, fake.FaultTooManyRequests, fake.FaultConflict, fake.FaultExpiredContinue} {
		if firstCounts[k] == 0 {
			t.Errorf("no %s injected in %v", k, firstCounts)
		}
	}
	faults.Seed = 43
	if other, _ := outcomes(t, faults); strings.Join(first, ",") == strings.Join(other, ",") {
		t.Errorf("seeds 42 and 43 gave the same faults: %v", first)
	}
}

// Faults are decided per object: requests about other objects, in any
// order, do not change which requests about an object fail.
func TestFaultDeterminismPerObject(t *testing.T) {
	ctx := testContext(t)
	run := func(interleave bool) []string {
		f := faultyFake(t, fake.Faults{Seed: 7, InternalError: 0.3})
		cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
		var got []string
		for range 30 {
			if interleave {
				_, _ = cms.Get(ctx, "b", metav1.GetOptions{})
			}
			_, err := cms.Get(ctx, "a", metav1.GetOptions{})
			got = append(got, string(client.ReasonForError(err)))
		}
		return got
	}
	if a, b := run(false), run(true); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("gets of a alone %v\n interleaved with b %v", a, b)
	}
}

// Concurrent requests about different objects, as a controller's workers
// make, get the faults they get when made one after the other.
func TestFaultDeterminismConcurrent(t *testing.T) {
	ctx := testContext(t)
	names := []string{"a", "b", "c"}
	run := func(concurrent bool) map[string]string {
		f := faultyFake(t, fake.Faults{Seed: 11, InternalError: 0.2, Conflict: 0.3})
		cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
		got := make([]string, len(names))
		worker := func(i int) {
			var out []string
			for j := range 20 {
				cm, err := cms.Get(ctx, names[i], metav1.GetOptions{})
				if err == nil {
					cm.Data = map[string]string{"j": fmt.Sprint(j)}
					_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
				}
				out = append(out, string(client.ReasonForError(err)))
			}
			got[i] = strings.Join(out, ",")
		}
		var wg sync.WaitGroup
		for i := range names {
			if concurrent {
				wg.Go(func() { worker(i) })
			} else {
				worker(i)
			}
		}
		wg.Wait()
		out := map[string]string{}
		for i, n := range names {
			out[n] = got[i]
		}
		return out
	}
	sequential := run(false)
	for range 3 {
		if concurrent := run(true); !maps.Equal(sequential, concurrent) {
			t.Fatalf("sequential %v\nconcurrent %v", sequential, concurrent)
		}
	}
}

// The zero value injects nothing; nor do faults filtered out by Verbs and
// Resources, nor anything after StopFaults.
func TestFaultsOff(t *testing.T) {
	all := fake.Faults{InternalError: 1, TooManyRequests: 1, Conflict: 1, ExpiredContinue: 1}
	for _, tt := range []struct {
		name   string
		faults fake.Faults
		stop   bool
	}{
		{"zero value", fake.Faults{}, false},
		{"seed only", fake.Faults{Seed: 9, SlowDelay: time.Hour}, false},
		{"other verbs", func() fake.Faults { f := all; f.Verbs = []string{"delete", "watch"}; return f }(), false},
		{"other resources", func() fake.Faults { f := all; f.Resources = []string{"secrets", "configmaps/status"}; return f }(), false},
		{"stopped", all, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := faultyFake(t, tt.faults)
			if tt.stop {
				f.StopFaults()
			}
			ctx := testContext(t)
			cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
			for range 20 {
				cm, err := cms.Get(ctx, "a", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := cms.List(ctx, metav1.ListOptions{Limit: 1, Continue: page.Continue}); err != nil {
					t.Fatal(err)
				}
			}
			if got := f.FaultCounts(); len(got) != 0 {
				t.Errorf("FaultCounts %v, want none", got)
			}
		})
	}
}

// A rate that is not a probability is refused.
func TestFaultsInvalid(t *testing.T) {
	_, err := fake.Start(t.Context(), fake.Options{Faults: fake.Faults{Conflict: 1.5}})
	if err == nil || !strings.Contains(err.Error(), "Faults.Conflict is 1.5") {
		t.Errorf("err %v", err)
	}
}

// Closing the Fake ends a request waiting out its delay.
func TestFaultSlowClose(t *testing.T) {
	ctx := testContext(t)
	clock := clocktest.NewFakeClock(time.Unix(1e9, 0))
	f, err := fake.Start(ctx, fake.Options{Logger: quietLogger(), Faults: fake.Faults{Slow: 1, Clock: clock}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(ctx, "a", metav1.GetOptions{})
		done <- err
	}()
	deadline := time.Now().Add(waitLimit)
	for clock.Timers() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no delay armed")
		}
		time.Sleep(time.Millisecond) // polling a condition with a deadline
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("err %v, want the Fake's closing", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the slowed request outlived Close")
	}
}
