package workqueue_test

import (
	"math"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/kapi-dev/kapi/workqueue"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name      string
		base, max time.Duration
		calls     int
		want      map[int]time.Duration // call index (from 0) → When
	}{
		{
			name: "doubles from base", base: 5 * ms, max: 1000 * time.Second, calls: 5,
			want: map[int]time.Duration{0: 5 * ms, 1: 10 * ms, 2: 20 * ms, 3: 40 * ms, 4: 80 * ms},
		},
		{
			name: "caps at max", base: time.Second, max: 5 * time.Second, calls: 6,
			want: map[int]time.Duration{0: time.Second, 1: 2 * time.Second, 2: 4 * time.Second, 3: 5 * time.Second, 5: 5 * time.Second},
		},
		{
			name: "client-go default reaches its cap after 18 failures", base: 5 * ms, max: 1000 * time.Second, calls: 20,
			want: map[int]time.Duration{17: 655360 * ms, 18: 1000 * time.Second, 19: 1000 * time.Second},
		},
		{
			name: "never overflows", base: 1, max: math.MaxInt64, calls: 200,
			want: map[int]time.Duration{62: 1 << 62, 63: math.MaxInt64, 199: math.MaxInt64},
		},
		{
			name: "large base never overflows", base: time.Hour, max: math.MaxInt64, calls: 100,
			want: map[int]time.Duration{21: time.Hour << 21, 22: math.MaxInt64, 99: math.MaxInt64},
		},
		{
			name: "base above max gives max", base: 10 * time.Second, max: time.Second, calls: 2,
			want: map[int]time.Duration{0: time.Second, 1: time.Second},
		},
		{
			name: "zero base", base: 0, max: time.Second, calls: 100,
			want: map[int]time.Duration{0: 0, 99: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := workqueue.NewItemExponentialFailureRateLimiter[string](tt.base, tt.max)
			for i := range tt.calls {
				got := r.When("a")
				if want, ok := tt.want[i]; ok && got != want {
					t.Errorf("When #%d = %v, want %v", i, got, want)
				}
				if got < 0 || got > tt.max && tt.base <= tt.max {
					t.Errorf("When #%d = %v, out of [0, %v]", i, got, tt.max)
				}
			}
			if got := r.NumRequeues("a"); got != tt.calls {
				t.Errorf("NumRequeues = %d, want %d", got, tt.calls)
			}
		})
	}
}

func TestItemExponentialForget(t *testing.T) {
	r := workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	steps := []struct {
		op, item string
		want     time.Duration // for When
		requeues int           // NumRequeues(item) afterwards
	}{
		{"when", "a", 1 * time.Millisecond, 1},
		{"when", "a", 2 * time.Millisecond, 2},
		{"when", "b", 1 * time.Millisecond, 1}, // items are independent
		{"when", "a", 4 * time.Millisecond, 3},
		{"forget", "a", 0, 0},
		{"when", "a", 1 * time.Millisecond, 1}, // starts over
		{"when", "b", 2 * time.Millisecond, 2}, // untouched by Forget(a)
		{"forget", "never-seen", 0, 0},
	}
	for i, s := range steps {
		switch s.op {
		case "when":
			if got := r.When(s.item); got != s.want {
				t.Errorf("step %d: When(%s) = %v, want %v", i, s.item, got, s.want)
			}
		case "forget":
			r.Forget(s.item)
		}
		if got := r.NumRequeues(s.item); got != s.requeues {
			t.Errorf("step %d: NumRequeues(%s) = %d, want %d", i, s.item, got, s.requeues)
		}
	}
}

func TestBucketRateLimiter(t *testing.T) {
	const ms = time.Millisecond
	// 10 tokens a second (one per 100ms), bursts of 3.
	clock := clocktest.NewFakeClock(epoch)
	r := workqueue.NewBucketRateLimiter[string](rate.NewLimiter(10, 3), clock)
	steps := []struct {
		advance time.Duration // before the call
		want    time.Duration
	}{
		{0, 0}, {0, 0}, {0, 0}, // the burst
		{0, 100 * ms}, {0, 200 * ms}, // then one token per 100ms, reserved ahead
		{50 * ms, 250 * ms},
		{250 * ms, 100 * ms}, // 300ms on: the reserved tokens are due, the next one 100ms later
		{time.Second, 0},     // the bucket refills up to its burst
		{0, 0}, {0, 0}, {0, 100 * ms},
	}
	for i, s := range steps {
		clock.Step(s.advance)
		if got := r.When("any"); got != s.want {
			t.Errorf("call %d (after +%v): When = %v, want %v", i, s.advance, got, s.want)
		}
	}
	r.Forget("any")
	if n := r.NumRequeues("any"); n != 0 {
		t.Errorf("NumRequeues = %d, want 0", n)
	}

	zero := workqueue.NewBucketRateLimiter[string](rate.NewLimiter(10, 0), clock)
	if got := zero.When("any"); got != rate.InfDuration {
		t.Errorf("burst 0: When = %v, want rate.InfDuration", got)
	}
}

// fixed is a RateLimiter stub with a fixed answer that records calls.
type fixed struct {
	delay    time.Duration
	requeues int
	whens    int
	forgets  []string
}

func (f *fixed) When(string) time.Duration { f.whens++; return f.delay }
func (f *fixed) Forget(item string)        { f.forgets = append(f.forgets, item) }
func (f *fixed) NumRequeues(string) int    { return f.requeues }

func TestMaxOfRateLimiter(t *testing.T) {
	tests := []struct {
		name         string
		limiters     []*fixed
		wantWhen     time.Duration
		wantRequeues int
	}{
		{"none", nil, 0, 0},
		{"one", []*fixed{{delay: time.Second, requeues: 2}}, time.Second, 2},
		{"largest of each",
			[]*fixed{{delay: time.Second, requeues: 7}, {delay: 3 * time.Second, requeues: 1}, {delay: 2 * time.Second}},
			3 * time.Second, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ls []workqueue.RateLimiter[string]
			for _, l := range tt.limiters {
				ls = append(ls, l)
			}
			r := workqueue.NewMaxOfRateLimiter(ls...)
			if got := r.When("a"); got != tt.wantWhen {
				t.Errorf("When = %v, want %v", got, tt.wantWhen)
			}
			if got := r.NumRequeues("a"); got != tt.wantRequeues {
				t.Errorf("NumRequeues = %d, want %d", got, tt.wantRequeues)
			}
			r.Forget("a")
			for i, l := range tt.limiters {
				if l.whens != 1 {
					t.Errorf("limiter %d: When called %d times, want 1", i, l.whens)
				}
				if len(l.forgets) != 1 || l.forgets[0] != "a" {
					t.Errorf("limiter %d: Forget calls %q, want [a]", i, l.forgets)
				}
			}
		})
	}
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	const ms = time.Millisecond
	clock := clocktest.NewFakeClock(epoch)
	r := workqueue.DefaultControllerRateLimiterWithClock[int](clock)

	// Per item: 5ms doubling. The 100-token bucket is not yet felt.
	for i, want := range []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms} {
		if got := r.When(0); got != want {
			t.Errorf("item 0, failure %d: When = %v, want %v", i, got, want)
		}
	}
	if got := r.NumRequeues(0); got != 4 {
		t.Errorf("NumRequeues = %d, want 4", got)
	}
	r.Forget(0)
	if got := r.When(0); got != 5*ms {
		t.Errorf("after Forget: When = %v, want 5ms", got)
	}
	// 5 tokens are spent; 95 more distinct items drain the bucket, after
	// which the bucket (100ms a token) outweighs the 5ms first backoff.
	for i := 1; i <= 95; i++ {
		if got := r.When(i); got != 5*ms {
			t.Fatalf("item %d: When = %v, want 5ms", i, got)
		}
	}
	for i, want := range []time.Duration{100 * ms, 200 * ms} {
		if got := r.When(1000 + i); got != want {
			t.Errorf("bucket empty, call %d: When = %v, want %v", i, got, want)
		}
	}

	if got := workqueue.DefaultControllerRateLimiter[string]().When("x"); got != 5*ms {
		t.Errorf("DefaultControllerRateLimiter().When = %v, want 5ms", got)
	}
}
