package informer_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/reflector"
	"github.com/kapi-dev/kapi/selector"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitTimeout bounds every wait of the tests; none should come close.
const waitTimeout = 15 * time.Second

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// env is a reference server on loopback with namespace "inf" and a client.
type env struct {
	srv *apiserver.Server
	url string // the server's
	c   *client.Client
	cms client.Resource[corev1.ConfigMap]
}

func newEnv(t testing.TB) *env { return newEnvWith(t, apiserver.Config{}, "") }

func newEnvWith(t testing.TB, cfg apiserver.Config, contentType string) *env {
	t.Helper()
	if cfg.BookmarkInterval == 0 {
		cfg.BookmarkInterval = 50 * time.Millisecond
	}
	// The cases count the objects they create: no controller adds a
	// ServiceAccount or the kube-root-ca.crt ConfigMap to their namespaces.
	cfg.DisableServiceAccountController, cfg.DisableRootCAPublisher = true, true
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	srv, err := apiserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		_ = srv.Close()
	})
	c, err := client.New(&client.Config{Host: ts.URL, QPS: -1, ContentType: contentType, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{srv: srv, url: ts.URL, c: c, cms: client.For[corev1.ConfigMap](c).Namespace("inf")}
	e.namespace(t, "inf")
	return e
}

func (e *env) namespace(t testing.TB, name string) {
	t.Helper()
	if _, err := client.For[corev1.Namespace](e.c).Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) create(t testing.TB, name string, labels ...string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labelMap(labels...)}}
	out, err := e.cms.Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// update sets data["v"] = v (and labels, if given) on the ConfigMap.
func (e *env) update(t testing.TB, name, v string, labels ...string) *corev1.ConfigMap {
	t.Helper()
	cm, err := e.cms.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"v": v}
	if labels != nil {
		cm.Labels = labelMap(labels...)
	}
	out, err := e.cms.Update(context.Background(), cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) delete(t testing.TB, name string) {
	t.Helper()
	if err := e.cms.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// compact drops the server's history up to now: watches from older
// resourceVersions then get 410 Gone.
func (e *env) compact() {
	mem := e.srv.Storage().(*storage.Memory)
	mem.Compact(mem.Revision())
}

func labelMap(kv ...string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// fastBackoff makes a reflector retry at once, for tests that provoke
// errors.
func fastBackoff[T any](c *reflector.Config[T]) {
	c.InitialBackoff, c.MaxBackoff = time.Millisecond, 5*time.Millisecond
	c.Logger = quietLogger()
}

// run runs inf until the test ends, then stops it and checks that Run
// returned.
func run(t testing.TB, inf interface{ Run(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
}

// waitSynced waits for syncers or fails the test.
func waitSynced(t testing.TB, syncers ...informer.Syncer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := informer.WaitForSync(ctx, syncers...); err != nil {
		t.Fatal(err)
	}
}

// event is one handler call, as recorded.
type event struct {
	kind  string // add, update, delete, resync
	name  string
	flag  bool   // isInitialList of an add, finalStateUnknown of a delete
	rv    string // resourceVersion of the (new) object
	oldRV string // of the old object of an update
}

// String is "add:a", "add:a:initial", "update:a", "delete:a",
// "delete:a:unknown" or "resync:a".
func (e event) String() string {
	s := e.kind + ":" + e.name
	if e.flag {
		if e.kind == "add" {
			s += ":initial"
		} else {
			s += ":unknown"
		}
	}
	return s
}

// recorder is a handler that records its calls, for objects of any type.
// block, if set, is called at the start of every call (to hold the
// handler up).
type recorder[T any, PT client.ObjectPtr[T]] struct {
	mu     sync.Mutex
	cond   *sync.Cond
	events []event
	block  func(event)
}

func newRecorder[T any, PT client.ObjectPtr[T]]() *recorder[T, PT] {
	r := &recorder[T, PT]{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder[T, PT]) record(e event) {
	if r.block != nil {
		r.block(e)
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.cond.Broadcast()
	r.mu.Unlock()
}

func (r *recorder[T, PT]) OnAdd(obj *T, initial bool) {
	p := PT(obj)
	r.record(event{kind: "add", name: p.GetName(), flag: initial, rv: p.GetResourceVersion()})
}

func (r *recorder[T, PT]) OnUpdate(oldObj, newObj *T) {
	o, n := PT(oldObj), PT(newObj)
	r.record(event{kind: "update", name: n.GetName(), rv: n.GetResourceVersion(), oldRV: o.GetResourceVersion()})
}

func (r *recorder[T, PT]) OnDelete(obj *T, unknown bool) {
	p := PT(obj)
	r.record(event{kind: "delete", name: p.GetName(), flag: unknown, rv: p.GetResourceVersion()})
}

// get returns a copy of the events so far.
func (r *recorder[T, PT]) get() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitFor waits until cond holds for the events, or fails the test.
func (r *recorder[T, PT]) waitFor(t testing.TB, what string, cond func([]event) bool) []event {
	t.Helper()
	expired := false
	timer := time.AfterFunc(waitTimeout, func() {
		r.mu.Lock()
		expired = true
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for !cond(r.events) {
		if expired {
			t.Fatalf("timed out waiting for %s; events: %v", what, r.events)
		}
		r.cond.Wait()
	}
	return slices.Clone(r.events)
}

// waitCount waits for at least n events and returns them.
func (r *recorder[T, PT]) waitCount(t testing.TB, n int) []event {
	t.Helper()
	return r.waitFor(t, fmt.Sprintf("%d events", n), func(ev []event) bool { return len(ev) >= n })
}

// resyncRecorder also records resyncs.
type resyncRecorder[T any, PT client.ObjectPtr[T]] struct{ *recorder[T, PT] }

func (r resyncRecorder[T, PT]) OnResync(obj *T) {
	r.record(event{kind: "resync", name: PT(obj).GetName(), rv: PT(obj).GetResourceVersion()})
}

func strs(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

// sorted returns strs(evs), sorted.
func sorted(evs []event) []string {
	s := strs(evs)
	slices.Sort(s)
	return s
}

func join(s []string) string { return strings.Join(s, " ") }

// hookedLW runs before before every Watch call, with the call's number.
type hookedLW[T any] struct {
	reflector.ListerWatcher[T]
	mu     sync.Mutex
	calls  int
	before func(call int)
}

func (h *hookedLW[T]) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[T], error) {
	h.mu.Lock()
	h.calls++
	call := h.calls
	h.mu.Unlock()
	if h.before != nil {
		h.before(call)
	}
	return h.ListerWatcher.Watch(ctx, opts)
}

func mustLabels(s string) selector.LabelSelector { return selector.MustParseLabels(s) }

// requestLog is an http.RoundTripper that records the requests it carries
// to the test server.
type requestLog struct {
	tr   *http.Transport
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, req)
	l.mu.Unlock()
	return l.tr.RoundTrip(req)
}

// queries returns the queries of the requests made so far for path.
func (l *requestLog) queries(path string) []url.Values {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []url.Values
	for _, r := range l.reqs {
		if r.URL.Path == path {
			out = append(out, r.URL.Query())
		}
	}
	return out
}

// loggedClient returns a client of e's server whose requests go through a
// requestLog.
func (e *env) loggedClient(t testing.TB) (*client.Client, *requestLog) {
	t.Helper()
	log := &requestLog{tr: &http.Transport{}}
	t.Cleanup(log.tr.CloseIdleConnections)
	c, err := client.New(&client.Config{Host: e.url, QPS: -1, Logger: quietLogger(), Transport: log})
	if err != nil {
		t.Fatal(err)
	}
	return c, log
}
