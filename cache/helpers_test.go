package cache_test

import (
	"errors"
	"slices"
	"testing"

	"go.uber.org/goleak"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/cache"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// podOpt sets a field of a test pod.
type podOpt func(*corev1.Pod)

func newPod(ns, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func labels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func node(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func rv(v string) podOpt { return func(p *corev1.Pod) { p.ResourceVersion = v } }

func volumes(names ...string) podOpt {
	return func(p *corev1.Pod) {
		for _, n := range names {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: n})
		}
	}
}

// byNode indexes pods by node; unscheduled pods are not indexed.
func byNode(p *corev1.Pod) ([]string, error) {
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

// byVolume is a multi-value index: one value per volume.
func byVolume(p *corev1.Pod) ([]string, error) {
	var out []string
	for _, v := range p.Spec.Volumes {
		out = append(out, v.Name)
	}
	return out, nil
}

var errBadPod = errors.New("bad pod")

// failOnLabel fails for pods labelled bad=true, and otherwise indexes by
// the "app" label.
func failOnLabel(p *corev1.Pod) ([]string, error) {
	if p.Labels["bad"] == "true" {
		return nil, errBadPod
	}
	return []string{p.Labels["app"]}, nil
}

// keysOf returns the sorted keys of objs.
func keysOf[T cache.Object](t testing.TB, objs []T) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		k, err := cache.KeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// snapshotOf describes the contents of s as "key@rv" strings, sorted.
func snapshotOf(t testing.TB, s cache.Store[*corev1.Pod]) []string {
	t.Helper()
	var out []string
	for _, p := range s.List() {
		out = append(out, cache.JoinKey(p.Namespace, p.Name)+"@"+p.ResourceVersion)
	}
	slices.Sort(out)
	if n := s.Len(); n != len(out) {
		t.Errorf("Len() = %d, List has %d objects", n, len(out))
	}
	keys := s.ListKeys()
	slices.Sort(keys)
	if want := keysOf(t, s.List()); !slices.Equal(keys, want) {
		t.Errorf("ListKeys() = %v, want %v", keys, want)
	}
	return out
}

// checkIndex verifies that the named index of idx agrees with fn applied
// to the stored objects, in both directions.
func checkIndex(t testing.TB, idx cache.Indexer[*corev1.Pod], name string, fn cache.IndexFunc[*corev1.Pod]) {
	t.Helper()
	want := map[string][]string{}
	for _, p := range idx.List() {
		vals, err := fn(p)
		if err != nil {
			t.Fatalf("index %q: %v", name, err)
		}
		k := cache.JoinKey(p.Namespace, p.Name)
		for _, v := range vals {
			if !slices.Contains(want[v], k) {
				want[v] = append(want[v], k)
			}
		}
	}
	var wantValues []string
	for v, keys := range want {
		slices.Sort(keys)
		wantValues = append(wantValues, v)
	}
	slices.Sort(wantValues)
	if got := idx.ListIndexFuncValues(name); !slices.Equal(got, wantValues) {
		t.Errorf("ListIndexFuncValues(%q) = %q, want %q", name, got, wantValues)
	}
	for _, v := range wantValues {
		got, err := idx.IndexKeys(name, v)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want[v]) {
			t.Errorf("IndexKeys(%q, %q) = %q, want %q", name, v, got, want[v])
		}
		objs, err := idx.ByIndex(name, v)
		if err != nil {
			t.Fatal(err)
		}
		if got := keysOf(t, objs); !slices.Equal(got, want[v]) {
			t.Errorf("ByIndex(%q, %q) = %q, want %q", name, v, got, want[v])
		}
	}
}
