package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// certificateLifetime is how long the generated certificates are valid. They
// live only as long as the process, so any span longer than a server run will
// do; a year keeps long-running test servers out of trouble.
const certificateLifetime = 365 * 24 * time.Hour

// selfSignedCertificate makes a serving certificate for localhost, 127.0.0.1,
// ::1 and ip (unless it is unspecified or nil), signed by a fresh CA whose key
// is discarded. It returns the certificate with its chain and key, and the CA
// certificate in PEM, for clients to trust. This mirrors what kube-apiserver
// does when given no certificate (a self-signed CA for its loopback client).
func selfSignedCertificate(ip net.IP, now time.Time) (tls.Certificate, []byte, error) {
	notBefore := now.Add(-time.Hour) // tolerate clock skew between client and server
	notAfter := now.Add(certificateLifetime)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	caTemplate := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("kapi-apiserver-ca@%d", now.Unix())},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	if ip != nil && !ip.IsUnspecified() && !ip.Equal(ips[0]) && !ip.Equal(ips[1]) {
		ips = append(ips, ip)
	}
	template := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kapi-apiserver"},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("serving certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

// certFiles serves the certificate and key of --tls-cert-file and
// --tls-private-key-file, reloaded when the files change: every TLS
// handshake reads both files and parses them again when their contents
// differ from the last pair served, so a new connection gets the files'
// certificate as soon as they are rewritten. A pair that does not load
// (one file written, not yet the other) leaves the last good certificate
// in service.
type certFiles struct {
	certFile, keyFile string
	logger            *slog.Logger

	mu        sync.Mutex
	certPEM   []byte
	keyPEM    []byte
	cert      *tls.Certificate
	lastError string // the error last logged, so that it is logged once
}

// loadCertFiles loads the pair a first time; it fails when it does not load.
func loadCertFiles(certFile, keyFile string, logger *slog.Logger) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile, logger: logger}
	if err := c.reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// reload reads the files and, when they changed, parses them.
func (c *certFiles) reload() error {
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("%s and %s: %w", c.certFile, c.keyFile, err)
	}
	c.certPEM, c.keyPEM, c.cert, c.lastError = certPEM, keyPEM, &cert, ""
	return nil
}

// GetCertificate is the tls.Config hook: the files' certificate, reloaded
// if they changed.
func (c *certFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	err := c.reload()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && err.Error() != c.lastError {
		c.lastError = err.Error()
		c.logger.Warn("the serving certificate files do not load; serving the last good certificate", "err", err)
	}
	return c.cert, nil
}

// caBundle is the PEM a client of the kubeconfig trusts: the certificates
// of the cert file after the first (the chain up to its CA) when it has
// them, else the serving certificate itself.
func (c *certFiles) caBundle() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []byte
	for i, der := range c.cert.Certificate {
		if i > 0 || len(c.cert.Certificate) == 1 {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
		}
	}
	return out
}

// readCertPool reads a PEM bundle of CA certificates (--client-ca-file).
func readCertPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// etcdTLS is the TLS configuration of the etcd client from kube-apiserver's
// --etcd-cafile, --etcd-certfile and --etcd-keyfile (nil if none is set).
func etcdTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := readCertPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-cafile: %w", err)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("--etcd-certfile and --etcd-keyfile go together")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("--etcd-certfile/--etcd-keyfile: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
