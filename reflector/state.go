package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/pager"
)

// state is where the reflector stands. Each state holds the data the next
// step needs; step moves from one to the next (see the package comment for
// the diagram).
type state interface{ stateName() string }

// listing: list the whole collection at rv ("0": any cached state; "": the
// latest), one page per step, and replace the store's contents with it at
// the last page. pages is the list under way, holding the continue token of
// the next page (nil before the first page is asked for); its goroutine
// fetches and decodes the next page while a step transforms the current one.
// items are the transformed objects of the pages taken so far. When a
// continue token expires, the pager lists everything again in one page at
// the latest state, and the state after that page holds its items only.
type listing[T any] struct {
	rv    string
	pages *pager.Pages[T]
	items []*T
}

// startStreaming: open a watch with sendInitialEvents, to list by streaming.
type startStreaming struct{}

// streaming: a sendInitialEvents watch is delivering the initial events;
// items are the objects received so far, stored in one Replace when the
// bookmark that ends them comes. idle fires when the server has been silent
// for InitialEventsTimeout.
type streaming[T any] struct {
	w     client.Watcher[T]
	items []*T
	idle  *time.Timer
}

// startWatch: open a watch from rv. stream says how to relist after a 410:
// by streaming (true) or by paged lists.
type startWatch struct {
	rv     string
	stream bool
}

// watching: following w's changes; rv is the last event's or bookmark's.
type watching[T any] struct {
	w      client.Watcher[T]
	rv     string
	stream bool
}

// backingOff: a step failed with err; Run reports it, waits, and resumes
// from retry.
type backingOff struct {
	err   error
	retry state
}

func (listing[T]) stateName() string     { return "listing" }
func (startStreaming) stateName() string { return "startStreaming" }
func (*streaming[T]) stateName() string  { return "streaming" }
func (startWatch) stateName() string     { return "startWatch" }
func (*watching[T]) stateName() string   { return "watching" }
func (backingOff) stateName() string     { return "backingOff" }

// closeState releases what st holds open (its watch, or its list's pages).
func closeState(st state) {
	switch s := st.(type) {
	case interface{ close() }:
		s.close()
	case backingOff:
		closeState(s.retry)
	}
}

func (s *streaming[T]) close() {
	s.idle.Stop()
	s.w.Stop()
}

func (s *watching[T]) close() { s.w.Stop() }

func (s listing[T]) close() {
	if s.pages != nil {
		s.pages.Close()
	}
}

// step takes one step from st: at most one request (a page of a list, or
// opening a watch) or one watch event, the store changes it makes, and the
// state it leads to. It never sleeps: a failure leads to backingOff, which
// Run waits out.
func (r *Reflector[T]) step(ctx context.Context, st state) state {
	switch s := st.(type) {
	case listing[T]:
		return r.list(ctx, s)
	case startStreaming:
		return r.startStreaming(ctx)
	case *streaming[T]:
		return r.streamInitial(ctx, s)
	case startWatch:
		return r.startWatch(ctx, s)
	case *watching[T]:
		return r.watchEvent(ctx, s)
	}
	panic(fmt.Sprintf("reflector: step from %s", st.stateName()))
}

// relist is where a 410 during a watch leads: a new list of the latest state.
func relist[T any](stream bool) state {
	if stream {
		return startStreaming{}
	}
	return listing[T]{rv: ""}
}

// list takes one page of the list at s.rv (asking for the list on its first
// step) and adds its items to those gathered; the last page replaces the
// store's contents with them. The page of the full list that follows an
// expired continue token starts the items afresh.
func (r *Reflector[T]) list(ctx context.Context, s listing[T]) state {
	if s.pages == nil {
		opts := r.cfg.ListOptions
		opts.ResourceVersion = s.rv
		opts.ResourceVersionMatch = ""
		if s.rv != "" && s.rv != "0" {
			opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
		}
		// A continue token that expires leads to one full list.
		p := pager.New(r.lw.ListEach, pager.Config{PageSize: r.cfg.PageSize, FullListOnExpired: true})
		s.pages = p.Pages(ctx, opts)
	}
	pg, err := s.pages.Next(ctx)
	if err == nil && len(pg.Skipped) > 0 {
		// Objects that do not decode are reported and left out; the rest of
		// the list is stored, so one bad object cannot keep the cache empty.
		r.cfg.WatchErrorHandler(&codec.ItemErrors{Items: pg.Skipped})
	}
	items := s.items
	if pg.Restart {
		items = nil // the earlier pages' snapshot is gone; this page holds everything
	}
	for _, obj := range pg.Items {
		if obj, err = r.transform(obj); err != nil {
			break
		}
		items = append(items, obj)
	}
	if err != nil {
		s.pages.Close()
		if s.rv == "0" && (isExpired(err) || client.IsTooLargeResourceVersion(err)) {
			// The server cannot serve "any": read the latest, at once.
			r.cfg.WatchErrorHandler(err)
			return listing[T]{rv: ""}
		}
		return backingOff{err: err, retry: listing[T]{rv: s.rv}}
	}
	if !pg.Last() {
		return listing[T]{rv: s.rv, pages: s.pages, items: items}
	}
	s.pages.Close()
	rv := pg.Meta.ResourceVersion
	if err := r.store.Replace(items, rv); err != nil {
		return backingOff{err: fmt.Errorf("reflector: storing the list: %w", err), retry: listing[T]{rv: s.rv}}
	}
	r.listed(len(items), rv)
	return startWatch{rv: rv}
}

func (r *Reflector[T]) watchTimeout() *int64 {
	min := int64(r.cfg.MinWatchTimeout / time.Second)
	if min < 1 {
		min = 1
	}
	s := min + rand.Int64N(min)
	return &s
}

// startStreaming opens the watch of a streaming list. A server that refuses
// sendInitialEvents (400, 422) sends the reflector to paged lists.
func (r *Reflector[T]) startStreaming(ctx context.Context) state {
	opts := r.cfg.ListOptions
	opts.ResourceVersion = ""
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	opts.AllowWatchBookmarks = true
	send := true
	opts.SendInitialEvents = &send
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.lw.Watch(ctx, opts)
	switch {
	case client.IsInvalid(err) || client.IsBadRequest(err):
		r.cfg.Logger.Info("reflector: the server does not support streaming lists; listing instead", "reflector", r.cfg.Name, "err", err)
		return listing[T]{rv: "0"}
	case err != nil:
		return backingOff{err: err, retry: startStreaming{}}
	}
	r.watched()
	return &streaming[T]{w: w, idle: time.NewTimer(r.cfg.InitialEventsTimeout)}
}

// streamInitial takes one event of the initial events: an object is added
// to the items; the bookmark that ends them replaces the store's contents
// with the items, and the same watch goes on with the changes.
func (r *Reflector[T]) streamInitial(ctx context.Context, s *streaming[T]) state {
	var ev client.Event[T]
	var ok bool
	select {
	case <-ctx.Done():
		s.close()
		return backingOff{err: ctx.Err(), retry: startStreaming{}}
	case <-s.idle.C:
		s.close()
		r.cfg.Logger.Info("reflector: no end of the initial events; the server ignores sendInitialEvents, listing instead",
			"reflector", r.cfg.Name, "after", r.cfg.InitialEventsTimeout, "received", len(s.items))
		return listing[T]{rv: "0"}
	case ev, ok = <-s.w.ResultChan():
	}
	s.idle.Reset(r.cfg.InitialEventsTimeout)
	switch {
	case !ok:
		s.close()
		return backingOff{err: errors.New("reflector: the streaming list ended before its initial events were complete"), retry: startStreaming{}}
	case ev.Type == client.EventError:
		s.close()
		return backingOff{err: ev.Err, retry: startStreaming{}}
	case ev.Err != nil:
		// One object that does not decode is reported and skipped.
		r.cfg.WatchErrorHandler(ev.Err)
		return s
	case ev.Object == nil:
		return s
	case ev.Type == client.EventBookmark:
		m := r.meta(ev.Object)
		if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
			return s
		}
		rv := m.GetResourceVersion()
		if err := r.store.Replace(s.items, rv); err != nil {
			s.close()
			return backingOff{err: fmt.Errorf("reflector: storing the list: %w", err), retry: startStreaming{}}
		}
		s.idle.Stop()
		r.listed(len(s.items), rv)
		return &watching[T]{w: s.w, rv: rv, stream: true}
	case ev.Type != client.EventAdded:
		// A change before the end of the initial events: the server (or a
		// proxy) dropped sendInitialEvents and this is a plain watch.
		s.close()
		r.cfg.Logger.Info("reflector: a change event during the initial events; the server ignores sendInitialEvents, listing instead",
			"reflector", r.cfg.Name, "type", ev.Type)
		return listing[T]{rv: "0"}
	}
	obj, err := r.transform(ev.Object)
	if err != nil {
		r.cfg.Logger.Error("reflector: transform failed; skipping the object", "reflector", r.cfg.Name, "err", err)
		return s
	}
	s.items = append(s.items, obj)
	return s
}

// startWatch opens a watch from s.rv, with bookmarks.
func (r *Reflector[T]) startWatch(ctx context.Context, s startWatch) state {
	opts := r.cfg.ListOptions
	opts.ResourceVersion = s.rv
	opts.ResourceVersionMatch = ""
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.lw.Watch(ctx, opts)
	switch {
	case isExpired(err):
		r.cfg.WatchErrorHandler(err)
		return relist[T](s.stream) // at once, as client-go does
	case err != nil:
		return backingOff{err: err, retry: s}
	}
	r.watched()
	return &watching[T]{w: w, rv: s.rv, stream: s.stream}
}

// watchEvent applies one watch event to the store; events and bookmarks move
// the resourceVersion the next watch starts from.
func (r *Reflector[T]) watchEvent(ctx context.Context, s *watching[T]) state {
	var ev client.Event[T]
	var ok bool
	select {
	case <-ctx.Done():
		s.close()
		return backingOff{err: ctx.Err(), retry: startWatch{rv: s.rv, stream: s.stream}}
	case ev, ok = <-s.w.ResultChan():
	}
	switch {
	case !ok:
		// A clean end (the server's timeout): watch again from rv, at once.
		s.close()
		return startWatch{rv: s.rv, stream: s.stream}
	case ev.Type == client.EventError:
		s.close()
		if isExpired(ev.Err) {
			r.cfg.WatchErrorHandler(ev.Err)
			return relist[T](s.stream)
		}
		// A broken stream: watch again from rv, after a backoff.
		return backingOff{err: ev.Err, retry: startWatch{rv: s.rv, stream: s.stream}}
	case ev.Err != nil:
		// One object that does not decode is reported and skipped; the
		// watch moves past it so it cannot stall every later change.
		r.cfg.WatchErrorHandler(ev.Err)
		var de *client.DecodeError
		if errors.As(ev.Err, &de) && de.ResourceVersion != "" {
			s.rv = de.ResourceVersion
			r.publish(s.rv)
		}
		return s
	case ev.Object == nil:
		return s
	}
	rv := r.meta(ev.Object).GetResourceVersion()
	if ev.Type != client.EventBookmark {
		obj, err := r.transform(ev.Object)
		if err != nil {
			r.cfg.Logger.Error("reflector: transform failed; skipping the object", "reflector", r.cfg.Name, "err", err)
			return s
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
	}
	if rv != "" {
		s.rv = rv
		r.publish(rv)
	}
	return s
}
