package informer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apply"
	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/selector"
	"github.com/kapi-dev/kapi/workqueue"
)

// DefaultReadYourWritesTimeout is the default of
// ClientConfig.ReadYourWritesTimeout.
const DefaultReadYourWritesTimeout = 10 * time.Second

// ClientConfig configures a cached client ([Cached], [CachedMetadata],
// [Factory.CachedResource], [Factory.CachedMetadataResource]). Every zero
// value is the documented default: ClientConfig{} returns deep copies and
// makes a Get wait up to 10s for the cache to see this client's own
// writes.
type ClientConfig struct {
	// UnsafeDisableDeepCopy makes Get return the cache's own object, and
	// List and ListEach items that share the cache's maps, slices and
	// pointers (default false: deep copies, which the caller owns). It
	// saves a copy per object read — most of the cost of a cached read of
	// a large object (BenchmarkCachedClient) — but whoever modifies a
	// shared object corrupts the cache for every reader (and its
	// handlers) until the object next changes on the server: set it only
	// where the objects read are never modified (DeepCopy one first), and
	// catch mistakes in tests with cache.MutationDetector.
	UnsafeDisableDeepCopy bool
	// ReadYourWritesTimeout bounds how long a Get waits for the cache to
	// see an object written through this client (default 0:
	// DefaultReadYourWritesTimeout; negative: Get never waits, and may
	// return the version before the write, as controller-runtime's cached
	// client does). See "Reading your own writes" in the package
	// documentation.
	ReadYourWritesTimeout time.Duration
	// Clock times ReadYourWritesTimeout (default nil:
	// workqueue.RealClock). Tests set a clocktest.FakeClock.
	Clock workqueue.Clock
}

// ErrOutOfScope is what an [OutOfScopeError] is (errors.Is): a cached
// read asked for objects the cache does not hold.
var ErrOutOfScope = errors.New("informer: read outside the cache's scope")

// ErrFieldNotIndexed is the error of a cached List whose field selector
// names a field other than metadata.name and metadata.namespace that has no
// index (see [AddFieldIndex]).
var ErrFieldNotIndexed = errors.New("informer: field selector on a field without an index")

// ErrCacheBehind is the error of a cached Get that waited
// ClientConfig.ReadYourWritesTimeout in vain for the cache to see a write
// made through the client.
var ErrCacheBehind = errors.New("informer: the cache has not caught up with a write")

// OutOfScopeError is the error of a cached read outside the cache's
// scope: a namespace other than the one the informer caches, a list whose
// selectors do not include the informer's, or an object that exists on
// the server but that the informer's selectors exclude. A cache cannot
// answer these reads (controller-runtime's answers them with nothing); use
// a direct client (client.For), or a factory scoped to cover them.
type OutOfScopeError struct {
	// Informer is the name of the informer read (its type and scope).
	Informer string
	// Namespace and Name are what was read ("" Name for a list; ""
	// Namespace for all namespaces).
	Namespace, Name string
	// Reason says what the cache holds instead.
	Reason string
}

func (e *OutOfScopeError) Error() string {
	var what string
	switch {
	case e.Name != "" && e.Namespace != "":
		what = e.Namespace + "/" + e.Name
	case e.Name != "":
		what = e.Name
	case e.Namespace != "":
		what = "a list in namespace " + e.Namespace
	default:
		what = "a list in all namespaces"
	}
	return fmt.Sprintf("informer: %s is outside the scope of the cache %s: %s", what, e.Informer, e.Reason)
}

// Is makes errors.Is(err, ErrOutOfScope) true.
func (e *OutOfScopeError) Is(target error) bool { return target == ErrOutOfScope }

// FieldIndexName is the name of the index through which a cached client's
// List selects objects by field (a field selector on spec.nodeName uses
// the index "field:spec.nodeName"). [AddFieldIndex] adds one.
func FieldIndexName(field string) string { return "field:" + field }

// AddFieldIndex adds to inf's cache the index through which cached
// clients' Lists select objects by field: fn returns the values of field
// for an object (one, usually; "" for an absent field, as the server reads
// it). For example, to list pods by node from the cache:
//
//	err := informer.AddFieldIndex(informer.For[corev1.Pod](f), "spec.nodeName",
//		func(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil })
//	pods, err := informer.Cached[corev1.Pod](f, informer.ClientConfig{}).
//		List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-1"})
//
// metadata.name and metadata.namespace need no index.
func AddFieldIndex[T any](inf Informer[T], field string, fn cache.IndexFunc[*T]) error {
	return inf.AddIndexers(cache.Indexers[*T]{FieldIndexName(field): fn})
}

// Cached returns a client.Resource for objects of type T that reads from
// the factory's shared informer for T and writes to the server: Get, List
// and ListEach are answered from the cache ([For]); Watch, every write
// (Create, Update, UpdateStatus, Patch, Apply, ApplyStatus, ApplyConfig,
// ApplyConfigStatus, Delete, DeleteCollection) and the subresources go to
// the server through client.For[T](f.Client()), unchanged. It is controller-runtime's default
// client, and a drop-in for client.For[T]: a reconciler written against
// client.Resource[T] takes either. See "Cached clients" in the package
// documentation for what a read from the cache guarantees.
//
// Asking for the cached client asks for the informer: made before the
// factory starts, it is started with the others (and waited for by a
// manager); made after, it is started by the first read, under the
// context of the factory's last Start. The client starts in the client's
// default namespace, as client.For does.
func Cached[T any, PT client.ObjectPtr[T]](f *Factory, cfg ClientConfig) client.Resource[T] {
	res := client.For[T, PT](f.c)
	k := res.Kind()
	if k.Kind == "" {
		// Every verb fails with the client's NotRegisteredError; no
		// informer is made that could never sync.
		r := &cachedReader[T, PT]{err: &client.NotRegisteredError{Type: reflect.TypeFor[T]()}}
		return (&cachedResource[T, PT]{cachedReader: r, res: res}).inNamespace(f.c.Namespace())
	}
	r := newCachedReader[T, PT](f, informerKey{typ: reflect.TypeFor[T]()}, For[T, PT](f), cfg)
	r.gr = k.GroupVersionResource().GroupResource()
	r.scopeKnown, r.namespaced = true, k.Namespaced
	r.listTypeMeta = func(context.Context) metav1.TypeMeta {
		return metav1.TypeMeta{Kind: k.ListKind, APIVersion: k.APIVersion()}
	}
	return (&cachedResource[T, PT]{cachedReader: r, res: res}).inNamespace(f.c.Namespace())
}

// CachedResource returns a cached client of the resource gvr, its objects
// held as unstructured.Unstructured: Cached for the dynamic client. It
// reads from the factory's informer for gvr (Factory.ForResource) and
// writes through client.Dynamic(f.Client()).Resource(gvr); like that
// client, it starts with no namespace.
func (f *Factory) CachedResource(gvr client.GroupVersionResource, cfg ClientConfig) client.Resource[unstructured.Unstructured] {
	key := informerKey{typ: reflect.TypeFor[unstructured.Unstructured](), gvr: gvr}
	r := newCachedReader[unstructured.Unstructured](f, key, f.ForResource(gvr), cfg)
	r.gr = gvr.GroupResource()
	r.listTypeMeta = f.listTypeMeta(gvr)
	return (&cachedResource[unstructured.Unstructured, *unstructured.Unstructured]{cachedReader: r, res: client.Dynamic(f.c).Resource(gvr)}).inNamespace("")
}

// CachedMetadata returns a metadata-only cached client of the resource of
// T (pods for corev1.Pod): it reads from the factory's metadata informer
// ([ForMetadata]; its scope is FactoryConfig.ByMetadata's entry for the
// resource) and patches and deletes through client.Metadata. Objects read
// are metav1.PartialObjectMetadata with that kind and apiVersion, as the
// metadata client returns them. It starts in the client's default
// namespace when the kind is namespaced.
func CachedMetadata[T any, PT client.ObjectPtr[T]](f *Factory, cfg ClientConfig) client.MetadataResource {
	k, ok := client.KindFor[T](f.c.Scheme())
	if !ok {
		// As Cached: every read fails, and no informer is made.
		r := &cachedReader[metav1.PartialObjectMetadata, *metav1.PartialObjectMetadata]{err: &client.NotRegisteredError{Type: reflect.TypeFor[T]()}}
		return cachedMetadata{cachedReader: r, res: client.Metadata(f.c).Resource(client.GroupVersionResource{})}
	}
	gvr := k.GroupVersionResource()
	r := newCachedReader[metav1.PartialObjectMetadata](f, metadataKey(gvr), ForMetadata[T, PT](f), cfg)
	r.gr = gvr.GroupResource()
	r.scopeKnown, r.namespaced = true, k.Namespaced
	r.listTypeMeta = func(context.Context) metav1.TypeMeta { return partialListTypeMeta }
	r.typeMeta = &partialTypeMeta
	return cachedMetadata{cachedReader: r, res: client.Metadata(f.c).Resource(gvr)}.inNamespace(f.c.Namespace())
}

// CachedMetadataResource returns a metadata-only cached client of the
// resource gvr (see CachedMetadata), reading from
// Factory.ForMetadataResource's informer. Like client.Metadata's, it starts
// with no namespace.
func (f *Factory) CachedMetadataResource(gvr client.GroupVersionResource, cfg ClientConfig) client.MetadataResource {
	r := newCachedReader[metav1.PartialObjectMetadata](f, metadataKey(gvr), f.ForMetadataResource(gvr), cfg)
	r.gr = gvr.GroupResource()
	r.listTypeMeta = func(context.Context) metav1.TypeMeta { return partialListTypeMeta }
	r.typeMeta = &partialTypeMeta
	return cachedMetadata{cachedReader: r, res: client.Metadata(f.c).Resource(gvr)}.inNamespace("")
}

// The kind and apiVersion of what the metadata client returns.
var (
	partialTypeMeta     = metav1.TypeMeta{Kind: codec.AsPartialObjectMetadata, APIVersion: codec.GroupMeta + "/v1"}
	partialListTypeMeta = metav1.TypeMeta{Kind: codec.AsPartialObjectMetadataList, APIVersion: codec.GroupMeta + "/v1"}
)

// listTypeMeta returns the kind and apiVersion of the lists of gvr, looked
// up through the RESTMapper ("" when the lookup fails: a list's kind is
// not worth failing a read for).
func (f *Factory) listTypeMeta(gvr client.GroupVersionResource) func(context.Context) metav1.TypeMeta {
	return func(ctx context.Context) metav1.TypeMeta {
		m, err := f.c.RESTMapper().ResourceFor(ctx, gvr)
		if err != nil {
			return metav1.TypeMeta{}
		}
		return metav1.TypeMeta{Kind: m.Kind.Kind + "List", APIVersion: m.Kind.APIVersion()}
	}
}

// cachedReader answers Get, List and ListEach from an informer's cache. It
// is immutable; Namespace makes copies.
type cachedReader[T any, PT client.ObjectPtr[T]] struct {
	f     *Factory
	key   informerKey
	inf   Informer[T]
	scope cacheScope
	cfg   ClientConfig
	ryw   *rywTracker[T, PT] // nil when reads do not wait for writes
	err   error              // every read returns it (an unregistered type)

	gr metav1.GroupResource // named by NotFound errors
	// scopeKnown says namespaced is the kind's scope (a Go type's);
	// resources known by their GroupVersionResource alone use the
	// namespace they are given.
	scopeKnown, namespaced bool
	namespace              string
	// direct reads the server in namespace: Get falls back to it for
	// objects the cache's selectors may exclude, and Watch uses it.
	direct       client.Reader[T]
	listTypeMeta func(context.Context) metav1.TypeMeta
	// typeMeta, if set, is the kind and apiVersion of returned objects
	// (the metadata client's, where the cache holds the resource's).
	typeMeta *metav1.TypeMeta
	copyInto func(dst, src *T) error
}

func newCachedReader[T any, PT client.ObjectPtr[T]](f *Factory, key informerKey, inf Informer[T], cfg ClientConfig) *cachedReader[T, PT] {
	if cfg.ReadYourWritesTimeout == 0 {
		cfg.ReadYourWritesTimeout = DefaultReadYourWritesTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = workqueue.RealClock{}
	}
	r := &cachedReader[T, PT]{f: f, key: key, inf: inf, scope: f.scopeOf(key), cfg: cfg, copyInto: deepCopier[T]()}
	if cfg.ReadYourWritesTimeout > 0 {
		r.ryw = rywTrackerFor[T, PT](f, key, inf)
	}
	return r
}

// deepCopier returns a function that deep-copies a T: its generated
// DeepCopyInto (kapi's kinds, Unstructured, PartialObjectMetadata), or a
// JSON round trip for a type without one.
func deepCopier[T any]() func(dst, src *T) error {
	if _, ok := any(new(T)).(interface{ DeepCopyInto(*T) }); ok {
		return func(dst, src *T) error {
			any(src).(interface{ DeepCopyInto(*T) }).DeepCopyInto(dst)
			return nil
		}
	}
	return func(dst, src *T) error {
		b, err := kjson.Marshal(src)
		if err == nil {
			var zero T
			*dst = zero
			err = kjson.Unmarshal(b, dst)
		}
		if err != nil {
			return fmt.Errorf("informer: copying a cached %T through JSON: %w", src, err)
		}
		return nil
	}
}

// inNamespace returns a copy of r reading namespace ns (ignored for a
// cluster-scoped kind), reading the server through direct.
func (r *cachedReader[T, PT]) inNamespace(ns string, direct client.Reader[T]) *cachedReader[T, PT] {
	cp := *r
	if r.scopeKnown && !r.namespaced {
		ns = ""
	}
	cp.namespace, cp.direct = ns, direct
	return &cp
}

// objectNamespace is the namespace of a read of one object.
func (r *cachedReader[T, PT]) objectNamespace() (string, error) {
	if r.scopeKnown && r.namespaced && r.namespace == "" {
		return "", fmt.Errorf("client: %s is namespaced, and the client names no namespace", r.gr)
	}
	return r.namespace, nil
}

// ready makes sure the informer runs and waits, bounded by ctx, until its
// cache holds the initial list.
func (r *cachedReader[T, PT]) ready(ctx context.Context) error {
	if r.err != nil {
		return r.err
	}
	if r.inf.HasSynced() {
		return nil
	}
	if err := r.f.ensureRunning(r.key); err != nil {
		return err
	}
	select {
	case <-r.inf.Synced():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("informer: waiting for the cache %s to sync: %w", r.inf.Name(), ctx.Err())
	}
}

// outOfScope returns the OutOfScopeError of a read of ns/name.
func (r *cachedReader[T, PT]) outOfScope(ns, name, format string, args ...any) error {
	return &OutOfScopeError{Informer: r.inf.Name(), Namespace: ns, Name: name, Reason: fmt.Sprintf(format, args...)}
}

// checkNamespace fails a read in ns ("" all namespaces) that the cache's
// namespace does not cover.
func (r *cachedReader[T, PT]) checkNamespace(ns, name string) error {
	if s := r.scope.namespace(); s != "" && ns != s {
		return r.outOfScope(ns, name, "it holds namespace %s only", s)
	}
	return nil
}

// out returns an object of the cache to the caller: a deep copy, or the
// object itself with UnsafeDisableDeepCopy, with the kind and apiVersion
// the direct client would give it.
func (r *cachedReader[T, PT]) out(obj *T) (*T, error) {
	if !r.cfg.UnsafeDisableDeepCopy {
		cp := new(T)
		if err := r.copyInto(cp, obj); err != nil {
			return nil, err
		}
		obj = cp
	} else if r.typeMeta != nil {
		cp := *obj // a new TypeMeta, the rest shared
		obj = &cp
	}
	r.fixTypeMeta(obj)
	return obj, nil
}

func (r *cachedReader[T, PT]) fixTypeMeta(obj *T) {
	if r.typeMeta != nil {
		setTypeMeta(obj, *r.typeMeta)
	}
}

// setTypeMeta sets the kind and apiVersion of obj, if it has a TypeMeta.
func setTypeMeta(obj any, tm metav1.TypeMeta) {
	if o, ok := obj.(interface{ GetObjectKind() *metav1.TypeMeta }); ok {
		*o.GetObjectKind() = tm
	}
}

// Get returns the object called name from the cache, after waiting for
// the informer's sync (and for a write of it through this client to reach
// the cache).
func (r *cachedReader[T, PT]) Get(ctx context.Context, name string, opts metav1.GetOptions) (*T, error) {
	ns, err := r.objectNamespace()
	if err != nil {
		return nil, err
	}
	if err := r.ready(ctx); err != nil {
		return nil, err
	}
	if err := r.checkNamespace(ns, name); err != nil {
		return nil, err
	}
	if r.ryw != nil {
		if err := r.ryw.wait(ctx, r.inf, r.cfg, ns, name); err != nil {
			return nil, err
		}
	}
	if obj, err := r.inf.Lister().Get(ns, name); err == nil {
		return r.out(obj)
	}
	if !r.scope.selective() {
		return nil, client.NewStatusError(metav1.NewNotFound(r.gr, name))
	}
	// The cache's selectors may exclude the object: only the server knows.
	obj, err := r.direct.Get(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	if why := r.scope.excludes(PT(obj)); why != "" {
		return nil, r.outOfScope(ns, name, "%s", why)
	}
	return obj, nil // the cache is behind the server
}

// List returns the objects opts selects from the cache.
func (r *cachedReader[T, PT]) List(ctx context.Context, opts metav1.ListOptions) (*client.List[T], error) {
	objs, rv, err := r.selectObjects(ctx, opts)
	if err != nil {
		return nil, err
	}
	list := &client.List[T]{TypeMeta: r.listTypeMeta(ctx), ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: make([]T, len(objs))}
	for i, obj := range objs {
		if r.cfg.UnsafeDisableDeepCopy {
			list.Items[i] = *obj
		} else if err := r.copyInto(&list.Items[i], obj); err != nil {
			return nil, err
		}
		r.fixTypeMeta(&list.Items[i])
	}
	return list, nil
}

// ListEach hands the objects opts selects from the cache to fn.
func (r *cachedReader[T, PT]) ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error) {
	objs, rv, err := r.selectObjects(ctx, opts)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	for _, obj := range objs {
		cp, err := r.out(obj)
		if err == nil {
			err = fn(cp)
		}
		if err != nil {
			return metav1.ListMeta{}, err
		}
	}
	return metav1.ListMeta{ResourceVersion: rv}, nil
}

// Watch starts a watch on the server: see Cached.
func (r *cachedReader[T, PT]) Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[T], error) {
	return r.direct.Watch(ctx, opts)
}

// badRequest is the 400 a server would answer a list it cannot parse with.
func badRequest(format string, args ...any) error {
	return client.NewStatusError(metav1.NewBadRequest(fmt.Sprintf(format, args...)))
}

// selectObjects returns, sorted by namespace and name as the server lists
// them, the cached objects opts selects, and the resourceVersion the cache
// was synced to before they were read (so that the objects are at least
// as new: a watch from it may repeat a change, never miss one).
func (r *cachedReader[T, PT]) selectObjects(ctx context.Context, opts metav1.ListOptions) ([]*T, string, error) {
	if err := r.ready(ctx); err != nil {
		return nil, "", err
	}
	ns := r.namespace
	if err := r.checkNamespace(ns, ""); err != nil {
		return nil, "", err
	}
	if opts.Continue != "" {
		return nil, "", badRequest("a list from the cache has a single page: it takes no continue token")
	}
	labels, err := selector.ParseLabels(opts.LabelSelector)
	if err != nil {
		return nil, "", badRequest("unable to parse requirement: %v", err)
	}
	fields, err := selector.ParseFields(opts.FieldSelector)
	if err != nil {
		return nil, "", badRequest("invalid field selector: %v", err)
	}
	if why := r.scope.covers(labels, fields); why != "" {
		return nil, "", r.outOfScope(ns, "", "%s", why)
	}
	m, err := r.fieldMatcher(fields)
	if err != nil {
		return nil, "", err
	}
	rv := r.inf.LastSyncResourceVersion()
	objs, err := m.candidates(r.inf, ns, labels)
	if err != nil {
		return nil, "", err
	}
	objs = slices.DeleteFunc(objs, func(o *T) bool { return !m.matches(o) })
	slices.SortFunc(objs, func(a, b *T) int {
		pa, pb := PT(a), PT(b)
		return cmp.Or(cmp.Compare(pa.GetNamespace(), pb.GetNamespace()), cmp.Compare(pa.GetName(), pb.GetName()))
	})
	return objs, rv, nil
}

// fieldMatcher matches objects against a field selector: metadata.name and
// metadata.namespace by their values, other fields through their indexes.
type fieldMatcher[T any, PT client.ObjectPtr[T]] struct {
	reqs    []selector.FieldRequirement
	indexes []cache.IndexFunc[*T] // of reqs[i], nil for metadata fields
}

func (r *cachedReader[T, PT]) fieldMatcher(fields selector.FieldSelector) (fieldMatcher[T, PT], error) {
	m := fieldMatcher[T, PT]{reqs: fields.Requirements()}
	var indexers cache.Indexers[*T]
	for _, req := range m.reqs {
		var fn cache.IndexFunc[*T]
		switch f := req.Field(); f {
		case "metadata.name", "metadata.namespace":
		default:
			if indexers == nil {
				indexers = r.inf.Indexer().Indexers()
			}
			if fn = indexers[FieldIndexName(f)]; fn == nil {
				return m, fmt.Errorf("%w: the cache %s has no index %q for the field selector %q (add one with informer.AddFieldIndex)",
					ErrFieldNotIndexed, r.inf.Name(), FieldIndexName(f), req.String())
			}
		}
		m.indexes = append(m.indexes, fn)
	}
	return m, nil
}

// values returns the values of the field of reqs[i] for obj.
func (m fieldMatcher[T, PT]) values(i int, obj *T) []string {
	switch m.reqs[i].Field() {
	case "metadata.name":
		return []string{PT(obj).GetName()}
	case "metadata.namespace":
		return []string{PT(obj).GetNamespace()}
	}
	vs, err := m.indexes[i](obj)
	if err != nil {
		return nil // the cache refused to store an object its index fails on
	}
	return vs
}

func (m fieldMatcher[T, PT]) matches(obj *T) bool {
	for i, req := range m.reqs {
		has := slices.Contains(m.values(i, obj), req.Value())
		if has != (req.Operator() != selector.NotEquals) {
			return false
		}
	}
	return true
}

// candidates returns the cached objects of ns ("" all) whose labels match,
// narrowed through an index by the first equality on an indexed field.
func (m fieldMatcher[T, PT]) candidates(inf Informer[T], ns string, labels selector.LabelSelector) ([]*T, error) {
	for i, req := range m.reqs {
		if req.Operator() == selector.NotEquals || m.indexes[i] == nil {
			continue
		}
		objs, err := inf.Indexer().ByIndex(FieldIndexName(req.Field()), req.Value())
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(objs, func(o *T) bool {
			p := PT(o)
			return ns != "" && p.GetNamespace() != ns || !labels.Matches(selector.Set(p.GetLabels()))
		}), nil
	}
	if ns == "" {
		return inf.Lister().List(labels)
	}
	return inf.Lister().Namespace(ns).List(labels)
}

// cachedResource is the client.Resource of Cached and
// Factory.CachedResource: reads from the cache, the rest through res.
type cachedResource[T any, PT client.ObjectPtr[T]] struct {
	*cachedReader[T, PT]
	res client.Resource[T]
}

var _ client.MetadataResource = cachedMetadata{}

func (c *cachedResource[T, PT]) inNamespace(ns string) *cachedResource[T, PT] {
	res := c.res.Namespace(ns)
	return &cachedResource[T, PT]{cachedReader: c.cachedReader.inNamespace(ns, res), res: res}
}

// Namespace returns the cached client of namespace ns.
func (c *cachedResource[T, PT]) Namespace(ns string) client.Resource[T] { return c.inNamespace(ns) }

// WithDecodeOptions applies o to what is read from the server (Watch, and
// the objects writes return); objects read from the cache were decoded by
// the informer.
func (c *cachedResource[T, PT]) WithDecodeOptions(o codec.DecodeOptions) client.Resource[T] {
	res := c.res.WithDecodeOptions(o)
	return &cachedResource[T, PT]{cachedReader: c.cachedReader.inNamespace(c.namespace, res), res: res}
}

func (c *cachedResource[T, PT]) Kind() client.Kind { return c.res.Kind() }

// wrote records a write's result so that Gets wait for the cache to see
// it, and returns it.
func (c *cachedResource[T, PT]) wrote(obj *T, err error, dryRun []string) (*T, error) {
	if err == nil && c.ryw != nil && len(dryRun) == 0 {
		c.ryw.record(c.inf, c.scope, PT(obj))
	}
	return obj, err
}

func (c *cachedResource[T, PT]) Create(ctx context.Context, obj *T, opts metav1.CreateOptions) (*T, error) {
	out, err := c.res.Create(ctx, obj, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) Update(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error) {
	out, err := c.res.Update(ctx, obj, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) UpdateStatus(ctx context.Context, obj *T, opts metav1.UpdateOptions) (*T, error) {
	out, err := c.res.UpdateStatus(ctx, obj, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) Patch(ctx context.Context, name string, pt client.PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*T, error) {
	out, err := c.res.Patch(ctx, name, pt, data, opts, subresource...)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) Apply(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error) {
	out, err := c.res.Apply(ctx, obj, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) ApplyStatus(ctx context.Context, obj *T, opts metav1.ApplyOptions) (*T, error) {
	out, err := c.res.ApplyStatus(ctx, obj, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) ApplyConfig(ctx context.Context, cfg apply.Config[T], opts metav1.ApplyOptions) (*T, error) {
	out, err := c.res.ApplyConfig(ctx, cfg, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) ApplyConfigStatus(ctx context.Context, cfg apply.Config[T], opts metav1.ApplyOptions) (*T, error) {
	out, err := c.res.ApplyConfigStatus(ctx, cfg, opts)
	return c.wrote(out, err, opts.DryRun)
}

func (c *cachedResource[T, PT]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.res.Delete(ctx, name, opts)
}

func (c *cachedResource[T, PT]) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return c.res.DeleteCollection(ctx, opts, listOpts)
}

func (c *cachedResource[T, PT]) GetSubresource(ctx context.Context, name, sub string, result any, opts metav1.GetOptions) error {
	return c.res.GetSubresource(ctx, name, sub, result, opts)
}

func (c *cachedResource[T, PT]) UpdateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.UpdateOptions) error {
	return c.res.UpdateSubresource(ctx, name, sub, obj, result, opts)
}

func (c *cachedResource[T, PT]) CreateSubresource(ctx context.Context, name, sub string, obj, result any, opts metav1.CreateOptions) error {
	return c.res.CreateSubresource(ctx, name, sub, obj, result, opts)
}

// cachedMetadata is the client.MetadataResource of CachedMetadata and
// Factory.CachedMetadataResource.
type cachedMetadata struct {
	*cachedReader[metav1.PartialObjectMetadata, *metav1.PartialObjectMetadata]
	res client.MetadataResource
}

func (c cachedMetadata) inNamespace(ns string) cachedMetadata {
	res := c.res.Namespace(ns)
	return cachedMetadata{cachedReader: c.cachedReader.inNamespace(ns, res), res: res}
}

// Namespace returns the cached metadata client of namespace ns.
func (c cachedMetadata) Namespace(ns string) client.MetadataResource { return c.inNamespace(ns) }

// WithDecodeOptions applies o to what is read from the server; see
// cachedResource.WithDecodeOptions.
func (c cachedMetadata) WithDecodeOptions(o codec.DecodeOptions) client.MetadataResource {
	res := c.res.WithDecodeOptions(o)
	return cachedMetadata{cachedReader: c.cachedReader.inNamespace(c.namespace, res), res: res}
}

func (c cachedMetadata) Patch(ctx context.Context, name string, pt client.PatchType, data []byte, opts metav1.PatchOptions, subresource ...string) (*metav1.PartialObjectMetadata, error) {
	out, err := c.res.Patch(ctx, name, pt, data, opts, subresource...)
	if err == nil && c.ryw != nil && len(opts.DryRun) == 0 {
		c.ryw.record(c.inf, c.scope, out)
	}
	return out, err
}

func (c cachedMetadata) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.res.Delete(ctx, name, opts)
}

func (c cachedMetadata) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	return c.res.DeleteCollection(ctx, opts, listOpts)
}
