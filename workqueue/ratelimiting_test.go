package workqueue_test

import (
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

func TestRateLimitingQueue(t *testing.T) {
	clock := clocktest.NewFakeClock(epoch)
	q := workqueue.NewRateLimiting(
		workqueue.NewItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		workqueue.Config{Clock: clock})
	s := newStepper(t, clock, q)

	steps := []struct {
		fail     []string // AddRateLimited before the step
		forget   []string
		by       time.Duration
		want     []string
		requeues map[string]int // after the step
	}{
		{fail: []string{"a"}, by: time.Second, want: []string{"a"}, requeues: map[string]int{"a": 1}},
		{fail: []string{"a", "b"}, by: time.Second, want: []string{"b"}, requeues: map[string]int{"a": 2, "b": 1}},
		{by: time.Second, want: []string{"a"}},
		{fail: []string{"a"}, by: 3 * time.Second, want: []string{}, requeues: map[string]int{"a": 3}},
		{by: time.Second, want: []string{"a"}},
		{forget: []string{"a"}, fail: []string{"a"}, by: time.Second, want: []string{"a"}, requeues: map[string]int{"a": 1, "b": 1}},
	}
	for i, st := range steps {
		for _, item := range st.forget {
			q.Forget(item)
		}
		for _, item := range st.fail {
			q.AddRateLimited(item)
		}
		if got := s.step(st.by); !slices.Equal(got, st.want) {
			t.Errorf("step %d: released %q, want %q", i, got, st.want)
		}
		for item, want := range st.requeues {
			if got := q.NumRequeues(item); got != want {
				t.Errorf("step %d: NumRequeues(%s) = %d, want %d", i, item, got, want)
			}
		}
	}
	if rest := s.rest(); len(rest) != 0 {
		t.Errorf("released after the last step: %q", rest)
	}

	q.AddRateLimited("b") // after ShutDown: the limiter is not consulted
	if got := q.NumRequeues("b"); got != 1 {
		t.Errorf("NumRequeues(b) after ShutDown = %d, want 1", got)
	}
}

func TestRateLimitingQueueDefaultLimiter(t *testing.T) {
	clock := clocktest.NewFakeClock(epoch)
	q := workqueue.NewRateLimiting[string](nil, workqueue.Config{Clock: clock})
	s := newStepper(t, clock, q)
	q.AddRateLimited("a")
	q.AddRateLimited("a") // 10ms: the earlier 5ms wins
	if got := s.step(4 * time.Millisecond); len(got) != 0 {
		t.Errorf("before 5ms: released %q", got)
	}
	if got := s.step(time.Millisecond); !slices.Equal(got, []string{"a"}) {
		t.Errorf("at 5ms: released %q, want [a]", got)
	}
	if got := s.step(time.Hour); len(got) != 0 {
		t.Errorf("later: released %q", got)
	}
	if got := q.NumRequeues("a"); got != 2 {
		t.Errorf("NumRequeues = %d, want 2", got)
	}
	s.rest()
}
