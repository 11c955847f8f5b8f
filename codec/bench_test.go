package codec_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
	sigsjson "sigs.k8s.io/json"
)

const benchItems = 5000

var (
	podListOnce     sync.Once
	podListJSON     []byte
	podListProtobuf []byte
)

// benchPodList builds a 5,000-pod list from the rich pod captured from a real
// server (about 8 KB each in JSON, with managedFields), in JSON and protobuf.
func benchPodList(b *testing.B) ([]byte, []byte) {
	podListOnce.Do(func() {
		x, err := golden.Load("13-get-pod-json")
		if err != nil {
			panic(err)
		}
		var pod corev1.Pod
		if err := codec.UnmarshalJSON(x.ResponseBody, &pod); err != nil {
			panic(err)
		}
		list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
		list.ResourceVersion = "123456"
		for i := range benchItems {
			p := pod
			p.TypeMeta = metav1.TypeMeta{}
			p.Name = fmt.Sprintf("pod-%05d", i)
			p.ResourceVersion = fmt.Sprint(1000 + i)
			list.Items = append(list.Items, p)
		}
		if podListJSON, err = codec.MarshalJSON(&list); err != nil {
			panic(err)
		}
		if podListProtobuf, err = codec.MarshalProtobuf(list.TypeMeta, &list); err != nil {
			panic(err)
		}
	})
	return podListJSON, podListProtobuf
}

// BenchmarkDecodePodListJSON compares JSON libraries on the same 5,000-pod list;
// codec.UnmarshalJSON's library was chosen by it.
func BenchmarkDecodePodListJSON(b *testing.B) {
	body, _ := benchPodList(b)
	for _, lib := range []struct {
		name   string
		decode func([]byte, *corev1.PodList) error
	}{
		{"kapi-go-json-experiment", func(d []byte, l *corev1.PodList) error { return codec.UnmarshalJSON(d, l) }},
		{"encoding-json", func(d []byte, l *corev1.PodList) error { return json.Unmarshal(d, l) }},
		{"sigs.k8s.io-json", func(d []byte, l *corev1.PodList) error {
			return sigsjson.UnmarshalCaseSensitivePreserveInts(d, l)
		}},
	} {
		b.Run(lib.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var l corev1.PodList
				if err := lib.decode(body, &l); err != nil {
					b.Fatal(err)
				}
				if len(l.Items) != benchItems {
					b.Fatalf("%d items", len(l.Items))
				}
			}
		})
	}
}

// BenchmarkDecodePodListProtobuf decodes the same list from protobuf.
func BenchmarkDecodePodListProtobuf(b *testing.B) {
	_, body := benchPodList(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var l corev1.PodList
		if _, err := codec.UnmarshalProtobuf(body, &l); err != nil {
			b.Fatal(err)
		}
		if len(l.Items) != benchItems {
			b.Fatalf("%d items", len(l.Items))
		}
	}
}

// BenchmarkEncodePodList encodes the list in both forms.
func BenchmarkEncodePodList(b *testing.B) {
	body, _ := benchPodList(b)
	var l corev1.PodList
	if err := codec.UnmarshalJSON(body, &l); err != nil {
		b.Fatal(err)
	}
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if err := codec.EncodeJSON(io.Discard, &l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := codec.MarshalProtobuf(l.TypeMeta, &l)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
}

// heapSampler records the peak heap growth over a baseline taken after a full
// GC. The benchmark runs with GOGC=5 so the heap holds little garbage and the
// figure approximates live memory.
type heapSampler struct {
	s          []metrics.Sample
	base, peak uint64
}

func newHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{s: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
	metrics.Read(h.s)
	h.base = h.s[0].Value.Uint64()
	return h
}

func (h *heapSampler) sample() {
	metrics.Read(h.s)
	if v := h.s[0].Value.Uint64(); v > h.base && v-h.base > h.peak {
		h.peak = v - h.base
	}
}

// BenchmarkListPeakMemory compares the peak heap of decoding the 5,000-pod list
// as a whole body (read it all, then unmarshal the list) with the streaming
// decoders (items handed to a callback one at a time and dropped), reported as
// peak-heap-MB: the peak growth of the heap over what was live before decoding.
func BenchmarkListPeakMemory(b *testing.B) {
	jsonBody, pbBody := benchPodList(b)
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	whole := func(b *testing.B, body []byte, decode func([]byte) (int, error)) {
		var peak uint64
		for b.Loop() {
			h := newHeapSampler()
			buf, _ := io.ReadAll(bytes.NewReader(body)) // what a client holding the body does
			n, err := decode(buf)
			if err != nil || n != benchItems {
				b.Fatal(n, err)
			}
			h.sample()
			peak = max(peak, h.peak)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	}
	stream := func(b *testing.B, decode func(io.Reader, func()) (int, error)) {
		var peak uint64
		for b.Loop() {
			h := newHeapSampler()
			n := 0
			_, err := decode(bytes.NewReader(jsonBody), func() {
				n++
				if n%100 == 0 {
					h.sample()
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			peak = max(peak, h.peak)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	}
	b.Run("json/whole", func(b *testing.B) {
		whole(b, jsonBody, func(d []byte) (int, error) {
			var l corev1.PodList
			err := codec.UnmarshalJSON(d, &l)
			return len(l.Items), err
		})
	})
	b.Run("json/stream", func(b *testing.B) {
		stream(b, func(r io.Reader, each func()) (int, error) {
			_, err := codec.DecodeJSONList(r, func(*corev1.Pod) error { each(); return nil })
			return 0, err
		})
	})
	b.Run("protobuf/whole", func(b *testing.B) {
		whole(b, pbBody, func(d []byte) (int, error) {
			var l corev1.PodList
			_, err := codec.UnmarshalProtobuf(d, &l)
			return len(l.Items), err
		})
	})
	b.Run("protobuf/stream", func(b *testing.B) {
		var peak uint64
		for b.Loop() {
			h := newHeapSampler()
			n := 0
			_, err := codec.DecodeProtobufList(bytes.NewReader(pbBody), 0, func(*corev1.Pod) error {
				if n++; n%100 == 0 {
					h.sample()
				}
				return nil
			})
			if err != nil || n != benchItems {
				b.Fatal(n, err)
			}
			peak = max(peak, h.peak)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	})
}

// BenchmarkDecodeListStream decodes the 5,000-pod list item by item, as an
// informer does, with the DecodeOptions an informer's reflector uses
// (cache: FieldsV1 shared; drop: managedFields skipped unread too) and
// without (plain). live-KB/item is the heap the decoded items keep, after a
// GC, per item: what a cache of them would hold.
func BenchmarkDecodeListStream(b *testing.B) {
	jsonBody, pbBody := benchPodList(b)
	for _, enc := range []string{"json", "protobuf"} {
		for _, mode := range []struct {
			name string
			o    codec.DecodeOptions
		}{
			{"plain", codec.DecodeOptions{}},
			{"cache", codec.DecodeOptions{ShareFieldsV1: true}},
			{"drop", codec.DecodeOptions{ShareFieldsV1: true, SkipManagedFields: true}},
		} {
			b.Run(enc+"/"+mode.name, func(b *testing.B) {
				body := jsonBody
				if enc == "protobuf" {
					body = pbBody
				}
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				var live uint64
				for b.Loop() {
					items := make([]*corev1.Pod, 0, benchItems)
					keep := func(p *corev1.Pod) error { items = append(items, p); return nil }
					before := liveHeapBytes()
					var err error
					if enc == "json" {
						_, err = codec.DecodeJSONListWith(bytes.NewReader(body), mode.o, keep)
					} else {
						_, err = codec.DecodeProtobufListWith(bytes.NewReader(body), 0, mode.o, keep)
					}
					if err != nil || len(items) != benchItems {
						b.Fatal(len(items), err)
					}
					b.StopTimer()
					live = liveHeapBytes() - before
					runtime.KeepAlive(items)
					b.StartTimer()
				}
				b.ReportMetric(float64(live)/benchItems/1024, "live-KB/item")
			})
		}
	}
}

func liveHeapBytes() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
