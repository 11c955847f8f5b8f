package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/reflector"
)

// FactoryConfig configures a [Factory]: the defaults of all its informers,
// and overrides for some types (ByObject) or resources (ByResource). Every
// zero value is the documented default: FactoryConfig{} caches every object
// of all namespaces, with paged lists, no resync and no transform.
//
// A factory makes one informer per type (and one per resource): to cache a
// type in two scopes (two namespaces, two label selectors), use two
// factories.
type FactoryConfig struct {
	// Namespace limits informers to one namespace (default "": all
	// namespaces). Informers of cluster-scoped resources ignore it, so one
	// factory serves namespaced and cluster-scoped resources alike.
	Namespace string
	// LabelSelector limits informers to the objects whose labels match it,
	// in the syntax of ListOptions.LabelSelector (default "": every
	// object).
	LabelSelector string
	// FieldSelector limits informers to the objects whose fields match it,
	// in the syntax of ListOptions.FieldSelector (default "": every
	// object).
	FieldSelector string
	// ResyncPeriod is every informer's Config.ResyncPeriod (default 0: no
	// resyncs).
	ResyncPeriod time.Duration
	// DropManagedFields keeps metadata.managedFields out of every
	// informer's cache (default false: cached as the server sends them):
	// they are skipped as lists and watches are decoded, which saves a
	// third or more of a cached pod's memory for controllers that never
	// read them. See reflector.Config.DropManagedFields.
	DropManagedFields bool
	// StreamingList makes informers list with a streaming watch
	// (sendInitialEvents) instead of paged lists (default false; see
	// reflector.Config.UseStreamingList, and its fallback to paged lists
	// where the server does not support it).
	StreamingList bool
	// PageSize is the number of objects per page of the paged lists
	// (default 0: 500; negative: the whole list in one request). See
	// reflector.Config.PageSize.
	PageSize int64
	// Logger receives the informers' logs (default nil: slog.Default()).
	Logger *slog.Logger
	// WatchErrorHandler, if set, is told about every list and watch error
	// of every informer, with the informer's name, before the informer
	// backs off and retries (default nil: the reflector logs them).
	WatchErrorHandler func(informer string, err error)
	// ReflectorMetrics, if set, gives each informer's reflector its
	// metrics hook (reflector.Config.Metrics; default nil: none). The
	// factory calls it once per informer, when it makes it, with the
	// informer's resource as a metrics label: "v1/configmaps",
	// "v1/deployments.apps" (typed and dynamic informers), "metadata
	// v1/pods" (metadata-only ones), or the Go type of a typed informer
	// whose type the scheme does not know. With the metrics package it is
	// exporter.Reflector.
	ReflectorMetrics func(resource string) reflector.Metrics
	// ByObject overrides the defaults above for the informers of some Go
	// types, with one [Object] per type:
	//
	//	ByObject: []informer.ObjectConfig{
	//		informer.Object[corev1.ConfigMap]{LabelSelector: "app=web"},
	//		informer.Object[corev1.Secret]{Transform: dropData},
	//	}
	//
	// Two entries for one type make NewFactory panic, as two handlers for
	// one pattern make http.ServeMux panic: it is a programming error.
	ByObject []ObjectConfig
	// ByResource overrides the defaults above for the dynamic informers
	// of some resources (Factory.ForResource), by resource.
	ByResource map[client.GroupVersionResource]Object[unstructured.Unstructured]
	// ByMetadata overrides the defaults above for the metadata-only
	// informers of some resources ([ForMetadata], Factory.ForMetadataResource), by
	// resource. ByObject and ByResource do not apply to metadata
	// informers: the metadata of pods is a cache of its own, beside the
	// full pods', as controller-runtime's ByObject keys
	// PartialObjectMetadata apart from the typed object, and its
	// transform is typed on PartialObjectMetadata.
	ByMetadata map[client.GroupVersionResource]Object[metav1.PartialObjectMetadata]
}

// ObjectConfig is an entry of FactoryConfig.ByObject: an [Object] of some
// type. Only Object implements it.
type ObjectConfig interface {
	objectType() reflect.Type
}

// Object overrides, for the informer of objects of type T, the defaults of
// its [FactoryConfig]. A zero field keeps the factory's default.
type Object[T any] struct {
	// Namespace replaces FactoryConfig.Namespace (to cache this type in
	// all namespaces while the factory has one, use another factory).
	Namespace string
	// LabelSelector replaces FactoryConfig.LabelSelector.
	LabelSelector string
	// FieldSelector replaces FactoryConfig.FieldSelector.
	FieldSelector string
	// Transform, if set, is applied to every object before it is cached
	// and handed to handlers (default none); see reflector.Config.Transform.
	// It may modify the object it is given and return it.
	Transform func(*T) (*T, error)
}

func (Object[T]) objectType() reflect.Type { return reflect.TypeFor[T]() }

// Factory hands out shared informers, one per Go type (and, for dynamic
// informers, one per resource), so that every part of a program that asks
// for pods shares one list-then-watch and one cache.
//
//	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web", ResyncPeriod: 10 * time.Minute})
//	pods := informer.For[corev1.Pod](f)
//	_, _ = pods.AddEventHandler(handler)
//	f.Start(ctx)
//	if err := f.WaitForCacheSync(ctx); err != nil { ... }
//	defer f.Shutdown() // after cancelling ctx
//
// A Factory is safe for concurrent use.
type Factory struct {
	c      *client.Client
	cfg    FactoryConfig
	byType map[reflect.Type]ObjectConfig

	mu           sync.Mutex
	informers    map[informerKey]runnable
	scopes       map[informerKey]cacheScope // what each informer caches
	trackers     map[informerKey]any        // *rywTracker of cached clients
	order        []informerKey              // in the order they were asked for
	started      map[informerKey]bool
	shuttingDown bool
	// runCtx is the context of the last Start, under which a cached client
	// starts an informer asked for since (nil before Start).
	runCtx context.Context
	wg     sync.WaitGroup
}

// runnable is what the factory needs of an informer of any type.
type runnable interface {
	Run(ctx context.Context) error
	Synced() <-chan struct{}
	Name() string
}

// informerKey identifies a shared informer in a factory.
type informerKey struct {
	typ reflect.Type
	gvr client.GroupVersionResource // dynamic and metadata informers only
	// metadata marks the metadata informers (keyed by gvr, or by the
	// unregistered type they were asked for by).
	metadata bool
}

// scope is what selects the objects of an informer.
type scope struct {
	namespace, labelSelector, fieldSelector string
}

func (s scope) String() string {
	var parts []string
	if s.namespace != "" {
		parts = append(parts, "namespace="+s.namespace)
	}
	if s.labelSelector != "" {
		parts = append(parts, "labels="+s.labelSelector)
	}
	if s.fieldSelector != "" {
		parts = append(parts, "fields="+s.fieldSelector)
	}
	return strings.Join(parts, ",")
}

// NewFactory returns a factory of informers that talk to the server
// through c, configured by cfg. It panics if cfg.ByObject has two entries
// for one type.
func NewFactory(c *client.Client, cfg FactoryConfig) *Factory {
	f := &Factory{c: c, cfg: cfg, byType: map[reflect.Type]ObjectConfig{},
		informers: map[informerKey]runnable{}, scopes: map[informerKey]cacheScope{}, trackers: map[informerKey]any{}, started: map[informerKey]bool{}}
	for _, o := range cfg.ByObject {
		t := o.objectType()
		if _, dup := f.byType[t]; dup {
			panic(fmt.Sprintf("informer: NewFactory: two ByObject entries for %v", t))
		}
		f.byType[t] = o
	}
	return f
}

// Client returns the client the factory's informers list and watch with,
// so that code built on a factory (a controller) reads the same scheme.
func (f *Factory) Client() *client.Client { return f.c }

// For returns the factory's shared informer for objects of type T, making
// it on first use: in the factory's scope, or in the one its ByObject
// entry for T gives. T must be registered in the client's scheme (the
// built-in kinds are); otherwise the informer's lists fail, and its watch
// error handler says why.
//
// An informer asked for after Start runs only once Start is called again.
func For[T any, PT client.ObjectPtr[T]](f *Factory) Informer[T] {
	key := informerKey{typ: reflect.TypeFor[T]()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(Informer[T])
	}
	o, _ := f.byType[key.typ].(Object[T])
	sc := f.scope(o.scope())
	tc := client.For[T, PT](f.c)
	if k := tc.Kind(); k.Kind != "" && !k.Namespaced {
		sc.namespace = "" // a cluster-scoped collection
	}
	name := informerName(key.typ.String(), sc)
	resource := key.typ.String()
	if k := tc.Kind(); k.Kind != "" {
		resource = resourceName(k.GroupVersionResource())
	}
	inf := New[T, PT](tc.Namespace(sc.namespace).WithDecodeOptions(f.decodeOptions()), Config[T]{
		Reflector:    reflectorConfig(f.cfg, sc, name, resource, o.Transform),
		Resource:     tc.Kind().GroupVersionResource().GroupResource(),
		ResyncPeriod: f.cfg.ResyncPeriod,
	})
	f.addLocked(key, inf, sc, nil)
	return inf
}

// ForResource returns the factory's shared informer for the resource gvr,
// with objects held as unstructured.Unstructured, making it on first use:
// in the factory's scope, or in the one its ByResource entry for gvr gives.
// It lists and watches with the dynamic client (see
// NewDynamicListerWatcher).
func (f *Factory) ForResource(gvr client.GroupVersionResource) Informer[unstructured.Unstructured] {
	key := informerKey{typ: reflect.TypeFor[unstructured.Unstructured](), gvr: gvr}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(Informer[unstructured.Unstructured])
	}
	o := f.cfg.ByResource[gvr]
	sc := f.scope(o.scope())
	name := informerName(resourceName(gvr), sc)
	lw := newDynamicLW(f.c, client.Dynamic(f.c).Resource(gvr).WithDecodeOptions(f.decodeOptions()), gvr, sc.namespace)
	inf := New[unstructured.Unstructured](lw, Config[unstructured.Unstructured]{
		Reflector:    reflectorConfig(f.cfg, sc, name, resourceName(gvr), o.Transform),
		Resource:     gvr.GroupResource(),
		ResyncPeriod: f.cfg.ResyncPeriod,
	})
	f.addLocked(key, inf, sc, lw)
	return inf
}

// decodeOptions are the decode options of the informers' lists and
// watches, which decode for a cache: objects of one response share the
// bytes of equal managedFields (cached objects are read-only), and
// managedFields are not decoded at all when they are to be dropped.
func (f *Factory) decodeOptions() codec.DecodeOptions {
	return codec.DecodeOptions{SkipManagedFields: f.cfg.DropManagedFields, ShareFieldsV1: true}
}

// scope returns the scope of an informer: the factory's, with the
// non-empty fields of its override ov in place of the defaults.
func (f *Factory) scope(ov scope) scope {
	sc := scope{f.cfg.Namespace, f.cfg.LabelSelector, f.cfg.FieldSelector}
	if ov.namespace != "" {
		sc.namespace = ov.namespace
	}
	if ov.labelSelector != "" {
		sc.labelSelector = ov.labelSelector
	}
	if ov.fieldSelector != "" {
		sc.fieldSelector = ov.fieldSelector
	}
	return sc
}

func (o Object[T]) scope() scope { return scope{o.Namespace, o.LabelSelector, o.FieldSelector} }

// addLocked adds the informer inf of key, which caches the objects of
// scope sc (whose namespace lw, if not nil, resolves).
func (f *Factory) addLocked(key informerKey, inf runnable, sc scope, lw namespaceResolver) {
	f.informers[key] = inf
	f.scopes[key] = newCacheScope(sc, lw)
	f.order = append(f.order, key)
}

// resourceName names a resource in informer names: "v1/pods",
// "v1/deployments.apps".
func resourceName(gvr client.GroupVersionResource) string {
	name := gvr.Resource
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	return gvr.Version + "/" + name
}

func informerName(what string, sc scope) string {
	if s := sc.String(); s != "" {
		return what + "[" + s + "]"
	}
	return what
}

// reflectorConfig is the reflector configuration of an informer of the
// factory, called name, of resource (its metrics label).
func reflectorConfig[T any](cfg FactoryConfig, sc scope, name, resource string, transform func(*T) (*T, error)) reflector.Config[T] {
	rc := reflector.Config[T]{
		Name:              name,
		ListOptions:       metav1.ListOptions{LabelSelector: sc.labelSelector, FieldSelector: sc.fieldSelector},
		PageSize:          cfg.PageSize,
		UseStreamingList:  cfg.StreamingList,
		Transform:         transform,
		DropManagedFields: cfg.DropManagedFields,
		Logger:            cfg.Logger,
	}
	if fn := cfg.WatchErrorHandler; fn != nil {
		rc.WatchErrorHandler = func(err error) { fn(name, err) }
	}
	if fn := cfg.ReflectorMetrics; fn != nil {
		rc.Metrics = fn(resource)
	}
	return rc
}

// Start runs, each in a goroutine of its own, every informer asked for so
// far and not yet started, until ctx is done. It does not block; call it
// again to start informers asked for later. After Shutdown it does nothing.
//
// A cached client ([Cached]) reading a type whose informer was asked for
// after Start starts that informer itself, under the ctx of the last Start.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	f.runCtx = ctx
	for _, k := range f.order {
		if !f.started[k] {
			f.startLocked(k, ctx)
		}
	}
}

// startLocked runs the informer of k until ctx is done; f.mu is held.
func (f *Factory) startLocked(k informerKey, ctx context.Context) {
	f.started[k] = true
	inf := f.informers[k]
	f.wg.Go(func() { _ = inf.Run(ctx) })
}

// ErrFactoryNotStarted is the error of a cached client's read before its
// factory was started (or after it stopped): there is no context to run
// the informer under, so the cache would never fill.
var ErrFactoryNotStarted = errors.New("informer: the factory is not running (call Start first)")

// ensureRunning starts the informer of k under the context of the last
// Start if it is not running yet. It fails with ErrFactoryNotStarted
// before Start, after Shutdown, and once that context is done.
func (f *Factory) ensureRunning(k informerKey) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.shuttingDown || f.runCtx == nil:
		return ErrFactoryNotStarted
	case f.runCtx.Err() != nil:
		return fmt.Errorf("%w: %w", ErrFactoryNotStarted, f.runCtx.Err())
	case !f.started[k]:
		f.startLocked(k, f.runCtx)
	}
	return nil
}

// scopeOf returns what the informer of k caches.
func (f *Factory) scopeOf(k informerKey) cacheScope {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scopes[k]
}

// WaitForCacheSync waits until every informer started so far has synced
// (its cache holds its initial list), or until ctx is done; then it returns
// an error naming the informers that had not synced.
//
// Handlers may still be catching up when it returns; wait on their
// Registrations (WaitForSync) to know they have seen every initial object.
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	f.mu.Lock()
	var infs []runnable
	for _, k := range f.order {
		if f.started[k] {
			infs = append(infs, f.informers[k])
		}
	}
	f.mu.Unlock()
	for i, inf := range infs {
		select {
		case <-inf.Synced():
		case <-ctx.Done():
			var names []string
			for _, inf := range infs[i:] {
				select {
				case <-inf.Synced():
				default:
					names = append(names, inf.Name())
				}
			}
			return fmt.Errorf("informer: caches not synced: %s: %w", strings.Join(names, ", "), ctx.Err())
		}
	}
	return nil
}

// Shutdown stops Start from starting informers and waits until every
// informer it started has stopped, which happens when the contexts given to
// Start are done: cancel them first.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	f.wg.Wait()
}

// Syncer is anything with a channel closed once it has synced: an
// Informer (its cache holds the initial list) or a Registration (its
// handler has been handed the initial list).
type Syncer interface {
	Synced() <-chan struct{}
}

// WaitForSync waits until every one of syncers has synced, or until ctx is
// done, and then returns ctx's error. A controller calls it with the
// registrations of its handlers before starting its workers.
func WaitForSync(ctx context.Context, syncers ...Syncer) error {
	for _, s := range syncers {
		select {
		case <-s.Synced():
		case <-ctx.Done():
			return fmt.Errorf("informer: waiting for sync: %w", ctx.Err())
		}
	}
	return nil
}
