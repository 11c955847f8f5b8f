package cache_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/cache"
)

// flavors are the Indexer implementations of the package, by name; each
// wraps the indexer it is given.
var flavors = map[string]func(cache.Indexer[*corev1.Pod]) cache.Indexer[*corev1.Pod]{
	"indexer": func(idx cache.Indexer[*corev1.Pod]) cache.Indexer[*corev1.Pod] { return idx },
	"detector": func(idx cache.Indexer[*corev1.Pod]) cache.Indexer[*corev1.Pod] {
		d, err := cache.NewMutationDetector(idx, cache.MutationDetectorConfig[*corev1.Pod]{})
		if err != nil {
			panic(err)
		}
		return d
	},
}

func newPodIndexer() cache.Indexer[*corev1.Pod] {
	return cache.NewIndexer(cache.Indexers[*corev1.Pod]{"byNode": byNode, "byVolume": byVolume})
}

func TestByIndex(t *testing.T) {
	tests := []struct {
		name   string
		pods   []*corev1.Pod
		index  string
		value  string
		want   []string
		values []string // ListIndexFuncValues
	}{
		{
			name:  "single value",
			pods:  []*corev1.Pod{newPod("a", "x", node("n1")), newPod("b", "y", node("n1")), newPod("a", "z", node("n2"))},
			index: "byNode", value: "n1",
			want:   []string{"a/x", "b/y"},
			values: []string{"n1", "n2"},
		},
		{
			name:  "objects without values are not indexed",
			pods:  []*corev1.Pod{newPod("a", "x"), newPod("a", "y", node("n1"))},
			index: "byNode", value: "",
			want:   []string{},
			values: []string{"n1"},
		},
		{
			name:  "multi-value",
			pods:  []*corev1.Pod{newPod("a", "x", volumes("data", "logs")), newPod("a", "y", volumes("logs")), newPod("a", "z", volumes("cfg"))},
			index: "byVolume", value: "logs",
			want:   []string{"a/x", "a/y"},
			values: []string{"cfg", "data", "logs"},
		},
		{
			name:  "duplicate values of one object",
			pods:  []*corev1.Pod{newPod("a", "x", volumes("data", "data"))},
			index: "byVolume", value: "data",
			want:   []string{"a/x"},
			values: []string{"data"},
		},
		{
			name:  "no match",
			pods:  []*corev1.Pod{newPod("a", "x", node("n1"))},
			index: "byNode", value: "n9",
			want:   []string{},
			values: []string{"n1"},
		},
		{
			name:  "namespace index",
			pods:  []*corev1.Pod{newPod("a", "x"), newPod("b", "y"), newPod("a", "z"), newPod("", "c")},
			index: cache.NamespaceIndex, value: "a",
			want:   []string{"a/x", "a/z"},
			values: []string{"", "a", "b"},
		},
		{
			name:  "namespace index, cluster scope",
			pods:  []*corev1.Pod{newPod("a", "x"), newPod("", "c")},
			index: cache.NamespaceIndex, value: "",
			want:   []string{"c"},
			values: []string{"", "a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := newPodIndexer()
			for _, p := range tt.pods {
				if err := idx.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			objs, err := idx.ByIndex(tt.index, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(t, objs); !slices.Equal(got, tt.want) {
				t.Errorf("ByIndex = %q, want %q", got, tt.want)
			}
			keys, err := idx.IndexKeys(tt.index, tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys, tt.want) {
				t.Errorf("IndexKeys = %q, want %q (sorted)", keys, tt.want)
			}
			if got := idx.ListIndexFuncValues(tt.index); !slices.Equal(got, tt.values) {
				t.Errorf("ListIndexFuncValues = %q, want %q", got, tt.values)
			}
			checkIndex(t, idx, "byNode", byNode)
			checkIndex(t, idx, "byVolume", byVolume)
			checkIndex(t, idx, cache.NamespaceIndex, cache.NamespaceIndexFunc[*corev1.Pod])
		})
	}
}

func TestIndexFollowsWrites(t *testing.T) {
	for name, wrap := range flavors {
		t.Run(name, func(t *testing.T) { testIndexFollowsWrites(t, wrap(newPodIndexer())) })
	}
}

func testIndexFollowsWrites(t *testing.T, idx cache.Indexer[*corev1.Pod]) {
	steps := []struct {
		name  string
		write func() error
	}{
		{"add", func() error { return idx.Add(newPod("a", "x", node("n1"), volumes("v1", "v2"))) }},
		{"add other", func() error { return idx.Add(newPod("a", "y", node("n1"), volumes("v2"))) }},
		{"move to another node", func() error { return idx.Update(newPod("a", "x", node("n2"), volumes("v1", "v2"))) }},
		{"change volumes", func() error { return idx.Update(newPod("a", "x", node("n2"), volumes("v3", "v2"))) }},
		{"unschedule", func() error { return idx.Update(newPod("a", "y", volumes("v2"))) }},
		{"unchanged values", func() error { return idx.Update(newPod("a", "x", node("n2"), volumes("v3", "v2"), rv("7"))) }},
		{"delete", func() error { return idx.Delete(newPod("a", "x")) }},
		{"delete last", func() error { return idx.Delete(newPod("a", "y")) }},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		checkIndex(t, idx, "byNode", byNode)
		checkIndex(t, idx, "byVolume", byVolume)
		checkIndex(t, idx, cache.NamespaceIndex, cache.NamespaceIndexFunc[*corev1.Pod])
		if t.Failed() {
			t.Fatalf("after %s", st.name)
		}
	}
	// Empty values are dropped, not kept as empty sets.
	if got := idx.ListIndexFuncValues("byVolume"); len(got) != 0 {
		t.Errorf("values left after deleting everything: %q", got)
	}
	if got := idx.ListIndexFuncValues(cache.NamespaceIndex); len(got) != 0 {
		t.Errorf("namespaces left after deleting everything: %q", got)
	}
}

func TestUpdatedObjectIsReturnedByIndex(t *testing.T) {
	idx := newPodIndexer()
	_ = idx.Add(newPod("a", "x", node("n1"), rv("1")))
	newer := newPod("a", "x", node("n1"), rv("2"))
	_ = idx.Update(newer)
	for _, q := range []struct{ index, value string }{{"byNode", "n1"}, {cache.NamespaceIndex, "a"}} {
		got, _ := idx.ByIndex(q.index, q.value)
		if len(got) != 1 || got[0] != newer {
			t.Errorf("ByIndex(%q, %q) does not return the updated object", q.index, q.value)
		}
	}
}

func TestIndexByObject(t *testing.T) {
	for name, wrap := range flavors {
		t.Run(name, func(t *testing.T) { testIndexByObject(t, wrap(newPodIndexer())) })
	}
}

func testIndexByObject(t *testing.T, idx cache.Indexer[*corev1.Pod]) {
	for _, p := range []*corev1.Pod{
		newPod("a", "x", node("n1"), volumes("data", "logs")),
		newPod("a", "y", node("n2"), volumes("logs")),
		newPod("b", "z", node("n1"), volumes("cfg")),
	} {
		_ = idx.Add(p)
	}
	tests := []struct {
		name  string
		index string
		obj   *corev1.Pod
		want  []string
	}{
		{"single value", "byNode", newPod("q", "q", node("n1")), []string{"a/x", "b/z"}},
		{"several values, each object once", "byVolume", newPod("q", "q", volumes("logs", "data", "cfg")), []string{"a/x", "a/y", "b/z"}},
		{"no values", "byVolume", newPod("q", "q"), []string{}},
		{"namespace", cache.NamespaceIndex, newPod("a", "q"), []string{"a/x", "a/y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := idx.Index(tt.index, tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := keysOf(t, objs); !slices.Equal(got, tt.want) {
				t.Errorf("Index = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUnknownIndex(t *testing.T) {
	idx := newPodIndexer()
	_ = idx.Add(newPod("a", "x"))
	if _, err := idx.ByIndex("nope", "v"); !errors.Is(err, cache.ErrNoSuchIndex) {
		t.Errorf("ByIndex: %v", err)
	}
	if _, err := idx.IndexKeys("nope", "v"); !errors.Is(err, cache.ErrNoSuchIndex) {
		t.Errorf("IndexKeys: %v", err)
	}
	if _, err := idx.Index("nope", newPod("a", "x")); !errors.Is(err, cache.ErrNoSuchIndex) {
		t.Errorf("Index: %v", err)
	}
	if got := idx.ListIndexFuncValues("nope"); got != nil {
		t.Errorf("ListIndexFuncValues = %q", got)
	}
}

func TestNamespaceIndexIsBuiltIn(t *testing.T) {
	// Code written for client-go adds the namespace index explicitly; its
	// entry is accepted and ignored.
	idx := cache.NewIndexer(cache.Indexers[*corev1.Pod]{
		cache.NamespaceIndex: cache.NamespaceIndexFunc[*corev1.Pod],
		"nil":                nil,
	})
	got := idx.Indexers()
	if len(got) != 1 || got[cache.NamespaceIndex] == nil {
		t.Fatalf("Indexers() = %v, want only the namespace index", got)
	}
	if err := idx.AddIndexers(cache.Indexers[*corev1.Pod]{cache.NamespaceIndex: byNode}); err != nil {
		t.Fatalf("AddIndexers(NamespaceIndex) = %v, want it ignored", err)
	}
	_ = idx.Add(newPod("a", "x", node("n1")))
	if objs, _ := idx.ByIndex(cache.NamespaceIndex, "a"); len(objs) != 1 {
		t.Fatalf("namespace index replaced by a user function")
	}
	// A plain Store has it too.
	s := cache.NewStore[*corev1.Pod]()
	if i, ok := s.(cache.Indexer[*corev1.Pod]); !ok {
		t.Fatal("NewStore does not return an Indexer")
	} else if _, err := i.ByIndex(cache.NamespaceIndex, "a"); err != nil {
		t.Fatal(err)
	}
}

// TestIndexErrorIsNotHalfApplied checks that a failing index function
// fails the write with an *IndexError and leaves objects and all indexes as
// they were.
func TestIndexErrorIsNotHalfApplied(t *testing.T) {
	good := func() []*corev1.Pod {
		return []*corev1.Pod{
			newPod("a", "x", labels("app", "web"), node("n1"), rv("1")),
			newPod("b", "y", labels("app", "db"), node("n2"), rv("2")),
		}
	}
	bad := labels("app", "web", "bad", "true")
	tests := []struct {
		name  string
		write func(idx cache.Indexer[*corev1.Pod]) error
	}{
		{"add new object", func(idx cache.Indexer[*corev1.Pod]) error {
			return idx.Add(newPod("a", "new", bad, node("n3"), rv("9")))
		}},
		{"update existing object", func(idx cache.Indexer[*corev1.Pod]) error {
			return idx.Update(newPod("a", "x", bad, node("n3"), rv("9")))
		}},
		{"replace", func(idx cache.Indexer[*corev1.Pod]) error {
			_, err := idx.Replace([]*corev1.Pod{
				newPod("c", "z", labels("app", "web"), node("n3")),
				newPod("a", "x", bad, node("n3")),
			})
			return err
		}},
		{"add indexers", func(idx cache.Indexer[*corev1.Pod]) error {
			// The failing function is in a new index, next to a good one.
			return idx.AddIndexers(cache.Indexers[*corev1.Pod]{
				"alsoGood": byVolume,
				"strict": func(p *corev1.Pod) ([]string, error) {
					if p.Name == "y" {
						return nil, errBadPod
					}
					return []string{p.Name}, nil
				},
			})
		}},
	}
	for _, tt := range tests {
		for fname, wrap := range flavors {
			t.Run(fname+"/"+tt.name, func(t *testing.T) {
				// Two indexes: "byApp" (sorted first) fails, "byNode"
				// would succeed; neither must change.
				idx := wrap(cache.NewIndexer(cache.Indexers[*corev1.Pod]{"byApp": failOnLabel, "byNode": byNode}))
				if _, err := idx.Replace(good()); err != nil {
					t.Fatal(err)
				}
				before := snapshotOf(t, idx)
				err := tt.write(idx)
				var ie *cache.IndexError
				if !errors.As(err, &ie) || !errors.Is(err, errBadPod) {
					t.Fatalf("error = %v, want an *IndexError wrapping errBadPod", err)
				}
				if ie.Index == "" || ie.Key == "" {
					t.Errorf("IndexError without index or key: %+v", ie)
				}
				if got := snapshotOf(t, idx); !slices.Equal(got, before) {
					t.Errorf("contents = %q, want %q", got, before)
				}
				checkIndex(t, idx, "byApp", failOnLabel)
				checkIndex(t, idx, "byNode", byNode)
				checkIndex(t, idx, cache.NamespaceIndex, cache.NamespaceIndexFunc[*corev1.Pod])
				if got := len(idx.Indexers()); got != 3 {
					t.Errorf("%d indexes, want 3", got)
				}
				if msg := err.Error(); !strings.Contains(msg, ie.Index) || !strings.Contains(msg, ie.Key) || !strings.Contains(msg, "bad pod") {
					t.Errorf("message %q lacks index, key or cause", msg)
				}
			})
		}
	}
}

func TestDeleteNeverCallsIndexFunctions(t *testing.T) {
	calls := 0
	idx := cache.NewIndexer(cache.Indexers[*corev1.Pod]{"counting": func(p *corev1.Pod) ([]string, error) {
		calls++
		return []string{p.Name}, nil
	}})
	_ = idx.Add(newPod("a", "x"))
	calls = 0
	if err := idx.Delete(newPod("a", "x")); err != nil || calls != 0 {
		t.Fatalf("Delete: err %v, %d index calls", err, calls)
	}
}

func TestAddIndexersAfterData(t *testing.T) {
	for name, wrap := range flavors {
		t.Run(name, func(t *testing.T) { testAddIndexersAfterData(t, wrap(cache.NewIndexer[*corev1.Pod](nil))) })
	}
}

func testAddIndexersAfterData(t *testing.T, idx cache.Indexer[*corev1.Pod]) {
	pods := []*corev1.Pod{
		newPod("a", "x", node("n1"), volumes("v1")),
		newPod("a", "y", node("n2"), volumes("v1", "v2")),
		newPod("b", "z", node("n1")),
	}
	for _, p := range pods[:2] {
		_ = idx.Add(p)
	}
	if err := idx.AddIndexers(cache.Indexers[*corev1.Pod]{"byNode": byNode}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, idx, "byNode", byNode)
	_ = idx.Add(pods[2])
	if err := idx.AddIndexers(cache.Indexers[*corev1.Pod]{"byVolume": byVolume}); err != nil {
		t.Fatal(err)
	}
	_ = idx.Update(newPod("a", "x", node("n3"), volumes("v2")))
	checkIndex(t, idx, "byNode", byNode)
	checkIndex(t, idx, "byVolume", byVolume)
	if _, err := idx.Replace([]*corev1.Pod{newPod("c", "w", node("n1"), volumes("v9"))}); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, idx, "byNode", byNode)
	checkIndex(t, idx, "byVolume", byVolume)

	tests := []struct {
		name     string
		indexers cache.Indexers[*corev1.Pod]
	}{
		{"name taken", cache.Indexers[*corev1.Pod]{"fresh": byNode, "byNode": byNode}},
		{"nil function", cache.Indexers[*corev1.Pod]{"fresh": byNode, "broken": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := idx.AddIndexers(tt.indexers); err == nil {
				t.Fatal("no error")
			}
			if _, err := idx.ByIndex("fresh", "n1"); !errors.Is(err, cache.ErrNoSuchIndex) {
				t.Fatalf("a failed AddIndexers added an index: %v", err)
			}
		})
	}
}

// TestConcurrentWritesAndAddIndexers races writers, Replace and
// AddIndexers, then checks that every index agrees with its function.
func TestConcurrentWritesAndAddIndexers(t *testing.T) {
	idx := cache.NewIndexer(cache.Indexers[*corev1.Pod]{"byNode": byNode})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				p := newPod(fmt.Sprint("ns", i%5), fmt.Sprint("p", w, "-", i%50), node(fmt.Sprint("n", i%7)), volumes(fmt.Sprint("v", i%3)))
				if i%10 == 9 {
					_ = idx.Delete(p)
				} else {
					_ = idx.Update(p)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			var items []*corev1.Pod
			for j := range 30 {
				items = append(items, newPod("r", fmt.Sprint("r", i, "-", j), node(fmt.Sprint("n", j%4)), volumes("rv")))
			}
			if _, err := idx.Replace(items); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Go(func() {
		for i := range 5 {
			if err := idx.AddIndexers(cache.Indexers[*corev1.Pod]{fmt.Sprint("byVolume", i): byVolume}); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	checkIndex(t, idx, "byNode", byNode)
	checkIndex(t, idx, cache.NamespaceIndex, cache.NamespaceIndexFunc[*corev1.Pod])
	for i := range 5 {
		checkIndex(t, idx, fmt.Sprint("byVolume", i), byVolume)
	}
}
