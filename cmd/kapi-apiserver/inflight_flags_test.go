package main

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --max-mutating-requests-inflight reaches the server: with one mutating
// request held in flight (in a validating webhook of the test, until it
// releases it), alice's next one gets 429 while the admin's is served.
func TestInFlightFlags(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens.csv")
	writeFile(t, tokenFile, []byte("alice-token,alice,alice-uid\n"))
	s := startServer(t, "--tls", "--token-auth-file="+tokenFile, "--max-mutating-requests-inflight=1")
	admin := readKubeconfig(t, s.kubeconfig).Users[0].User.Token

	arrived, release := make(chan struct{}, 1), make(chan struct{})
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review struct {
			Request struct {
				UID    string `json:"uid"`
				Object struct {
					Metadata struct{ Name string } `json:"metadata"`
				} `json:"object"`
			} `json:"request"`
		}
		_ = json.NewDecoder(r.Body).Decode(&review)
		if review.Request.Object.Metadata.Name == "held" {
			arrived <- struct{}{}
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":true}}`, review.Request.UID)
	}))
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
		hook.Close()
	})
	caBundle := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}))

	send := func(token, method, path, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
		return resp
	}
	expect := func(resp *http.Response, code int) {
		t.Helper()
		if resp.StatusCode != code {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s %s: %s, want %d\n%s", resp.Request.Method, resp.Request.URL.Path, resp.Status, code, b)
		}
	}
	expect(send(admin, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
		`{"metadata":{"name":"alice"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"edit"},
		  "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"alice"}]}`), http.StatusCreated)
	expect(send(admin, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		`{"metadata":{"name":"hold"},"webhooks":[{"name":"hold.kapi.dev","clientConfig":{"url":"`+hook.URL+`","caBundle":"`+caBundle+`"},
		  "rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],
		  "failurePolicy":"Fail","sideEffects":"None","admissionReviewVersions":["v1"],"timeoutSeconds":30}]}`), http.StatusCreated)

	held := make(chan *http.Response, 1)
	go func() {
		held <- send("alice-token", "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"held"}}`)
	}()
	select {
	case <-arrived:
	case <-time.After(startTimeout):
		t.Fatal("the held request never reached the webhook")
	}
	resp := send("alice-token", "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"refused"}}`)
	expect(resp, http.StatusTooManyRequests)
	if resp.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	expect(send(admin, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"admin"}}`), http.StatusCreated)
	expect(send("alice-token", "GET", "/api/v1/namespaces/default/configmaps", ""), http.StatusOK)
	released = true
	close(release)
	expect(<-held, http.StatusCreated)
	expect(send("alice-token", "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"after"}}`), http.StatusCreated)
}
