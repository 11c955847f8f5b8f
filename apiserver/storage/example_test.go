package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/etcdtest"
)

// A list, then a watch from the list's revision: the informer pattern.
func ExampleMemory() {
	ctx := context.Background()
	store := storage.NewMemory(storage.MemoryConfig{})
	defer store.Close()

	for _, name := range []string{"a", "b", "c"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
		if _, err := store.Create(ctx, "/core/configmaps/demo/"+name, cm); err != nil {
			panic(err)
		}
	}

	page, err := store.List(ctx, "/core/configmaps/demo/", storage.ListOptions{Limit: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println("page of", len(page.Items), "at revision", page.Revision, "remaining", *page.RemainingItemCount)
	rest, err := store.List(ctx, "/core/configmaps/demo/", storage.ListOptions{Limit: 2, Continue: page.Continue})
	if err != nil {
		panic(err)
	}
	fmt.Println("next page:", rest.Items[0].GetName(), "at revision", rest.Revision)

	w, err := store.Watch(ctx, "/core/configmaps/demo/", storage.WatchOptions{ResourceVersion: page.Revision})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	last, err := store.Delete(ctx, "/core/configmaps/demo/b", nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("deleted b at", last.GetResourceVersion())
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.GetName(), ev.Revision)
	// Output:
	// page of 2 at revision 3 remaining 1
	// next page: c at revision 3
	// deleted b at 4
	// DELETED b 4
}

// configMapCodec stores ConfigMaps as JSON (the API server's Codec stores
// built-in kinds as protobuf, custom resources as JSON).
type configMapCodec struct{}

func (configMapCodec) Encode(_ string, obj storage.Object) ([]byte, error) { return json.Marshal(obj) }

func (configMapCodec) Decode(_ string, data []byte) (storage.Object, error) {
	cm := &corev1.ConfigMap{}
	return cm, json.Unmarshal(data, cm)
}

// A durable store: what was written is there after the store is opened
// again, at the same revisions, and watches resume from a revision read
// before.
func ExampleOpenBolt() {
	dir, err := os.MkdirTemp("", "kapi-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg := storage.BoltConfig{Path: filepath.Join(dir, "kapi.db"), Codec: configMapCodec{}}
	ctx := context.Background()

	store, err := storage.OpenBolt(cfg)
	if err != nil {
		panic(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "a"}, Data: map[string]string{"k": "v"}}
	created, err := store.Create(ctx, "/core/configmaps/demo/a", cm) // on disk when Create returns
	if err != nil {
		panic(err)
	}
	if _, err := store.Delete(ctx, "/core/configmaps/demo/a", nil, nil); err != nil {
		panic(err)
	}
	store.Close()

	store, err = storage.OpenBolt(cfg)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	old, err := store.Get(ctx, "/core/configmaps/demo/a", storage.ReadOptions{Match: storage.Exact, ResourceVersion: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println("revision", store.Revision(), "; at 1:", old.GetName(), old.(*corev1.ConfigMap).Data["k"], created.GetResourceVersion())
	w, err := store.Watch(ctx, "/core/configmaps/", storage.WatchOptions{ResourceVersion: 1})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.GetName(), ev.Revision)
	// Output:
	// revision 2 ; at 1: a v 1
	// DELETED a 2
}

// Two stores on one etcd cluster (here a member started in process), as
// two API server replicas: a write through one is seen by the other's
// watch, and an update from a version the other replaced is a conflict.
func ExampleOpenEtcd() {
	member, err := etcdtest.Start(etcdtest.Config{})
	if err != nil {
		panic(err)
	}
	defer member.Stop()
	cfg := storage.EtcdConfig{Endpoints: member.Endpoints, Codec: configMapCodec{}}
	a, err := storage.OpenEtcd(cfg)
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := storage.OpenEtcd(cfg)
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx := context.Background()

	w, err := b.Watch(ctx, "/core/configmaps/", storage.WatchOptions{})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "a"}}
	created, err := a.Create(ctx, "/core/configmaps/demo/a", cm)
	if err != nil {
		panic(err)
	}
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.GetName(), ev.Object.GetResourceVersion() == created.GetResourceVersion())

	stale := created.(*corev1.ConfigMap).DeepCopy()
	if _, err := b.GuaranteedUpdate(ctx, "/core/configmaps/demo/a", false, nil, func(cur storage.Object) (storage.Object, error) {
		c := cur.(*corev1.ConfigMap).DeepCopy()
		c.Data = map[string]string{"by": "b"}
		return c, nil
	}); err != nil {
		panic(err)
	}
	_, err = a.GuaranteedUpdate(ctx, "/core/configmaps/demo/a", false, nil, func(storage.Object) (storage.Object, error) {
		stale.Data = map[string]string{"by": "a"}
		return stale, nil // carries the resourceVersion b replaced
	})
	fmt.Println(errors.Is(err, storage.ErrConflict))
	// Output:
	// ADDED a true
	// true
}
