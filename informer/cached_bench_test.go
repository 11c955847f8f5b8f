package informer_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
)

// BenchmarkCachedClient compares a Get and a List of 100 ConfigMaps
// through the direct client (on the in-memory fake: no network, but the
// whole encode, serve and decode path), the cached client, and the cached
// client without deep copies.
func BenchmarkCachedClient(b *testing.B) {
	var objs []any
	for i := range 100 {
		objs = append(objs, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"app": "web"}},
			Data:       map[string]string{"key": "value", "other": "another value"},
		})
	}
	fk := fake.New(b, objs...)
	f := informer.NewFactory(fk.Client(), informer.FactoryConfig{Logger: quietLogger()})
	clients := []struct {
		name string
		res  client.Resource[corev1.ConfigMap]
	}{
		{"direct", client.For[corev1.ConfigMap](fk.Client()).Namespace("web")},
		{"cached", informer.Cached[corev1.ConfigMap](f, informer.ClientConfig{}).Namespace("web")},
		{"cached-shared", informer.Cached[corev1.ConfigMap](f, informer.ClientConfig{UnsafeDisableDeepCopy: true}).Namespace("web")},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		b.Fatal(err)
	}
	for _, c := range clients {
		b.Run("Get/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.res.Get(ctx, "cm-042", metav1.GetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, c := range clients {
		b.Run("List/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l, err := c.res.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
				if err != nil || len(l.Items) != 100 {
					b.Fatal(len(l.Items), err)
				}
			}
		})
	}
}
