package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/apiserver"
)

func TestAuthorizationMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flag, tokens, ca string
		want             apiserver.AuthorizationMode
	}{
		{"", "", "", apiserver.AuthorizationAlwaysAllow},
		{"", "tokens.csv", "", apiserver.AuthorizationRBAC},
		{"", "", "ca.crt", apiserver.AuthorizationRBAC},
		{"AlwaysAllow", "tokens.csv", "", apiserver.AuthorizationAlwaysAllow},
		{"RBAC", "", "", apiserver.AuthorizationRBAC},
		{"Node,RBAC", "", "", apiserver.AuthorizationRBAC},
		{" RBAC , Node ", "", "", apiserver.AuthorizationRBAC},
	} {
		mode, err := parseAuthorizationMode(tc.flag)
		if err != nil {
			t.Fatalf("%q: %v", tc.flag, err)
		}
		o := &options{authorizationMode: mode, tokenAuthFile: tc.tokens, clientCAFile: tc.ca}
		if got := o.effectiveAuthorizationMode(); got != tc.want {
			t.Errorf("--authorization-mode=%q with token file %q, client CA %q: %s, want %s", tc.flag, tc.tokens, tc.ca, got, tc.want)
		}
	}
}

// The flags' 0 is no bound; Config's 0 would be the default.
func TestInflightBound(t *testing.T) {
	t.Parallel()
	for flag, want := range map[int]int{0: -1, 1: 1, 400: 400} {
		if got := inflightBound(flag); got != want {
			t.Errorf("inflightBound(%d) = %d, want %d", flag, got, want)
		}
	}
}

func pemOf(t *testing.T, typ string, der []byte, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// --service-account-key-file holds public keys, private keys or
// certificates, several in a file; --service-account-signing-key-file an
// RSA private key (PKCS #1 or #8).
func TestReadKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub := func(k any) []byte { b, err := x509.MarshalPKIXPublicKey(k); return pemOf(t, "PUBLIC KEY", b, err) }
	ca := newTestCA(t)
	pkcs8 := func(k any) []byte { b, err := x509.MarshalPKCS8PrivateKey(k); return pemOf(t, "PRIVATE KEY", b, err) }
	ecDER, err := x509.MarshalECPrivateKey(ek)
	files := map[string][]byte{
		"pub.pem":   append(pub(&rk.PublicKey), pub(&ek.PublicKey)...),
		"rsa1.pem":  pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk), nil),
		"rsa8.pem":  pkcs8(rk),
		"ec.pem":    pemOf(t, "EC PRIVATE KEY", ecDER, err),
		"ec8.pem":   pkcs8(ek),
		"cert.pem":  ca.pem,
		"pkcs1.pem": pemOf(t, "RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&rk.PublicKey), nil),
		"none.pem":  []byte("not a key\n"),
	}
	for name, b := range files {
		writeFile(t, filepath.Join(dir, name), b)
	}
	for name, want := range map[string][]any{
		"pub.pem":   {&rk.PublicKey, &ek.PublicKey},
		"rsa1.pem":  {&rk.PublicKey},
		"rsa8.pem":  {&rk.PublicKey},
		"ec.pem":    {&ek.PublicKey},
		"cert.pem":  {ca.cert.PublicKey},
		"pkcs1.pem": {&rk.PublicKey},
	} {
		keys, err := readPublicKeys(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(keys) != len(want) {
			t.Errorf("%s: %d keys, want %d", name, len(keys), len(want))
			continue
		}
		for i := range keys {
			if !reflect.DeepEqual(keys[i], want[i]) {
				t.Errorf("%s: key %d is %T, not the file's", name, i, keys[i])
			}
		}
	}
	if _, err := readPublicKeys(filepath.Join(dir, "none.pem")); err == nil || !strings.Contains(err.Error(), "no PEM key") {
		t.Errorf("a file without keys: %v", err)
	}

	for _, name := range []string{"rsa1.pem", "rsa8.pem"} {
		k, err := readSigningKey(filepath.Join(dir, name))
		if err != nil || !k.Equal(rk) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, msg := range map[string]string{"ec.pem": "RSA", "ec8.pem": "RSA", "pub.pem": "no PEM private key", "none.pem": "no PEM private key"} {
		if _, err := readSigningKey(filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("signing key %s: %v, want an error with %q", name, err, msg)
		}
	}
}

// --service-account-signing-key-file and --service-account-issuer: the
// tokens the server issues are signed by that key, with that issuer.
func TestServiceAccountSigningKey(t *testing.T) {
	t.Parallel()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "sa.key")
	writeFile(t, keyFile, pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk), nil))
	s := startServer(t, "--tls", "--service-account-signing-key-file="+keyFile, "--service-account-issuer=https://issuer.example")
	resp, err := s.client.Post(s.url+"/api/v1/namespaces/kube-system/serviceaccounts", "application/json", strings.NewReader(`{"metadata":{"name":"robot"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = s.client.Post(s.url+"/api/v1/namespaces/kube-system/serviceaccounts/robot/token", "application/json", strings.NewReader(`{"spec":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("TokenRequest: %s\n%s", resp.Status, body)
	}
	var tr struct {
		Status struct{ Token string } `json:"status"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tr.Status.Token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", tr.Status.Token)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&rk.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
		t.Errorf("the token is not signed by the key file's key: %v", err)
	}
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Iss string }
	if err := json.Unmarshal(claims, &c); err != nil || c.Iss != "https://issuer.example" {
		t.Errorf("iss %q (%v), want https://issuer.example", c.Iss, err)
	}
}
