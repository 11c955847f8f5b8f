package informer

import (
	"fmt"
	"reflect"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// ForMetadata returns the factory's shared metadata-only informer of the
// resource of T (pods for corev1.Pod), making it on first use: an informer
// that lists and watches with the metadata client
// (client.Metadata(c).Resource(gvr)) and caches each object's
// metav1.PartialObjectMetadata — name, namespace, labels, annotations, owner
// references, finalizers, resourceVersion — instead of the whole object. It
// is the informer a controller that only reads those uses to keep a fraction
// of the memory: about a kilobyte per object with
// FactoryConfig.DropManagedFields, whatever the object's size, where a full
// pod takes 17 KB (BenchmarkCacheHeap).
//
// It is Factory.ForMetadataResource of T's resource, the same shared
// informer, except that the kind and scope come from the client's scheme
// instead of the server's discovery. It is not the informer For[T] returns:
// the two are two caches. T must be registered in the client's scheme;
// otherwise the informer's lists fail, and its watch error handler says
// why.
func ForMetadata[T any, PT client.ObjectPtr[T]](f *Factory) Informer[metav1.PartialObjectMetadata] {
	k, ok := client.KindFor[T](f.c.Scheme())
	if !ok {
		return f.metadataInformer(informerKey{typ: reflect.TypeFor[T](), metadata: true}, nil,
			fmt.Errorf("informer: %v is not registered in the client's scheme", reflect.TypeFor[T]()))
	}
	return f.metadataInformer(metadataKey(k.GroupVersionResource()), &k, nil)
}

// ForMetadataResource returns the factory's shared metadata-only informer
// of the resource gvr (see ForMetadata), making it on first use: in the
// factory's scope, or in the one its ByMetadata entry for gvr gives. The
// resource's scope and kind are looked up through the client's RESTMapper
// when the informer first lists (a failed lookup is retried as a failed
// list is).
//
// Cached objects, and those handed to handlers, have the kind and
// apiVersion of the resource's objects (Kind "Pod", APIVersion "v1"), not
// the PartialObjectMetadata the server sends, so that they say what they
// are the metadata of (as controller-runtime's metadata cache does).
func (f *Factory) ForMetadataResource(gvr client.GroupVersionResource) Informer[metav1.PartialObjectMetadata] {
	return f.metadataInformer(metadataKey(gvr), nil, nil)
}

func metadataKey(gvr client.GroupVersionResource) informerKey {
	return informerKey{typ: reflect.TypeFor[metav1.PartialObjectMetadata](), gvr: gvr, metadata: true}
}

// metadataInformer returns the metadata informer of key, making it with
// the resource's kind k if known (else looked up), or, if failed is not nil,
// one whose lists fail with it.
func (f *Factory) metadataInformer(key informerKey, k *client.Kind, failed error) Informer[metav1.PartialObjectMetadata] {
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(Informer[metav1.PartialObjectMetadata])
	}
	o := f.cfg.ByMetadata[key.gvr]
	sc := f.scope(o.scope())
	res := client.Metadata(f.c).Resource(key.gvr).WithDecodeOptions(f.decodeOptions())
	lw := &lazyLW[metav1.PartialObjectMetadata, client.MetadataResource]{c: f.c, gvr: key.gvr, ns: sc.namespace, res: res}
	switch {
	case failed != nil:
		lw.failed = failed
	case k != nil:
		if k.Namespaced {
			lw.res = res.Namespace(sc.namespace)
		} else {
			sc.namespace = "" // a cluster-scoped collection
		}
		lw.kind, lw.resolved, lw.namespaced = k.GroupVersionKind(), true, k.Namespaced
	}
	what := "metadata " + resourceName(key.gvr)
	if failed != nil {
		what = "metadata " + key.typ.String()
	}
	name := informerName(what, sc)
	// The resource's kind goes on every object before the user's
	// transform sees it.
	transform := func(p *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		p.TypeMeta = lw.typeMeta()
		if o.Transform != nil {
			return o.Transform(p)
		}
		return p, nil
	}
	inf := New[metav1.PartialObjectMetadata](lw, Config[metav1.PartialObjectMetadata]{
		Reflector:    reflectorConfig(f.cfg, sc, name, what, transform),
		Resource:     key.gvr.GroupResource(),
		ResyncPeriod: f.cfg.ResyncPeriod,
	})
	f.addLocked(key, inf, sc, lw)
	return inf
}

// typeMeta is the kind and apiVersion of the resource's objects, once
// known.
func (d *lazyLW[T, R]) typeMeta() metav1.TypeMeta {
	d.mu.Lock()
	defer d.mu.Unlock()
	return metav1.TypeMeta{Kind: d.kind.Kind, APIVersion: d.kind.APIVersion()}
}
