package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

// env is a server under test and how to reach it.
type env struct {
	name      string
	base      string // scheme://host:port, no trailing slash
	client    *http.Client
	token     string // bearer token, if any
	inProcess bool
	server    *apiserver.Server // the in-process server, nil for a real one
	// patience scales every deadline: a real cluster (a namespace controller
	// deleting content, bookmarks once a minute) needs longer than memory.
	patience time.Duration

	rootCAOnce      sync.Once
	publishesRootCA bool

	kapiOnce sync.Once
	isKapi   bool
}

// kapi reports whether the target is kapi's reference server (in-process,
// or the binary, whose /version says -kapi): it runs none of
// kube-controller-manager's controllers, and computes from specs what a
// cluster reads from the status those controllers write.
func (e *env) kapi(t testing.TB) bool {
	t.Helper()
	e.kapiOnce.Do(func() {
		e.isKapi = e.inProcess || strings.HasSuffix(str(expect(t, e.get(t, "/version"), http.StatusOK), "gitVersion"), "-kapi")
	})
	return e.isKapi
}

// as returns an env for the same server that authenticates with token
// (none when empty) instead of the target's credentials.
func (e *env) as(token string) *env {
	return &env{name: e.name, base: e.base, client: e.client, token: token, inProcess: e.inProcess, server: e.server, patience: e.patience}
}

// withClientCertificate returns an env for the same server that presents
// cert in its TLS handshakes and no token; its connections close with t.
func (e *env) withClientCertificate(t testing.TB, cert tls.Certificate) *env {
	t.Helper()
	base, ok := e.client.Transport.(*http.Transport)
	if !ok || base.TLSClientConfig == nil {
		t.Fatalf("%s is not served over TLS", e.name)
	}
	tc := base.TLSClientConfig.Clone()
	// Sent whatever CAs the server names (Go's client would otherwise
	// keep back a certificate of a CA the server does not trust).
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	tc.NextProtos = nil // the base transport's HTTP/2, which this one does not speak
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	t.Cleanup(client.CloseIdleConnections)
	c := e.as("")
	c.client = client
	return c
}

// within is d scaled by the target's patience.
func (e *env) within(d time.Duration) time.Duration { return d * e.patience }

// obj is a decoded JSON object. Numbers are json.Number.
type obj = map[string]any

// response is a complete, non-streaming HTTP response.
type response struct {
	Method, Path string
	Code         int
	Header       http.Header
	Body         []byte
}

func (r *response) String() string {
	body := r.Body
	if len(body) > 2000 {
		body = append(body[:2000:2000], "..."...)
	}
	return fmt.Sprintf("%s %s -> %d %s\n%s", r.Method, r.Path, r.Code, r.Header.Get("Content-Type"), body)
}

// newRequest builds a request to the target. body is nil, []byte or string (sent
// as is), or anything else (sent as JSON). header holds name/value pairs; Accept
// defaults to application/json, and Content-Type to application/json when
// there is a body.
func (e *env) newRequest(ctx context.Context, method, path string, body any, header ...string) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encoding request body: %w", err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req, nil
}

// send sends a request and reads the whole response. It is safe to call from
// any goroutine; do is the form for the test goroutine.
func (e *env) send(method, path string, body any, header ...string) (*response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.within(30*time.Second))
	defer cancel()
	req, err := e.newRequest(ctx, method, path, body, header...)
	if err != nil {
		return nil, err
	}
	return e.exchange(req, path)
}

// exchange sends req (to path) and reads the whole response.
func (e *env) exchange(req *http.Request, path string) (*response, error) {
	method := req.Method
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, path, err)
	}
	return &response{Method: method, Path: path, Code: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// do sends a request and reads the whole response, failing the test if that
// cannot be done.
func (e *env) do(t testing.TB, method, path string, body any, header ...string) *response {
	t.Helper()
	r, err := e.send(method, path, body, header...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// get, post, put and del are do with a method.
func (e *env) get(t testing.TB, path string, header ...string) *response {
	t.Helper()
	return e.do(t, http.MethodGet, path, nil, header...)
}

func (e *env) post(t testing.TB, path string, body any, header ...string) *response {
	t.Helper()
	return e.do(t, http.MethodPost, path, body, header...)
}

func (e *env) put(t testing.TB, path string, body any, header ...string) *response {
	t.Helper()
	return e.do(t, http.MethodPut, path, body, header...)
}

func (e *env) del(t testing.TB, path string, body any, header ...string) *response {
	t.Helper()
	return e.do(t, http.MethodDelete, path, body, header...)
}

// expect fails the test unless the response has the code; it returns the
// decoded body when it is a JSON object.
func expect(t testing.TB, r *response, code int) obj {
	t.Helper()
	if r.Code != code {
		t.Fatalf("want HTTP %d, got:\n%s", code, r)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return nil
	}
	return decode(t, r.Body)
}

// decode decodes one JSON object, keeping numbers exact.
func decode(t testing.TB, b []byte) obj {
	t.Helper()
	var o obj
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&o); err != nil {
		t.Fatalf("decoding %q: %v", truncate(b), err)
	}
	return o
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// field returns the value at path in o.
func field(o obj, path ...string) (any, bool) {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// str returns the string at path in o ("" if absent or not a string).
func str(o obj, path ...string) string {
	v, _ := field(o, path...)
	s, _ := v.(string)
	return s
}

// num returns the integer at path in o, and whether there is one.
func num(o obj, path ...string) (int64, bool) {
	v, ok := field(o, path...)
	if !ok {
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func has(o obj, path ...string) bool {
	_, ok := field(o, path...)
	return ok
}

func name(o obj) string { return str(o, "metadata", "name") }
func rv(o obj) string   { return str(o, "metadata", "resourceVersion") }

// items returns a list's items.
func items(t testing.TB, list obj) []obj {
	t.Helper()
	v, ok := list["items"]
	if !ok {
		t.Fatalf("list has no items field: %v", list)
	}
	if v == nil {
		return nil
	}
	raw, ok := v.([]any)
	if !ok {
		t.Fatalf("list items is %T", v)
	}
	out := make([]obj, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
	}
	return out
}

// names returns the names of objects, in order.
func names(objs []obj) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = name(o)
	}
	return out
}

// versions maps each object's name to its resourceVersion.
func versions(objs []obj) map[string]string {
	out := make(map[string]string, len(objs))
	for _, o := range objs {
		out[name(o)] = rv(o)
	}
	return out
}

// rvNum reads a resourceVersion as the number kube-apiserver and kapi make it
// (an etcd revision, a store revision). The spec tells clients to treat it as
// opaque; the cases here that compare versions do so to check ordering
// guarantees of the server, which clients observe as event order.
func rvNum(t testing.TB, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not a number: %v", rv, err)
	}
	return n
}

// q builds a query string (with its leading "?") from name/value pairs, in order.
func q(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if b.Len() == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[i]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[i+1]))
	}
	return b.String()
}

// --- objects ---

// configMap builds a ConfigMap body.
func configMap(name string, labels map[string]string, data map[string]string) obj {
	meta := obj{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	o := obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
	if data != nil {
		o["data"] = data
	}
	return o
}

// cmPath is the collection path of configmaps in ns, or of the named one.
func cmPath(ns string, name ...string) string {
	p := "/api/v1/namespaces/" + ns + "/configmaps"
	if len(name) > 0 {
		p += "/" + name[0]
	}
	return p
}

// createCM creates a ConfigMap and returns the stored object.
func (e *env) createCM(t testing.TB, ns, name string, labels, data map[string]string) obj {
	t.Helper()
	return expect(t, e.post(t, cmPath(ns), configMap(name, labels, data)), http.StatusCreated)
}

// updateData replaces the data of a ConfigMap (optimistically, at o's
// resourceVersion) and returns the stored object.
func (e *env) updateData(t testing.TB, ns string, o obj, data map[string]string) obj {
	t.Helper()
	next := clone(o)
	next["data"] = data
	return expect(t, e.put(t, cmPath(ns, name(o)), next), http.StatusOK)
}

// clone deep-copies a decoded object.
func clone(o obj) obj {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	var out obj
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		panic(err)
	}
	return out
}

// namespace creates a fresh namespace for one case and deletes it when the
// case ends. The name is drawn here rather than with generateName, so that
// namespace objects look like the captured ones.
func (e *env) namespace(t testing.TB) string {
	t.Helper()
	for attempt := 0; ; attempt++ {
		ns := "kapi-conformance-" + randomSuffix()
		r := e.post(t, "/api/v1/namespaces", obj{"metadata": obj{"name": ns}})
		if r.Code == http.StatusConflict && attempt < 5 {
			continue
		}
		expect(t, r, http.StatusCreated)
		t.Cleanup(func() {
			r := e.del(t, "/api/v1/namespaces/"+ns, nil)
			if r.Code != http.StatusOK && r.Code != http.StatusNotFound && r.Code != http.StatusConflict {
				t.Errorf("deleting namespace %s:\n%s", ns, r)
			}
		})
		e.settle(t, ns)
		return ns
	}
}

// rootCAName is the ConfigMap kube-controller-manager publishes into every
// namespace.
const rootCAName = "kube-root-ca.crt"

// settle waits, on a cluster whose controllers publish kube-root-ca.crt into
// every namespace, for it to appear in ns, so that it cannot show up in the
// middle of a case's watch. Cases that list configmaps count it in with
// baseline.
func (e *env) settle(t testing.TB, ns string) {
	t.Helper()
	e.rootCAOnce.Do(func() {
		e.publishesRootCA = e.get(t, cmPath("kube-system", rootCAName)).Code == http.StatusOK
	})
	if !e.publishesRootCA {
		return
	}
	e.waitCollection(t, cmPath(ns)+q("fieldSelector", "metadata.name="+rootCAName), "the namespace's "+rootCAName, 30*time.Second,
		func(objs map[string]obj) bool { return len(objs) == 1 })
}

// baseline returns the configmaps a fresh namespace holds before a case
// writes anything (kube-root-ca.crt on most clusters and in-process, none
// where no controller publishes it), by name with their resourceVersions.
func (e *env) baseline(t testing.TB, ns string) map[string]string {
	t.Helper()
	return versions(items(t, expect(t, e.get(t, cmPath(ns)), http.StatusOK)))
}

// withBaseline returns m plus the baseline objects.
func withBaseline(m, base map[string]string) map[string]string {
	out := make(map[string]string, len(m)+len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// randomSuffix returns 8 characters of Kubernetes' generateName alphabet.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 8)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// ensureDefaultServiceAccount creates the "default" service account of ns if
// it is missing: a real cluster's ServiceAccount admission refuses pods
// without it, and its controller may not have made it yet.
func (e *env) ensureDefaultServiceAccount(t testing.TB, ns string) {
	t.Helper()
	r := e.post(t, "/api/v1/namespaces/"+ns+"/serviceaccounts", obj{"metadata": obj{"name": "default"}})
	if r.Code != http.StatusCreated && r.Code != http.StatusConflict {
		t.Fatalf("creating the default service account:\n%s", r)
	}
}

// pod builds a minimal valid Pod body.
func pod(name, nodeName string, labels map[string]string) obj {
	meta := obj{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	spec := obj{"containers": []any{obj{"name": "app", "image": "registry.k8s.io/pause:3.10"}}}
	if nodeName != "" {
		spec["nodeName"] = nodeName
	}
	return obj{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
}

// deployment builds a minimal valid Deployment body.
func deployment(name string, replicas int) obj {
	labels := obj{"app": name}
	return obj{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": obj{"name": name},
		"spec": obj{
			"replicas": replicas,
			"selector": obj{"matchLabels": labels},
			"template": obj{
				"metadata": obj{"labels": labels},
				"spec":     obj{"containers": []any{obj{"name": "app", "image": "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

// --- golden comparison ---

// loadGolden reads a capture of the reference release (golden.Load).
func loadGolden(t testing.TB, name string) *golden.Exchange {
	t.Helper()
	x, err := golden.Load(name)
	if err != nil {
		t.Fatalf("golden %s: %v", name, err)
	}
	return x
}

var (
	currentRV = regexp.MustCompile(`current: [0-9]+`)
	recordRV  = regexp.MustCompile(`in record \([0-9]+\)`)
)

// normalizeStatus blanks the parts of a Status that legitimately differ
// between servers and runs: continue tokens, uids, and resourceVersion values
// quoted in messages.
func normalizeStatus(st obj) {
	if c := str(st, "metadata", "continue"); c != "" {
		st["metadata"].(map[string]any)["continue"] = "<continue token>"
	}
	if u := str(st, "details", "uid"); u != "" {
		st["details"].(map[string]any)["uid"] = "<uid>"
	}
	if m, ok := st["message"].(string); ok {
		m = currentRV.ReplaceAllString(m, "current: <rv>")
		m = recordRV.ReplaceAllString(m, "in record (<rv>)")
		st["message"] = m
	}
}

// checkGoldenStatus compares a Status response with a golden capture: the
// code, the Content-Type, Retry-After, and the decoded body field by field
// (only continue tokens, uids and resourceVersions in messages may differ).
// repl holds old/new pairs applied to the golden body first, to substitute
// the case's namespace and names for the capture's.
func checkGoldenStatus(t testing.TB, got *response, name string, repl ...string) obj {
	t.Helper()
	return checkGoldenStatusWith(t, got, name, nil, repl...)
}

// checkGoldenStatusAnyOrder is checkGoldenStatus for errors whose causes a
// real server reports in no fixed order (kube-apiserver walks a Go map of
// schema properties): the causes, and the list in the message, are compared
// sorted.
func checkGoldenStatusAnyOrder(t testing.TB, got *response, name string, repl ...string) obj {
	t.Helper()
	return checkGoldenStatusWith(t, got, name, sortCauses, repl...)
}

// sortCauses sorts an Invalid Status's causes by field and message, and
// rewrites the "is invalid: [...]" list of its message in that order.
func sortCauses(st obj) {
	d, _ := st["details"].(map[string]any)
	causes, _ := d["causes"].([]any)
	key := func(c any) string {
		return str(c.(map[string]any), "field") + ": " + str(c.(map[string]any), "message")
	}
	slices.SortFunc(causes, func(a, b any) int { return strings.Compare(key(a), key(b)) })
	msg := str(st, "message")
	if i := strings.Index(msg, "is invalid: ["); i >= 0 && len(causes) > 1 {
		parts := make([]string, len(causes))
		for j, c := range causes {
			parts[j] = key(c)
		}
		st["message"] = msg[:i] + "is invalid: [" + strings.Join(parts, ", ") + "]"
	}
}

// checkGoldenStatusWith compares got with the capture of every release
// (golden.Releases; v1.32.2's normalized to v1.37.2). A release whose capture
// of the case is no expectation (golden.ErrNotCaptured, ErrNotComparable) or
// is no Status by the circumstances of its capture (golden.AsCaptured, case
// 100) is left out.
func checkGoldenStatusWith(t testing.TB, got *response, name string, normalize func(obj), repl ...string) obj {
	t.Helper()
	compared := 0
	for _, r := range golden.Releases {
		g, err := r.Load(name)
		if errors.Is(err, golden.ErrNotCaptured) || errors.Is(err, golden.ErrNotComparable) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if g.Status < 400 && golden.Differences[name].Use == golden.AsCaptured {
			continue
		}
		compared++
		compareGoldenStatus(t, got, r.Name+" "+name, g, normalize, repl...)
	}
	if compared == 0 {
		t.Fatalf("golden %s: no release captured a Status", name)
	}
	return decode(t, got.Body)
}

func compareGoldenStatus(t testing.TB, got *response, name string, g *golden.Exchange, normalize func(obj), repl ...string) {
	t.Helper()
	if got.Code != g.Status {
		t.Errorf("golden %s: want HTTP %d, got:\n%s", name, g.Status, got)
		return
	}
	if want, have := g.ResponseHeader["Content-Type"], got.Header.Get("Content-Type"); want != have {
		t.Errorf("golden %s: Content-Type %q, want %q", name, have, want)
	}
	if want, have := g.ResponseHeader["Retry-After"], got.Header.Get("Retry-After"); want != have {
		t.Errorf("golden %s: Retry-After %q, want %q", name, have, want)
	}
	wantBody := string(g.ResponseBody)
	for i := 0; i+1 < len(repl); i += 2 {
		wantBody = strings.ReplaceAll(wantBody, repl[i], repl[i+1])
	}
	want := decode(t, []byte(wantBody))
	have := decode(t, got.Body)
	normalizeStatus(want)
	normalizeStatus(have)
	if normalize != nil {
		normalize(want)
		normalize(have)
	}
	if !reflect.DeepEqual(want, have) {
		t.Errorf("golden %s: Status differs\n got: %s\nwant: %s", name, compact(have), compact(want))
	}
}

// checkStatus checks a Status response without a capture: code, reason, and
// that the message contains msg.
func checkStatus(t testing.TB, got *response, code int, reason, msg string) obj {
	t.Helper()
	if got.Code != code {
		t.Errorf("want HTTP %d %s, got:\n%s", code, reason, got)
		return nil
	}
	st := decode(t, got.Body)
	if str(st, "kind") != "Status" || str(st, "apiVersion") != "v1" {
		t.Errorf("not a v1 Status: %s", got.Body)
	}
	if c, _ := num(st, "code"); int(c) != code {
		t.Errorf("Status code %d, want %d", c, code)
	}
	if str(st, "status") != "Failure" {
		t.Errorf("Status status %q, want Failure", str(st, "status"))
	}
	if r := str(st, "reason"); r != reason {
		t.Errorf("Status reason %q, want %q (message %q)", r, reason, str(st, "message"))
	}
	if m := str(st, "message"); !strings.Contains(m, msg) {
		t.Errorf("Status message %q does not contain %q", m, msg)
	}
	return st
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// metadataKeys returns the keys of an object's metadata, without
// managedFields (server-side apply bookkeeping, covered by no case here).
func metadataKeys(o obj) []string {
	m, _ := o["metadata"].(map[string]any)
	var keys []string
	for k := range m {
		if k != "managedFields" {
			keys = append(keys, k)
		}
	}
	sortStrings(keys)
	return keys
}

func sortStrings(s []string) { slices.Sort(s) }

// goldenObject decodes the object body of a capture.
func goldenObject(t testing.TB, name string) obj {
	t.Helper()
	return decode(t, loadGolden(t, name).ResponseBody)
}

// checkMetadataLike checks that o's metadata has the same fields as the
// golden object's (values may differ), in the capture of every release.
func checkMetadataLike(t testing.TB, o obj, goldenName string) {
	t.Helper()
	for _, r := range golden.Releases {
		g, err := r.Load(goldenName)
		if errors.Is(err, golden.ErrNotCaptured) || errors.Is(err, golden.ErrNotComparable) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want := metadataKeys(decode(t, g.ResponseBody))
		if have := metadataKeys(o); !reflect.DeepEqual(have, want) {
			t.Errorf("golden %s %s: metadata fields %v, want %v", r.Name, goldenName, have, want)
		}
	}
}

// --- watch ---

// event is one decoded watch event.
type event struct {
	Type   string
	Object obj
	// TypeMeta is the envelope's, for protobuf watches (whose objects are
	// decoded as ConfigMaps by protoConfigMap).
	TypeMeta typeMeta
}

type typeMeta struct{ Kind, APIVersion string }

func (ev event) String() string {
	return fmt.Sprintf("%s %s rv=%s", ev.Type, name(ev.Object), rv(ev.Object))
}

// watchStream reads a JSON watch response in a goroutine it owns.
type watchStream struct {
	t       testing.TB
	e       *env
	path    string
	resp    *http.Response
	cancel  context.CancelFunc
	events  chan event
	done    chan struct{}
	stopped sync.Once
	err     error // why the stream ended; read after events is closed
}

// watch opens a watch (path must carry the watch parameters) and checks the
// response head. The stream is closed when the test ends.
func (e *env) watch(t testing.TB, path string, header ...string) *watchStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := e.newRequest(ctx, http.MethodGet, path, nil, header...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("watch %s: HTTP %d: %s", path, resp.StatusCode, b)
	}
	w := &watchStream{t: t, e: e, path: path, resp: resp, cancel: cancel, events: make(chan event), done: make(chan struct{})}
	t.Cleanup(w.close)
	if ct := resp.Header.Get("Content-Type"); isProtobuf(ct) {
		go w.readProtobuf()
		return w
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("watch %s: Content-Type %q, want application/json", path, ct)
	}
	go w.read()
	return w
}

func (w *watchStream) deliver(ev event) bool {
	select {
	case w.events <- ev:
		return true
	case <-w.done:
		w.err = errors.New("closed")
		return false
	}
}

func (w *watchStream) read() {
	defer close(w.events)
	d := json.NewDecoder(w.resp.Body)
	d.UseNumber()
	for {
		var raw struct {
			Type   string `json:"type"`
			Object obj    `json:"object"`
		}
		if err := d.Decode(&raw); err != nil {
			w.err = err
			return
		}
		if !w.deliver(event{Type: raw.Type, Object: raw.Object}) {
			return
		}
	}
}

// readProtobuf reads protobuf watch frames of ConfigMaps or
// PartialObjectMetadata.
func (w *watchStream) readProtobuf() {
	defer close(w.events)
	d := codec.NewProtobufWatchDecoder(w.resp.Body)
	for {
		typ, env, err := d.Next()
		if err != nil {
			w.err = err
			return
		}
		u, err := codec.DecodeEnvelope(env)
		if err != nil {
			w.err = err
			return
		}
		ev := event{Type: typ, TypeMeta: typeMeta{Kind: u.TypeMeta.Kind, APIVersion: u.TypeMeta.APIVersion}}
		switch u.TypeMeta.Kind {
		case "ConfigMap":
			ev.Object, err = protoConfigMap(u.Raw)
		case "PartialObjectMetadata":
			ev.Object, err = protoPartialObjectMetadata(u.Raw)
		}
		if err != nil {
			w.err = err
			return
		}
		if !w.deliver(ev) {
			return
		}
	}
}

// close ends the stream and waits for its reader.
func (w *watchStream) close() {
	w.stopped.Do(func() {
		close(w.done)
		w.cancel()
		w.resp.Body.Close()
		for range w.events { //nolint:revive // drain until the reader is gone
		}
	})
}

// next returns the next event, failing the test if the stream ends or
// nothing comes within d.
func (w *watchStream) next(t testing.TB, d time.Duration) event {
	t.Helper()
	ev, ok := w.nextOrEnd(t, d)
	if !ok {
		t.Fatalf("watch %s ended (%v) while an event was expected", w.path, w.err)
	}
	return ev
}

// nextOrEnd returns the next event, or false when the stream ended. It fails
// the test if neither happens within d.
func (w *watchStream) nextOrEnd(t testing.TB, d time.Duration) (event, bool) {
	t.Helper()
	timer := time.NewTimer(w.e.within(d))
	defer timer.Stop()
	select {
	case ev, ok := <-w.events:
		return ev, ok
	case <-timer.C:
		t.Fatalf("watch %s: nothing within %v", w.path, w.e.within(d))
		return event{}, false
	}
}

// nextChange returns the next event that is not a BOOKMARK.
func (w *watchStream) nextChange(t testing.TB, d time.Duration) event {
	t.Helper()
	for {
		ev := w.next(t, d)
		if ev.Type != "BOOKMARK" {
			return ev
		}
	}
}

// --- waiting ---

// waitCollection waits until cond holds for the objects of a collection
// (path may carry selectors): it lists, then follows a watch from the list's
// resourceVersion, applying events to its copy and checking cond after each.
// It never sleeps; it fails the test after d (scaled by the target's patience).
func (e *env) waitCollection(t testing.TB, path, what string, d time.Duration, cond func(objs map[string]obj) bool) {
	t.Helper()
	if ok, last := e.awaitCollection(t, path, what, d, cond); !ok {
		t.Fatalf("timed out waiting for %s (%s); last state: %v", what, path, last)
	}
}

// awaitCollection is waitCollection that reports a timeout (false, with the
// last keys seen) instead of failing the test.
func (e *env) awaitCollection(t testing.TB, path, what string, d time.Duration, cond func(objs map[string]obj) bool) (bool, []string) {
	t.Helper()
	deadline := time.Now().Add(e.within(d))
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for {
		list := expect(t, e.get(t, path), http.StatusOK)
		objs := map[string]obj{}
		for _, it := range items(t, list) {
			objs[str(it, "metadata", "namespace")+"/"+name(it)] = it
		}
		if cond(objs) {
			return true, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, keys(objs)
		}
		secs := int(left/time.Second) + 1
		w := e.watch(t, path+sep+"watch=1&resourceVersion="+rv(list)+"&timeoutSeconds="+strconv.Itoa(secs))
		for {
			ev, ok := w.nextOrEnd(t, left+5*time.Second)
			if !ok {
				break // timed out on the server side, or closed: list again
			}
			key := str(ev.Object, "metadata", "namespace") + "/" + name(ev.Object)
			switch ev.Type {
			case "ADDED", "MODIFIED":
				objs[key] = ev.Object
			case "DELETED":
				delete(objs, key)
			case "ERROR":
				t.Logf("waiting for %s: watch error %v; listing again", what, ev.Object)
			}
			if ev.Type == "ERROR" {
				break
			}
			if cond(objs) {
				w.close()
				return true, nil
			}
		}
		w.close()
		if time.Now().After(deadline) {
			return false, keys(objs)
		}
	}
}

func keys(m map[string]obj) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// removeFinalizers clears the finalizers of a ConfigMap (retrying on
// conflicts), so that a case leaves nothing that would hold up the deletion
// of its namespace. A missing object is fine.
func (e *env) removeFinalizers(t testing.TB, ns, name string) {
	t.Helper()
	e.modify(t, cmPath(ns, name), true, func(o obj) { delete(o["metadata"].(map[string]any), "finalizers") })
}

// modify reads the object at path, changes it with fn and writes it back,
// again on a conflict (a real cluster's controllers may write meanwhile). It
// returns the stored object, or nil if the object is missing and
// missingOK.
func (e *env) modify(t testing.TB, path string, missingOK bool, fn func(obj)) obj {
	t.Helper()
	for attempt := 0; ; attempt++ {
		r := e.get(t, path)
		if r.Code == http.StatusNotFound && missingOK {
			return nil
		}
		cur := expect(t, r, http.StatusOK)
		fn(cur)
		r = e.put(t, path, cur)
		switch {
		case r.Code == http.StatusOK:
			return decode(t, r.Body)
		case r.Code == http.StatusConflict && attempt < 20:
			continue
		case r.Code == http.StatusNotFound && missingOK:
			return nil
		}
		t.Fatalf("updating %s:\n%s", path, r)
	}
}

// asList returns the objects of a decoded JSON array (nil if v is not one).
func asList(v any) []obj {
	raw, _ := v.([]any)
	out := make([]obj, 0, len(raw))
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
