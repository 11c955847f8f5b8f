package informer_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/selector"
)

var cmGVR = client.GroupVersionResource{Version: "v1", Resource: "configmaps"}

type pom = metav1.PartialObjectMetadata

// metaRecorder records a metadata informer's handler calls (resyncs
// included) and checks every object it is handed with check.
type metaRecorder struct {
	*recorder[pom, *pom]
	check func(*pom) error

	mu  sync.Mutex
	bad []string
}

func newMetaRecorder(check func(*pom) error) *metaRecorder {
	return &metaRecorder{recorder: newRecorder[pom](), check: check}
}

func (r *metaRecorder) checkObj(p *pom) {
	if err := r.check(p); err != nil {
		r.mu.Lock()
		r.bad = append(r.bad, fmt.Sprintf("%s: %v", p.Name, err))
		r.mu.Unlock()
	}
}

func (r *metaRecorder) OnAdd(p *pom, initial bool) { r.checkObj(p); r.recorder.OnAdd(p, initial) }
func (r *metaRecorder) OnUpdate(o, p *pom)         { r.checkObj(o); r.checkObj(p); r.recorder.OnUpdate(o, p) }
func (r *metaRecorder) OnDelete(p *pom, u bool)    { r.checkObj(p); r.recorder.OnDelete(p, u) }
func (r *metaRecorder) OnResync(p *pom) {
	r.checkObj(p)
	r.record(event{kind: "resync", name: p.Name, rv: p.ResourceVersion})
}

// changes are the events but resyncs.
func changes(evs []event) string {
	return join(strs(slices.DeleteFunc(slices.Clone(evs), func(e event) bool { return e.kind == "resync" })))
}

// isKind checks that a cached object is the metadata of a kind, without
// managedFields.
func isKind(kind, apiVersion string) func(*pom) error {
	return func(p *pom) error {
		if p.Kind != kind || p.APIVersion != apiVersion {
			return fmt.Errorf("kind %q apiVersion %q, want %q %q", p.Kind, p.APIVersion, kind, apiVersion)
		}
		if p.ManagedFields != nil {
			return fmt.Errorf("managedFields kept: %v", p.ManagedFields)
		}
		return nil
	}
}

// TestFactoryMetadataInformer: the factory's metadata informer of
// ConfigMaps, in JSON and protobuf, lists then watches in the factory's
// namespace and label selector, hands handlers (and its lister) the
// metadata with the kind and apiVersion of ConfigMaps and without
// managedFields, resyncs, and is shared by ForMetadata and
// ForMetadataResource.
func TestFactoryMetadataInformer(t *testing.T) {
	for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			e := newEnvWith(t, apiserver.Config{}, ct)
			e.namespace(t, "other")
			if got := e.create(t, "a", "app", "web"); len(got.ManagedFields) == 0 {
				t.Fatal("the server tracked no managedFields")
			}
			e.create(t, "db", "app", "db")
			if _, err := e.cms.Namespace("other").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Labels: labelMap("app", "web")}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", LabelSelector: "app=web",
				DropManagedFields: true, ResyncPeriod: 20 * time.Millisecond, Logger: quietLogger()})
			inf := informer.ForMetadata[corev1.ConfigMap](f)
			if f.ForMetadataResource(cmGVR) != inf {
				t.Error("ForMetadataResource made a second informer for ConfigMaps")
			}
			if informer.ForMetadata[corev1.ConfigMap](f) != inf {
				t.Error("ForMetadata made a second informer for ConfigMaps")
			}
			if !strings.HasPrefix(inf.Name(), "metadata v1/configmaps[") {
				t.Errorf("name %q", inf.Name())
			}
			rec := newMetaRecorder(isKind("ConfigMap", "v1"))
			reg, err := inf.AddEventHandler(rec)
			if err != nil {
				t.Fatal(err)
			}
			startFactory(t, f)
			waitCaches(t, f)
			waitSynced(t, reg)
			e.create(t, "c", "app", "db") // out of the selector
			e.create(t, "b", "app", "web")
			e.update(t, "a", "1", "app", "web", "v", "1")
			e.delete(t, "b")
			evs := rec.waitFor(t, "the changes", func(evs []event) bool { return strings.Contains(changes(evs), "delete:b") })
			if got, want := changes(evs), "add:a:initial add:b update:a delete:b"; got != want {
				t.Errorf("events %q, want %q", got, want)
			}
			rec.waitFor(t, "a resync", func(evs []event) bool {
				return slices.ContainsFunc(evs, func(e event) bool { return e.kind == "resync" && e.name == "a" })
			})

			a, err := inf.Lister().Namespace("inf").Get("a")
			if err != nil {
				t.Fatal(err)
			}
			if err := isKind("ConfigMap", "v1")(a); err != nil || a.Labels["v"] != "1" || a.Namespace != "inf" || a.UID == "" {
				t.Errorf("cached a: %+v (%v)", a, err)
			}
			if _, err := inf.Lister().Namespace("inf").Get("b"); err == nil || err.Error() != `configmaps "b" not found` {
				t.Errorf("Get(b): %v", err)
			}
			inInf, err := inf.Lister().Namespace("inf").List(selector.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if got := cacheNames(inInf); got != "inf/a" {
				t.Errorf("namespace inf holds %q, want inf/a", got)
			}
			if got := cacheNames(inf.Indexer().List()); got != "inf/a" {
				t.Errorf("the cache holds %q, want inf/a", got)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.bad) > 0 {
				t.Errorf("handlers were handed: %v", rec.bad)
			}
		})
	}
}

// TestFactoryMetadataResource: ForMetadataResource looks the scope and kind
// of a resource up (cluster-scoped namespaces ignore the factory's
// namespace); ByMetadata, not ByObject, overrides a metadata informer's
// scope, and its typed transform sees the resource's kind; a type missing
// from the scheme makes the informer's lists fail, saying why.
func TestFactoryMetadataResource(t *testing.T) {
	e := newEnv(t)
	e.namespace(t, "other")
	e.create(t, "web", "app", "web")
	e.create(t, "db", "app", "db")
	var mu sync.Mutex
	var watchErrs []string
	f := informer.NewFactory(e.c, informer.FactoryConfig{Namespace: "inf", Logger: quietLogger(),
		ByObject: []informer.ObjectConfig{informer.Object[corev1.ConfigMap]{Namespace: "other"}},
		ByMetadata: map[client.GroupVersionResource]informer.Object[pom]{cmGVR: {
			LabelSelector: "app=db",
			Transform: func(p *pom) (*pom, error) {
				p.Annotations = map[string]string{"seen-as": p.Kind}
				return p, nil
			},
		}},
		WatchErrorHandler: func(name string, err error) {
			mu.Lock()
			defer mu.Unlock()
			watchErrs = append(watchErrs, name+": "+err.Error())
		},
	})
	cms := f.ForMetadataResource(cmGVR)
	nss := f.ForMetadataResource(client.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	bad := informer.ForMetadata[unregistered](f)
	startFactory(t, f)
	waitSynced(t, cms, nss)

	if got := cacheNames(cms.Indexer().List()); got != "inf/db" {
		t.Errorf("ConfigMaps cached: %q, want inf/db", got)
	}
	db, err := cms.Lister().Namespace("inf").Get("db")
	if err != nil {
		t.Fatal(err)
	}
	if db.Annotations["seen-as"] != "ConfigMap" || db.Kind != "ConfigMap" || db.APIVersion != "v1" {
		t.Errorf("cached db: %+v", db)
	}
	if got := cacheNames(nss.Indexer().List()); !strings.Contains(got, "inf") || !strings.Contains(got, "other") {
		t.Errorf("namespaces cached: %q", got)
	}
	ns, err := nss.Lister().Get("", "other")
	if err != nil {
		t.Fatal(err)
	}
	if ns.Kind != "Namespace" || ns.APIVersion != "v1" {
		t.Errorf("cached namespace: %+v", ns.TypeMeta)
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		mu.Lock()
		errs := slices.Clone(watchErrs)
		mu.Unlock()
		if slices.ContainsFunc(errs, func(s string) bool {
			return strings.Contains(s, "metadata informer_test.unregistered") && strings.Contains(s, "not registered")
		}) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no error for the unregistered type; errors: %v", errs)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if bad.HasSynced() {
		t.Error("the informer of an unregistered type synced")
	}
}
