package storage

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/internal/etcdtest"
)

// The tests of this file run on etcd whatever -backend says: two stores on
// one member, as two API server replicas.

func openTwoEtcd(t *testing.T) (*Etcd, *Etcd) {
	t.Helper()
	m, err := etcdtest.Start(etcdtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	var stores [2]*Etcd
	for i := range stores {
		s, err := OpenEtcd(EtcdConfig{Endpoints: m.Endpoints, Codec: testCodec{}, CompactInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return stores[0], stores[1]
}

// TestEtcdTwoStoresConcurrentUpdates increments one counter through two
// stores at once: their transactions on the key's mod revision lose no
// increment.
func TestEtcdTwoStoresConcurrentUpdates(t *testing.T) {
	a, b := openTwoEtcd(t)
	ctx := context.Background()
	mustCreate(t, a, "ns", "counter", nil, "n", "0")
	const each = 25
	var wg sync.WaitGroup
	errs := make(chan error, 8*each)
	for i := range 8 {
		s := []*Etcd{a, b}[i%2]
		wg.Go(func() {
			for range each {
				_, err := s.GuaranteedUpdate(ctx, key("ns", "counter"), false, nil, func(cur Object) (Object, error) {
					c := cur.(*corev1.ConfigMap).DeepCopy()
					n, _ := strconv.Atoi(c.Data["n"])
					c.Data["n"] = strconv.Itoa(n + 1)
					return c, nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, key("ns", "counter"), ReadOptions{})
	if err != nil || got.(*corev1.ConfigMap).Data["n"] != strconv.Itoa(8*each) {
		t.Fatalf("counter = %v (%v), want %d", got, err, 8*each)
	}
}

// TestEtcdTwoStoresContinue pages a list through one store and continues it
// through the other, at the first page's revision.
func TestEtcdTwoStoresContinue(t *testing.T) {
	a, b := openTwoEtcd(t)
	ctx := context.Background()
	for i := range 5 {
		mustCreate(t, a, "ns", "cm-"+strconv.Itoa(i), nil)
	}
	first, err := a.List(ctx, "/core/configmaps/ns/", ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatal(first, err)
	}
	mustDelete(t, b, "ns", "cm-3")
	rest, err := b.List(ctx, "/core/configmaps/ns/", ListOptions{Continue: first.Continue})
	if err != nil || rest.Revision != first.Revision || strings.Join(names(rest.Items), ",") != "ns/cm-2,ns/cm-3,ns/cm-4" {
		t.Fatalf("continued through b: %v at %d (first at %d), %v", names(rest.Items), rest.Revision, first.Revision, err)
	}
}
