package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadOptions select where Load finds its configuration. The zero value
// follows kubectl's defaults.
type LoadOptions struct {
	// Kubeconfig is an explicit kubeconfig file, like kubectl's --kubeconfig.
	// When set, $KUBECONFIG and ~/.kube/config are not read, and a missing
	// file is an error.
	Kubeconfig string
	// Context names the kubeconfig context to use instead of its
	// current-context, like kubectl's --context. It is an error to set it
	// when no kubeconfig is found.
	Context string
	// Namespace, if set, replaces the namespace of the context or pod, like
	// kubectl's --namespace.
	Namespace string
}

// loadEnv is what Load reads from the process: tests replace all of it.
type loadEnv struct {
	getenv    func(string) string
	homeDir   func() (string, error)
	inCluster func() (*Config, error)
}

// Load finds a configuration where kubectl would, in this order:
//
//  1. opts.Kubeconfig, if set (it must exist);
//  2. else the files listed in $KUBECONFIG (separated by
//     os.PathListSeparator, merged by LoadKubeconfig's rules; files that do
//     not exist are skipped);
//  3. else ~/.kube/config, if it exists;
//  4. else the in-cluster configuration (InClusterConfig).
//
// Kubeconfig files that exist but define nothing at all (no clusters, users,
// contexts or current-context) count as absent, so the in-cluster
// configuration is tried, as client-go does. A kubeconfig that is found but
// broken is an error; Load does not fall back past it.
//
// opts.Context selects the kubeconfig context (default: current-context) and
// opts.Namespace, if set, overrides the namespace. When nothing is found the
// error wraps ErrNotInCluster and says which places were tried.
func Load(opts LoadOptions) (*Config, error) {
	return loadEnv{getenv: os.Getenv, homeDir: os.UserHomeDir, inCluster: InClusterConfig}.load(opts)
}

func (e loadEnv) load(opts LoadOptions) (*Config, error) {
	var (
		paths []string // the kubeconfig files to read, if any
		tried string   // what was looked at, for the error when nothing is found
	)
	switch {
	case opts.Kubeconfig != "":
		if _, err := os.Stat(opts.Kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", opts.Kubeconfig, err)
		}
		paths = []string{opts.Kubeconfig}
		tried = "kubeconfig " + opts.Kubeconfig
	case e.getenv("KUBECONFIG") != "":
		paths = filepath.SplitList(e.getenv("KUBECONFIG"))
		tried = "$KUBECONFIG=" + e.getenv("KUBECONFIG")
	default:
		home, err := e.homeDir()
		if err != nil {
			tried = fmt.Sprintf("~/.kube/config (no home directory: %v)", err)
			break
		}
		p := filepath.Join(home, ".kube", "config")
		paths = []string{p}
		tried = p
	}

	if len(paths) > 0 {
		kc, err := LoadKubeconfig(paths...)
		switch {
		case errors.Is(err, fs.ErrNotExist) && opts.Kubeconfig == "":
			// None of $KUBECONFIG or ~/.kube/config exists: try in-cluster.
		case err != nil:
			return nil, err
		case kc.isEmpty():
			tried += " (empty)"
		default:
			cfg, err := kc.Config(opts.Context)
			if err != nil {
				return nil, err
			}
			if opts.Namespace != "" {
				cfg.Namespace = opts.Namespace
			}
			return cfg, nil
		}
	}

	if opts.Context != "" {
		return nil, fmt.Errorf("context %q requested but no kubeconfig was found (looked at %s)", opts.Context, tried)
	}
	cfg, err := e.inCluster()
	if errors.Is(err, ErrNotInCluster) {
		return nil, fmt.Errorf("no configuration found: no kubeconfig at %s, and %w", tried, err)
	}
	if err != nil {
		return nil, err
	}
	if opts.Namespace != "" {
		cfg.Namespace = opts.Namespace
	}
	return cfg, nil
}
