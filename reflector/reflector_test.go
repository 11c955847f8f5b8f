package reflector_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/reflector"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mapStore is a minimal Store recording its contents and how often it was
// replaced, with a condition variable to wait on.
type mapStore struct {
	mu       sync.Mutex
	cond     *sync.Cond
	items    map[string]string // name -> resourceVersion
	replaces int
	replaced []string // the names of the last Replace, in order
}

func newMapStore() *mapStore {
	s := &mapStore{items: map[string]string{}}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *mapStore) Replace(items []*corev1.ConfigMap, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = map[string]string{}
	s.replaced = nil
	for _, it := range items {
		s.items[it.Name] = it.ResourceVersion
		s.replaced = append(s.replaced, it.Name)
	}
	s.replaces++
	s.cond.Broadcast()
	return nil
}

func (s *mapStore) set(obj *corev1.ConfigMap, del bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if del {
		delete(s.items, obj.Name)
	} else {
		s.items[obj.Name] = obj.ResourceVersion
	}
	s.cond.Broadcast()
	return nil
}

func (s *mapStore) Add(obj *corev1.ConfigMap) error    { return s.set(obj, false) }
func (s *mapStore) Update(obj *corev1.ConfigMap) error { return s.set(obj, false) }
func (s *mapStore) Delete(obj *corev1.ConfigMap) error { return s.set(obj, true) }

// waitFor blocks until cond holds or the deadline passes.
func (s *mapStore) waitFor(t *testing.T, what string, cond func(map[string]string) bool) {
	t.Helper()
	waitOn(t, s.cond, func() bool { return cond(s.items) }, func() string {
		return fmt.Sprintf("timed out waiting for %s; store holds %v", what, s.items)
	})
}

// waitOn blocks until holds() or a deadline, and fails the test with
// failure() then. It holds c.L while it calls them; whoever changes what
// they read broadcasts c.
func waitOn(t *testing.T, c *sync.Cond, holds func() bool, failure func() string) {
	t.Helper()
	deadline := time.AfterFunc(10*time.Second, func() {
		c.L.Lock()
		c.Broadcast()
		c.L.Unlock()
	})
	defer deadline.Stop()
	start := time.Now()
	c.L.Lock()
	defer c.L.Unlock()
	for !holds() {
		if time.Since(start) > 10*time.Second {
			t.Fatal(failure())
		}
		c.Wait()
	}
}

type env struct {
	srv *apiserver.Server
	cms client.Resource[corev1.ConfigMap]
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// The cases count the objects they create: no controller adds
	// kube-root-ca.crt to their namespace.
	srv, err := apiserver.New(apiserver.Config{BookmarkInterval: 50 * time.Millisecond, DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Close()
	})
	c, err := client.New(&client.Config{Host: ts.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[corev1.Namespace](c).Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "r"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, cms: client.For[corev1.ConfigMap](c).Namespace("r")}
}

func (e *env) serverState(t *testing.T) map[string]string {
	t.Helper()
	l, err := e.cms.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, it := range l.Items {
		m[it.Name] = it.ResourceVersion
	}
	return m
}

func (e *env) create(t *testing.T, name string) {
	t.Helper()
	if _, err := e.cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, r interface{ Run(context.Context) error }) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func TestListThenWatch(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			e := newEnv(t)
			for i := range 25 {
				e.create(t, fmt.Sprintf("cm-%02d", i))
			}
			store := newMapStore()
			r := reflector.New[corev1.ConfigMap](e.cms, store, reflector.Config[corev1.ConfigMap]{PageSize: 10, UseStreamingList: streaming})
			run(t, r)
			<-r.Synced()
			if !r.HasSynced() || r.LastSyncResourceVersion() == "" {
				t.Fatal("not synced")
			}
			store.waitFor(t, "the initial list", func(m map[string]string) bool { return len(m) == 25 })
			e.create(t, "late")
			if err := e.cms.Delete(context.Background(), "cm-00", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			want := e.serverState(t)
			store.waitFor(t, "the watch to catch up", func(m map[string]string) bool { return maps.Equal(m, want) })
		})
	}
}

// hookedLW runs a hook before every Watch call.
type hookedLW struct {
	client.Resource[corev1.ConfigMap]
	mu     sync.Mutex
	calls  int
	before func(call int)
}

func (h *hookedLW) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[corev1.ConfigMap], error) {
	h.mu.Lock()
	h.calls++
	call := h.calls
	h.mu.Unlock()
	if h.before != nil {
		h.before(call)
	}
	return h.Resource.Watch(ctx, opts)
}

// TestRelistAfterCompaction: the reflector's resourceVersion is compacted
// while it is not watching; its next watch gets 410 and it relists, and the
// store converges.
func TestRelistAfterCompaction(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	store := newMapStore()
	lw := &hookedLW{Resource: e.cms}
	lw.before = func(call int) {
		if call != 1 {
			return
		}
		// Changes the reflector has not seen, then compaction past them.
		e.create(t, "b")
		e.create(t, "c")
		mem := e.srv.Storage().(*storage.Memory)
		mem.Compact(mem.Revision())
	}
	r := reflector.New[corev1.ConfigMap](lw, store, reflector.Config[corev1.ConfigMap]{
		InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
	})
	run(t, r)
	<-r.Synced()
	want := map[string]string{}
	store.waitFor(t, "convergence", func(m map[string]string) bool {
		want = e.serverState(t)
		return len(m) == 3 && maps.Equal(m, want)
	})
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.replaces != 2 {
		t.Errorf("%d replaces, want 2 (the list and the relist after 410)", store.replaces)
	}
}

func TestTransformAndSelector(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"keep-1", "keep-2", "drop"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"keep": fmt.Sprint(n != "drop")}}}
		if _, err := e.cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	store := newMapStore()
	var mu sync.Mutex
	seen := 0
	r := reflector.New[corev1.ConfigMap](e.cms, store, reflector.Config[corev1.ConfigMap]{
		ListOptions: metav1.ListOptions{LabelSelector: "keep=true"},
		Transform: func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			mu.Lock()
			seen++
			mu.Unlock()
			return reflector.DropManagedFields(cm)
		},
	})
	run(t, r)
	store.waitFor(t, "the selected objects", func(m map[string]string) bool { return len(m) == 2 && m["drop"] == "" })
	mu.Lock()
	defer mu.Unlock()
	if seen != 2 {
		t.Errorf("transform saw %d objects, want 2", seen)
	}
}
