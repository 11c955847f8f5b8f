package cache_test

import (
	"strconv"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/selector"
)

const (
	benchPods       = 50_000
	benchNamespaces = 100 // 500 pods each
	benchNodes      = 500 // 100 pods each
)

// benchItems returns n pods spread over benchNamespaces namespaces and
// benchNodes nodes, in the order a server lists them (by namespace, then
// name), all with resourceVersion rv.
func benchItems(n int, rv string) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, n)
	perNS := n / benchNamespaces
	for ns := range benchNamespaces {
		nsName := "namespace-" + strconv.Itoa(ns)
		for i := range perNS {
			j := ns*perNS + i
			p := newPod(nsName, "pod-"+strconv.Itoa(i),
				labels("app", "app-"+strconv.Itoa(i%10), "pod-template-hash", "5d8f7c9b6"),
				node("node-"+strconv.Itoa(j%benchNodes)))
			p.ResourceVersion = rv
			out = append(out, p)
		}
	}
	return out
}

func benchIndexer(b *testing.B, withNodeIndex bool, items []*corev1.Pod) cache.Indexer[*corev1.Pod] {
	b.Helper()
	var indexers cache.Indexers[*corev1.Pod]
	if withNodeIndex {
		indexers = cache.Indexers[*corev1.Pod]{"byNode": byNode}
	}
	idx := cache.NewIndexer(indexers)
	if _, err := idx.Replace(items); err != nil {
		b.Fatal(err)
	}
	return idx
}

var indexSetups = []struct {
	name      string
	nodeIndex bool
}{
	{"namespace-index-only", false},
	{"with-byNode-index", true},
}

// BenchmarkAdd adds objects with new keys to a store that grows to 50,000
// objects and is then emptied (untimed).
func BenchmarkAdd(b *testing.B) {
	items := benchItems(benchPods, "1")
	for _, setup := range indexSetups {
		b.Run(setup.name, func(b *testing.B) {
			idx := benchIndexer(b, setup.nodeIndex, nil)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == len(items) {
					b.StopTimer()
					idx = benchIndexer(b, setup.nodeIndex, nil)
					i = 0
					b.StartTimer()
				}
				if err := idx.Add(items[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkUpdate replaces objects of a 50,000-object store with newer
// versions; every tenth update moves the pod to another node.
func BenchmarkUpdate(b *testing.B) {
	items := benchItems(benchPods, "1")
	newer := benchItems(benchPods, "2")
	for i, p := range newer {
		if i%10 == 0 {
			p.Spec.NodeName = "node-moved"
		}
	}
	for _, setup := range indexSetups {
		b.Run(setup.name, func(b *testing.B) {
			idx := benchIndexer(b, setup.nodeIndex, items)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := idx.Update(newer[i%len(newer)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkReplace swaps in a list of 50,000 pods: into an empty store (the
// initial list), and into a store holding an older version of the same
// pods (a relist), with and without computing the diff an informer needs.
func BenchmarkReplace(b *testing.B) {
	items := benchItems(benchPods, "2")
	older := benchItems(benchPods, "1")
	for _, setup := range indexSetups {
		b.Run(setup.name+"/initial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				idx := benchIndexer(b, setup.nodeIndex, nil)
				if _, err := idx.Replace(items); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(setup.name+"/relist", func(b *testing.B) {
			idx := benchIndexer(b, setup.nodeIndex, older)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := idx.Replace(items); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(setup.name+"/relist+diff", func(b *testing.B) {
			idx := benchIndexer(b, setup.nodeIndex, older)
			b.ReportAllocs()
			for b.Loop() {
				diff, err := idx.Replace(items)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for range diff.All() {
					n++
				}
				if n != len(items) {
					b.Fatalf("%d changes", n)
				}
			}
		})
	}
}

// BenchmarkList compares listing everything with listing one namespace
// (1/100 of the objects), with and without a label selector.
func BenchmarkList(b *testing.B) {
	idx := benchIndexer(b, false, benchItems(benchPods, "1"))
	lister := cache.NewLister(idx, corev1Pods)
	sel := selector.MustParseLabels("app=app-3")
	ns := "namespace-42"
	cases := []struct {
		name string
		list func() ([]*corev1.Pod, error)
		want int
	}{
		{"Indexer.List", func() ([]*corev1.Pod, error) { return idx.List(), nil }, benchPods},
		{"Lister.List/everything", func() ([]*corev1.Pod, error) { return lister.List(selector.Everything()) }, benchPods},
		{"Lister.List/selector", func() ([]*corev1.Pod, error) { return lister.List(sel) }, benchPods / 10},
		{"ByIndex(namespace)", func() ([]*corev1.Pod, error) { return idx.ByIndex(cache.NamespaceIndex, ns) }, benchPods / benchNamespaces},
		{"Lister.Namespace.List/everything", func() ([]*corev1.Pod, error) { return lister.Namespace(ns).List(selector.Everything()) }, benchPods / benchNamespaces},
		{"Lister.Namespace.List/selector", func() ([]*corev1.Pod, error) { return lister.Namespace(ns).List(sel) }, benchPods / benchNamespaces / 10},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := c.list()
				if err != nil || len(got) != c.want {
					b.Fatalf("%d objects, %v; want %d", len(got), err, c.want)
				}
			}
		})
	}
}

// BenchmarkByIndex queries a user-defined index with 500 values of 100
// objects each.
func BenchmarkByIndex(b *testing.B) {
	idx := benchIndexer(b, true, benchItems(benchPods, "1"))
	per := benchPods / benchNodes
	b.Run("ByIndex", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, _ := idx.ByIndex("byNode", "node-7"); len(got) != per {
				b.Fatalf("%d objects", len(got))
			}
		}
	})
	b.Run("IndexKeys", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, _ := idx.IndexKeys("byNode", "node-7"); len(got) != per {
				b.Fatalf("%d keys", len(got))
			}
		}
	})
	probe := newPod("x", "probe", node("node-7"))
	b.Run("Index", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, _ := idx.Index("byNode", probe); len(got) != per {
				b.Fatalf("%d objects", len(got))
			}
		}
	})
}

// BenchmarkGet looks objects up by key and through a lister.
func BenchmarkGet(b *testing.B) {
	idx := benchIndexer(b, false, benchItems(benchPods, "1"))
	lister := cache.NewLister(idx, corev1Pods)
	b.Run("GetByKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := idx.GetByKey("namespace-42/pod-17"); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("Lister.Namespace.Get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := lister.Namespace("namespace-42").Get("pod-17"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
