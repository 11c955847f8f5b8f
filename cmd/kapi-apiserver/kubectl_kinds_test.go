package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/golden"
)

// The tests of this file drive the kubectl commands that need the built-in
// kinds of Kubernetes 1.37 (issue 13). What each expects is what kubectl
// printed against a kube-apiserver v1.37.2 (testdata/kubectl/ and the
// discovery captures), modulo names, ages, uids and resource versions.

// discoveryDoc is the part of an aggregated discovery document
// (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) the tests read.
type discoveryDoc struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Resources []struct {
				Resource     string `json:"resource"`
				Subresources []struct {
					Subresource string `json:"subresource"`
				} `json:"subresources"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// keys adds the resources of d to set as notServedYet names them,
// "group/version/resource" ("/v1/pods" for the core group), and their
// subresources as "group/version/resource/subresource".
func (d *discoveryDoc) keys(set map[string]bool) {
	for _, g := range d.Items {
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				key := g.Metadata.Name + "/" + v.Version + "/" + r.Resource
				set[key] = true
				for _, s := range r.Subresources {
					set[key+"/"+s.Subresource] = true
				}
			}
		}
	}
}

// served returns the resources and subresources the server's aggregated
// discovery lists (see keys).
func (s *testServer) served(t *testing.T) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, path := range []string{"/api", "/apis"} {
		req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
		}
		var d discoveryDoc
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		d.keys(set)
	}
	return set
}

// v137Resources returns the resources and subresources kube-apiserver
// v1.37.2's discovery lists (see keys).
func v137Resources(t *testing.T) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, name := range []string{"aggregated-api.json", "aggregated-apis.json"} {
		b, err := os.ReadFile(filepath.Join(golden.V137.Dir(), "discovery", name))
		if err != nil {
			t.Fatal(err)
		}
		var d discoveryDoc
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d.keys(set)
	}
	return set
}

// needServed fails the test, naming them, if the server's discovery does
// not list some of resources ("group/version/resource[/subresource]", ""
// for the core group), each of which kube-apiserver v1.37.2 serves.
func (s *testServer) needServed(t *testing.T, resources ...string) {
	t.Helper()
	v137 := v137Resources(t)
	served := s.served(t)
	var missing []string
	for _, r := range resources {
		if !v137[r] {
			t.Fatalf("kube-apiserver v1.37.2 does not serve %s", r)
		}
		if !served[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("kapi does not serve %s, which kube-apiserver v1.37.2 serves and kubectl needs here", strings.Join(missing, ", "))
	}
}

// TestKubectlAPIResources compares kubectl api-resources -o wide and
// kubectl api-versions with what they printed against kube-apiserver
// v1.37.2 (testdata/golden-1.37/discovery/api-resources.txt and
// api-versions.txt), byte for byte.
func TestKubectlAPIResources(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct {
		args    []string
		capture string
	}{
		{[]string{"api-resources", "-o", "wide"}, "api-resources.txt"},
		{[]string{"api-versions"}, "api-versions.txt"},
	} {
		b, err := os.ReadFile(filepath.Join(golden.V137.Dir(), "discovery", tc.capture))
		if err != nil {
			t.Fatal(err)
		}
		got, want := s.mustKubectl(t, "", tc.args...), string(b)
		if got == want {
			continue
		}
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(gl), len(wl)) {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				t.Errorf("kubectl %s differs from kube-apiserver v1.37.2's (%s) at line %d; got:\n%s", strings.Join(tc.args, " "), tc.capture, i+1, got)
				break
			}
		}
	}
}

// Normalisations of kubectl's output that make a run against kapi
// comparable with the capture from kube-apiserver v1.37.2: uids, resource
// versions, timestamps and ages differ from run to run. Ages end the lines
// of kubectl's tables, so their width moves no other column.
var (
	uidPattern  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rvPattern   = regexp.MustCompile(`resourceVersion: "\d+"`)
	timePattern = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"`)
	agePattern  = regexp.MustCompile(`(?m)\b\d+[smhd](?:\d+[smh])?$`)
)

func normalizeKubectl(s string) string {
	s = uidPattern.ReplaceAllString(s, "<uid>")
	s = rvPattern.ReplaceAllString(s, `resourceVersion: "<rv>"`)
	s = timePattern.ReplaceAllString(s, `"<time>"`)
	return agePattern.ReplaceAllString(s, "<age>")
}

// kubectlTestdata reads testdata/kubectl/name.
func kubectlTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kubectl", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantCapture fails the test unless out is, normalised, what kubectl
// printed against kube-apiserver v1.37.2 in testdata/kubectl/name.
func wantCapture(t *testing.T, out, name string) {
	t.Helper()
	got, want := normalizeKubectl(out), normalizeKubectl(kubectlTestdata(t, name))
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Errorf("output differs from kube-apiserver v1.37.2's (testdata/kubectl/%s) at line %d:\n got %q\nwant %q\nwhole output:\n%s", name, i+1, g, w, out)
			return
		}
	}
}

// kubectl's default allowlist of apply --prune: kubectl 1.32 lists these
// resources (-v=6 against v1.37.2 shows), and fails if one is not served.
var pruneAllowlist = []string{
	"/v1/configmaps", "/v1/endpoints", "/v1/namespaces", "/v1/persistentvolumeclaims",
	"/v1/persistentvolumes", "/v1/pods", "/v1/replicationcontrollers", "/v1/secrets",
	"/v1/services", "batch/v1/jobs", "batch/v1/cronjobs", "networking.k8s.io/v1/ingresses",
	"apps/v1/daemonsets", "apps/v1/deployments", "apps/v1/replicasets", "apps/v1/statefulsets",
}

// newNamespace creates namespace ns and waits for its default
// ServiceAccount, which the serviceaccount controller makes (pods need
// it, as on a cluster, and create token asks for its token).
func (s *testServer) newNamespace(t *testing.T, ns string) {
	t.Helper()
	s.mustKubectl(t, "", "create", "namespace", ns)
	deadline := time.Now().Add(startTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := s.client.Get(s.url + "/api/v1/namespaces/" + ns + "/serviceaccounts/default")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ServiceAccount default in %s after %v: %s", ns, startTimeout, resp.Status)
		}
		<-tick.C
	}
}

// TestKubectlKinds runs the kubectl commands that need more kinds than
// ConfigMaps and Deployments (create job, role, rolebinding and token,
// auth can-i and whoami, rollout history, apply --prune, get all), each
// printing what it printed against kube-apiserver v1.37.2 (capture.sh in
// testdata/kubectl made the captures). kapi runs no workload controllers;
// the captures come from a cluster that does, with objects its controllers
// leave alone (a paused Deployment, ReplicaSets and StatefulSets of no
// replicas, a Job managed by another controller, a suspended CronJob...).
func TestKubectlKinds(t *testing.T) {
	kubectlBinary(t)
	t.Parallel()
	// The service range of the v1.37.2 the captures come from, so that a
	// Service's cluster IP is the same.
	s := startServer(t, "--service-cluster-ip-range=10.0.0.0/24")
	const ns = "kubectl-cmds"
	n := []string{"-n", ns}
	s.newNamespace(t, ns)

	t.Run("create job", func(t *testing.T) {
		s.needServed(t, "batch/v1/jobs")
		wantCapture(t, s.mustKubectl(t, "", append(n, "create", "job", "j", "--image=busybox", "-o", "yaml", "--", "true")...), "create-job.yaml")
	})
	t.Run("create role", func(t *testing.T) {
		s.needServed(t, "rbac.authorization.k8s.io/v1/roles")
		wantCapture(t, s.mustKubectl(t, "", append(n, "create", "role", "r", "--verb=get,list", "--resource=pods,deployments.apps,pods/log", "--resource-name=a", "-o", "yaml")...), "create-role.yaml")
	})
	t.Run("create rolebinding", func(t *testing.T) {
		s.needServed(t, "rbac.authorization.k8s.io/v1/rolebindings")
		wantCapture(t, s.mustKubectl(t, "", append(n, "create", "rolebinding", "rb", "--role=r", "--user=alice", "--group=g", "--serviceaccount="+ns+":default", "-o", "yaml")...), "create-rolebinding.yaml")
	})
	t.Run("create token", func(t *testing.T) {
		s.needServed(t, "/v1/serviceaccounts/token", "authentication.k8s.io/v1/tokenreviews")
		testKubectlCreateToken(t, s, ns)
	})
	t.Run("auth can-i", func(t *testing.T) {
		s.needServed(t, "authorization.k8s.io/v1/selfsubjectaccessreviews")
		for _, args := range [][]string{
			{"create", "pods"},
			{"get", "pods", "-n", ns},
			{"delete", "jobs.batch", "-n", ns},
			{"*", "*"},
			{"get", "/healthz"},
		} {
			wantOutput(t, s.mustKubectl(t, "", append([]string{"auth", "can-i"}, args...)...), "yes")
		}
	})
	t.Run("auth can-i --list", func(t *testing.T) {
		s.needServed(t, "authorization.k8s.io/v1/selfsubjectrulesreviews")
		// kapi authorizes every request until it has RBAC, as a
		// kube-apiserver with --authorization-mode=AlwaysAllow, whose
		// authorizer lists exactly one rule of each kind: */* on
		// everything. The v1.37.2 of the captures runs RBAC, and prints
		// these two lines first, then the rules RBAC's bootstrap roles
		// give every authenticated user (system:basic-user,
		// system:discovery, system:public-info-viewer).
		want := "Resources   Non-Resource URLs   Resource Names   Verbs\n" +
			"*.*         []                  []               [*]\n" +
			"            [*]                 []               [*]\n"
		for _, args := range [][]string{nil, n} {
			if got := s.mustKubectl(t, "", append([]string{"auth", "can-i", "--list"}, args...)...); got != want {
				t.Errorf("kubectl auth can-i --list %v:\n%s\nwant:\n%s", args, got, want)
			}
		}
	})
	t.Run("auth whoami", func(t *testing.T) {
		s.needServed(t, "authentication.k8s.io/v1/selfsubjectreviews")
		// The captures' user is the realk8s admin, whom kapi's server
		// takes everyone for until it has authentication.
		wantCapture(t, s.mustKubectl(t, "", "auth", "whoami"), "auth-whoami.txt")
		wantCapture(t, s.mustKubectl(t, "", "auth", "whoami", "-o", "yaml"), "auth-whoami.yaml")
	})
	t.Run("rollout history", func(t *testing.T) {
		s.needServed(t, "apps/v1/deployments", "apps/v1/replicasets")
		s.mustKubectl(t, kubectlTestdata(t, "rollout-deployment.yaml"), append(n, "create", "-f", "-")...)
		wantCapture(t, s.mustKubectl(t, "", append(n, "rollout", "history", "deployment/x")...), "rollout-history-none.txt")
		uid := s.mustKubectl(t, "", append(n, "get", "deployment", "x", "-o", "jsonpath={.metadata.uid}")...)
		for _, rev := range []string{"1", "2"} {
			rs := strings.NewReplacer("REV", rev, "UID", uid).Replace(kubectlTestdata(t, "rollout-replicaset.yaml.in"))
			s.mustKubectl(t, rs, append(n, "create", "-f", "-")...)
		}
		wantCapture(t, s.mustKubectl(t, "", append(n, "rollout", "history", "deployment/x")...), "rollout-history.txt")
		wantCapture(t, s.mustKubectl(t, "", append(n, "rollout", "history", "deployment/x", "--revision=2")...), "rollout-history-2.txt")
	})
	t.Run("apply --prune", func(t *testing.T) {
		s.needServed(t, pruneAllowlist...)
		s.mustKubectl(t, "", append(n, "create", "configmap", "other")...)
		s.mustKubectl(t, "", append(n, "label", "configmap", "other", "app=p")...)
		wantCapture(t, s.mustKubectl(t, kubectlTestdata(t, "prune-1.yaml"), "apply", "--prune", "-l", "app=p", "-f", "-"), "apply-prune-1.txt")
		// b and d left the manifest and carry the label: pruned; other
		// carries it too but was never applied: kept.
		wantCapture(t, s.mustKubectl(t, kubectlTestdata(t, "prune-2.yaml"), "apply", "--prune", "-l", "app=p", "-f", "-"), "apply-prune-2.txt")
		wantCapture(t, s.mustKubectl(t, "", append(n, "get", "configmaps,deployments", "-l", "app=p", "-o", "name")...), "apply-prune-left.txt")
	})
	t.Run("get all", func(t *testing.T) {
		s.needServed(t, "/v1/pods", "/v1/services", "/v1/replicationcontrollers",
			"apps/v1/daemonsets", "apps/v1/deployments", "apps/v1/replicasets", "apps/v1/statefulsets",
			"autoscaling/v2/horizontalpodautoscalers", "batch/v1/cronjobs", "batch/v1/jobs")
		s.newNamespace(t, "kubectl-all")
		s.mustKubectl(t, kubectlTestdata(t, "get-all.yaml"), "-n", "kubectl-all", "create", "-f", "-")
		wantCapture(t, s.mustKubectl(t, "", "-n", "kubectl-all", "get", "all"), "get-all.txt")
	})
}

// testKubectlCreateToken checks the JWT kubectl create token prints (its
// claims as v1.37.2 signs them) and has a TokenReview created with kubectl
// create -f authenticate it; the statuses are kube-apiserver v1.37.2's for
// the same requests, uids and token ids aside.
func testKubectlCreateToken(t *testing.T, s *testServer, ns string) {
	saUID := s.mustKubectl(t, "", "-n", ns, "get", "serviceaccount", "default", "-o", "jsonpath={.metadata.uid}")
	token := strings.TrimSpace(s.mustKubectl(t, "", "-n", ns, "create", "token", "default", "--audience=aud1", "--audience=aud2", "--duration=1h"))
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("kubectl create token printed %q, not a JWT", token)
	}
	var header struct{ Alg, Kid string }
	var claims struct {
		Aud           []string `json:"aud"`
		Exp, Iat, Nbf int64
		Iss, Sub, Jti string
		Kubernetes    struct {
			Namespace      string `json:"namespace"`
			ServiceAccount struct {
				Name, UID string
			} `json:"serviceaccount"`
		} `json:"kubernetes.io"`
	}
	for i, v := range []any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("JWT part %d: %v", i, err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("JWT part %d %s: %v", i, b, err)
		}
	}
	if header.Alg != "RS256" || header.Kid == "" {
		t.Errorf("JWT header %+v, want alg RS256 and a key id", header)
	}
	if !slices.Equal(claims.Aud, []string{"aud1", "aud2"}) || claims.Exp-claims.Iat != 3600 || claims.Nbf != claims.Iat ||
		claims.Iss != "https://kubernetes.default.svc.cluster.local" || claims.Sub != "system:serviceaccount:"+ns+":default" ||
		!uidPattern.MatchString(claims.Jti) || claims.Kubernetes.Namespace != ns ||
		claims.Kubernetes.ServiceAccount.Name != "default" || claims.Kubernetes.ServiceAccount.UID != saUID {
		t.Errorf("JWT claims %+v", claims)
	}

	review := func(token string, audiences ...string) string {
		t.Helper()
		spec := map[string]any{"token": token}
		if audiences != nil {
			spec["audiences"] = audiences
		}
		b, err := json.Marshal(map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
		if err != nil {
			t.Fatal(err)
		}
		return s.mustKubectl(t, string(b), "create", "-f", "-", "-o", "jsonpath={.status}")
	}
	user := `"user":{"extra":{"authentication.kubernetes.io/credential-id":["JTI=%s"]},"groups":["system:serviceaccounts","system:serviceaccounts:` + ns +
		`","system:authenticated"],"uid":"` + saUID + `","username":"system:serviceaccount:` + ns + `:default"}`
	for _, tc := range []struct {
		name, token string
		audiences   []string
		want        string
	}{
		{"audience of the token", token, []string{"aud2", "other"},
			`{"audiences":["aud2"],"authenticated":true,` + fmt.Sprintf(user, claims.Jti) + `}`},
		{"the server's audience", token, nil,
			`{"error":"[invalid bearer token, token audiences [\"aud1\" \"aud2\"] is invalid for the target audiences [\"https://kubernetes.default.svc.cluster.local\"]]","user":{}}`},
		{"not a token", "x.y.z", nil, `{"error":"invalid bearer token","user":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := review(tc.token, tc.audiences...); got != tc.want {
				t.Errorf("TokenReview status:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	t.Run("default audience", func(t *testing.T) {
		token := strings.TrimSpace(s.mustKubectl(t, "", "-n", ns, "create", "token", "default"))
		got := uidPattern.ReplaceAllString(review(token), "<uid>")
		want := `{"audiences":["https://kubernetes.default.svc.cluster.local"],"authenticated":true,` +
			strings.ReplaceAll(fmt.Sprintf(user, "<uid>"), saUID, "<uid>") + `}`
		if got != want {
			t.Errorf("TokenReview status:\n got %s\nwant %s", got, want)
		}
	})
}
