package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// kubeconfigName names the cluster, the user and the context of the written
// kubeconfig.
const kubeconfigName = "kapi"

// uncheckedToken is the user's token in a kubeconfig for an https server that
// was given no --token. The server does not check it: it is there because
// kubectl prompts for a user name and password (and fails without a
// terminal) when the user of an https cluster has no credentials.
const uncheckedToken = "unchecked"

// kubeconfig is the subset of client-go's clientcmd/api/v1 Config that the
// server writes. Field names and layout are kubectl's.
type kubeconfig struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Clusters       []namedCluster `json:"clusters"`
	Users          []namedUser    `json:"users"`
	Contexts       []namedContext `json:"contexts"`
	CurrentContext string         `json:"current-context"`
	Preferences    struct{}       `json:"preferences"`
}

type namedCluster struct {
	Name    string  `json:"name"`
	Cluster cluster `json:"cluster"`
}

type cluster struct {
	Server string `json:"server"`
	// CertificateAuthorityData is PEM; encoding/json writes []byte as
	// base64, which is what kubeconfig expects.
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
}

type namedUser struct {
	Name string   `json:"name"`
	User authInfo `json:"user"`
}

type authInfo struct {
	Token string `json:"token,omitempty"`
}

type namedContext struct {
	Name    string      `json:"name"`
	Context kubecontext `json:"context"`
}

type kubecontext struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace,omitempty"`
}

// newKubeconfig describes the server at url: caPEM is the CA to trust (nil for
// http) and token the bearer token ("" for none).
func newKubeconfig(url string, caPEM []byte, token string) *kubeconfig {
	if token == "" && caPEM != nil {
		token = uncheckedToken
	}
	return &kubeconfig{
		APIVersion:     "v1",
		Kind:           "Config",
		Clusters:       []namedCluster{{Name: kubeconfigName, Cluster: cluster{Server: url, CertificateAuthorityData: caPEM}}},
		Users:          []namedUser{{Name: kubeconfigName, User: authInfo{Token: token}}},
		Contexts:       []namedContext{{Name: kubeconfigName, Context: kubecontext{Cluster: kubeconfigName, User: kubeconfigName, Namespace: "default"}}},
		CurrentContext: kubeconfigName,
	}
}

// writeKubeconfig writes the kubeconfig for the server at url to path with
// mode 0600 (it may hold a token). It writes a temporary file in the same
// directory and renames it, so a reader never sees a partial file.
func writeKubeconfig(path, url string, caPEM []byte, token string) (err error) {
	b, err := yaml.Marshal(newKubeconfig(url, caPEM, token))
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("renaming into place: %w", err)
	}
	return nil
}
