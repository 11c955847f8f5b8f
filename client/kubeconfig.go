package client

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/kjson"
)

// Kubeconfig is one or more kubeconfig files (apiVersion v1, kind Config)
// merged the way kubectl merges the files named in $KUBECONFIG.
//
// Only the fields kapi uses are kept; preferences, extensions, auth-provider
// and impersonation fields are ignored. Relative file paths (certificate
// files, token files, and exec commands that contain a path separator) are
// already resolved against the directory of the file that defined them, and
// base64 "-data" fields are already decoded.
type Kubeconfig struct {
	// Files are the files that were read, in precedence order. Files that did
	// not exist are not listed.
	Files []string

	// CurrentContext is the first non-empty current-context among Files.
	CurrentContext string

	// Clusters, Users and Contexts are keyed by name. When several files
	// define the same name, the first file's entry wins as a whole.
	Clusters map[string]*KubeconfigCluster
	Users    map[string]*KubeconfigUser
	Contexts map[string]*KubeconfigContext
}

// KubeconfigCluster is a kubeconfig "cluster" entry.
type KubeconfigCluster struct {
	// Server is the API server's URL.
	Server string
	// CertificateAuthority is the path of a PEM CA bundle (absolute).
	CertificateAuthority string
	// CertificateAuthorityData is a PEM CA bundle (decoded from base64).
	CertificateAuthorityData []byte
	// InsecureSkipTLSVerify turns off server certificate verification.
	InsecureSkipTLSVerify bool
	// TLSServerName is the name checked in the server's certificate.
	TLSServerName string
	// ProxyURL is an http, https or socks5 proxy for requests to Server.
	ProxyURL string
	// Origin is the file that defined the entry.
	Origin string
}

// KubeconfigUser is a kubeconfig "user" (authInfo) entry.
type KubeconfigUser struct {
	// ClientCertificate and ClientKey are paths of PEM files (absolute).
	ClientCertificate, ClientKey string
	// ClientCertificateData and ClientKeyData are PEM bytes (decoded from
	// base64).
	ClientCertificateData, ClientKeyData []byte
	// Token is a bearer token. TokenFile is the path of a file holding one
	// (absolute); when both are set the file, re-read as it changes, wins.
	Token, TokenFile string
	// Username and Password are HTTP basic credentials.
	Username, Password string
	// Exec is a credential plugin. A relative command containing a path
	// separator is resolved against the kubeconfig's directory; a bare name is
	// looked up in $PATH when the plugin runs. An empty interactiveMode is
	// defaulted to IfAvailable for client.authentication.k8s.io/v1beta1, as
	// kubectl does.
	Exec *ExecConfig
	// Origin is the file that defined the entry.
	Origin string
}

// KubeconfigContext is a kubeconfig "context" entry: a cluster, a user and a
// default namespace.
type KubeconfigContext struct {
	// Cluster and User name entries of Clusters and Users; an empty User
	// means no credentials.
	Cluster, User string
	// Namespace is the default namespace ("" means "default").
	Namespace string
	// Origin is the file that defined the entry.
	Origin string
}

// The wire form of a kubeconfig file (client-go's clientcmd/api/v1 layout),
// decoded case-sensitively as kubectl does. Data fields stay strings here so
// that a bad base64 value can be reported with its entry and field name.
type kubeconfigFile struct {
	APIVersion     string `json:"apiVersion"`
	Kind           string `json:"kind"`
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string        `json:"name"`
		Cluster kcClusterWire `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string     `json:"name"`
		User kcUserWire `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string        `json:"name"`
		Context kcContextWire `json:"context"`
	} `json:"contexts"`
}

type kcClusterWire struct {
	Server                   string `json:"server"`
	CertificateAuthority     string `json:"certificate-authority"`
	CertificateAuthorityData string `json:"certificate-authority-data"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
	TLSServerName            string `json:"tls-server-name"`
	ProxyURL                 string `json:"proxy-url"`
}

type kcUserWire struct {
	ClientCertificate     string      `json:"client-certificate"`
	ClientCertificateData string      `json:"client-certificate-data"`
	ClientKey             string      `json:"client-key"`
	ClientKeyData         string      `json:"client-key-data"`
	Token                 string      `json:"token"`
	TokenFile             string      `json:"tokenFile"`
	Username              string      `json:"username"`
	Password              string      `json:"password"`
	Exec                  *kcExecWire `json:"exec"`
}

type kcExecWire struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
	APIVersion         string `json:"apiVersion"`
	InstallHint        string `json:"installHint"`
	ProvideClusterInfo bool   `json:"provideClusterInfo"`
	InteractiveMode    string `json:"interactiveMode"`
}

type kcContextWire struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace"`
}

// Exec credential API versions and interactive modes.
const (
	execAPIVersionV1      = "client.authentication.k8s.io/v1"
	execAPIVersionV1beta1 = "client.authentication.k8s.io/v1beta1"

	execInteractiveNever       = "Never"
	execInteractiveIfAvailable = "IfAvailable"
	execInteractiveAlways      = "Always"
)

// LoadKubeconfig reads and merges the kubeconfig files at paths, highest
// precedence first, with kubectl's rules for $KUBECONFIG:
//
//   - the first file to define a cluster, user or context name wins, whole;
//   - the first non-empty current-context wins;
//   - files that do not exist are skipped, but if none of paths exists the
//     error wraps fs.ErrNotExist;
//   - a file that exists but cannot be read or parsed is an error;
//   - empty paths and repeated paths are ignored; an empty file is an empty
//     config.
//
// Relative paths inside a file are resolved against that file's directory.
// To split a $KUBECONFIG value use filepath.SplitList.
func LoadKubeconfig(paths ...string) (*Kubeconfig, error) {
	kc := &Kubeconfig{
		Clusters: map[string]*KubeconfigCluster{},
		Users:    map[string]*KubeconfigUser{},
		Contexts: map[string]*KubeconfigContext{},
	}
	seen := map[string]bool{}
	var missing []string
	for _, p := range paths {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		raw, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, p)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", p, err)
		}
		f, err := parseKubeconfig(p, raw)
		if err != nil {
			return nil, err
		}
		kc.Files = append(kc.Files, p)
		kc.merge(f)
	}
	if len(kc.Files) == 0 {
		if len(missing) == 0 {
			return nil, errors.New("kubeconfig: no file given")
		}
		return nil, fmt.Errorf("kubeconfig %s: %w", strings.Join(missing, ", "), fs.ErrNotExist)
	}
	return kc, nil
}

// merge adds the entries of f that kc does not have yet.
func (kc *Kubeconfig) merge(f *Kubeconfig) {
	if kc.CurrentContext == "" {
		kc.CurrentContext = f.CurrentContext
	}
	for name, c := range f.Clusters {
		if _, ok := kc.Clusters[name]; !ok {
			kc.Clusters[name] = c
		}
	}
	for name, u := range f.Users {
		if _, ok := kc.Users[name]; !ok {
			kc.Users[name] = u
		}
	}
	for name, c := range f.Contexts {
		if _, ok := kc.Contexts[name]; !ok {
			kc.Contexts[name] = c
		}
	}
}

// parseKubeconfig decodes one kubeconfig file read from path.
func parseKubeconfig(path string, raw []byte) (*Kubeconfig, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("kubeconfig %s: "+format, append([]any{path}, args...)...)
	}
	kc := &Kubeconfig{
		Clusters: map[string]*KubeconfigCluster{},
		Users:    map[string]*KubeconfigUser{},
		Contexts: map[string]*KubeconfigContext{},
	}
	if strings.TrimSpace(string(raw)) == "" {
		return kc, nil
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fail("%w", err)
	}
	var w kubeconfigFile
	if err := kjson.Unmarshal(js, &w); err != nil {
		return nil, fail("%w", err)
	}
	if w.APIVersion != "" && w.APIVersion != "v1" {
		return nil, fail("apiVersion %q is not supported (want v1)", w.APIVersion)
	}
	if w.Kind != "" && w.Kind != "Config" {
		return nil, fail("kind %q is not a kubeconfig (want Config)", w.Kind)
	}
	base, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fail("%w", err)
	}
	resolve := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	decode := func(entry, field, s string) ([]byte, error) {
		if s == "" {
			return nil, nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fail("%s: %s: %w", entry, field, err)
		}
		return b, nil
	}

	kc.CurrentContext = w.CurrentContext
	for _, nc := range w.Clusters {
		entry := fmt.Sprintf("cluster %q", nc.Name)
		if nc.Name == "" {
			return nil, fail("a cluster has no name")
		}
		if _, dup := kc.Clusters[nc.Name]; dup {
			return nil, fail("%s is defined twice", entry)
		}
		c := nc.Cluster
		ca, err := decode(entry, "certificate-authority-data", c.CertificateAuthorityData)
		if err != nil {
			return nil, err
		}
		kc.Clusters[nc.Name] = &KubeconfigCluster{
			Server:                   c.Server,
			CertificateAuthority:     resolve(c.CertificateAuthority),
			CertificateAuthorityData: ca,
			InsecureSkipTLSVerify:    c.InsecureSkipTLSVerify,
			TLSServerName:            c.TLSServerName,
			ProxyURL:                 c.ProxyURL,
			Origin:                   path,
		}
	}
	for _, nu := range w.Users {
		entry := fmt.Sprintf("user %q", nu.Name)
		if nu.Name == "" {
			return nil, fail("a user has no name")
		}
		if _, dup := kc.Users[nu.Name]; dup {
			return nil, fail("%s is defined twice", entry)
		}
		u := nu.User
		cert, err := decode(entry, "client-certificate-data", u.ClientCertificateData)
		if err != nil {
			return nil, err
		}
		key, err := decode(entry, "client-key-data", u.ClientKeyData)
		if err != nil {
			return nil, err
		}
		ku := &KubeconfigUser{
			ClientCertificate:     resolve(u.ClientCertificate),
			ClientCertificateData: cert,
			ClientKey:             resolve(u.ClientKey),
			ClientKeyData:         key,
			Token:                 u.Token,
			TokenFile:             resolve(u.TokenFile),
			Username:              u.Username,
			Password:              u.Password,
			Origin:                path,
		}
		if e := u.Exec; e != nil {
			x := &ExecConfig{
				Command:            e.Command,
				Args:               e.Args,
				APIVersion:         e.APIVersion,
				InstallHint:        e.InstallHint,
				ProvideClusterInfo: e.ProvideClusterInfo,
				InteractiveMode:    e.InteractiveMode,
			}
			// A command with a path separator is relative to the file, as
			// for kubectl; a bare name is looked up in $PATH.
			if strings.ContainsRune(x.Command, filepath.Separator) || strings.ContainsRune(x.Command, '/') {
				x.Command = resolve(x.Command)
			}
			if x.InteractiveMode == "" && x.APIVersion == execAPIVersionV1beta1 {
				x.InteractiveMode = execInteractiveIfAvailable
			}
			for i, ev := range e.Env {
				if ev.Name == "" {
					return nil, fail("%s: exec: env[%d]: name is not set", entry, i)
				}
				if x.Env == nil {
					x.Env = map[string]string{}
				}
				x.Env[ev.Name] = ev.Value
			}
			ku.Exec = x
		}
		kc.Users[nu.Name] = ku
	}
	for _, nc := range w.Contexts {
		if nc.Name == "" {
			return nil, fail("a context has no name")
		}
		if _, dup := kc.Contexts[nc.Name]; dup {
			return nil, fail("context %q is defined twice", nc.Name)
		}
		kc.Contexts[nc.Name] = &KubeconfigContext{
			Cluster:   nc.Context.Cluster,
			User:      nc.Context.User,
			Namespace: nc.Context.Namespace,
			Origin:    path,
		}
	}
	return kc, nil
}

// isEmpty reports whether kc defines nothing at all (kubectl then falls back
// to the in-cluster configuration).
func (kc *Kubeconfig) isEmpty() bool {
	return kc.CurrentContext == "" && len(kc.Clusters) == 0 && len(kc.Users) == 0 && len(kc.Contexts) == 0
}

// Config returns the client configuration of the named context, or of the
// current-context when contextName is empty. It fills Host, TLS,
// BearerToken/BearerTokenFile, Username/Password, Exec, ProxyURL and
// Namespace ("default" when the context has none); other fields keep their
// zero value (the client's defaults).
//
// The context, its cluster and its user are checked as kubectl checks them:
// the cluster must have a server; a file field and its -data twin may not both
// be set; a client certificate needs a key; named files must be readable; a
// token and basic credentials may not both be set; an exec plugin needs a
// command, a supported apiVersion and an interactiveMode. A tokenFile is read
// now, so that a missing file is reported here. Errors name the file, the
// context, the entry and the field.
//
// A context without a user is valid (no credentials). The returned Config
// shares nothing with kc.
func (kc *Kubeconfig) Config(contextName string) (*Config, error) {
	files := strings.Join(kc.Files, ", ")
	name := contextName
	if name == "" {
		name = kc.CurrentContext
	}
	if name == "" {
		return nil, fmt.Errorf("kubeconfig %s: no context selected: current-context is not set and no context name was given", files)
	}
	kctx, ok := kc.Contexts[name]
	if !ok {
		return nil, fmt.Errorf("kubeconfig %s: context %q not found", files, name)
	}
	fail := func(origin, format string, args ...any) error {
		return fmt.Errorf("kubeconfig %s: context %q: "+format, append([]any{origin, name}, args...)...)
	}

	if kctx.Cluster == "" {
		return nil, fail(kctx.Origin, "cluster is not set")
	}
	cl, ok := kc.Clusters[kctx.Cluster]
	if !ok {
		return nil, fail(kctx.Origin, "cluster %q not found", kctx.Cluster)
	}
	cfg := &Config{
		Host:     cl.Server,
		ProxyURL: cl.ProxyURL,
		TLS: TLSConfig{
			CAFile:     cl.CertificateAuthority,
			CAData:     bytes.Clone(cl.CertificateAuthorityData),
			ServerName: cl.TLSServerName,
			Insecure:   cl.InsecureSkipTLSVerify,
		},
		Namespace: kctx.Namespace,
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if err := checkKubeconfigCluster(cl); err != nil {
		return nil, fail(cl.Origin, "cluster %q: %w", kctx.Cluster, err)
	}

	if kctx.User == "" {
		return cfg, nil
	}
	u, ok := kc.Users[kctx.User]
	if !ok {
		return nil, fail(kctx.Origin, "user %q not found", kctx.User)
	}
	if err := fillKubeconfigUser(cfg, u); err != nil {
		return nil, fail(u.Origin, "user %q: %w", kctx.User, err)
	}
	return cfg, nil
}

// checkCluster validates the fields of a cluster entry.
func checkKubeconfigCluster(cl *KubeconfigCluster) error {
	if cl.Server == "" {
		return errors.New("server is not set")
	}
	if cl.CertificateAuthority != "" && len(cl.CertificateAuthorityData) > 0 {
		return errors.New("certificate-authority and certificate-authority-data are both set")
	}
	if err := checkFileReadable(cl.CertificateAuthority); err != nil {
		return fmt.Errorf("certificate-authority: %w", err)
	}
	if cl.ProxyURL != "" {
		if err := checkKubeconfigProxyURL(cl.ProxyURL); err != nil {
			return fmt.Errorf("proxy-url: %w", err)
		}
	}
	return nil
}

// checkProxyURL accepts the proxy schemes client-go accepts.
func checkKubeconfigProxyURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "http", "https", "socks5":
		return nil
	default:
		return fmt.Errorf("%q: unsupported scheme %q (want http, https or socks5)", s, u.Scheme)
	}
}

// fillUser validates u and copies its credentials into cfg.
func fillKubeconfigUser(cfg *Config, u *KubeconfigUser) error {
	hasCert := u.ClientCertificate != "" || len(u.ClientCertificateData) > 0
	hasKey := u.ClientKey != "" || len(u.ClientKeyData) > 0
	switch {
	case u.ClientCertificate != "" && len(u.ClientCertificateData) > 0:
		return errors.New("client-certificate and client-certificate-data are both set")
	case u.ClientKey != "" && len(u.ClientKeyData) > 0:
		return errors.New("client-key and client-key-data are both set")
	case hasCert && !hasKey:
		return errors.New("client-certificate is set without client-key or client-key-data")
	case hasKey && !hasCert:
		return errors.New("client-key is set without client-certificate or client-certificate-data")
	}
	if err := checkFileReadable(u.ClientCertificate); err != nil {
		return fmt.Errorf("client-certificate: %w", err)
	}
	if err := checkFileReadable(u.ClientKey); err != nil {
		return fmt.Errorf("client-key: %w", err)
	}
	if (u.Token != "" || u.TokenFile != "") && (u.Username != "" || u.Password != "") {
		return errors.New("token and username/password are both set; only one authentication method is allowed")
	}
	cfg.TLS.CertFile = u.ClientCertificate
	cfg.TLS.CertData = bytes.Clone(u.ClientCertificateData)
	cfg.TLS.KeyFile = u.ClientKey
	cfg.TLS.KeyData = bytes.Clone(u.ClientKeyData)
	cfg.Username, cfg.Password = u.Username, u.Password
	cfg.BearerToken = u.Token
	if u.TokenFile != "" {
		tok, err := readBearerTokenFile(u.TokenFile)
		if err != nil {
			return fmt.Errorf("tokenFile: %w", err)
		}
		if cfg.BearerToken == "" {
			cfg.BearerToken = tok
		}
		cfg.BearerTokenFile = u.TokenFile
	}
	if u.Exec != nil {
		if err := checkExecConfig(u.Exec); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
		cfg.Exec = cloneExecConfig(u.Exec)
	}
	return nil
}

// checkExecConfig applies kubectl's checks to an exec entry.
func checkExecConfig(x *ExecConfig) error {
	if x.Command == "" {
		return errors.New("command is not set")
	}
	switch x.APIVersion {
	case execAPIVersionV1, execAPIVersionV1beta1:
	case "":
		return fmt.Errorf("apiVersion is not set (want %s or %s)", execAPIVersionV1, execAPIVersionV1beta1)
	default:
		return fmt.Errorf("apiVersion %q is not supported (want %s or %s)", x.APIVersion, execAPIVersionV1, execAPIVersionV1beta1)
	}
	switch x.InteractiveMode {
	case execInteractiveNever, execInteractiveIfAvailable, execInteractiveAlways:
	case "":
		return errors.New("interactiveMode is not set (want Never, IfAvailable or Always)")
	default:
		return fmt.Errorf("interactiveMode %q is not valid (want Never, IfAvailable or Always)", x.InteractiveMode)
	}
	return nil
}

// checkReadable reports whether the file at path (if any) can be opened.
func checkFileReadable(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// readTokenFile reads a bearer token file, trimming surrounding whitespace.
func readBearerTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s: file is empty", path)
	}
	return tok, nil
}

func cloneExecConfig(x *ExecConfig) *ExecConfig {
	c := *x
	c.Args = slices.Clone(x.Args)
	c.Env = maps.Clone(x.Env)
	return &c
}
