package conformance

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "github.com/kapi-dev/kapi/api/admissionregistration/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// The admission webhook cases run a webhook server in the test: HTTPS on
// 127.0.0.1 with httptest's self-signed certificate, which the webhook
// configurations trust as their caBundle and call by url. A
// kube-apiserver on the same machine reaches it as the in-process server
// does. Every configuration selects only the case's namespace (or a label
// of its own), so the cases run side by side on a shared cluster.

// webhookServer is an admission webhook of a case. It records the
// requests it is sent; handle answers them (the uid is filled in). Objects
// named "probe-..." are refused with "probe": waitWebhooks creates them
// until the server under test calls the webhook (a cluster's webhook
// configuration cache is filled asynchronously).
type webhookServer struct {
	srv    *httptest.Server
	handle func(req obj) obj
	mu     sync.Mutex
	got    []obj
}

func startWebhook(t *testing.T, handle func(req obj) obj) *webhookServer {
	t.Helper()
	w := &webhookServer{handle: handle}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	return w
}

func (w *webhookServer) serve(rw http.ResponseWriter, r *http.Request) {
	var review obj
	d := json.NewDecoder(r.Body)
	d.UseNumber()
	if err := d.Decode(&review); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	req, _ := review["request"].(obj)
	var resp obj
	if strings.HasPrefix(str(req, "object", "metadata", "name"), "probe-") {
		resp = obj{"allowed": false, "status": obj{"message": "probe"}}
	} else {
		w.mu.Lock()
		w.got = append(w.got, req)
		w.mu.Unlock()
		resp = w.handle(req)
		if resp == nil { // the handler gave up: the caller has gone
			return
		}
	}
	resp["uid"] = req["uid"]
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(obj{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
}

// requests are the (non-probe) requests the webhook was sent.
func (w *webhookServer) requests() []obj {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]obj(nil), w.got...)
}

// caBundle is the base64 PEM of the server's certificate.
func (w *webhookServer) caBundle() string {
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw}))
}

// hook is a webhook entry calling w at path, for CREATE and UPDATE of
// configmaps in namespace ns, failing closed, with no side effects.
func (w *webhookServer) hook(name, ns, path string) obj {
	return obj{
		"name":                    name + ".webhooks.i16.kapi.dev",
		"clientConfig":            obj{"url": w.srv.URL + path, "caBundle": w.caBundle()},
		"rules":                   []any{obj{"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}},
		"namespaceSelector":       obj{"matchLabels": obj{"kubernetes.io/metadata.name": ns}},
		"failurePolicy":           "Fail",
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
		"timeoutSeconds":          5,
	}
}

// createWebhookConfig creates a Validating- or MutatingWebhookConfiguration
// (kind "validating" or "mutating") named for the case and deletes it
// when the case ends.
func (e *env) createWebhookConfig(t *testing.T, kind string, hooks ...obj) string {
	t.Helper()
	path := "/apis/admissionregistration.k8s.io/v1/" + kind + "webhookconfigurations"
	name := "i16-" + kind + "-" + randomSuffix()
	list := make([]any, len(hooks))
	for i, h := range hooks {
		list[i] = h
	}
	expect(t, e.post(t, path, obj{"metadata": obj{"name": name}, "webhooks": list}), http.StatusCreated)
	t.Cleanup(func() { e.del(t, path+"/"+name, nil) })
	return name
}

// waitWebhooks creates probe configmaps (labelled) in ns until the
// server calls the case's webhooks, which refuse them.
func (e *env) waitWebhooks(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	deadline := time.Now().Add(e.within(30 * time.Second))
	for {
		r := e.post(t, cmPath(ns), configMap("probe-"+randomSuffix(), labels, nil))
		if r.Code != http.StatusCreated && strings.Contains(string(r.Body), "probe") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhooks were never called:\n%s", r)
		}
		time.Sleep(50 * time.Millisecond) // polling the server under test, not synchronising with the test
	}
}

// webhookStatus checks a refusal by a webhook word for word.
func webhookStatus(t *testing.T, r *response, code int, reason, msg string) {
	t.Helper()
	st := checkStatus(t, r, code, reason, msg)
	if st != nil && str(st, "message") != msg {
		t.Errorf("message %q, want %q", str(st, "message"), msg)
	}
}

// captureWebhooks, with -kubeconfig, writes the answers webhookGolden
// compares into testdata/webhook instead of comparing them.
var captureWebhooks = flag.Bool("capture-webhooks", false, "write the Status answers of the webhook cases into testdata/webhook (with -kubeconfig: kube-apiserver's)")

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// webhookGolden checks a Status answer against kube-apiserver's, captured
// in testdata/webhook/<name>.json; repl are pairs of a placeholder of the
// capture and this run's value (the webhook's address, the namespace).
func webhookGolden(t *testing.T, r *response, name string, repl ...string) {
	t.Helper()
	file := filepath.Join("testdata", "webhook", name+".json")
	// The uids of AdmissionReviews a message quotes are the request's.
	r.Body = uuidPattern.ReplaceAll(r.Body, []byte("$$UID"))
	if *captureWebhooks && !target.inProcess {
		body := string(r.Body)
		for i := 0; i+1 < len(repl); i += 2 {
			body = strings.ReplaceAll(body, repl[i+1], repl[i])
		}
		var out bytes.Buffer
		if err := json.Indent(&out, []byte(body), "", "  "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(out.Bytes(), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := string(b)
	for i := 0; i+1 < len(repl); i += 2 {
		want = strings.ReplaceAll(want, repl[i], repl[i+1])
	}
	wantSt, gotSt := decode(t, []byte(want)), decode(t, r.Body)
	if c, _ := num(wantSt, "code"); int(c) != r.Code {
		t.Errorf("%s: HTTP %d, want %d", name, r.Code, c)
	}
	if !reflect.DeepEqual(gotSt, wantSt) {
		t.Errorf("%s: Status differs\n got: %s\nwant: %s", name, compact(gotSt), compact(wantSt))
	}
}

func allow(obj) obj { return obj{"allowed": true} }

func TestWebhookAllowedRequest(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, allow)
	e.createWebhookConfig(t, "validating", w.hook("allow", ns, "/validate"))
	e.waitWebhooks(t, ns, nil)

	created := expect(t, e.post(t, cmPath(ns), configMap("a", map[string]string{"k": "v"}, map[string]string{"x": "1"})), http.StatusCreated)
	got := w.requests()
	if len(got) != 1 {
		t.Fatalf("webhook called %d times for a create, want 1", len(got))
	}
	req := got[0]
	want := map[string]string{
		"operation": "CREATE", "name": "a", "namespace": ns,
		"kind": `{"group":"","kind":"ConfigMap","version":"v1"}`, "requestKind": `{"group":"","kind":"ConfigMap","version":"v1"}`,
		"resource": `{"group":"","resource":"configmaps","version":"v1"}`, "requestResource": `{"group":"","resource":"configmaps","version":"v1"}`,
		"dryRun": "false",
	}
	for k, v := range want {
		have := compact(req[k])
		if s, ok := req[k].(string); ok {
			have = s
		}
		if have != v {
			t.Errorf("request.%s = %s, want %s", k, have, v)
		}
	}
	if str(req, "uid") == "" || str(req, "userInfo", "username") == "" {
		t.Errorf("request without uid or userInfo.username: %s", compact(req))
	}
	if str(req, "object", "apiVersion") != "v1" || str(req, "object", "kind") != "ConfigMap" || str(req, "object", "data", "x") != "1" {
		t.Errorf("request.object = %s", compact(req["object"]))
	}
	if req["oldObject"] != nil {
		t.Errorf("a create's oldObject = %s, want none", compact(req["oldObject"]))
	}
	if str(req, "options", "kind") != "CreateOptions" || str(req, "options", "apiVersion") != "meta.k8s.io/v1" {
		t.Errorf("request.options = %s", compact(req["options"]))
	}

	e.updateData(t, ns, created, map[string]string{"x": "2"})
	got = w.requests()
	if len(got) != 2 {
		t.Fatalf("webhook called %d times after an update, want 2", len(got))
	}
	req = got[1]
	if str(req, "operation") != "UPDATE" || str(req, "oldObject", "data", "x") != "1" || str(req, "object", "data", "x") != "2" ||
		str(req, "options", "kind") != "UpdateOptions" {
		t.Errorf("update request = %s", compact(req))
	}
	if str(req, "uid") == str(got[0], "uid") {
		t.Errorf("two requests share uid %s", str(req, "uid"))
	}
}

func TestWebhookDenied(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, func(req obj) obj {
		switch str(req, "object", "metadata", "name") {
		case "plain":
			return obj{"allowed": false, "status": obj{"message": "plain is not welcome"}}
		case "coded":
			return obj{"allowed": false, "status": obj{"code": 422, "reason": "Invalid", "message": "coded is invalid"}}
		case "reason-only":
			return obj{"allowed": false, "status": obj{"reason": "NotAcceptable"}}
		case "bare":
			return obj{"allowed": false}
		}
		return allow(req)
	})
	e.createWebhookConfig(t, "validating", w.hook("deny", ns, "/"))
	e.waitWebhooks(t, ns, nil)
	for _, name := range []string{"plain", "coded", "reason-only", "bare"} {
		webhookGolden(t, e.post(t, cmPath(ns), configMap(name, nil, nil)), "denied-"+name)
	}
	expect(t, e.get(t, cmPath(ns, "plain")), http.StatusNotFound)
}

func TestWebhookWarnings(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, func(obj) obj { return obj{"allowed": true, "warnings": []any{"mind the gap", "second"}} })
	e.createWebhookConfig(t, "validating", w.hook("warn", ns, "/"))
	e.waitWebhooks(t, ns, nil)
	r := e.post(t, cmPath(ns), configMap("warned", nil, nil))
	expect(t, r, http.StatusCreated)
	if got, want := r.Header.Values("Warning"), []string{`299 - "mind the gap"`, `299 - "second"`}; compact(got) != compact(want) {
		t.Errorf("Warning headers %q, want %q", got, want)
	}
}

// patchAnswer is a webhook answer that applies ops.
func patchAnswer(ops ...obj) obj {
	b, _ := json.Marshal(ops)
	return obj{"allowed": true, "patchType": "JSONPatch", "patch": base64.StdEncoding.EncodeToString(b)}
}

func TestWebhookMutatingPatch(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, func(req obj) obj {
		if _, ok := field(req, "object", "data"); !ok {
			return patchAnswer(obj{"op": "add", "path": "/data", "value": obj{"added": "by webhook"}})
		}
		return patchAnswer(obj{"op": "add", "path": "/data/added", "value": "by webhook"})
	})
	e.createWebhookConfig(t, "mutating", w.hook("patch", ns, "/"))
	e.waitWebhooks(t, ns, nil)
	got := expect(t, e.post(t, cmPath(ns), configMap("patched", nil, map[string]string{"mine": "1"})), http.StatusCreated)
	if str(got, "data", "added") != "by webhook" || str(got, "data", "mine") != "1" {
		t.Errorf("created %s, want data.added from the webhook", compact(got["data"]))
	}
	stored := expect(t, e.get(t, cmPath(ns, "patched")), http.StatusOK)
	if str(stored, "data", "added") != "by webhook" {
		t.Errorf("stored %s", compact(stored["data"]))
	}
	// A name drawn from generateName is drawn after the mutating webhooks.
	gen := configMap("", nil, nil)
	gen["metadata"] = obj{"generateName": "gen-"}
	got = expect(t, e.post(t, cmPath(ns), gen), http.StatusCreated)
	reqs := w.requests()
	last := reqs[len(reqs)-1]
	if !strings.HasPrefix(name(got), "gen-") || str(got, "data", "added") != "by webhook" || has(last, "name") ||
		has(last, "object", "metadata", "name") || str(last, "object", "metadata", "generateName") != "gen-" {
		t.Errorf("generateName create %s: request %s", name(got), compact(last))
	}
}

// closedURL is an https URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "https://" + addr + "/down"
}

func TestWebhookFailurePolicyUnreachable(t *testing.T) {
	t.Parallel()
	e := target
	for _, policy := range []string{"Fail", "Ignore"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			ns := e.namespace(t)
			w := startWebhook(t, allow)
			down := w.hook("down", ns, "")
			u := closedURL(t)
			down["clientConfig"].(obj)["url"] = u
			down["failurePolicy"] = policy
			e.createWebhookConfig(t, "validating", w.hook("probe", ns, "/"), down)
			e.waitWebhooks(t, ns, nil)
			r := e.post(t, cmPath(ns), configMap("c", nil, nil))
			if policy == "Ignore" {
				expect(t, r, http.StatusCreated)
				return
			}
			webhookGolden(t, r, "unreachable", "$ADDR", strings.TrimSuffix(strings.TrimPrefix(u, "https://"), "/down"))
		})
	}
}

func TestWebhookTimeout(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	done := make(chan struct{})
	slow := startWebhook(t, func(req obj) obj {
		if str(req, "object", "metadata", "name") == "slow" {
			// Answer after the webhook's timeoutSeconds (1), which the
			// server must enforce, or when the case ends.
			select {
			case <-done:
			case <-time.After(3 * time.Second):
			}
		}
		return allow(req)
	})
	t.Cleanup(func() { close(done) }) // before the server's Close, which waits for the handler
	h := slow.hook("slow", ns, "/slow")
	h["timeoutSeconds"] = 1
	ignored := slow.hook("slow-ignored", ns, "/slow")
	ignored["timeoutSeconds"] = 1
	ignored["failurePolicy"] = "Ignore"
	e.createWebhookConfig(t, "validating", h, ignored)
	e.waitWebhooks(t, ns, nil)
	start := time.Now()
	webhookGolden(t, e.post(t, cmPath(ns), configMap("slow", nil, nil)), "timeout", "$URL", slow.srv.URL)
	if d := time.Since(start); d > 2900*time.Millisecond {
		t.Errorf("the request took %v: the webhook's 1s timeout was not applied", d)
	}
}

func TestWebhookNamespaceSelector(t *testing.T) {
	t.Parallel()
	e := target
	ns, other := e.namespace(t), e.namespace(t)
	label := "i16-webhooks-" + randomSuffix()
	w := startWebhook(t, func(req obj) obj { return obj{"allowed": false, "status": obj{"message": "selected"}} })
	h := w.hook("ns", ns, "/")
	nsHook := w.hook("nsobj", ns, "/")
	nsHook["rules"] = []any{obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"namespaces"}}}
	nsHook["namespaceSelector"] = obj{"matchLabels": obj{label: "yes"}}
	e.createWebhookConfig(t, "validating", h, nsHook)
	e.waitWebhooks(t, ns, nil)
	webhookStatus(t, e.post(t, cmPath(ns), configMap("c", nil, nil)), 400, "", `admission webhook "ns.webhooks.i16.kapi.dev" denied the request: selected`)
	expect(t, e.post(t, cmPath(other), configMap("c", nil, nil)), http.StatusCreated)
	// A namespace is matched by its own labels.
	name := "i16-webhooks-" + randomSuffix()
	webhookStatus(t, e.post(t, "/api/v1/namespaces", obj{"metadata": obj{"name": name, "labels": obj{label: "yes"}}}), 400, "",
		`admission webhook "nsobj.webhooks.i16.kapi.dev" denied the request: selected`)
	r := e.post(t, "/api/v1/namespaces", obj{"metadata": obj{"name": name, "labels": obj{label: "no"}}})
	expect(t, r, http.StatusCreated)
	e.del(t, "/api/v1/namespaces/"+name, nil)
}

func TestWebhookObjectSelector(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	before := expect(t, e.post(t, cmPath(ns), configMap("before", map[string]string{"hook": "yes"}, nil)), http.StatusCreated)
	w := startWebhook(t, func(req obj) obj { return obj{"allowed": false, "status": obj{"message": "labelled"}} })
	h := w.hook("obj", ns, "/")
	h["objectSelector"] = obj{"matchLabels": obj{"hook": "yes"}}
	e.createWebhookConfig(t, "validating", h)
	e.waitWebhooks(t, ns, map[string]string{"hook": "yes"})
	const denied = `admission webhook "obj.webhooks.i16.kapi.dev" denied the request: labelled`
	webhookStatus(t, e.post(t, cmPath(ns), configMap("labelled", map[string]string{"hook": "yes"}, nil)), 400, "", denied)
	plain := expect(t, e.post(t, cmPath(ns), configMap("plain", map[string]string{"hook": "no"}, nil)), http.StatusCreated)
	// An update is selected by the new object's labels, or the old one's.
	plain["metadata"].(obj)["labels"] = obj{"hook": "yes"}
	webhookStatus(t, e.put(t, cmPath(ns, "plain"), plain), 400, "", denied)
	before["metadata"].(obj)["labels"] = obj{"hook": "no"}
	webhookStatus(t, e.put(t, cmPath(ns, "before"), before), 400, "", denied)
	if n := len(w.requests()); n != 3 {
		t.Errorf("webhook called %d times, want 3 (the unlabelled create not)", n)
	}
}

func TestWebhookMatchConditions(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, func(req obj) obj { return obj{"allowed": false, "status": obj{"message": "matched"}} })
	h := w.hook("cond", ns, "/")
	h["matchConditions"] = []any{
		obj{"name": "not-probe-or-deny", "expression": `object.metadata.name.startsWith('probe-') || (has(object.data) && 'deny' in object.data)`},
		obj{"name": "create", "expression": `request.operation == 'CREATE' && oldObject == null`},
	}
	// A condition that fails to evaluate (no such key) for objects named
	// "err-...": the first webhook fails closed, the second open.
	bad := w.hook("bad-fail", ns, "/")
	bad["matchConditions"] = []any{obj{"name": "missing-key", "expression": `object.metadata.name.startsWith('err-') ? object.data.missing == 'x' : false`}}
	badIgnore := w.hook("bad-ignore", ns, "/")
	badIgnore["failurePolicy"] = "Ignore"
	badIgnore["matchConditions"] = []any{obj{"name": "missing-key", "expression": `object.metadata.name.startsWith('err-') || object.metadata.name.startsWith('errignored-') ? object.data.missing == 'x' : false`}}
	e.createWebhookConfig(t, "validating", h, bad, badIgnore)
	e.waitWebhooks(t, ns, nil)
	expect(t, e.post(t, cmPath(ns), configMap("kept", nil, map[string]string{"keep": "1"})), http.StatusCreated)
	webhookStatus(t, e.post(t, cmPath(ns), configMap("denied", nil, map[string]string{"deny": "1"})), 400, "",
		`admission webhook "cond.webhooks.i16.kapi.dev" denied the request: matched`)
	webhookGolden(t, e.post(t, cmPath(ns), configMap("err-1", nil, map[string]string{"a": "1"})), "match-condition-error")
	expect(t, e.post(t, cmPath(ns), configMap("errignored-1", nil, map[string]string{"a": "1"})), http.StatusCreated)
	if n := len(w.requests()); n != 1 {
		t.Errorf("webhook called %d times, want 1", n)
	}
}

func TestWebhookSideEffectsDryRun(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, allow)
	// v1 configurations take only None and NoneOnDryRun.
	some := w.hook("some", ns, "/")
	some["sideEffects"] = "Some"
	name := "i16-some-" + randomSuffix()
	r := e.post(t, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
		obj{"metadata": obj{"name": name}, "webhooks": []any{some}})
	webhookGolden(t, r, "side-effects-some", "$NAME", name, "$NS", ns, "$CA", w.caBundle(), "$URL", w.srv.URL)

	h := w.hook("dry", ns, "/")
	h["sideEffects"] = "NoneOnDryRun"
	e.createWebhookConfig(t, "validating", h)
	e.waitWebhooks(t, ns, nil)
	expect(t, e.post(t, cmPath(ns)+"?dryRun=All", configMap("dry", nil, nil)), http.StatusCreated)
	got := w.requests()
	if len(got) != 1 || compact(got[0]["dryRun"]) != "true" || compact(field0(got[0], "options", "dryRun")) != `["All"]` {
		t.Errorf("dry-run requests: %s", compact(got))
	}
	expect(t, e.get(t, cmPath(ns, "dry")), http.StatusNotFound)
}

func field0(o obj, path ...string) any {
	v, _ := field(o, path...)
	return v
}

// TestWebhookDryRunUnsupported: a webhook whose sideEffects are Some or
// Unknown (which v1 refuses, but configurations stored through older
// versions have) refuses dry runs. Only the in-process server's store can
// be given such a configuration.
func TestWebhookDryRunUnsupported(t *testing.T) {
	t.Parallel()
	if !target.inProcess {
		t.Skip("needs the in-process server's store to hold sideEffects Unknown")
	}
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, allow)
	name := e.createWebhookConfig(t, "validating", w.hook("unknown", ns, "/"))
	e.waitWebhooks(t, ns, nil)
	setSideEffects(t, e, name, "Unknown")
	// The server's webhooks follow the store: the write above reaches them
	// shortly after, and the dry runs before it are admitted (and stored
	// nothing).
	var r *response
	poll(t, 10*time.Second, "the webhook to be seen with sideEffects Unknown", func() bool {
		r = e.post(t, cmPath(ns)+"?dryRun=All", configMap("dry", nil, nil))
		return r.Code != http.StatusCreated
	})
	webhookStatus(t, r, 400, "BadRequest",
		`admission webhook "unknown.webhooks.i16.kapi.dev" does not support dry run`)
	expect(t, e.post(t, cmPath(ns), configMap("wet", nil, nil)), http.StatusCreated)
}

func TestWebhookReinvocation(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	// first counts its calls in an annotation; second labels the object,
	// after first: first, IfNeeded, is called again.
	first := startWebhook(t, func(req obj) obj {
		n := 1
		if v := str(req, "object", "metadata", "annotations", "first-calls"); v != "" {
			fmt.Sscan(v, &n)
			n++
		}
		if !has(req, "object", "metadata", "annotations") {
			return patchAnswer(obj{"op": "add", "path": "/metadata/annotations", "value": obj{"first-calls": fmt.Sprint(n)}})
		}
		return patchAnswer(obj{"op": "add", "path": "/metadata/annotations/first-calls", "value": fmt.Sprint(n)})
	})
	second := startWebhook(t, func(req obj) obj {
		if !has(req, "object", "metadata", "labels") {
			return patchAnswer(obj{"op": "add", "path": "/metadata/labels", "value": obj{"second": "yes"}})
		}
		return patchAnswer(obj{"op": "add", "path": "/metadata/labels/second", "value": "yes"})
	})
	h1 := first.hook("a-first", ns, "/")
	h1["reinvocationPolicy"] = "IfNeeded"
	h2 := second.hook("b-second", ns, "/")
	e.createWebhookConfig(t, "mutating", h1, h2)
	e.waitWebhooks(t, ns, nil)
	got := expect(t, e.post(t, cmPath(ns), configMap("re", nil, nil)), http.StatusCreated)
	if str(got, "metadata", "annotations", "first-calls") != "2" || str(got, "metadata", "labels", "second") != "yes" {
		t.Errorf("created %s, want first called twice and labelled by second", compact(got["metadata"]))
	}
	if n1, n2 := len(first.requests()), len(second.requests()); n1 != 2 || n2 != 1 {
		t.Errorf("first called %d times, second %d, want 2 and 1", n1, n2)
	}
}

// setSideEffects gives the webhooks of the in-process server's stored
// validating configuration name the sideEffects class, which the API
// would refuse.
func setSideEffects(t *testing.T, e *env, name, class string) {
	t.Helper()
	key := "/admissionregistration.k8s.io/validatingwebhookconfigurations/" + name
	_, err := e.server.Storage().GuaranteedUpdate(context.Background(), key, false, nil, func(cur storage.Object) (storage.Object, error) {
		c := cur.(*admissionregistrationv1.ValidatingWebhookConfiguration).DeepCopy()
		se := admissionregistrationv1.SideEffectClass(class)
		for i := range c.Webhooks {
			c.Webhooks[i].SideEffects = &se
		}
		return c, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWebhookServiceMap: a webhook configured with a service is reached
// at the address the in-process server's WebhookServiceMap gives, with
// the service's TLS server name.
func TestWebhookServiceMap(t *testing.T) {
	t.Parallel()
	if !target.inProcess {
		t.Skip("the service map is the in-process server's (Config.WebhookServiceMap)")
	}
	caPEM, cert := serviceCert(t, "hook.webhook-system.svc")
	w := &webhookServer{handle: func(obj) obj { return obj{"allowed": false, "status": obj{"message": "via service"}} }}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	e := withDefaults(t, func(c *apiserver.Config) {
		c.WebhookServiceMap = map[string]string{"webhook-system/hook:8443": w.srv.Listener.Addr().String()}
	})
	ns := e.namespace(t)
	h := w.hook("svc", ns, "")
	h["clientConfig"] = obj{"service": obj{"namespace": "webhook-system", "name": "hook", "port": 8443, "path": "/admit"},
		"caBundle": base64.StdEncoding.EncodeToString(caPEM)}
	e.createWebhookConfig(t, "validating", h)
	webhookStatus(t, e.post(t, cmPath(ns), configMap("c", nil, nil)), 400, "",
		`admission webhook "svc.webhooks.i16.kapi.dev" denied the request: via service`)
	// A service the map does not know cannot be called.
	h2 := w.hook("unmapped", ns, "")
	h2["clientConfig"] = obj{"service": obj{"namespace": "webhook-system", "name": "other"}, "caBundle": base64.StdEncoding.EncodeToString(caPEM)}
	h2["rules"] = []any{obj{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"secrets"}}}
	e.createWebhookConfig(t, "validating", h2)
	checkStatus(t, e.post(t, "/api/v1/namespaces/"+ns+"/secrets", obj{"metadata": obj{"name": "s"}}), http.StatusInternalServerError, "InternalError",
		`failed calling webhook "unmapped.webhooks.i16.kapi.dev"`)
}

// serviceCert is a CA (PEM) and a certificate it signs for host and
// 127.0.0.1.
func serviceCert(t *testing.T, host string) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{host}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestWebhookDeleteAndSubresource(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	validating := startWebhook(t, func(req obj) obj {
		if str(req, "operation") == "CREATE" {
			return allow(req)
		}
		return obj{"allowed": false, "status": obj{"message": "no " + str(req, "operation") + " " + str(req, "subResource")}}
	})
	mutating := startWebhook(t, allow)
	v := validating.hook("v", ns, "/")
	v["rules"] = []any{
		obj{"operations": []any{"CREATE", "DELETE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}},
		obj{"operations": []any{"UPDATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"services/status"}},
	}
	m := mutating.hook("m", ns, "/")
	m["rules"] = []any{obj{"operations": []any{"DELETE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}}
	e.createWebhookConfig(t, "validating", v)
	e.createWebhookConfig(t, "mutating", m)
	e.waitWebhooks(t, ns, nil)

	expect(t, e.post(t, cmPath(ns), configMap("c", nil, nil)), http.StatusCreated)
	webhookStatus(t, e.del(t, cmPath(ns, "c"), nil), 400, "", `admission webhook "v.webhooks.i16.kapi.dev" denied the request: no DELETE `)
	got := validating.requests()
	req := got[len(got)-1]
	if str(req, "name") != "c" || str(req, "oldObject", "metadata", "name") != "c" || req["object"] != nil ||
		str(req, "options", "kind") != "DeleteOptions" || str(req, "options", "apiVersion") != "meta.k8s.io/v1" {
		t.Errorf("validating delete request = %s", compact(req))
	}
	mreqs := mutating.requests()
	if len(mreqs) != 1 || str(mreqs[0], "operation") != "DELETE" || mreqs[0]["object"] != nil || str(mreqs[0], "oldObject", "metadata", "name") != "c" {
		t.Errorf("mutating delete requests = %s, want one DELETE of c with only oldObject", compact(mreqs))
	}
	expect(t, e.get(t, cmPath(ns, "c")), http.StatusOK)

	svc := expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/services", obj{"metadata": obj{"name": "s"},
		"spec": obj{"ports": []any{obj{"port": 80}}}}), http.StatusCreated)
	svc["status"] = obj{"conditions": []any{obj{"type": "Checked", "status": "True", "reason": "Test", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	webhookStatus(t, e.put(t, "/api/v1/namespaces/"+ns+"/services/s/status", svc), 400, "",
		`admission webhook "v.webhooks.i16.kapi.dev" denied the request: no UPDATE status`)
	got = validating.requests()
	req = got[len(got)-1]
	if str(req, "subResource") != "status" || str(req, "requestSubResource") != "status" || str(req, "resource", "resource") != "services" ||
		str(req, "kind", "kind") != "Service" {
		t.Errorf("status request = %s", compact(req))
	}
	delete(svc, "status")
	svc["metadata"].(obj)["labels"] = obj{"updated": "yes"}
	expect(t, e.put(t, "/api/v1/namespaces/"+ns+"/services/s", svc), http.StatusOK) // services themselves are not selected
}

func TestWebhookBadResponse(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	w := startWebhook(t, allow)
	// Answers that are not AdmissionReviews kube-apiserver accepts fail
	// the call.
	bad := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/status500":
			http.Error(rw, "boom", http.StatusInternalServerError)
		case "/notjson":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte("not json"))
		case "/uid":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"other","allowed":true}}`))
		case "/kind":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"apiVersion":"v1","kind":"Status","response":{"allowed":true}}`))
		case "/nokind":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"response":{"allowed":true}}`))
		case "/v1beta1":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"allowed":true}}`))
		case "/array":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`[1]`))
		case "/noresponse":
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`))
		}
	}))
	bad.TLS = w.srv.TLS
	bad.StartTLS()
	t.Cleanup(bad.Close)
	var hooks []obj
	hooks = append(hooks, w.hook("probe", ns, "/"))
	paths := []string{"status500", "notjson", "uid", "kind", "noresponse", "nokind", "v1beta1", "array"}
	for _, p := range paths {
		h := w.hook(p, ns, "")
		h["clientConfig"] = obj{"url": bad.URL + "/" + p, "caBundle": base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: bad.Certificate().Raw}))}
		h["objectSelector"] = obj{"matchLabels": obj{"bad": p}}
		hooks = append(hooks, h)
	}
	e.createWebhookConfig(t, "validating", hooks...)
	e.waitWebhooks(t, ns, nil)
	for _, p := range paths {
		webhookGolden(t, e.post(t, cmPath(ns), configMap("c-"+p, map[string]string{"bad": p}, nil)), "bad-response-"+p)
	}
}

// TestWebhookValidatingParallel: the validating webhooks are called at
// once: each answers only when it has seen the other called.
func TestWebhookValidatingParallel(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	var mu sync.Mutex
	arrived := map[string]bool{}
	both := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	barrier := func(me string) func(obj) obj {
		return func(req obj) obj {
			mu.Lock()
			arrived[me] = true
			if len(arrived) == 2 {
				close(both)
			}
			mu.Unlock()
			select {
			case <-both:
				return allow(req)
			case <-done:
			case <-time.After(3 * time.Second): // not called at the same time
			}
			return obj{"allowed": false, "status": obj{"message": "called alone"}}
		}
	}
	a, b := startWebhook(t, barrier("a")), startWebhook(t, barrier("b"))
	e.createWebhookConfig(t, "validating", a.hook("a", ns, "/"), b.hook("b", ns, "/"))
	e.waitWebhooks(t, ns, nil)
	expect(t, e.post(t, cmPath(ns), configMap("both", nil, nil)), http.StatusCreated)
}
