package apiserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkBackends compares the stores side by side over HTTP on loopback:
// the memory store (default) and the durable one (DataDir, every write
// fsynced before its response, concurrent writes sharing fsyncs).
//
//		go test ./apiserver -run '^$' -bench BenchmarkBackends -benchtime 3s
//
//	  - writes-8: 8 clients creating 1 KiB ConfigMaps; writes/s, and the
//	    p50 and p99 latency of an acknowledged write;
//	  - list-50000: a list of 50,000 ConfigMaps, JSON, in one page;
//	  - watch-200: each op is one write that 200 watchers receive.
func BenchmarkBackends(b *testing.B) {
	for _, backend := range []string{"memory", "bbolt"} {
		cfg := func(b *testing.B) Config {
			c := Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if backend == "bbolt" {
				c.DataDir = b.TempDir()
			}
			return c
		}
		b.Run("backend="+backend+"/writes-8", func(b *testing.B) {
			_, ts := newBackendBenchServer(b, cfg(b))
			benchWrites(b, ts.URL, 8)
		})
		b.Run("backend="+backend+"/list-50000", func(b *testing.B) {
			srv, ts := newBackendBenchServer(b, cfg(b))
			parallelSeed(b, srv, 50_000)
			client := &http.Client{}
			for b.Loop() {
				resp, err := client.Get(ts.URL + "/api/v1/namespaces/bench/configmaps")
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatal(err, resp.Status)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
		b.Run("backend="+backend+"/watch-200", func(b *testing.B) {
			srv, ts := newBackendBenchServer(b, cfg(b))
			benchWatchFanOut(b, srv, ts, 200)
		})
	}
}

func newBackendBenchServer(b *testing.B, cfg Config) (*Server, *httptest.Server) {
	b.Helper()
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	b.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	mustDo(b, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"bench"}}`, http.StatusCreated)
	return srv, ts
}

// parallelSeed creates n ConfigMaps from 8 goroutines (in process).
func parallelSeed(b *testing.B, srv *Server, n int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				mustDo(b, srv, "POST", "/api/v1/namespaces/bench/configmaps", configMapBody(fmt.Sprintf("cm-%06d", i)), http.StatusCreated)
			}
		})
	}
	wg.Wait()
}

// benchWrites makes b.N creates from clients goroutines and reports the
// throughput and the latency percentiles of the acknowledged writes.
func benchWrites(b *testing.B, url string, clients int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	b.ResetTimer()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				t0 := time.Now()
				resp, err := client.Post(url+"/api/v1/namespaces/bench/configmaps", "application/json",
					strings.NewReader(configMapBody(fmt.Sprintf("w-%d", i))))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Error(resp.Status)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// benchWatchFanOut writes one ConfigMap per op and waits until each of the
// watchers has read its event.
func benchWatchFanOut(b *testing.B, srv *Server, ts *httptest.Server, watchers int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: watchers}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	got := make(chan struct{}, watchers*64)
	for range watchers {
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/api/v1/namespaces/bench/configmaps?watch=1&resourceVersion="+
			fmt.Sprint(srv.Storage().Revision()), nil)
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(err)
		}
		wg.Go(func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				got <- struct{}{}
			}
		})
	}
	i := 0
	for b.Loop() {
		mustDo(b, srv, "POST", "/api/v1/namespaces/bench/configmaps", configMapBody(fmt.Sprintf("w-%d", i)), http.StatusCreated)
		for range watchers {
			<-got
		}
		i++
	}
	b.ReportMetric(float64(watchers*b.N)/b.Elapsed().Seconds(), "events/s")
	cancel()
	wg.Wait()
}
