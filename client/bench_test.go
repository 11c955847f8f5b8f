package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

// benchPods is the number of pods the list benchmarks list.
const benchPods = 10_000

// seedPods stores n copies of the rich pod kube-apiserver served in golden
// 13 (spec, status and managedFields: about 8 KiB of JSON each) straight into
// the server's store.
func seedPods(b *testing.B, s *testServer, n int) {
	b.Helper()
	x, err := golden.Load("13-get-pod-json")
	if err != nil {
		b.Fatal(err)
	}
	var tmpl corev1.Pod
	if err := codec.UnmarshalJSON(x.ResponseBody, &tmpl); err != nil {
		b.Fatal(err)
	}
	tmpl.TypeMeta = metav1.TypeMeta{}
	tmpl.Namespace, tmpl.ResourceVersion, tmpl.Finalizers = "test", "", nil
	ctx := context.Background()
	for i := range n {
		p := tmpl.DeepCopy()
		p.Name = fmt.Sprintf("pod-%05d", i)
		p.UID = metav1.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
		if _, err := s.api.Storage().Create(ctx, "/core/pods/test/"+p.Name, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListPods lists 10,000 pods with the typed client over loopback
// HTTP, in JSON and in protobuf. List keeps every pod (a List[corev1.Pod]);
// ListEach hands each to a callback and keeps none.
//
// "server" lists from the reference server, so the figures include the
// server encoding the list in the same process; "replay" serves the bytes
// the reference server sent, recorded once, so they show the client's cost
// alone.
//
//	go test -run '^$' -bench ListPods -benchmem ./client/
func BenchmarkListPods(b *testing.B) {
	s := newTestServer(b)
	seedPods(b, s, benchPods)
	for _, enc := range encodings {
		body := recordList(b, s, enc.contentType)
		replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", enc.contentType)
			_, _ = w.Write(body)
		}))
		b.Cleanup(replay.Close)
		for _, src := range []struct{ name, url string }{{"server", s.http.URL}, {"replay", replay.URL}} {
			pods := For[corev1.Pod](newTestClient(b, &Config{Host: src.url, ContentType: enc.contentType}))
			ctx := context.Background()
			b.Run(src.name+"/"+enc.name+"/List", func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					list, err := pods.List(ctx, metav1.ListOptions{})
					if err != nil {
						b.Fatal(err)
					}
					if len(list.Items) != benchPods {
						b.Fatalf("%d pods", len(list.Items))
					}
				}
			})
			b.Run(src.name+"/"+enc.name+"/ListEach", func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					n := 0
					if _, err := pods.ListEach(ctx, metav1.ListOptions{}, func(*corev1.Pod) error { n++; return nil }); err != nil {
						b.Fatal(err)
					}
					if n != benchPods {
						b.Fatalf("%d pods", n)
					}
				}
			})
		}
	}
}

// recordList returns the reference server's answer to a pod list in
// contentType.
func recordList(b *testing.B, s *testServer, contentType string) []byte {
	b.Helper()
	c := newTestClient(b, &Config{Host: s.http.URL})
	body, err := c.NewRequest(http.MethodGet).Resource(GroupVersionResource{Version: "v1", Resource: "pods"}).
		Namespace("test").SetHeader("Accept", contentType).DoRaw(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return body
}
