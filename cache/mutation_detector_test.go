package cache_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/cache"
)

// reports collects what a detector passes to OnMutation.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) add(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *reports) get() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}

func newDetector(t *testing.T) (*cache.MutationDetector[*corev1.Pod], *reports) {
	t.Helper()
	r := &reports{}
	d, err := cache.NewMutationDetector(newPodIndexer(), cache.MutationDetectorConfig[*corev1.Pod]{OnMutation: r.add})
	if err != nil {
		t.Fatal(err)
	}
	return d, r
}

func TestMutationDetectorCheck(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		field  string // "" for no mutation
	}{
		{"untouched", func(p *corev1.Pod) {}, ""},
		{"set to the same value", func(p *corev1.Pod) { p.Labels["app"] = "web" }, ""},
		{"label value", func(p *corev1.Pod) { p.Labels["app"] = "db" }, `.ObjectMeta.Labels["app"]`},
		{"label added", func(p *corev1.Pod) { p.Labels["new"] = "x" }, `.ObjectMeta.Labels`},
		{"annotations from nil", func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "b"} }, `.ObjectMeta.Annotations`},
		{"nil map to empty map is no change", func(p *corev1.Pod) { p.Annotations = map[string]string{} }, ""},
		{"spec field", func(p *corev1.Pod) { p.Spec.NodeName = "elsewhere" }, `.Spec.NodeName`},
		{"slice element", func(p *corev1.Pod) { p.Spec.Volumes[1].Name = "changed" }, `.Spec.Volumes[1].Name`},
		{"slice grown", func(p *corev1.Pod) { p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "v"}) }, `.Spec.Volumes`},
		{"pointer field", func(p *corev1.Pod) { p.DeletionGracePeriodSeconds = new(int64(0)) }, `.ObjectMeta.DeletionGracePeriodSeconds`},
		{"resourceVersion", func(p *corev1.Pod) { p.ResourceVersion = "99" }, `.ObjectMeta.ResourceVersion`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, r := newDetector(t)
			_ = d.Add(newPod("a", "x", labels("app", "web"), volumes("data", "logs"), rv("1")))
			_ = d.Add(newPod("a", "untouched"))
			p, _ := d.GetByKey("a/x")
			tt.mutate(p)

			err := d.Check()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			var me *cache.MutationError
			if !errors.As(err, &me) {
				t.Fatalf("Check() = %v, want a *MutationError", err)
			}
			if len(me.Objects) != 1 || me.Objects[0].Key != "a/x" || me.Objects[0].Field != tt.field {
				t.Fatalf("Check() found %+v, want a/x at %s", me.Objects, tt.field)
			}
			if !strings.Contains(err.Error(), "DeepCopy") {
				t.Errorf("message gives no advice: %v", err)
			}
			if len(r.get()) != 0 {
				t.Errorf("Check called OnMutation")
			}
		})
	}
}

func TestMutationDetectorOnWrite(t *testing.T) {
	tests := []struct {
		name  string
		write func(d *cache.MutationDetector[*corev1.Pod], mutated *corev1.Pod) error
	}{
		{"update with the mutated object", func(d *cache.MutationDetector[*corev1.Pod], p *corev1.Pod) error { return d.Update(p) }},
		{"update with a new object", func(d *cache.MutationDetector[*corev1.Pod], p *corev1.Pod) error {
			return d.Update(newPod("a", "x", rv("2")))
		}},
		{"delete", func(d *cache.MutationDetector[*corev1.Pod], p *corev1.Pod) error { return d.Delete(newPod("a", "x")) }},
		{"replace", func(d *cache.MutationDetector[*corev1.Pod], p *corev1.Pod) error {
			_, err := d.Replace([]*corev1.Pod{newPod("a", "x", rv("2"))})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, r := newDetector(t)
			_ = d.Add(newPod("a", "x", labels("app", "web"), rv("1")))
			_ = d.Add(newPod("a", "y", labels("app", "web"), rv("1")))
			p, _ := d.GetByKey("a/x")
			p.Labels["app"] = "hacked" // the bug

			if err := tt.write(d, p); err != nil {
				t.Fatal(err)
			}
			errs := r.get()
			var me *cache.MutationError
			if len(errs) != 1 || !errors.As(errs[0], &me) || len(me.Objects) != 1 || me.Objects[0].Key != "a/x" {
				t.Fatalf("OnMutation got %v, want one mutation of a/x", errs)
			}
			// The write went through, and what it stored is watched
			// afresh.
			if err := d.Check(); err != nil {
				t.Fatalf("Check() after the write = %v", err)
			}
		})
	}
}

func TestMutationDetectorCorrectUse(t *testing.T) {
	d, r := newDetector(t)
	_ = d.Add(newPod("a", "x", labels("app", "web"), rv("1")))
	cached, _ := d.GetByKey("a/x")
	changed := cached.DeepCopy()
	changed.Labels["app"] = "db"
	changed.ResourceVersion = "2"
	_ = d.Update(changed)
	_, _ = d.Replace([]*corev1.Pod{newPod("a", "x", rv("3")), newPod("b", "y", rv("3"))})
	_ = d.Delete(newPod("b", "y"))
	_ = d.Delete(newPod("b", "never-there"))
	if err := d.Check(); err != nil || len(r.get()) != 0 {
		t.Fatalf("false positive: Check() = %v, reports %v", err, r.get())
	}
	if got := snapshotOf(t, d); len(got) != 1 || got[0] != "a/x@3" {
		t.Fatalf("contents %q", got)
	}
}

func TestMutationDetectorPanicsByDefault(t *testing.T) {
	d, err := cache.NewMutationDetector(newPodIndexer(), cache.MutationDetectorConfig[*corev1.Pod]{})
	if err != nil {
		t.Fatal(err)
	}
	_ = d.Add(newPod("a", "x"))
	p, _ := d.GetByKey("a/x")
	p.Spec.NodeName = "n1"
	defer func() {
		v := recover()
		err, ok := v.(error)
		var me *cache.MutationError
		if !ok || !errors.As(err, &me) {
			t.Fatalf("recovered %v, want a *MutationError", v)
		}
	}()
	_ = d.Update(p)
	t.Fatal("no panic")
}

func TestMutationDetectorCopyFunc(t *testing.T) {
	// metav1.Object has no DeepCopy method returning metav1.Object.
	if _, err := cache.NewMutationDetector(cache.NewIndexer[metav1.Object](nil), cache.MutationDetectorConfig[metav1.Object]{}); err == nil {
		t.Fatal("no error without a copy function")
	}

	copyObj := func(o metav1.Object) metav1.Object {
		switch o := o.(type) {
		case *corev1.Pod:
			c := o.DeepCopy()
			if c.Labels == nil {
				c.Labels = map[string]string{} // nil and empty compare equal
			}
			return c
		case *corev1.Namespace:
			return o.DeepCopy()
		}
		panic("unexpected type")
	}
	d, err := cache.NewMutationDetector(cache.NewIndexer[metav1.Object](nil), cache.MutationDetectorConfig[metav1.Object]{Copy: copyObj})
	if err != nil {
		t.Fatal(err)
	}
	_ = d.Add(newPod("a", "x"))
	_ = d.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	if err := d.Check(); err != nil {
		t.Fatalf("false positive: %v", err)
	}
	ns, _ := d.GetByKey("a")
	ns.SetLabels(map[string]string{"x": "y"})
	if err := d.Check(); err == nil {
		t.Fatal("mutation of a namespace not found")
	}
}

func TestMutationDetectorUnstructured(t *testing.T) {
	d, err := cache.NewMutationDetector(cache.NewIndexer[*unstructured.Unstructured](nil), cache.MutationDetectorConfig[*unstructured.Unstructured]{})
	if err != nil {
		t.Fatal(err)
	}
	u := unstructuredPod("a", "x")
	_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
	_ = d.Add(u)
	if err := d.Check(); err != nil {
		t.Fatalf("false positive: %v", err)
	}
	_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
	err = d.Check()
	var me *cache.MutationError
	if !errors.As(err, &me) || me.Objects[0].Field != `.Object["spec"]["replicas"]` {
		t.Fatalf("Check() = %v", err)
	}
}
