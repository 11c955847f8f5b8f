package compat

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

var (
	// kubeconfigFlag is -kubeconfig. controller-runtime registers a flag of
	// that name on the default FlagSet when it is imported (package
	// sigs.k8s.io/controller-runtime/pkg/client/config); the tests read that
	// one, or define it if it is not there.
	kubeconfigFlag = func() func() string {
		if f := flag.Lookup("kubeconfig"); f != nil {
			return f.Value.String
		}
		s := flag.String("kubeconfig", "", "kubeconfig of a cluster to test instead of kapi-apiserver")
		return func() string { return *s }
	}()
	binaryFlag = flag.String("kapi-apiserver", "", "an already built kapi-apiserver `binary` to start (default: go build ./cmd/kapi-apiserver of the enclosing module)")
)

// kubeconfigPath is the kubeconfig every test loads: the one given with
// -kubeconfig or KUBECONFIG, or the one kapi-apiserver wrote. TestMain also
// sets KUBECONFIG to it, so that clients that load their configuration the
// usual way (controller-runtime's config.GetConfig, envtest) find it.
var kubeconfigPath string

// target says what the tests run against, for messages.
var target string

func TestMain(m *testing.M) {
	flag.Parse()
	// controller-runtime warns (with a stack trace) when its logger is never
	// set; errors of its controllers go to standard error.
	ctrllog.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	os.Exit(run(m))
}

func run(m *testing.M) int {
	before := goleak.IgnoreCurrent()
	path := kubeconfigFlag()
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path != "" {
		kubeconfigPath = path
		target = "the cluster of kubeconfig " + path
	} else {
		srv, err := startKapi()
		if err != nil {
			fmt.Fprintln(os.Stderr, "compat:", err)
			return 1
		}
		defer func() {
			if err := srv.stop(); err != nil {
				fmt.Fprintln(os.Stderr, "compat:", err)
			}
		}()
		kubeconfigPath = srv.kubeconfig
		target = "kapi-apiserver (" + srv.binary + ")"
	}
	if err := os.Setenv("KUBECONFIG", kubeconfigPath); err != nil {
		fmt.Fprintln(os.Stderr, "compat:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "compat: testing", target)
	code := m.Run()
	if code == 0 {
		// Idle keep-alive connections of client-go's cached transports
		// belong to net/http; everything the tests started must be gone.
		if err := goleak.Find(before,
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("net/http.(*http2ClientConn).readLoop"),
			goleak.IgnoreTopFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			// controller-runtime's metadata-only informers wrap their watch
			// in watch.Filter, whose goroutine blocks forever when the
			// reflector stops while an event is in flight: a known leak of
			// the library (kubernetes/kubernetes#113254), not of the tests.
			goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "compat: goroutines leaked by the tests:", err)
			return 1
		}
	}
	return code
}

// kapiServer is a kapi-apiserver process started by TestMain.
type kapiServer struct {
	binary     string
	kubeconfig string
	dir        string
	cmd        *exec.Cmd
	stdoutDone chan struct{}
}

// moduleRoot is the directory of the main kapi module (bench/compat → ../..).
func moduleRoot() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("main module not found: %w", err)
	}
	if !strings.HasPrefix(string(b), "module github.com/kapi-dev/kapi\n") {
		return "", fmt.Errorf("%s/go.mod is not kapi's main module", root)
	}
	return root, nil
}

// startKapi builds (unless -kapi-apiserver is given) and starts
// kapi-apiserver on a free loopback port, and waits for its ready line.
func startKapi() (*kapiServer, error) {
	dir, err := os.MkdirTemp("", "kapi-compat-")
	if err != nil {
		return nil, err
	}
	s := &kapiServer{dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig"), binary: *binaryFlag}
	fail := func(err error) (*kapiServer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.binary == "" {
		root, err := moduleRoot()
		if err != nil {
			return fail(err)
		}
		s.binary = filepath.Join(dir, "kapi-apiserver")
		build := exec.Command("go", "build", "-o", s.binary, "./cmd/kapi-apiserver")
		build.Dir = root
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fail(fmt.Errorf("go build ./cmd/kapi-apiserver in %s: %w", root, err))
		}
	}
	s.cmd = exec.Command(s.binary, "--listen", "127.0.0.1:0", "--write-kubeconfig", s.kubeconfig)
	s.cmd.Stderr = os.Stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := s.cmd.Start(); err != nil {
		return fail(err)
	}
	ready := make(chan error, 1)
	s.stdoutDone = make(chan struct{})
	go func() { // ends when the process closes its standard output
		defer close(s.stdoutDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on") {
				ready <- nil
			}
		}
		ready <- errors.New("kapi-apiserver exited before it was ready")
		io.Copy(io.Discard, stdout)
	}()
	select {
	case err := <-ready:
		if err == nil {
			return s, nil
		}
		s.stop()
		return fail(err)
	case <-time.After(30 * time.Second):
		s.stop()
		return fail(errors.New("kapi-apiserver not ready after 30s"))
	}
}

// stop ends the server with SIGTERM (SIGKILL after 15s) and removes its
// directory.
func (s *kapiServer) stop() error {
	defer os.RemoveAll(s.dir)
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		<-s.stdoutDone
		if err != nil {
			return fmt.Errorf("kapi-apiserver: %w", err)
		}
		return nil
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-done
		<-s.stdoutDone
		return errors.New("kapi-apiserver did not stop within 15s of SIGTERM")
	}
}

// restConfig loads the kubeconfig as client-go does (clientcmd), with
// client-go's defaults untouched.
func restConfig(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		t.Fatalf("load kubeconfig %s: %v", kubeconfigPath, err)
	}
	return cfg
}

// setupClient is the clientset the tests use to prepare and clean up; it
// has no client-side rate limit, so that preparing does not eat into the
// rate limit of the clients under test.
func setupClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	cfg := restConfig(t)
	cfg.QPS = -1
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// suffix is a short random string for names that must not collide with
// earlier runs or other users of a shared cluster.
func suffix() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// newNamespace creates a namespace compat-<prefix>-<random> that is deleted
// when the test ends, with its default ServiceAccount (a cluster's
// serviceaccount controller creates it; pods cannot be created before it
// exists). It returns the namespace's name.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	cs := setupClient(t)
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "compat-" + prefix + "-" + suffix()},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			// Not a failure of the test: deletes are checked where they
			// are the subject.
			t.Logf("cleanup: delete namespace %s: %v", ns.Name, err)
		}
	})
	_, err = cs.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ServiceAccount default: %v", err)
	}
	return ns.Name
}

// eventually calls cond until it returns nil or timeout passes, and fails
// the test with cond's last error then.
func eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		err := cond(ctx)
		if err != nil && last != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "would exceed context deadline")) {
			return false, nil // keep the error of the last complete attempt
		}
		last = err
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v: %v", what, timeout, last)
	}
}

// testContext is a context that ends with the test (or after 50s).
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	t.Cleanup(cancel)
	return ctx
}
