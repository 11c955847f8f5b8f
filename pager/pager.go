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
// Pages does the same a page at a time, for a caller that works page by
// page (the reflector takes one page per step): its Next returns a whole
// page while the goroutine the iterator owns fetches and decodes the next
// one, at most Config.PageBuffer items ahead. EachItem is built on it.
//
// # Items that do not decode
//
// An item that does not fit T is skipped by the decoder; the pager goes on
// with the following items and pages and returns a *codec.ItemErrors listing
// every skipped item once the list is complete (Pages gives each page's in
// Page.Skipped).
//
// # Expired continue tokens
//
// A continue token expires when the snapshot it points into is compacted
// (410 Expired). With Config.FullListOnExpired set, the pager then lists
// everything in one request at the latest state instead; Config.OnRestart, if
// set, is called first, because items already handed out will be handed out
// again. Pages marks that full list's page with Page.Restart instead.
package pager

import (
	"context"
	"errors"
	"fmt"
	"io"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
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
	// callback, or for Pages.Next, while the next page is fetched (default
	// PageSize, or 1 when unpaged).
	PageBuffer int
	// FullListOnExpired makes the pager fall back to one unpaged list at the
	// latest state when a continue token has expired (default false: the
	// 410 is returned).
	FullListOnExpired bool
	// OnRestart, if set, is called by List and EachItem before the items of
	// that fallback list are handed out, so the caller can drop what it
	// gathered from the earlier pages (default nil: nothing to drop). Pages
	// does not call it: it sets Page.Restart.
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
	var (
		items   []*T
		meta    metav1.ListMeta
		skipped []codec.ItemError
	)
	err := p.run(ctx, opts, func(m mark[T]) error {
		switch {
		case m.restart:
			items, skipped = items[:0], nil
			p.onRestart()
		case m.end:
			meta, skipped = m.meta, append(skipped, m.skipped...)
		default:
			items = append(items, m.obj)
		}
		return nil
	})
	if err == nil {
		err = itemErrors(skipped)
	}
	return items, meta, err
}

// EachItem calls fn with every item of the collection, in order, fetching the
// next page while fn works through the current one. An error from fn stops the
// list and is returned (ErrStop stops it without error). The returned ListMeta
// is the last page's.
func (p *Pager[T]) EachItem(ctx context.Context, opts metav1.ListOptions, fn func(*T) error) (metav1.ListMeta, error) {
	pages := p.Pages(ctx, opts)
	defer pages.Close()
	var (
		meta    metav1.ListMeta
		skipped []codec.ItemError
	)
	for {
		m, err := pages.recv(ctx)
		switch {
		case err == io.EOF:
			return meta, itemErrors(skipped)
		case err != nil:
			return meta, err
		case m.restart:
			skipped = nil
			p.onRestart()
		case m.end:
			meta, skipped = m.meta, append(skipped, m.skipped...)
		default:
			if err := fn(m.obj); err != nil {
				if errors.Is(err, ErrStop) {
					err = nil
				}
				return meta, err
			}
		}
	}
}

func (p *Pager[T]) onRestart() {
	if p.cfg.OnRestart != nil {
		p.cfg.OnRestart()
	}
}

func itemErrors(skipped []codec.ItemError) error {
	if len(skipped) == 0 {
		return nil
	}
	return &codec.ItemErrors{Items: skipped}
}

// Page is one page of a list, as Pages.Next returns it.
type Page[T any] struct {
	// Items are the page's objects, in order, as decoded.
	Items []*T
	// Meta is the page's metadata: Meta.Continue is the next page's token,
	// "" on the last page; Meta.ResourceVersion is the list's.
	Meta metav1.ListMeta
	// Restart is set on the one page of the full list that follows an
	// expired continue token (Config.FullListOnExpired): it holds the whole
	// collection again, at the latest state, so whatever the earlier pages
	// gave must be dropped.
	Restart bool
	// Skipped lists the page's items that did not decode (see the package
	// comment); Items leaves them out.
	Skipped []codec.ItemError
}

// Last reports whether pg is the list's last page.
func (pg Page[T]) Last() bool { return pg.Meta.Continue == "" }

// Pages reads one list a page at a time: Next returns each page in turn while
// one goroutine, which Pages owns, already fetches and decodes the following
// page, at most Config.PageBuffer items ahead of Next. Config.OnRestart is not
// called: Page.Restart says the same. Close stops the goroutine; call it
// whenever the list is abandoned (after the last page or an error, it only
// releases the context).
type Pages[T any] struct {
	marks  chan mark[T]
	cancel context.CancelFunc
	done   chan struct{}
	err    error // why marks was closed (nil: the list is complete); read after done
}

// mark is what the fetching goroutine hands on: an item, the end of a page,
// or a restart before the full list after an expired continue token.
type mark[T any] struct {
	obj     *T
	end     bool
	meta    metav1.ListMeta
	skipped []codec.ItemError
	restart bool
}

// Pages starts listing the collection as opts says (see Pages). ctx bounds
// the whole list; the caller must Close the result.
func (p *Pager[T]) Pages(ctx context.Context, opts metav1.ListOptions) *Pages[T] {
	buf := p.cfg.PageBuffer
	if buf <= 0 {
		buf = int(max(p.pageSize(), 1))
	}
	ctx, cancel := context.WithCancel(ctx)
	it := &Pages[T]{marks: make(chan mark[T], buf), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(it.done)
		defer close(it.marks)
		it.err = p.run(ctx, opts, func(m mark[T]) error {
			select {
			case it.marks <- m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return it
}

// recv returns the next mark; io.EOF once the list is complete, or the error
// that ended it.
func (it *Pages[T]) recv(ctx context.Context) (mark[T], error) {
	if err := ctx.Err(); err != nil {
		return mark[T]{}, err
	}
	select {
	case m, ok := <-it.marks:
		if ok {
			return m, nil
		}
		<-it.done
		if it.err != nil {
			return m, it.err
		}
		return m, io.EOF
	case <-ctx.Done():
		return mark[T]{}, ctx.Err()
	}
}

// Next returns the next page. It returns io.EOF after the last page, and the
// error that ended the list if it failed (a failed list ends there: list
// again from the start).
func (it *Pages[T]) Next(ctx context.Context) (Page[T], error) {
	var pg Page[T]
	for {
		m, err := it.recv(ctx)
		switch {
		case err != nil:
			return Page[T]{}, err
		case m.restart:
			// Items of a page cut short by the expired token are dropped
			// with the rest.
			pg = Page[T]{Restart: true}
		case m.end:
			pg.Meta, pg.Skipped = m.meta, m.skipped
			return pg, nil
		default:
			pg.Items = append(pg.Items, m.obj)
		}
	}
}

// Close stops the goroutine fetching pages and waits for it to end. It may
// be called more than once.
func (it *Pages[T]) Close() {
	it.cancel()
	<-it.done
}

// run is the page loop. It hands every item to send as its page is decoded,
// then the end of the page; after an expired continue token (with
// FullListOnExpired) a restart, then the items of one full list. An error
// from send ends the list.
func (p *Pager[T]) run(ctx context.Context, opts metav1.ListOptions, send func(mark[T]) error) error {
	opts.Limit = p.pageSize()
	first := opts
	restarted := false
	for {
		meta, err := p.list(ctx, opts, func(it *T) error { return send(mark[T]{obj: it}) })
		var ie *codec.ItemErrors
		var skipped []codec.ItemError
		if errors.As(err, &ie) {
			// The page is complete but for items that do not fit T: note
			// them and go on.
			skipped, err = ie.Items, nil
		}
		switch {
		case err != nil && opts.Continue != "" && p.cfg.FullListOnExpired && client.IsResourceExpired(err):
			// The snapshot of the first page is gone: list everything in
			// one request, at the latest state.
			if err := send(mark[T]{restart: true}); err != nil {
				return err
			}
			restarted = true
			opts = first
			opts.Limit = 0
			opts.Continue = ""
			opts.ResourceVersion = ""
			opts.ResourceVersionMatch = ""
			continue
		case err != nil && restarted:
			return fmt.Errorf("pager: full list after an expired continue token: %w", err)
		case err != nil:
			return err
		case meta.Continue != "" && opts.Limit == 0:
			return fmt.Errorf("pager: the server returned a continue token for an unpaged list")
		}
		if err := send(mark[T]{end: true, meta: meta, skipped: skipped}); err != nil {
			return err
		}
		if meta.Continue == "" {
			return nil
		}
		// Continuation: only the token. The server serves the remaining pages
		// at the first page's resourceVersion.
		opts.Continue = meta.Continue
		opts.ResourceVersion = ""
		opts.ResourceVersionMatch = ""
	}
}

// ErrStop can be returned by an EachItem callback to end the list early without
// an error.
var ErrStop = errors.New("pager: stop")
