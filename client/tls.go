package client

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

// TLSClientConfig builds the TLS configuration for connections to c.Host
// from c.TLS:
//
//   - CAData, else CAFile: the only roots trusted for the server's
//     certificate (PEM; every CERTIFICATE block must parse); without either,
//     the system roots;
//   - CertData/CertFile with KeyData/KeyFile: the client certificate (Data
//     wins over File when both are set);
//   - ServerName and Insecure as documented on TLSConfig; Insecure together
//     with a CA is an error, as in client-go.
//
// When c uses an exec plugin (c.Exec set and no token, basic credentials or
// client certificate given directly), GetClientCertificate presents the
// plugin's certificate, fetched at each handshake from the shared
// Config.ExecAuthenticator.
//
// Files are read now. Errors name the field that is wrong.
func (c *Config) TLSClientConfig() (*tls.Config, error) {
	t := &c.TLS
	if t.Insecure && (t.CAFile != "" || len(t.CAData) > 0) {
		return nil, errors.New("TLS.Insecure is set together with a CA (TLS.CAFile or TLS.CAData): use one or the other")
	}
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.Insecure, // explicitly requested; documented as unsafe
	}

	ca, caField, err := dataOrFile(t.CAData, "TLS.CAData", t.CAFile, "TLS.CAFile")
	if err != nil {
		return nil, err
	}
	if ca != nil {
		pool, err := parseCAPool(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caField, err)
		}
		tc.RootCAs = pool
	}

	cert, certField, err := dataOrFile(t.CertData, "TLS.CertData", t.CertFile, "TLS.CertFile")
	if err != nil {
		return nil, err
	}
	key, keyField, err := dataOrFile(t.KeyData, "TLS.KeyData", t.KeyFile, "TLS.KeyFile")
	if err != nil {
		return nil, err
	}
	switch {
	case cert != nil && key == nil:
		return nil, fmt.Errorf("%s is set without TLS.KeyFile or TLS.KeyData", certField)
	case key != nil && cert == nil:
		return nil, fmt.Errorf("%s is set without TLS.CertFile or TLS.CertData", keyField)
	case cert != nil:
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", certField, keyField, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	case c.usesExec():
		a, err := c.ExecAuthenticator()
		if err != nil {
			return nil, err
		}
		tc.GetClientCertificate = a.GetClientCertificate
	}
	return tc, nil
}

// dataOrFile returns data if set, else the content of the file (nil if
// neither is set), and the name of the field it came from.
func dataOrFile(data []byte, dataField, file, fileField string) ([]byte, string, error) {
	if len(data) > 0 {
		return data, dataField, nil
	}
	if file == "" {
		return nil, "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fileField, fmt.Errorf("%s: %w", fileField, err)
	}
	if len(b) == 0 {
		return nil, fileField, fmt.Errorf("%s: %s is empty", fileField, file)
	}
	return b, fileField, nil
}

// parseCAPool parses a PEM bundle. Unlike CertPool.AppendCertsFromPEM it
// reports a certificate that does not parse instead of skipping it.
func parseCAPool(pemBytes []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	n := 0
	for rest := pemBytes; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", n, err)
		}
		pool.AddCert(cert)
	}
	if n == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}
