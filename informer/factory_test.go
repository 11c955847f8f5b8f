package informer_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
)

// startFactory starts f until the test ends, then stops it and waits for
// its informers.
func startFactory(t *testing.T, f *informer.Factory) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	t.Cleanup(func() {
		cancel()
		f.Shutdown()
	})
	return ctx
}

func waitCaches(t *testing.T, f *informer.Factory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
}

func cacheNames[PT metav1.Object](objs []PT) string {
	var s []string
	for _, o := range objs {
		if o.GetNamespace() != "" {
			s = append(s, o.GetNamespace()+"/"+o.GetName())
		} else {
			s = append(s, o.GetName())
		}
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// TestFactorySharing: one informer per type; the factory's scope and the
// per-type overrides select what the informers cache; cluster-scoped kinds
// ignore the namespace.
func TestFactorySharing(t *testing.T) {
	e := newEnv(t)
	e.namespace(t, "other")
	e.create(t, "web", "app", "web")
	e.create(t, "db", "app", "db")
	if _, err := e.cms.Namespace("other").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  informer.FactoryConfig
		want string
	}{
		{"namespace", informer.FactoryConfig{Namespace: "inf"}, "inf/db inf/web"},
		{"label selector", informer.FactoryConfig{Namespace: "inf", LabelSelector: "app=web"}, "inf/web"},
		{"field selector", informer.FactoryConfig{Namespace: "inf", FieldSelector: "metadata.name=db"}, "inf/db"},
		{"all namespaces", informer.FactoryConfig{}, "inf/db inf/web other/elsewhere"},
		{"by object: namespace", informer.FactoryConfig{Namespace: "inf", ByObject: []informer.ObjectConfig{
			informer.Object[corev1.ConfigMap]{Namespace: "other"}}}, "other/elsewhere"},
		{"by object: selectors", informer.FactoryConfig{Namespace: "inf", LabelSelector: "app=db", ByObject: []informer.ObjectConfig{
			informer.Object[corev1.Secret]{LabelSelector: "app=nothing"},
			informer.Object[corev1.ConfigMap]{LabelSelector: "app=web", FieldSelector: "metadata.name=web"}}}, "inf/web"},
		{"by object for another type", informer.FactoryConfig{Namespace: "inf", ByObject: []informer.ObjectConfig{
			informer.Object[corev1.Secret]{Namespace: "other"}}}, "inf/db inf/web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = quietLogger()
			f := informer.NewFactory(e.c, tc.cfg)
			cms := informer.For[corev1.ConfigMap](f)
			if informer.For[corev1.ConfigMap](f) != cms {
				t.Error("For made a second informer of one type")
			}
			nss := informer.For[corev1.Namespace](f)
			startFactory(t, f)
			waitCaches(t, f)
			if got := cacheNames(cms.Indexer().List()); got != tc.want {
				t.Errorf("cache holds %q, want %q", got, tc.want)
			}
			// The cluster-scoped kind ignores the namespace (but not the
			// factory's selectors, which apply to every type).
			if tc.cfg.LabelSelector == "" && tc.cfg.FieldSelector == "" {
				if got := cacheNames(nss.Indexer().List()); !strings.Contains(got, "inf") || !strings.Contains(got, "other") {
					t.Errorf("the cluster-scoped informer holds %q, want every namespace", got)
				}
			}
			if _, err := cms.Lister().Namespace("inf").Get("nope"); err == nil || err.Error() != `configmaps "nope" not found` {
				t.Errorf("lister NotFound: %v", err)
			}
		})
	}
}

// TestFactoryListSettings: the factory's PageSize and StreamingList reach
// the requests its informers make.
func TestFactoryListSettings(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"a", "b", "c"} {
		e.create(t, name)
	}
	const path = "/api/v1/namespaces/inf/configmaps"
	for _, tc := range []struct {
		name  string
		cfg   informer.FactoryConfig
		check func(t *testing.T, queries []url.Values)
	}{
		{"default: pages of 500", informer.FactoryConfig{}, func(t *testing.T, qs []url.Values) {
			if len(qs) < 1 || qs[0].Get("watch") != "" || qs[0].Get("limit") != "500" {
				t.Errorf("first request %v, want a list with limit=500", qs)
			}
		}},
		{"pages of 1", informer.FactoryConfig{PageSize: 1}, func(t *testing.T, qs []url.Values) {
			lists := 0
			for _, q := range qs {
				if q.Get("watch") == "" {
					lists++
					if q.Get("limit") != "1" {
						t.Errorf("list %v, want limit=1", q)
					}
				}
			}
			if lists != 3 {
				t.Errorf("%d list requests for 3 objects in pages of 1", lists)
			}
		}},
		{"streaming list", informer.FactoryConfig{StreamingList: true}, func(t *testing.T, qs []url.Values) {
			if len(qs) < 1 || qs[0].Get("watch") != "true" || qs[0].Get("sendInitialEvents") != "true" {
				t.Errorf("first request %v, want a watch with sendInitialEvents=true", qs)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, log := e.loggedClient(t)
			tc.cfg.Namespace, tc.cfg.Logger = "inf", quietLogger()
			f := informer.NewFactory(c, tc.cfg)
			informer.For[corev1.ConfigMap](f)
			startFactory(t, f)
			waitCaches(t, f)
			tc.check(t, log.queries(path))
		})
	}
}

// TestFactoryLateInformer: an informer asked for after Start runs at the
// next Start.
func TestFactoryLateInformer(t *testing.T) {
	e := newEnv(t)
	f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", Logger: quietLogger()})
	informer.For[corev1.ConfigMap](f)
	ctx := startFactory(t, f)
	waitCaches(t, f)
	secrets := informer.For[corev1.Secret](f)
	if secrets.HasSynced() {
		t.Fatal("synced before being started")
	}
	f.Start(ctx)
	waitCaches(t, f)
	if !secrets.HasSynced() {
		t.Error("informer asked for after Start not synced after the second Start")
	}
}

// TestFactoryDuplicateByObject: two overrides for one type are a
// programming error, reported at once.
func TestFactoryDuplicateByObject(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "ConfigMap") {
			t.Errorf("recovered %v, want a panic naming the type", r)
		}
	}()
	informer.NewFactory(nil, informer.FactoryConfig{ByObject: []informer.ObjectConfig{
		informer.Object[corev1.ConfigMap]{Namespace: "a"},
		informer.Object[corev1.Secret]{Namespace: "a"},
		informer.Object[corev1.ConfigMap]{Namespace: "b"},
	}})
}

// unregistered is a type the client's scheme does not know.
type unregistered struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// TestFactoryWaitForCacheSyncFails: an informer that cannot list never
// syncs; WaitForCacheSync names it when ctx ends, and the factory's watch
// error handler hears why.
func TestFactoryWaitForCacheSyncFails(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var errs []error
	var names []string
	f := informer.NewFactory(e.c, informer.FactoryConfig{Logger: quietLogger(), WatchErrorHandler: func(name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		names = append(names, name)
		errs = append(errs, err)
	}})
	informer.For[corev1.ConfigMap](f)
	bad := informer.For[unregistered](f)
	startFactory(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := f.WaitForCacheSync(ctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), bad.Name()) || strings.Contains(err.Error(), "ConfigMap") {
		t.Fatalf("WaitForCacheSync: %v; want a deadline error naming only %s", err, bad.Name())
	}
	mu.Lock()
	defer mu.Unlock()
	var nre *client.NotRegisteredError
	if len(errs) == 0 || !errors.As(errs[0], &nre) || names[0] != bad.Name() {
		t.Errorf("watch errors %v from %v, want NotRegisteredError from %s", errs, names, bad.Name())
	}
}

// TestFactoryTransformAndResync: the factory's resync applies to its
// informers, and a typed transform given by ByObject to the informer of its
// type.
func TestFactoryTransformAndResync(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", Logger: quietLogger(),
		ResyncPeriod: 10 * time.Millisecond,
		ByObject: []informer.ObjectConfig{informer.Object[corev1.ConfigMap]{
			Transform: func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				cm.ManagedFields = nil
				cm.Annotations = map[string]string{"transformed": "yes"}
				return cm, nil
			},
		}},
	})
	inf := informer.For[corev1.ConfigMap](f)
	nss := informer.For[corev1.Namespace](f)
	rec := resyncRecorder[corev1.ConfigMap, *corev1.ConfigMap]{newCMRecorder()}
	if _, err := inf.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	startFactory(t, f)
	rec.waitFor(t, "a resync", func(ev []event) bool {
		return slices.ContainsFunc(ev, func(e event) bool { return e.kind == "resync" })
	})
	a, err := inf.Lister().Namespace("inf").Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if a.Annotations["transformed"] != "yes" || a.ManagedFields != nil {
		t.Errorf("not transformed: %+v", a.ObjectMeta)
	}
	waitCaches(t, f)
	ns, err := nss.Lister().Get("", "inf")
	if err != nil {
		t.Fatal(err)
	}
	if ns.Annotations["transformed"] != "" {
		t.Errorf("the ConfigMap transform applied to a Namespace: %+v", ns.ObjectMeta)
	}
}

type uRecorder = recorder[unstructured.Unstructured, *unstructured.Unstructured]

// TestDynamicInformer: an informer of unstructured objects by resource,
// namespaced or cluster-scoped, with the factory's namespace (and
// streaming lists).
func TestDynamicInformer(t *testing.T) {
	e := newEnv(t)
	e.create(t, "a")
	e.create(t, "skipped", "skip", "yes")
	cmGVR := client.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", Logger: quietLogger(), StreamingList: true,
		ByResource: map[client.GroupVersionResource]informer.Object[unstructured.Unstructured]{
			cmGVR: {LabelSelector: "skip!=yes"},
		}})
	cms := f.ForResource(cmGVR)
	if f.ForResource(cmGVR) != cms {
		t.Error("ForResource made a second informer for the same resource")
	}
	nsGVR := client.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	nss := f.ForResource(nsGVR)
	rec := newRecorder[unstructured.Unstructured]()
	reg, err := cms.AddEventHandler(rec)
	if err != nil {
		t.Fatal(err)
	}
	startFactory(t, f)
	waitCaches(t, f)
	waitSynced(t, reg)
	e.create(t, "b")
	e.update(t, "a", "1")
	e.delete(t, "b")
	evs := rec.waitCount(t, 4)
	if got, want := join(strs(evs)), "add:a:initial add:b update:a delete:b"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	a, err := cms.Lister().Namespace("inf").Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(a.Object, "data", "v"); v != "1" || a.GetKind() != "ConfigMap" {
		t.Errorf("cached a: %v", a.Object)
	}
	if _, err := cms.Lister().Namespace("inf").Get("b"); err == nil || err.Error() != `configmaps "b" not found` {
		t.Errorf("Get(b): %v", err)
	}
	if got := cacheNames(nss.Indexer().List()); !strings.Contains(got, "inf") || !strings.Contains(got, "default") {
		t.Errorf("cluster-scoped dynamic informer holds %q", got)
	}
}

// TestFactoryDropManagedFields: with DropManagedFields the cache holds
// objects without managedFields, from the list and from the watch, in JSON
// and protobuf; the server still tracks them.
func TestFactoryDropManagedFields(t *testing.T) {
	for _, ct := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(ct, func(t *testing.T) {
			e := newEnvWith(t, apiserver.Config{}, ct)
			if got := e.create(t, "listed", "app", "x"); len(got.ManagedFields) == 0 {
				t.Fatal("the server tracked no managedFields")
			}
			f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", DropManagedFields: true, Logger: quietLogger()})
			inf := informer.For[corev1.ConfigMap](f)
			startFactory(t, f)
			waitCaches(t, f)
			e.create(t, "watched", "app", "y")
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			for {
				if _, err := inf.Lister().Namespace("inf").Get("watched"); err == nil {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatal("the watched object never reached the cache")
				case <-time.After(10 * time.Millisecond):
				}
			}
			for _, cm := range inf.Indexer().List() {
				if cm.ManagedFields != nil {
					t.Errorf("%s cached with managedFields %v", cm.Name, cm.ManagedFields)
				}
			}
		})
	}
}
