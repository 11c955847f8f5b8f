package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// CredentialSource supplies credentials that can change while a client runs:
// an exec plugin's output (ExecAuthenticator) or a token file that the
// kubelet rotates (TokenFileSource). Both methods are safe for concurrent use;
// either may return a zero value when the source has no such credential.
type CredentialSource interface {
	// Token returns the bearer token to send, or "" for none.
	Token(ctx context.Context) (string, error)
	// ClientCertificate returns the TLS client certificate to present, or
	// nil for none.
	ClientCertificate(ctx context.Context) (*tls.Certificate, error)
}

var (
	_ CredentialSource = (*ExecAuthenticator)(nil)
	_ CredentialSource = (*TokenFileSource)(nil)
)

// ExecCluster describes the cluster to an exec credential plugin: it is
// sent as spec.cluster of the ExecCredential in KUBERNETES_EXEC_INFO when
// ExecConfig.ProvideClusterInfo is set. Field names on the wire are
// client.authentication.k8s.io's.
type ExecCluster struct {
	// Server is the API server's URL (Config.Host).
	Server string `json:"server"`
	// TLSServerName is the name checked in the server's certificate.
	TLSServerName string `json:"tls-server-name,omitempty"`
	// InsecureSkipTLSVerify is set when the server's certificate is not
	// verified.
	InsecureSkipTLSVerify bool `json:"insecure-skip-tls-verify,omitempty"`
	// CertificateAuthorityData is the PEM CA bundle that verifies the
	// server (base64 on the wire).
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
	// ProxyURL is the proxy requests to Server go through.
	ProxyURL string `json:"proxy-url,omitempty"`
}

// execCredential is the ExecCredential object of client.authentication.k8s.io
// v1 and v1beta1 (they have the same fields).
type execCredential struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Spec       execCredentialSpec    `json:"spec"`
	Status     *execCredentialStatus `json:"status,omitempty"`
}

type execCredentialSpec struct {
	Cluster     *ExecCluster `json:"cluster,omitempty"`
	Interactive bool         `json:"interactive"`
}

type execCredentialStatus struct {
	ExpirationTimestamp   string `json:"expirationTimestamp,omitempty"`
	Token                 string `json:"token,omitempty"`
	ClientCertificateData string `json:"clientCertificateData,omitempty"`
	ClientKeyData         string `json:"clientKeyData,omitempty"`
}

const (
	// execInfoEnv is the environment variable that carries the
	// ExecCredential input to the plugin.
	execInfoEnv = "KUBERNETES_EXEC_INFO"
	// execRefreshMargin is how long before expiry a credential is refreshed
	// (at most a fifth of its lifetime), so that a request never leaves
	// with a token about to expire in flight. client-go's token sources use
	// the same 10s.
	execRefreshMargin = 10 * time.Second
	// execRetryDelay is how long a still-valid credential is used after a
	// failed refresh before the plugin is run again, so that a broken plugin
	// is not run on every request.
	execRetryDelay = 10 * time.Second
	// execStderrLimit bounds the plugin stderr quoted in errors (its tail).
	execStderrLimit = 1024
	// execWaitDelay bounds the wait for the plugin's output pipes after it
	// was killed because its context ended.
	execWaitDelay = time.Second
)

// ExecAuthenticator runs an exec credential plugin (kubectl's users[].exec)
// and caches what it returns: a bearer token, a client certificate, or both.
//
// The credential is reused until shortly before its expirationTimestamp
// (never expiring if it has none). The plugin runs at most once at a time:
// concurrent callers that need a credential wait for the same run, while
// callers holding a still-valid credential keep using it during a refresh.
// If a refresh fails while the old credential has not expired, the old one
// is used and the plugin retried at most every 10s. A 401 response seen
// through WrapTransport discards the credential that was refused, once, so
// the next request runs the plugin again.
//
// An ExecAuthenticator is safe for concurrent use.
type ExecAuthenticator struct {
	command            string
	args               []string
	env                []string // "NAME=value", sorted
	apiVersion         string
	installHint        string
	interactiveMode    string
	provideClusterInfo bool
	cluster            *ExecCluster

	// Replaced by tests.
	now        func() time.Time
	environ    func() []string
	isTerminal func() bool
	stdin      io.Reader
	stderr     io.Writer
	logger     *slog.Logger

	mu      sync.Mutex
	cred    *execCred   // current credential; nil before the first run or after a 401
	retryAt time.Time   // no refresh before this time while cred is valid
	flight  *execFlight // the run in progress, if any
}

// execCred is one plugin result. Its pointer identifies it for 401 handling.
type execCred struct {
	token     string
	cert      *tls.Certificate
	expiry    time.Time // zero: does not expire
	refreshAt time.Time // zero: never refreshed
}

func (c *execCred) fresh(now time.Time) bool {
	return c.refreshAt.IsZero() || now.Before(c.refreshAt)
}

func (c *execCred) valid(now time.Time) bool {
	return c.expiry.IsZero() || now.Before(c.expiry)
}

// execFlight is a plugin run that other callers can wait for.
type execFlight struct {
	done chan struct{}
	cred *execCred
	err  error
	// abandoned is set when the run failed because the context of the caller
	// that started it ended; waiters with a live context run it again.
	abandoned bool
}

// NewExecAuthenticator returns an authenticator that runs the plugin described
// by cfg. cluster is passed to the plugin when cfg.ProvideClusterInfo is set
// (nil sends an empty cluster). An empty cfg.APIVersion means
// client.authentication.k8s.io/v1 and an empty cfg.InteractiveMode means
// IfAvailable. The plugin is not run until a credential is needed.
//
// Most programs get an authenticator from Config.ExecAuthenticator instead,
// which shares one per plugin configuration.
func NewExecAuthenticator(cfg *ExecConfig, cluster *ExecCluster) (*ExecAuthenticator, error) {
	if cfg == nil {
		return nil, errors.New("exec plugin: no configuration")
	}
	x := cloneExecConfig(cfg)
	if x.APIVersion == "" {
		x.APIVersion = execAPIVersionV1
	}
	if x.InteractiveMode == "" {
		x.InteractiveMode = execInteractiveIfAvailable
	}
	if err := checkExecConfig(x); err != nil {
		return nil, fmt.Errorf("exec plugin %q: %w", x.Command, err)
	}
	if x.ProvideClusterInfo && cluster == nil {
		cluster = &ExecCluster{}
	}
	a := &ExecAuthenticator{
		command:            x.Command,
		args:               x.Args,
		apiVersion:         x.APIVersion,
		installHint:        sanitizeTerminal(x.InstallHint),
		interactiveMode:    x.InteractiveMode,
		provideClusterInfo: x.ProvideClusterInfo,
		now:                time.Now,
		environ:            os.Environ,
		isTerminal:         stdinIsTerminal,
		stdin:              os.Stdin,
		stderr:             os.Stderr,
		logger:             slog.Default(),
	}
	if x.ProvideClusterInfo {
		c := *cluster
		c.CertificateAuthorityData = bytes.Clone(cluster.CertificateAuthorityData)
		a.cluster = &c
	}
	for k, v := range x.Env {
		a.env = append(a.env, k+"="+v)
	}
	slices.Sort(a.env)
	return a, nil
}

// Token returns the plugin's bearer token ("" if it returns only a client
// certificate), running the plugin if no fresh credential is cached.
func (a *ExecAuthenticator) Token(ctx context.Context) (string, error) {
	c, err := a.get(ctx)
	if err != nil {
		return "", err
	}
	return c.token, nil
}

// ClientCertificate returns the plugin's client certificate (nil if it
// returns only a token), running the plugin if no fresh credential is cached.
func (a *ExecAuthenticator) ClientCertificate(ctx context.Context) (*tls.Certificate, error) {
	c, err := a.get(ctx)
	if err != nil {
		return nil, err
	}
	return c.cert, nil
}

// GetClientCertificate has the signature of tls.Config.GetClientCertificate:
// it presents the plugin's client certificate, or none if the plugin returns
// only a token. Config.TLSClientConfig installs it when the Config uses an
// exec plugin. Certificates are fetched when a connection is made; a
// rotated certificate is used by new connections.
func (a *ExecAuthenticator) GetClientCertificate(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	ctx := context.Background()
	if cri != nil {
		ctx = cri.Context()
	}
	c, err := a.get(ctx)
	if err != nil {
		return nil, err
	}
	if c.cert == nil {
		return &tls.Certificate{}, nil
	}
	return c.cert, nil
}

// WrapTransport returns a RoundTripper that sends the plugin's bearer token
// in the Authorization header of each request (unless the request already
// has one) and, when the server answers 401 Unauthorized, discards the
// credential it used so that the next request runs the plugin again. The
// 401 response itself is returned unchanged.
func (a *ExecAuthenticator) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &bearerRoundTripper{src: a, base: rt}
}

// bearer implements rotatingBearer.
func (a *ExecAuthenticator) bearer(ctx context.Context) (string, any, error) {
	c, err := a.get(ctx)
	if err != nil {
		return "", nil, err
	}
	return c.token, c, nil
}

// reject implements rotatingBearer: it discards the credential handle if it
// is still the current one.
func (a *ExecAuthenticator) reject(handle any) {
	c, _ := handle.(*execCred)
	a.mu.Lock()
	defer a.mu.Unlock()
	if c != nil && a.cred == c {
		a.cred = nil
		a.retryAt = time.Time{}
	}
}

// get returns the cached credential or runs the plugin for a new one.
func (a *ExecAuthenticator) get(ctx context.Context) (*execCred, error) {
	for {
		a.mu.Lock()
		now := a.now()
		cur := a.cred
		if cur != nil && cur.valid(now) && (cur.fresh(now) || now.Before(a.retryAt) || a.flight != nil) {
			// Fresh, or being refreshed by someone else, or the last
			// refresh failed recently: the current credential will do.
			a.mu.Unlock()
			return cur, nil
		}
		if f := a.flight; f != nil {
			a.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("exec plugin %q: waiting for credentials: %w", a.command, ctx.Err())
			}
			if f.err == nil {
				return f.cred, nil
			}
			if f.abandoned && ctx.Err() == nil {
				continue
			}
			return nil, f.err
		}
		f := &execFlight{done: make(chan struct{})}
		a.flight = f
		a.mu.Unlock()

		cred, err := a.run(ctx)

		a.mu.Lock()
		a.flight = nil
		now = a.now()
		if err == nil {
			a.cred = cred
			a.retryAt = time.Time{}
		}
		f.cred, f.err = cred, err
		f.abandoned = err != nil && ctx.Err() != nil
		old := a.cred
		fallback := err != nil && old != nil && old.valid(now)
		if fallback {
			a.retryAt = now.Add(execRetryDelay)
		}
		close(f.done)
		a.mu.Unlock()

		if fallback {
			a.logger.Warn("exec plugin: refreshing credentials failed; using the current ones until they expire",
				"command", a.command, "expiry", old.expiry, "error", err)
			return old, nil
		}
		return cred, err
	}
}

// run executes the plugin once and parses its output.
func (a *ExecAuthenticator) run(ctx context.Context) (*execCred, error) {
	interactive, err := a.interactive()
	if err != nil {
		return nil, fmt.Errorf("exec plugin %q: %w", a.command, err)
	}
	in := execCredential{
		APIVersion: a.apiVersion,
		Kind:       "ExecCredential",
		Spec:       execCredentialSpec{Interactive: interactive},
	}
	if a.provideClusterInfo {
		in.Spec.Cluster = a.cluster
	}
	info, err := kjson.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("exec plugin %q: encoding %s: %w", a.command, execInfoEnv, err)
	}

	var stdout bytes.Buffer
	stderr := &tailBuffer{max: execStderrLimit}
	cmd := exec.CommandContext(ctx, a.command, a.args...)
	cmd.Env = append(append(a.environ(), a.env...), execInfoEnv+"="+string(info))
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = execWaitDelay
	if interactive {
		// The plugin may prompt: give it the terminal.
		cmd.Stdin = a.stdin
		cmd.Stderr = io.MultiWriter(stderr, a.stderr)
	}
	if err := cmd.Run(); err != nil {
		return nil, a.runError(ctx, err, stderr)
	}
	if s := stderr.String(); s != "" && !interactive {
		a.logger.Debug("exec plugin wrote to stderr", "command", a.command, "stderr", s)
	}
	cred, err := a.parse(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("exec plugin %q: %w", a.command, err)
	}
	return cred, nil
}

// runError explains why the plugin could not be run or failed.
func (a *ExecAuthenticator) runError(ctx context.Context, err error, stderr *tailBuffer) error {
	if ctx.Err() != nil {
		return fmt.Errorf("exec plugin %q: %w", a.command, ctx.Err())
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("exec plugin %q: executable not found", a.command)
		if a.installHint != "" {
			msg += "\n\n" + a.installHint
		}
		return &execError{msg: msg, err: err}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg := fmt.Sprintf("exec plugin %q: %v", a.command, exit)
		if s := stderr.String(); s != "" {
			msg += "; stderr: " + s
		}
		return &execError{msg: msg, err: err}
	}
	return fmt.Errorf("exec plugin %q: %w", a.command, err)
}

// execError is an error message that wraps the underlying error without
// repeating it.
type execError struct {
	msg string
	err error
}

func (e *execError) Error() string { return e.msg }
func (e *execError) Unwrap() error { return e.err }

// parse decodes and checks the plugin's stdout.
func (a *ExecAuthenticator) parse(out []byte) (*execCred, error) {
	var ec execCredential
	if err := kjson.Unmarshal(bytes.TrimSpace(out), &ec); err != nil {
		return nil, fmt.Errorf("decoding ExecCredential from stdout: %w", err)
	}
	if ec.Kind != "ExecCredential" {
		return nil, fmt.Errorf("stdout has kind %q, want ExecCredential", ec.Kind)
	}
	if ec.APIVersion != a.apiVersion {
		return nil, fmt.Errorf("returned apiVersion %q, but %q is configured", ec.APIVersion, a.apiVersion)
	}
	st := ec.Status
	switch {
	case st == nil:
		return nil, errors.New("ExecCredential has no status")
	case st.Token == "" && st.ClientCertificateData == "" && st.ClientKeyData == "":
		return nil, errors.New("ExecCredential status has neither a token nor a client certificate")
	case (st.ClientCertificateData == "") != (st.ClientKeyData == ""):
		return nil, errors.New("ExecCredential status has only one of clientCertificateData and clientKeyData")
	}
	now := a.now()
	c := &execCred{token: st.Token}
	if st.ExpirationTimestamp != "" {
		t, err := time.Parse(time.RFC3339, st.ExpirationTimestamp)
		if err != nil {
			return nil, fmt.Errorf("status.expirationTimestamp: %w", err)
		}
		c.expiry = t
		margin := min(execRefreshMargin, t.Sub(now)/5)
		c.refreshAt = t.Add(-max(margin, 0))
	}
	if st.ClientCertificateData != "" {
		cert, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return nil, fmt.Errorf("status.clientCertificateData/clientKeyData: %w", err)
		}
		c.cert = &cert
	}
	return c, nil
}

// interactive decides whether the plugin may use the terminal.
func (a *ExecAuthenticator) interactive() (bool, error) {
	switch a.interactiveMode {
	case execInteractiveNever:
		return false, nil
	case execInteractiveAlways:
		if !a.isTerminal() {
			return false, errors.New("interactiveMode is Always but standard input is not a terminal")
		}
		return true, nil
	default: // IfAvailable
		return a.isTerminal(), nil
	}
}

// stdinIsTerminal reports whether standard input looks like a terminal: a
// character device other than the null device. (golang.org/x/term would ask
// the terminal driver; this is close enough to decide whether a plugin may
// prompt, without the dependency.)
func stdinIsTerminal() bool {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max       int
	buf       []byte
	truncated bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.truncated = true
	}
	return len(p), nil
}

// String returns the kept bytes, trimmed and without terminal control codes;
// "…" marks a cut.
func (b *tailBuffer) String() string {
	s := sanitizeTerminal(strings.TrimSpace(strings.ToValidUTF8(string(b.buf), "")))
	if b.truncated && s != "" {
		s = "…" + s
	}
	return s
}

// sanitizeTerminal drops control characters other than newline and tab, so
// that text from a plugin cannot put the terminal in a strange state.
func sanitizeTerminal(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// execAuthenticators shares one ExecAuthenticator between Configs with the
// same plugin configuration and cluster, so that every client built from
// them runs the plugin once and sees one cache, as client-go does. It is an
// explicit registry: guarded by mu, entries never removed (one per distinct
// plugin configuration in the process).
var execAuthenticators = struct {
	mu sync.Mutex
	m  map[string]*ExecAuthenticator
}{m: map[string]*ExecAuthenticator{}}

// ExecAuthenticator returns the authenticator for c.Exec, or nil if c has no
// exec plugin. Configs with the same plugin configuration and cluster (Host,
// TLS.ServerName, TLS.Insecure, CA, ProxyURL) share one authenticator, and so
// one cached credential. The CA file, if any, is read now to describe the
// cluster to the plugin.
func (c *Config) ExecAuthenticator() (*ExecAuthenticator, error) {
	if c.Exec == nil {
		return nil, nil
	}
	cluster, err := c.execCluster()
	if err != nil {
		return nil, err
	}
	key, err := kjson.Marshal(struct {
		Exec    *ExecConfig
		Cluster *ExecCluster
	}{c.Exec, cluster})
	if err != nil {
		return nil, fmt.Errorf("exec plugin %q: %w", c.Exec.Command, err)
	}
	execAuthenticators.mu.Lock()
	defer execAuthenticators.mu.Unlock()
	if a, ok := execAuthenticators.m[string(key)]; ok {
		return a, nil
	}
	a, err := NewExecAuthenticator(c.Exec, cluster)
	if err != nil {
		return nil, err
	}
	if c.Logger != nil {
		a.logger = c.Logger
	}
	execAuthenticators.m[string(key)] = a
	return a, nil
}

// execCluster describes c's cluster to an exec plugin.
func (c *Config) execCluster() (*ExecCluster, error) {
	ca := c.TLS.CAData
	if len(ca) == 0 && c.TLS.CAFile != "" {
		b, err := os.ReadFile(c.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS.CAFile: %w", err)
		}
		ca = b
	}
	return &ExecCluster{
		Server:                   c.Host,
		TLSServerName:            c.TLS.ServerName,
		InsecureSkipTLSVerify:    c.TLS.Insecure,
		CertificateAuthorityData: bytes.Clone(ca),
		ProxyURL:                 c.ProxyURL,
	}, nil
}

// usesExec reports whether c's exec plugin supplies its credentials: as in
// client-go, a token, basic credentials or a client certificate set
// directly take precedence and the plugin is then not run.
func (c *Config) usesExec() bool {
	return c.Exec != nil &&
		c.BearerToken == "" && c.BearerTokenFile == "" &&
		c.Username == "" && c.Password == "" &&
		c.TLS.CertFile == "" && len(c.TLS.CertData) == 0
}

// AuthRoundTripper wraps base with c's request credentials, in client-go's
// order of precedence:
//
//   - BearerTokenFile: the file's token, re-read as it changes
//     (TokenFileSource, with BearerToken as the fallback until the file is
//     read);
//   - else BearerToken, sent as is;
//   - else Username/Password as HTTP basic authentication;
//   - else the exec plugin's token, if any (Config.ExecAuthenticator).
//
// Client certificates are not handled here but by TLSClientConfig. A request
// that already has an Authorization header is sent unchanged. Without
// credentials base is returned as is.
func (c *Config) AuthRoundTripper(base http.RoundTripper) (http.RoundTripper, error) {
	switch {
	case c.BearerTokenFile != "":
		return NewTokenFileSource(c.BearerTokenFile, c.BearerToken).WrapTransport(base), nil
	case c.BearerToken != "":
		return &bearerRoundTripper{src: staticBearer(c.BearerToken), base: base}, nil
	case c.Username != "" || c.Password != "":
		return &basicAuthRoundTripper{user: c.Username, password: c.Password, base: base}, nil
	case c.usesExec():
		a, err := c.ExecAuthenticator()
		if err != nil {
			return nil, err
		}
		return a.WrapTransport(base), nil
	}
	return base, nil
}

// rotatingBearer is a token source that can be told a token was refused.
type rotatingBearer interface {
	// bearer returns the token ("" for none) and a handle identifying it.
	bearer(ctx context.Context) (token string, handle any, err error)
	// reject reports that the server refused the token behind handle.
	reject(handle any)
}

// bearerRoundTripper sets "Authorization: Bearer" from a rotatingBearer.
type bearerRoundTripper struct {
	src  rotatingBearer
	base http.RoundTripper
}

func (rt *bearerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return rt.base.RoundTrip(req)
	}
	tok, handle, err := rt.src.bearer(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("getting credentials: %w", err)
	}
	if tok != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := rt.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		rt.src.reject(handle)
	}
	return resp, err
}

// staticBearer is a token that never changes.
type staticBearer string

func (s staticBearer) bearer(context.Context) (string, any, error) { return string(s), nil, nil }
func (staticBearer) reject(any)                                    {}

// basicAuthRoundTripper sets HTTP basic credentials.
type basicAuthRoundTripper struct {
	user, password string
	base           http.RoundTripper
}

func (rt *basicAuthRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return rt.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.SetBasicAuth(rt.user, rt.password)
	return rt.base.RoundTrip(req)
}

// tokenFileMaxAge is how long a token read from a file is used before the
// file is read again even though its size and modification time did not
// change (a rewrite within the file system's timestamp granularity). It is
// client-go's re-read period: half the time between the kubelet's refresh of
// a projected service-account token and its expiry.
const tokenFileMaxAge = time.Minute

// TokenFileSource reads a bearer token from a file and reads it again when
// the file changes, so that rotated service-account tokens are picked up.
//
// Each Token call stats the file; the file is read again when its size or
// modification time changed, when the last read is a minute old, or after
// the server refused the token (401, through WrapTransport). If the file
// cannot be read, the last token read (or the initial token) is used; with
// none, the read error is returned. Surrounding whitespace is trimmed.
//
// A TokenFileSource is safe for concurrent use.
type TokenFileSource struct {
	path string
	now  func() time.Time // replaced by tests

	mu       sync.Mutex
	token    string // last token read, or initial
	fromFile bool   // token was read from the file
	size     int64
	modTime  time.Time
	readAt   time.Time
	gen      uint64 // counts reads; identifies the token for reject
	stale    bool   // the server refused the current token
}

// NewTokenFileSource returns a source for the token file at path. initial,
// if not empty, is used until the file is first read successfully (a
// kubeconfig "token" next to a "tokenFile").
func NewTokenFileSource(path, initial string) *TokenFileSource {
	return &TokenFileSource{path: path, token: initial, now: time.Now}
}

// Token returns the current token, reading the file again if it changed.
func (s *TokenFileSource) Token(ctx context.Context) (string, error) {
	tok, _, err := s.bearer(ctx)
	return tok, err
}

// ClientCertificate returns nil: a token file holds no certificate.
func (s *TokenFileSource) ClientCertificate(context.Context) (*tls.Certificate, error) {
	return nil, nil
}

// WrapTransport returns a RoundTripper that sends the file's token in the
// Authorization header of each request (unless the request already has
// one). A 401 response makes the next request read the file again.
func (s *TokenFileSource) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &bearerRoundTripper{src: s, base: rt}
}

// bearer implements rotatingBearer.
func (s *TokenFileSource) bearer(context.Context) (string, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fi, err := os.Stat(s.path)
	if err != nil {
		return s.fallback(err)
	}
	now := s.now()
	if s.fromFile && !s.stale && fi.Size() == s.size && fi.ModTime().Equal(s.modTime) && now.Sub(s.readAt) < tokenFileMaxAge {
		return s.token, s.gen, nil
	}
	tok, err := readBearerTokenFile(s.path)
	if err != nil {
		return s.fallback(err)
	}
	s.token, s.fromFile, s.stale = tok, true, false
	s.size, s.modTime, s.readAt = fi.Size(), fi.ModTime(), now
	s.gen++
	return s.token, s.gen, nil
}

// fallback returns the last good token after a failed read, or the error.
func (s *TokenFileSource) fallback(err error) (string, any, error) {
	if s.token != "" {
		return s.token, s.gen, nil
	}
	return "", nil, fmt.Errorf("bearer token file: %w", err)
}

// reject implements rotatingBearer.
func (s *TokenFileSource) reject(handle any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := handle.(uint64); ok && g == s.gen {
		s.stale = true
	}
}
