// Command kapi-bench-side-kapi is the kapi half of kapi-bench: it runs one
// shared informer (informer.NewFactory + informer.For[T], or
// informer.ForMetadata[T] with -metadata) with the options
// the harness gives, measures it, and prints a sidekit.Result. It links kapi
// only; the harness starts it as a child process so that its heap and peak
// RSS are its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/bench/internal/sidekit"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
)

const side = "kapi"

func main() {
	var a sidekit.Args
	a.Register(flag.CommandLine)
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), a.Timeout)
	defer cancel()
	var (
		res *sidekit.Result
		err error
	)
	switch {
	case a.Metadata && a.Resource == "pods":
		res, err = run(ctx, &a, informer.ForMetadata[corev1.Pod])
	case a.Metadata && a.Resource == "configmaps":
		res, err = run(ctx, &a, informer.ForMetadata[corev1.ConfigMap])
	case a.Resource == "pods":
		res, err = run(ctx, &a, informer.For[corev1.Pod])
	case a.Resource == "configmaps":
		res, err = run(ctx, &a, informer.For[corev1.ConfigMap])
	default:
		err = fmt.Errorf("unknown resource %q", a.Resource)
	}
	if err != nil {
		if res == nil {
			sidekit.Fail(side, err)
		}
		res.Error = err.Error()
	}
	sidekit.Emit(os.Stdout, res)
}

func config(a *sidekit.Args) (*client.Config, error) {
	var cfg *client.Config
	if a.Kubeconfig != "" {
		var err error
		if cfg, err = client.Load(client.LoadOptions{Kubeconfig: a.Kubeconfig}); err != nil {
			return nil, err
		}
	} else {
		cfg = &client.Config{Host: a.Server}
	}
	cfg.ContentType = a.MediaType()
	cfg.QPS = float32(a.QPS)
	cfg.Burst = a.Burst
	cfg.UserAgent = sidekit.UserAgentPrefix + side
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg, nil
}

// run measures the informer that inform makes from the factory.
func run[T any, PT client.ObjectPtr[T]](ctx context.Context, a *sidekit.Args, inform func(*informer.Factory) informer.Informer[T]) (*sidekit.Result, error) {
	cfg, err := config(a)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg)
	if err != nil {
		return nil, err
	}
	factory := informer.NewFactory(c, informer.FactoryConfig{
		Namespace:     a.Namespace,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		StreamingList: a.List == "stream",
		// kapi skips managedFields as it decodes (client-go's side drops
		// them with a transform after decoding, its only way).
		DropManagedFields: a.DropManagedFields,
		PageSize:          a.PageSize,
	})
	inf := inform(factory)

	res := &sidekit.Result{Side: side, Library: "github.com/kapi-dev/kapi (this tree)"}
	var adds atomic.Int64
	allAdded := make(chan struct{})
	var rec *sidekit.Recorder
	if a.Mode == "watch" {
		rec = sidekit.NewRecorder(a.Expect)
	}
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[T]{
		AddFunc: func(obj *T, _ bool) {
			if adds.Add(1) == int64(a.Expect) && a.Mode == "sync" {
				close(allAdded)
			}
		},
		UpdateFunc: func(_, obj *T) {
			if rec != nil {
				p := PT(obj)
				rec.Record(p.GetName(), p.GetResourceVersion())
			}
		},
	}); err != nil {
		return nil, err
	}

	res.HeapBase, _ = sidekit.LiveHeap()
	alloc0, mallocs0, gc0 := sidekit.Alloc()
	runCtx, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		factory.Shutdown()
	}()
	start := time.Now()
	factory.Start(runCtx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		return res, err
	}
	res.SyncMillis = ms(time.Since(start))
	alloc1, mallocs1, gc1 := sidekit.Alloc()
	res.TotalAlloc, res.Mallocs, res.GCs = alloc1-alloc0, mallocs1-mallocs0, gc1-gc0
	res.Objects = len(inf.Indexer().List())

	if a.Mode == "sync" {
		if a.Expect > 0 {
			select {
			case <-allAdded:
			case <-ctx.Done():
				return res, fmt.Errorf("handler saw %d of %d adds: %w", adds.Load(), a.Expect, ctx.Err())
			}
		}
		res.HandlerMs = ms(time.Since(start))
		res.HeapAfter, res.HeapInuse = sidekit.LiveHeap()
		res.PeakRSSKiB = sidekit.PeakRSSKiB()
		return res, nil
	}

	res.ReadyAt = time.Now().UnixNano()
	err = sidekit.WatchProtocol(rec, 30*time.Second)
	res.Events, res.Duplicates = rec.Events()
	res.PeakRSSKiB = sidekit.PeakRSSKiB()
	return res, err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
