package main

import (
	"crypto/x509/pkix"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubectl's authentication and authorization commands against the binary
// started as a team would expose it: a token file, a client CA, RBAC (the
// default with them), anonymous requests allowed as kube-apiserver's
// default.
func TestKubectlAuth(t *testing.T) {
	t.Parallel()
	kubectlBinary(t)
	ca := newTestCA(t)
	dir := t.TempDir()
	caFile, tokenFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "tokens.csv")
	bobCert, bobKey := filepath.Join(dir, "bob.crt"), filepath.Join(dir, "bob.key")
	writeFile(t, caFile, ca.pem)
	writeFile(t, tokenFile, []byte("alice-token,alice,alice-uid,\"devs,testers\"\n"))
	c, k := ca.issue(t, 9, pkix.Name{CommonName: "bob", Organization: []string{"devs"}}, false)
	writeFile(t, bobCert, c)
	writeFile(t, bobKey, k)
	s := startServer(t, "--tls", "--token-auth-file="+tokenFile, "--client-ca-file="+caFile)

	s.mustKubectl(t, "", "config", "set-credentials", "alice", "--token=alice-token")
	s.mustKubectl(t, "", "config", "set-credentials", "bob", "--client-certificate="+bobCert, "--client-key="+bobKey, "--embed-certs")
	whoami := "-o=jsonpath={.status.userInfo.username} {.status.userInfo.groups}"

	t.Run("whoami", func(t *testing.T) {
		wantOutput(t, s.mustKubectl(t, "", "auth", "whoami", whoami), `admin ["system:masters","system:authenticated"]`)
		wantOutput(t, s.mustKubectl(t, "", "--user=alice", "auth", "whoami", whoami), `alice ["devs","testers","system:authenticated"]`)
		wantOutput(t, s.mustKubectl(t, "", "--user=bob", "auth", "whoami", whoami), `bob ["devs","system:authenticated"]`)
		wantOutput(t, s.mustKubectl(t, "", "--as=carol", "--as-group=testers", "auth", "whoami", whoami), `carol ["testers","system:authenticated"]`)
	})

	// What RBAC lets them do: nothing in namespace team until a Role of
	// configmaps is bound to group devs.
	s.mustKubectl(t, "", "create", "namespace", "team")
	canI := func(t *testing.T, args ...string) string {
		t.Helper()
		out, err := s.kubectl(t, "", append([]string{"auth", "can-i"}, args...)...)
		var ke *kubectlError
		if err != nil && !(errors.As(err, &ke) && strings.TrimSpace(out) == "no") {
			t.Fatalf("%v\nserver log:\n%s", err, s.stderr)
		}
		return strings.TrimSpace(out)
	}
	for _, as := range [][]string{{"--user=alice"}, {"--user=bob"}, {"--as=carol", "--as-group=devs"}} {
		if got := canI(t, append(as, "create", "configmaps", "-n", "team")...); got != "no" {
			t.Errorf("%v before the binding: %q, want no", as, got)
		}
	}
	s.mustKubectl(t, "", "-n", "team", "create", "role", "cm-editor", "--verb=get,list,create", "--resource=configmaps")
	s.mustKubectl(t, "", "-n", "team", "create", "rolebinding", "devs", "--role=cm-editor", "--group=devs")
	t.Run("can-i", func(t *testing.T) {
		for _, as := range [][]string{{"--user=alice"}, {"--user=bob"}, {"--as=carol", "--as-group=devs"}} {
			if got := canI(t, append(as, "create", "configmaps", "-n", "team")...); got != "yes" {
				t.Errorf("%v: %q, want yes", as, got)
			}
			if got := canI(t, append(as, "delete", "configmaps", "-n", "team")...); got != "no" {
				t.Errorf("%v delete: %q, want no", as, got)
			}
			if got := canI(t, append(as, "create", "configmaps", "-n", "default")...); got != "no" {
				t.Errorf("%v in default: %q, want no", as, got)
			}
		}
		if got := canI(t, "--as=carol", "create", "configmaps", "-n", "team"); got != "no" {
			t.Errorf("carol without the group: %q, want no", got)
		}
		// The whole list, as kube-apiserver v1.37.2 answers it for a user
		// of group devs with this binding (testdata/can-i-list.txt).
		want, err := os.ReadFile(filepath.Join("testdata", "can-i-list.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.mustKubectl(t, "", "--user=alice", "auth", "can-i", "--list", "-n", "team"); got != string(want) {
			t.Errorf("can-i --list:\n%s\nwant (kube-apiserver's):\n%s", got, want)
		}
		// Impersonating is itself authorized.
		_, err = s.kubectl(t, "", "--user=alice", "auth", "can-i", "create", "pods", "--as=dave")
		var ke *kubectlError
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, `selfsubjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot impersonate-on:user-info:create resource "selfsubjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`) {
			t.Errorf("alice impersonating dave: %v", err)
		}
	})

	t.Run("as", func(t *testing.T) {
		s.mustKubectl(t, "", "--as=carol", "--as-group=devs", "-n", "team", "create", "configmap", "c1")
		_, err := s.kubectl(t, "", "--as=carol", "-n", "team", "get", "configmaps")
		var ke *kubectlError
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, `configmaps is forbidden: User "carol" cannot list resource "configmaps" in API group "" in the namespace "team"`) {
			t.Errorf("carol's list: %v", err)
		}
		_, err = s.kubectl(t, "", "--user=alice", "--as=carol", "-n", "team", "get", "configmaps")
		if !errors.As(err, &ke) || !strings.Contains(ke.stderr, `configmaps is forbidden: User "alice" cannot impersonate-on:user-info:list resource "configmaps" in API group "" in the namespace "team"`) {
			t.Errorf("alice impersonating carol: %v", err)
		}
	})

	t.Run("create token", func(t *testing.T) {
		s.mustKubectl(t, "", "-n", "team", "create", "serviceaccount", "robot")
		token := strings.TrimSpace(s.mustKubectl(t, "", "-n", "team", "create", "token", "robot", "--duration=10m"))
		s.mustKubectl(t, "", "config", "set-credentials", "robot", "--token="+token)
		wantOutput(t, s.mustKubectl(t, "", "--user=robot", "auth", "whoami", whoami),
			`system:serviceaccount:team:robot ["system:serviceaccounts","system:serviceaccounts:team","system:authenticated"]`)
		if got := canI(t, "--user=robot", "list", "configmaps", "-n", "team"); got != "no" {
			t.Errorf("robot: %q, want no", got)
		}
		s.mustKubectl(t, "", "-n", "team", "create", "rolebinding", "robot", "--role=cm-editor", "--serviceaccount=team:robot")
		wantOutput(t, s.mustKubectl(t, "", "--user=robot", "-n", "team", "get", "configmap", "c1", "-o=name"), "configmap/c1")
		s.mustKubectl(t, "", "-n", "team", "delete", "serviceaccount", "robot")
		if _, err := s.kubectl(t, "", "--user=robot", "-n", "team", "get", "configmaps"); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("the token of a deleted service account: %v, want Unauthorized", err)
		}
	})

	t.Run("anonymous", func(t *testing.T) {
		for path, want := range map[string]int{"/version": http.StatusOK, "/healthz": http.StatusOK, "/api/v1/namespaces": http.StatusForbidden} {
			resp, err := s.client.Get(s.url + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("%s without credentials: %s, want %d", path, resp.Status, want)
			}
		}
	})
}
