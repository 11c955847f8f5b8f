package workqueue_test

import (
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

func TestAddAfter(t *testing.T) {
	type add struct {
		item  string
		after time.Duration
	}
	type step struct {
		by   time.Duration
		want []string // released by this step, in Get order
	}
	const ms = time.Millisecond
	tests := []struct {
		name  string
		adds  []add
		steps []step
	}{
		{
			name: "released in ready order",
			adds: []add{{"c", 3 * ms}, {"a", 1 * ms}, {"b", 2 * ms}},
			steps: []step{
				{1 * ms, []string{"a"}},
				{1 * ms, []string{"b"}},
				{1 * ms, []string{"c"}},
			},
		},
		{
			name:  "released together in ready order",
			adds:  []add{{"c", 3 * ms}, {"a", 1 * ms}, {"b", 2 * ms}},
			steps: []step{{time.Hour, []string{"a", "b", "c"}}},
		},
		{
			name:  "equal ready times in call order",
			adds:  []add{{"b", ms}, {"a", ms}, {"c", ms}},
			steps: []step{{ms, []string{"b", "a", "c"}}},
		},
		{
			name:  "not before the delay",
			adds:  []add{{"a", time.Second}},
			steps: []step{{time.Second - time.Microsecond, []string{}}, {time.Microsecond, []string{"a"}}},
		},
		{
			name:  "earlier call wins over later",
			adds:  []add{{"a", 1 * ms}, {"a", 5 * ms}},
			steps: []step{{1 * ms, []string{"a"}}, {4 * ms, []string{}}},
		},
		{
			name:  "later call wins when earlier",
			adds:  []add{{"a", 5 * ms}, {"a", 1 * ms}},
			steps: []step{{1 * ms, []string{"a"}}, {4 * ms, []string{}}},
		},
		{
			name:  "earliest wins after moving ahead of others",
			adds:  []add{{"a", 5 * ms}, {"b", 3 * ms}, {"a", 2 * ms}},
			steps: []step{{2 * ms, []string{"a"}}, {1 * ms, []string{"b"}}, {10 * ms, []string{}}},
		},
		{
			name:  "zero and negative delays add at once",
			adds:  []add{{"later", ms}, {"now", 0}, {"before", -time.Hour}},
			steps: []step{{ms, []string{"now", "before", "later"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktest.NewFakeClock(epoch)
			q := workqueue.NewDelaying[string](workqueue.Config{Clock: clock})
			for _, a := range tt.adds {
				q.AddAfter(a.item, a.after)
			}
			s := newStepper(t, clock, q)
			for i, st := range tt.steps {
				if got := s.step(st.by); !slices.Equal(got, st.want) {
					t.Errorf("step %d (+%v): released %q, want %q", i, st.by, got, st.want)
				}
			}
			if rest := s.rest(); len(rest) != 0 {
				t.Errorf("released after the last step: %q", rest)
			}
		})
	}
}

// TestAddAfterPendingItem checks that releasing an item that is already
// pending does not queue it twice.
func TestAddAfterPendingItem(t *testing.T) {
	clock := clocktest.NewFakeClock(epoch)
	q := workqueue.NewDelaying[string](workqueue.Config{Clock: clock})
	defer q.ShutDown()
	q.Add("a")
	q.AddAfter("a", time.Second)
	q.AddAfter("z", time.Second) // released after a
	clock.Step(time.Second)
	// Take nothing until z is queued, so that a is still pending when
	// released.
	waitFor(t, "z queued", func() bool { return q.Len() >= 2 })
	var got []string
	for len(got) == 0 || got[len(got)-1] != "z" {
		got = append(got, mustGet(t, q))
	}
	if want := []string{"a", "z"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAddAfterRealClock checks the RealClock timer path end to end.
func TestAddAfterRealClock(t *testing.T) {
	q := workqueue.NewDelaying[string](workqueue.Config{})
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("a", 20*time.Millisecond)
	q.AddAfter("b", time.Millisecond)
	if got := mustGet(t, q); got != "b" {
		t.Errorf("first item %q, want b", got)
	}
	if got := mustGet(t, q); got != "a" {
		t.Errorf("second item %q, want a", got)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("a released after %v, want >= 20ms", waited)
	}
}

func TestDelayingShutDown(t *testing.T) {
	for _, drain := range []bool{false, true} {
		name := "ShutDown"
		if drain {
			name = "ShutDownWithDrain"
		}
		t.Run(name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			clock := clocktest.NewFakeClock(epoch)
			q := workqueue.NewDelaying[string](workqueue.Config{Clock: clock})
			q.AddAfter("waiting", time.Second)
			if drain {
				within(t, name, q.ShutDownWithDrain)
			} else {
				within(t, name, q.ShutDown)
			}
			goleak.VerifyNone(t, before) // the delay goroutine has exited
			if n := clock.Timers(); n != 0 {
				t.Errorf("%d timers still armed", n)
			}

			q.AddAfter("late", 0)
			q.AddAfter("late", time.Second)
			clock.Step(time.Hour)
			mustShutDown(t, q)                       // nothing waiting was released
			within(t, "second ShutDown", q.ShutDown) // again: no panic, no hang
		})
	}
}
