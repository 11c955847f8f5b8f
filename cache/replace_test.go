package cache_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/selector"
)

// describe formats a change as "Type key old-rv>new-rv".
func describe(c cache.Change[*corev1.Pod]) string {
	o := c.New
	if c.Type == cache.Deleted {
		o = c.Old
	}
	s := fmt.Sprintf("%v %s ", c.Type, cache.JoinKey(o.Namespace, o.Name))
	if c.Old != nil {
		s += c.Old.ResourceVersion
	}
	s += ">"
	if c.New != nil {
		s += c.New.ResourceVersion
	}
	return s
}

func TestReplaceDiff(t *testing.T) {
	tests := []struct {
		name   string
		before []*corev1.Pod
		items  []*corev1.Pod
		want   []string // changes, in the order All yields them
		after  []string // contents
		counts [3]int
	}{
		{
			name:   "initial list",
			items:  []*corev1.Pod{newPod("b", "y", rv("2")), newPod("a", "x", rv("1"))},
			want:   []string{"Added b/y >2", "Added a/x >1"},
			after:  []string{"a/x@1", "b/y@2"},
			counts: [3]int{2, 0, 0},
		},
		{
			name:   "relist",
			before: []*corev1.Pod{newPod("a", "x", rv("1")), newPod("a", "gone", rv("2")), newPod("", "gone", rv("3")), newPod("b", "same", rv("4"))},
			items:  []*corev1.Pod{newPod("b", "same", rv("4")), newPod("a", "new", rv("7")), newPod("a", "x", rv("6"))},
			want: []string{
				"Deleted a/gone 2>", "Deleted gone 3>",
				"Updated b/same 4>4", "Added a/new >7", "Updated a/x 1>6",
			},
			after:  []string{"a/new@7", "a/x@6", "b/same@4"},
			counts: [3]int{1, 2, 2},
		},
		{
			name:   "empty list",
			before: []*corev1.Pod{newPod("a", "x", rv("1")), newPod("b", "x", rv("2"))},
			want:   []string{"Deleted a/x 1>", "Deleted b/x 2>"},
			counts: [3]int{0, 0, 2},
		},
		{
			name:   "duplicates: the later item wins",
			before: []*corev1.Pod{newPod("a", "x", rv("1"))},
			items:  []*corev1.Pod{newPod("a", "x", rv("2")), newPod("a", "y", rv("3")), newPod("a", "x", rv("4"))},
			want:   []string{"Added a/y >3", "Updated a/x 1>4"},
			after:  []string{"a/x@4", "a/y@3"},
			counts: [3]int{1, 1, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cache.NewStore[*corev1.Pod]()
			for _, p := range tt.before {
				_ = s.Add(p)
			}
			diff, err := s.Replace(tt.items)
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshotOf(t, s); !slices.Equal(got, tt.after) {
				t.Errorf("contents = %q, want %q", got, tt.after)
			}
			// Writes after the Replace must not show in its diff.
			_ = s.Add(newPod("later", "write"))
			for _, p := range tt.before {
				_ = s.Delete(p)
			}

			var got []string
			for c := range diff.All() {
				got = append(got, describe(c))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("All() =\n  %q\nwant\n  %q", got, tt.want)
			}
			if a, u, d := diff.Counts(); [3]int{a, u, d} != tt.counts {
				t.Errorf("Counts() = %d, %d, %d, want %v", a, u, d, tt.counts)
			}
		})
	}
}

func TestReplaceDiffIsLazyAndShared(t *testing.T) {
	s := cache.NewStore[*corev1.Pod]()
	_ = s.Add(newPod("a", "old"))
	diff, err := s.Replace([]*corev1.Pod{newPod("a", "new")})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if a, u, d := diff.Counts(); a != 1 || u != 0 || d != 1 {
				t.Errorf("Counts() = %d, %d, %d", a, u, d)
			}
		})
	}
	wg.Wait()

	var nilDiff *cache.ReplaceDiff[*corev1.Pod]
	for range nilDiff.All() {
		t.Error("a nil diff has changes")
	}
	if a, u, d := nilDiff.Counts(); a+u+d != 0 {
		t.Error("a nil diff is not empty")
	}
}

func TestChangeTypeString(t *testing.T) {
	if s := cache.ChangeType(9).String(); s != "ChangeType(9)" {
		t.Errorf("String() = %q", s)
	}
}

// TestReplaceIsAtomic has readers check, while a writer alternates between
// two generations of contents, that every read sees one generation whole:
// the right number of objects, all of the same generation, with indexes
// that agree.
func TestReplaceIsAtomic(t *testing.T) {
	const perNS, namespaces = 50, 4
	gen := func(g string, extra int) []*corev1.Pod {
		var out []*corev1.Pod
		for ns := range namespaces {
			for i := range perNS + extra {
				// Some names are shared between generations, some not.
				name := fmt.Sprint("p", i)
				if i%2 == 1 {
					name += "-" + g
				}
				out = append(out, newPod(fmt.Sprint("ns", ns), name, labels("gen", g), node("n"+g)))
			}
		}
		return out
	}
	sizes := map[string]int{"a": namespaces * perNS, "b": namespaces * (perNS + 3)}

	idx := cache.NewIndexer(cache.Indexers[*corev1.Pod]{"byNode": byNode})
	if _, err := idx.Replace(gen("a", 0)); err != nil {
		t.Fatal(err)
	}
	lister := cache.NewLister(idx, corev1Pods)

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		defer stop.Store(true)
		for i := range 300 {
			g, extra := "a", 0
			if i%2 == 0 {
				g, extra = "b", 3
			}
			if _, err := idx.Replace(gen(g, extra)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	oneGeneration := func(what string, objs []*corev1.Pod, perGen func(g string) int) {
		if len(objs) == 0 {
			t.Errorf("%s: empty", what)
			return
		}
		g := objs[0].Labels["gen"]
		for _, p := range objs {
			if p.Labels["gen"] != g {
				t.Errorf("%s: generations %q and %q mixed", what, g, p.Labels["gen"])
				return
			}
		}
		if want := perGen(g); len(objs) != want {
			t.Errorf("%s: %d objects of generation %q, want %d", what, len(objs), g, want)
		}
	}
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				oneGeneration("List", idx.List(), func(g string) int { return sizes[g] })
				ns, _ := idx.ByIndex(cache.NamespaceIndex, "ns1")
				oneGeneration("ByIndex(namespace)", ns, func(g string) int { return sizes[g] / namespaces })
				for _, g := range []string{"a", "b"} {
					objs, _ := idx.ByIndex("byNode", "n"+g)
					if len(objs) > 0 {
						oneGeneration("ByIndex(byNode)", objs, func(g string) int { return sizes[g] })
					}
				}
				sel := selector.MustParseLabels("gen in (a,b)")
				l, _ := lister.Namespace("ns2").List(sel)
				oneGeneration("Lister.Namespace.List", l, func(g string) int { return sizes[g] / namespaces })
				if t.Failed() {
					return
				}
			}
		})
	}
	wg.Wait()
}
