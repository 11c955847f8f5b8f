package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSelfSignedCertificate(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		ip     net.IP
		ok     []string
		refuse []string
	}{
		{"loopback", net.IPv4(127, 0, 0, 1), []string{"localhost", "127.0.0.1", "::1"}, []string{"10.1.2.3", "example.com"}},
		{"unspecified", net.IPv4zero, []string{"localhost", "127.0.0.1", "::1"}, []string{"0.0.0.0"}},
		{"other address", net.ParseIP("10.1.2.3"), []string{"localhost", "127.0.0.1", "::1", "10.1.2.3"}, []string{"10.1.2.4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cert, caPEM, err := selfSignedCertificate(tc.ip, now)
			if err != nil {
				t.Fatal(err)
			}
			block, rest := pem.Decode(caPEM)
			if block == nil || block.Type != "CERTIFICATE" || len(rest) != 0 {
				t.Fatalf("CA PEM is not one certificate:\n%s", caPEM)
			}
			ca, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if !ca.IsCA {
				t.Error("CA certificate is not a CA")
			}
			if len(cert.Certificate) != 1 || cert.Leaf == nil || cert.PrivateKey == nil {
				t.Fatalf("serving certificate: %d certificates, leaf %v, key %v", len(cert.Certificate), cert.Leaf != nil, cert.PrivateKey != nil)
			}
			roots := x509.NewCertPool()
			roots.AddCert(ca)
			verify := func(name string, at time.Time) error {
				_, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: at,
					KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
				return err
			}
			for _, name := range tc.ok {
				if err := verify(name, now); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			for _, name := range tc.refuse {
				if err := verify(name, now); err == nil {
					t.Errorf("%s: verified, want refused", name)
				}
			}
			// Some clock skew is tolerated; the certificate outlives a run.
			if err := verify("localhost", now.Add(-30*time.Minute)); err != nil {
				t.Errorf("30 minutes early: %v", err)
			}
			if err := verify("localhost", now.Add(300*24*time.Hour)); err != nil {
				t.Errorf("300 days later: %v", err)
			}
		})
	}
}

// testCA issues certificates for the TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a certificate for the subject (a serving one for 127.0.0.1
// when server), and returns its PEM followed by the CA's, and its key's.
func (ca *testCA) issue(t *testing.T, serial int64, subject pkix.Name, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.pem...),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// writeFile writes b to path through a rename, as a certificate manager
// replaces a file.
func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

// servedSerial connects anew to the server at url and returns the serial
// number of the certificate it serves, verified against ca.
func servedSerial(t *testing.T, url string, ca *testCA, cfg *tls.Config) int64 {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cfg != nil {
		c = cfg
		c.RootCAs = pool
	}
	conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), c)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// --tls-cert-file and --tls-private-key-file: the files' certificate is
// served, a new connection gets the new one once the files are rewritten,
// a pair that does not load leaves the last good one; the written
// kubeconfig trusts the file's chain; TLS 1.2 is the least version.
func TestTLSCertFiles(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c1, k1 := ca.issue(t, 101, pkix.Name{CommonName: "kapi-1"}, true)
	writeFile(t, certFile, c1)
	writeFile(t, keyFile, k1)
	s := startServer(t, "--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("url %s", s.url)
	}
	if got, _ := base64.StdEncoding.DecodeString(readKubeconfig(t, s.kubeconfig).Clusters[0].Cluster.CertificateAuthorityData); string(got) != string(ca.pem) {
		t.Errorf("the kubeconfig trusts\n%s\nnot the CA of the certificate file", got)
	}
	if got := servedSerial(t, s.url, ca, nil); got != 101 {
		t.Fatalf("serial %d served, want 101", got)
	}

	c2, k2 := ca.issue(t, 102, pkix.Name{CommonName: "kapi-2"}, true)
	writeFile(t, certFile, c2)
	writeFile(t, keyFile, k2)
	if got := servedSerial(t, s.url, ca, nil); got != 102 {
		t.Fatalf("after the files changed, serial %d served, want 102", got)
	}

	// Half-way through a change: the new certificate, the old key.
	c3, k3 := ca.issue(t, 103, pkix.Name{CommonName: "kapi-3"}, true)
	writeFile(t, certFile, c3)
	if got := servedSerial(t, s.url, ca, nil); got != 102 {
		t.Fatalf("with a certificate and key that do not match, serial %d served, want the last good 102", got)
	}
	writeFile(t, keyFile, k3)
	if got := servedSerial(t, s.url, ca, nil); got != 103 {
		t.Fatalf("serial %d served, want 103", got)
	}
	if !strings.Contains(s.stderr.String(), "do not load") {
		t.Errorf("the bad pair was not logged:\n%s", s.stderr)
	}

	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11})
	if err == nil {
		conn.Close()
		t.Error("a TLS 1.1 client was served")
	}
}

// --client-ca-file: the server asks for a client certificate (and lets
// connections without one in).
func TestClientCAFileRequestsCertificates(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	writeFile(t, caFile, ca.pem)
	s := startServer(t, "--tls", "--client-ca-file="+caFile)
	cc, ck := ca.issue(t, 7, pkix.Name{CommonName: "alice"}, false)
	clientCert, err := tls.X509KeyPair(cc, ck)
	if err != nil {
		t.Fatal(err)
	}
	asked := false
	kc := readKubeconfig(t, s.kubeconfig)
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), &tls.Config{RootCAs: kc.caPool(t), MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			asked = true
			return &clientCert, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if !asked {
		t.Error("the server did not ask for a client certificate")
	}
	// Without one, the connection is made (the request may carry a token).
	conn, err = tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), &tls.Config{RootCAs: kc.caPool(t), MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
}
