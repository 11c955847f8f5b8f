package storage

import (
	"context"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// secretView shows Secrets stored under /core/secrets/ as ConfigMaps under
// /test/views/: data is copied both ways, as strings.
func secretView(inner Interface) Interface {
	return Converting(inner, Conversion{
		Prefix: "/test/views/", StoragePrefix: "/core/secrets/",
		ToStorage: func(o Object) Object {
			cm := o.(*corev1.ConfigMap)
			s := &corev1.Secret{ObjectMeta: *cm.ObjectMeta.DeepCopy()}
			for k, v := range cm.Data {
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				s.Data[k] = []byte(v)
			}
			return s
		},
		FromStorage: func(o Object) Object {
			s := o.(*corev1.Secret)
			cm := &corev1.ConfigMap{ObjectMeta: *s.ObjectMeta.DeepCopy()}
			for k, v := range s.Data {
				if cm.Data == nil {
					cm.Data = map[string]string{}
				}
				cm.Data[k] = string(v)
			}
			return cm
		},
	})
}

func TestConverting(t *testing.T) {
	ctx := context.Background()
	mem := NewMemory(MemoryConfig{})
	view := secretView(mem)
	defer view.Close() // closes mem

	// Keys outside the view are the store's, unconverted.
	if _, err := view.Create(ctx, "/core/configmaps/ns/plain", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := view.Get(ctx, "/core/configmaps/ns/plain", ReadOptions{}); err != nil || got.(*corev1.ConfigMap).Name != "plain" {
		t.Fatalf("get outside the view: %#v, %v", got, err)
	}

	w, err := view.Watch(ctx, "/test/views/ns/", WatchOptions{Predicate: func(o Object) bool {
		return o.(*corev1.ConfigMap).Data["keep"] == "yes" // sees the view's shape
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := view.Create(ctx, "/test/views/ns/a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Data: map[string]string{"keep": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if cm, ok := created.(*corev1.ConfigMap); !ok || cm.ResourceVersion == "" || cm.Data["keep"] != "yes" {
		t.Fatalf("create returned %#v", created)
	}
	// Stored as a Secret under the storage prefix, read back as a ConfigMap;
	// a read of the stored key sees the Secret.
	stored, err := view.Get(ctx, "/core/secrets/ns/a", ReadOptions{})
	if err != nil || string(stored.(*corev1.Secret).Data["keep"]) != "yes" {
		t.Fatalf("stored %#v, %v", stored, err)
	}
	got, err := view.Get(ctx, "/test/views/ns/a", ReadOptions{})
	if err != nil || got.(*corev1.ConfigMap).Data["keep"] != "yes" {
		t.Fatalf("get %#v, %v", got, err)
	}

	// An update sees and returns the view's shape; an unchanged object is a
	// no-op (no new revision).
	rev := mem.Revision()
	if _, err := view.GuaranteedUpdate(ctx, "/test/views/ns/a", false, nil, func(cur Object) (Object, error) { return cur, nil }); err != nil {
		t.Fatal(err)
	}
	if mem.Revision() != rev {
		t.Error("an unchanged update wrote a revision")
	}
	upd, err := view.GuaranteedUpdate(ctx, "/test/views/ns/a", false, nil, func(cur Object) (Object, error) {
		cm := cur.(*corev1.ConfigMap).DeepCopy()
		cm.Data["more"] = "x"
		return cm, nil
	})
	if err != nil || upd.(*corev1.ConfigMap).Data["more"] != "x" {
		t.Fatalf("update %#v, %v", upd, err)
	}

	list, err := view.List(ctx, "/test/views/", ListOptions{Predicate: func(o Object) bool { return o.(*corev1.ConfigMap).Data["more"] == "x" }})
	if err != nil || len(list.Items) != 1 || list.Items[0].(*corev1.ConfigMap).Name != "a" {
		t.Fatalf("list %+v, %v", list, err)
	}
	if _, err := view.Delete(ctx, "/test/views/ns/a", nil, func(cur Object) error {
		if _, ok := cur.(*corev1.ConfigMap); !ok {
			t.Errorf("delete validates a %T", cur)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []EventType{Added, Modified, Deleted} {
		ev := <-w.ResultChan()
		if ev.Type != want {
			t.Fatalf("event %s, want %s", ev.Type, want)
		}
		if _, ok := ev.Object.(*corev1.ConfigMap); !ok {
			t.Fatalf("%s event carries a %T", ev.Type, ev.Object)
		}
	}
	w.Stop()
	for range w.ResultChan() { // closed once stopped
	}
}
