package conformance

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
)

// inflightLimits tells TestMaxInFlight the bounds of a real target. A
// kube-apiserver v1.37 runs API Priority and Fairness by default, which
// queues and sheds requests its own way; the max-in-flight filter answers
// only when it runs with --enable-priority-and-fairness=false, and its
// bounds are --max-requests-inflight and --max-mutating-requests-inflight.
var inflightLimits = flag.String("inflight-limits", "", "READONLY,MUTATING: the target runs with --enable-priority-and-fairness=false --max-requests-inflight=READONLY --max-mutating-requests-inflight=MUTATING (TestMaxInFlight runs against a real server only when told)")

// inflightUser is the user of the requests the bounds count: the case's
// admin, in system:masters, is exempt from them, so it impersonates one
// who is not.
const inflightUser = "i17-limits-user"

// TestMaxInFlight holds mutating requests in flight in a validating
// webhook of the case, which answers only when the case releases them, so
// that the bounds are full for as long as the case needs; no timing is
// involved. With the mutating bound full, a mutating request gets 429
// with Retry-After and kube-apiserver's plain-text body, unless its user
// is in system:masters; read-only requests have their own bound; watches
// are not counted.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	readOnly, mutating := 3, 2
	e := target
	if target.inProcess {
		// A user of its own to impersonate needs authentication: the
		// admin's token.
		const token = "i17-limits-admin-token"
		e = withDefaults(t, func(c *apiserver.Config) {
			c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight = readOnly, mutating
			c.Authentication = &apiserver.Authentication{Tokens: map[string]apiserver.User{token: apiserver.AdminUser}}
		})
		e.token = token
	} else {
		if *inflightLimits == "" {
			t.Skip("a real server runs API Priority and Fairness by default; give -inflight-limits READONLY,MUTATING for a target started with --enable-priority-and-fairness=false and those bounds")
		}
		ro, mut, ok := strings.Cut(*inflightLimits, ",")
		var err1, err2 error
		readOnly, err1 = strconv.Atoi(ro)
		mutating, err2 = strconv.Atoi(mut)
		if !ok || err1 != nil || err2 != nil || readOnly <= 0 || mutating <= 0 {
			t.Fatalf("-inflight-limits %q is not READONLY,MUTATING", *inflightLimits)
		}
	}
	ns := e.namespace(t)
	as := []string{"Impersonate-User", inflightUser}
	// The user may write and read configmaps in ns.
	expect(t, e.post(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", obj{
		"metadata": obj{"name": "configmaps"},
		"rules":    []any{obj{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"create", "get", "list", "watch"}}},
	}), http.StatusCreated)
	expect(t, e.post(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", obj{
		"metadata": obj{"name": "configmaps"},
		"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmaps"},
		"subjects": []any{obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": inflightUser}},
	}), http.StatusCreated)

	// The webhook holds the configmaps named hold-* until release.
	arrived := make(chan string, 16)
	release := make(chan struct{})
	released := false
	releaseAll := func() {
		if !released {
			released = true
			close(release)
		}
	}
	hold := startWebhook(t, func(req obj) obj {
		if n := str(req, "object", "metadata", "name"); strings.HasPrefix(n, "hold-") {
			arrived <- n
			<-release
		}
		return allow(req)
	})
	t.Cleanup(releaseAll) // before the webhook server's Close, which waits for its handlers
	h := hold.hook("hold", ns, "/hold")
	h["timeoutSeconds"] = 30
	e.createWebhookConfig(t, "validating", h)
	e.waitWebhooks(t, ns, nil)

	// Fill the mutating bound with the user's requests. One may find the
	// bound taken for a moment by the server's own requests, or the
	// RoleBinding not yet in force: it is sent again.
	results := make(chan *response, mutating+1)
	deadline := time.Now().Add(e.within(30 * time.Second))
	for held := 0; held < mutating; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests held in flight", held, mutating)
		}
		name := fmt.Sprintf("hold-%d", held)
		one := make(chan *response, 1)
		go func() {
			r, err := e.send(http.MethodPost, cmPath(ns), configMap(name, nil, nil), as...)
			if err != nil {
				r = &response{Method: http.MethodPost, Path: cmPath(ns), Body: []byte(err.Error())}
			}
			one <- r
		}()
		select {
		case <-arrived:
			held++
			go func() { results <- <-one }()
		case r := <-one:
			if r.Code != http.StatusTooManyRequests && r.Code != http.StatusForbidden {
				t.Fatalf("holding %s: %s", name, r)
			}
			time.Sleep(20 * time.Millisecond) // polling the server under test
		}
	}

	// The bound is full: the user's next mutating request is refused, as
	// kube-apiserver's filter refuses it.
	r := e.post(t, cmPath(ns), configMap("refused", nil, nil), as...)
	checkTooManyRequests(t, r)

	// system:masters is always served.
	expect(t, e.post(t, cmPath(ns), configMap("admin", nil, nil)), http.StatusCreated)

	// Read-only requests have a bound of their own, and watches are not
	// counted in it: with more watches open than it allows, the user still
	// reads (the server's own reads may take the bound for a moment).
	watches := make([]*watchStream, readOnly+1)
	for i := range watches {
		watches[i] = e.watch(t, cmPath(ns)+"?watch=true", as...)
	}
	untilServed(t, e, func() *response { return e.get(t, cmPath(ns), as...) }, http.StatusOK)
	for _, w := range watches {
		w.close()
	}

	// Released, the held requests are answered, and the bound is free
	// again.
	releaseAll()
	for range mutating {
		if r := <-results; r.Code != http.StatusCreated {
			t.Errorf("held request: %s", r)
		}
	}
	untilServed(t, e, func() *response { return e.post(t, cmPath(ns), configMap("after", nil, nil), as...) }, http.StatusCreated)
}

// untilServed sends until the answer is not 429 (the server's own requests
// may hold a bound for a moment), then checks it has code.
func untilServed(t *testing.T, e *env, send func() *response, code int) {
	t.Helper()
	deadline := time.Now().Add(e.within(10 * time.Second))
	for {
		r := send()
		if r.Code != http.StatusTooManyRequests || time.Now().After(deadline) {
			if r.Code != code {
				t.Fatalf("want %d: %s", code, r)
			}
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the server under test
	}
}

// checkTooManyRequests checks a refusal of the in-flight bounds against
// kube-apiserver's, captured in testdata/inflight/429.txt: net/http's
// plain-text error, with Retry-After: 1. The capture is this case's answer
// from a v1.37.2 kube-apiserver of its own, started by realk8s.sh with
// REALK8S_ROOT and ports of its own and EXTRA_APISERVER_FLAGS=
// "--enable-priority-and-fairness=false --max-requests-inflight=2
// --max-mutating-requests-inflight=1" (-inflight-limits 2,1): a 429 with
// Content-Type text/plain; charset=utf-8, X-Content-Type-Options: nosniff,
// Cache-Control: no-cache, private and Retry-After: 1.
func checkTooManyRequests(t *testing.T, r *response) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", "inflight", "429.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != http.StatusTooManyRequests || string(r.Body) != string(want) {
		t.Fatalf("want 429 %q: %s", want, r)
	}
	for k, v := range map[string]string{
		"Retry-After":            "1",
		"Content-Type":           "text/plain; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-cache, private",
	} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}
