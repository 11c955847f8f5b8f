package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/workqueue"
)

// ServerConfig configures a Server. The zero value of every field is a
// working default, except that Handlers needs at least one entry.
type ServerConfig struct {
	// Addr is the address to listen on. "" means ":9443", the port
	// controller-runtime's webhook servers use. Ignored when Listener is set.
	Addr string
	// Listener, if set, is listened on instead of Addr (a test binds
	// 127.0.0.1:0 to know the port first). The server closes it.
	Listener net.Listener
	// CertDir is the directory of the serving certificate and key, in the
	// files tls.crt and tls.key (the names of a kubernetes.io/tls Secret
	// mounted as a volume). "" means filepath.Join(os.TempDir(),
	// "k8s-webhook-server", "serving-certs"), controller-runtime's default.
	CertDir string
	// CertFile and KeyFile name the certificate (PEM, leaf first, then
	// intermediates) and its key; a relative name is taken in CertDir. ""
	// means tls.crt and tls.key. The files are read on the first TLS
	// handshake after either changes (see Server), so rotated certificates
	// are served without a restart.
	CertFile, KeyFile string
	// MinVersion is the lowest TLS version accepted. 0 means TLS 1.2;
	// lower versions are an error.
	MinVersion uint16
	// Handlers are the webhooks by URL path ("/validate-widget"), as the
	// clientConfig of a webhook configuration or CRD names them: *Admission
	// and *Conversion values, or any http.Handler. Paths are matched
	// exactly (no prefixes, no patterns); another path gets 404.
	Handlers map[string]http.Handler
	// ShutdownTimeout bounds how long Start waits, once its context is done,
	// for requests in flight to finish; then it closes their connections
	// (which ends their requests' contexts) and returns. 0 means 10 seconds.
	ShutdownTimeout time.Duration
	// Logger receives certificate reloads and serving errors. nil means
	// slog.Default().
	Logger *slog.Logger
	// Clock is read to tell a recently changed certificate file (see
	// Server). nil means the system clock.
	Clock workqueue.Clock
}

// Server serves webhooks over HTTPS, with a certificate it reloads from
// files when they change. Build it with NewServer and run it with Start; it is
// a manager.Runnable that runs on every replica, leader or not.
type Server struct {
	cfg   ServerConfig
	certs *certReloader
}

// ServeHTTP calls the handler of r's path, or answers 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := s.cfg.Handlers[r.URL.Path]
	if !ok {
		http.Error(w, fmt.Sprintf("no webhook is served at %q", r.URL.Path), http.StatusNotFound)
		return
	}
	h.ServeHTTP(w, r)
}

// NewServer checks cfg and returns a server. It does not listen or read the
// certificate yet: Start does.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = ":9443"
	}
	if cfg.CertDir == "" {
		cfg.CertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	cfg.CertFile = inDir(cfg.CertDir, cfg.CertFile, "tls.crt")
	cfg.KeyFile = inDir(cfg.CertDir, cfg.KeyFile, "tls.key")
	switch {
	case cfg.MinVersion == 0:
		cfg.MinVersion = tls.VersionTLS12
	case cfg.MinVersion < tls.VersionTLS12:
		return nil, fmt.Errorf("webhook: MinVersion %s is below TLS 1.2", tls.VersionName(cfg.MinVersion))
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = workqueue.RealClock{}
	}
	if len(cfg.Handlers) == 0 {
		return nil, errors.New("webhook: ServerConfig.Handlers is empty")
	}
	for path, h := range cfg.Handlers {
		if !strings.HasPrefix(path, "/") || h == nil {
			return nil, fmt.Errorf("webhook: handler path %q must start with / and have a handler", path)
		}
	}
	cfg.Handlers = maps.Clone(cfg.Handlers)
	return &Server{cfg: cfg, certs: &certReloader{certFile: cfg.CertFile, keyFile: cfg.KeyFile, clock: cfg.Clock, log: cfg.Logger}}, nil
}

func inDir(dir, name, def string) string {
	if name == "" {
		name = def
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// NeedLeaderElection reports false: every replica serves webhooks.
func (s *Server) NeedLeaderElection() bool { return false }

// Start loads the certificate, listens and serves until ctx is done, then
// shuts down (waiting up to ShutdownTimeout for requests in flight) and
// returns nil. It returns an error, without serving, when the certificate
// cannot be loaded or the address cannot be listened on.
func (s *Server) Start(ctx context.Context) error {
	ln := s.cfg.Listener
	if _, err := s.certs.load(); err != nil {
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("webhook: serving certificate: %w", err)
	}
	if ln == nil {
		var err error
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", s.cfg.Addr); err != nil {
			return fmt.Errorf("webhook: %w", err)
		}
	}
	srv := &http.Server{
		Handler:           s,
		TLSConfig:         &tls.Config{MinVersion: s.cfg.MinVersion, GetCertificate: s.certs.getCertificate},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
		// Requests keep ctx's values but not its end: Shutdown lets them finish.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	s.cfg.Logger.Info("webhook: serving", "addr", ln.Addr().String(), "paths", len(s.cfg.Handlers))
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-served:
		return fmt.Errorf("webhook: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}
