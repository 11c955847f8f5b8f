package client

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// kubeconfigFixture returns the absolute path of a file under
// testdata/kubeconfig.
func kubeconfigFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "kubeconfig", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoadKubeconfig(t *testing.T, paths ...string) *Kubeconfig {
	t.Helper()
	kc, err := LoadKubeconfig(paths...)
	if err != nil {
		t.Fatalf("LoadKubeconfig(%v): %v", paths, err)
	}
	return kc
}

func TestKubeconfigConfig(t *testing.T) {
	fx := func(name string) string { return kubeconfigFixture(t, name) }
	tests := []struct {
		name    string
		files   []string
		context string
		want    *Config
	}{
		{
			name:  "merged: first file wins current-context, cluster and user",
			files: []string{fx("merge-a.yaml"), fx("merge-b.yaml")},
			want: &Config{
				Host:        "https://a.example:6443",
				BearerToken: "a-token",
				Namespace:   "a-ns",
			},
		},
		{
			name:  "merged the other way round",
			files: []string{fx("merge-b.yaml"), fx("merge-a.yaml")},
			want: &Config{
				Host:      "https://only-b.example:6443",
				Username:  "bob",
				Password:  "secret",
				Namespace: "default",
			},
		},
		{
			name:    "merged: a context of the second file sees entries of both",
			files:   []string{fx("merge-a.yaml"), fx("merge-b.yaml")},
			context: "b-ctx",
			want: &Config{
				Host:      "https://only-b.example:6443",
				Username:  "bob",
				Password:  "secret",
				Namespace: "default",
			},
		},
		{
			name:    "merged: first file wins a context name",
			files:   []string{fx("merge-a.yaml"), fx("merge-b.yaml")},
			context: "shared-ctx",
			want: &Config{
				Host:        "https://only-a.example:6443",
				BearerToken: "a-token",
				Namespace:   "default",
			},
		},
		{
			name:  "missing files are skipped",
			files: []string{fx("no-such-file.yaml"), fx("merge-b.yaml")},
			want: &Config{
				Host:      "https://only-b.example:6443",
				Username:  "bob",
				Password:  "secret",
				Namespace: "default",
			},
		},
		{
			name:  "first non-empty current-context wins",
			files: []string{fx("no-current-context.yaml"), fx("merge-b.yaml")},
			want: &Config{
				Host:      "https://only-b.example:6443",
				Username:  "bob",
				Password:  "secret",
				Namespace: "default",
			},
		},
		{
			name:  "relative certificate paths",
			files: []string{fx("relative/kubeconfig.yaml")},
			want: &Config{
				Host: "https://files.example:6443",
				TLS: TLSConfig{
					CAFile:   fx("certs/ca.crt"),
					CertFile: fx("certs/client.crt"),
					KeyFile:  fx("certs/client.key"),
				},
				Namespace: "default",
			},
		},
		{
			name:    "relative token file",
			files:   []string{fx("relative/kubeconfig.yaml")},
			context: "token-file",
			want: &Config{
				Host:            "https://files.example:6443",
				TLS:             TLSConfig{CAFile: fx("certs/ca.crt")},
				BearerToken:     "fixture-token-from-file",
				BearerTokenFile: fx("token"),
				Namespace:       "from-token-context",
			},
		},
		{
			name:    "relative exec command with a separator is resolved",
			files:   []string{fx("relative/kubeconfig.yaml")},
			context: "exec-relative",
			want: &Config{
				Host: "https://files.example:6443",
				TLS:  TLSConfig{CAFile: fx("certs/ca.crt")},
				Exec: &ExecConfig{
					Command:         fx("relative/bin/plugin"),
					APIVersion:      "client.authentication.k8s.io/v1",
					InteractiveMode: "Never",
				},
				Namespace: "default",
			},
		},
		{
			name:    "bare exec command is left for $PATH",
			files:   []string{fx("relative/kubeconfig.yaml")},
			context: "exec-path",
			want: &Config{
				Host: "https://files.example:6443",
				TLS:  TLSConfig{CAFile: fx("certs/ca.crt")},
				Exec: &ExecConfig{
					Command:         "plugin-on-path",
					APIVersion:      "client.authentication.k8s.io/v1",
					InteractiveMode: "Never",
				},
				Namespace: "default",
			},
		},
		{
			name:  "inline data",
			files: []string{fx("inline.yaml")},
			want: &Config{
				Host: "https://inline.example:6443",
				TLS: TLSConfig{
					CAData:     []byte("inline CA"),
					CertData:   []byte("inline cert"),
					KeyData:    []byte("inline key"),
					ServerName: "api.inline.example",
				},
				ProxyURL:  "socks5://proxy.example:1080",
				Namespace: "inline-ns",
			},
		},
		{
			name:    "insecure cluster, context without user",
			files:   []string{fx("inline.yaml")},
			context: "insecure",
			want: &Config{
				Host:      "https://insecure.example:6443",
				TLS:       TLSConfig{Insecure: true},
				Namespace: "default",
			},
		},
		{
			name:  "token file and namespace",
			files: []string{fx("token-file.yaml")},
			want: &Config{
				Host:            "https://c.example:6443",
				BearerToken:     "fixture-token-from-file",
				BearerTokenFile: fx("token"),
				Namespace:       "team-a",
			},
		},
		{
			name:    "token next to a token file: both kept, the file wins when read",
			files:   []string{fx("token-file.yaml")},
			context: "token-and-file",
			want: &Config{
				Host:            "https://c.example:6443",
				BearerToken:     "static-token",
				BearerTokenFile: fx("token"),
				Namespace:       "default",
			},
		},
		{
			name:  "exec plugin; v1beta1 defaults interactiveMode",
			files: []string{fx("exec.yaml")},
			want: &Config{
				Host: "https://c.example:6443",
				Exec: &ExecConfig{
					Command:            "example-auth-plugin",
					Args:               []string{"get-token", "--cluster", "c"},
					Env:                map[string]string{"FOO": "bar", "EMPTY": ""},
					APIVersion:         "client.authentication.k8s.io/v1beta1",
					InstallHint:        "install example-auth-plugin from example.com",
					ProvideClusterInfo: true,
					InteractiveMode:    "IfAvailable",
				},
				Namespace: "default",
			},
		},
		{
			name:  "a valid context of a file with broken ones",
			files: []string{fx("errors.yaml")},
			want:  &Config{Host: "https://ok.example:6443", Namespace: "default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := mustLoadKubeconfig(t, tt.files...)
			got, err := kc.Config(tt.context)
			if err != nil {
				t.Fatalf("Config(%q): %v", tt.context, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Config(%q) =\n%+v\nwant\n%+v", tt.context, got, tt.want)
			}
		})
	}
}

func TestKubeconfigConfigErrors(t *testing.T) {
	errorsFile := kubeconfigFixture(t, "errors.yaml")
	noCurrent := kubeconfigFixture(t, "no-current-context.yaml")
	tests := []struct {
		file    string
		context string
		want    string
	}{
		{errorsFile, "nope", `kubeconfig ` + errorsFile + `: context "nope" not found`},
		{errorsFile, "missing-cluster", `kubeconfig ` + errorsFile + `: context "missing-cluster": cluster "nope" not found`},
		{errorsFile, "no-cluster", `kubeconfig ` + errorsFile + `: context "no-cluster": cluster is not set`},
		{errorsFile, "missing-user", `kubeconfig ` + errorsFile + `: context "missing-user": user "ghost" not found`},
		{errorsFile, "no-server", `context "no-server": cluster "no-server": server is not set`},
		{errorsFile, "uppercase", `context "uppercase": cluster "uppercase": server is not set`},
		{errorsFile, "both-ca", `cluster "both-ca": certificate-authority and certificate-authority-data are both set`},
		{errorsFile, "missing-ca-file", `cluster "missing-ca-file": certificate-authority: open ` + kubeconfigFixture(t, "certs/missing.crt")},
		{errorsFile, "bad-proxy", `cluster "bad-proxy": proxy-url: "ftp://proxy.example": unsupported scheme "ftp"`},
		{errorsFile, "cert-no-key", `user "cert-no-key": client-certificate is set without client-key or client-key-data`},
		{errorsFile, "both-cert", `user "both-cert": client-certificate and client-certificate-data are both set`},
		{errorsFile, "token-and-basic", `user "token-and-basic": token and username/password are both set`},
		{errorsFile, "missing-token-file", `kubeconfig ` + errorsFile + `: context "missing-token-file": user "missing-token-file": tokenFile: open ` + kubeconfigFixture(t, "no-such-token")},
		{errorsFile, "exec-no-mode", `user "exec-no-mode": exec: interactiveMode is not set`},
		{errorsFile, "exec-bad-version", `user "exec-bad-version": exec: apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`},
		{errorsFile, "exec-no-command", `user "exec-no-command": exec: command is not set`},
		{noCurrent, "", `kubeconfig ` + noCurrent + `: no context selected: current-context is not set and no context name was given`},
	}
	for _, tt := range tests {
		t.Run(tt.context, func(t *testing.T) {
			kc := mustLoadKubeconfig(t, tt.file)
			cfg, err := kc.Config(tt.context)
			if err == nil {
				t.Fatalf("Config(%q) = %+v, want error %q", tt.context, cfg, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Config(%q) error\n%v\nwant it to contain\n%s", tt.context, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "kubeconfig "+tt.file+": ") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestLoadKubeconfigErrors(t *testing.T) {
	fx := func(name string) string { return kubeconfigFixture(t, name) }
	tests := []struct {
		name  string
		files []string
		want  string
		is    error
	}{
		{"bad YAML", []string{fx("bad-yaml.yaml")}, "kubeconfig " + fx("bad-yaml.yaml") + ": yaml: line 6: ", nil},
		{"bad YAML after a good file", []string{fx("merge-a.yaml"), fx("bad-yaml.yaml")}, "kubeconfig " + fx("bad-yaml.yaml") + ": ", nil},
		{"bad base64", []string{fx("bad-base64.yaml")}, "kubeconfig " + fx("bad-base64.yaml") + `: user "x": client-certificate-data: illegal base64 data at input byte 3`, nil},
		{"bad field type", []string{fx("bad-type.yaml")}, "kubeconfig " + fx("bad-type.yaml") + ": ", nil},
		{"wrong kind", []string{fx("wrong-kind.yaml")}, `kind "Pod" is not a kubeconfig`, nil},
		{"duplicate name", []string{fx("duplicate.yaml")}, `cluster "twice" is defined twice`, nil},
		{"all missing", []string{fx("none-1"), fx("none-2")}, "kubeconfig " + fx("none-1") + ", " + fx("none-2") + ": file does not exist", fs.ErrNotExist},
		{"no paths", nil, "no file given", nil},
		{"a directory", []string{fx("certs")}, "kubeconfig " + fx("certs") + ": ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc, err := LoadKubeconfig(tt.files...)
			if err == nil {
				t.Fatalf("LoadKubeconfig = %+v, want error", kc)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

func TestLoadKubeconfigDetails(t *testing.T) {
	a, b := kubeconfigFixture(t, "merge-a.yaml"), kubeconfigFixture(t, "merge-b.yaml")
	kc := mustLoadKubeconfig(t, a, "", b, a)
	if want := []string{a, b}; !reflect.DeepEqual(kc.Files, want) {
		t.Errorf("Files = %v, want %v (empty and repeated paths dropped)", kc.Files, want)
	}
	if got := kc.Clusters["shared"].Origin; got != a {
		t.Errorf("shared cluster Origin = %s, want %s", got, a)
	}
	if got := kc.Clusters["only-b"].Origin; got != b {
		t.Errorf("only-b cluster Origin = %s, want %s", got, b)
	}
	var names []string
	for n := range kc.Contexts {
		names = append(names, n)
	}
	if len(names) != 3 {
		t.Errorf("contexts = %v, want a-ctx, b-ctx, shared-ctx", names)
	}

	empty := mustLoadKubeconfig(t, kubeconfigFixture(t, "empty.yaml"))
	if !empty.isEmpty() {
		t.Errorf("empty file gave %+v", empty)
	}

	// The Config shares nothing with the Kubeconfig.
	kc = mustLoadKubeconfig(t, kubeconfigFixture(t, "exec.yaml"))
	cfg, err := kc.Config("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Exec.Env["FOO"] = "changed"
	cfg.Exec.Args[0] = "changed"
	if u := kc.Users["exec"]; u.Exec.Env["FOO"] != "bar" || u.Exec.Args[0] != "get-token" {
		t.Errorf("changing the Config changed the Kubeconfig: %+v", u.Exec)
	}
}

func TestLoadKubeconfigRelativeToWorkingDirectory(t *testing.T) {
	// A kubeconfig named by a relative path resolves its own relative paths
	// against its directory, not the working directory.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeKubeconfigTestFile(t, filepath.Join(dir, "conf", "tok"), "relative-token")
	writeKubeconfigTestFile(t, filepath.Join(dir, "conf", "config"), `
current-context: c
clusters: [{name: c, cluster: {server: "https://c"}}]
users: [{name: u, user: {tokenFile: tok}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`)
	t.Chdir(dir)
	kc := mustLoadKubeconfig(t, filepath.Join("conf", "config"))
	cfg, err := kc.Config("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "relative-token" || cfg.BearerTokenFile != filepath.Join(dir, "conf", "tok") {
		t.Errorf("token %q from %q", cfg.BearerToken, cfg.BearerTokenFile)
	}
}

func writeKubeconfigTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
