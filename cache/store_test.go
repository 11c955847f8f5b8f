package cache_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/cache"
)

func TestKeyFunc(t *testing.T) {
	var nilPod *corev1.Pod
	tests := []struct {
		name    string
		obj     metav1.Object
		want    string
		wantErr error
	}{
		{"namespaced", newPod("default", "web"), "default/web", nil},
		{"cluster-scoped", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}, "kube-system", nil},
		{"unstructured", unstructuredPod("ns", "u"), "ns/u", nil},
		{"nil interface", nil, "", cache.ErrNilObject},
		{"nil pointer", nilPod, "", cache.ErrNilObject},
		{"no name", newPod("default", ""), "", cache.ErrInvalidKey},
		{"slash in name", newPod("default", "a/b"), "", cache.ErrInvalidKey},
		{"slash in namespace", newPod("a/b", "c"), "", cache.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cache.KeyFunc(tt.obj)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("KeyFunc = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSplitKey(t *testing.T) {
	tests := []struct {
		key      string
		ns, name string
		ok       bool
	}{
		{"default/web", "default", "web", true},
		{"web", "", "web", true},
		{"", "", "", false},
		{"a/b/c", "", "", false},
		{"/web", "", "", false},
		{"default/", "", "", false},
		{"/", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			ns, name, err := cache.SplitKey(tt.key)
			if (err == nil) != tt.ok || ns != tt.ns || name != tt.name {
				t.Fatalf("SplitKey(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.key, ns, name, err, tt.ns, tt.name, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, cache.ErrInvalidKey) {
					t.Errorf("error %v does not wrap ErrInvalidKey", err)
				}
				return
			}
			if back := cache.JoinKey(ns, name); back != tt.key {
				t.Errorf("JoinKey(%q, %q) = %q, want %q", ns, name, back, tt.key)
			}
		})
	}
}

func TestStoreCRUD(t *testing.T) {
	type op struct {
		kind string // "add", "update", "delete"
		pod  *corev1.Pod
	}
	tests := []struct {
		name string
		ops  []op
		want []string // key@rv, sorted
	}{
		{
			name: "add",
			ops:  []op{{"add", newPod("a", "x", rv("1"))}, {"add", newPod("b", "x", rv("2"))}, {"add", newPod("", "x", rv("3"))}},
			want: []string{"a/x@1", "b/x@2", "x@3"},
		},
		{
			name: "add twice replaces",
			ops:  []op{{"add", newPod("a", "x", rv("1"))}, {"add", newPod("a", "x", rv("2"))}},
			want: []string{"a/x@2"},
		},
		{
			name: "update of a missing object adds it",
			ops:  []op{{"update", newPod("a", "x", rv("5"))}},
			want: []string{"a/x@5"},
		},
		{
			name: "update",
			ops:  []op{{"add", newPod("a", "x", rv("1"))}, {"update", newPod("a", "x", rv("2"))}},
			want: []string{"a/x@2"},
		},
		{
			name: "delete by key only",
			ops:  []op{{"add", newPod("a", "x", rv("1"))}, {"add", newPod("a", "y", rv("2"))}, {"delete", newPod("a", "x", rv("3"))}},
			want: []string{"a/y@2"},
		},
		{
			name: "delete of a missing object",
			ops:  []op{{"add", newPod("a", "x", rv("1"))}, {"delete", newPod("a", "nope")}},
			want: []string{"a/x@1"},
		},
		{
			name: "delete last object of a namespace",
			ops:  []op{{"add", newPod("a", "x", rv("1"))}, {"delete", newPod("a", "x", rv("2"))}, {"add", newPod("a", "x", rv("3"))}},
			want: []string{"a/x@3"},
		},
		{
			name: "same name in two namespaces and cluster scope",
			ops:  []op{{"add", newPod("a", "x")}, {"add", newPod("b", "x")}, {"add", newPod("", "x")}, {"delete", newPod("", "x")}},
			want: []string{"a/x@", "b/x@"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cache.NewStore[*corev1.Pod]()
			for _, o := range tt.ops {
				var err error
				switch o.kind {
				case "add":
					err = s.Add(o.pod)
				case "update":
					err = s.Update(o.pod)
				case "delete":
					err = s.Delete(o.pod)
				}
				if err != nil {
					t.Fatalf("%s %s/%s: %v", o.kind, o.pod.Namespace, o.pod.Name, err)
				}
			}
			if got := snapshotOf(t, s); !slices.Equal(got, tt.want) {
				t.Errorf("contents = %q, want %q", got, tt.want)
			}
			for _, w := range tt.want {
				key, _, _ := strings.Cut(w, "@")
				p, ok := s.GetByKey(key)
				if !ok || cache.JoinKey(p.Namespace, p.Name) != key {
					t.Errorf("GetByKey(%q) = %v, %v", key, p, ok)
				}
				ns, name, _ := cache.SplitKey(key)
				got, ok, err := s.Get(newPod(ns, name))
				if err != nil || !ok || got != p {
					t.Errorf("Get(%q) = %p, %v, %v; want %p", key, got, ok, err, p)
				}
			}
		})
	}
}

func TestStoreReturnsSharedObjects(t *testing.T) {
	s := cache.NewStore[*corev1.Pod]()
	p := newPod("a", "x")
	if err := s.Add(p); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetByKey("a/x")
	if got != p || s.List()[0] != p {
		t.Fatal("the store must hand out the pointer it was given")
	}
}

func TestStoreRejectsUnkeyableObjects(t *testing.T) {
	var nilPod *corev1.Pod
	tests := []struct {
		name string
		pod  *corev1.Pod
		want error
	}{
		{"nil", nilPod, cache.ErrNilObject},
		{"no name", newPod("a", ""), cache.ErrInvalidKey},
		{"slash", newPod("a", "x/y"), cache.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := cache.NewStore[*corev1.Pod]()
			if err := s.Add(newPod("a", "keep")); err != nil {
				t.Fatal(err)
			}
			for name, write := range map[string]func(*corev1.Pod) error{"Add": s.Add, "Update": s.Update, "Delete": s.Delete} {
				if err := write(tt.pod); !errors.Is(err, tt.want) {
					t.Errorf("%s: error %v, want %v", name, err, tt.want)
				}
			}
			if _, _, err := s.Get(tt.pod); !errors.Is(err, tt.want) {
				t.Errorf("Get: error %v, want %v", err, tt.want)
			}
			if _, err := s.Replace([]*corev1.Pod{newPod("a", "new"), tt.pod}); !errors.Is(err, tt.want) {
				t.Errorf("Replace: error %v, want %v", err, tt.want)
			}
			if got := snapshotOf(t, s); !slices.Equal(got, []string{"a/keep@"}) {
				t.Errorf("contents = %q after failed writes", got)
			}
		})
	}
}

func TestGetByKeyMalformed(t *testing.T) {
	s := cache.NewStore[*corev1.Pod]()
	_ = s.Add(newPod("", "x"))
	_ = s.Add(newPod("a", "x"))
	for _, key := range []string{"", "/x", "a/", "a/x/y", "b/x"} {
		if p, ok := s.GetByKey(key); ok {
			t.Errorf("GetByKey(%q) = %v, want nothing", key, p)
		}
	}
}

func unstructuredPod(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestUnstructuredStore(t *testing.T) {
	idx := cache.NewIndexer(cache.Indexers[*unstructured.Unstructured]{
		"byKind": func(u *unstructured.Unstructured) ([]string, error) { return []string{u.GetKind()}, nil },
	})
	for _, n := range []string{"a", "b"} {
		if err := idx.Add(unstructuredPod("ns", n)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := idx.ByIndex("byKind", "Pod")
	if err != nil || len(got) != 2 {
		t.Fatalf("ByIndex = %d objects, %v", len(got), err)
	}
	if _, ok := idx.GetByKey("ns/a"); !ok {
		t.Fatal("GetByKey(ns/a) found nothing")
	}
}

// TestInterfaceTypeArgument checks that a store can hold objects of mixed
// kinds through the metav1.Object interface.
func TestInterfaceTypeArgument(t *testing.T) {
	s := cache.NewStore[metav1.Object]()
	if err := s.Add(newPod("a", "x")); err != nil {
		t.Fatal(err)
	}
	var nilPod *corev1.Pod
	for _, obj := range []metav1.Object{nil, nilPod} {
		if err := s.Add(obj); !errors.Is(err, cache.ErrNilObject) {
			t.Fatalf("Add(%#v) = %v", obj, err)
		}
	}
	if _, ok := s.GetByKey("a/x"); !ok {
		t.Fatal("GetByKey(a/x) found nothing")
	}
}
