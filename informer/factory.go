package informer

import (
	"context"
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

// Factory hands out shared informers: one per Go type (or, for dynamic
// informers, per resource) and per scope (namespace, label selector, field
// selector), so that every part of a program that asks for pods in the same
// scope shares one list-then-watch and one cache.
//
//	f := informer.NewFactory(c, informer.WithResync(10*time.Minute))
//	pods := informer.For[corev1.Pod](f)
//	_, _ = pods.AddEventHandler(handler)
//	f.Start(ctx)
//	if err := f.WaitForCacheSync(ctx); err != nil { ... }
//	defer f.Shutdown() // after cancelling ctx
//
// A Factory is safe for concurrent use.
type Factory struct {
	c   *client.Client
	def settings

	mu           sync.Mutex
	informers    map[informerKey]runnable
	order        []informerKey // in the order they were asked for
	started      map[informerKey]bool
	shuttingDown bool
	wg           sync.WaitGroup
}

// runnable is what the factory needs of an informer of any type.
type runnable interface {
	Run(ctx context.Context) error
	Synced() <-chan struct{}
	Name() string
}

// informerKey identifies a shared informer in a factory.
type informerKey struct {
	typ   reflect.Type
	gvr   client.GroupVersionResource // dynamic informers only
	scope scope
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

// settings are a factory's defaults.
type settings struct {
	scope             scope
	tweak             func(*metav1.ListOptions)
	resync            time.Duration
	transform         func(metav1.Object) (metav1.Object, error)
	streaming         bool
	dropManagedFields bool
	logger            *slog.Logger
	watchErrorHandler func(informer string, err error)
}

// Option configures a [Factory] (NewFactory).
type Option interface {
	apply(*settings)
}

// ScopeOption selects the objects an informer caches. Given to NewFactory
// it sets the default of every informer of the factory; given to For or
// ForResource it overrides the default for that informer, which is shared
// only with informers of the same type and scope.
type ScopeOption interface {
	Option
	applyScope(*scope)
}

type scopeOption func(*scope)

func (o scopeOption) apply(s *settings)   { o(&s.scope) }
func (o scopeOption) applyScope(s *scope) { o(s) }

type factoryOption func(*settings)

func (o factoryOption) apply(s *settings) { o(s) }

// WithNamespace limits informers to namespace ns (default "": all
// namespaces). Cluster-scoped resources ignore it.
func WithNamespace(ns string) ScopeOption {
	return scopeOption(func(s *scope) { s.namespace = ns })
}

// WithLabelSelector limits informers to the objects whose labels match
// selector, in the syntax of ListOptions.LabelSelector (default: all).
func WithLabelSelector(selector string) ScopeOption {
	return scopeOption(func(s *scope) { s.labelSelector = selector })
}

// WithFieldSelector limits informers to the objects whose fields match
// selector, in the syntax of ListOptions.FieldSelector (default: all).
func WithFieldSelector(selector string) ScopeOption {
	return scopeOption(func(s *scope) { s.fieldSelector = selector })
}

// WithTweakListOptions has fn adjust the ListOptions of every informer's
// lists and watches, after the selectors are set (default none). The
// reflector sets resourceVersion, limit, continue and watch itself.
func WithTweakListOptions(fn func(*metav1.ListOptions)) Option {
	return factoryOption(func(s *settings) { s.tweak = fn })
}

// WithResync sets every informer's Config.ResyncPeriod (default 0: no
// resyncs).
func WithResync(period time.Duration) Option {
	return factoryOption(func(s *settings) { s.resync = period })
}

// WithTransform has every informer apply fn to each object before caching
// it (default none): typically to drop fields a program never reads, such
// as managedFields, to save memory. fn may modify the object it is given
// and return it; it must return an object of the same type. An informer's
// SetTransform replaces it for that informer.
func WithTransform(fn func(obj metav1.Object) (metav1.Object, error)) Option {
	return factoryOption(func(s *settings) { s.transform = fn })
}

// WithStreamingList makes informers list with a streaming watch
// (sendInitialEvents) instead of paged lists (default off; see
// reflector.Config.UseStreamingList).
func WithStreamingList() Option {
	return factoryOption(func(s *settings) { s.streaming = true })
}

// WithDropManagedFields keeps metadata.managedFields out of every informer's
// cache (default off; see reflector.Config.DropManagedFields): they are
// skipped as lists and watches are decoded, which saves a third or more of
// a cached pod's memory for controllers that never read them.
func WithDropManagedFields() Option {
	return factoryOption(func(s *settings) { s.dropManagedFields = true })
}

// WithLogger sets the logger of every informer's reflector (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return factoryOption(func(s *settings) { s.logger = l })
}

// WithWatchErrorHandler has fn told about every list and watch error of
// every informer, with the informer's name, before the informer backs off
// and retries (default: the reflector logs them). An informer's
// SetWatchErrorHandler replaces it for that informer.
func WithWatchErrorHandler(fn func(informer string, err error)) Option {
	return factoryOption(func(s *settings) { s.watchErrorHandler = fn })
}

// NewFactory returns a factory of informers that talk to the server
// through c. By default they watch all namespaces, every object, with no
// resync and no transform.
func NewFactory(c *client.Client, opts ...Option) *Factory {
	f := &Factory{c: c, informers: map[informerKey]runnable{}, started: map[informerKey]bool{}}
	for _, o := range opts {
		o.apply(&f.def)
	}
	return f
}

// For returns the factory's shared informer for T in the factory's scope,
// as modified by opts, making it on first use. The same type and scope
// always give the same informer. T must be registered in the client's
// scheme (the built-in kinds are); otherwise the informer's lists fail,
// and its watch error handler says why.
//
// An informer asked for after Start runs only once Start is called again.
func For[T any, PT client.ObjectPtr[T]](f *Factory, opts ...ScopeOption) *SharedInformer[T, PT] {
	sc := f.scope(opts)
	tc := client.For[T, PT](f.c)
	if k := tc.Kind(); k.Kind != "" && !k.Namespaced {
		sc.namespace = "" // one informer per cluster-scoped collection
	}
	key := informerKey{typ: reflect.TypeFor[T](), scope: sc}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(*SharedInformer[T, PT])
	}
	tc = tc.Namespace(sc.namespace).WithDecodeOptions(f.decodeOptions())
	cfg := Config[T]{
		Reflector:    reflectorConfig[T, PT](f.def, sc, informerName(reflect.TypeFor[T]().String(), sc)),
		Resource:     tc.Kind().GroupVersionResource().GroupResource(),
		ResyncPeriod: f.def.resync,
	}
	inf := New[T, PT](tc, cfg)
	f.addLocked(key, inf)
	return inf
}

// ForResource returns the factory's shared informer for the resource gvr,
// with objects held as unstructured.Unstructured, in the factory's scope as
// modified by opts, making it on first use. It lists and watches with the
// dynamic client (see NewDynamicListerWatcher).
func (f *Factory) ForResource(gvr client.GroupVersionResource, opts ...ScopeOption) *DynamicInformer {
	sc := f.scope(opts)
	key := informerKey{typ: reflect.TypeFor[unstructured.Unstructured](), gvr: gvr, scope: sc}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(*DynamicInformer)
	}
	name := gvr.Resource
	if gvr.Group != "" {
		name += "." + gvr.Group
	}
	cfg := Config[unstructured.Unstructured]{
		Reflector:    reflectorConfig[unstructured.Unstructured](f.def, sc, informerName(gvr.Version+"/"+name, sc)),
		Resource:     gvr.GroupResource(),
		ResyncPeriod: f.def.resync,
	}
	lw := newDynamicLW(f.c, client.Dynamic(f.c).Resource(gvr).WithDecodeOptions(f.decodeOptions()), gvr, sc.namespace)
	inf := New[unstructured.Unstructured](lw, cfg)
	f.addLocked(key, inf)
	return inf
}

// decodeOptions are the decode options of the informers' lists and
// watches, which decode for a cache: objects of one response share the
// bytes of equal managedFields (cached objects are read-only), and
// managedFields are not decoded at all when they are to be dropped.
func (f *Factory) decodeOptions() codec.DecodeOptions {
	return codec.DecodeOptions{SkipManagedFields: f.def.dropManagedFields, ShareFieldsV1: true}
}

func (f *Factory) scope(opts []ScopeOption) scope {
	sc := f.def.scope
	for _, o := range opts {
		o.applyScope(&sc)
	}
	return sc
}

func (f *Factory) addLocked(key informerKey, inf runnable) {
	f.informers[key] = inf
	f.order = append(f.order, key)
}

func informerName(what string, sc scope) string {
	if s := sc.String(); s != "" {
		return what + "[" + s + "]"
	}
	return what
}

// reflectorConfig is the reflector configuration of an informer of the
// factory.
func reflectorConfig[T any, PT client.ObjectPtr[T]](s settings, sc scope, name string) reflector.Config[T] {
	opts := metav1.ListOptions{LabelSelector: sc.labelSelector, FieldSelector: sc.fieldSelector}
	if s.tweak != nil {
		s.tweak(&opts)
	}
	rc := reflector.Config[T]{Name: name, ListOptions: opts, UseStreamingList: s.streaming,
		DropManagedFields: s.dropManagedFields, Logger: s.logger}
	if fn := s.transform; fn != nil {
		rc.Transform = func(obj *T) (*T, error) {
			out, err := fn(PT(obj))
			if err != nil {
				return nil, err
			}
			p, ok := out.(PT)
			if !ok || p == nil {
				return nil, fmt.Errorf("informer: transform returned %T, want a non-nil %T", out, obj)
			}
			return (*T)(p), nil
		}
	}
	if fn := s.watchErrorHandler; fn != nil {
		rc.WatchErrorHandler = func(err error) { fn(name, err) }
	}
	return rc
}

// Start runs, each in a goroutine of its own, every informer asked for so
// far and not yet started, until ctx is done. It does not block; call it
// again to start informers asked for later. After Shutdown it does nothing.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for _, k := range f.order {
		if f.started[k] {
			continue
		}
		f.started[k] = true
		inf := f.informers[k]
		f.wg.Go(func() { _ = inf.Run(ctx) })
	}
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

// Syncer is anything with a channel closed once it has synced: a
// SharedInformer (its cache holds the initial list) or a Registration (its
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
