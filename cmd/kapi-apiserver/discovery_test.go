package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// kubectl finds what the server serves with aggregated discovery: one
// request to /api and one to /apis (kubectl -v=8 prints them), none per
// group version, as against kube-apiserver.
func TestKubectlAggregatedDiscovery(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	s := startServer(t)
	s.mustKubectl(t, "", "create", "configmap", "agg", "-n", "default")
	request := regexp.MustCompile(`round_trippers\.go:\d+\] GET https?://[^/]+(/[^? ]*)`)
	for _, tc := range []struct {
		args []string
		want string // in stdout
		last string // the last request, after discovery
	}{
		{[]string{"api-resources"}, "configmaps", ""},
		{[]string{"get", "cm", "-n", "default"}, "agg", "/api/v1/namespaces/default/configmaps"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
			defer cancel()
			// A fresh discovery cache, so that kubectl asks.
			cmd := s.kubectlCmd(ctx, t, append([]string{"-v=8", "--cache-dir=" + t.TempDir()}, tc.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("kubectl %v: %v\n%s", tc.args, err, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.want) {
				t.Errorf("kubectl %v printed no %q:\n%s", tc.args, tc.want, stdout.String())
			}
			var paths []string
			for _, m := range request.FindAllStringSubmatch(stderr.String(), -1) {
				paths = append(paths, m[1])
			}
			want := []string{"/api", "/apis"}
			if tc.last != "" {
				want = append(want, tc.last)
			}
			if strings.Join(paths, " ") != strings.Join(want, " ") {
				t.Errorf("kubectl %v sent GET %v, want GET %v (aggregated discovery, then the request)", tc.args, paths, want)
			}
			if !strings.Contains(stderr.String(), "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList") {
				t.Errorf("kubectl did not ask for aggregated discovery:\n%s", stderr.String())
			}
		})
	}
}
