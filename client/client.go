package client

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-resty/resty/v2"
	"github.com/kapi-dev/kapi/codec"
	"golang.org/x/time/rate"
)

// Defaults of a Config's zero fields. The reasons are in Config's field
// documentation.
const (
	// DefaultQPS is the sustained request rate when Config.QPS is zero.
	DefaultQPS = 50
	// DefaultBurst is the token bucket size when Config.Burst is zero.
	DefaultBurst = 100
	// DefaultMaxRetries is the number of retries when Config.MaxRetries is
	// zero.
	DefaultMaxRetries = 5
	// DefaultNamespace is the namespace when Config.Namespace is empty.
	DefaultNamespace = "default"
)

// Client talks to one API server. It holds what every request shares: the
// HTTP transport (TLS, proxy, credentials), the rate limiter, the retry
// policy, the scheme of Go types, discovery and the default namespace.
//
// A Client is safe for concurrent use, and cheap to share: build one per
// server and pass it around. For[T] and Dynamic make resource clients on it.
type Client struct {
	http      *resty.Client
	base      *url.URL
	limiter   *rate.Limiter // nil: no limit
	scheme    *Scheme
	logger    *slog.Logger
	namespace string
	protobuf  bool // Config.ContentType prefers protobuf
	retries   int
	timeout   time.Duration

	// newTimer makes the timer retries wait on; tests replace it.
	newTimer func() backoff.Timer
	// metrics is Config.Metrics (nil: none); now times it, and tests
	// replace it.
	metrics RequestMetrics
	now     func() time.Time

	discovery *Discovery
	mapper    *RESTMapper
}

// New returns a client for the server cfg describes. It reads the TLS files
// cfg names, so that a bad path or certificate fails here rather than on the
// first request; it does not contact the server.
func New(cfg *Config) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("client: nil Config")
	}
	base, err := baseURL(cfg.Host)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:      base,
		scheme:    defaultScheme,
		logger:    cfg.Logger,
		namespace: cfg.Namespace,
		retries:   cfg.MaxRetries,
		timeout:   cfg.Timeout,
		newTimer:  func() backoff.Timer { return &realTimer{} },
		metrics:   cfg.Metrics,
		now:       time.Now,
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.namespace == "" {
		c.namespace = DefaultNamespace
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultMaxRetries
	case c.retries < 0:
		c.retries = 0
	}
	switch ct := strings.TrimSpace(cfg.ContentType); ct {
	case "", codec.MediaTypeJSON:
	case codec.MediaTypeProtobuf:
		c.protobuf = true
	default:
		return nil, fmt.Errorf("client: unsupported ContentType %q (want %q or %q)", ct, codec.MediaTypeJSON, codec.MediaTypeProtobuf)
	}
	if cfg.QPS >= 0 {
		qps, burst := float64(cfg.QPS), cfg.Burst
		if qps == 0 {
			qps = DefaultQPS
		}
		if burst <= 0 {
			burst = DefaultBurst
		}
		c.limiter = rate.NewLimiter(rate.Limit(qps), burst)
	}
	rt, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	c.http = newResty(cfg, base, rt, c.logger)
	c.discovery = &Discovery{c: c}
	c.mapper = NewRESTMapper(c.discovery)
	return c, nil
}

// baseURL parses Config.Host; a host without a scheme means https.
func baseURL(host string) (*url.URL, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		return nil, errors.New("client: Config.Host is empty")
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("client: Config.Host: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("client: Config.Host %q: scheme must be http or https", host)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: Config.Host %q has no host", host)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: Config.Host %q may not have a query or fragment", host)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Namespace returns the default namespace of typed clients: Config.Namespace,
// or "default".
func (c *Client) Namespace() string { return c.namespace }

// Host returns the server's base URL.
func (c *Client) Host() string { return c.base.String() }

// Scheme returns the scheme typed clients look types up in (DefaultScheme
// unless WithScheme chose another).
func (c *Client) Scheme() *Scheme { return c.scheme }

// WithScheme returns a client that looks Go types up in s instead, sharing
// everything else (transport, rate limiter, discovery cache) with c. Tests use
// it to register types without touching DefaultScheme.
func (c *Client) WithScheme(s *Scheme) *Client {
	cc := *c
	cc.scheme = s
	return &cc
}

// Discovery returns the client's discovery client.
func (c *Client) Discovery() *Discovery { return c.discovery }

// RESTMapper returns the client's mapper between kinds and resources, backed
// by discovery and cached for the client's lifetime.
func (c *Client) RESTMapper() *RESTMapper { return c.mapper }

// userAgent is the default User-Agent: "kapi/<version> (<os>/<arch>)".
var userAgent = sync.OnceValue(func() string {
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		const module = "github.com/kapi-dev/kapi"
		if bi.Main.Path == module && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, dep := range bi.Deps {
			if dep.Path == module && dep.Version != "" {
				version = dep.Version
			}
		}
	}
	return fmt.Sprintf("kapi/%s (%s/%s)", version, runtime.GOOS, runtime.GOARCH)
})

// newResty configures the resty client all requests go through. Retries and
// rate limiting are kapi's own (resty's rate limiter fails instead of
// waiting, and its retries cannot tell a create from a get), so resty's are
// left off; response bodies are never read by resty, so that lists and watches
// stream.
func newResty(cfg *Config, base *url.URL, rt http.RoundTripper, logger *slog.Logger) *resty.Client {
	rc := resty.NewWithClient(&http.Client{Transport: rt})
	// Scheme and host only: Request.Path includes Config.Host's own path.
	rc.SetBaseURL((&url.URL{Scheme: base.Scheme, Host: base.Host}).String())
	rc.SetDoNotParseResponse(true)
	rc.SetDisableWarn(true)
	rc.SetLogger(restyLogger{logger})
	ua := cfg.UserAgent
	if ua == "" {
		ua = userAgent()
	}
	rc.SetHeader("User-Agent", ua)
	return rc
}

// restyLogger sends resty's own messages to slog at debug level.
type restyLogger struct{ l *slog.Logger }

func (r restyLogger) log(format string, v ...any) { r.l.Debug("resty: " + fmt.Sprintf(format, v...)) }

// Errorf implements resty.Logger.
func (r restyLogger) Errorf(format string, v ...any) { r.log(format, v...) }

// Warnf implements resty.Logger.
func (r restyLogger) Warnf(format string, v ...any) { r.log(format, v...) }

// Debugf implements resty.Logger.
func (r restyLogger) Debugf(format string, v ...any) { r.log(format, v...) }
