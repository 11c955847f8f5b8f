package workqueue

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFIFO compares the ring buffer with a slice through random pushes and
// pops, across growth, wrap-around and shrinking.
func TestFIFO(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 0))
		var f fifo[int]
		var want []int
		next := 0
		for i := range 20000 {
			// Phases of mostly pushing, then mostly popping.
			pushBias := 3
			if (i/2000)%2 == 1 {
				pushBias = 1
			}
			if len(want) == 0 || rng.IntN(4) < pushBias {
				f.push(next)
				want = append(want, next)
				next++
			} else {
				got := f.pop()
				if got != want[0] {
					t.Fatalf("seed %d op %d: pop = %d, want %d", seed, i, got, want[0])
				}
				want = want[1:]
			}
			if f.len() != len(want) {
				t.Fatalf("seed %d op %d: len = %d, want %d", seed, i, f.len(), len(want))
			}
			if len(f.buf) > minFIFO && f.n < len(f.buf)/4 {
				t.Fatalf("seed %d op %d: %d items in a buffer of %d", seed, i, f.n, len(f.buf))
			}
		}
		var rest []int
		for f.len() > 0 {
			rest = append(rest, f.pop())
		}
		if !slices.Equal(rest, want) {
			t.Fatalf("seed %d: drained %v, want %v", seed, rest, want)
		}
	}
}
