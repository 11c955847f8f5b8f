package informer_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/internal/golden"
	"github.com/kapi-dev/kapi/reflector"
)

// benchServer is a reference server on loopback with namespace "bench".
type benchServer struct {
	srv *apiserver.Server
	url string
}

func newBenchServer(b *testing.B) *benchServer {
	b.Helper()
	srv, err := apiserver.New(apiserver.Config{Logger: quietLogger(), DisableRootCAPublisher: true}) // no kube-root-ca.crt among the ConfigMaps counted
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		_ = srv.Close()
	})
	s := &benchServer{srv: srv, url: ts.URL}
	c := s.client(b, codec.MediaTypeJSON)
	if _, err := client.For[corev1.Namespace](c).Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	return s
}

func (s *benchServer) client(b *testing.B, contentType string) *client.Client {
	c, err := client.New(&client.Config{Host: s.url, QPS: -1, ContentType: contentType, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// seed writes n objects straight into the server's storage, which is much
// faster than n create requests; mk makes the i-th object (without
// resourceVersion or kind, as the server stores them).
func seed[PT storage.Object](b *testing.B, s *benchServer, resource string, n int, mk func(i int) PT) {
	b.Helper()
	ctx := context.Background()
	for i := range n {
		obj := mk(i)
		key := "/core/" + resource + "/bench/" + obj.GetName()
		if _, err := s.srv.Storage().Create(ctx, key, obj); err != nil {
			b.Fatal(err)
		}
	}
}

// benchConfigMap is a ConfigMap with 1 KiB of data.
func benchConfigMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cm-%06d", i), Namespace: "bench",
			UID:               metav1.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)),
			CreationTimestamp: metav1.Now(), Labels: map[string]string{"app": "bench"},
		},
		Data: map[string]string{"payload": strings.Repeat("x", 1024)},
	}
}

var (
	richPodOnce sync.Once
	richPod     *corev1.Pod
)

// benchPod returns a copy of the rich pod captured from a real server
// (testdata/golden/13-get-pod-json.txt: about 8 KB of JSON with
// managedFields, status, probes, volumes) renamed pod-<i>.
func benchPod(i int) *corev1.Pod {
	richPodOnce.Do(func() {
		x, err := golden.Load("13-get-pod-json")
		if err != nil {
			panic(err)
		}
		richPod = &corev1.Pod{}
		if err := codec.UnmarshalJSON(x.ResponseBody, richPod); err != nil {
			panic(err)
		}
		richPod.TypeMeta = metav1.TypeMeta{}
	})
	p := richPod.DeepCopy()
	p.Name = fmt.Sprintf("pod-%06d", i)
	p.Namespace = "bench"
	p.UID = metav1.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	p.ResourceVersion = ""
	return p
}

// syncOnce runs an informer with one no-op handler until the handler has
// seen the whole initial list, and returns the informer (still running)
// and a function that stops it.
func syncOnce[T any, PT client.ObjectPtr[T]](b *testing.B, c *client.Client, streaming, dropManagedFields bool) (informer.Informer[T], func()) {
	cfg := informer.Config[T]{Reflector: reflector.Config[T]{UseStreamingList: streaming, DropManagedFields: dropManagedFields, Logger: quietLogger()}}
	inf := informer.New[T, PT](client.For[T, PT](c).Namespace("bench"), cfg)
	reg, err := inf.AddEventHandler(informer.HandlerFuncs[T]{AddFunc: func(*T, bool) {}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = inf.Run(ctx)
	}()
	select {
	case <-reg.Synced():
	case <-time.After(5 * time.Minute):
		b.Fatal("not synced after 5 minutes")
	}
	return inf, func() {
		cancel()
		<-done
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// benchInitialSync measures the time from Run to a handler having seen
// every object of the initial list, then the heap the running informer
// keeps after a forced GC (cache, indexes, handler state).
func benchInitialSync[T any, PT client.ObjectPtr[T]](b *testing.B, c *client.Client, n int, streaming, dropManagedFields bool) {
	b.ReportAllocs()
	for b.Loop() {
		inf, stop := syncOnce[T, PT](b, c, streaming, dropManagedFields)
		if got := inf.Indexer().Len(); got != n {
			b.Fatalf("cache holds %d objects, want %d", got, n)
		}
		stop()
	}
	b.StopTimer()
	before := liveHeap()
	inf, stop := syncOnce[T, PT](b, c, streaming, dropManagedFields)
	after := liveHeap()
	runtime.KeepAlive(inf)
	stop()
	b.ReportMetric(float64(after-before)/(1<<20), "heap-MB")
	b.ReportMetric(float64(after-before)/float64(n), "B/obj")
}

// BenchmarkInitialSync: an informer's initial sync of 10,000 and 50,000
// objects (ConfigMaps with 1 KiB of data, and rich pods), in JSON and
// protobuf, with paged lists (500 a page) and with a streaming list. ns/op
// is the time from Run until a handler has handled every initial object;
// heap-MB and B/obj are the live heap the synced informer keeps (after a
// forced GC). The server runs in the same process: allocs/op and B/op
// include its work of encoding the list. Pods are also synced with
// managedFields dropped (reflector.Config.DropManagedFields), to show what
// that saves.
func BenchmarkInitialSync(b *testing.B) {
	for _, kind := range []string{"configmaps", "pods"} {
		for _, n := range []int{10_000, 50_000} {
			s := newBenchServer(b)
			if kind == "configmaps" {
				seed(b, s, kind, n, benchConfigMap)
			} else {
				seed(b, s, kind, n, benchPod)
			}
			for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
				c := s.client(b, ct)
				enc := map[string]string{codec.MediaTypeJSON: "json", codec.MediaTypeProtobuf: "protobuf"}[ct]
				for _, streaming := range []bool{false, true} {
					mode := map[bool]string{false: "paged", true: "streaming"}[streaming]
					b.Run(fmt.Sprintf("%s/n=%d/%s/%s", kind, n, enc, mode), func(b *testing.B) {
						if kind == "configmaps" {
							benchInitialSync[corev1.ConfigMap](b, c, n, streaming, false)
						} else {
							benchInitialSync[corev1.Pod](b, c, n, streaming, false)
						}
					})
				}
				if kind == "pods" {
					// What dropping managedFields (reflector.DropManagedFields
					// as the transform) saves.
					b.Run(fmt.Sprintf("%s/n=%d/%s/paged/drop-managed-fields", kind, n, enc), func(b *testing.B) {
						benchInitialSync[corev1.Pod](b, c, n, false, true)
					})
				}
			}
			runtime.GC()
		}
	}
}

// BenchmarkWatchEvents measures watch events from a write to a handler of
// a synced ConfigMap informer:
//
//   - write=client: one create request at a time through the client,
//     waiting for the handler to see it; ns/op is the latency from the
//     request to the handler, create round trip included;
//   - write=storage: b.N creates straight into the server's storage as
//     fast as it takes them, so that the server's HTTP write path is not
//     the limit, until the handler has received them all; events/s is the
//     rate from the first write to the last event handled.
func BenchmarkWatchEvents(b *testing.B) {
	for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		enc := map[string]string{codec.MediaTypeJSON: "json", codec.MediaTypeProtobuf: "protobuf"}[ct]
		for _, write := range []string{"client", "storage"} {
			b.Run(enc+"/write="+write, func(b *testing.B) {
				s := newBenchServer(b)
				c := s.client(b, ct)
				var seen atomic.Int64
				got := make(chan struct{}, 1)
				inf := informer.New[corev1.ConfigMap](client.For[corev1.ConfigMap](c).Namespace("bench"),
					informer.Config[corev1.ConfigMap]{Reflector: reflector.Config[corev1.ConfigMap]{Logger: quietLogger()}})
				reg, err := inf.AddEventHandler(informer.HandlerFuncs[corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) {
					seen.Add(1)
					select {
					case got <- struct{}{}:
					default:
					}
				}})
				if err != nil {
					b.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = inf.Run(ctx)
				}()
				defer func() {
					cancel()
					<-done
				}()
				<-reg.Synced()
				cms := client.For[corev1.ConfigMap](c).Namespace("bench")
				b.ReportAllocs()
				start := time.Now()
				i := 0
				if write == "client" {
					for b.Loop() {
						if _, err := cms.Create(ctx, benchConfigMap(i), metav1.CreateOptions{}); err != nil {
							b.Fatal(err)
						}
						i++
						for seen.Load() < int64(i) {
							<-got
						}
					}
				} else {
					cm := make([]*corev1.ConfigMap, b.N)
					for j := range cm {
						cm[j] = benchConfigMap(j)
					}
					b.ResetTimer()
					start = time.Now()
					for ; i < b.N; i++ {
						if _, err := s.srv.Storage().Create(ctx, "/core/configmaps/bench/"+cm[i].Name, cm[i]); err != nil {
							b.Fatal(err)
						}
					}
					for seen.Load() < int64(i) {
						<-got
					}
				}
				b.ReportMetric(float64(i)/time.Since(start).Seconds(), "events/s")
			})
		}
	}
}
