package informer

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/cache"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/selector"
)

// rywTracker lets cached clients read their own writes: it records the
// resourceVersion each write through them returned, and a handler on the
// informer clears the record once the cache has taken that version (or a
// later one) of the object. A Get of an object with a record waits for
// that. One tracker serves every cached client of an informer.
type rywTracker[T any, PT client.ObjectPtr[T]] struct {
	mu      sync.Mutex
	pending map[string]uint64 // by cache key
	changed chan struct{}     // closed and replaced when pending shrinks
}

// rywTrackerFor returns the tracker of the informer of key, making it,
// with its handler, on first use; nil if the informer has stopped.
func rywTrackerFor[T any, PT client.ObjectPtr[T]](f *Factory, key informerKey, inf Informer[T]) *rywTracker[T, PT] {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.trackers[key]; ok {
		return t.(*rywTracker[T, PT])
	}
	t := &rywTracker[T, PT]{pending: map[string]uint64{}, changed: make(chan struct{})}
	seen := func(obj *T) { t.seen(PT(obj)) }
	if _, err := inf.AddEventHandler(HandlerFuncs[T]{
		AddFunc:    func(obj *T, _ bool) { seen(obj) },
		UpdateFunc: func(_, obj *T) { seen(obj) },
		DeleteFunc: func(obj *T, _ bool) { seen(obj) },
	}); err != nil {
		return nil
	}
	f.trackers[key] = t
	return t
}

// parseRV returns a resourceVersion as a number. As client-go's
// resourceversion.CompareResourceVersion, kapi compares resourceVersions
// only when both are integers; a write whose resourceVersion is not one
// is not waited for.
func parseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil && n > 0
}

// record notes that obj, written through a cached client, has its
// resourceVersion on the server, if the cache will see it: obj is in the
// cache's namespace, and matches its label selector or is cached (a write
// that takes it out of the selector reaches the cache as a delete).
func (t *rywTracker[T, PT]) record(inf Informer[T], sc cacheScope, obj PT) {
	rv, ok := parseRV(obj.GetResourceVersion())
	if !ok {
		return
	}
	if ns := sc.namespace(); ns != "" && obj.GetNamespace() != ns {
		return
	}
	if !sc.labels.Matches(selector.Set(obj.GetLabels())) {
		if _, err := inf.Lister().Get(obj.GetNamespace(), obj.GetName()); err != nil {
			return
		}
	}
	key := cache.JoinKey(obj.GetNamespace(), obj.GetName())
	t.mu.Lock()
	defer t.mu.Unlock()
	if rv <= t.pending[key] {
		return
	}
	t.pending[key] = rv
	// The handler may have seen the version before it was recorded: the
	// cache, written before its handlers are told, has it then.
	if t.cachedAtLeast(inf, obj.GetNamespace(), obj.GetName(), rv) {
		t.clearLocked(key)
	}
}

// seen clears the record of obj if the cache now holds its recorded
// version or a later one (or its deletion at one).
func (t *rywTracker[T, PT]) seen(obj PT) {
	rv, ok := parseRV(obj.GetResourceVersion())
	if !ok {
		return
	}
	key := cache.JoinKey(obj.GetNamespace(), obj.GetName())
	t.mu.Lock()
	defer t.mu.Unlock()
	if want, ok := t.pending[key]; ok && rv >= want {
		t.clearLocked(key)
	}
}

func (t *rywTracker[T, PT]) clearLocked(key string) {
	delete(t.pending, key)
	close(t.changed)
	t.changed = make(chan struct{})
}

// wait returns once the cache holds the version of ns/name last written
// through a cached client (at once if none is pending), or fails with
// ErrCacheBehind after cfg.ReadYourWritesTimeout, or with ctx's error.
func (t *rywTracker[T, PT]) wait(ctx context.Context, inf Informer[T], cfg ClientConfig, ns, name string) error {
	key := cache.JoinKey(ns, name)
	var timer interface {
		C() <-chan time.Time
		Stop() bool
	}
	for {
		t.mu.Lock()
		want, ok := t.pending[key]
		changed := t.changed
		if ok && t.cachedAtLeast(inf, ns, name, want) {
			// The cache took the version before the write was recorded.
			t.clearLocked(key)
			ok = false
		}
		t.mu.Unlock()
		if !ok {
			return nil
		}
		if timer == nil {
			timer = cfg.Clock.NewTimerAt(cfg.Clock.Now().Add(cfg.ReadYourWritesTimeout))
			defer timer.Stop()
		}
		select {
		case <-changed:
		case <-timer.C():
			return fmt.Errorf("%w: the cache %s has not seen resourceVersion %d of %s after %v",
				ErrCacheBehind, inf.Name(), want, key, cfg.ReadYourWritesTimeout)
		case <-ctx.Done():
			return fmt.Errorf("informer: waiting for the cache %s to see resourceVersion %d of %s: %w", inf.Name(), want, key, ctx.Err())
		}
	}
}

// cachedAtLeast reports whether the cache holds ns/name at resourceVersion
// rv or later, or has synced past rv (the object deleted since).
func (t *rywTracker[T, PT]) cachedAtLeast(inf Informer[T], ns, name string, rv uint64) bool {
	if n, ok := parseRV(inf.LastSyncResourceVersion()); ok && n >= rv {
		return true
	}
	obj, err := inf.Lister().Get(ns, name)
	if err != nil {
		return false
	}
	n, ok := parseRV(PT(obj).GetResourceVersion())
	return ok && n >= rv
}
