package informer_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/informer"
)

// cacheHeapPod is benchPod (a pod captured from a real server, with
// managedFields, status, probes and volumes) with two sidecar containers
// beside its own, each with environment variables, and an IP of its own —
// in its status and in the kubelet's managedFields, so that pods do not all
// share one managedFields set, as they do not on a real cluster.
func cacheHeapPod(i int) *corev1.Pod {
	p := benchPod(i)
	const capturedIP = "10.244.0.7"
	ip := fmt.Sprintf("10.%d.%d.%d", 100+i/65536, i/256%256, i%256)
	for j := range p.ManagedFields {
		if fv := p.ManagedFields[j].FieldsV1; fv != nil {
			fv.Raw = bytes.ReplaceAll(fv.Raw, []byte(capturedIP), []byte(ip))
		}
	}
	p.Status.PodIP = ip
	for j := range p.Status.PodIPs {
		p.Status.PodIPs[j].IP = ip
	}
	app := p.Spec.Containers[0]
	for j := 1; j <= 2; j++ {
		sc := *app.DeepCopy()
		sc.Name = fmt.Sprintf("sidecar-%d", j)
		for k := range 5 {
			sc.Env = append(sc.Env, corev1.EnvVar{Name: fmt.Sprintf("SIDECAR_SETTING_%d", k), Value: fmt.Sprintf("value-%d-%d", j, k)})
		}
		p.Spec.Containers = append(p.Spec.Containers, sc)
	}
	return p
}

// cacheHeap syncs a factory's informer of the pods of namespace "bench",
// full or metadata-only, and returns the live heap (after a forced GC) it
// keeps per cached pod.
func cacheHeap(b *testing.B, f *informer.Factory, n int, metadata bool) float64 {
	before := liveHeap()
	var cached func() int
	if metadata {
		inf := informer.ForMetadata[corev1.Pod](f)
		cached = inf.Indexer().Len
	} else {
		inf := informer.For[corev1.Pod](f)
		cached = inf.Indexer().Len
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		b.Fatal(err)
	}
	if got := cached(); got != n {
		b.Fatalf("cache holds %d pods, want %d", got, n)
	}
	after := liveHeap()
	return float64(after-before) / float64(n)
}

// BenchmarkCacheHeap: the heap a synced informer keeps per cached pod
// (B/pod: cache, indexes and the objects, after a forced GC), for the full
// pods (informer.For) and for their metadata only (informer.ForMetadata),
// with and without FactoryConfig.DropManagedFields, in protobuf and JSON.
// The pods are rich (cacheHeapPod: three containers with environment
// variables, probes, volumes, status and managedFields). Run it once:
//
//	go test ./informer -run '^$' -bench BenchmarkCacheHeap -benchtime 1x
func BenchmarkCacheHeap(b *testing.B) {
	const n = 5000
	s := newBenchServer(b)
	seed(b, s, "pods", n, cacheHeapPod)
	for _, ct := range []string{codec.MediaTypeProtobuf, codec.MediaTypeJSON} {
		c := s.client(b, ct)
		enc := map[string]string{codec.MediaTypeJSON: "json", codec.MediaTypeProtobuf: "protobuf"}[ct]
		for _, metadata := range []bool{false, true} {
			for _, drop := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/managedFields=%s", enc,
					map[bool]string{false: "full", true: "metadata"}[metadata],
					map[bool]string{false: "kept", true: "dropped"}[drop])
				cfg := informer.FactoryConfig{Namespace: "bench", DropManagedFields: drop, Logger: quietLogger()}
				b.Run(name, func(b *testing.B) {
					// The server runs in this process and keeps what it
					// encodes for a list: a first sync warms it up, so
					// that the heap measured is the informer's.
					cacheHeap(b, informer.NewFactory(c, cfg), n, metadata)
					for b.Loop() {
						b.ReportMetric(cacheHeap(b, informer.NewFactory(c, cfg), n, metadata), "B/pod")
					}
				})
			}
		}
	}
}
