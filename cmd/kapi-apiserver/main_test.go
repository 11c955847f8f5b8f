package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/internal/etcdtest"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"
)

// These tests run the server in-process through run, on a loopback port, and
// drive it with the real kubectl. Each test has its own server, kubeconfig,
// HOME and kubectl cache directory.

// startTimeout bounds how long a server may take to serve, and stopTimeout how
// long it may take to stop; both are deadlines for failures, not expectations.
const (
	startTimeout   = 20 * time.Second
	stopTimeout    = 20 * time.Second
	kubectlTimeout = 60 * time.Second
	watchTimeout   = 20 * time.Second
)

// mainEnv makes the test binary run main instead of the tests, so that
// TestMainProcess can test signals and exit codes on a real process.
const mainEnv = "KAPI_APISERVER_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m, etcdtest.IgnoreLeaks()...)
}

// testServer is a server started by run in a goroutine.
type testServer struct {
	url        string
	kubeconfig string
	dir        string
	stdout     *readyWriter
	stderr     *lockedBuffer
	client     *http.Client

	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// startServer runs the server with args (after --listen=127.0.0.1:0 and
// --write-kubeconfig) and waits until /readyz answers. The server is stopped
// at the end of the test, which fails if run does not return nil.
func startServer(t *testing.T, args ...string) *testServer {
	t.Helper()
	dir := t.TempDir()
	s := &testServer{
		kubeconfig: filepath.Join(dir, "kubeconfig"),
		dir:        dir,
		stdout:     newReadyWriter(),
		stderr:     &lockedBuffer{},
		done:       make(chan error, 1),
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	args = append([]string{"--listen=127.0.0.1:0", "--write-kubeconfig=" + s.kubeconfig}, args...)
	go func() { s.done <- run(ctx, args, s.stdout, s.stderr) }()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("run: %v\nstderr:\n%s", err, s.stderr)
		}
	})

	select {
	case s.url = <-s.stdout.ready:
	case err := <-s.done:
		s.done <- err // for stop
		t.Fatalf("run returned before serving: %v\nstderr:\n%s", err, s.stderr)
	case <-time.After(startTimeout):
		t.Fatalf("no ready line after %v\nstdout:\n%s\nstderr:\n%s", startTimeout, s.stdout, s.stderr)
	}
	s.client = newClient(t, readKubeconfig(t, s.kubeconfig).caPool(t))
	s.waitReady(t)
	return s
}

// stop cancels run's context and waits for run to return.
func (s *testServer) stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		select {
		case s.stopErr = <-s.done:
		case <-time.After(stopTimeout):
			s.stopErr = fmt.Errorf("run did not return %v after its context ended", stopTimeout)
		}
		if s.client != nil {
			s.client.CloseIdleConnections()
		}
	})
	return s.stopErr
}

// waitReady polls /readyz until it answers 200.
func (s *testServer) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last error
	for time.Now().Before(deadline) {
		resp, err := s.client.Get(s.url + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("/readyz: %s", resp.Status)
		}
		last = err
		<-tick.C
	}
	t.Fatalf("server not ready after %v: %v\nstderr:\n%s", startTimeout, last, s.stderr)
}

// newClient is an HTTP client that trusts pool (nil: the system roots) and
// whose connections are closed at the end of the test.
func newClient(t *testing.T, pool *x509.CertPool) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// readyWriter is run's stdout: it records what run writes and reports the
// URL of the ready line on ready.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	sent  bool
	ready chan string
}

const readyPrefix = "kapi-apiserver listening on "

func newReadyWriter() *readyWriter { return &readyWriter{ready: make(chan string, 1)} }

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		for line := range strings.Lines(w.buf.String()) {
			if u, ok := strings.CutPrefix(line, readyPrefix); ok && strings.HasSuffix(u, "\n") {
				w.ready <- strings.TrimSpace(u)
				w.sent = true
				break
			}
		}
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testKubeconfig is a kubeconfig as kubectl reads it, decoded independently of
// the types the server writes it with.
type testKubeconfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Clusters   []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthorityData string `json:"certificate-authority-data"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token string `json:"token"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster   string `json:"cluster"`
			User      string `json:"user"`
			Namespace string `json:"namespace"`
		} `json:"context"`
	} `json:"contexts"`
	CurrentContext string         `json:"current-context"`
	Preferences    map[string]any `json:"preferences"`
}

func readKubeconfig(t *testing.T, path string) *testKubeconfig {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kc testKubeconfig
	if err := yaml.UnmarshalStrict(b, &kc, yaml.DisallowUnknownFields); err != nil {
		t.Fatalf("kubeconfig: %v\n%s", err, b)
	}
	return &kc
}

// caPool is the kubeconfig's CA, or nil if it has none.
func (kc *testKubeconfig) caPool(t *testing.T) *x509.CertPool {
	t.Helper()
	if len(kc.Clusters) == 0 || kc.Clusters[0].Cluster.CertificateAuthorityData == "" {
		return nil
	}
	pemData, err := base64.StdEncoding.DecodeString(kc.Clusters[0].Cluster.CertificateAuthorityData)
	if err != nil {
		t.Fatalf("certificate-authority-data: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		t.Fatalf("certificate-authority-data holds no PEM certificate:\n%s", pemData)
	}
	return pool
}

// kubectlBinary is the kubectl to test with; the test is skipped without one.
func kubectlBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skipf("kubectl not found: %v", err)
	}
	return p
}

// kubectlCmd is a kubectl command against the server, with its own HOME and
// discovery cache so that nothing leaks between tests or from the user.
func (s *testServer) kubectlCmd(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	kubectl := kubectlBinary(t)
	args = append([]string{"--kubeconfig=" + s.kubeconfig, "--request-timeout=10s"}, args...)
	cmd := exec.CommandContext(ctx, kubectl, args...)
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "HOME" || name == "KUBECACHEDIR" || name == "KUBECONFIG" || strings.HasPrefix(name, "KUBECTL_")
	})
	cmd.Env = append(env, "HOME="+filepath.Join(s.dir, "home"), "KUBECACHEDIR="+filepath.Join(s.dir, "kubecache"))
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// kubectlError is a kubectl command that failed.
type kubectlError struct {
	args   []string
	err    error
	stderr string
}

func (e *kubectlError) Error() string {
	return fmt.Sprintf("kubectl %s: %v\n%s", strings.Join(e.args, " "), e.err, e.stderr)
}

// kubectl runs kubectl with args and stdin, and returns its stdout.
func (s *testServer) kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	cmd := s.kubectlCmd(ctx, t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &kubectlError{args: args, err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

// mustKubectl runs kubectl and fails the test if it fails.
func (s *testServer) mustKubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, err := s.kubectl(t, stdin, args...)
	if err != nil {
		t.Fatalf("%v\nserver log:\n%s", err, s.stderr)
	}
	return out
}

// wantOutput fails the test unless out, trimmed, is want.
func wantOutput(t *testing.T, out, want string) {
	t.Helper()
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// bgKubectl is a kubectl command running in the background (a watch), whose
// output is read as records (lines, or JSON values) on out.
type bgKubectl struct {
	cmd    *exec.Cmd
	out    chan string
	stderr *lockedBuffer
	seen   []string
}

// startKubectl starts kubectl with args; parse turns its stdout into records.
// It is killed at the end of the test.
func (s *testServer) startKubectl(t *testing.T, parse func(io.Reader, chan<- string), args ...string) *bgKubectl {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &bgKubectl{cmd: s.kubectlCmd(ctx, t, args...), out: make(chan string), stderr: &lockedBuffer{}}
	b.cmd.Stderr = b.stderr
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(b.out)
		parse(stdout, b.out)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		cancel() // kills kubectl
		for range b.out {
		}
		_ = b.cmd.Wait()
	})
	return b
}

// lines reads r line by line.
func lines(r io.Reader, out chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out <- sc.Text()
	}
}

// watchEvents reads the JSON watch events kubectl prints with
// --output-watch-events -o json, as "TYPE name" records.
func watchEvents(r io.Reader, out chan<- string) {
	dec := json.NewDecoder(r)
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			return
		}
		out <- ev.Type + " " + ev.Object.Metadata.Name
	}
}

// expect reads records until want comes, failing the test if the output ends
// or want does not come within watchTimeout.
func (b *bgKubectl) expect(t *testing.T, want string) {
	t.Helper()
	timer := time.NewTimer(watchTimeout)
	defer timer.Stop()
	for {
		select {
		case rec, ok := <-b.out:
			if !ok {
				t.Fatalf("kubectl %v ended before printing %q; it printed %q\nstderr:\n%s", b.cmd.Args[1:], want, b.seen, b.stderr)
			}
			b.seen = append(b.seen, rec)
			if rec == want {
				return
			}
		case <-timer.C:
			t.Fatalf("kubectl %v did not print %q within %v; it printed %q\nstderr:\n%s", b.cmd.Args[1:], want, watchTimeout, b.seen, b.stderr)
		}
	}
}

// configMapManifest is a ConfigMap for kubectl create -f / replace -f.
func configMapManifest(namespace, name string, labels, data map[string]string) string {
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": labels},
		"data":       data,
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestKubectl(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	// Without kube-root-ca.crt in every namespace (as the reference
	// cluster, whose controller manager does not publish it), so that the
	// cases see only the configmaps they create.
	s := startServer(t, "--controllers=*,-"+ctrlRootCAPublisher)
	const ns = "kapi-test"

	t.Run("system namespaces", func(t *testing.T) {
		out := s.mustKubectl(t, "", "get", "namespaces", "-o", "name")
		for _, want := range apiserver.SystemNamespaces {
			if !slices.Contains(strings.Fields(out), "namespace/"+want) {
				t.Errorf("kubectl get namespaces: no %s in\n%s", want, out)
			}
		}
	})
	t.Run("create namespace", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "create", "namespace", ns), "namespace/"+ns+" created")
	})
	t.Run("create configmap", func(t *testing.T) {
		out := s.mustKubectl(t, "", "create", "configmap", "cm1", "-n", ns, "--from-literal=k=v", "--from-literal=greeting=hello world")
		wantOutput(t, out, "configmap/cm1 created")
		// The kubeconfig's context namespace.
		wantOutput(t, s.mustKubectl(t, "", "create", "configmap", "plain", "--from-literal=a=b"), "configmap/plain created")
	})
	t.Run("create configmap that exists", func(t *testing.T) {
		_, err := s.kubectl(t, "", "create", "configmap", "cm1", "-n", ns)
		var ke *kubectlError
		// kubectl create configmap words the AlreadyExists Status its own way.
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, `configmaps "cm1" already exists`) {
			t.Errorf("got %v, want AlreadyExists", err)
		}
	})
	t.Run("get -o json", func(t *testing.T) {
		out := s.mustKubectl(t, "", "get", "configmap", "cm1", "-n", ns, "-o", "json")
		var cm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name              string    `json:"name"`
				Namespace         string    `json:"namespace"`
				UID               string    `json:"uid"`
				ResourceVersion   string    `json:"resourceVersion"`
				CreationTimestamp time.Time `json:"creationTimestamp"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &cm); err != nil {
			t.Fatalf("decoding %s: %v", out, err)
		}
		if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" {
			t.Errorf("apiVersion %q kind %q, want v1 ConfigMap", cm.APIVersion, cm.Kind)
		}
		m := cm.Metadata
		if m.Name != "cm1" || m.Namespace != ns {
			t.Errorf("name %s/%s, want %s/cm1", m.Namespace, m.Name, ns)
		}
		if m.UID == "" || m.ResourceVersion == "" || m.CreationTimestamp.IsZero() {
			t.Errorf("uid %q resourceVersion %q creationTimestamp %v: want all set", m.UID, m.ResourceVersion, m.CreationTimestamp)
		}
		if want := map[string]string{"k": "v", "greeting": "hello world"}; !mapsEqual(cm.Data, want) {
			t.Errorf("data %v, want %v", cm.Data, want)
		}
	})
	t.Run("get -A", func(t *testing.T) {
		out := s.mustKubectl(t, "", "get", "configmaps", "-A")
		rows := strings.Split(strings.TrimSpace(out), "\n")
		if header := strings.Fields(rows[0]); len(header) < 2 || header[0] != "NAMESPACE" || header[1] != "NAME" {
			t.Fatalf("header %q, want NAMESPACE NAME ...", rows[0])
		}
		var got []string
		for _, row := range rows[1:] {
			f := strings.Fields(row)
			got = append(got, f[0]+"/"+f[1])
		}
		if want := []string{"default/plain", ns + "/cm1"}; !slices.Equal(got, want) {
			t.Errorf("rows %q, want %q\n%s", got, want, out)
		}
	})

	t.Run("label", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "label", "configmap", "cm1", "-n", ns, "x=y"), "configmap/cm1 labeled")
	})
	manifest := configMapManifest(ns, "cm2", map[string]string{"x": "y"}, map[string]string{"k": "2"})
	t.Run("create -f with validation", func(t *testing.T) {
		// kubectl validates by default: it reads /openapi/v3, finds that
		// the server takes fieldValidation, and sends Strict.
		wantOutput(t, s.mustKubectl(t, manifest, "create", "-f", "-"), "configmap/cm2 created")
	})
	t.Run("get -l", func(t *testing.T) {
		want := []string{"configmap/cm1", "configmap/cm2"}
		out := s.mustKubectl(t, "", "get", "cm", "-n", ns, "-l", "x=y", "-o", "name")
		if got := strings.Fields(out); !slices.Equal(got, want) {
			t.Errorf("-l x=y: %q, want %q", got, want)
		}
		out = s.mustKubectl(t, "", "get", "cm", "-A", "-l", "x notin (y)", "-o", "name")
		want = []string{"configmap/plain"}
		if got := strings.Fields(out); !slices.Equal(got, want) {
			t.Errorf("-A -l 'x notin (y)': %q, want %q", got, want)
		}
	})
	t.Run("delete", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "delete", "configmap", "cm1", "-n", ns), `configmap "cm1" deleted`)
		_, err := s.kubectl(t, "", "get", "configmap", "cm1", "-n", ns)
		var ke *kubectlError
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, `Error from server (NotFound): configmaps "cm1" not found`) {
			t.Errorf("get after delete: %v, want NotFound", err)
		}
		wantOutput(t, s.mustKubectl(t, "", "get", "configmaps", "-n", ns, "-o", "name"), "configmap/cm2")
	})
}

// TestKubectlApplyPatchScale drives the write verbs kubectl builds on PATCH:
// client-side apply (a strategic merge patch with the last applied
// configuration), server-side apply with a conflict and --force-conflicts,
// patch of each type, scale, and a foreground cascading delete.
func TestKubectlApplyPatchScale(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	s := startServer(t)
	manifest := func(image string, replicas int) string {
		return fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
"spec":{"containers":[{"name":"app","image":%q,"ports":[{"containerPort":80}]}]}}}}`, replicas, image)
	}
	get := func(t *testing.T, jsonpath string) string {
		t.Helper()
		return strings.TrimSpace(s.mustKubectl(t, "", "get", "deployment", "web", "-o", "jsonpath="+jsonpath))
	}
	t.Run("client-side apply", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, manifest("nginx:1.27", 2), "apply", "-f", "-"), "deployment.apps/web created")
		wantOutput(t, s.mustKubectl(t, manifest("nginx:1.28", 2), "apply", "-f", "-"), "deployment.apps/web configured")
		if got := get(t, "{.spec.template.spec.containers[0].image} {.metadata.generation}"); got != "nginx:1.28 2" {
			t.Errorf("image and generation after the second apply: %q", got)
		}
	})
	t.Run("server-side apply", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, manifest("nginx:1.28", 2), "apply", "--server-side", "-f", "-"), "deployment.apps/web serverside-applied")
		// Another manager changing replicas, which kubectl owns, conflicts.
		_, err := s.kubectl(t, manifest("nginx:1.28", 4), "apply", "--server-side", "--field-manager=other", "-f", "-")
		var ke *kubectlError
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, `Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`) {
			t.Fatalf("conflicting apply: %v", err)
		}
		wantOutput(t, s.mustKubectl(t, manifest("nginx:1.28", 4), "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-"),
			"deployment.apps/web serverside-applied")
		if got := get(t, `{.spec.replicas} {.metadata.managedFields[?(@.manager=="other")].operation}`); got != "4 Apply" {
			t.Errorf("replicas and other's operation after the forced apply: %q", got)
		}
	})
	t.Run("patch", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "patch", "deployment", "web", "--type=strategic",
			"-p", `{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}`), "deployment.apps/web patched")
		wantOutput(t, s.mustKubectl(t, "", "patch", "deployment", "web", "--type=merge", "-p", `{"metadata":{"labels":{"tier":"front"}}}`), "deployment.apps/web patched")
		wantOutput(t, s.mustKubectl(t, "", "patch", "deployment", "web", "--type=json", "-p", `[{"op":"replace","path":"/spec/replicas","value":1}]`), "deployment.apps/web patched")
		if got := get(t, "{.spec.template.spec.containers[*].name} {.metadata.labels.tier} {.spec.replicas}"); got != "side app front 1" {
			t.Errorf("after the patches: %q", got)
		}
	})
	t.Run("scale", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "scale", "deployment", "web", "--replicas=3"), "deployment.apps/web scaled")
		if got := get(t, "{.spec.replicas}"); got != "3" {
			t.Errorf("replicas after kubectl scale: %q", got)
		}
	})
	t.Run("delete --cascade=foreground", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "delete", "deployment", "web", "--cascade=foreground", "--wait"), `deployment.apps "web" deleted`)
		wantOutput(t, s.mustKubectl(t, "", "get", "deployments", "-o", "name"), "")
	})
}

// TestKubectlOpenAPI drives what kubectl reads /openapi for: explain of a
// built-in kind and of a custom resource (as soon as its CRD is
// established), and its default validation, which refuses unknown and
// wrong-typed fields with the messages kubectl prints against
// kube-apiserver v1.37.2 (captured with kubectl 1.32 against the real
// server).
func TestKubectlOpenAPI(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	s := startServer(t)

	t.Run("explain pods.spec.containers", func(t *testing.T) {
		out := s.mustKubectl(t, "", "explain", "pods.spec.containers")
		for _, want := range []string{"KIND:       Pod", "VERSION:    v1", "FIELD: containers <[]Container>",
			"name\t<string> -required-", "ports\t<[]ContainerPort>", "resources\t<ResourceRequirements>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain pods.spec.containers: no %q in\n%s", want, out)
			}
		}
		out = s.mustKubectl(t, "", "explain", "deployments.spec.strategy.rollingUpdate.maxSurge")
		if !strings.Contains(out, "GROUP:      apps") || !strings.Contains(out, "FIELD: maxSurge <IntOrString>") {
			t.Errorf("kubectl explain deployments...maxSurge:\n%s", out)
		}
	})

	for _, tc := range []struct{ name, manifest, want string }{
		{"unknown field", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad1","namespace":"default"},"data":{"a":"b"},"bogus":1}`,
			`Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"`},
		{"wrong type", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad2","namespace":"default"},"data":5}`,
			`Error from server (BadRequest): error when creating "STDIN": ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string`},
	} {
		t.Run("validation/"+tc.name, func(t *testing.T) {
			_, err := s.kubectl(t, tc.manifest, "create", "-f", "-")
			var ke *kubectlError
			if !errors.As(err, &ke) || strings.TrimSpace(ke.stderr) != tc.want {
				t.Fatalf("kubectl create -f of an invalid object: %v\nwant stderr %q", err, tc.want)
			}
		})
	}

	t.Run("explain a custom resource", func(t *testing.T) {
		crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.kapi.example"},
"spec":{"group":"kapi.example","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","required":["size"],"properties":{"size":{"type":"integer"},"color":{"type":"string"}}}}}}}]}}`
		wantOutput(t, s.mustKubectl(t, crd, "create", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/gadgets.kapi.example created")
		s.mustKubectl(t, "", "wait", "--for=condition=Established", "crd/gadgets.kapi.example", "--timeout=10s")
		// kubectl's HTTP cache revalidates the /openapi/v3 index with
		// If-Modified-Since, and the index's Last-Modified is the time of
		// the request to the second, as kube-apiserver's is: within the
		// second of create -f's read of it, the index is "not modified" and
		// the new group version not seen yet (against a cluster too).
		deadline := time.Now().Add(10 * time.Second)
		var out string
		var err error
		for {
			out, err = s.kubectl(t, "", "explain", "gadgets.spec")
			if err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"GROUP:      kapi.example", "KIND:       Gadget", "FIELD: spec <Object>", "size\t<integer> -required-", "color\t<string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl explain gadgets.spec: no %q in\n%s", want, out)
			}
		}
		// Its objects are validated by its schema (the server's Strict).
		_, err = s.kubectl(t, `{"apiVersion":"kapi.example/v1","kind":"Gadget","metadata":{"name":"g","namespace":"default"},"spec":{"size":1,"shape":"round"}}`, "create", "-f", "-")
		var ke *kubectlError
		const want = `Error from server (BadRequest): error when creating "STDIN": Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.shape"`
		if !errors.As(err, &ke) || strings.TrimSpace(ke.stderr) != want {
			t.Errorf("kubectl create -f of a Gadget with an unknown field: %v", err)
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestKubectlWatch(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	s := startServer(t)
	const ns = "watched"
	s.mustKubectl(t, "", "create", "namespace", ns)
	s.mustKubectl(t, "", "create", "configmap", "before", "-n", ns)

	t.Run("-o name", func(t *testing.T) {
		w := s.startKubectl(t, lines, "get", "configmaps", "-n", ns, "-w", "--output-watch-events", "-o", "name")
		// The initial list; the watch then starts from its resourceVersion,
		// so a change made from now on is seen even if the watch request is
		// not sent yet.
		w.expect(t, "configmap/before")
		s.mustKubectl(t, "", "create", "configmap", "after", "-n", ns)
		// kubectl's name printer does not print the event type.
		w.expect(t, "configmap/after")
	})
	t.Run("-o json event types", func(t *testing.T) {
		w := s.startKubectl(t, watchEvents, "get", "configmaps", "-n", ns, "-w", "--output-watch-events", "-o", "json")
		// The initial list, in name order.
		w.expect(t, "ADDED after")
		w.expect(t, "ADDED before")
		s.mustKubectl(t, "", "create", "configmap", "changing", "-n", ns, "--from-literal=k=1")
		w.expect(t, "ADDED changing")
		// replace is a PUT.
		s.mustKubectl(t, configMapManifest(ns, "changing", nil, map[string]string{"k": "2"}), "replace", "-f", "-")
		w.expect(t, "MODIFIED changing")
		s.mustKubectl(t, "", "delete", "configmap", "changing", "-n", ns)
		w.expect(t, "DELETED changing")
	})
}

func TestKubeconfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		https bool
		token string
	}{
		{name: "http"},
		{name: "tls", args: []string{"--tls"}, https: true, token: uncheckedToken},
		{name: "tls and token", args: []string{"--tls", "--token=s3cret"}, https: true, token: "s3cret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.args...)
			fi, err := os.Stat(s.kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
				t.Errorf("kubeconfig mode %v, want 0600", fi.Mode().Perm())
			}
			entries, err := os.ReadDir(s.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left next to the kubeconfig", e.Name())
				}
			}

			kc := readKubeconfig(t, s.kubeconfig)
			if kc.APIVersion != "v1" || kc.Kind != "Config" {
				t.Errorf("apiVersion %q kind %q, want v1 Config", kc.APIVersion, kc.Kind)
			}
			if len(kc.Clusters) != 1 || len(kc.Users) != 1 || len(kc.Contexts) != 1 {
				t.Fatalf("%d clusters, %d users, %d contexts; want one of each", len(kc.Clusters), len(kc.Users), len(kc.Contexts))
			}
			c := kc.Contexts[0]
			if kc.CurrentContext != c.Name || c.Context.Cluster != kc.Clusters[0].Name || c.Context.User != kc.Users[0].Name || c.Context.Namespace != "default" {
				t.Errorf("current-context %q, context %+v: want the context naming the cluster, the user and namespace default", kc.CurrentContext, c)
			}
			server := kc.Clusters[0].Cluster.Server
			if server != s.url {
				t.Errorf("server %q, want the ready line's %q", server, s.url)
			}
			u, err := url.Parse(server)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{false: "http", true: "https"}[tc.https]; u.Scheme != want {
				t.Errorf("scheme %q, want %q", u.Scheme, want)
			}
			if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
				t.Errorf("server host %q, want a loopback address", u.Hostname())
			}
			if got := kc.Users[0].User.Token; got != tc.token {
				t.Errorf("token %q, want %q", got, tc.token)
			}

			pool := kc.caPool(t)
			if (pool != nil) != tc.https {
				t.Fatalf("certificate-authority-data present: %v, want %v", pool != nil, tc.https)
			}
			if tc.https {
				// The server's certificate verifies against the CA, for the
				// server URL's host (the client checks), and not without it.
				req, _ := http.NewRequest(http.MethodGet, server+"/version", nil)
				req.Header.Set("Authorization", "Bearer "+tc.token)
				resp, err := newClient(t, pool).Do(req)
				if err != nil {
					t.Fatalf("with the kubeconfig's CA: %v", err)
				}
				_ = resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Errorf("protocol %s, want HTTP/2", resp.Proto)
				}
				var ue x509.UnknownAuthorityError
				if _, err := newClient(t, x509.NewCertPool()).Get(server + "/version"); !errors.As(err, &ue) {
					t.Errorf("without the CA: %v, want x509.UnknownAuthorityError", err)
				}
			}

			if _, err := exec.LookPath("kubectl"); err != nil {
				return
			}
			out := s.mustKubectl(t, "", "config", "view", "--minify", "--raw", "-o", "jsonpath={.clusters[0].cluster.server} {.users[0].user.token}")
			wantOutput(t, out, strings.TrimSpace(server+" "+tc.token))
			wantOutput(t, s.mustKubectl(t, "", "get", "namespace", "default", "-o", "name"), "namespace/default")
		})
	}
}

func TestToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token"
	s := startServer(t, "--tls", "--token="+token)
	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"no credentials", "/api/v1/namespaces", "", http.StatusUnauthorized},
		{"wrong token", "/api/v1/namespaces", "Bearer nope", http.StatusUnauthorized},
		{"token prefix", "/api/v1/namespaces", "Bearer s3cret", http.StatusUnauthorized},
		{"other scheme", "/api/v1/namespaces", "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+token)), http.StatusUnauthorized},
		{"discovery without credentials", "/api", "", http.StatusUnauthorized},
		{"token", "/api/v1/namespaces", "Bearer " + token, http.StatusOK},
		{"scheme is case-insensitive", "/api/v1/namespaces", "bearer " + token, http.StatusOK},
		{"public path without credentials", "/readyz", "", http.StatusOK},
		{"version without credentials", "/version", "", http.StatusOK},
		{"public path with a wrong token", "/readyz", "Bearer nope", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, s.url+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("%s: %s, want %d\n%s", tc.path, resp.Status, tc.want, body)
			}
			if tc.want != http.StatusUnauthorized {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			// kube-apiserver's body, field for field.
			var st map[string]any
			if err := json.Unmarshal(body, &st); err != nil {
				t.Fatalf("decoding %s: %v", body, err)
			}
			want := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
				"status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": float64(401)}
			if fmt.Sprint(st) != fmt.Sprint(want) {
				t.Errorf("body %v, want %v", st, want)
			}
		})
	}

	if _, err := exec.LookPath("kubectl"); err != nil {
		return
	}
	t.Run("kubectl", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "get", "namespace", "default", "-o", "name"), "namespace/default")
		_, err := s.kubectl(t, "", "--token=nope", "get", "namespaces")
		var ke *kubectlError
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, "(Unauthorized)") {
			t.Errorf("kubectl with a wrong token: %v, want Unauthorized", err)
		}
	})
}

// TestShutdown checks that cancelling run's context ends open watches, makes
// run return nil, frees the port and leaves no goroutine behind. It does not
// run in parallel, so that the goroutine check sees only its own.
func TestShutdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"http", nil},
		{"tls", []string{"--tls"}}, // HTTP/2
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			// A long shutdown timeout: if watches did not end, run would not
			// return before stopTimeout, and the test would fail.
			s := startServer(t, append([]string{"--shutdown-timeout=1h", "--log-level=debug"}, tc.args...)...)

			req, err := http.NewRequest(http.MethodGet, s.url+"/api/v1/namespaces?watch=1", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+uncheckedToken)
			resp, err := s.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("watch: %s", resp.Status)
			}
			events := json.NewDecoder(resp.Body)
			var ev struct{ Type string }
			if err := events.Decode(&ev); err != nil || ev.Type != "ADDED" {
				t.Fatalf("first watch event: %+v, %v; want ADDED", ev, err)
			}
			u, err := url.Parse(s.url)
			if err != nil {
				t.Fatal(err)
			}

			if err := s.stop(); err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, s.stderr)
			}
			// The watch ended cleanly (a complete response), after the events
			// for the other system namespaces.
			for {
				if err := events.Decode(&ev); err != nil {
					if err != io.EOF {
						t.Errorf("watch stream: %v, want a clean end", err)
					}
					break
				}
			}
			for _, want := range []string{`msg="shutting down"`, "msg=stopped"} {
				if !strings.Contains(s.stderr.String(), want) {
					t.Errorf("log has no %s:\n%s", want, s.stderr)
				}
			}
			ln, err := net.Listen("tcp", u.Host)
			if err != nil {
				t.Fatalf("port not released: %v", err)
			}
			_ = ln.Close()
			s.client.CloseIdleConnections()
			goleak.VerifyNone(t, before)
		})
	}
}

// TestMainProcess runs main in a child process (the test binary itself):
// SIGINT and SIGTERM stop it with status 0, a bad flag exits with 2.
func TestMainProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), startTimeout+stopTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "--log-level=warn")
			cmd.Env = append(os.Environ(), mainEnv+"=1")
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if !strings.HasPrefix(line, readyPrefix+"http://127.0.0.1:") {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("first line %q (%v), want the ready line\nstderr:\n%s", line, err, &stderr)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("after %v: %v, want exit status 0\nstderr:\n%s", sig, err, &stderr)
			}
		})
	}
	t.Run("bad flag", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "--no-such-flag")
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%v, want exit status 2\n%s", err, out)
		}
		if !strings.Contains(string(out), "flag provided but not defined: -no-such-flag") || !strings.Contains(string(out), "Usage: kapi-apiserver") {
			t.Errorf("output does not give the error and the usage:\n%s", out)
		}
	})
}
