// Package reflector keeps a store in sync with a collection on the server: it
// lists, then watches from the list's resourceVersion, and starts over when it
// must.
//
// # The loop
//
// A Reflector is a state machine (state.go): each state is a Go type holding
// its data, and one step function moves from a state to the next, making the
// store changes on the way. Run drives it, and owns the backoff:
//
//	listing(rv, items) ──a page──▶ listing(rv, items + the page's)
//	listing(rv, items) ──the full list after an expired continue token──▶ listing(rv, its items only)
//	listing(rv, items) ──the last page, store.Replace──▶ startWatch(rv of the list)
//	listing("0") ──410 / too large──▶ listing("")
//	startStreaming ──watch with sendInitialEvents──▶ streaming
//	startStreaming ──400 / 422──▶ listing("0")            (streaming unsupported)
//	streaming(items) ──ADDED──▶ streaming(items + object)
//	streaming(items) ──end-of-initial-events bookmark, store.Replace──▶ watching(rv)
//	streaming ──no event for InitialEventsTimeout, or a change event──▶ listing("0")
//	startWatch(rv) ──watch──▶ watching(rv)
//	watching(rv) ──event: store.Add/Update/Delete; bookmark──▶ watching(rv of the event)
//	watching(rv) ──the watch ends cleanly (its timeout)──▶ startWatch(rv)
//	startWatch, watching ──410 Gone / Expired──▶ relist: startStreaming or listing("")
//	any other error ──▶ backingOff(err, the state to retry) ──wait──▶ that state
//
// The initial list asks for resourceVersion "0" (any state the server has
// cached, cheapest for it) and falls back to "" (the latest) when the server
// cannot serve it. After a 410 the relist reads the latest state. A list is
// taken a page per step, while the pager already fetches and decodes the next
// page; items are decoded one at a time as each page streams in, and handed
// to the store in one atomic Replace after the last page, so the store never
// shows a half-listed collection, and no decoded list is held beside the
// cache. A list abandoned mid-way (an error, Run's context done) stops its
// pager.
//
// With UseStreamingList the reflector instead opens one watch with
// sendInitialEvents=true: the server sends every object as ADDED, then a
// BOOKMARK marking the end of the initial events, then changes. A server that
// refuses it (400, 422), or that ignores it (no end bookmark within
// InitialEventsTimeout of the last event, or a change before the end), sends
// the reflector to paged lists for good: relists after a 410 list too.
//
// # Faults
//
// Every error is retried with jittered exponential backoff (0.8 s doubling to a
// 30 s cap, reset after 2 minutes without errors, as client-go); a 429's
// Retry-After is honoured. Watches ask for a random timeout between 5 and 10
// minutes so that many reflectors do not reconnect in lockstep; a watch that
// ends by timeout, or breaks, is re-opened from the last resourceVersion
// without a relist. After any sequence of faults the store converges to the
// server's state.
package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/pager"
)

// ListerWatcher lists and watches one collection. client.For[T](c), with its
// namespace and selectors applied by the caller, and the dynamic client
// satisfy it.
type ListerWatcher[T any] interface {
	ListEach(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (client.Watcher[T], error)
}

// Store is what a reflector keeps in sync. Replace swaps the whole contents
// atomically (after a list); Add, Update and Delete follow watch events.
type Store[T any] interface {
	Replace(items []*T, resourceVersion string) error
	Add(obj *T) error
	Update(obj *T) error
	Delete(obj *T) error
}

// DefaultInitialEventsTimeout is Config.InitialEventsTimeout's default.
const DefaultInitialEventsTimeout = 10 * time.Second

// Config tunes a Reflector. Every zero value is the documented default.
type Config[T any] struct {
	// Name identifies the reflector in logs (default the Go type of T).
	Name string
	// ListOptions select the collection (label and field selectors); the
	// reflector sets resourceVersion, limit, continue and watch itself.
	ListOptions metav1.ListOptions
	// PageSize is the list page size (default 500; negative: one request).
	PageSize int64
	// UseStreamingList lists with a sendInitialEvents watch instead of paged
	// lists (default false: not every server supports it).
	UseStreamingList bool
	// InitialEventsTimeout is how long a streaming list waits for the next
	// of its initial events (an object, or the bookmark that ends them)
	// before it concludes that the server, or a proxy on the way, ignored
	// sendInitialEvents, and falls back to paged lists (default
	// DefaultInitialEventsTimeout, 10 s: the interval at which client-go
	// starts warning that the bookmark is late; client-go itself waits until
	// the watch times out, 5 to 10 minutes without a synced cache).
	InitialEventsTimeout time.Duration
	// Transform, if set, is applied to every object before it is stored, e.g.
	// to drop managedFields (see DropManagedFields). It may change the
	// object it is given, except for the bytes of managedFields' FieldsV1,
	// which may be shared with other objects (replace them, never write into
	// them).
	Transform func(*T) (*T, error)
	// DropManagedFields leaves metadata.managedFields out of the cache, as
	// the DropManagedFields transform does (default false). It is cheaper
	// still to have the ListerWatcher skip them unread, as the informer
	// factory does (client.Resource.WithDecodeOptions).
	DropManagedFields bool
	// InitialBackoff, MaxBackoff and ResetBackoffAfter shape the retry
	// backoff (defaults 800ms, 30s, 2m, as client-go's reflector).
	InitialBackoff, MaxBackoff, ResetBackoffAfter time.Duration
	// MinWatchTimeout is the shortest watch timeout asked of the server; each
	// watch asks for a random one in [MinWatchTimeout, 2*MinWatchTimeout)
	// (default 5 minutes).
	MinWatchTimeout time.Duration
	// WatchErrorHandler is told about every list or watch error before the
	// reflector backs off and retries (default: log at debug level, 410 and
	// timeouts at debug, others at info).
	WatchErrorHandler func(err error)
	// Logger receives the reflector's logs (default slog.Default()).
	Logger *slog.Logger
	// Metrics receives the reflector's lists and watches (default nil:
	// none). The metrics package exports them to Prometheus.
	Metrics Metrics
}

// Reflector mirrors one collection into a Store. Run it with Run; it is safe
// to read its state from other goroutines.
type Reflector[T any] struct {
	lw    ListerWatcher[T]
	store Store[T]
	cfg   Config[T]
	// meta is T's object metadata (PT(obj), fixed by New at compile time).
	meta func(*T) metav1.Object
	// sleep waits d or until ctx is done, between retries (tests record it).
	sleep func(ctx context.Context, d time.Duration) error

	lastRV  atomic.Value // string
	synced  atomic.Bool
	syncedC chan struct{}
	once    sync.Once
}

// New returns a reflector that keeps store in sync with what lw lists. PT is
// inferred: reflector.New[corev1.Pod](lw, store, cfg).
func New[T any, PT client.ObjectPtr[T]](lw ListerWatcher[T], store Store[T], cfg Config[T]) *Reflector[T] {
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("%T", new(T))
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = pager.DefaultPageSize
	}
	if cfg.InitialEventsTimeout <= 0 {
		cfg.InitialEventsTimeout = DefaultInitialEventsTimeout
	}
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = 800 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.ResetBackoffAfter <= 0 {
		cfg.ResetBackoffAfter = 2 * time.Minute
	}
	if cfg.MinWatchTimeout <= 0 {
		cfg.MinWatchTimeout = 5 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Reflector[T]{
		lw: lw, store: store, cfg: cfg,
		meta:    func(obj *T) metav1.Object { return PT(obj) },
		sleep:   sleep,
		syncedC: make(chan struct{}),
	}
	r.lastRV.Store("")
	if cfg.WatchErrorHandler == nil {
		r.cfg.WatchErrorHandler = r.logError
	}
	return r
}

// LastSyncResourceVersion is the resourceVersion the store is in sync with:
// the last list's, moved forward by every watch event and bookmark.
func (r *Reflector[T]) LastSyncResourceVersion() string { return r.lastRV.Load().(string) }

// HasSynced reports whether the first list has been stored.
func (r *Reflector[T]) HasSynced() bool { return r.synced.Load() }

// Synced is closed once the first list has been stored.
func (r *Reflector[T]) Synced() <-chan struct{} { return r.syncedC }

func (r *Reflector[T]) logError(err error) {
	if isExpired(err) || errors.Is(err, context.Canceled) {
		r.cfg.Logger.Debug("reflector: relisting", "reflector", r.cfg.Name, "err", err)
		return
	}
	r.cfg.Logger.Info("reflector: list/watch failed; retrying", "reflector", r.cfg.Name, "err", err)
}

// Run lists and watches until ctx is done. It returns ctx's error.
//
// Run steps the state machine and owns the retries: when a step ends in
// backingOff, Run reports the error, waits (jittered exponential backoff, or
// the server's Retry-After if longer) and resumes from the state to retry.
func (r *Reflector[T]) Run(ctx context.Context) error {
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(r.cfg.InitialBackoff),
		backoff.WithMaxInterval(r.cfg.MaxBackoff),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0),
	)
	var st state = listing[T]{rv: "0"} // the first list may be served from any state the server has
	if r.cfg.UseStreamingList {
		st = startStreaming{}
	}
	defer func() { closeState(st) }()
	var lastError time.Time
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, ok := st.(backingOff)
		if !ok {
			st = r.step(ctx, st)
			continue
		}
		r.cfg.WatchErrorHandler(b.err)
		if time.Since(lastError) > r.cfg.ResetBackoffAfter {
			bo.Reset() // healthy for a while: start the backoff over
		}
		lastError = time.Now()
		wait := bo.NextBackOff()
		if s, ok := client.RetryAfterSeconds(b.err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
		}
		if err := r.sleep(ctx, wait); err != nil {
			return err
		}
		st = b.retry
	}
}

// sleep waits d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// publish records rv as the resourceVersion the store is in sync with.
func (r *Reflector[T]) publish(rv string) { r.lastRV.Store(rv) }

func (r *Reflector[T]) setSynced(rv string) {
	r.publish(rv)
	r.synced.Store(true)
	r.once.Do(func() { close(r.syncedC) })
}

// transform prepares an object for the store: managedFields dropped if so
// configured, then the Transform.
func (r *Reflector[T]) transform(obj *T) (*T, error) {
	if r.cfg.DropManagedFields {
		r.meta(obj).SetManagedFields(nil)
	}
	if r.cfg.Transform == nil {
		return obj, nil
	}
	return r.cfg.Transform(obj)
}

// isExpired reports the 410 that means "relist": Gone, or Expired.
func isExpired(err error) bool { return client.IsResourceExpired(err) || client.IsGone(err) }

// DropManagedFields is a Transform that removes metadata.managedFields, which
// can be half of an object's size and which controllers rarely read.
// Config.DropManagedFields does the same. PT is inferred:
// reflector.DropManagedFields[corev1.Pod].
func DropManagedFields[T any, PT client.ObjectPtr[T]](obj *T) (*T, error) {
	PT(obj).SetManagedFields(nil)
	return obj, nil
}
