package apiserver

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/api/unstructured"
)

func conversionInput() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "g.example.com/v1", "kind": "Gear",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "generation": int64(3), "uid": "u1"},
		"spec":     map[string]any{"size": int64(1)},
	}}
}

func conversionAnswer(uid, status, message string, objects ...string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","response":{"uid":%q,"result":{"status":%q,"message":%q},"convertedObjects":[%s]}}`,
		uid, status, message, strings.Join(objects, ","))
}

// TestParseConversionResponse checks each rule a webhook's answer must
// follow, with kube-apiserver v1.37.2's words (the conformance case
// TestConversionWebhook compares the captured ones end to end).
func TestParseConversionResponse(t *testing.T) {
	const good = `{"apiVersion":"g.example.com/v2","kind":"Gear","metadata":{"name":"a","namespace":"ns","generation":42,"labels":{"l":"x"},"annotations":{"a":"y"},"finalizers":["f"]},"spec":{"replicas":1}}`
	for _, c := range []struct {
		name, body string
		wantErr    string
		partOfWhat bool // a *conversionError (after "conversion webhook for ...")
	}{
		{name: "ok", body: string(conversionAnswer("uid", "Success", "", good))},
		{name: "no response", body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, wantErr: "no response provided"},
		{name: "not JSON", body: `{`, wantErr: "unexpected"},
		{name: "uid", body: string(conversionAnswer("other", "Success", "", good)), wantErr: `expected response.uid="uid", got "other"`},
		{name: "failure", body: string(conversionAnswer("uid", "Failure", "nope", good)), wantErr: "nope"},
		{name: "count", body: string(conversionAnswer("uid", "Success", "", good, good)), wantErr: "returned 2 objects, expected 1", partOfWhat: true},
		{name: "none", body: string(conversionAnswer("uid", "Success", "")), wantErr: "returned 0 objects, expected 1", partOfWhat: true},
		{name: "apiVersion", body: string(conversionAnswer("uid", "Success", "", strings.Replace(good, "g.example.com/v2", "g.example.com/v1", 1))),
			wantErr: "returned invalid object at index 0: invalid groupVersion (expected g.example.com/v2, received g.example.com/v1)", partOfWhat: true},
		{name: "name", body: string(conversionAnswer("uid", "Success", "", strings.Replace(good, `"name":"a"`, `"name":"b"`, 1))),
			wantErr: "returned invalid object: must have the same name: a != b", partOfWhat: true},
		{name: "namespace", body: string(conversionAnswer("uid", "Success", "", strings.Replace(good, `"namespace":"ns"`, `"namespace":"other"`, 1))),
			wantErr: "returned invalid object: must have the same namespace: ns != other", partOfWhat: true},
		{name: "kind", body: string(conversionAnswer("uid", "Success", "", strings.Replace(good, `"kind":"Gear"`, `"kind":"Cog"`, 1))),
			wantErr: "returned invalid object: must have the same kind: Gear != Cog", partOfWhat: true},
		{name: "not an object", body: string(conversionAnswer("uid", "Success", "", `[1]`)), wantErr: "returned invalid object at index 0", partOfWhat: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := parseConversionResponse([]byte(c.body), "uid", "g.example.com/v2", []*unstructured.Unstructured{conversionInput()})
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				md := out[0].Object["metadata"].(map[string]any)
				if md["generation"] != int64(3) || md["uid"] != "u1" || md["finalizers"] != nil {
					t.Errorf("metadata not the original's: %v", md)
				}
				if out[0].GetLabels()["l"] != "x" || out[0].GetAnnotations()["a"] != "y" {
					t.Errorf("labels or annotations of the webhook lost: %v", md)
				}
				if r, _, _ := unstructured.NestedInt64(out[0].Object, "spec", "replicas"); r != 1 {
					t.Errorf("spec %v", out[0].Object["spec"])
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			var ce *conversionError
			if errors.As(err, &ce) != c.partOfWhat {
				t.Errorf("error %T: a conversionError is %v, want %v", err, !c.partOfWhat, c.partOfWhat)
			}
		})
	}
}

// FuzzConversionResponse: no answer of a webhook panics the server; an
// accepted one holds one object of the desired version and identity.
func FuzzConversionResponse(f *testing.F) {
	f.Add(conversionAnswer("uid", "Success", "", `{"apiVersion":"g.example.com/v2","kind":"Gear","metadata":{"name":"a","namespace":"ns"}}`))
	f.Add(conversionAnswer("uid", "Success", "", `{"apiVersion":"g.example.com/v2","kind":"Gear","metadata":null}`))
	f.Add(conversionAnswer("uid", "Success", "", `{"apiVersion":"g.example.com/v2","kind":"Gear","metadata":{"labels":{"a":1}}}`))
	f.Add(conversionAnswer("uid", "Failure", "x"))
	f.Add([]byte(`{"response":{"uid":"uid","result":{"status":"Success"},"convertedObjects":[null,{},"x"]}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := parseConversionResponse(body, "uid", "g.example.com/v2", []*unstructured.Unstructured{conversionInput()})
		if err != nil {
			return
		}
		if len(out) != 1 || out[0].GetAPIVersion() != "g.example.com/v2" || out[0].GetName() != "a" || out[0].GetNamespace() != "ns" {
			t.Fatalf("accepted %v", out)
		}
	})
}

// testConversionHook is a conversion webhook that only sets apiVersion,
// failing while failing is set; calls counts its reviews, conns the
// connections made to it.
func testConversionHook(t *testing.T, failing *atomic.Bool, calls *atomic.Int32) (hook *httptest.Server, conns *atomic.Int32) {
	conns = new(atomic.Int32)
	hook = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var review struct {
			Request struct {
				UID               string            `json:"uid"`
				DesiredAPIVersion string            `json:"desiredAPIVersion"`
				Objects           []json.RawMessage `json:"objects"`
			} `json:"request"`
		}
		_ = json.NewDecoder(r.Body).Decode(&review)
		var objs []string
		for _, o := range review.Request.Objects {
			var m map[string]any
			_ = json.Unmarshal(o, &m)
			m["apiVersion"] = review.Request.DesiredAPIVersion
			b, _ := json.Marshal(m)
			objs = append(objs, string(b))
		}
		status := "Success"
		if failing.Load() {
			status = "Failure"
		}
		_, _ = w.Write(conversionAnswer(review.Request.UID, status, "down for maintenance", objs...))
	}))
	hook.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	hook.StartTLS()
	t.Cleanup(hook.Close)
	return hook, conns
}

// testGearCRD is a CRD of gears (v1 stored, v2) converted by hook.
func testGearCRD(hook *httptest.Server) string {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})
	caJSON, _ := json.Marshal(ca)
	return fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gears.test.kapi.dev"},
	  "spec":{"group":"test.kapi.dev","scope":"Namespaced","names":{"plural":"gears","kind":"Gear"},
	  "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
	              {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}],
	  "conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":%q,"caBundle":%s}}}}}`, hook.URL, caJSON)
}

// TestConversionWebhookChange: a CRD whose webhook changes converts
// through the new one at once.
func TestConversionWebhookChange(t *testing.T) {
	var failing atomic.Bool
	var first, second atomic.Int32
	hook1, conns1 := testConversionHook(t, &failing, &first)
	hook2, _ := testConversionHook(t, &failing, &second)
	_, hs := newCRDTestServer(t)
	do := func(method, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPatch {
			req.Header.Set("Content-Type", "application/merge-patch+json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d", method, path, resp.StatusCode, want)
		}
	}
	do(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", testGearCRD(hook1), http.StatusCreated)
	do(http.MethodPost, "/apis/test.kapi.dev/v1/namespaces/default/gears", `{"apiVersion":"test.kapi.dev/v1","kind":"Gear","metadata":{"name":"a"}}`, http.StatusCreated)
	do(http.MethodGet, "/apis/test.kapi.dev/v2/namespaces/default/gears/a", "", http.StatusOK)
	if first.Load() != 1 || second.Load() != 0 {
		t.Fatalf("reviews %d and %d, want 1 and 0", first.Load(), second.Load())
	}
	// Kept while the conversion is unchanged.
	do(http.MethodPatch, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gears.test.kapi.dev", `{"metadata":{"labels":{"a":"b"}}}`, http.StatusOK)
	do(http.MethodGet, "/apis/test.kapi.dev/v2/namespaces/default/gears/a", "", http.StatusOK)
	if first.Load() != 2 || conns1.Load() != 1 {
		t.Fatalf("reviews to the first webhook %d on %d connections, want 2 on 1", first.Load(), conns1.Load())
	}
	do(http.MethodPut, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gears.test.kapi.dev", withResourceVersion(t, hs.URL, testGearCRD(hook2)), http.StatusOK)
	do(http.MethodGet, "/apis/test.kapi.dev/v2/namespaces/default/gears/a", "", http.StatusOK)
	if first.Load() != 2 || second.Load() != 1 {
		t.Fatalf("after the change, reviews %d and %d, want 2 and 1", first.Load(), second.Load())
	}
}

// withResourceVersion is crd with the stored CRD's resourceVersion.
func withResourceVersion(t *testing.T, base, crd string) string {
	t.Helper()
	resp, err := http.Get(base + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gears.test.kapi.dev")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var cur struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&cur)
	return strings.Replace(crd, `"metadata":{"name":"gears.test.kapi.dev"}`,
		fmt.Sprintf(`"metadata":{"name":"gears.test.kapi.dev","resourceVersion":%q}`, cur.Metadata.ResourceVersion), 1)
}

// TestConversionWatchFailure: a watch whose event cannot be converted ends
// with an ERROR event carrying the Status a read would get.
func TestConversionWatchFailure(t *testing.T) {
	var failing atomic.Bool
	var calls atomic.Int32
	hook, _ := testConversionHook(t, &failing, &calls)
	_, hs := newCRDTestServer(t)
	crd := testGearCRD(hook)
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(hs.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}
	post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
	resp, err := http.Get(hs.URL + "/apis/test.kapi.dev/v2/namespaces/default/gears?watch=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("watch ended")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return ""
	}
	post("/apis/test.kapi.dev/v1/namespaces/default/gears", `{"apiVersion":"test.kapi.dev/v1","kind":"Gear","metadata":{"name":"a"}}`)
	if l := next(); !strings.Contains(l, `"type":"ADDED"`) || !strings.Contains(l, `"apiVersion":"test.kapi.dev/v2"`) {
		t.Fatalf("first event %s", l)
	}
	failing.Store(true)
	post("/apis/test.kapi.dev/v1/namespaces/default/gears", `{"apiVersion":"test.kapi.dev/v1","kind":"Gear","metadata":{"name":"b"}}`)
	l := next()
	if !strings.Contains(l, `"type":"ERROR"`) || !strings.Contains(l, `"code":500`) ||
		!strings.Contains(l, "conversion webhook for test.kapi.dev/v1, Kind=Gear failed: down for maintenance") {
		t.Fatalf("event after a failed conversion %s", l)
	}
	select {
	case l, ok := <-lines:
		if ok {
			t.Fatalf("watch goes on after the ERROR event: %s", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch not ended after the ERROR event")
	}
}
