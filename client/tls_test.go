package client

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tlsTestCA is a self-signed certificate authority for tests.
type tlsTestCA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    []byte
	serial atomic.Int64
}

func newTLSTestCA(t *testing.T) *tlsTestCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kapi test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &tlsTestCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ca.serial.Store(1)
	return ca
}

// issue returns a PEM certificate and key for cn, valid for both server and
// client authentication, with the given subject alternative names.
func (ca *tlsTestCA) issue(t *testing.T, cn string, dnsNames []string, ips []net.IP) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dnsNames,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// mTLSTestServer starts an https server whose certificate, from ca, names
// dnsNames and ips, and which requires a client certificate from ca. It
// answers with the client certificate's common name.
func mTLSTestServer(t *testing.T, ca *tlsTestCA, dnsNames []string, ips []net.IP) *httptest.Server {
	t.Helper()
	certPEM, keyPEM := ca.issue(t, "server", dnsNames, ips)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// tlsTestGet makes one request to url with a fresh connection using tc and
// returns the body (the client certificate's common name).
func tlsTestGet(t *testing.T, tc *tls.Config, url string) (string, error) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestTLSClientConfigHandshake(t *testing.T) {
	ca := newTLSTestCA(t)
	loopback := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	byIP := mTLSTestServer(t, ca, nil, loopback)
	byName := mTLSTestServer(t, ca, []string{"api.kapi.test"}, nil)

	dir := t.TempDir()
	fileCert, fileKey := ca.issue(t, "file-user", nil, nil)
	dataCert, dataKey := ca.issue(t, "data-user", nil, nil)
	execCert, execKey := ca.issue(t, "exec-user", nil, nil)
	caFile, certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	execCertFile, execKeyFile := filepath.Join(dir, "exec.crt"), filepath.Join(dir, "exec.key")
	for path, content := range map[string][]byte{caFile: ca.pem, certFile: fileCert, keyFile: fileKey, execCertFile: execCert, execKeyFile: execKey} {
		writeKubeconfigTestFile(t, path, string(content))
	}
	plugin := newTestPlugin(t, map[string]string{"TESTPLUGIN_CERT": execCertFile, "TESTPLUGIN_KEY": execKeyFile})

	tests := []struct {
		name    string
		url     string
		tls     TLSConfig
		exec    *ExecConfig
		want    string // the common name the server saw
		wantErr string
	}{
		{name: "data", url: byIP.URL, tls: TLSConfig{CAData: ca.pem, CertData: dataCert, KeyData: dataKey}, want: "data-user"},
		{name: "files", url: byIP.URL, tls: TLSConfig{CAFile: caFile, CertFile: certFile, KeyFile: keyFile}, want: "file-user"},
		{name: "data wins over files", url: byIP.URL, tls: TLSConfig{CAFile: filepath.Join(dir, "missing"), CAData: ca.pem, CertFile: certFile, CertData: dataCert, KeyFile: keyFile, KeyData: dataKey}, want: "data-user"},
		{name: "server name mismatch", url: byName.URL, tls: TLSConfig{CAData: ca.pem, CertData: dataCert, KeyData: dataKey}, wantErr: "x509: cannot validate certificate for 127.0.0.1"},
		{name: "server name override", url: byName.URL, tls: TLSConfig{CAData: ca.pem, CertData: dataCert, KeyData: dataKey, ServerName: "api.kapi.test"}, want: "data-user"},
		{name: "insecure", url: byName.URL, tls: TLSConfig{Insecure: true, CertData: dataCert, KeyData: dataKey}, want: "data-user"},
		{name: "system roots do not know the CA", url: byIP.URL, tls: TLSConfig{CertData: dataCert, KeyData: dataKey}, wantErr: "x509: certificate signed by unknown authority"},
		{name: "no client certificate", url: byIP.URL, tls: TLSConfig{CAData: ca.pem}, wantErr: "certificate required"},
		{name: "exec plugin certificate", url: byIP.URL, tls: TLSConfig{CAData: ca.pem}, exec: plugin.cfg, want: "exec-user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{Host: tt.url, TLS: tt.tls, Exec: tt.exec}
			tc, err := cfg.TLSClientConfig()
			if err != nil {
				t.Fatalf("TLSClientConfig: %v", err)
			}
			got, err := tlsTestGet(t, tc, tt.url)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("server saw client %q, want %q", got, tt.want)
			}
		})
	}

	// The plugin ran once for all the connections it authenticated.
	tc, err := (&Config{Host: byIP.URL, TLS: TLSConfig{CAData: ca.pem}, Exec: plugin.cfg}).TLSClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got, err := tlsTestGet(t, tc, byIP.URL); err != nil || got != "exec-user" {
			t.Fatalf("got %q, %v", got, err)
		}
	}
	wantRuns(t, plugin, 1)
}

func TestTLSClientConfigErrors(t *testing.T) {
	ca := newTLSTestCA(t)
	cert, key := ca.issue(t, "user", nil, nil)
	otherCert, _ := ca.issue(t, "other", nil, nil)
	dir := t.TempDir()
	emptyFile := filepath.Join(dir, "empty")
	writeKubeconfigTestFile(t, emptyFile, "")
	missing := filepath.Join(dir, "missing")
	badBlock := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"insecure with a CA", Config{TLS: TLSConfig{Insecure: true, CAData: ca.pem}}, "TLS.Insecure is set together with a CA"},
		{"missing CA file", Config{TLS: TLSConfig{CAFile: missing}}, "TLS.CAFile: open " + missing},
		{"empty CA file", Config{TLS: TLSConfig{CAFile: emptyFile}}, "TLS.CAFile: " + emptyFile + " is empty"},
		{"CA data without PEM", Config{TLS: TLSConfig{CAData: []byte("hello")}}, "TLS.CAData: no PEM certificate found"},
		{"CA data with a bad certificate", Config{TLS: TLSConfig{CAData: append(append([]byte{}, ca.pem...), badBlock...)}}, "TLS.CAData: certificate 2: x509: "},
		{"certificate without key", Config{TLS: TLSConfig{CertData: cert}}, "TLS.CertData is set without TLS.KeyFile or TLS.KeyData"},
		{"key without certificate", Config{TLS: TLSConfig{KeyFile: emptyFile}}, "TLS.KeyFile: " + emptyFile + " is empty"},
		{"key data without certificate", Config{TLS: TLSConfig{KeyData: key}}, "TLS.KeyData is set without TLS.CertFile or TLS.CertData"},
		{"missing certificate file", Config{TLS: TLSConfig{CertFile: missing, KeyData: key}}, "TLS.CertFile: open " + missing},
		{"key does not match", Config{TLS: TLSConfig{CertData: otherCert, KeyData: key}}, "TLS.CertData and TLS.KeyData: tls: private key does not match public key"},
		{"exec plugin with a missing CA file", Config{Exec: &ExecConfig{Command: "p"}, TLS: TLSConfig{CAFile: missing}}, "TLS.CAFile: open " + missing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc, err := tt.cfg.TLSClientConfig()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("TLSClientConfig = %v, %v; want error %q", tc, err, tt.want)
			}
		})
	}
}

func TestKubeconfigToTLSHandshake(t *testing.T) {
	// A kubeconfig with relative certificate paths and inline CA data drives
	// a real mutual-TLS handshake.
	ca := newTLSTestCA(t)
	srv := mTLSTestServer(t, ca, nil, []net.IP{net.IPv4(127, 0, 0, 1)})
	dir := t.TempDir()
	cert, key := ca.issue(t, "kubeconfig-user", nil, nil)
	writeKubeconfigTestFile(t, filepath.Join(dir, "user.crt"), string(cert))
	writeKubeconfigTestFile(t, filepath.Join(dir, "user.key"), string(key))
	kubeconfig := filepath.Join(dir, "config")
	writeKubeconfigTestFile(t, kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: test
  user:
    client-certificate: user.crt
    client-key: user.key
contexts:
- name: test
  context: {cluster: test, user: test}
`, srv.URL, pemToBase64(ca.pem)))
	cfg, err := Load(LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.TLSClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	got, err := tlsTestGet(t, tc, cfg.Host)
	if err != nil || got != "kubeconfig-user" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func pemToBase64(b []byte) string {
	return base64.StdEncoding.EncodeToString(b)
}
