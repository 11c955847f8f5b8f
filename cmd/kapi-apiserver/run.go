package main

import (
	"context"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// options are the parsed command-line flags.
type options struct {
	listen           string
	kubeconfig       string
	tls              bool
	token            string
	historyWindow    time.Duration
	bookmarkInterval time.Duration
	minWatchTimeout  time.Duration
	shutdownTimeout  time.Duration
	logLevel         slog.Level
	controllers      map[string]bool // parseControllers
	serviceRange     netip.Prefix
	nodePortRange    registry.PortRange
	advertise        netip.Addr // invalid: the listener's address
	// disabledAdmission are the admission plugins turned off
	// (parseAdmissionPlugins).
	disabledAdmission []string
	// webhookServices is --webhook-service-map (Config.WebhookServiceMap).
	webhookServices webhookServiceMap
	// dataDir is --data-dir (Config.DataDir).
	dataDir string
	// The serving certificate files and the client CA (tls.go).
	tlsCertFile, tlsKeyFile, clientCAFile string
	// kube-apiserver's authentication and authorization flags (auth.go).
	tokenAuthFile         string
	anonymousAuth         bool
	authorizationMode     apiserver.AuthorizationMode // "": effectiveAuthorizationMode decides
	serviceAccountIssuer  string
	serviceAccountKeys    fileList
	serviceAccountSigning string
	// The in-flight bounds (Config.MaxRequestsInFlight and
	// MaxMutatingRequestsInFlight; 0 here is no bound, as kube-apiserver's).
	maxInFlight, maxMutatingInFlight int
	// etcd is --etcd-servers, --etcd-prefix, the --etcd-*file TLS flags
	// and --etcd-compaction-interval (Config.Etcd).
	etcd apiserver.EtcdConfig
}

// usageError is a command line that does not parse; main exits with status 2
// for it, as the flag package does.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// parseFlags parses args; usage and flag errors are written to stderr.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("kapi-apiserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "TCP `address` to listen on (port 0: any free port)")
	fs.StringVar(&o.kubeconfig, "write-kubeconfig", "", "write a kubeconfig for the server to `path`")
	fs.BoolVar(&o.tls, "tls", false, "serve HTTPS with a self-signed certificate generated at start")
	fs.StringVar(&o.token, "token", "", "require this bearer `token` on requests")
	fs.StringVar(&o.dataDir, "data-dir", "", "keep the objects in `dir`, durably (every write is on disk before its response), instead of in memory only")
	etcdServers := fs.String("etcd-servers", "", "keep the objects in etcd, at these comma-separated member `URLs`, as kube-apiserver does (its key layout and encodings; several kapi-apiservers on one etcd are one API server)")
	etcdPrefix := fs.String("etcd-prefix", "/registry", "the `prefix` of every key in etcd")
	etcdCA := fs.String("etcd-cafile", "", "verify the etcd members' certificates with this CA `file` (PEM)")
	etcdCert := fs.String("etcd-certfile", "", "authenticate to etcd with this client certificate `file` (PEM; with --etcd-keyfile)")
	etcdKey := fs.String("etcd-keyfile", "", "the private key `file` of --etcd-certfile (PEM)")
	etcdCompaction := fs.Duration("etcd-compaction-interval", 5*time.Minute, "how often etcd's history is compacted (0: never)")
	fs.DurationVar(&o.historyWindow, "history-window", 5*time.Minute, "how long old versions and deleted objects stay readable")
	fs.DurationVar(&o.bookmarkInterval, "bookmark-interval", time.Minute, "BOOKMARK interval of idle watches that allow bookmarks")
	fs.DurationVar(&o.minWatchTimeout, "min-watch-timeout", 30*time.Minute, "lower bound of the random timeout of watches without timeoutSeconds")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long shutdown waits for requests in flight")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	controllers := fs.String("controllers", "*", "controllers to run, as kube-controller-manager's flag: '*' for all, 'name' to add one, '-name' to leave one out; kapi runs "+strings.Join(knownControllers, ", "))
	serviceRange := fs.String("service-cluster-ip-range", "10.96.0.0/12", "IPv4 `CIDR` services' cluster IPs come from; the kubernetes Service gets the first")
	nodePorts := fs.String("service-node-port-range", registry.DefaultNodePortRange.String(), "`range` of node ports of NodePort and LoadBalancer services (first-last or first+offset)")
	advertise := fs.String("advertise-address", "", "IP `address` the kubernetes Service's Endpoints point at, not a loopback one (default the listen address, or else the host's first non-loopback IPv4 address, or else 192.0.2.1)")
	enableAdmission := fs.String("enable-admission-plugins", "", "admission `plugins` to enable in addition to the default ones, as kube-apiserver's flag (kapi implements only the default ones: "+strings.Join(apiserver.DefaultAdmissionPlugins, ", ")+")")
	disableAdmission := fs.String("disable-admission-plugins", "", "admission `plugins` to disable although they are enabled by default, as kube-apiserver's flag (comma-separated names)")
	fs.Var(&o.webhookServices, "webhook-service-map", "where admission and CRD conversion webhooks configured with a service are reached, as envtest rewrites them: `namespace/name[:port]=host:port` (repeatable; the port is the service's, 443 by default)")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "`file` of the serving certificate (PEM, followed by its chain), reloaded when it changes; with --tls-private-key-file, instead of --tls's self-signed one")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "`file` of the serving certificate's private key (PEM), reloaded when it changes")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "`file` of the CA certificates (PEM) that verify client certificates: the user is the certificate's common name, its groups the organizations (needs TLS)")
	fs.StringVar(&o.tokenAuthFile, "token-auth-file", "", "`file` of static bearer tokens, kube-apiserver's CSV format: token,user,uid[,\"group1,group2\"] (needs TLS)")
	fs.BoolVar(&o.anonymousAuth, "anonymous-auth", true, "with --token-auth-file or --client-ca-file, let requests without credentials in as system:anonymous (RBAC lets it read only /healthz, /version and discovery); false: 401")
	authzMode := fs.String("authorization-mode", "", "comma-separated authorizers, as kube-apiserver's flag: AlwaysAllow or RBAC (Node is accepted and ignored, as in Node,RBAC: kapi has no kubelets); default RBAC with --token-auth-file or --client-ca-file, AlwaysAllow otherwise")
	fs.StringVar(&o.serviceAccountIssuer, "service-account-issuer", "", "`issuer` (iss) of the service account tokens the server signs and accepts (default https://kubernetes.default.svc.cluster.local)")
	fs.Var(&o.serviceAccountKeys, "service-account-key-file", "`file` of PEM public keys (or private keys, or certificates) that verify service account tokens besides the signing key's (repeatable, or comma-separated)")
	fs.StringVar(&o.serviceAccountSigning, "service-account-signing-key-file", "", "`file` of the PEM RSA private key that signs service account tokens (default a key generated at start)")
	fs.IntVar(&o.maxInFlight, "max-requests-inflight", 400, "bound on the read-only requests served at once; more get 429 (0: no bound; watches are not counted; system:masters is exempt)")
	fs.IntVar(&o.maxMutatingInFlight, "max-mutating-requests-inflight", 200, "bound on the mutating requests served at once; more get 429 (0: no bound; system:masters is exempt)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: kapi-apiserver [flags]\n\nRuns kapi's reference Kubernetes API server (in memory, durable with --data-dir, or in etcd with --etcd-servers).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err}
	}
	bad := func(format string, a ...any) (*options, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return nil, &usageError{err}
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if o.controllers, err = parseControllers(*controllers); err != nil {
		return bad("%v", err)
	}
	if o.disabledAdmission, err = parseAdmissionPlugins(*enableAdmission, *disableAdmission); err != nil {
		return bad("%v", err)
	}
	if o.serviceRange, err = netip.ParsePrefix(*serviceRange); err != nil || !o.serviceRange.Addr().Is4() || o.serviceRange.Bits() > 30 {
		return bad("--service-cluster-ip-range %q is not an IPv4 CIDR of at least 4 addresses", *serviceRange)
	}
	if o.nodePortRange, err = registry.ParsePortRange(*nodePorts); err != nil {
		return bad("--service-node-port-range: %v", err)
	}
	if *advertise != "" {
		if o.advertise, err = netip.ParseAddr(*advertise); err != nil || o.advertise.IsUnspecified() || o.advertise.IsLoopback() {
			return bad("--advertise-address %q is not a usable IP address", *advertise)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"history-window", o.historyWindow},
		{"bookmark-interval", o.bookmarkInterval},
		{"min-watch-timeout", o.minWatchTimeout},
		{"shutdown-timeout", o.shutdownTimeout},
	} {
		if d.v <= 0 {
			return bad("--%s must be positive, not %v", d.name, d.v)
		}
	}
	if o.maxInFlight < 0 || o.maxMutatingInFlight < 0 {
		return bad("--max-requests-inflight and --max-mutating-requests-inflight can not be negative")
	}
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		return bad("--tls-cert-file and --tls-private-key-file go together")
	}
	if o.tlsCertFile != "" && o.tls {
		return bad("--tls generates a certificate: give it or --tls-cert-file, not both")
	}
	if o.authorizationMode, err = parseAuthorizationMode(*authzMode); err != nil {
		return bad("--authorization-mode: %v", err)
	}
	if (o.tokenAuthFile != "" || o.clientCAFile != "") && !o.https() {
		return bad("--token-auth-file and --client-ca-file need TLS (--tls or --tls-cert-file): kubectl and client-go send credentials only to an https:// server")
	}
	if *etcdServers != "" {
		if o.dataDir != "" {
			return bad("--etcd-servers and --data-dir cannot be used together")
		}
		o.etcd = apiserver.EtcdConfig{Servers: strings.Split(*etcdServers, ","), Prefix: *etcdPrefix, CompactInterval: *etcdCompaction}
		if o.etcd.TLS, err = etcdTLS(*etcdCA, *etcdCert, *etcdKey); err != nil {
			return bad("%v", err)
		}
		if o.etcd.CompactInterval == 0 {
			o.etcd.CompactInterval = -1 // never (Config: 0 is the default)
		}
	} else if *etcdCA != "" || *etcdCert != "" || *etcdKey != "" {
		return bad("the --etcd-*file flags need --etcd-servers")
	}
	if strings.ContainsFunc(o.token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return bad("--token must not contain spaces or control characters")
	}
	if o.token != "" && !o.https() {
		// client-go's clientcmd applies a kubeconfig's credentials only when
		// the server URL is https ("only try to read the auth information if
		// we are secure"), so kubectl would never send the token; and it
		// would travel in clear text.
		return bad("--token needs TLS (--tls or --tls-cert-file): kubectl and client-go send a token only to an https:// server")
	}
	return o, nil
}

// exitCode reports the process status for run's error, writing the error to
// stderr: 0 for success and -h, 2 for a bad command line, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2 // the flag package has printed the error and the usage
	}
	fmt.Fprintf(stderr, "kapi-apiserver: %v\n", err)
	return 1
}

// run runs the server until ctx ends, then shuts it down and returns nil. It
// returns an error if the command line is bad (flag.ErrHelp for -h) or if the
// server cannot start or stops serving by itself. Once the server serves, run
// writes the kubeconfig (with --write-kubeconfig) and then the ready line to
// stdout; logs go to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	defer ln.Close() // Serve closes it too; this covers the early returns
	addr := ln.Addr().(*net.TCPAddr)
	url := serverURL(addr, o.https())
	auth, adminToken, err := o.authentication()
	if err != nil {
		return fmt.Errorf("authentication: %w", err)
	}
	if auth == nil && len(o.serviceAccountKeys) > 0 {
		logger.Warn("--service-account-key-file is used only with --token-auth-file or --client-ca-file: without them the server authenticates nobody")
	}
	if !addr.IP.IsLoopback() && adminToken == "" {
		logger.Warn("listening beyond loopback without --token, --token-auth-file or --client-ca-file: anyone who can reach the port has full access", "addr", addr.String())
	}

	var tlsConfig *tls.Config
	var caPEM []byte
	switch {
	case o.tls:
		cert, ca, err := selfSignedCertificate(addr.IP, time.Now())
		if err != nil {
			return fmt.Errorf("generating the TLS certificate: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		caPEM = ca
	case o.tlsCertFile != "":
		files, err := loadCertFiles(o.tlsCertFile, o.tlsKeyFile, logger)
		if err != nil {
			return fmt.Errorf("loading the serving certificate: %w", err)
		}
		tlsConfig = &tls.Config{GetCertificate: files.GetCertificate, MinVersion: tls.VersionTLS12}
		caPEM = files.caBundle()
	}
	if auth != nil && auth.ClientCA != nil {
		// Asked for, not required, and not verified here: the server's
		// authenticator verifies them (a request without one may have a
		// token, or be anonymous).
		tlsConfig.ClientAuth = tls.RequestClientCert
	}
	var signingKey *rsa.PrivateKey
	if o.serviceAccountSigning != "" {
		if signingKey, err = readSigningKey(o.serviceAccountSigning); err != nil {
			return fmt.Errorf("--service-account-signing-key-file: %w", err)
		}
	}
	// The server is built once the listener is known: the kubernetes
	// Service points at its port, kube-root-ca.crt holds its CA.
	advertise := o.advertise
	if !advertise.IsValid() {
		advertise = advertiseAddress(addr.IP)
	}
	cfg := apiserver.Config{
		HistoryWindow:         o.historyWindow,
		BookmarkInterval:      o.bookmarkInterval,
		MinWatchTimeout:       o.minWatchTimeout,
		Logger:                logger,
		RootCA:                caPEM,
		ServiceClusterIPRange: o.serviceRange,
		ServiceNodePortRange:  o.nodePortRange,
		AdvertiseAddress:      advertise,
		AdvertisePort:         addr.Port,

		DisableAdmissionPlugins: o.disabledAdmission,
		WebhookServiceMap:       o.webhookServices,
		DataDir:                 o.dataDir,

		Authentication:              auth,
		AuthorizationMode:           o.effectiveAuthorizationMode(),
		ServiceAccountIssuer:        o.serviceAccountIssuer,
		ServiceAccountKey:           signingKey,
		MaxRequestsInFlight:         inflightBound(o.maxInFlight),
		MaxMutatingRequestsInFlight: inflightBound(o.maxMutatingInFlight),
		Etcd:                        o.etcd,
	}
	applyControllers(&cfg, o.controllers)
	api, err := apiserver.New(cfg)
	if err != nil {
		return fmt.Errorf("starting the API server: %w", err)
	}
	closed := false
	defer func() {
		if !closed { // an early return: nothing has been served
			_ = api.Close()
		}
	}()
	if o.kubeconfig != "" {
		if err := writeKubeconfig(o.kubeconfig, url, caPEM, adminToken); err != nil {
			return fmt.Errorf("writing the kubeconfig: %w", err)
		}
	}

	// Watches never go idle by themselves, so http.Server.Shutdown would wait
	// for them until its deadline; they end when Shutdown starts instead.
	watches, endWatches := context.WithCancel(context.Background())
	defer endWatches()
	var h http.Handler = endWatchesWith(watches, api)
	if o.token != "" && auth == nil {
		h = requireToken(o.token, h)
	}
	if logger.Enabled(ctx, slog.LevelDebug) {
		h = logRequests(logger, h)
	}
	hs := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(endWatches)

	served := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			served <- hs.ServeTLS(ln, "", "") // certificates from TLSConfig; enables HTTP/2
		} else {
			served <- hs.Serve(ln)
		}
	}()
	logger.Info("serving", "url", url, "tls", tlsConfig != nil, "token", o.token != "", "authentication", auth != nil,
		"authorization", cfg.AuthorizationMode, "kubeconfig", o.kubeconfig)
	fmt.Fprintf(stdout, "kapi-apiserver listening on %s\n", url)

	select {
	case err := <-served:
		// Serve only returns by itself when the listener fails.
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}

	logger.Info("shutting down", "timeout", o.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		logger.Warn("requests still in flight at the shutdown timeout; closing their connections", "err", err)
		_ = hs.Close()
	}
	<-served // http.ErrServerClosed
	// The HTTP server has stopped: no request can reach the API server now.
	closed = true
	if err := api.Close(); err != nil {
		logger.Error("closing the API server", "err", err)
	}
	logger.Info("stopped")
	return nil
}

// inflightBound is the Config bound of an in-flight flag: the flag's 0 is
// no bound, Config's is the default.
func inflightBound(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// serverURL is the URL clients use to reach a server listening on addr. An
// unspecified address (0.0.0.0, or :: which Go listens on dual-stack) is
// reached on 127.0.0.1, which works whether or not IPv6 is configured.
func serverURL(addr *net.TCPAddr, https bool) string {
	ip := addr.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(ip.String(), fmt.Sprint(addr.Port))
}

// advertiseAddress is the address the kubernetes Service points at when
// --advertise-address is not given: the listen address unless it is
// unspecified or loopback, else the host's first non-loopback IPv4 address
// (as kube-apiserver picks one), else 192.0.2.1, a documentation address.
func advertiseAddress(listen net.IP) netip.Addr {
	if a, ok := netip.AddrFromSlice(listen); ok && !a.Unmap().IsUnspecified() && !a.Unmap().IsLoopback() {
		return a.Unmap()
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, x := range addrs {
			if n, ok := x.(*net.IPNet); ok {
				if a, ok := netip.AddrFromSlice(n.IP); ok && a.Unmap().Is4() && !a.IsLoopback() && a.IsGlobalUnicast() {
					return a.Unmap()
				}
			}
		}
	}
	return netip.AddrFrom4([4]byte{192, 0, 2, 1})
}
