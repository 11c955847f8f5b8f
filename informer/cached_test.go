package informer_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/selector"
	"github.com/kapi-dev/kapi/workqueue/clocktest"
)

// cm is a ConfigMap of the cached-client tests.
func cm(ns, name string, labels map[string]string, data ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	if len(data) > 0 {
		c.Data = map[string]string{"v": data[0]}
	}
	return c
}

// pod is a Pod scheduled on node.
func pod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
}

// cachedFixture is a fake seeded with objects and a factory on it, started
// once the test has asked for its informers (start).
type cachedFixture struct {
	fake *fake.Fake
	f    *informer.Factory
	ctx  context.Context
}

func newCachedFixture(t *testing.T, cfg informer.FactoryConfig, objects ...any) *cachedFixture {
	t.Helper()
	fk := fake.New(t, objects...)
	cfg.Logger = quietLogger()
	f := informer.NewFactory(fk.Client(), cfg)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	return &cachedFixture{fake: fk, f: f, ctx: ctx}
}

// start starts the factory and waits for its caches.
func (x *cachedFixture) start(t *testing.T) {
	t.Helper()
	x.f.Start(x.ctx)
	if err := x.f.WaitForCacheSync(x.ctx); err != nil {
		t.Fatal(err)
	}
}

// requests returns the requests the client sent since the last call, as
// "verb resource" strings, but for the informers' own (their watches ask
// for bookmarks, and their lists are paged; a watch may be renewed at any
// time).
func (x *cachedFixture) requests() []string {
	var out []string
	for _, a := range x.fake.Actions() {
		if a.Query.Get("allowWatchBookmarks") == "true" || a.Query.Has("limit") {
			continue
		}
		out = append(out, a.Verb+" "+a.Resource.Resource)
	}
	x.fake.ClearActions()
	return out
}

func TestCachedGet(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{}, cm("web", "a", nil, "1"), cm("db", "b", nil))
	cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{})
	direct := client.For[corev1.ConfigMap](x.fake.Client())
	x.start(t)
	x.requests()

	t.Run("found", func(t *testing.T) {
		got, err := cms.Namespace("web").Get(x.ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := direct.Namespace("web").Get(x.ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "a" || got.Data["v"] != "1" || got.ResourceVersion != want.ResourceVersion || got.UID != want.UID {
			t.Errorf("cached Get = %+v, want %+v", got.ObjectMeta, want.ObjectMeta)
		}
		if got.Kind != "ConfigMap" || got.APIVersion != "v1" {
			t.Errorf("cached Get's TypeMeta = %+v, want ConfigMap v1 as the server's", got.TypeMeta)
		}
	})
	x.requests()
	t.Run("not found", func(t *testing.T) {
		_, err := cms.Namespace("web").Get(x.ctx, "nope", metav1.GetOptions{})
		_, want := direct.Namespace("web").Get(x.ctx, "nope", metav1.GetOptions{})
		if !client.IsNotFound(err) {
			t.Fatalf("cached Get of a missing object = %v, want NotFound", err)
		}
		var se *client.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Reason != metav1.StatusReasonNotFound || se.ErrStatus.Code != 404 {
			t.Errorf("cached Get's error %#v is not a NotFound StatusError", err)
		}
		if err.Error() != want.Error() || err.Error() != `configmaps "nope" not found` {
			t.Errorf("cached Get's error = %q, the server's %q", err, want)
		}
	})
	x.requests()
	t.Run("served from the cache", func(t *testing.T) {
		for range 3 {
			if _, err := cms.Namespace("db").Get(x.ctx, "b", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := cms.Namespace("db").List(x.ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if reqs := x.requests(); len(reqs) != 0 {
			t.Errorf("cached reads sent %q to the server", reqs)
		}
	})
	t.Run("no namespace", func(t *testing.T) {
		if _, err := cms.Namespace("").Get(x.ctx, "a", metav1.GetOptions{}); err == nil || client.IsNotFound(err) {
			t.Errorf("Get of a namespaced kind without a namespace = %v, want an error as the direct client's", err)
		}
	})
}

func TestCachedDeepCopy(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{}, cm("web", "a", map[string]string{"k": "v"}, "1"))
	copied := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{}).Namespace("web")
	shared := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{UnsafeDisableDeepCopy: true}).Namespace("web")
	x.start(t)

	got, err := copied.Get(x.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Data["v"], got.Labels["k"] = "changed", "changed"
	list, err := copied.List(x.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list.Items[0].Data["v"] = "changed"
	_, err = copied.ListEach(x.ctx, metav1.ListOptions{}, func(c *corev1.ConfigMap) error {
		c.Labels["k"] = "changed"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cached, err := informer.For[corev1.ConfigMap](x.f).Lister().Get("web", "a")
	if err != nil {
		t.Fatal(err)
	}
	if cached.Data["v"] != "1" || cached.Labels["k"] != "v" {
		t.Errorf("modifying what Get, List and ListEach returned changed the cache: %v %v", cached.Data, cached.Labels)
	}

	s1, err := shared.Get(x.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s1 != cached {
		t.Errorf("with UnsafeDisableDeepCopy, Get returned a copy, not the cache's object")
	}
}

func TestCachedList(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{},
		pod("web", "p1", "n1"), pod("web", "p2", "n2"), pod("web", "p3", "n1"), pod("db", "p4", "n1"),
		cm("web", "c", map[string]string{"app": "x"}), cm("web", "b", map[string]string{"app": "y"}), cm("web", "a", map[string]string{"app": "x"}))
	pods := informer.Cached[corev1.Pod](x.f, informer.ClientConfig{})
	cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{})
	if err := informer.AddFieldIndex(informer.For[corev1.Pod](x.f), "spec.nodeName",
		func(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }); err != nil {
		t.Fatal(err)
	}
	x.start(t)

	names := func(t *testing.T, r client.Resource[corev1.Pod], opts metav1.ListOptions) []string {
		t.Helper()
		l, err := r.List(x.ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name, ns, fields string
		want             []string
	}{
		{"all namespaces, sorted", "", "", []string{"db/p4", "web/p1", "web/p2", "web/p3"}},
		{"one namespace", "web", "", []string{"web/p1", "web/p2", "web/p3"}},
		{"metadata.name", "web", "metadata.name=p2", []string{"web/p2"}},
		{"metadata.namespace", "", "metadata.namespace=db", []string{"db/p4"}},
		{"metadata.name !=", "web", "metadata.name!=p2", []string{"web/p1", "web/p3"}},
		{"indexed field", "", "spec.nodeName=n1", []string{"db/p4", "web/p1", "web/p3"}},
		{"indexed field in a namespace", "web", "spec.nodeName=n1", []string{"web/p1", "web/p3"}},
		{"indexed field !=", "web", "spec.nodeName!=n1", []string{"web/p2"}},
		{"indexed field and name", "", "spec.nodeName=n1,metadata.name=p4", []string{"db/p4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := metav1.ListOptions{FieldSelector: tc.fields}
			got := names(t, pods.Namespace(tc.ns), opts)
			if !slices.Equal(got, tc.want) {
				t.Errorf("cached List(%q) in %q = %v, want %v", tc.fields, tc.ns, got, tc.want)
			}
			// The server agrees.
			server := names(t, client.For[corev1.Pod](x.fake.Client()).Namespace(tc.ns), opts)
			if !slices.Equal(got, server) {
				t.Errorf("cached List(%q) = %v, the server's %v", tc.fields, got, server)
			}
		})
	}

	t.Run("label selector", func(t *testing.T) {
		l, err := cms.Namespace("web").List(x.ctx, metav1.ListOptions{LabelSelector: "app=x"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range l.Items {
			got = append(got, c.Name)
		}
		if !slices.Equal(got, []string{"a", "c"}) {
			t.Errorf("List(app=x) = %v, want [a c]", got)
		}
		if l.Kind != "ConfigMapList" || l.APIVersion != "v1" {
			t.Errorf("list TypeMeta = %+v, want ConfigMapList v1", l.TypeMeta)
		}
		if rv := informer.For[corev1.ConfigMap](x.f).LastSyncResourceVersion(); l.ResourceVersion != rv || rv == "" {
			t.Errorf("list resourceVersion = %q, want the cache's %q", l.ResourceVersion, rv)
		}
	})
	t.Run("sorted as the server lists", func(t *testing.T) {
		// Created in reverse order, across namespaces: the cache's own
		// order is a map's.
		for i := 30; i > 0; i-- {
			if _, err := client.For[corev1.ConfigMap](x.fake.Client()).Create(x.ctx, cm([]string{"web", "db"}[i%2], fmt.Sprintf("s%02d", i), map[string]string{"sort": "me"}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		opts := metav1.ListOptions{LabelSelector: "sort=me"}
		waitFor(t, "the cache to hold the ConfigMaps", func() bool {
			l, err := informer.For[corev1.ConfigMap](x.f).Lister().List(selector.MustParseLabels("sort=me"))
			return err == nil && len(l) == 30
		})
		server, err := client.For[corev1.ConfigMap](x.fake.Client()).Namespace("").List(x.ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		l, err := cms.Namespace("").List(x.ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		key := func(c corev1.ConfigMap) string { return c.Namespace + "/" + c.Name }
		got, want := make([]string, len(l.Items)), make([]string, len(server.Items))
		for i := range l.Items {
			got[i] = key(l.Items[i])
		}
		for i := range server.Items {
			want[i] = key(server.Items[i])
		}
		if !slices.Equal(got, want) {
			t.Errorf("cached List = %v, the server's %v", got, want)
		}
	})
	t.Run("field without an index", func(t *testing.T) {
		_, err := pods.Namespace("web").List(x.ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
		if !errors.Is(err, informer.ErrFieldNotIndexed) || !strings.Contains(err.Error(), `"field:status.phase"`) {
			t.Errorf("List by an unindexed field = %v, want ErrFieldNotIndexed naming the index", err)
		}
	})
	t.Run("bad selectors", func(t *testing.T) {
		for _, opts := range []metav1.ListOptions{{LabelSelector: "a in ("}, {FieldSelector: "x"}, {Continue: "token"}} {
			if _, err := cms.Namespace("web").List(x.ctx, opts); !client.IsBadRequest(err) {
				t.Errorf("List(%+v) = %v, want BadRequest", opts, err)
			}
		}
	})
}

func TestCachedScope(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{
		ByObject: []informer.ObjectConfig{informer.Object[corev1.ConfigMap]{Namespace: "web", LabelSelector: "app=web"}},
	}, cm("web", "in", map[string]string{"app": "web"}), cm("web", "out", map[string]string{"app": "db"}), cm("db", "elsewhere", map[string]string{"app": "web"}),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}})
	cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{})
	namespaces := informer.Cached[corev1.Namespace](x.f, informer.ClientConfig{})
	x.start(t)

	for _, tc := range []struct {
		name string
		read func() error
	}{
		{"Get in another namespace", func() error {
			_, err := cms.Namespace("db").Get(x.ctx, "elsewhere", metav1.GetOptions{})
			return err
		}},
		{"Get of an object the selector excludes", func() error {
			_, err := cms.Namespace("web").Get(x.ctx, "out", metav1.GetOptions{})
			return err
		}},
		{"List in all namespaces", func() error {
			_, err := cms.Namespace("").List(x.ctx, metav1.ListOptions{LabelSelector: "app=web"})
			return err
		}},
		{"List in another namespace", func() error {
			_, err := cms.Namespace("db").List(x.ctx, metav1.ListOptions{LabelSelector: "app=web"})
			return err
		}},
		{"List without the cache's selector", func() error {
			_, err := cms.Namespace("web").List(x.ctx, metav1.ListOptions{})
			return err
		}},
		{"ListEach with another selector", func() error {
			_, err := cms.Namespace("web").ListEach(x.ctx, metav1.ListOptions{LabelSelector: "app=db"}, func(*corev1.ConfigMap) error { return nil })
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read()
			var oos *informer.OutOfScopeError
			if !errors.Is(err, informer.ErrOutOfScope) || !errors.As(err, &oos) || client.IsNotFound(err) {
				t.Fatalf("got %v, want an OutOfScopeError", err)
			}
		})
	}

	t.Run("in scope", func(t *testing.T) {
		if _, err := cms.Namespace("web").Get(x.ctx, "in", metav1.GetOptions{}); err != nil {
			t.Errorf("Get in scope: %v", err)
		}
		for _, sel := range []string{"app=web", "app==web,tier!=x"} {
			l, err := cms.Namespace("web").List(x.ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil || len(l.Items) != 1 || l.Items[0].Name != "in" {
				t.Errorf("List(%s) in scope = %v, %v; want [in]", sel, l, err)
			}
		}
		// A cluster-scoped kind ignores the factory's namespace.
		if _, err := namespaces.Get(x.ctx, "web", metav1.GetOptions{}); err != nil {
			t.Errorf("Get of a Namespace: %v", err)
		}
	})
	t.Run("missing object", func(t *testing.T) {
		// With selectors, the server tells a missing object from an
		// excluded one.
		_, err := cms.Namespace("web").Get(x.ctx, "nope", metav1.GetOptions{})
		if !client.IsNotFound(err) || err.Error() != `configmaps "nope" not found` {
			t.Errorf("Get of a missing object = %v, want NotFound", err)
		}
	})
}

func TestCachedStartsInformer(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{}, cm("web", "a", nil))
	early := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{})
	if _, err := early.Namespace("web").Get(x.ctx, "a", metav1.GetOptions{}); !errors.Is(err, informer.ErrFactoryNotStarted) {
		t.Fatalf("Get before Start = %v, want ErrFactoryNotStarted", err)
	}
	x.start(t)
	// Asked for after Start: the first read starts the informer and waits
	// for it.
	secrets := informer.Cached[corev1.Secret](x.f, informer.ClientConfig{})
	if _, err := secrets.Namespace("web").Get(x.ctx, "s", metav1.GetOptions{}); !client.IsNotFound(err) {
		t.Fatalf("Get from an informer asked for after Start = %v, want NotFound", err)
	}
	if !informer.For[corev1.Secret](x.f).HasSynced() {
		t.Error("the Secret informer is not synced after a read")
	}
	// A read waiting for a cache that cannot sync is bounded by ctx.
	ctx, cancel := context.WithCancel(x.ctx)
	cancel()
	x.fake.PrependReactor("list", "pods", func(fake.Action) (bool, any, error) {
		return true, nil, client.NewStatusError(metav1.NewForbidden(metav1.GroupResource{Resource: "pods"}, "", errors.New("no")))
	})
	if _, err := informer.Cached[corev1.Pod](x.f, informer.ClientConfig{}).Namespace("web").Get(ctx, "p", metav1.GetOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled ctx from a cache that cannot sync = %v, want context.Canceled", err)
	}
}

func TestCachedUnregisteredType(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{})
	res := informer.Cached[unregistered](x.f, informer.ClientConfig{})
	md := informer.CachedMetadata[unregistered](x.f, informer.ClientConfig{})
	x.start(t) // no informer was made that could never sync
	var nr *client.NotRegisteredError
	if _, err := res.Namespace("web").Get(x.ctx, "a", metav1.GetOptions{}); !errors.As(err, &nr) {
		t.Errorf("Get = %v, want a NotRegisteredError", err)
	}
	if _, err := res.List(x.ctx, metav1.ListOptions{}); !errors.As(err, &nr) {
		t.Errorf("List = %v, want a NotRegisteredError", err)
	}
	if _, err := md.List(x.ctx, metav1.ListOptions{}); !errors.As(err, &nr) {
		t.Errorf("metadata List = %v, want a NotRegisteredError", err)
	}
	if _, err := res.Create(x.ctx, &unregistered{}, metav1.CreateOptions{}); !errors.As(err, &nr) {
		t.Errorf("Create = %v, want a NotRegisteredError", err)
	}
}

func TestCachedWritesAndWatchGoToServer(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{}, cm("web", "a", nil))
	cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{ReadYourWritesTimeout: -1}).Namespace("web")
	x.start(t)
	x.requests()

	created, err := cms.Create(x.ctx, cm("web", "b", nil, "1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Data["v"] = "2"
	if _, err := cms.Update(x.ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(x.ctx, "b", client.MergePatchType, []byte(`{"data":{"v":"3"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Apply(x.ctx, cm("web", "c", nil, "1"), metav1.ApplyOptions{FieldManager: "test"}); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(x.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	if err := cms.Delete(x.ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.DeleteCollection(x.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"create configmaps", "update configmaps", "patch configmaps", "patch configmaps", "watch configmaps", "delete configmaps", "deletecollection configmaps"}
	if got := x.requests(); !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
	if k := cms.Kind(); k.Kind != "ConfigMap" || k.Resource != "configmaps" {
		t.Errorf("Kind = %+v", k)
	}
}

// gate holds back, in the cache's transform, ConfigMaps whose data "v" is
// "held", until released: the cache lags the server on demand.
type gate struct {
	release chan struct{}
	once    sync.Once
}

// gatedFixture is a fixture seeded with objects whose ConfigMap cache is
// held back by a gate.
func gatedFixture(t *testing.T, objects ...any) (*cachedFixture, *gate) {
	g := &gate{release: make(chan struct{})}
	x := newCachedFixture(t, informer.FactoryConfig{
		ByObject: []informer.ObjectConfig{informer.Object[corev1.ConfigMap]{Transform: g.transform}},
	}, objects...)
	t.Cleanup(g.open) // before the factory's shutdown waits for the informer
	return x, g
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) transform(c *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	if c.Data["v"] == "held" {
		<-g.release
	}
	return c, nil
}

func TestCachedReadYourWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		// write writes a through cms, making its "v" "held".
		write func(ctx context.Context, cms client.Resource[corev1.ConfigMap], cur *corev1.ConfigMap) error
	}{
		{"update", func(ctx context.Context, cms client.Resource[corev1.ConfigMap], cur *corev1.ConfigMap) error {
			cur.Data["v"] = "held"
			_, err := cms.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}},
		{"patch", func(ctx context.Context, cms client.Resource[corev1.ConfigMap], _ *corev1.ConfigMap) error {
			_, err := cms.Patch(ctx, "a", client.MergePatchType, []byte(`{"data":{"v":"held"}}`), metav1.PatchOptions{})
			return err
		}},
		{"apply", func(ctx context.Context, cms client.Resource[corev1.ConfigMap], _ *corev1.ConfigMap) error {
			_, err := cms.Apply(ctx, cm("web", "a", nil, "held"), metav1.ApplyOptions{FieldManager: "test", Force: true})
			return err
		}},
		{"apply configuration", func(ctx context.Context, cms client.Resource[corev1.ConfigMap], _ *corev1.ConfigMap) error {
			_, err := cms.ApplyConfig(ctx, apply.Of(cm("web", "a", nil, "held")), metav1.ApplyOptions{FieldManager: "test", Force: true})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, g := gatedFixture(t, cm("web", "a", nil, "1"))
			clock := clocktest.NewFakeClock(time.Unix(0, 0))
			cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{Clock: clock}).Namespace("web")
			x.start(t)
			cur, err := cms.Get(x.ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.write(x.ctx, cms, cur); err != nil {
				t.Fatal(err)
			}
			type result struct {
				obj *corev1.ConfigMap
				err error
			}
			done := make(chan result, 1)
			go func() {
				obj, err := cms.Get(x.ctx, "a", metav1.GetOptions{})
				done <- result{obj, err}
			}()
			// The Get waits for the cache (its timeout armed) ...
			var early *result
			waitFor(t, "the Get to wait", func() bool {
				select {
				case r := <-done:
					early = &r
					return true
				default:
					return clock.Timers() == 1
				}
			})
			if early != nil {
				t.Fatalf("Get returned %+v while the cache lagged", *early)
			}
			// ... and returns the written version once the cache has it.
			g.open()
			r := <-done
			if r.err != nil || r.obj.Data["v"] != "held" {
				t.Fatalf("Get after the write = %v, %v; want the written version", r.obj.Data, r.err)
			}
		})
	}

	t.Run("timeout", func(t *testing.T) {
		x, _ := gatedFixture(t, cm("web", "a", nil, "1"))
		clock := clocktest.NewFakeClock(time.Unix(0, 0))
		cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{Clock: clock, ReadYourWritesTimeout: time.Second}).Namespace("web")
		x.start(t)
		if _, err := cms.Patch(x.ctx, "a", client.MergePatchType, []byte(`{"data":{"v":"held"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := cms.Get(x.ctx, "a", metav1.GetOptions{})
			done <- err
		}()
		waitFor(t, "the Get to wait", func() bool { return clock.Timers() == 1 })
		clock.Step(time.Second)
		if err := <-done; !errors.Is(err, informer.ErrCacheBehind) {
			t.Errorf("Get after the timeout = %v, want ErrCacheBehind", err)
		}
	})

	t.Run("disabled", func(t *testing.T) {
		x, _ := gatedFixture(t, cm("web", "a", nil, "1"))
		cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{ReadYourWritesTimeout: -1}).Namespace("web")
		x.start(t)
		if _, err := cms.Patch(x.ctx, "a", client.MergePatchType, []byte(`{"data":{"v":"held"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := cms.Get(x.ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Data["v"] != "1" {
			t.Errorf("Get without read-your-writes = %v; want the cached version at once", got.Data)
		}
	})

	t.Run("other objects and writes of others do not wait", func(t *testing.T) {
		x, _ := gatedFixture(t, cm("web", "a", nil, "1"), cm("web", "b", nil, "1"))
		clock := clocktest.NewFakeClock(time.Unix(0, 0))
		cms := informer.Cached[corev1.ConfigMap](x.f, informer.ClientConfig{Clock: clock}).Namespace("web")
		x.start(t)
		direct := client.For[corev1.ConfigMap](x.fake.Client()).Namespace("web")
		if _, err := direct.Patch(x.ctx, "a", client.MergePatchType, []byte(`{"data":{"v":"held"}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := cms.Get(x.ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Data["v"] != "1" {
			t.Errorf("Get after another client's write = %v; want the cached version at once", got.Data)
		}
	})
}

// waitFor polls cond until it holds, failing the test after waitTimeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(time.Millisecond) // polling a condition, with a deadline
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func TestCachedMetadata(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "s", Labels: map[string]string{"app": "web"}}, StringData: map[string]string{"k": "v"}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "t", Labels: map[string]string{"app": "db"}}}
	secrets := client.GroupVersionResource{Version: "v1", Resource: "secrets"}
	x := newCachedFixture(t, informer.FactoryConfig{
		ByMetadata: map[client.GroupVersionResource]informer.Object[metav1.PartialObjectMetadata]{secrets: {LabelSelector: "app=web"}},
	}, secret, other)
	typed := informer.CachedMetadata[corev1.Secret](x.f, informer.ClientConfig{}).Namespace("web")
	byGVR := x.f.CachedMetadataResource(secrets, informer.ClientConfig{}).Namespace("web")
	x.start(t)
	x.requests()

	for name, md := range map[string]client.MetadataResource{"CachedMetadata": typed, "CachedMetadataResource": byGVR} {
		t.Run(name, func(t *testing.T) {
			got, err := md.Get(x.ctx, "s", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "s" || got.Labels["app"] != "web" || got.Kind != "PartialObjectMetadata" || got.APIVersion != "meta.k8s.io/v1" {
				t.Errorf("Get = %+v %+v, want s's metadata as the metadata client gives it", got.TypeMeta, got.ObjectMeta)
			}
			l, err := md.List(x.ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(l.Items) != 1 || l.Kind != "PartialObjectMetadataList" || l.Items[0].Kind != "PartialObjectMetadata" {
				t.Errorf("List = %+v, %v", l, err)
			}
			if _, err := md.Get(x.ctx, "t", metav1.GetOptions{}); !errors.Is(err, informer.ErrOutOfScope) {
				t.Errorf("Get of an excluded Secret = %v, want ErrOutOfScope", err)
			}
		})
	}
	x.requests()
	// Patch goes to the server, and the next Get reads it.
	p, err := typed.Patch(x.ctx, "s", client.MergePatchType, []byte(`{"metadata":{"annotations":{"a":"b"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := typed.Get(x.ctx, "s", metav1.GetOptions{})
	if err != nil || got.Annotations["a"] != "b" || got.ResourceVersion != p.ResourceVersion {
		t.Errorf("Get after Patch = %+v, %v; want the patched version %s", got, err, p.ResourceVersion)
	}
	if got := x.requests(); !slices.Equal(got, []string{"patch secrets"}) {
		t.Errorf("requests = %q, want only the patch", got)
	}
}

func TestCachedResource(t *testing.T) {
	x := newCachedFixture(t, informer.FactoryConfig{}, cm("web", "a", nil, "1"))
	gvr := client.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cms := x.f.CachedResource(gvr, informer.ClientConfig{}).Namespace("web")
	x.start(t)
	got, err := cms.Get(x.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "v"); v != "1" || got.GetKind() != "ConfigMap" {
		t.Errorf("Get = %v", got.Object)
	}
	l, err := cms.List(x.ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Kind != "ConfigMapList" || l.APIVersion != "v1" {
		t.Errorf("List = %+v, %v", l, err)
	}
	if _, err := cms.Get(x.ctx, "nope", metav1.GetOptions{}); !client.IsNotFound(err) || err.Error() != `configmaps "nope" not found` {
		t.Errorf("Get of a missing object = %v, want NotFound", err)
	}
	// Writes go to the server, and the next Get reads them.
	upd := got.DeepCopy()
	if err := unstructured.SetNestedField(upd.Object, "2", "data", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(x.ctx, upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = cms.Get(x.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "v"); v != "2" {
		t.Errorf("Get after Update = %v", got.Object)
	}
	// A cluster-scoped resource needs no namespace; Watch goes to the
	// server.
	nss := x.f.CachedResource(client.GroupVersionResource{Version: "v1", Resource: "namespaces"}, informer.ClientConfig{})
	if ns, err := nss.Get(x.ctx, "web", metav1.GetOptions{}); err != nil || ns.GetName() != "web" {
		t.Errorf("Get of Namespace web = %v, %v", ns, err)
	}
	w, err := nss.Watch(x.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	if _, err := x.f.CachedMetadataResource(client.GroupVersionResource{Version: "v1", Resource: "namespaces"}, informer.ClientConfig{}).Get(x.ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("metadata Get of Namespace web: %v", err)
	}
}
