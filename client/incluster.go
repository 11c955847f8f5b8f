package client

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotInCluster is returned by InClusterConfig (and wrapped by Load) when
// the process does not run in a Kubernetes pod: KUBERNETES_SERVICE_HOST or
// KUBERNETES_SERVICE_PORT is not set.
var ErrNotInCluster = errors.New("not running in a Kubernetes cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")

// serviceAccountDir is where the kubelet mounts a pod's service-account
// credentials.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// inClusterEnv is what InClusterConfig reads from the process: tests replace
// root and getenv.
type inClusterEnv struct {
	// root is prepended to serviceAccountDir ("" means the real root).
	root   string
	getenv func(string) string
}

// InClusterConfig returns the configuration of a client running in a pod, as
// client-go's rest.InClusterConfig does:
//
//   - Host is https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
//     (an IPv6 address is bracketed);
//   - BearerTokenFile is the service-account token file (the kubelet rotates
//     it; clients re-read it as it changes) and BearerToken its current
//     content; a missing token file is an error;
//   - TLS.CAFile is the service-account ca.crt, if that file exists;
//   - Namespace is $POD_NAMESPACE if set, else the service-account namespace
//     file, else "default".
//
// It returns ErrNotInCluster when the service environment variables are not
// set.
func InClusterConfig() (*Config, error) {
	return inClusterEnv{getenv: os.Getenv}.config()
}

func (e inClusterEnv) config() (*Config, error) {
	host, port := e.getenv("KUBERNETES_SERVICE_HOST"), e.getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, ErrNotInCluster
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	dir := filepath.Join(e.root, filepath.FromSlash(serviceAccountDir))

	tokenFile := filepath.Join(dir, "token")
	token, err := readBearerTokenFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("in-cluster config: service-account token: %w", err)
	}
	cfg := &Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerToken:     token,
		BearerTokenFile: tokenFile,
		Namespace:       e.getenv("POD_NAMESPACE"),
	}
	if ca := filepath.Join(dir, "ca.crt"); checkFileReadable(ca) == nil {
		cfg.TLS.CAFile = ca
	}
	if cfg.Namespace == "" {
		if b, err := os.ReadFile(filepath.Join(dir, "namespace")); err == nil {
			cfg.Namespace = strings.TrimSpace(string(b))
		}
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	return cfg, nil
}
