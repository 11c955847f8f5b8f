package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// testPluginPath is the exec credential plugin built from
// internal/testplugin by TestMain.
var testPluginPath string

// TestMain builds the test exec plugin, runs the tests and checks that no
// goroutine leaked. Other tests of the package that need set-up should add
// it here: a package has one TestMain.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kapi-client-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPluginPath, err = buildTestPlugin(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// buildTestPlugin compiles internal/testplugin into dir.
func buildTestPlugin(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the test exec plugin: %w", err)
	}
	out := filepath.Join(dir, "testplugin")
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	cmd := exec.Command(goTool, "build", "-o", out, "./internal/testplugin")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./internal/testplugin: %v\n%s", err, b)
	}
	return out, nil
}

// execTestClock is a settable clock.
type execTestClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *execTestClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *execTestClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// execT0 is the start of the tests' fake time.
var execT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// testPlugin is the test plugin configured by environment variables.
type testPlugin struct {
	cfg     *ExecConfig
	counter string
}

func newTestPlugin(t *testing.T, env map[string]string) *testPlugin {
	t.Helper()
	p := &testPlugin{counter: filepath.Join(t.TempDir(), "runs")}
	e := map[string]string{"TESTPLUGIN_COUNTER": p.counter}
	maps.Copy(e, env)
	p.cfg = &ExecConfig{
		Command:         testPluginPath,
		APIVersion:      execAPIVersionV1,
		InteractiveMode: execInteractiveNever,
		Env:             e,
	}
	return p
}

// runs returns how many times the plugin ran.
func (p *testPlugin) runs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(p.counter)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// authenticator returns an authenticator for the plugin with clock (if not
// nil) and no terminal.
func (p *testPlugin) authenticator(t *testing.T, clock *execTestClock) *ExecAuthenticator {
	t.Helper()
	a, err := NewExecAuthenticator(p.cfg, &ExecCluster{Server: "https://kapi.test"})
	if err != nil {
		t.Fatal(err)
	}
	if clock != nil {
		a.now = clock.Now
	}
	a.isTerminal = func() bool { return false }
	a.stdin = strings.NewReader("")
	a.stderr = &bytes.Buffer{}
	a.logger = slog.New(slog.DiscardHandler)
	return a
}

func wantToken(t *testing.T, a *ExecAuthenticator, want string) {
	t.Helper()
	got, err := a.Token(context.Background())
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	if got != want {
		t.Fatalf("Token = %q, want %q", got, want)
	}
}

func wantRuns(t *testing.T, p *testPlugin, want int) {
	t.Helper()
	if got := p.runs(t); got != want {
		t.Fatalf("plugin ran %d times, want %d", got, want)
	}
}

func TestExecTokenIsCached(t *testing.T) {
	p := newTestPlugin(t, map[string]string{"TESTPLUGIN_TOKEN": "tok-{n}"})
	a := p.authenticator(t, nil)
	wantRuns(t, p, 0) // not run before it is needed
	wantToken(t, a, "tok-1")
	wantToken(t, a, "tok-1")
	cert, err := a.ClientCertificate(context.Background())
	if err != nil || cert != nil {
		t.Errorf("ClientCertificate = %v, %v; want nil, nil for a token-only plugin", cert, err)
	}
	wantRuns(t, p, 1)
}

func TestExecExpiry(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration
		// the credential is refreshed from lifetime-margin on
		margin time.Duration
	}{
		{"long-lived: refreshed 10s early", time.Hour, 10 * time.Second},
		{"short-lived: refreshed a fifth of its lifetime early", 20 * time.Second, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Run n returns a credential expiring at execT0 + n*lifetime.
			p := newTestPlugin(t, map[string]string{
				"TESTPLUGIN_TOKEN":       "tok-{n}",
				"TESTPLUGIN_EXPIRY":      execT0.Add(tt.lifetime).Format(time.RFC3339),
				"TESTPLUGIN_EXPIRY_STEP": tt.lifetime.String(),
			})
			clock := &execTestClock{t: execT0}
			a := p.authenticator(t, clock)
			wantToken(t, a, "tok-1")

			clock.Set(execT0.Add(tt.lifetime - tt.margin - time.Second))
			wantToken(t, a, "tok-1")
			wantRuns(t, p, 1)

			clock.Set(execT0.Add(tt.lifetime - tt.margin))
			wantToken(t, a, "tok-2")
			wantRuns(t, p, 2)

			// Well past the first expiry, before the second: cached.
			clock.Set(execT0.Add(tt.lifetime + tt.lifetime/2))
			wantToken(t, a, "tok-2")
			wantRuns(t, p, 2)
		})
	}
}

func TestExecExpiredCredentialIsNotReused(t *testing.T) {
	// A plugin that always returns the same, already expired credential is
	// run on every call (as in client-go) rather than its credential cached.
	p := newTestPlugin(t, map[string]string{
		"TESTPLUGIN_TOKEN":  "tok-{n}",
		"TESTPLUGIN_EXPIRY": execT0.Add(-time.Minute).Format(time.RFC3339),
	})
	a := p.authenticator(t, &execTestClock{t: execT0})
	wantToken(t, a, "tok-1")
	wantToken(t, a, "tok-2")
}

func TestExecRefreshFailureKeepsValidCredential(t *testing.T) {
	p := newTestPlugin(t, map[string]string{
		"TESTPLUGIN_TOKEN":      "tok-{n}",
		"TESTPLUGIN_EXPIRY":     execT0.Add(time.Hour).Format(time.RFC3339),
		"TESTPLUGIN_FAIL_AFTER": "1",
	})
	clock := &execTestClock{t: execT0}
	a := p.authenticator(t, clock)
	wantToken(t, a, "tok-1")

	// Time to refresh, but the plugin fails: the valid credential is used.
	clock.Set(execT0.Add(time.Hour - 5*time.Second))
	wantToken(t, a, "tok-1")
	wantRuns(t, p, 2)
	// Not retried at once.
	wantToken(t, a, "tok-1")
	wantRuns(t, p, 2)

	// Expired: the failure is the answer.
	clock.Set(execT0.Add(time.Hour + time.Second))
	_, err := a.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 1; stderr: run 3: failing after 1 runs") {
		t.Fatalf("Token error = %v", err)
	}
	wantRuns(t, p, 3)
}

func TestExecConcurrentCallersShareOneRun(t *testing.T) {
	p := newTestPlugin(t, map[string]string{
		"TESTPLUGIN_TOKEN":       "tok-{n}",
		"TESTPLUGIN_SLEEP":       "200ms",
		"TESTPLUGIN_EXPIRY":      execT0.Add(time.Hour).Format(time.RFC3339),
		"TESTPLUGIN_EXPIRY_STEP": "1h",
	})
	clock := &execTestClock{t: execT0}
	a := p.authenticator(t, clock)

	fetch := func(want string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 32)
		for i := range 32 {
			wg.Go(func() {
				var (
					got string
					err error
				)
				if i%2 == 0 {
					got, err = a.Token(context.Background())
				} else {
					got, _, err = a.bearer(context.Background())
				}
				if err == nil && got != want {
					err = fmt.Errorf("got %q, want %q", got, want)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	}
	fetch("tok-1")
	wantRuns(t, p, 1)

	clock.Set(execT0.Add(2 * time.Hour))
	fetch("tok-2")
	wantRuns(t, p, 2)
}

func TestExecContextCancellation(t *testing.T) {
	p := newTestPlugin(t, map[string]string{
		"TESTPLUGIN_TOKEN": "tok-{n}",
		"TESTPLUGIN_SLEEP": "1s",
	})
	a := p.authenticator(t, nil)

	// The caller that started the run gives up: the plugin is killed, and a
	// caller that was waiting for it runs it again instead of failing.
	leaderCtx, cancel := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := a.Token(leaderCtx)
		leaderErr <- err
	}()
	waitForFlight(t, a)
	waiter := make(chan string, 1)
	go func() {
		tok, err := a.Token(context.Background())
		if err != nil {
			tok = err.Error()
		}
		waiter <- tok
	}()
	time.Sleep(50 * time.Millisecond) // let the waiter wait
	cancel()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Errorf("leader error = %v, want context.Canceled", err)
	}
	if got := <-waiter; got != "tok-1" {
		t.Errorf("waiter got %q, want tok-1", got)
	}
	wantRuns(t, p, 1) // the killed run never got to count itself

	// A waiter whose own context ends stops waiting.
	a2 := newTestPlugin(t, map[string]string{"TESTPLUGIN_TOKEN": "x", "TESTPLUGIN_SLEEP": "1s"}).authenticator(t, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := a2.Token(context.Background()); err != nil {
			t.Errorf("leader: %v", err)
		}
	}()
	waitForFlight(t, a2)
	ctx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := a2.Token(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter error = %v, want context.DeadlineExceeded", err)
	}
	<-done
}

// waitForFlight waits until a plugin run of a is in progress.
func waitForFlight(t *testing.T, a *ExecAuthenticator) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.mu.Lock()
		running := a.flight != nil
		a.mu.Unlock()
		if running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("plugin run did not start")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestExecErrors(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := newTLSTestCA(t).issue(t, "exec-user", nil, nil)
	certFile := filepath.Join(dir, "cert.pem")
	writeKubeconfigTestFile(t, certFile, string(certPEM))
	keyFile := filepath.Join(dir, "key.pem")
	writeKubeconfigTestFile(t, keyFile, string(keyPEM))
	otherCert, _ := newTLSTestCA(t).issue(t, "other", nil, nil)
	otherCertFile := filepath.Join(dir, "other.pem")
	writeKubeconfigTestFile(t, otherCertFile, string(otherCert))

	v1 := `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"`
	tests := []struct {
		name   string
		env    map[string]string
		modify func(*ExecConfig)
		want   []string
	}{
		{
			name: "exit status and stderr",
			env:  map[string]string{"TESTPLUGIN_EXIT": "3", "TESTPLUGIN_STDERR": "boom: \x1b[31mbad\x1b[0m credentials\n"},
			want: []string{`exec plugin "` + testPluginPath + `": exit status 3; stderr: boom: [31mbad[0m credentials`},
		},
		{
			name: "long stderr is cut to its tail",
			env:  map[string]string{"TESTPLUGIN_EXIT": "1", "TESTPLUGIN_STDERR": strings.Repeat("x", 5000) + " the end"},
			want: []string{"exit status 1; stderr: …xxx", "x the end"},
		},
		{
			name: "missing command with install hint",
			modify: func(c *ExecConfig) {
				c.Command = filepath.Join(dir, "no-such-plugin")
				c.InstallHint = "Install it:\n  brew install no-such-plugin"
			},
			want: []string{`exec plugin "` + filepath.Join(dir, "no-such-plugin") + `": executable not found`, "\n\nInstall it:\n  brew install no-such-plugin"},
		},
		{
			name:   "command not in PATH",
			modify: func(c *ExecConfig) { c.Command = "kapi-test-no-such-plugin"; c.InstallHint = "see kapi.dev/auth" },
			want:   []string{`exec plugin "kapi-test-no-such-plugin": executable not found`, "see kapi.dev/auth"},
		},
		{
			name: "stdout is not JSON",
			env:  map[string]string{"TESTPLUGIN_STDOUT": "hello"},
			want: []string{"decoding ExecCredential from stdout"},
		},
		{
			name: "empty stdout",
			env:  map[string]string{"TESTPLUGIN_STDOUT": ""},
			want: []string{"decoding ExecCredential from stdout"},
		},
		{
			name: "wrong kind",
			env:  map[string]string{"TESTPLUGIN_STDOUT": `{"apiVersion":"client.authentication.k8s.io/v1","kind":"Pod"}`},
			want: []string{`stdout has kind "Pod", want ExecCredential`},
		},
		{
			name: "other apiVersion",
			env:  map[string]string{"TESTPLUGIN_TOKEN": "t", "TESTPLUGIN_API_VERSION": execAPIVersionV1beta1},
			want: []string{`returned apiVersion "client.authentication.k8s.io/v1beta1", but "client.authentication.k8s.io/v1" is configured`},
		},
		{
			name: "no status",
			env:  map[string]string{"TESTPLUGIN_STDOUT": v1 + "}"},
			want: []string{"ExecCredential has no status"},
		},
		{
			name: "empty status",
			env:  map[string]string{"TESTPLUGIN_STDOUT": v1 + `,"status":{}}`},
			want: []string{"neither a token nor a client certificate"},
		},
		{
			name: "certificate without key",
			env:  map[string]string{"TESTPLUGIN_CERT": certFile},
			want: []string{"only one of clientCertificateData and clientKeyData"},
		},
		{
			name: "certificate and key do not match",
			env:  map[string]string{"TESTPLUGIN_CERT": otherCertFile, "TESTPLUGIN_KEY": keyFile},
			want: []string{"status.clientCertificateData/clientKeyData: tls: private key does not match public key"},
		},
		{
			name: "bad expirationTimestamp",
			env:  map[string]string{"TESTPLUGIN_STDOUT": v1 + `,"status":{"token":"t","expirationTimestamp":"tomorrow"}}`},
			want: []string{"status.expirationTimestamp: parsing time"},
		},
		{
			name:   "Always needs a terminal",
			env:    map[string]string{"TESTPLUGIN_TOKEN": "t"},
			modify: func(c *ExecConfig) { c.InteractiveMode = execInteractiveAlways },
			want:   []string{"interactiveMode is Always but standard input is not a terminal"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPlugin(t, tt.env)
			if tt.modify != nil {
				tt.modify(p.cfg)
			}
			a := p.authenticator(t, nil)
			_, err := a.Token(context.Background())
			if err == nil {
				t.Fatal("Token succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nwant it to contain\n%q", err, w)
				}
			}
			if len(err.Error()) > 2000 {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			// Errors are not cached: the next call runs the plugin again.
			before := p.runs(t)
			_, _ = a.Token(context.Background())
			if after := p.runs(t); before > 0 && after != before+1 {
				t.Errorf("plugin ran %d times after a failure, want once more", after-before)
			}
		})
	}
}

func TestNewExecAuthenticatorErrors(t *testing.T) {
	tests := []struct {
		cfg  *ExecConfig
		want string
	}{
		{nil, "exec plugin: no configuration"},
		{&ExecConfig{}, `exec plugin "": command is not set`},
		{&ExecConfig{Command: "p", APIVersion: "client.authentication.k8s.io/v1alpha1"}, `exec plugin "p": apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`},
		{&ExecConfig{Command: "p", InteractiveMode: "Sometimes"}, `exec plugin "p": interactiveMode "Sometimes" is not valid`},
	}
	for _, tt := range tests {
		_, err := NewExecAuthenticator(tt.cfg, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewExecAuthenticator(%+v) error = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// execRecord is what the test plugin records about its run.
type execRecord struct {
	Args     []string `json:"args"`
	ExecInfo string   `json:"execInfo"`
	Env      []string `json:"env"`
}

func TestExecPluginInput(t *testing.T) {
	tests := []struct {
		name        string
		apiVersion  string
		provide     bool
		terminal    bool
		mode        string
		wantCluster bool
		wantInter   bool
	}{
		{name: "v1 without cluster info", apiVersion: execAPIVersionV1, mode: execInteractiveNever},
		{name: "v1 with cluster info", apiVersion: execAPIVersionV1, provide: true, mode: execInteractiveNever, wantCluster: true},
		{name: "v1beta1 with cluster info", apiVersion: execAPIVersionV1beta1, provide: true, mode: execInteractiveIfAvailable, wantCluster: true},
		{name: "IfAvailable with a terminal", apiVersion: execAPIVersionV1, mode: execInteractiveIfAvailable, terminal: true, wantInter: true},
		{name: "Never with a terminal", apiVersion: execAPIVersionV1, mode: execInteractiveNever, terminal: true},
		{name: "Always with a terminal", apiVersion: execAPIVersionV1, mode: execInteractiveAlways, terminal: true, wantInter: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			record := filepath.Join(t.TempDir(), "record.json")
			p := newTestPlugin(t, map[string]string{
				"TESTPLUGIN_TOKEN":  "t",
				"TESTPLUGIN_RECORD": record,
				"TESTPLUGIN_STDERR": "prompt> ",
				"FOO":               "bar",
			})
			p.cfg.Args = []string{"get-token", "--flag=a b"}
			p.cfg.APIVersion = tt.apiVersion
			p.cfg.InteractiveMode = tt.mode
			p.cfg.ProvideClusterInfo = tt.provide
			cluster := &ExecCluster{
				Server:                   "https://kapi.test:6443",
				TLSServerName:            "api.kapi.test",
				CertificateAuthorityData: []byte("CA PEM"),
				ProxyURL:                 "http://proxy.kapi.test",
			}
			a, err := NewExecAuthenticator(p.cfg, cluster)
			if err != nil {
				t.Fatal(err)
			}
			cluster.Server = "changed after NewExecAuthenticator"
			var terminal bytes.Buffer
			a.isTerminal = func() bool { return tt.terminal }
			a.stdin = strings.NewReader("")
			a.stderr = &terminal
			wantToken(t, a, "t")

			b, err := os.ReadFile(record)
			if err != nil {
				t.Fatal(err)
			}
			var rec execRecord
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if want := []string{"get-token", "--flag=a b"}; !slices.Equal(rec.Args, want) {
				t.Errorf("args = %q, want %q", rec.Args, want)
			}
			if !slices.Contains(rec.Env, "FOO=bar") {
				t.Errorf("env has no FOO=bar")
			}
			if !slices.ContainsFunc(rec.Env, func(s string) bool { return strings.HasPrefix(s, "PATH=") }) {
				t.Errorf("env lost the process environment (PATH)")
			}
			var info map[string]any
			if err := json.Unmarshal([]byte(rec.ExecInfo), &info); err != nil {
				t.Fatalf("KUBERNETES_EXEC_INFO %q: %v", rec.ExecInfo, err)
			}
			if info["apiVersion"] != tt.apiVersion || info["kind"] != "ExecCredential" {
				t.Errorf("KUBERNETES_EXEC_INFO = %s", rec.ExecInfo)
			}
			spec, _ := info["spec"].(map[string]any)
			if spec["interactive"] != tt.wantInter {
				t.Errorf("spec.interactive = %v, want %v", spec["interactive"], tt.wantInter)
			}
			gotCluster, hasCluster := spec["cluster"].(map[string]any)
			if hasCluster != tt.wantCluster {
				t.Fatalf("spec.cluster present = %v, want %v: %s", hasCluster, tt.wantCluster, rec.ExecInfo)
			}
			if tt.wantCluster {
				want := map[string]any{
					"server":                     "https://kapi.test:6443",
					"tls-server-name":            "api.kapi.test",
					"certificate-authority-data": "Q0EgUEVN", // base64("CA PEM")
					"proxy-url":                  "http://proxy.kapi.test",
				}
				if !maps.Equal(gotCluster, want) {
					t.Errorf("spec.cluster = %v, want %v", gotCluster, want)
				}
			}
			// An interactive plugin's stderr reaches the terminal.
			if got, want := terminal.String(), map[bool]string{true: "prompt> ", false: ""}[tt.wantInter]; got != want {
				t.Errorf("terminal got %q, want %q", got, want)
			}
		})
	}
}

// authTestServer answers 401 to the bearer tokens in reject and 200 (with
// the Authorization header as body) to anything else.
func authTestServer(t *testing.T, reject ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if slices.Contains(reject, strings.TrimPrefix(auth, "Bearer ")) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, auth)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// authTestGet sends GET url through rt and returns the status and body.
func authTestGet(t *testing.T, rt http.RoundTripper, url string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(req.Header, header)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body.String()
}

// authTestTransport returns a transport closed at the end of the test.
func authTestTransport(t *testing.T) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func TestExecRoundTripper(t *testing.T) {
	srv := authTestServer(t, "tok-1")
	p := newTestPlugin(t, map[string]string{"TESTPLUGIN_TOKEN": "tok-{n}"})
	a := p.authenticator(t, nil)
	rt := a.WrapTransport(authTestTransport(t))

	// tok-1 is refused; the request's 401 is returned, and the credential
	// discarded once however many requests were refused with it.
	wantToken(t, a, "tok-1")
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if n := p.runs(t); n > 2 {
		t.Fatalf("plugin ran %d times, want at most 2", n)
	}
	if code, body := authTestGet(t, rt, srv.URL, nil); code != http.StatusOK || body != "Bearer tok-2" {
		t.Errorf("got %d %q, want 200 with tok-2", code, body)
	}
	wantRuns(t, p, 2)

	// A request that has its own Authorization is left alone.
	if code, body := authTestGet(t, rt, srv.URL, http.Header{"Authorization": {"Bearer mine"}}); code != http.StatusOK || body != "Bearer mine" {
		t.Errorf("got %d %q, want 200 with the request's own token", code, body)
	}

	// A plugin failure fails the request.
	bad := newTestPlugin(t, map[string]string{"TESTPLUGIN_EXIT": "1"}).authenticator(t, nil)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if _, err := bad.WrapTransport(authTestTransport(t)).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "getting credentials: exec plugin") {
		t.Errorf("RoundTrip error = %v", err)
	}
}

func TestConfigExecAuthenticatorIsShared(t *testing.T) {
	p := newTestPlugin(t, map[string]string{"TESTPLUGIN_TOKEN": "tok-{n}"})
	cfg := func(host string) *Config {
		return &Config{Host: host, Exec: cloneExecConfig(p.cfg), TLS: TLSConfig{CAData: []byte("CA")}}
	}
	a1, err := cfg("https://one.kapi.test").ExecAuthenticator()
	if err != nil {
		t.Fatal(err)
	}
	a2, err := cfg("https://one.kapi.test").ExecAuthenticator()
	if err != nil {
		t.Fatal(err)
	}
	a3, err := cfg("https://two.kapi.test").ExecAuthenticator()
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Error("equal Configs got different authenticators")
	}
	if a1 == a3 {
		t.Error("Configs for different clusters share an authenticator")
	}
	if a, err := (&Config{}).ExecAuthenticator(); a != nil || err != nil {
		t.Errorf("no Exec: got %v, %v", a, err)
	}
	missingCA := &Config{Exec: p.cfg, TLS: TLSConfig{CAFile: filepath.Join(t.TempDir(), "missing")}}
	if _, err := missingCA.ExecAuthenticator(); err == nil || !strings.HasPrefix(err.Error(), "TLS.CAFile: open ") {
		t.Errorf("missing CA file: error %v", err)
	}
}

func TestTokenFileSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	mtime := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(content string, mod time.Time) {
		t.Helper()
		writeKubeconfigTestFile(t, path, content)
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	clock := &execTestClock{t: execT0}
	s := NewTokenFileSource(path, "initial")
	s.now = clock.Now
	want := func(w string) {
		t.Helper()
		got, err := s.Token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Fatalf("Token = %q, want %q", got, w)
		}
	}

	want("initial") // no file yet
	write("token-a\n", mtime)
	want("token-a")

	// A rewrite of the same size and time goes unnoticed for a minute.
	write("token-b\n", mtime)
	want("token-a")
	clock.Set(execT0.Add(tokenFileMaxAge))
	want("token-b")

	// A new modification time or size is noticed at once.
	write("token-c\n", mtime.Add(time.Second))
	want("token-c")
	write("token-dd\n", mtime.Add(time.Second))
	want("token-dd")

	// A 401 makes the next request read the file again.
	write("token-ee\n", mtime.Add(time.Second))
	want("token-dd")
	srv := authTestServer(t, "token-dd")
	rt := s.WrapTransport(authTestTransport(t))
	if code, _ := authTestGet(t, rt, srv.URL, nil); code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", code)
	}
	if code, body := authTestGet(t, rt, srv.URL, nil); code != http.StatusOK || body != "Bearer token-ee" {
		t.Fatalf("got %d %q, want the re-read token", code, body)
	}

	// A file that disappears or empties keeps the last token.
	write("\n", mtime.Add(2*time.Second))
	want("token-ee")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	want("token-ee")

	// Without any token the error is returned.
	empty := NewTokenFileSource(filepath.Join(dir, "missing"), "")
	if _, err := empty.Token(context.Background()); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error %v", err)
	}
	if c, err := empty.ClientCertificate(context.Background()); c != nil || err != nil {
		t.Errorf("ClientCertificate = %v, %v", c, err)
	}
}

func TestAuthRoundTripper(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeKubeconfigTestFile(t, tokenFile, "from-file\n")
	p := newTestPlugin(t, map[string]string{"TESTPLUGIN_TOKEN": "from-plugin"})
	srv := authTestServer(t)
	tests := []struct {
		name string
		cfg  *Config
		want string
	}{
		{"token file wins", &Config{BearerTokenFile: tokenFile, BearerToken: "static", Username: "u", Exec: p.cfg}, "Bearer from-file"},
		{"static token", &Config{BearerToken: "static", Username: "u", Exec: p.cfg}, "Bearer static"},
		{"basic", &Config{Username: "u", Password: "p", Exec: p.cfg}, "Basic dTpw"},
		{"exec", &Config{Exec: p.cfg}, "Bearer from-plugin"},
		{"exec not used with a client certificate", &Config{Exec: p.cfg, TLS: TLSConfig{CertData: []byte("c")}}, ""},
		{"none", &Config{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := authTestTransport(t)
			rt, err := tt.cfg.AuthRoundTripper(base)
			if err != nil {
				t.Fatal(err)
			}
			if code, body := authTestGet(t, rt, srv.URL, nil); code != http.StatusOK || body != tt.want {
				t.Errorf("got %d %q, want %q", code, body, tt.want)
			}
			if code, body := authTestGet(t, rt, srv.URL, http.Header{"Authorization": {"Bearer mine"}}); code != http.StatusOK || body != "Bearer mine" {
				t.Errorf("own Authorization: got %d %q", code, body)
			}
		})
	}
}
