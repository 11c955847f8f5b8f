package conformance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// kubeconfig is the part of a kubeconfig file these tests understand: the
// current context's server, its CA, and a client certificate or bearer token.
// The suite parses it itself, rather than through kapi's client package, so
// that a bug there cannot hide a server bug.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                string `json:"server"`
			CertificateAuthority  string `json:"certificate-authority"`
			CertificateAuthorityD string `json:"certificate-authority-data"`
			InsecureSkipTLSVerify bool   `json:"insecure-skip-tls-verify"`
			TLSServerName         string `json:"tls-server-name"`
		} `json:"cluster"`
	} `json:"clusters"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			ClientCertificate     string `json:"client-certificate"`
			ClientCertificateData string `json:"client-certificate-data"`
			ClientKey             string `json:"client-key"`
			ClientKeyData         string `json:"client-key-data"`
			Token                 string `json:"token"`
			TokenFile             string `json:"tokenFile"`
			Exec                  any    `json:"exec"`
			AuthProvider          any    `json:"auth-provider"`
		} `json:"user"`
	} `json:"users"`
}

// kubeconfigEnv builds the target from the kubeconfig at path.
func kubeconfigEnv(path string) (*env, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	// fileOrData returns the base64 data field, or the named file's contents.
	fileOrData := func(data, file string) ([]byte, error) {
		if data != "" {
			return base64.StdEncoding.DecodeString(data)
		}
		if file != "" {
			return os.ReadFile(rel(file))
		}
		return nil, nil
	}

	ctxName := kc.CurrentContext
	if ctxName == "" {
		return nil, errors.New("kubeconfig has no current-context")
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == ctxName {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return nil, fmt.Errorf("kubeconfig: context %q not found", ctxName)
	}
	e := &env{name: "kubeconfig " + path + " context " + ctxName, patience: 4}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		e.base = strings.TrimSuffix(c.Cluster.Server, "/")
		tlsConfig.InsecureSkipVerify = c.Cluster.InsecureSkipTLSVerify //nolint:gosec // the kubeconfig asks for it
		tlsConfig.ServerName = c.Cluster.TLSServerName
		ca, err := fileOrData(c.Cluster.CertificateAuthorityD, c.Cluster.CertificateAuthority)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: cluster %q CA: %w", clusterName, err)
		}
		if len(ca) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return nil, fmt.Errorf("kubeconfig: cluster %q: no certificate in its CA data", clusterName)
			}
			tlsConfig.RootCAs = pool
		}
	}
	if !found || e.base == "" {
		return nil, fmt.Errorf("kubeconfig: cluster %q not found or has no server", clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return nil, fmt.Errorf("kubeconfig: user %q uses an exec or auth-provider plugin; give a kubeconfig with a token or a client certificate", userName)
		}
		cert, err := fileOrData(u.User.ClientCertificateData, u.User.ClientCertificate)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: user %q certificate: %w", userName, err)
		}
		key, err := fileOrData(u.User.ClientKeyData, u.User.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: user %q key: %w", userName, err)
		}
		if len(cert) > 0 {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return nil, fmt.Errorf("kubeconfig: user %q: %w", userName, err)
			}
			tlsConfig.Certificates = []tls.Certificate{pair}
		}
		e.token = u.User.Token
		if e.token == "" && u.User.TokenFile != "" {
			b, err := os.ReadFile(rel(u.User.TokenFile))
			if err != nil {
				return nil, fmt.Errorf("kubeconfig: user %q token file: %w", userName, err)
			}
			e.token = strings.TrimSpace(string(b))
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	tr.MaxIdleConnsPerHost = 64
	e.client = &http.Client{Transport: tr}
	return e, nil
}

// testPKI is a CA with a server and a client certificate, for the kubeconfig
// case.
type testPKI struct {
	caPEM                 []byte
	server                tls.Certificate
	clientCert, clientKey []byte
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := newKey()
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "conformance-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, []byte) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage},
			KeyUsage: x509.KeyUsageDigitalSignature, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
	}
	p := &testPKI{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	sc, sk := issue(2, "kube-apiserver", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	if p.server, err = tls.X509KeyPair(sc, sk); err != nil {
		t.Fatal(err)
	}
	p.clientCert, p.clientKey = issue(3, "conformance", x509.ExtKeyUsageClientAuth, nil)
	return p
}

// serveTLS serves h over TLS with the PKI's server certificate, requiring a
// client certificate from the CA and, if token is set, that bearer token.
func (p *testPKI) serveTLS(t testing.TB, h http.Handler, token string) *httptest.Server {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.server}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	return srv
}

// writeKubeconfig writes a kubeconfig for url: the CA inline, the client
// certificate and key as files next to it (relative paths), the token in a
// token file. Another context, current-context's decoy, points elsewhere.
func (p *testPKI) writeKubeconfig(t testing.TB, dir, url, token string) string {
	t.Helper()
	for name, b := range map[string][]byte{"client.crt": p.clientCert, "client.key": p.clientKey, "token": []byte(token + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
clusters:
- name: decoy
  cluster:
    server: https://192.0.2.1:6443
- name: local
  cluster:
    server: %s
    certificate-authority-data: %s
contexts:
- name: decoy
  context: {cluster: decoy, user: nobody}
- name: test
  context: {cluster: local, user: me, namespace: ignored}
users:
- name: nobody
  user: {token: wrong}
- name: me
  user:
    client-certificate: client.crt
    client-key: client.key
    tokenFile: token
`, url, base64.StdEncoding.EncodeToString(p.caPEM))
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKubeconfig checks the suite's own kubeconfig reading: the current
// context's server, CA data, client certificate files and token file.
func TestKubeconfig(t *testing.T) {
	t.Parallel()
	p := newTestPKI(t)
	srv := p.serveTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}), "s3cret")
	defer srv.Close()
	path := p.writeKubeconfig(t, t.TempDir(), srv.URL, "s3cret")
	e, err := kubeconfigEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	defer e.client.CloseIdleConnections()
	if e.base != srv.URL || e.token != "s3cret" || e.inProcess {
		t.Errorf("env from kubeconfig: base %q token %q inProcess %v", e.base, e.token, e.inProcess)
	}
	r := e.get(t, "/healthz")
	if r.Code != http.StatusOK || string(r.Body) != "ok" {
		t.Errorf("GET /healthz through the kubeconfig: %s", r)
	}
}
