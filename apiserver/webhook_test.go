package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

func TestWebhookRuleMatches(t *testing.T) {
	pods := &registry.Resource{Version: "v1", Resource: "pods", Namespaced: true}
	namespaces := &registry.Resource{Version: "v1", Resource: "namespaces"}
	deployments := &registry.Resource{Group: "apps", Version: "v1", Resource: "deployments", Namespaced: true}
	nodes := &registry.Resource{Version: "v1", Resource: "nodes"}
	rule := func(ops []string, groups, versions, resources []string, scope string) admissionregistrationv1.RuleWithOperations {
		r := admissionregistrationv1.RuleWithOperations{}
		for _, o := range ops {
			r.Operations = append(r.Operations, admissionregistrationv1.OperationType(o))
		}
		r.APIGroups, r.APIVersions, r.Resources = groups, versions, resources
		if scope != "" {
			sc := admissionregistrationv1.ScopeType(scope)
			r.Scope = &sc
		}
		return r
	}
	all := []string{"*"}
	core := []string{""}
	cases := []struct {
		rule admissionregistrationv1.RuleWithOperations
		req  webhookRequest
		want bool
	}{
		{rule([]string{"CREATE"}, core, []string{"v1"}, []string{"pods"}, ""), webhookRequest{res: pods, operation: "CREATE", ns: "a"}, true},
		{rule([]string{"UPDATE"}, core, []string{"v1"}, []string{"pods"}, ""), webhookRequest{res: pods, operation: "CREATE", ns: "a"}, false},
		{rule([]string{"*"}, core, []string{"v1"}, []string{"pods"}, ""), webhookRequest{res: pods, operation: "DELETE", ns: "a"}, true},
		{rule([]string{"*"}, []string{"apps"}, all, []string{"pods"}, ""), webhookRequest{res: pods, operation: "CREATE", ns: "a"}, false},
		{rule([]string{"*"}, all, []string{"v2"}, all, ""), webhookRequest{res: deployments, operation: "CREATE", ns: "a"}, false},
		{rule([]string{"*"}, all, all, all, ""), webhookRequest{res: deployments, operation: "CREATE", ns: "a"}, true},
		// "*" is every resource but no subresource; "*/*" every resource and subresource.
		{rule([]string{"*"}, all, all, all, ""), webhookRequest{res: pods, subresource: "status", operation: "UPDATE", ns: "a"}, false},
		{rule([]string{"*"}, all, all, []string{"*/*"}, ""), webhookRequest{res: pods, subresource: "status", operation: "UPDATE", ns: "a"}, true},
		{rule([]string{"*"}, all, all, []string{"*/*"}, ""), webhookRequest{res: pods, operation: "UPDATE", ns: "a"}, true},
		{rule([]string{"*"}, all, all, []string{"pods/*"}, ""), webhookRequest{res: pods, subresource: "status", operation: "UPDATE", ns: "a"}, true},
		{rule([]string{"*"}, all, all, []string{"*/status"}, ""), webhookRequest{res: pods, subresource: "status", operation: "UPDATE", ns: "a"}, true},
		{rule([]string{"*"}, all, all, []string{"*/status"}, ""), webhookRequest{res: pods, subresource: "binding", operation: "CREATE", ns: "a"}, false},
		{rule([]string{"*"}, all, all, []string{"pods/status"}, ""), webhookRequest{res: pods, operation: "UPDATE", ns: "a"}, false},
		{rule([]string{"*"}, all, all, []string{"pods"}, ""), webhookRequest{res: pods, subresource: "status", operation: "UPDATE", ns: "a"}, false},
		// Scope: a namespace is cluster-scoped, whatever its request's namespace.
		{rule([]string{"*"}, all, all, all, "Namespaced"), webhookRequest{res: pods, operation: "CREATE", ns: "a"}, true},
		{rule([]string{"*"}, all, all, all, "Namespaced"), webhookRequest{res: nodes, operation: "CREATE"}, false},
		{rule([]string{"*"}, all, all, all, "Namespaced"), webhookRequest{res: namespaces, operation: "CREATE", ns: "a"}, false},
		{rule([]string{"*"}, all, all, all, "Cluster"), webhookRequest{res: namespaces, operation: "CREATE", ns: "a"}, true},
		{rule([]string{"*"}, all, all, all, "Cluster"), webhookRequest{res: nodes, operation: "CREATE"}, true},
		{rule([]string{"*"}, all, all, all, "Cluster"), webhookRequest{res: pods, operation: "CREATE", ns: "a"}, false},
		{rule([]string{"*"}, all, all, all, "*"), webhookRequest{res: pods, operation: "CREATE", ns: "a"}, true},
	}
	for i, tc := range cases {
		w := &webhook{rules: []admissionregistrationv1.RuleWithOperations{tc.rule}, exact: true}
		if got := (&Server{}).matchedResource(w, &tc.req) != nil; got != tc.want {
			t.Errorf("%d: rule %+v on %s/%s %s: %v, want %v", i, tc.rule, tc.req.res.Resource, tc.req.subresource, tc.req.operation, got, tc.want)
		}
	}
	// With matchPolicy Equivalent, a rule naming another version of a
	// built-in resource selects it (kapi cannot convert built-in objects:
	// it is sent in its own version).
	w := &webhook{rules: []admissionregistrationv1.RuleWithOperations{rule([]string{"*"}, all, []string{"v2"}, all, "")}}
	if (&Server{}).matchedResource(w, &webhookRequest{res: deployments, operation: "CREATE", ns: "a"}) != deployments {
		t.Error("an Equivalent rule naming apps/v2 does not select apps/v1 deployments")
	}
}

// TestWebhookSnapshot: the configured webhooks are read once per change
// of a configuration, not per request.
func TestWebhookSnapshot(t *testing.T) {
	srv, err := New(Config{SkipSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	first := srv.webhooks.current(ctx)
	if srv.webhooks.current(ctx) != first {
		t.Fatal("the snapshot is built again without a change")
	}
	mustDo(t, srv, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		`{"metadata":{"name":"v"},"webhooks":[{"name":"a.example.com","clientConfig":{"url":"https://127.0.0.1:1/"},"sideEffects":"None","admissionReviewVersions":["v1"]}]}`,
		http.StatusCreated)
	next := srv.webhooks.current(ctx)
	if next == first || len(next.validating) != 1 || next.validating[0].name != "a.example.com" {
		t.Fatalf("after a create: %+v", next)
	}
	if srv.webhooks.current(ctx) != next {
		t.Fatal("the snapshot is built again without a change")
	}
	mustDo(t, srv, "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v", "", http.StatusOK)
	if n := len(srv.webhooks.current(ctx).validating); n != 0 {
		t.Fatalf("%d webhooks after the delete", n)
	}
}

// FuzzParseAdmissionResponse: whatever a webhook answers is a response or
// an error, never a panic; and an accepted response, refused, is a
// failure Status of at least 400.
func FuzzParseAdmissionResponse(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}}`), true)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":false,"status":{"code":200,"message":"m","reason":"R"}}}`), false)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patchType":"JSONPatch","patch":"W10="}}`), true)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","patch":"eyJ9"}}`), false)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`), true)
	f.Add([]byte(`{"response":{"uid":"u","warnings":["a",1]}}`), true)
	f.Add([]byte(`[]`), false)
	f.Fuzz(func(t *testing.T, data []byte, mutating bool) {
		resp, err := parseAdmissionResponse(data, "u", mutating)
		if err != nil {
			if resp != nil {
				t.Fatal("a response with an error")
			}
			return
		}
		if resp.UID != "u" {
			t.Fatalf("uid %q accepted", resp.UID)
		}
		if !mutating && len(resp.Patch) > 0 {
			t.Fatal("a validating webhook's patch accepted")
		}
		st := deniedStatus("w", resp.Result)
		if st.Code < 400 || st.Status != metav1.StatusFailure || !strings.HasPrefix(st.Message, `admission webhook "w" denied the request`) {
			t.Fatalf("denied status %+v", st)
		}
	})
}

// benchWebhook serves allowed answers and counts its calls.
func benchWebhook(b *testing.B) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var review struct {
			Request struct {
				UID string `json:"uid"`
			} `json:"request"`
		}
		_ = json.NewDecoder(r.Body).Decode(&review)
		fmt.Fprintf(w, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":true}}`, review.Request.UID)
	}))
	b.Cleanup(ts.Close)
	return ts, &calls
}

// BenchmarkCreateWebhooks measures ConfigMap creates (in memory, without
// HTTP to the server) with no webhook configured, with a webhook that
// selects none of them, and with one called for each.
func BenchmarkCreateWebhooks(b *testing.B) {
	for _, mode := range []string{"none", "unselected", "called"} {
		b.Run(mode, func(b *testing.B) {
			srv, err := New(Config{SkipSystemNamespaces: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { srv.Close() })
			mustDo(b, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"bench"}}`, http.StatusCreated)
			var calls *atomic.Int64
			if mode != "none" {
				var ts *httptest.Server
				ts, calls = benchWebhook(b)
				ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
				resource := "configmaps"
				if mode == "unselected" {
					resource = "secrets"
				}
				mustDo(b, srv, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", fmt.Sprintf(
					`{"metadata":{"name":"v"},"webhooks":[{"name":"a.example.com","clientConfig":{"url":%q,"caBundle":%q},
					"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":[%q]}],
					"sideEffects":"None","admissionReviewVersions":["v1"]}]}`, ts.URL, ca, resource), http.StatusCreated)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				mustDo(b, srv, "POST", "/api/v1/namespaces/bench/configmaps", configMapBody(fmt.Sprintf("c-%d", i)), http.StatusCreated)
				i++
			}
			if mode == "called" && calls.Load() != int64(i) {
				b.Fatalf("webhook called %d times for %d creates", calls.Load(), i)
			}
		})
	}
}
