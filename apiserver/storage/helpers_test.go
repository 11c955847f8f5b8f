package storage

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/etcdtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, etcdtest.IgnoreLeaks()...)
}

// fakeClock is a settable clock for MemoryConfig.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// backend selects the store the tests run on: "memory" (NewMemory),
// "bbolt" (OpenBolt on a file in the test's temporary directory) or "etcd"
// (OpenEtcd on a member of its own started in process, see
// internal/etcdtest), so that every test of the Interface's semantics runs
// on each:
//
//	go test ./apiserver/storage -args -backend=bbolt
//	go test ./apiserver/storage -args -backend=etcd
//
// The tests of a Memory's own workings (its history window, event cap,
// clock) skip on etcd, whose history is etcd's.
var backend = flag.String("backend", "memory", `the store the tests run on: "memory", "bbolt" or "etcd"`)

// testStore is what the tests need of a store: the Interface, and
// compaction (Memory's, or etcd's).
type testStore interface {
	Interface
	Compact(rev uint64)
}

// newStore returns a store closed at the end of the test. Unless cfg sets
// them, the background compactor is off and the clock is fake, so nothing
// happens behind the test's back. On etcd, cfg's WatchBuffer and
// TooLargeWait apply.
func newStore(t testing.TB, cfg MemoryConfig) testStore {
	t.Helper()
	if cfg.CompactInterval == 0 {
		cfg.CompactInterval = -1
	}
	if cfg.Now == nil {
		cfg.Now = newFakeClock().Now
	}
	m := openStore(t, cfg)
	t.Cleanup(func() { m.Close() })
	return m
}

// newMemStore is newStore for the tests of a Memory's own workings; they
// skip on etcd.
func newMemStore(t testing.TB, cfg MemoryConfig) *Memory {
	t.Helper()
	skipOnEtcd(t, "it tests the history window of a Memory")
	return newStore(t, cfg).(*Memory)
}

// skipOnEtcd skips the test on the etcd backend, saying why.
func skipOnEtcd(t testing.TB, why string) {
	t.Helper()
	if *backend == "etcd" {
		t.Skip("not on etcd: " + why)
	}
}

// openStore returns a store of the -backend the tests run on, which the
// caller closes.
func openStore(t testing.TB, cfg MemoryConfig) testStore {
	t.Helper()
	switch *backend {
	case "memory":
		return NewMemory(cfg)
	case "bbolt":
		return openBolt(t, filepath.Join(t.TempDir(), "kapi.db"), cfg)
	case "etcd":
		e := openEtcd(t, cfg)
		return &shifted{Etcd: e, base: e.Revision()}
	}
	t.Fatalf("unknown -backend %q", *backend)
	return nil
}

// openEtcd starts an etcd member for the test (stopped at its end) and
// opens a store on it, with cfg's watch buffer and wait for future
// revisions; the caller closes the store.
func openEtcd(t testing.TB, cfg MemoryConfig) *Etcd {
	t.Helper()
	m, err := etcdtest.Start(etcdtest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	e, err := OpenEtcd(EtcdConfig{Endpoints: m.Endpoints, Codec: testCodec{}, CompactInterval: -1,
		WatchBuffer: cfg.WatchBuffer, TooLargeWait: cfg.TooLargeWait})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// openBolt opens the durable store at path with testCodec, failing the test
// if it cannot; the caller closes it.
func openBolt(t testing.TB, path string, cfg MemoryConfig) *Memory {
	t.Helper()
	m, err := OpenBolt(BoltConfig{Path: path, Codec: testCodec{}, Memory: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testCodec encodes any object as JSON and decodes the objects under
// /core/configmaps/ (the only ones the restart tests read back).
type testCodec struct{}

func (testCodec) Encode(_ string, obj Object) ([]byte, error) { return json.Marshal(obj) }

func (testCodec) Decode(key string, data []byte) (Object, error) {
	if !strings.HasPrefix(key, "/core/configmaps/") {
		return nil, fmt.Errorf("testCodec: no type for %s", key)
	}
	var c corev1.ConfigMap
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func key(ns, name string) string { return "/core/configmaps/" + ns + "/" + name }

func cm(ns, name string, labels map[string]string, kv ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels,
		UID: metav1.UID("uid-" + ns + "-" + name)}}
	if len(kv) > 0 {
		c.Data = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Data[kv[i]] = kv[i+1]
		}
	}
	return c
}

func mustCreate(t testing.TB, m Interface, ns, name string, labels map[string]string, kv ...string) *corev1.ConfigMap {
	t.Helper()
	obj, err := m.Create(context.Background(), key(ns, name), cm(ns, name, labels, kv...))
	if err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return obj.(*corev1.ConfigMap)
}

// mustUpdate sets data k=v on ns/name (and labels, if not nil).
func mustUpdate(t testing.TB, m Interface, ns, name string, labels map[string]string, k, v string) *corev1.ConfigMap {
	t.Helper()
	obj, err := m.GuaranteedUpdate(context.Background(), key(ns, name), false, nil, func(cur Object) (Object, error) {
		c := cur.(*corev1.ConfigMap).DeepCopy()
		if c.Data == nil {
			c.Data = map[string]string{}
		}
		c.Data[k] = v
		if labels != nil {
			c.Labels = labels
		}
		return c, nil
	})
	if err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return obj.(*corev1.ConfigMap)
}

func mustDelete(t testing.TB, m Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	obj, err := m.Delete(context.Background(), key(ns, name), nil, nil)
	if err != nil {
		t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
	return obj.(*corev1.ConfigMap)
}

func rv(obj Object) string { return obj.GetResourceVersion() }

func rvOf(rev uint64) string { return fmt.Sprint(rev) }

func wantCode(t testing.TB, err error, code Code) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("error = %v, want code %d", err, code)
	}
	return se
}

// next receives one event or fails the test after a generous deadline (a
// hang guard, never a synchronisation device).
func next(t testing.TB, w Watcher) (Event, bool) {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		return e, ok
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a watch event")
		return Event{}, false
	}
}

func mustNext(t testing.TB, w Watcher) Event {
	t.Helper()
	e, ok := next(t, w)
	if !ok {
		t.Fatal("watch channel closed unexpectedly")
	}
	return e
}

// expectClosed drains w until its channel closes, returning what it read.
func expectClosed(t testing.TB, w Watcher) []Event {
	t.Helper()
	var evs []Event
	for {
		e, ok := next(t, w)
		if !ok {
			return evs
		}
		evs = append(evs, e)
	}
}

func names(objs []Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetNamespace() + "/" + o.GetName()
	}
	return out
}

// sameStored reports whether got is the object the store holds as want: the
// same object on a Memory (which hands out the objects it stores), an equal
// one on etcd (which decodes them for every read).
func sameStored(got, want Object) bool {
	if *backend == "etcd" {
		return reflect.DeepEqual(got, want)
	}
	return sameObject(got, want)
}
