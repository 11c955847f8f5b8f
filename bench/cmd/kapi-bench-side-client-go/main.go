// Command kapi-bench-side-client-go is the client-go half of kapi-bench: it
// runs one shared informer from a SharedInformerFactory over the typed
// clientset (or, with -metadata, from a metadatainformer factory over the
// metadata client, which always speaks protobuf), with the options the harness gives, measures it, and prints a
// sidekit.Result. It links client-go only; the harness starts it as a child
// process so that its heap and peak RSS are its own.
//
// Streaming lists are client-go's WatchListClient feature gate, read from
// the environment (KUBE_FEATURE_WatchListClient): this program sets it from
// -list before client-go reads it (-list paged sets it to false, since the
// gate is on by default from client-go 1.35).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/bench/internal/sidekit"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const side = "client-go"

func main() {
	var a sidekit.Args
	a.Register(flag.CommandLine)
	flag.Parse()
	if os.Getenv("KUBE_FEATURE_WatchListClient") == "" {
		// The harness sets it in the environment; this is for running the
		// program by hand.
		os.Setenv("KUBE_FEATURE_WatchListClient", fmt.Sprint(a.List == "stream"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.Timeout)
	defer cancel()
	res, err := run(ctx, &a)
	if err != nil {
		if res == nil {
			sidekit.Fail(side, err)
		}
		res.Error = err.Error()
	}
	sidekit.Emit(os.Stdout, res)
}

func config(a *sidekit.Args) (*rest.Config, error) {
	var cfg *rest.Config
	if a.Kubeconfig != "" {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", a.Kubeconfig); err != nil {
			return nil, err
		}
	} else {
		cfg = &rest.Config{Host: a.Server}
	}
	cfg.ContentType = a.MediaType()
	if a.Format == "protobuf" {
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	} else {
		cfg.AcceptContentTypes = "application/json"
	}
	cfg.QPS = float32(a.QPS) // negative: no rate limiter (as kapi)
	cfg.Burst = a.Burst
	cfg.UserAgent = sidekit.UserAgentPrefix + side
	return cfg, nil
}

func library() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/client-go" {
				return d.Path + " " + d.Version
			}
		}
	}
	return "k8s.io/client-go"
}

func run(ctx context.Context, a *sidekit.Args) (*sidekit.Result, error) {
	cfg, err := config(a)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if a.PageSize != 500 {
		// The reflector's pager lists in pages of pager.PageSize (500)
		// unless WatchListPageSize is set, which the factory does not expose.
		return nil, fmt.Errorf("client-go's informer lists in pages of 500; -page-size %d is not supported", a.PageSize)
	}
	var transform cache.TransformFunc
	if a.DropManagedFields {
		transform = func(obj any) (any, error) {
			if m, ok := obj.(metav1.Object); ok {
				m.SetManagedFields(nil)
			}
			return obj, nil
		}
	}
	var (
		factory interface {
			Start(stopCh <-chan struct{})
			Shutdown()
		}
		inf cache.SharedIndexInformer
	)
	if a.Resource != "pods" && a.Resource != "configmaps" {
		return nil, fmt.Errorf("unknown resource %q", a.Resource)
	}
	if a.Metadata {
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		mf := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, a.Namespace, nil)
		factory = mf
		inf = mf.ForResource(schema.GroupVersionResource{Version: "v1", Resource: a.Resource}).Informer()
		if transform != nil {
			if err := inf.SetTransform(transform); err != nil {
				return nil, err
			}
		}
	} else {
		opts := []informers.SharedInformerOption{informers.WithNamespace(a.Namespace)}
		if transform != nil {
			opts = append(opts, informers.WithTransform(transform))
		}
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
		factory = f
		if a.Resource == "pods" {
			inf = f.Core().V1().Pods().Informer()
		} else {
			inf = f.Core().V1().ConfigMaps().Informer()
		}
	}

	res := &sidekit.Result{Side: side, Library: library()}
	var adds atomic.Int64
	allAdded := make(chan struct{})
	var rec *sidekit.Recorder
	if a.Mode == "watch" {
		rec = sidekit.NewRecorder(a.Expect)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if adds.Add(1) == int64(a.Expect) && a.Mode == "sync" {
				close(allAdded)
			}
		},
		UpdateFunc: func(_, obj any) {
			if rec != nil {
				m := obj.(metav1.Object)
				rec.Record(m.GetName(), m.GetResourceVersion())
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
	factory.Start(runCtx.Done())
	// HasSyncedChecker is a channel: no 100 ms polling as WaitForCacheSync.
	select {
	case <-inf.HasSyncedChecker().Done():
	case <-ctx.Done():
		return res, fmt.Errorf("informer did not sync: %w", ctx.Err())
	}
	res.SyncMillis = ms(time.Since(start))
	alloc1, mallocs1, gc1 := sidekit.Alloc()
	res.TotalAlloc, res.Mallocs, res.GCs = alloc1-alloc0, mallocs1-mallocs0, gc1-gc0
	res.Objects = len(inf.GetIndexer().ListKeys())

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
