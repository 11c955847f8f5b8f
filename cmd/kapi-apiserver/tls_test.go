package main

import (
	"crypto/x509"
	"encoding/pem"
	"net"
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
