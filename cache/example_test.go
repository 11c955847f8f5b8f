package cache_test

import (
	"fmt"
	"slices"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/selector"
)

func examplePod(ns, name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, ResourceVersion: "1"},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// names returns the sorted keys of pods.
func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, cache.JoinKey(p.Namespace, p.Name))
	}
	slices.Sort(out)
	return out
}

func ExampleNewIndexer() {
	pods := cache.NewIndexer(cache.Indexers[*corev1.Pod]{
		"byNode": func(p *corev1.Pod) ([]string, error) {
			return []string{p.Spec.NodeName}, nil
		},
	})
	_ = pods.Add(examplePod("default", "web-1", "node-a", nil))
	_ = pods.Add(examplePod("default", "web-2", "node-b", nil))
	_ = pods.Add(examplePod("kube-system", "dns", "node-a", nil))

	onA, _ := pods.ByIndex("byNode", "node-a")
	fmt.Println(names(onA))
	fmt.Println(pods.ListIndexFuncValues("byNode"))

	// The namespace index is built in.
	inDefault, _ := pods.IndexKeys(cache.NamespaceIndex, "default")
	fmt.Println(inDefault)
	// Output:
	// [default/web-1 kube-system/dns]
	// [node-a node-b]
	// [default/web-1 default/web-2]
}

func ExampleIndexer_AddIndexers() {
	pods := cache.NewIndexer[*corev1.Pod](nil)
	_ = pods.Add(examplePod("default", "web-1", "node-a", map[string]string{"app": "web"}))
	_ = pods.Add(examplePod("default", "db-0", "node-a", map[string]string{"app": "db"}))

	// An index added later covers the objects already stored.
	err := pods.AddIndexers(cache.Indexers[*corev1.Pod]{
		"byApp": func(p *corev1.Pod) ([]string, error) { return []string{p.Labels["app"]}, nil },
	})
	fmt.Println(err)
	web, _ := pods.ByIndex("byApp", "web")
	fmt.Println(names(web))
	// Output:
	// <nil>
	// [default/web-1]
}

func ExampleIndexError() {
	pods := cache.NewIndexer(cache.Indexers[*corev1.Pod]{
		"byOwner": func(p *corev1.Pod) ([]string, error) {
			if len(p.OwnerReferences) == 0 {
				return nil, fmt.Errorf("no owner")
			}
			return []string{string(p.OwnerReferences[0].UID)}, nil
		},
	})
	// The failing write is not applied, not even in part; nothing panics.
	err := pods.Add(examplePod("default", "orphan", "", nil))
	fmt.Println(err)
	fmt.Println(pods.Len())
	// Output:
	// cache: index "byOwner" of object "default/orphan": no owner
	// 0
}

func ExampleNewLister() {
	pods := cache.NewIndexer[*corev1.Pod](nil)
	_ = pods.Add(examplePod("prod", "web-1", "", map[string]string{"app": "web"}))
	_ = pods.Add(examplePod("prod", "db-0", "", map[string]string{"app": "db"}))
	_ = pods.Add(examplePod("dev", "web-1", "", map[string]string{"app": "web"}))

	lister := cache.NewLister(pods, metav1.GroupResource{Resource: "pods"})

	web, _ := lister.List(selector.MustParseLabels("app=web"))
	fmt.Println(names(web))

	// One namespace, through the namespace index.
	prod, _ := lister.Namespace("prod").List(selector.Everything())
	fmt.Println(names(prod))

	_, err := lister.Namespace("prod").Get("web-2")
	fmt.Println(err, cache.IsNotFound(err))
	// Output:
	// [dev/web-1 prod/web-1]
	// [prod/db-0 prod/web-1]
	// pods "web-2" not found true
}

// A reflector relists after a broken watch: Replace swaps the contents and
// reports the changes, with the last known state of the objects that
// vanished.
func ExampleStore_Replace() {
	store := cache.NewStore[*corev1.Pod]()
	_, _ = store.Replace([]*corev1.Pod{
		examplePod("default", "kept", "", nil),
		examplePod("default", "gone", "", nil),
	})

	newer := examplePod("default", "kept", "", nil)
	newer.ResourceVersion = "12"
	diff, err := store.Replace([]*corev1.Pod{newer, examplePod("default", "new", "", nil)})
	if err != nil {
		fmt.Println(err)
		return
	}
	for c := range diff.All() {
		switch c.Type {
		case cache.Added:
			fmt.Println("add", c.New.Name)
		case cache.Updated:
			fmt.Println("update", c.Old.Name, c.Old.ResourceVersion, "->", c.New.ResourceVersion)
		case cache.Deleted:
			fmt.Println("delete", c.Old.Name, "last seen at", c.Old.ResourceVersion)
		}
	}
	// Output:
	// delete gone last seen at 1
	// update kept 1 -> 12
	// add new
}

// An informer hands out its cache as a read-only view: readers can query
// it and build listers over it, but not write to it.
func ExampleReadOnly() {
	pods := cache.NewIndexer[*corev1.Pod](nil)
	_ = pods.Add(examplePod("default", "web", "node-a", nil))
	view := cache.ReadOnly[*corev1.Pod](pods)

	_, writable := view.(cache.Indexer[*corev1.Pod])
	fmt.Println(view.ListKeys(), writable)
	// Output:
	// [default/web] false
}

func ExampleNewMutationDetector() {
	// In a test, wrap the informer's indexer and check at the end.
	pods, err := cache.NewMutationDetector(cache.NewIndexer[*corev1.Pod](nil), cache.MutationDetectorConfig[*corev1.Pod]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = pods.Add(examplePod("default", "web", "node-a", map[string]string{"app": "web"}))

	// The bug: modifying an object from the cache.
	cached, _ := pods.GetByKey("default/web")
	cached.Labels["app"] = "oops"

	fmt.Println(pods.Check())
	// Output:
	// cache: a cached object was modified in place (objects from a cache are shared; DeepCopy before modifying): "default/web" at .ObjectMeta.Labels["app"]
}

func ExampleSplitKey() {
	for _, key := range []string{"default/web", "kube-system", "a/b/c"} {
		ns, name, err := cache.SplitKey(key)
		fmt.Printf("%q %q %v\n", ns, name, err)
	}
	// Output:
	// "default" "web" <nil>
	// "" "kube-system" <nil>
	// "" "" cache: invalid key: "a/b/c" is not "name" or "namespace/name"
}

func ExampleKeyFunc() {
	key, _ := cache.KeyFunc(examplePod("default", "web", "", nil))
	fmt.Println(key)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	key, _ = cache.KeyFunc(ns)
	fmt.Println(key)
	// Output:
	// default/web
	// default
}
