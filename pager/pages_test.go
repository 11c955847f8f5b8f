package pager_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/pager"
	"go.uber.org/goleak"
)

// endless serves pages of size opts.Limit forever, counting the items it has
// handed to the pager (including one the pager is still taking).
func endless(served *atomic.Int64) pager.ListFunc[corev1.ConfigMap] {
	return func(ctx context.Context, opts metav1.ListOptions, each func(*corev1.ConfigMap) error) (metav1.ListMeta, error) {
		start := 0
		if opts.Continue != "" {
			fmt.Sscan(opts.Continue, &start)
		}
		for i := range int(opts.Limit) {
			served.Add(1)
			if err := each(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", start+i)}}); err != nil {
				return metav1.ListMeta{}, err
			}
		}
		return metav1.ListMeta{ResourceVersion: "1", Continue: fmt.Sprint(start + int(opts.Limit))}, nil
	}
}

// TestPages: Next returns the pages in order with their metadata, the last
// one says so, and io.EOF follows; the next page is fetched before Next asks
// for it.
func TestPages(t *testing.T) {
	e := newEnv(t, 25)
	rec := &recorder{}
	second := make(chan struct{}) // closed when the second page is requested
	var once sync.Once
	list := rec.wrap(e.cms.ListEach)
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions, each func(*corev1.ConfigMap) error) (metav1.ListMeta, error) {
		if opts.Continue != "" {
			once.Do(func() { close(second) })
		}
		return list(ctx, opts, each)
	}, pager.Config{PageSize: 10})
	ctx := context.Background()
	pages := p.Pages(ctx, metav1.ListOptions{ResourceVersion: "0"})
	defer pages.Close()
	var got [][]string
	for {
		pg, err := pages.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if pg.Restart || pg.Meta.ResourceVersion == "" || pg.Last() != (len(got) == 2) {
			t.Errorf("page %d: restart %v, meta %+v, last %v", len(got), pg.Restart, pg.Meta, pg.Last())
		}
		got = append(got, names(pg.Items))
		if len(got) == 1 {
			// The second page is requested while the caller holds the first.
			select {
			case <-second:
			case <-time.After(10 * time.Second):
				t.Fatal("the second page was not fetched ahead")
			}
		}
	}
	if len(got) != 3 || len(got[0]) != 10 || len(got[1]) != 10 || len(got[2]) != 5 || got[2][4] != "cm-0024" {
		t.Fatalf("pages %v", got)
	}
	if _, err := pages.Next(ctx); err != io.EOF {
		t.Errorf("Next after the last page: %v, want io.EOF", err)
	}
	if rec.opts[0].ResourceVersion != "0" || rec.opts[1].ResourceVersion != "" || rec.opts[1].Continue == "" {
		t.Errorf("requests %+v", rec.opts)
	}
}

// TestPagesBounded: while the caller holds a page, the goroutine decodes at
// most PageBuffer items of the next one (plus the one it is handing over).
func TestPagesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int64
		p := pager.New(endless(&served), pager.Config{PageSize: 10, PageBuffer: 3})
		ctx := context.Background()
		pages := p.Pages(ctx, metav1.ListOptions{})
		defer pages.Close()
		for range 2 {
			if _, err := pages.Next(ctx); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // the goroutine is blocked on the full buffer
		if n := served.Load(); n != 20+3+1 {
			t.Errorf("%d items decoded after 2 pages were taken, want 20 + PageBuffer 3 + 1", n)
		}
	})
}

// TestPagesCloseMidList: Close stops the goroutine while it is fetching
// ahead; nothing leaks.
func TestPagesCloseMidList(t *testing.T) {
	defer goleak.VerifyNone(t)
	var served atomic.Int64
	p := pager.New(endless(&served), pager.Config{PageSize: 10, PageBuffer: 2})
	ctx := context.Background()
	pages := p.Pages(ctx, metav1.ListOptions{})
	if _, err := pages.Next(ctx); err != nil {
		t.Fatal(err)
	}
	pages.Close()
	pages.Close()
	if _, err := pages.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next after Close: %v, want context.Canceled", err)
	}
	// A caller's cancelled context ends Next too.
	cctx, cancel := context.WithCancel(ctx)
	pages = p.Pages(cctx, metav1.ListOptions{})
	defer pages.Close()
	cancel()
	if _, err := pages.Next(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestPagesExpiredContinue: the continue token of the second page expires;
// the full list that follows is one page marked Restart, and a page cut short
// by the expiry gives nothing.
func TestPagesExpiredContinue(t *testing.T) {
	expired := client.NewStatusError(&metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired})
	var calls []metav1.ListOptions
	list := func(ctx context.Context, opts metav1.ListOptions, each func(*corev1.ConfigMap) error) (metav1.ListMeta, error) {
		calls = append(calls, opts)
		cm := func(name string) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		}
		switch opts.Continue {
		case "":
			if opts.Limit == 0 {
				for _, n := range []string{"b", "c", "d"} {
					each(cm(n))
				}
				return metav1.ListMeta{ResourceVersion: "9"}, nil
			}
			each(cm("a"))
			each(cm("b"))
			return metav1.ListMeta{ResourceVersion: "3", Continue: "page-2"}, nil
		case "page-2":
			each(cm("x")) // a page that breaks off
			return metav1.ListMeta{}, expired
		}
		return metav1.ListMeta{}, errors.New("unexpected")
	}
	p := pager.New(list, pager.Config{PageSize: 2, FullListOnExpired: true, OnRestart: func() { t.Error("Pages called OnRestart") }})
	ctx := context.Background()
	pages := p.Pages(ctx, metav1.ListOptions{ResourceVersion: "0"})
	defer pages.Close()
	first, err := pages.Next(ctx)
	if err != nil || first.Restart || first.Last() || !slices.Equal(names(first.Items), []string{"a", "b"}) {
		t.Fatalf("first page %v (restart %v, last %v), %v", names(first.Items), first.Restart, first.Last(), err)
	}
	full, err := pages.Next(ctx)
	if err != nil || !full.Restart || !full.Last() || full.Meta.ResourceVersion != "9" || !slices.Equal(names(full.Items), []string{"b", "c", "d"}) {
		t.Fatalf("full list %v (restart %v, last %v, meta %+v), %v", names(full.Items), full.Restart, full.Last(), full.Meta, err)
	}
	if _, err := pages.Next(ctx); err != io.EOF {
		t.Errorf("after the full list: %v, want io.EOF", err)
	}
	if last := calls[len(calls)-1]; len(calls) != 3 || last.Limit != 0 || last.ResourceVersion != "" {
		t.Errorf("requests %+v", calls)
	}

	// Without the fallback the 410 ends the list.
	p = pager.New(list, pager.Config{PageSize: 2})
	pages = p.Pages(ctx, metav1.ListOptions{})
	defer pages.Close()
	if _, err := pages.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pages.Next(ctx); !client.IsResourceExpired(err) {
		t.Errorf("without FullListOnExpired: %v, want the 410", err)
	}
}
