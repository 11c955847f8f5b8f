package apiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/etcdtest"
)

// BenchmarkBackends compares the stores side by side over HTTP on loopback:
// the memory store (default), the durable one (DataDir, every write
// fsynced before its response, concurrent writes sharing fsyncs) and etcd
// (Config.Etcd on a single member started in process, fsyncing as in
// production).
//
//		go test ./apiserver -run '^$' -bench BenchmarkBackends -benchtime 3s
//
//	  - writes-8: 8 clients creating 1 KiB ConfigMaps; writes/s, and the
//	    p50 and p99 latency of an acknowledged write;
//	  - list-50000: a list of 50,000 ConfigMaps, JSON, in one page;
//	  - watch-200: each op is one write that 200 watchers receive.
//
// BenchmarkKubeAPIServer runs the same operations against a real
// kube-apiserver.
func BenchmarkBackends(b *testing.B) {
	for _, backend := range []string{"memory", "bbolt", "etcd"} {
		cfg := func(b *testing.B) Config {
			c := Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			switch backend {
			case "bbolt":
				c.DataDir = b.TempDir()
			case "etcd":
				m, err := etcdtest.Start(etcdtest.Config{Fsync: true})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(m.Stop)
				c.Etcd.Servers = m.Endpoints
			}
			return c
		}
		b.Run("backend="+backend+"/writes-8", func(b *testing.B) {
			_, t := newBackendBenchServer(b, cfg(b))
			benchWrites(b, t, 8)
		})
		b.Run("backend="+backend+"/list-50000", func(b *testing.B) {
			srv, t := newBackendBenchServer(b, cfg(b))
			parallelSeed(b, 50_000, func(body string) {
				mustDo(b, srv, "POST", "/api/v1/namespaces/bench/configmaps", body, http.StatusCreated)
			})
			benchList(b, t)
		})
		b.Run("backend="+backend+"/watch-200", func(b *testing.B) {
			_, t := newBackendBenchServer(b, cfg(b))
			benchWatchFanOut(b, t, 200)
		})
	}
}

// BenchmarkKubeAPIServer runs BenchmarkBackends' operations against the
// real kube-apiserver (and etcd) of ../shared/realk8s, in a namespace of its
// own that it deletes at the end; it is skipped without one:
//
//	eval "$(../shared/realk8s/realk8s.sh env)"
//	go test ./apiserver -run '^$' -bench BenchmarkKubeAPIServer -benchtime 3s
func BenchmarkKubeAPIServer(b *testing.B) {
	server, tokenFile, caFile := os.Getenv("REALK8S_SERVER"), os.Getenv("REALK8S_TOKEN_FILE"), os.Getenv("REALK8S_CA_FILE")
	if server == "" || tokenFile == "" || caFile == "" {
		b.Skip("no real kube-apiserver: set REALK8S_SERVER, REALK8S_TOKEN_FILE and REALK8S_CA_FILE (realk8s.sh env)")
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		b.Fatal(err)
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		b.Fatalf("%s holds no certificate", caFile)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64}
	defer transport.CloseIdleConnections()
	fresh := func(b *testing.B) benchTarget {
		ns := fmt.Sprintf("kapi-bench-%d", time.Now().UnixNano())
		t := benchTarget{url: server, client: &http.Client{Transport: transport}, token: strings.TrimSpace(string(token)), ns: ns}
		t.must(b, "POST", "/api/v1/namespaces", fmt.Sprintf(`{"metadata":{"name":%q}}`, ns), http.StatusCreated)
		b.Cleanup(func() { t.must(b, "DELETE", "/api/v1/namespaces/"+ns, "", http.StatusOK) })
		return t
	}
	b.Run("backend=kube-apiserver/writes-8", func(b *testing.B) {
		benchWrites(b, fresh(b), 8)
	})
	b.Run("backend=kube-apiserver/list-50000", func(b *testing.B) {
		t := fresh(b)
		parallelSeed(b, 50_000, func(body string) { t.must(b, "POST", t.configMaps(), body, http.StatusCreated) })
		benchList(b, t)
	})
	b.Run("backend=kube-apiserver/watch-200", func(b *testing.B) {
		benchWatchFanOut(b, fresh(b), 200)
	})
}

// benchTarget is a server the backend benchmarks talk to over HTTP, and
// the namespace they work in.
type benchTarget struct {
	url    string
	client *http.Client
	token  string // bearer token, if any
	ns     string
}

func (t benchTarget) configMaps() string { return "/api/v1/namespaces/" + t.ns + "/configmaps" }

// do sends a request with t's credentials.
func (t benchTarget) do(ctx context.Context, method, path, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.url+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.client.Do(req)
}

// must sends a request, reads its answer, and fails b unless its status is
// want.
func (t benchTarget) must(b testing.TB, method, path, body string, want int) {
	resp, err := t.do(context.Background(), method, path, body)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %s", method, path, resp.Status)
	}
}

func newBackendBenchServer(b *testing.B, cfg Config) (*Server, benchTarget) {
	b.Helper()
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t := benchTarget{url: ts.URL, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}, ns: "bench"}
	b.Cleanup(func() {
		t.client.CloseIdleConnections()
		ts.Close()
		srv.Close()
	})
	mustDo(b, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"bench"}}`, http.StatusCreated)
	return srv, t
}

// parallelSeed makes n ConfigMap bodies and hands them to create from 8
// goroutines.
func parallelSeed(b *testing.B, n int, create func(body string)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				create(configMapBody(fmt.Sprintf("cm-%06d", i)))
			}
		})
	}
	wg.Wait()
}

// benchList lists t's ConfigMaps, JSON, in one page, once per op.
func benchList(b *testing.B, t benchTarget) {
	for b.Loop() {
		t.must(b, "GET", t.configMaps(), "", http.StatusOK)
	}
}

// benchWrites makes b.N creates from clients goroutines and reports the
// throughput and the latency percentiles of the acknowledged writes.
func benchWrites(b *testing.B, t benchTarget, clients int) {
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	b.ResetTimer()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				t0 := time.Now()
				resp, err := t.do(context.Background(), "POST", t.configMaps(), configMapBody(fmt.Sprintf("w-%d", i)))
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

// benchWatchFanOut opens watchers watches of t's ConfigMaps, then writes
// one ConfigMap per op and waits until each watcher has read its event.
func benchWatchFanOut(b *testing.B, t benchTarget, watchers int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	got := make(chan struct{}, watchers*64)
	for range watchers {
		// Without a resourceVersion a watch starts with the current
		// objects; the namespace has none.
		resp, err := t.do(ctx, "GET", t.configMaps()+"?watch=1", "")
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
		t.must(b, "POST", t.configMaps(), configMapBody(fmt.Sprintf("w-%d", i)), http.StatusCreated)
		for range watchers {
			<-got
		}
		i++
	}
	b.ReportMetric(float64(watchers*b.N)/b.Elapsed().Seconds(), "events/s")
	cancel()
	wg.Wait()
}
