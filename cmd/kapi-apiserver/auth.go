package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/apiserver"
)

// kube-apiserver's authentication and authorization flags, read into an
// apiserver.Authentication and an authorization mode.

// https reports whether the server serves TLS.
func (o *options) https() bool { return o.tls || o.tlsCertFile != "" }

// authenticates reports whether the server authenticates requests: given
// a token file or a client CA (--token alone keeps its own check,
// requireToken).
func (o *options) authenticates() bool { return o.tokenAuthFile != "" || o.clientCAFile != "" }

// fileList is a flag of file names, repeatable and comma-separated, as
// kube-apiserver's string-slice flags.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(v string) error {
	for name := range strings.SplitSeq(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*f = append(*f, name)
		}
	}
	return nil
}

// parseAuthorizationMode reads --authorization-mode: a comma-separated
// list as kube-apiserver's, of which kapi implements AlwaysAllow and RBAC,
// one at a time. Node is accepted and left out: its authorizer only
// answers for kubelets (system:node:NAME users), and kapi runs none, so
// "Node,RBAC", kubeadm's value, decides as RBAC does. "" is the default
// (see authorizationMode).
func parseAuthorizationMode(v string) (apiserver.AuthorizationMode, error) {
	var modes []apiserver.AuthorizationMode
	for m := range strings.SplitSeq(v, ",") {
		switch m = strings.TrimSpace(m); m {
		case "", "Node":
		case string(apiserver.AuthorizationAlwaysAllow), string(apiserver.AuthorizationRBAC):
			if slices.Contains(modes, apiserver.AuthorizationMode(m)) {
				return "", fmt.Errorf("%q is listed twice", m)
			}
			modes = append(modes, apiserver.AuthorizationMode(m))
		default:
			return "", fmt.Errorf("kapi implements AlwaysAllow and RBAC (and accepts Node), not %q", m)
		}
	}
	switch {
	case len(modes) > 1:
		return "", fmt.Errorf("kapi runs one of AlwaysAllow and RBAC, not %q", v)
	case len(modes) == 0 && strings.Contains(v, "Node"):
		return "", errors.New("Node alone authorizes only kubelets, which kapi does not run; add RBAC")
	case len(modes) == 0:
		return "", nil
	}
	return modes[0], nil
}

// authorizationMode is the mode the server runs: the flag's, or by
// default RBAC when the server authenticates (a token file or a client
// CA: the users they let in get what their bindings grant) and AlwaysAllow
// otherwise.
func (o *options) effectiveAuthorizationMode() apiserver.AuthorizationMode {
	switch {
	case o.authorizationMode != "":
		return o.authorizationMode
	case o.authenticates():
		return apiserver.AuthorizationRBAC
	}
	return apiserver.AuthorizationAlwaysAllow
}

// authentication reads the files of the authentication flags. It returns
// nil when the server does not authenticate. adminToken is the token of
// the written kubeconfig: --token when given (a user of the token file
// as kube-apiserver's admin of one, in system:masters), else one drawn
// now for the same user.
func (o *options) authentication() (auth *apiserver.Authentication, adminToken string, err error) {
	if !o.authenticates() {
		return nil, o.token, nil
	}
	auth = &apiserver.Authentication{Tokens: map[string]apiserver.User{}, Anonymous: o.anonymousAuth}
	if o.tokenAuthFile != "" {
		f, err := os.Open(o.tokenAuthFile)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		if auth.Tokens, err = apiserver.ParseTokenFile(f); err != nil {
			return nil, "", fmt.Errorf("%s: %w", o.tokenAuthFile, err)
		}
	}
	if o.clientCAFile != "" {
		if auth.ClientCA, err = readCertPool(o.clientCAFile); err != nil {
			return nil, "", err
		}
	}
	for _, name := range o.serviceAccountKeys {
		keys, err := readPublicKeys(name)
		if err != nil {
			return nil, "", err
		}
		auth.ServiceAccountKeys = append(auth.ServiceAccountKeys, keys...)
	}
	adminToken = o.token
	if adminToken == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		adminToken = hex.EncodeToString(b[:])
	}
	if _, taken := auth.Tokens[adminToken]; taken {
		return nil, "", errors.New("--token is also a token of --token-auth-file")
	}
	auth.Tokens[adminToken] = apiserver.AdminUser
	return auth, adminToken, nil
}

// readPublicKeys reads the keys of a --service-account-key-file: PEM
// public keys, or private keys or certificates whose public keys are
// meant, as kube-apiserver reads them.
func readPublicKeys(name string) ([]crypto.PublicKey, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var keys []crypto.PublicKey
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			break
		}
		var key any
		switch block.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = c.PublicKey
			}
		case "RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY":
			var k crypto.Signer
			if k, err = parsePrivateKey(block); err == nil {
				key = k.Public()
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, block.Type, err)
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no PEM key", name)
	}
	return keys, nil
}

// parsePrivateKey parses a PEM block of a PKCS #1, PKCS #8 or SEC 1 key.
func parsePrivateKey(block *pem.Block) (crypto.Signer, error) {
	switch block.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%T is not a signing key", k)
	}
	return s, nil
}

// readSigningKey reads --service-account-signing-key-file: the PEM RSA
// private key the server signs service account tokens with.
func readSigningKey(name string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			return nil, fmt.Errorf("%s holds no PEM private key", name)
		}
		if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
			continue
		}
		k, err := parsePrivateKey(block)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s: kapi signs with RSA keys, not %T", name, k)
		}
		return rk, nil
	}
}
