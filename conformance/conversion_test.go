package conformance

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// conversionHook is a CRD conversion webhook served over HTTPS on
// 127.0.0.1 by the test (httptest's self-signed certificate is its own CA):
// v1's spec.size is v2's spec.replicas. mode says how it answers.
type conversionHook struct {
	srv  *httptest.Server
	mode atomic.Value // string: "", "fail", "count", "meta", "apiVersion"

	mu      sync.Mutex
	reviews []obj // the requests received
}

func newConversionHook(t *testing.T) *conversionHook {
	h := &conversionHook{}
	h.mode.Store("")
	h.srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *conversionHook) caBundle() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
}

func (h *conversionHook) requests() []obj {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]obj(nil), h.reviews...)
}

func (h *conversionHook) serve(w http.ResponseWriter, r *http.Request) {
	var review obj
	d := json.NewDecoder(r.Body)
	d.UseNumber()
	if err := d.Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.reviews = append(h.reviews, review)
	h.mu.Unlock()
	req, _ := review["request"].(obj)
	want, _ := req["desiredAPIVersion"].(string)
	objects, _ := req["objects"].([]any)
	mode := h.mode.Load().(string)
	var out []any
	for _, o := range objects {
		m := o.(obj)
		spec, _ := m["spec"].(obj)
		if spec == nil {
			spec = obj{}
		}
		switch {
		case strings.HasSuffix(want, "/v2"):
			if v, ok := spec["size"]; ok {
				spec["replicas"] = v
				delete(spec, "size")
			}
		case strings.HasSuffix(want, "/v1"):
			if v, ok := spec["replicas"]; ok {
				spec["size"] = v
				delete(spec, "replicas")
			}
		}
		m["spec"] = spec
		m["apiVersion"] = want
		switch mode {
		case "meta":
			m["metadata"].(obj)["name"] = "renamed"
		case "apiVersion":
			m["apiVersion"] = "wrong.example.com/v9"
		case "labels":
			md := m["metadata"].(obj)
			md["labels"] = obj{"converted": "yes"}
			md["generation"] = 42
			md["finalizers"] = []any{"example.com/f"}
		}
		out = append(out, m)
	}
	result := obj{"status": "Success"}
	switch mode {
	case "fail":
		result = obj{"status": "Failure", "message": "the hook says no"}
		out = nil
	case "count":
		out = append(out, out...)
	case "uid":
		req["uid"] = "not-the-uid"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(obj{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
		"response": obj{"uid": req["uid"], "result": result, "convertedObjects": out}})
}

// gearCRD is a CRD of gears served as v1 (spec.size) and v2
// (spec.replicas), stored as v1, converted by the webhook at url.
func gearCRD(group, url string, caBundle []byte) obj {
	schema := func(field string) obj {
		return obj{"openAPIV3Schema": obj{"type": "object", "properties": obj{
			"spec": obj{"type": "object", "properties": obj{field: obj{"type": "integer"}, "color": obj{"type": "string"}}},
		}}}
	}
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": "gears." + group},
		"spec": obj{
			"group": group, "scope": "Namespaced",
			"names": obj{"plural": "gears", "singular": "gear", "kind": "Gear", "listKind": "GearList"},
			"versions": []any{
				obj{"name": "v1", "served": true, "storage": true, "schema": schema("size")},
				obj{"name": "v2", "served": true, "storage": false, "schema": schema("replicas")},
			},
			"conversion": obj{"strategy": "Webhook", "webhook": obj{
				"conversionReviewVersions": []any{"v1", "v1beta1"},
				"clientConfig":             obj{"url": url, "caBundle": caBundle},
			}},
		},
	}
}

func gearPath(group, version, ns string, name ...string) string {
	p := fmt.Sprintf("/apis/%s/%s/namespaces/%s/gears", group, version, ns)
	if len(name) > 0 {
		p += "/" + name[0]
	}
	return p
}

func gear(group, version, name string, spec obj) obj {
	return obj{"apiVersion": group + "/" + version, "kind": "Gear", "metadata": obj{"name": name}, "spec": spec}
}

func specNum(t *testing.T, o obj, field string) int64 {
	t.Helper()
	n, ok := num(o, "spec", field)
	if !ok {
		t.Fatalf("spec.%s missing in %s", field, compact(o))
	}
	return n
}

// TestConversionWebhook checks CRD conversion through a webhook
// (apiextensions.k8s.io/v1 ConversionReview) as kube-apiserver v1.37.2
// does it: reads, lists, watches and writes in the version that is not
// stored, the reviews sent, the errors of a webhook that answers wrongly
// or not at all, and a change of storage version.
func TestConversionWebhook(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	hook := newConversionHook(t)
	group := "conv" + randomSuffix() + ".conformance.kapi.dev"
	crd := gearCRD(group, hook.srv.URL+"/convert", hook.caBundle())
	e.createCRDObject(t, crd)
	e.waitCondition(t, "gears v2 to be served", func() bool { return e.get(t, gearPath(group, "v2", ns)).Code == http.StatusOK })

	// Created in v1 (stored as is), read in v2 through the webhook.
	expect(t, e.post(t, gearPath(group, "v1", ns), gear(group, "v1", "a", obj{"size": 3})), http.StatusCreated)
	got := expect(t, e.get(t, gearPath(group, "v2", ns, "a")), http.StatusOK)
	if str(got, "apiVersion") != group+"/v2" || specNum(t, got, "replicas") != 3 || has(got, "spec", "size") {
		t.Errorf("v1 object read in v2: %s", compact(got))
	}
	reviews := hook.requests()
	if len(reviews) == 0 {
		t.Fatal("no ConversionReview received")
	}
	last := reviews[len(reviews)-1]
	if str(last, "apiVersion") != "apiextensions.k8s.io/v1" || str(last, "kind") != "ConversionReview" ||
		str(last, "request", "desiredAPIVersion") != group+"/v2" || str(last, "request", "uid") == "" {
		t.Errorf("review %s", compact(last))
	}

	// Created in v2: stored as v1, answered in v2, read in v1.
	created := expect(t, e.post(t, gearPath(group, "v2", ns), gear(group, "v2", "b", obj{"replicas": 5})), http.StatusCreated)
	if str(created, "apiVersion") != group+"/v2" || specNum(t, created, "replicas") != 5 {
		t.Errorf("create in v2 answered %s", compact(created))
	}
	got = expect(t, e.get(t, gearPath(group, "v1", ns, "b")), http.StatusOK)
	if str(got, "apiVersion") != group+"/v1" || specNum(t, got, "size") != 5 {
		t.Errorf("v2 object read in v1: %s", compact(got))
	}

	// A list in v2 converts every item.
	list := expect(t, e.get(t, gearPath(group, "v2", ns)), http.StatusOK)
	for _, it := range items(t, list) {
		if str(it, "apiVersion") != group+"/v2" || !has(it, "spec", "replicas") || has(it, "spec", "size") {
			t.Errorf("list item in v2: %s", compact(it))
		}
	}
	if n := len(items(t, list)); n != 2 {
		t.Errorf("%d items, want 2", n)
	}

	// A watch in v2 sees v1 writes converted.
	w := e.watch(t, gearPath(group, "v2", ns)+q("watch", "1", "resourceVersion", rv(list)))
	expect(t, e.post(t, gearPath(group, "v1", ns), gear(group, "v1", "c", obj{"size": 7})), http.StatusCreated)
	ev := w.nextChange(t, 10*time.Second)
	if ev.Type != "ADDED" || str(ev.Object, "apiVersion") != group+"/v2" || specNum(t, ev.Object, "replicas") != 7 {
		t.Errorf("watch event %s %s", ev.Type, compact(ev.Object))
	}
	w.close()

	// An update through v2 lands in v1 storage.
	cur := expect(t, e.get(t, gearPath(group, "v2", ns, "a")), http.StatusOK)
	cur["spec"] = obj{"replicas": 4, "color": "red"}
	upd := expect(t, e.put(t, gearPath(group, "v2", ns, "a"), cur), http.StatusOK)
	if str(upd, "apiVersion") != group+"/v2" || specNum(t, upd, "replicas") != 4 {
		t.Errorf("update in v2 answered %s", compact(upd))
	}
	got = expect(t, e.get(t, gearPath(group, "v1", ns, "a")), http.StatusOK)
	if specNum(t, got, "size") != 4 || str(got, "spec", "color") != "red" {
		t.Errorf("after update in v2, v1 reads %s", compact(got))
	}
	// A merge patch through v2 too.
	got = expect(t, e.patch(t, gearPath(group, "v2", ns, "a"), mergePatch, `{"spec":{"replicas":6}}`), http.StatusOK)
	if specNum(t, got, "replicas") != 6 {
		t.Errorf("patch in v2 answered %s", compact(got))
	}

	// Reads in the stored version never call the webhook.
	before := len(hook.requests())
	expect(t, e.get(t, gearPath(group, "v1", ns, "a")), http.StatusOK)
	if n := len(hook.requests()); n != before {
		t.Errorf("a read in the storage version sent %d reviews", n-before)
	}

	// Wrong answers.
	for _, c := range []struct{ mode, golden string }{
		{"fail", "conversion-fail"},
		{"count", "conversion-count"},
		{"meta", "conversion-meta"},
		{"apiVersion", "conversion-apiversion"},
		{"uid", "conversion-uid"},
		{"labels", "conversion-labels"},
	} {
		hook.mode.Store(c.mode)
		r := e.get(t, gearPath(group, "v2", ns, "a"))
		t.Logf("%s: %s", c.mode, r)
		r = e.post(t, gearPath(group, "v2", ns), gear(group, "v2", "x-"+strings.ToLower(c.mode), obj{"replicas": 1}))
		t.Logf("%s create: %s", c.mode, r)
		r = e.get(t, gearPath(group, "v2", ns))
		t.Logf("%s list: %s", c.mode, r)
	}
	hook.mode.Store("")

	bad := gearCRD("bad"+group, hook.srv.URL, hook.caBundle())
	bad["spec"].(obj)["conversion"].(obj)["webhook"].(obj)["conversionReviewVersions"] = []any{"v3", "v9"}
	t.Logf("bad versions: %s", e.post(t, crdPath, bad))
	bad["spec"].(obj)["conversion"].(obj)["webhook"].(obj)["conversionReviewVersions"] = []any{}
	t.Logf("no versions: %s", e.post(t, crdPath, bad))
	delete(bad["spec"].(obj)["conversion"].(obj)["webhook"].(obj), "clientConfig")
	t.Logf("no clientConfig: %s", e.post(t, crdPath, bad))
	// Webhook down.
	hook.srv.Close()
	r := e.get(t, gearPath(group, "v2", ns, "a"))
	t.Logf("down: %s", r)
}
