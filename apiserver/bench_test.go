package apiserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/golden"
)

func newBenchServer(b *testing.B) (*Server, benchTarget) {
	b.Helper()
	return newBackendBenchServer(b, Config{})
}

func mustDo(b testing.TB, srv http.Handler, method, path, body string, want int) {
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	if rec.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
}

// configMapBody is a ConfigMap with 1 KiB of data.
func configMapBody(name string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":"bench"}},"data":{"payload":%q}}`, name, strings.Repeat("x", 1024))
}

func seed(b *testing.B, srv *Server, n int) {
	for i := range n {
		mustDo(b, srv, "POST", "/api/v1/namespaces/bench/configmaps", configMapBody(fmt.Sprintf("cm-%06d", i)), http.StatusCreated)
	}
}

// BenchmarkCreate measures ConfigMap creates over HTTP on loopback.
func BenchmarkCreate(b *testing.B) {
	_, ts := newBenchServer(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		resp, err := http.Post(ts.url+"/api/v1/namespaces/bench/configmaps", "application/json", strings.NewReader(configMapBody(fmt.Sprintf("c-%d", i))))
		if err != nil || resp.StatusCode != http.StatusCreated {
			b.Fatal(err, resp.Status)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		i++
	}
}

// BenchmarkList lists 10,000 and 50,000 ConfigMaps over HTTP, whole and in
// pages of 500, in JSON and protobuf.
func BenchmarkList(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		srv, ts := newBenchServer(b)
		seed(b, srv, n)
		for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
			for _, limit := range []int{0, 500} {
				name := fmt.Sprintf("n=%d/%s/limit=%d", n, map[bool]string{true: "protobuf", false: "json"}[strings.Contains(accept, "protobuf")], limit)
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						cont := ""
						for {
							url := ts.url + "/api/v1/namespaces/bench/configmaps"
							if limit > 0 {
								url += fmt.Sprintf("?limit=%d&continue=%s", limit, cont)
							}
							req, _ := http.NewRequest("GET", url, nil)
							req.Header.Set("Accept", accept)
							resp, err := http.DefaultClient.Do(req)
							if err != nil || resp.StatusCode != http.StatusOK {
								b.Fatal(err, resp.Status)
							}
							body, _ := io.ReadAll(resp.Body)
							resp.Body.Close()
							if limit == 0 {
								break
							}
							cont = continueOf(body)
							if cont == "" {
								break
							}
						}
					}
				})
			}
		}
	}
}

// continueOf finds the continue token in a JSON or protobuf list body.
func continueOf(body []byte) string {
	s := string(body)
	if i := strings.Index(s, `"continue":"`); i >= 0 {
		s = s[i+len(`"continue":"`):]
		return s[:strings.IndexByte(s, '"')]
	}
	if i := strings.Index(s, "eyJ"); i >= 0 { // protobuf: the token is base64url JSON
		j := i
		for j < len(s) && (s[j] == '-' || s[j] == '_' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		return s[i:j]
	}
	return ""
}

// BenchmarkWatchFanOut sends each op's write to 200 watchers over HTTP and
// waits until every watcher has read it; it reports events delivered per
// second across all watchers.
func BenchmarkWatchFanOut(b *testing.B) {
	_, t := newBenchServer(b)
	benchWatchFanOut(b, t, 200)
}

// BenchmarkWrites measures the write paths in process (no HTTP), each on one
// 1 KiB ConfigMap or one rich pod (golden 11): a PUT, a merge patch, a
// strategic merge patch and a server-side apply, all tracking managedFields.
func BenchmarkWrites(b *testing.B) {
	srv, _ := newBenchServer(b)
	x, err := golden.Load("11-create-pod-rich")
	if err != nil {
		b.Fatal(err)
	}
	const podName = "rich"
	mustDo(b, srv, "POST", "/api/v1/namespaces/bench/pods", strings.Replace(string(x.RequestBody), `"namespace": "golden"`, `"namespace": "bench"`, 1), http.StatusCreated)
	mustDo(b, srv, "POST", "/api/v1/namespaces/bench/configmaps", configMapBody("w"), http.StatusCreated)
	i := 0
	for _, bc := range []struct {
		name, method, path, ctype string
		body                      func() string
	}{
		{"configmap/update", "PUT", "/api/v1/namespaces/bench/configmaps/w", "application/json", func() string { return configMapBody("w") }},
		{"configmap/merge-patch", "PATCH", "/api/v1/namespaces/bench/configmaps/w", "application/merge-patch+json",
			func() string { return fmt.Sprintf(`{"data":{"n":"%d"}}`, i) }},
		{"configmap/apply", "PATCH", "/api/v1/namespaces/bench/configmaps/w?fieldManager=bench", "application/apply-patch+yaml",
			func() string {
				return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"},"data":{"a":"%d"}}`, i)
			}},
		{"pod/strategic-patch", "PATCH", "/api/v1/namespaces/bench/pods/" + podName, "application/strategic-merge-patch+json",
			func() string { return fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, i) }},
		{"pod/apply", "PATCH", "/api/v1/namespaces/bench/pods/" + podName + "?fieldManager=bench&force=true", "application/apply-patch+yaml",
			func() string {
				return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"labels":{"a":"%d"}}}`, podName, i)
			}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				i++
				req := httptest.NewRequest(bc.method, bc.path, strings.NewReader(bc.body()))
				req.Header.Set("Content-Type", bc.ctype)
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// BenchmarkInternalWrites measures the writes the server's own controllers
// make: the default ServiceAccount and the kube-root-ca.crt ConfigMap of a
// new namespace (what kube-controller-manager's controllers create), without
// the namespace's own creation.
func BenchmarkInternalWrites(b *testing.B) {
	srv, err := New(Config{DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		ns := fmt.Sprintf("ns-%d", i)
		i++
		mustDo(b, srv, "POST", "/api/v1/namespaces", fmt.Sprintf(`{"metadata":{"name":%q}}`, ns), http.StatusCreated)
		b.StartTimer()
		srv.ensureDefaultServiceAccount(ctx, ns)
		srv.ensureRootCA(ctx, ns)
	}
}
