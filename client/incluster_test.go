package client

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// fakeServiceAccount writes the files a kubelet mounts into root and returns
// their directory. Empty contents leave a file out.
func fakeServiceAccount(t *testing.T, root, token, ca, namespace string) string {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(serviceAccountDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"token": token, "ca.crt": ca, "namespace": namespace} {
		if content != "" {
			writeKubeconfigTestFile(t, filepath.Join(dir, name), content)
		}
	}
	return dir
}

func envFunc(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestInClusterConfig(t *testing.T) {
	full := t.TempDir()
	fullDir := fakeServiceAccount(t, full, "sa-token\n", "ca", "team-a\n")
	bare := t.TempDir()
	bareDir := fakeServiceAccount(t, bare, "sa-token", "", "")
	service := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}

	tests := []struct {
		name string
		root string
		env  map[string]string
		want *Config
	}{
		{
			name: "all files",
			root: full,
			env:  service,
			want: &Config{
				Host:            "https://10.0.0.1:443",
				TLS:             TLSConfig{CAFile: filepath.Join(fullDir, "ca.crt")},
				BearerToken:     "sa-token",
				BearerTokenFile: filepath.Join(fullDir, "token"),
				Namespace:       "team-a",
			},
		},
		{
			name: "IPv6 host is bracketed",
			root: full,
			env:  map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"},
			want: &Config{
				Host:            "https://[fd00::1]:6443",
				TLS:             TLSConfig{CAFile: filepath.Join(fullDir, "ca.crt")},
				BearerToken:     "sa-token",
				BearerTokenFile: filepath.Join(fullDir, "token"),
				Namespace:       "team-a",
			},
		},
		{
			name: "POD_NAMESPACE wins over the namespace file",
			root: full,
			env:  map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "POD_NAMESPACE": "from-env"},
			want: &Config{
				Host:            "https://10.0.0.1:443",
				TLS:             TLSConfig{CAFile: filepath.Join(fullDir, "ca.crt")},
				BearerToken:     "sa-token",
				BearerTokenFile: filepath.Join(fullDir, "token"),
				Namespace:       "from-env",
			},
		},
		{
			name: "no ca.crt and no namespace file",
			root: bare,
			env:  service,
			want: &Config{
				Host:            "https://10.0.0.1:443",
				BearerToken:     "sa-token",
				BearerTokenFile: filepath.Join(bareDir, "token"),
				Namespace:       "default",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inClusterEnv{root: tt.root, getenv: envFunc(tt.env)}.config()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestInClusterConfigErrors(t *testing.T) {
	root := t.TempDir()
	for _, env := range []map[string]string{
		{},
		{"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
		{"KUBERNETES_SERVICE_PORT": "443"},
	} {
		_, err := inClusterEnv{root: root, getenv: envFunc(env)}.config()
		if !errors.Is(err, ErrNotInCluster) {
			t.Errorf("env %v: error %v, want ErrNotInCluster", env, err)
		}
	}

	// In a pod without a token: an error, but not ErrNotInCluster.
	_, err := inClusterEnv{root: root, getenv: envFunc(map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443",
	})}.config()
	if err == nil || errors.Is(err, ErrNotInCluster) {
		t.Fatalf("missing token: error %v", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing token: error %v does not wrap fs.ErrNotExist", err)
	}
}
