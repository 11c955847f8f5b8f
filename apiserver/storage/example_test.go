package storage_test

import (
	"context"
	"fmt"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/storage"
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
