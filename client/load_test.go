package client

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	a, b := kubeconfigFixture(t, "merge-a.yaml"), kubeconfigFixture(t, "merge-b.yaml")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o755); err != nil {
		t.Fatal(err)
	}
	homeConfig, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	writeKubeconfigTestFile(t, filepath.Join(home, ".kube", "config"), string(homeConfig))
	emptyHome := t.TempDir()
	emptyFile := kubeconfigFixture(t, "empty.yaml")
	missing := filepath.Join(t.TempDir(), "missing")
	inCluster := &Config{Host: "https://10.0.0.1:443", Namespace: "pod-ns"}
	list := func(paths ...string) string { return strings.Join(paths, string(os.PathListSeparator)) }

	tests := []struct {
		name      string
		opts      LoadOptions
		env       map[string]string
		home      string
		inCluster bool
		wantHost  string
		wantNS    string
		wantErr   string
		wantIs    error
	}{
		{name: "explicit file wins over KUBECONFIG and home", opts: LoadOptions{Kubeconfig: a}, env: map[string]string{"KUBECONFIG": b}, home: home, wantHost: "https://a.example:6443", wantNS: "a-ns"},
		{name: "explicit missing file is an error", opts: LoadOptions{Kubeconfig: missing}, home: home, inCluster: true, wantErr: "kubeconfig " + missing, wantIs: os.ErrNotExist},
		{name: "KUBECONFIG list is merged", env: map[string]string{"KUBECONFIG": list(missing, a, b)}, home: home, wantHost: "https://a.example:6443", wantNS: "a-ns"},
		{name: "KUBECONFIG wins over home", env: map[string]string{"KUBECONFIG": a}, home: home, wantHost: "https://a.example:6443", wantNS: "a-ns"},
		{name: "KUBECONFIG all missing falls back to in-cluster, not home", env: map[string]string{"KUBECONFIG": missing}, home: home, inCluster: true, wantHost: inCluster.Host, wantNS: "pod-ns"},
		{name: "home config", home: home, inCluster: true, wantHost: "https://only-b.example:6443", wantNS: "default"},
		{name: "no home config: in-cluster", home: emptyHome, inCluster: true, wantHost: inCluster.Host, wantNS: "pod-ns"},
		{name: "empty kubeconfig: in-cluster", env: map[string]string{"KUBECONFIG": emptyFile}, home: home, inCluster: true, wantHost: inCluster.Host, wantNS: "pod-ns"},
		{name: "context selects", opts: LoadOptions{Context: "b-ctx"}, env: map[string]string{"KUBECONFIG": list(a, b)}, wantHost: "https://only-b.example:6443", wantNS: "default"},
		{name: "namespace overrides the context's", opts: LoadOptions{Namespace: "override"}, env: map[string]string{"KUBECONFIG": a}, wantHost: "https://a.example:6443", wantNS: "override"},
		{name: "namespace overrides the pod's", opts: LoadOptions{Namespace: "override"}, home: emptyHome, inCluster: true, wantHost: inCluster.Host, wantNS: "override"},
		{name: "unknown context", opts: LoadOptions{Context: "nope"}, env: map[string]string{"KUBECONFIG": a}, wantErr: `context "nope" not found`},
		{name: "context without kubeconfig", opts: LoadOptions{Context: "x"}, home: emptyHome, inCluster: true, wantErr: `context "x" requested but no kubeconfig was found`},
		{name: "broken kubeconfig is not skipped", env: map[string]string{"KUBECONFIG": kubeconfigFixture(t, "bad-yaml.yaml")}, inCluster: true, wantErr: "bad-yaml.yaml: yaml:"},
		{name: "nothing found", home: emptyHome, wantErr: "no configuration found: no kubeconfig at " + filepath.Join(emptyHome, ".kube", "config") + ", and not running in a Kubernetes cluster", wantIs: ErrNotInCluster},
		{name: "nothing found from KUBECONFIG", env: map[string]string{"KUBECONFIG": missing}, wantErr: "no kubeconfig at $KUBECONFIG=" + missing, wantIs: ErrNotInCluster},
		{name: "no home directory", wantErr: "no home directory", wantIs: ErrNotInCluster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := loadEnv{
				getenv: envFunc(tt.env),
				homeDir: func() (string, error) {
					if tt.home == "" {
						return "", errors.New("$HOME is not defined")
					}
					return tt.home, nil
				},
				inCluster: func() (*Config, error) {
					if !tt.inCluster {
						return nil, ErrNotInCluster
					}
					c := *inCluster
					return &c, nil
				},
			}
			cfg, err := e.load(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("error %v is not %v", err, tt.wantIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || cfg.Namespace != tt.wantNS {
				t.Errorf("Host %q Namespace %q, want %q %q", cfg.Host, cfg.Namespace, tt.wantHost, tt.wantNS)
			}
		})
	}
}
