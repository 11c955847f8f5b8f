package pager_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/pager"
)

type env struct {
	srv *apiserver.Server
	cms client.Resource[corev1.ConfigMap]
}

// newEnv starts a reference server holding n ConfigMaps in namespace "p".
func newEnv(t *testing.T, n int) *env {
	t.Helper()
	// The cases count the objects they create: no controller adds
	// kube-root-ca.crt to their namespace.
	srv, err := apiserver.New(apiserver.Config{DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	c, err := client.New(&client.Config{Host: ts.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.For[corev1.Namespace](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := client.For[corev1.ConfigMap](c).Namespace("p")
	for i := range n {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return &env{srv: srv, cms: cms}
}

// recorder wraps a ListFunc and records the options of every request.
type recorder struct {
	mu    sync.Mutex
	opts  []metav1.ListOptions
	after func(call int) // runs after a page is served
}

func (r *recorder) wrap(f pager.ListFunc[corev1.ConfigMap]) pager.ListFunc[corev1.ConfigMap] {
	return func(ctx context.Context, opts metav1.ListOptions, each func(*corev1.ConfigMap) error) (metav1.ListMeta, error) {
		r.mu.Lock()
		r.opts = append(r.opts, opts)
		call := len(r.opts)
		r.mu.Unlock()
		meta, err := f(ctx, opts, each)
		if err == nil && r.after != nil {
			r.after(call)
		}
		return meta, err
	}
}

func names(items []*corev1.ConfigMap) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Name
	}
	return out
}

func TestListPages(t *testing.T) {
	e := newEnv(t, 1203)
	rec := &recorder{}
	p := pager.New(rec.wrap(e.cms.ListEach), pager.Config{})
	items, meta, err := p.List(context.Background(), metav1.ListOptions{ResourceVersion: "0", LabelSelector: ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1203 || items[0].Name != "cm-0000" || items[1202].Name != "cm-1202" {
		t.Fatalf("got %d items", len(items))
	}
	if len(rec.opts) != 3 {
		t.Fatalf("%d requests, want 3 pages of 500", len(rec.opts))
	}
	if rec.opts[0].ResourceVersion != "0" || rec.opts[0].Limit != 500 {
		t.Errorf("first page options %+v", rec.opts[0])
	}
	for _, o := range rec.opts[1:] {
		if o.ResourceVersion != "" || o.ResourceVersionMatch != "" || o.Continue == "" {
			t.Errorf("a continuation must carry only the token: %+v", o)
		}
	}
	if meta.ResourceVersion == "" || meta.Continue != "" {
		t.Errorf("last page meta %+v", meta)
	}
}

func TestEachItemStreamsInOrder(t *testing.T) {
	e := newEnv(t, 120)
	p := pager.New(e.cms.ListEach, pager.Config{PageSize: 7, PageBuffer: 3})
	var got []string
	_, err := p.EachItem(context.Background(), metav1.ListOptions{}, func(cm *corev1.ConfigMap) error {
		got = append(got, cm.Name)
		return nil
	})
	if err != nil || len(got) != 120 {
		t.Fatalf("%d items, %v", len(got), err)
	}
	for i, n := range got {
		if n != fmt.Sprintf("cm-%04d", i) {
			t.Fatalf("item %d is %s", i, n)
		}
	}
	// Stopping early is not an error; any other callback error is returned.
	n := 0
	if _, err := p.EachItem(context.Background(), metav1.ListOptions{}, func(*corev1.ConfigMap) error {
		n++
		if n == 10 {
			return pager.ErrStop
		}
		return nil
	}); err != nil || n != 10 {
		t.Errorf("ErrStop: %d items, %v", n, err)
	}
	boom := errors.New("boom")
	if _, err := p.EachItem(context.Background(), metav1.ListOptions{}, func(*corev1.ConfigMap) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("callback error: %v", err)
	}
}

// compactAfterFirstPage writes and compacts the store after the first page, so
// the continue token of that page expires.
func compactAfterFirstPage(t *testing.T, e *env) func(int) {
	return func(call int) {
		if call != 1 {
			return
		}
		if _, err := e.cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
			t.Error(err)
		}
		mem := e.srv.Storage().(*storage.Memory)
		mem.Compact(mem.Revision())
	}
}

func TestExpiredContinue(t *testing.T) {
	t.Run("error without fallback", func(t *testing.T) {
		e := newEnv(t, 30)
		rec := &recorder{}
		rec.after = compactAfterFirstPage(t, e)
		p := pager.New(rec.wrap(e.cms.ListEach), pager.Config{PageSize: 10})
		_, _, err := p.List(context.Background(), metav1.ListOptions{})
		if !client.IsResourceExpired(err) {
			t.Fatalf("want 410 Expired, got %v", err)
		}
	})
	t.Run("full list fallback", func(t *testing.T) {
		e := newEnv(t, 30)
		rec := &recorder{}
		rec.after = compactAfterFirstPage(t, e)
		restarts := 0
		p := pager.New(rec.wrap(e.cms.ListEach), pager.Config{
			PageSize: 10, FullListOnExpired: true, OnRestart: func() { restarts++ },
		})
		items, _, err := p.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The fallback reads the latest state: the 30 objects and the late one,
		// each once.
		if len(items) != 31 || restarts != 1 {
			t.Fatalf("%d items %v, %d restarts", len(items), names(items), restarts)
		}
		last := rec.opts[len(rec.opts)-1]
		if last.Limit != 0 || last.Continue != "" || last.ResourceVersion != "" {
			t.Errorf("fallback options %+v", last)
		}
	})
	t.Run("EachItem fallback restarts", func(t *testing.T) {
		e := newEnv(t, 30)
		rec := &recorder{}
		rec.after = compactAfterFirstPage(t, e)
		var got []string
		p := pager.New(rec.wrap(e.cms.ListEach), pager.Config{
			PageSize: 10, FullListOnExpired: true, OnRestart: func() { got = got[:0] },
		})
		if _, err := p.EachItem(context.Background(), metav1.ListOptions{}, func(cm *corev1.ConfigMap) error {
			got = append(got, cm.Name)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 31 {
			t.Fatalf("%d items after the restart: %v", len(got), got)
		}
	})
}

func TestCancel(t *testing.T) {
	e := newEnv(t, 50)
	p := pager.New(e.cms.ListEach, pager.Config{PageSize: 5})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := p.EachItem(ctx, metav1.ListOptions{}, func(*corev1.ConfigMap) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v after %d items", err, n)
	}
}
