package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	allOn := map[string]bool{ctrlGarbageCollector: true, ctrlNamespace: true, ctrlServiceAccount: true, ctrlRootCAPublisher: true}
	want := options{
		listen: "127.0.0.1:0", historyWindow: 5 * time.Minute, bookmarkInterval: time.Minute,
		minWatchTimeout: 30 * time.Minute, shutdownTimeout: 10 * time.Second, logLevel: slog.LevelInfo,
		controllers: allOn, serviceRange: netip.MustParsePrefix("10.96.0.0/12"), nodePortRange: registry.PortRange{Base: 30000, Size: 2768},
		anonymousAuth: true, maxInFlight: 400, maxMutatingInFlight: 200,
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("defaults %+v, want %+v", *o, want)
	}

	o, err = parseFlags([]string{"--listen=[::1]:8080", "--write-kubeconfig", "/tmp/kc", "--tls", "--token=t",
		"--history-window=1m", "--bookmark-interval=2s", "--min-watch-timeout=3s", "--shutdown-timeout=4s", "--log-level=DEBUG",
		"--controllers=*,-serviceaccount-controller,-garbage-collector-controller", "--service-cluster-ip-range=10.0.0.0/24",
		"--service-node-port-range=20000+99", "--advertise-address=192.0.2.1",
		"--client-ca-file=ca.crt", "--token-auth-file=tokens.csv", "--anonymous-auth=false", "--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://issuer", "--service-account-key-file=a.pub,b.pub", "--service-account-key-file=c.pub",
		"--service-account-signing-key-file=sa.key", "--max-requests-inflight=0", "--max-mutating-requests-inflight=7"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want = options{
		listen: "[::1]:8080", kubeconfig: "/tmp/kc", tls: true, token: "t", historyWindow: time.Minute,
		bookmarkInterval: 2 * time.Second, minWatchTimeout: 3 * time.Second, shutdownTimeout: 4 * time.Second, logLevel: slog.LevelDebug,
		controllers:  map[string]bool{ctrlGarbageCollector: false, ctrlNamespace: true, ctrlServiceAccount: false, ctrlRootCAPublisher: true},
		serviceRange: netip.MustParsePrefix("10.0.0.0/24"), nodePortRange: registry.PortRange{Base: 20000, Size: 100},
		advertise:    netip.MustParseAddr("192.0.2.1"),
		clientCAFile: "ca.crt", tokenAuthFile: "tokens.csv", authorizationMode: apiserver.AuthorizationRBAC,
		serviceAccountIssuer: "https://issuer", serviceAccountKeys: fileList{"a.pub", "b.pub", "c.pub"},
		serviceAccountSigning: "sa.key", maxInFlight: 0, maxMutatingInFlight: 7,
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("parsed %+v, want %+v", *o, want)
	}

	for _, tc := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"--nope"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--history-window=0s"}, "--history-window must be positive"},
		{[]string{"--bookmark-interval=-1s"}, "--bookmark-interval must be positive"},
		{[]string{"--min-watch-timeout=0"}, "--min-watch-timeout must be positive"},
		{[]string{"--shutdown-timeout=0"}, "--shutdown-timeout must be positive"},
		{[]string{"--history-window=soon"}, "invalid value"},
		{[]string{"--log-level=chatty"}, "invalid value"},
		{[]string{"--tls", "--token=a b"}, "--token must not contain spaces"},
		{[]string{"--token=t"}, "--token needs TLS"},
		{[]string{"--token-auth-file=f"}, "need TLS"},
		{[]string{"--client-ca-file=f"}, "need TLS"},
		{[]string{"--tls-cert-file=c"}, "go together"},
		{[]string{"--tls-private-key-file=k"}, "go together"},
		{[]string{"--tls", "--tls-cert-file=c", "--tls-private-key-file=k"}, "not both"},
		{[]string{"--authorization-mode=Webhook"}, `not "Webhook"`},
		{[]string{"--authorization-mode=RBAC,AlwaysAllow"}, "one of AlwaysAllow and RBAC"},
		{[]string{"--authorization-mode=RBAC,RBAC"}, "listed twice"},
		{[]string{"--authorization-mode=Node"}, "add RBAC"},
		{[]string{"--max-requests-inflight=-1"}, "can not be negative"},
		{[]string{"--max-mutating-requests-inflight=-1"}, "can not be negative"},
		{[]string{"--controllers=*,-kubelet"}, `unknown controller "kubelet"`},
		{[]string{"--service-cluster-ip-range=fd00::/108"}, "--service-cluster-ip-range"},
		{[]string{"--service-cluster-ip-range=10.0.0.0/31"}, "--service-cluster-ip-range"},
		{[]string{"--service-node-port-range=32767-30000"}, "--service-node-port-range"},
		{[]string{"--advertise-address=0.0.0.0"}, "--advertise-address"},
		{[]string{"--etcd-servers=http://127.0.0.1:2379", "--data-dir=/tmp/x"}, "--etcd-servers and --data-dir cannot be used together"},
		{[]string{"--etcd-cafile=/tmp/ca.crt"}, "the --etcd-*file flags need --etcd-servers"},
		{[]string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-certfile=/tmp/c.crt"}, "--etcd-certfile and --etcd-keyfile go together"},
		{[]string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-cafile=/nonexistent/ca.crt"}, "--etcd-cafile"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := parseFlags(tc.args, &stderr)
			var ue *usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a usageError with %q", err, tc.want)
			}
			if !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), "Usage: kapi-apiserver") {
				t.Errorf("stderr does not give the error and the usage:\n%s", &stderr)
			}
			if code := exitCode(err, io.Discard); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
		})
	}

	o, err = parseFlags([]string{"--etcd-servers=http://127.0.0.1:2379,http://127.0.0.1:2380", "--etcd-prefix=/kapi", "--etcd-compaction-interval=0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (apiserver.EtcdConfig{Servers: []string{"http://127.0.0.1:2379", "http://127.0.0.1:2380"}, Prefix: "/kapi", CompactInterval: -1}); !reflect.DeepEqual(o.etcd, want) {
		t.Errorf("etcd flags: %+v, want %+v", o.etcd, want)
	}

	var stderr bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
	for _, f := range []string{"-listen", "-write-kubeconfig", "-tls", "-token", "-history-window", "-bookmark-interval", "-min-watch-timeout", "-shutdown-timeout", "-log-level",
		"-tls-cert-file", "-tls-private-key-file", "-client-ca-file", "-token-auth-file", "-anonymous-auth", "-authorization-mode",
		"-service-account-issuer", "-service-account-key-file", "-service-account-signing-key-file",
		"-max-requests-inflight", "-max-mutating-requests-inflight"} {
		if !strings.Contains(stderr.String(), f) {
			t.Errorf("usage does not list %s:\n%s", f, &stderr)
		}
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{&usageError{errors.New("bad")}, 2, ""},
		{errors.New("listening: boom"), 1, "kapi-apiserver: listening: boom\n"},
	} {
		var stderr bytes.Buffer
		if code := exitCode(tc.err, &stderr); code != tc.code || stderr.String() != tc.stderr {
			t.Errorf("exitCode(%v) = %d, %q; want %d, %q", tc.err, code, &stderr, tc.code, tc.stderr)
		}
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad address", []string{"--listen=127.0.0.1:http-ish"}, "listening"},
		{"port in use", []string{"--listen=" + busy.Addr().String()}, "address already in use"},
		{"kubeconfig directory missing", []string{"--write-kubeconfig=" + t.TempDir() + "/no/such/dir/kubeconfig"}, "writing the kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v, want an error with %q", err, tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing (no ready line)", &stdout)
			}
		})
	}
}

func TestServerURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr  string
		https bool
		want  string
	}{
		{"127.0.0.1:8080", false, "http://127.0.0.1:8080"},
		{"127.0.0.1:8443", true, "https://127.0.0.1:8443"},
		{"[::1]:80", false, "http://[::1]:80"},
		{"0.0.0.0:80", false, "http://127.0.0.1:80"},
		{"[::]:80", true, "https://127.0.0.1:80"},
		{"10.1.2.3:6443", true, "https://10.1.2.3:6443"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := serverURL(addr, tc.https); got != tc.want {
			t.Errorf("serverURL(%s, %v) = %s, want %s", tc.addr, tc.https, got, tc.want)
		}
	}
}

// TestDebugLog checks that --log-level=debug logs requests.
func TestDebugLog(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--log-level=debug")
	resp, err := s.client.Get(s.url + "/api/v1/namespaces/default/configmaps/nope?x=1")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	// The line is written once the handler returns, which may be after the
	// client has the response: wait for it.
	want := []string{"level=DEBUG", "msg=request", "method=GET", `uri="/api/v1/namespaces/default/configmaps/nope?x=1"`, "code=404"}
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		for line := range strings.Lines(s.stderr.String()) {
			if containsAll(line, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q:\n%s", want, s.stderr)
		}
		<-tick.C
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
