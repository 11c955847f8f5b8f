package fake_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/fake"
)

// Benchmarks of the fake client: a pod created, read and listed through the
// real client and the reference server, in JSON and protobuf. The
// "loopback" variants send the same requests to the same server over a
// loopback TCP connection (httptest), for comparison.
//
//	go test -run XXX -bench . -benchmem ./fake/

var benchEncodings = []struct{ name, contentType string }{
	{"json", codec.MediaTypeJSON},
	{"protobuf", codec.MediaTypeProtobuf},
}

// benchClients returns, for each transport, a client on a fresh server.
func benchClients(b *testing.B, contentType string) map[string]*client.Client {
	b.Helper()
	f := fake.NewWithOptions(b, fake.Options{ContentType: contentType, Logger: quietLogger()})
	api, err := apiserver.New(apiserver.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(api)
	b.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		api.Close()
	})
	loop, err := client.New(&client.Config{Host: srv.URL, QPS: -1, ContentType: contentType, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return map[string]*client.Client{"fake": f.Client(), "loopback": loop}
}

func BenchmarkCreate(b *testing.B) {
	for _, enc := range benchEncodings {
		for _, via := range []string{"fake", "loopback"} {
			b.Run(enc.name+"/"+via, func(b *testing.B) {
				pods := client.For[corev1.Pod](benchClients(b, enc.contentType)[via])
				ctx := context.Background()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := pods.Create(ctx, pod("default", fmt.Sprintf("p-%d", i), "app", "web"), metav1.CreateOptions{}); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

func BenchmarkGet(b *testing.B) {
	for _, enc := range benchEncodings {
		for _, via := range []string{"fake", "loopback"} {
			b.Run(enc.name+"/"+via, func(b *testing.B) {
				pods := client.For[corev1.Pod](benchClients(b, enc.contentType)[via])
				ctx := context.Background()
				if _, err := pods.Create(ctx, pod("default", "p", "app", "web"), metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkList(b *testing.B) {
	for _, n := range []int{100, 1000} {
		for _, enc := range benchEncodings {
			for _, via := range []string{"fake", "loopback"} {
				b.Run(fmt.Sprintf("%d/%s/%s", n, enc.name, via), func(b *testing.B) {
					pods := client.For[corev1.Pod](benchClients(b, enc.contentType)[via])
					ctx := context.Background()
					for i := range n {
						if _, err := pods.Create(ctx, pod("default", fmt.Sprintf("p-%04d", i), "app", "web"), metav1.CreateOptions{}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					for b.Loop() {
						list, err := pods.List(ctx, metav1.ListOptions{})
						if err != nil {
							b.Fatal(err)
						}
						if len(list.Items) != n {
							b.Fatalf("%d pods", len(list.Items))
						}
					}
				})
			}
		}
	}
}
