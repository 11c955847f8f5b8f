package apiserver

import (
	"sync"

	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
)

// encodeCache remembers the encoding of recently sent watch objects, so that an
// event fanned out to many watchers is encoded once, not once per watcher.
// Stored objects are immutable and shared, so the object pointer and the
// resource it is served as (a custom resource's versions share objects but not
// apiVersions) identify its bytes. The cache is a FIFO of fixed size: old entries fall out as new events
// arrive, and a miss just encodes again.
type encodeCache struct {
	mu    sync.Mutex
	m     map[cacheKey][]byte
	order []cacheKey
	next  int
}

type cacheKey struct {
	obj      storage.Object
	res      *registry.Resource
	protobuf bool
	// as is the conversion the object is encoded in ("" for none, else
	// the kind and its apiVersion, such as PartialObjectMetadata meta.k8s.io/v1).
	as string
}

func newEncodeCache(size int) *encodeCache {
	return &encodeCache{m: make(map[cacheKey][]byte, size), order: make([]cacheKey, size)}
}

// get returns the cached bytes of obj served as res in the conversion mt
// asks for, or encodes them with enc and caches them.
func (c *encodeCache) get(obj storage.Object, res *registry.Resource, mt codec.MediaType, protobuf bool, enc func() ([]byte, error)) ([]byte, error) {
	k := cacheKey{obj: obj, res: res, protobuf: protobuf}
	if mt.As != "" {
		k.as = mt.As + " " + conversionAPIVersion(mt)
	}
	c.mu.Lock()
	b, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := enc()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		if old := c.order[c.next]; old.obj != nil {
			delete(c.m, old)
		}
		c.order[c.next] = k
		c.next = (c.next + 1) % len(c.order)
		c.m[k] = b
	}
	return b, nil
}
