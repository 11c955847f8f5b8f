package client

import (
	"log/slog"
	"net/http"
	"time"
)

// Config says how to reach and authenticate to an API server. Load builds one
// from the usual places (KUBECONFIG, ~/.kube/config, in-cluster); it can also be
// filled by hand.
type Config struct {
	// Host is the server's base URL, e.g. "https://10.0.0.1:6443". A host
	// without scheme means https.
	Host string

	// TLS configures server verification and client certificates.
	TLS TLSConfig

	// BearerToken authenticates every request. BearerTokenFile, if set, is
	// read instead and re-read when it changes (service-account tokens
	// rotate).
	BearerToken     string
	BearerTokenFile string
	// Username and Password are HTTP basic credentials (rarely used).
	Username, Password string
	// Exec runs a credential plugin (client.authentication.k8s.io/v1
	// ExecCredential) for a token or client certificate, cached until it
	// expires.
	Exec *ExecConfig

	// ProxyURL sends requests through a proxy (http, https or socks5).
	ProxyURL string
	// UserAgent is sent with every request (default "kapi/<version> (<os>/<arch>)").
	UserAgent string

	// QPS and Burst bound the request rate (token bucket). Defaults: 50 and
	// 100 — client-go's 5 and 10 throttle controllers at startup for no
	// benefit; raise or lower to fit the server. A negative QPS disables the
	// limit.
	QPS   float32
	Burst int
	// Timeout bounds a request that is not a watch (default none: use
	// contexts).
	Timeout time.Duration
	// ContentType is the preferred encoding: "application/json" (default) or
	// "application/vnd.kubernetes.protobuf" (used for kinds that can marshal
	// themselves; others use JSON).
	ContentType string
	// MaxRetries bounds retries of a request that is safe to repeat (default
	// 5; negative disables retries).
	MaxRetries int

	// Namespace is the default namespace (the kubeconfig context's, or the
	// pod's in-cluster); "default" if unset.
	Namespace string

	// Transport, if set, carries requests instead of a network transport
	// built from the fields above (the fake client sets an in-memory one).
	Transport http.RoundTripper
	// WrapTransport, if set, wraps the transport kapi builds from the
	// fields above (TLS and proxy), or Transport: the wrapper is given that
	// transport and hands each request on to it. kapi's credentials are
	// applied around the wrapper (as client-go's WrapTransport), so it sees
	// each request as it goes on the wire, Authorization header set, and a
	// request re-sent with a refreshed token is seen twice. It is for
	// tracing and instrumentation, such as OpenTelemetry's
	// otelhttp.NewTransport, without replacing kapi's transport. Default
	// nil: no wrapper.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Metrics receives the client's request latencies and results and its
	// rate-limiter waits (the metrics package exports them to Prometheus).
	// Default nil: none.
	Metrics RequestMetrics
	// Logger receives debug logs of retries and throttling (default
	// slog.Default()).
	Logger *slog.Logger
}

// TLSConfig is the TLS part of a Config. File fields are read when the client
// is built; Data fields hold PEM bytes directly.
type TLSConfig struct {
	CAFile, CertFile, KeyFile string
	CAData, CertData, KeyData []byte
	// ServerName overrides the name checked in the server's certificate.
	ServerName string
	// Insecure skips server certificate verification. Never use in production.
	Insecure bool
}

// ExecConfig runs a credential plugin, as in a kubeconfig user's "exec".
type ExecConfig struct {
	Command string
	Args    []string
	Env     map[string]string
	// APIVersion of the ExecCredential exchanged (client.authentication.k8s.io/v1
	// or v1beta1).
	APIVersion string
	// InstallHint is shown when the command is missing.
	InstallHint string
	// ProvideClusterInfo passes the cluster to the plugin in KUBERNETES_EXEC_INFO.
	ProvideClusterInfo bool
	// InteractiveMode is Never, IfAvailable or Always.
	InteractiveMode string
}
