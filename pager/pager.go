// Package pager lists large collections in pages (limit/continue).
//
// # Pages
//
// A Pager, configured by one Config passed to New, asks for Config.PageSize
// items at a time (default 500, as client-go). The first request carries the caller's resourceVersion and resourceVersionMatch;
// continuation requests carry only the continue token, never a resourceVersion
// (a server answers 400 to both together). Every page of one list is served by
// the server from the same snapshot.
//
// # Streaming
//
// EachItem hands items to a callback one at a time while the next page is
// already being fetched: pages are decoded as they arrive, and at most
// Config.PageBuffer decoded items wait between the fetcher and the callback,
// so memory stays bounded however long the list.
//
// # Items that do not decode
//
// An item that does not fit T is skipped by the decoder; the pager goes on
// with the following items and pages and returns a *codec.ItemErrors listing
// every skipped item once the list is complete.
//
// # Expired continue tokens
//
// A continue token expires when the snapshot it points into is compacted
// (410 Expired). With Config.FullListOnExpired set, the pager then lists
// everything in one request at the latest state instead; Config.OnRestart, if
// set, is called first, because items already handed out will be handed out
// again.
package pager

import (
	"context"
	"errors"
	"fmt"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"golang.org/x/sync/errgroup"
)

// DefaultPageSize is the page size when Config.PageSize is zero.
const DefaultPageSize = 500

// ListFunc lists one page: it hands every item of the page to each, in order,
// and returns the page's metadata (with the continue token of the next page).
// client.For[T](c).ListEach and the dynamic client's ListEach have this shape.
type ListFunc[T any] func(ctx context.Context, opts metav1.ListOptions, each func(*T) error) (metav1.ListMeta, error)

// Config tunes a Pager. Every zero value is the documented default.
type Config struct {
	// PageSize is the limit of each request (default DefaultPageSize;
	// negative: one unpaged request).
	PageSize int64
	// PageBuffer bounds how many decoded items may wait for the EachItem
	// callback while the next page is fetched (default PageSize, or 1 when
	// unpaged).
	PageBuffer int
	// FullListOnExpired makes the pager fall back to one unpaged list at the
	// latest state when a continue token has expired (default false: the
	// 410 is returned).
	FullListOnExpired bool
	// OnRestart, if set, is called before the items of that fallback list
	// are handed out, so the caller can drop what it gathered from the
	// earlier pages (default nil: nothing to drop).
	OnRestart func()
}

// Pager lists a collection page by page, as its Config says.
type Pager[T any] struct {
	list ListFunc[T]
	cfg  Config
}

// New returns a pager over list.
func New[T any](list ListFunc[T], cfg Config) *Pager[T] { return &Pager[T]{list: list, cfg: cfg} }

func (p *Pager[T]) pageSize() int64 {
	switch {
	case p.cfg.PageSize == 0:
		return DefaultPageSize
	case p.cfg.PageSize < 0:
		return 0
	}
	return p.cfg.PageSize
}

// List gathers the whole collection. The returned ListMeta is the last page's
// (its resourceVersion is the list's).
func (p *Pager[T]) List(ctx context.Context, opts metav1.ListOptions) ([]*T, metav1.ListMeta, error) {
	var items []*T
	meta, err := p.each(ctx, opts, func() {
		items = items[:0]
		if p.cfg.OnRestart != nil {
			p.cfg.OnRestart()
		}
	}, func(it *T) error {
		items = append(items, it)
		return nil
	})
	return items, meta, err
}

// EachItem calls fn with every item of the collection, in order, fetching the
// next page while fn works through the current one. An error from fn stops the
// list and is returned (ErrStop stops it without error). The returned ListMeta
// is the last page's.
func (p *Pager[T]) EachItem(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error) {
	buf := p.cfg.PageBuffer
	if buf <= 0 {
		buf = int(max(p.pageSize(), 1))
	}
	type item struct {
		obj     *T
		restart bool
	}
	ch := make(chan item, buf)
	g, gctx := errgroup.WithContext(ctx)
	var meta metav1.ListMeta
	g.Go(func() error {
		defer close(ch)
		restart := func() {
			select {
			case ch <- item{restart: true}:
			case <-gctx.Done():
			}
		}
		var err error
		meta, err = p.each(gctx, opts, restart, func(it *T) error {
			select {
			case ch <- item{obj: it}:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		})
		return err
	})
	g.Go(func() error {
		for it := range ch {
			if it.restart {
				if p.cfg.OnRestart != nil {
					p.cfg.OnRestart()
				}
				continue
			}
			if err := fn(it.obj); err != nil {
				return err
			}
		}
		return nil
	})
	err := g.Wait()
	if errors.Is(err, ErrStop) {
		err = nil
	}
	return meta, err
}

// each runs the page loop, calling fn for every item as its page is decoded,
// and restart before the items of a full list after an expired token.
func (p *Pager[T]) each(ctx context.Context, opts metav1.ListOptions, restart func(), fn func(*T) error) (metav1.ListMeta, error) {
	opts.Limit = p.pageSize()
	first := opts
	var skipped []codec.ItemError
	for {
		meta, err := p.list(ctx, opts, fn)
		var ie *codec.ItemErrors
		if errors.As(err, &ie) {
			// The page is complete but for items that do not fit T: note
			// them and go on.
			skipped, err = append(skipped, ie.Items...), nil
		}
		if err != nil {
			if opts.Continue != "" && p.cfg.FullListOnExpired && client.IsResourceExpired(err) {
				return p.fullList(ctx, first, restart, fn)
			}
			return meta, err
		}
		if meta.Continue == "" {
			if len(skipped) > 0 {
				return meta, &codec.ItemErrors{Items: skipped}
			}
			return meta, nil
		}
		if opts.Limit == 0 {
			return meta, fmt.Errorf("pager: the server returned a continue token for an unpaged list")
		}
		// Continuation: only the token. The server serves the remaining pages
		// at the first page's resourceVersion.
		opts.Continue = meta.Continue
		opts.ResourceVersion = ""
		opts.ResourceVersionMatch = ""
	}
}

// fullList lists everything in one request after a continue token expired.
// The snapshot of the first page is gone, so it reads the latest state.
func (p *Pager[T]) fullList(ctx context.Context, first metav1.ListOptions, restart func(), fn func(*T) error) (metav1.ListMeta, error) {
	restart()
	first.Limit = 0
	first.Continue = ""
	first.ResourceVersion = ""
	first.ResourceVersionMatch = ""
	meta, err := p.list(ctx, first, fn)
	if err != nil {
		return meta, fmt.Errorf("pager: full list after an expired continue token: %w", err)
	}
	return meta, nil
}

// ErrStop can be returned by an EachItem callback to end the list early without
// an error.
var ErrStop = errors.New("pager: stop")
