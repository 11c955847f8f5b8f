// Package reflector keeps a store in sync with a collection on the server: it
// lists, then watches from the list's resourceVersion, and starts over when it
// must.
//
// # The loop
//
// A Reflector is a small state machine, one step at a time:
//
//	needList ──list (paged) or streaming list──▶ watching(rv)
//	watching ──events, bookmarks move rv; timeout or dropped stream──▶ watching(rv)
//	watching ──410 Gone / Expired──▶ needList
//	any error ──backoff──▶ the same state again
//
// The initial list asks for resourceVersion "0" (any state the server has
// cached, cheapest for it) and falls back to "" (the latest) when the server
// cannot serve it. After a 410 the relist reads the latest state. Items are
// decoded one at a time as the list streams in and handed to the store in one
// atomic Replace, so the store never shows a half-listed collection, and no
// decoded list is held beside the cache.
//
// With UseStreamingList the reflector instead opens one watch with
// sendInitialEvents=true: the server sends every object as ADDED, then a
// BOOKMARK marking the end of the initial events, then changes. If the server
// does not support it the reflector falls back to list then watch.
//
// # Faults
//
// Every error is retried with jittered exponential backoff (0.8 s doubling to a
// 30 s cap, reset after 2 minutes without errors, as client-go); a 429's
// Retry-After is honoured. Watches ask for a random timeout between 5 and 10
// minutes so that many reflectors do not reconnect in lockstep; a watch that
// ends by timeout is re-opened from the last resourceVersion without a relist.
// After any sequence of faults the store converges to the server's state.
package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
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
}

// Reflector mirrors one collection into a Store. Run it with Run; it is safe
// to read its state from other goroutines.
type Reflector[T any] struct {
	lw    ListerWatcher[T]
	store Store[T]
	cfg   Config[T]

	lastRV  atomic.Value // string
	synced  atomic.Bool
	syncedC chan struct{}
	once    sync.Once
}

// New returns a reflector that keeps store in sync with what lw lists.
func New[T any](lw ListerWatcher[T], store Store[T], cfg Config[T]) *Reflector[T] {
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("%T", new(T))
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = pager.DefaultPageSize
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
	r := &Reflector[T]{lw: lw, store: store, cfg: cfg, syncedC: make(chan struct{})}
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
	if client.IsResourceExpired(err) || client.IsGone(err) || errors.Is(err, context.Canceled) {
		r.cfg.Logger.Debug("reflector: relisting", "reflector", r.cfg.Name, "err", err)
		return
	}
	r.cfg.Logger.Info("reflector: list/watch failed; retrying", "reflector", r.cfg.Name, "err", err)
}

// state is where the loop stands.
type state int

const (
	needList state = iota
	watching
)

// Run lists and watches until ctx is done. It returns ctx's error.
func (r *Reflector[T]) Run(ctx context.Context) error {
	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(r.cfg.InitialBackoff),
		backoff.WithMaxInterval(r.cfg.MaxBackoff),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0),
	)
	st := needList
	listRV := "0" // the first list may be served from any state the server has
	var lastError time.Time
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		switch st {
		case needList:
			if r.cfg.UseStreamingList {
				err = r.streamingList(ctx)
				if errors.Is(err, errStreamingUnsupported) {
					r.cfg.Logger.Info("reflector: the server does not support streaming lists; listing instead", "reflector", r.cfg.Name)
					r.cfg.UseStreamingList = false
					continue
				}
				if err == nil {
					st = watching
					continue // the streaming watch already ended; re-watch from lastRV
				}
			} else {
				err = r.list(ctx, listRV)
				if err == nil {
					st = watching
				} else if listRV == "0" && (client.IsResourceExpired(err) || client.IsGone(err) || client.IsTooLargeResourceVersion(err)) {
					listRV = "" // the server cannot serve "any": read the latest
					continue
				}
			}
		case watching:
			err = r.watch(ctx, r.LastSyncResourceVersion())
			if err == nil {
				continue // a clean end (timeout): re-watch from lastRV at once
			}
			if client.IsResourceExpired(err) || client.IsGone(err) {
				st, listRV = needList, ""
				r.cfg.WatchErrorHandler(err)
				continue // relist at once, as client-go does
			}
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.cfg.WatchErrorHandler(err)
		if time.Since(lastError) > r.cfg.ResetBackoffAfter {
			bo.Reset() // healthy for a while: start the backoff over
		}
		lastError = time.Now()
		wait := bo.NextBackOff()
		if s, ok := client.RetryAfterSeconds(err); ok && time.Duration(s)*time.Second > wait {
			wait = time.Duration(s) * time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (r *Reflector[T]) transform(obj *T) (*T, error) {
	if r.cfg.DropManagedFields {
		// A ListerWatcher that ignores the decode options still gets them
		// dropped.
		if m, ok := any(obj).(metav1.Object); ok {
			m.SetManagedFields(nil)
		}
	}
	if r.cfg.Transform == nil {
		return obj, nil
	}
	return r.cfg.Transform(obj)
}

// list reads the whole collection at rv, page by page, and replaces the
// store's contents with it.
func (r *Reflector[T]) list(ctx context.Context, rv string) error {
	p := pager.New(r.lw.ListEach)
	p.PageSize = r.cfg.PageSize
	p.FullListOnExpired = true
	var items []*T
	p.OnRestart = func() { items = items[:0] }
	opts := r.cfg.ListOptions
	opts.ResourceVersion = rv
	opts.ResourceVersionMatch = ""
	if rv != "" && rv != "0" {
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	}
	meta, err := p.EachItem(ctx, opts, func(obj *T) error {
		obj, err := r.transform(obj)
		if err != nil {
			return err
		}
		items = append(items, obj)
		return nil
	})
	var skipped *codec.ItemErrors
	if errors.As(err, &skipped) {
		// Objects that do not decode are reported and left out; the rest of
		// the list is stored, so one bad object cannot keep the cache empty.
		r.cfg.WatchErrorHandler(err)
		err = nil
	}
	if err != nil {
		return err
	}
	if err := r.store.Replace(items, meta.ResourceVersion); err != nil {
		return fmt.Errorf("reflector: storing the list: %w", err)
	}
	r.setSynced(meta.ResourceVersion)
	return nil
}

func (r *Reflector[T]) setSynced(rv string) {
	r.lastRV.Store(rv)
	r.synced.Store(true)
	r.once.Do(func() { close(r.syncedC) })
}

func (r *Reflector[T]) watchTimeout() *int64 {
	min := int64(r.cfg.MinWatchTimeout / time.Second)
	if min < 1 {
		min = 1
	}
	s := min + rand.Int64N(min)
	return &s
}

// watch follows changes after rv until the watch ends. A clean end (the
// server's timeout) returns nil.
func (r *Reflector[T]) watch(ctx context.Context, rv string) error {
	opts := r.cfg.ListOptions
	opts.ResourceVersion = rv
	opts.ResourceVersionMatch = ""
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.lw.Watch(ctx, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	_, err = r.handleEvents(ctx, w, nil)
	return err
}

// errStreamingUnsupported means the server ignored or refused sendInitialEvents.
var errStreamingUnsupported = errors.New("reflector: streaming lists not supported")

// streamingList lists with a sendInitialEvents watch, replaces the store's
// contents at the end of the initial events, then follows changes on the same
// watch.
func (r *Reflector[T]) streamingList(ctx context.Context) error {
	opts := r.cfg.ListOptions
	opts.ResourceVersion = ""
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	opts.AllowWatchBookmarks = true
	send := true
	opts.SendInitialEvents = &send
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.lw.Watch(ctx, opts)
	if err != nil {
		if client.IsInvalid(err) || client.IsBadRequest(err) {
			return fmt.Errorf("%w: %v", errStreamingUnsupported, err)
		}
		return err
	}
	defer w.Stop()
	initial := []*T{}
	done, err := r.handleEvents(ctx, w, &initial)
	if err != nil {
		return err
	}
	if !done {
		// The stream ended before the initial events did: nothing was stored.
		return errors.New("reflector: the streaming list ended before its initial events were complete")
	}
	return nil
}

// handleEvents applies watch events to the store until the watch ends. When
// initial is not nil, ADDED events are gathered in it until the bookmark that
// ends the initial events, which replaces the store's contents; the result
// reports whether that bookmark came.
func (r *Reflector[T]) handleEvents(ctx context.Context, w client.Watcher[T], initial *[]*T) (bool, error) {
	gotInitial := initial == nil
	for {
		var ev client.Event[T]
		select {
		case <-ctx.Done():
			return gotInitial, ctx.Err()
		case e, ok := <-w.ResultChan():
			if !ok {
				return gotInitial, nil
			}
			ev = e
		}
		if ev.Type == client.EventError {
			return gotInitial, ev.Err
		}
		if ev.Err != nil {
			// One object that does not decode is reported and skipped; the
			// watch moves past it so it cannot stall every later change.
			r.cfg.WatchErrorHandler(ev.Err)
			var de *client.DecodeError
			if errors.As(ev.Err, &de) && de.ResourceVersion != "" && gotInitial {
				r.lastRV.Store(de.ResourceVersion)
			}
			continue
		}
		if ev.Object == nil {
			continue
		}
		rv := objectRV(ev.Object)
		if ev.Type == client.EventBookmark {
			if !gotInitial && isInitialEventsEnd(ev.Object) {
				if err := r.store.Replace(*initial, rv); err != nil {
					return false, fmt.Errorf("reflector: storing the list: %w", err)
				}
				*initial, gotInitial = nil, true
				r.setSynced(rv)
				continue
			}
			if gotInitial && rv != "" {
				r.lastRV.Store(rv)
			}
			continue
		}
		obj, err := r.transform(ev.Object)
		if err != nil {
			r.cfg.Logger.Error("reflector: transform failed; skipping the object", "reflector", r.cfg.Name, "err", err)
			continue
		}
		if !gotInitial {
			if ev.Type == client.EventAdded {
				*initial = append(*initial, obj)
				continue
			}
			return false, fmt.Errorf("%w: %s event during the initial events", errStreamingUnsupported, ev.Type)
		}
		switch ev.Type {
		case client.EventAdded:
			err = r.store.Add(obj)
		case client.EventModified:
			err = r.store.Update(obj)
		case client.EventDeleted:
			err = r.store.Delete(obj)
		}
		if err != nil {
			r.cfg.Logger.Error("reflector: store rejected an event", "reflector", r.cfg.Name, "type", ev.Type, "err", err)
		}
		if rv != "" {
			r.lastRV.Store(rv)
		}
	}
}

func objectRV[T any](obj *T) string {
	if m, ok := any(obj).(metav1.Object); ok {
		return m.GetResourceVersion()
	}
	return ""
}

func isInitialEventsEnd[T any](obj *T) bool {
	m, ok := any(obj).(metav1.Object)
	return ok && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// DropManagedFields is a Transform that removes metadata.managedFields, which
// can be half of an object's size and which controllers rarely read.
// Config.DropManagedFields does the same without decoding them at all.
func DropManagedFields[T any](obj *T) (*T, error) {
	if m, ok := any(obj).(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
