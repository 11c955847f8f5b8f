package informer

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// These tests drive the informer's store side directly, as the reflector
// does, without a server.

// callLog records handler calls as strings, for one goroutine to wait on.
type callLog struct {
	mu    sync.Mutex
	calls []string
	ch    chan struct{}
}

func newCallLog() *callLog { return &callLog{ch: make(chan struct{}, 1)} }

func (c *callLog) add(s string) {
	c.mu.Lock()
	c.calls = append(c.calls, s)
	c.mu.Unlock()
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

func (c *callLog) wait(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		got := slices.Clone(c.calls)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-c.ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %d calls; have %v", n, got)
		}
	}
}

func (c *callLog) handler() HandlerFuncs[corev1.ConfigMap] {
	return HandlerFuncs[corev1.ConfigMap]{
		AddFunc: func(o *corev1.ConfigMap, initial bool) {
			s := "add " + o.Name + "@" + o.ResourceVersion
			if initial {
				s += " initial"
			}
			c.add(s)
		},
		UpdateFunc: func(o, n *corev1.ConfigMap) {
			c.add("update " + n.Name + "@" + o.ResourceVersion + "->" + n.ResourceVersion)
		},
		DeleteFunc: func(o *corev1.ConfigMap, unknown bool) {
			s := "delete " + o.Name + "@" + o.ResourceVersion
			if unknown {
				s += " unknown"
			}
			c.add(s)
		},
	}
}

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func withUID(c *corev1.ConfigMap, uid string) *corev1.ConfigMap {
	c.UID = metav1.UID(uid)
	return c
}

// newCMInformer returns an informer of ConfigMaps that is never run: the
// test writes to it as its reflector would.
func newCMInformer() *informer[corev1.ConfigMap, *corev1.ConfigMap] {
	return New[corev1.ConfigMap](nil, Config[corev1.ConfigMap]{}).(*informer[corev1.ConfigMap, *corev1.ConfigMap])
}

// startForTest starts delivery to handlers without a reflector; the test
// writes through the returned store.
func startForTest(t *testing.T, s *informer[corev1.ConfigMap, *corev1.ConfigMap]) storeAdapter[corev1.ConfigMap, *corev1.ConfigMap] {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.state = stateRunning
	s.done = ctx.Done()
	for _, l := range s.listeners {
		s.startLocked(l)
	}
	s.mu.Unlock()
	t.Cleanup(func() {
		cancel()
		s.wg.Wait()
	})
	return storeAdapter[corev1.ConfigMap, *corev1.ConfigMap]{s}
}

// TestStoreNotifications: which notification each write gives; a write of
// the cached resourceVersion gives none, a re-created object (another uid)
// is a delete and an add, and a delete of an object handlers never saw is
// dropped.
func TestStoreNotifications(t *testing.T) {
	s := newCMInformer()
	log := newCallLog()
	if _, err := s.AddEventHandler(log.handler()); err != nil {
		t.Fatal(err)
	}
	st := startForTest(t, s)
	steps := []struct {
		name  string
		write func() error
		want  []string
	}{
		{"initial list", func() error { return st.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "2"), cm("c", "3")}, "3") },
			[]string{"add a@1 initial", "add b@2 initial", "add c@3 initial"}},
		{"update", func() error { return st.Update(cm("a", "4")) }, []string{"update a@1->4"}},
		{"update, same resourceVersion", func() error { return st.Update(cm("a", "4")) }, nil},
		{"add of a cached object, same resourceVersion", func() error { return st.Add(cm("b", "2")) }, nil},
		{"add of a cached object, new resourceVersion", func() error { return st.Add(cm("b", "5")) }, []string{"update b@2->5"}},
		{"update of an unknown object", func() error { return st.Update(cm("d", "6")) }, []string{"add d@6"}},
		{"add", func() error { return st.Add(cm("e", "7")) }, []string{"add e@7"}},
		{"delete", func() error { return st.Delete(cm("e", "8")) }, []string{"delete e@8"}},
		// Relist: a unchanged, b changed, c gone, d unchanged, f new.
		{"relist", func() error {
			return st.Replace([]*corev1.ConfigMap{cm("a", "4"), cm("b", "9"), cm("d", "6"), cm("f", "10")}, "10")
		}, []string{"delete c@3 unknown", "update b@5->9", "add f@10"}},
		{"empty relist", func() error { return st.Replace(nil, "11") },
			[]string{"delete a@4 unknown", "delete b@9 unknown", "delete d@6 unknown", "delete f@10 unknown"}},
		{"delete of an unknown object", func() error { return st.Delete(cm("a", "12")) }, nil},
		// Re-created objects: same name, another uid.
		{"add with uid", func() error { return st.Add(withUID(cm("g", "13"), "u1")) }, []string{"add g@13"}},
		{"watched re-creation", func() error { return st.Update(withUID(cm("g", "14"), "u2")) },
			[]string{"delete g@13 unknown", "add g@14"}},
		{"delete of a namesake", func() error { return st.Delete(withUID(cm("g", "15"), "u1")) }, nil},
		{"re-creation in a relist", func() error { return st.Replace([]*corev1.ConfigMap{withUID(cm("g", "16"), "u3")}, "16") },
			[]string{"delete g@14 unknown", "add g@16"}},
		{"delete", func() error { return st.Delete(withUID(cm("g", "17"), "u3")) }, []string{"delete g@17"}},
	}
	n := 0
	for _, step := range steps {
		if err := step.write(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		// A marker write after each step tells where its calls end.
		marker := cm("zz-marker", "m"+step.name)
		if err := st.Add(marker); err != nil {
			t.Fatal(err)
		}
		got := log.wait(t, n+len(step.want)+1)
		n = len(got)
		got = got[n-len(step.want)-1:]
		if last := got[len(got)-1]; last != "add zz-marker@m"+step.name {
			t.Fatalf("%s: calls %q, want %q then the marker", step.name, got, step.want)
		}
		if step.name == "initial list" {
			slices.Sort(got[:3])
		}
		if !slices.Equal(got[:len(got)-1], step.want) {
			t.Errorf("%s: calls %q, want %q", step.name, got[:len(got)-1], step.want)
		}
		if err := st.Delete(marker); err != nil {
			t.Fatal(err)
		}
		log.wait(t, n+1)
		n++
	}
	if !s.listed {
		t.Error("not listed after a Replace")
	}
}

// TestResyncWanted: only handlers that can and want to resync get resync
// notifications queued.
func TestResyncWanted(t *testing.T) {
	type h = ResourceEventHandler[corev1.ConfigMap]
	funcs := HandlerFuncs[corev1.ConfigMap]{}
	withResync := HandlerFuncs[corev1.ConfigMap]{ResyncFunc: func(*corev1.ConfigMap) {}}
	for _, tc := range []struct {
		name string
		h    h
		want bool
	}{
		{"HandlerFuncs without ResyncFunc", funcs, false},
		{"HandlerFuncs with ResyncFunc", withResync, true},
		{"filtering, inner without", FilteringHandler[corev1.ConfigMap]{Handler: funcs}, false},
		{"filtering, inner with", FilteringHandler[corev1.ConfigMap]{Handler: withResync}, true},
	} {
		if got := resyncHandlerOf(tc.h) != nil; got != tc.want {
			t.Errorf("%s: wants resync %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestListenerReleasesLargeBuffers: after a burst, the listener does not
// keep a buffer above maxKeptBuffer.
func TestListenerReleasesLargeBuffers(t *testing.T) {
	s := newCMInformer()
	log := newCallLog()
	if _, err := s.AddEventHandler(log.handler()); err != nil {
		t.Fatal(err)
	}
	st := startForTest(t, s)
	items := make([]*corev1.ConfigMap, 2*maxKeptBuffer)
	for i := range items {
		items[i] = cm("cm-"+strconv.Itoa(i), "1")
	}
	if err := st.Replace(items, "1"); err != nil {
		t.Fatal(err)
	}
	log.wait(t, len(items))
	if err := st.Add(cm("one-more", "2")); err != nil {
		t.Fatal(err)
	}
	log.wait(t, len(items)+1)
	l := s.listeners[0]
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := cap(l.queue); c > maxKeptBuffer {
		t.Errorf("queue capacity %d after the burst, want at most %d", c, maxKeptBuffer)
	}
}
