package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
)

// gadgetCRD is a CRD with two served versions (v1 stored), a status and a
// scale subresource, defaults and a nested schema.
const gadgetCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "gadgets.test.kapi.dev"},
  "spec": {
    "group": "test.kapi.dev", "scope": "Namespaced",
    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "shortNames": ["gd"], "categories": ["all"]},
    "versions": [
      {"name": "v1beta1", "served": true, "storage": false,
       "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
      {"name": "v1", "served": true, "storage": true,
       "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
       "additionalPrinterColumns": [{"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}],
       "schema": {"openAPIV3Schema": {"type": "object", "properties": {
         "spec": {"type": "object", "properties": {
           "replicas": {"type": "integer", "default": 1, "minimum": 0},
           "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
           "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}},
         "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}
    ]
  }
}`

var gadgets = client.GroupVersionResource{Group: "test.kapi.dev", Version: "v1", Resource: "gadgets"}

func newCRDTestServer(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	srv, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return srv, hs
}

func crdServe(t *testing.T, srv *Server, method, path, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec
}

func decodeMap(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	return m
}

// waitEstablished watches the CRD until its Established condition is True.
func waitEstablished(t *testing.T, ctx context.Context, c *client.Client, name string) {
	t.Helper()
	crds := client.For[apiextensionsv1.CustomResourceDefinition](c)
	w, err := crds.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Object == nil {
			continue
		}
		for _, cond := range ev.Object.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return
			}
		}
	}
	t.Fatalf("CRD %s never became Established: %v", name, ctx.Err())
}

// TestCRDDynamicClientAndInformer creates a CRD through the typed client,
// waits for Established, then uses the resource with client.Dynamic and a
// dynamic informer.
func TestCRDDynamicClientAndInformer(t *testing.T) {
	_, hs := newCRDTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(&client.Config{Host: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal([]byte(gadgetCRD), &crd); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[apiextensionsv1.CustomResourceDefinition](c).Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ctx, c, crd.Name)

	res := client.Dynamic(c).Resource(gadgets).Namespace("default")
	factory := informer.NewFactory(c, informer.FactoryConfig{})
	inf := factory.ForResource(gadgets)
	events := make(chan string, 16)
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[unstructured.Unstructured]{
		AddFunc: func(o *unstructured.Unstructured, _ bool) { events <- "add " + o.GetName() },
		UpdateFunc: func(_, o *unstructured.Unstructured) {
			r, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
			events <- "update " + o.GetName() + " " + string(rune('0'+r))
		},
		DeleteFunc: func(o *unstructured.Unstructured, _ bool) { events <- "delete " + o.GetName() },
	}); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = inf.Run(runCtx)
	}()
	defer func() {
		stop()
		<-done
	}()

	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.kapi.dev/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"},
		"spec":     map[string]any{"tags": []any{"a"}, "unknown": "dropped"},
	}}
	created, err := res.Create(ctx, g, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); r != 1 {
		t.Errorf("defaulted replicas = %d, want 1: %v", r, created.Object)
	}
	if m, _, _ := unstructured.NestedString(created.Object, "spec", "mode"); m != "slow" {
		t.Errorf("defaulted mode = %q", m)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(created.Object, "spec", "unknown"); found {
		t.Errorf("unknown field not pruned: %v", created.Object)
	}
	if created.GetGeneration() != 1 {
		t.Errorf("generation %d", created.GetGeneration())
	}
	expectEvent(t, ctx, events, "add g1")

	_ = unstructured.SetNestedField(created.Object, int64(3), "spec", "replicas")
	updated, err := res.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetGeneration() != 2 {
		t.Errorf("generation after a spec change = %d, want 2", updated.GetGeneration())
	}
	expectEvent(t, ctx, events, "update g1 3")

	// The status subresource changes the status only.
	_ = unstructured.SetNestedField(updated.Object, int64(3), "status", "replicas")
	_ = unstructured.SetNestedField(updated.Object, int64(9), "spec", "replicas")
	st, err := res.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(st.Object, "status", "replicas"); r != 3 {
		t.Errorf("status.replicas = %d", r)
	}
	if r, _, _ := unstructured.NestedInt64(st.Object, "spec", "replicas"); r != 3 {
		t.Errorf("a status update changed spec.replicas to %d", r)
	}
	expectEvent(t, ctx, events, "update g1 3")

	// Read in the other served version: the same object, apiVersion rewritten.
	beta, err := client.Dynamic(c).Resource(client.GroupVersionResource{Group: "test.kapi.dev", Version: "v1beta1", Resource: "gadgets"}).
		Namespace("default").Get(ctx, "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if beta.GetAPIVersion() != "test.kapi.dev/v1beta1" || beta.GetUID() != created.GetUID() {
		t.Errorf("v1beta1 read: %v", beta.Object)
	}

	// Invalid objects are refused with the schema's words.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.kapi.dev/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "bad"},
		"spec":     map[string]any{"replicas": "many", "mode": "medium"},
	}}
	_, err = res.Create(ctx, bad, metav1.CreateOptions{})
	if !client.IsInvalid(err) || !strings.Contains(err.Error(), `spec.replicas in body must be of type integer: "string"`) ||
		!strings.Contains(err.Error(), `spec.mode: Unsupported value: "medium"`) {
		t.Errorf("invalid create: %v", err)
	}

	if err := res.Delete(ctx, "g1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, ctx, events, "delete g1")
}

func expectEvent(t *testing.T, ctx context.Context, events <-chan string, want string) {
	t.Helper()
	select {
	case got := <-events:
		if got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	case <-ctx.Done():
		t.Fatalf("no event %q", want)
	}
}

// TestCRDLifecycle covers registration, discovery, status, protobuf
// negotiation, deletion with objects and finalizers, and name conflicts,
// through the HTTP handler.
func TestCRDLifecycle(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	rec := crdServe(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", rec.Code, rec.Body)
	}
	crd := decodeMap(t, crdServe(t, srv, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.kapi.dev", ""))
	status := crd["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	if len(conds) != 2 || conds[0].(map[string]any)["type"] != "NamesAccepted" || conds[1].(map[string]any)["status"] != "True" {
		t.Errorf("conditions %v", conds)
	}
	if an := status["acceptedNames"].(map[string]any); an["plural"] != "gadgets" || an["listKind"] != "GadgetList" {
		t.Errorf("acceptedNames %v", an)
	}
	if sv := status["storedVersions"].([]any); len(sv) != 1 || sv[0] != "v1" {
		t.Errorf("storedVersions %v", sv)
	}

	group := decodeMap(t, crdServe(t, srv, "GET", "/apis/test.kapi.dev", ""))
	if pv := group["preferredVersion"].(map[string]any); pv["version"] != "v1" || len(group["versions"].([]any)) != 2 {
		t.Errorf("group discovery %v", group)
	}
	found := false
	for _, g := range decodeMap(t, crdServe(t, srv, "GET", "/apis", ""))["groups"].([]any) {
		found = found || g.(map[string]any)["name"] == "test.kapi.dev"
	}
	if !found {
		t.Error("/apis does not list test.kapi.dev")
	}
	rl := decodeMap(t, crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1beta1", ""))
	if rs := rl["resources"].([]any); len(rs) != 1 || rs[0].(map[string]any)["storageVersionHash"] != storageVersionHash("test.kapi.dev", "v1", "Gadget") {
		t.Errorf("v1beta1 resources %v", rs)
	}

	// Create in v1beta1 (preserve-unknown-fields), read in v1 (pruned on
	// write only, so kept).
	rec = crdServe(t, srv, "POST", "/apis/test.kapi.dev/v1beta1/namespaces/default/gadgets",
		`{"apiVersion":"test.kapi.dev/v1beta1","kind":"Gadget","metadata":{"name":"g1","finalizers":["test.kapi.dev/hold"]},"spec":{"replicas":2,"extra":true}}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create gadget: %d %s", rec.Code, rec.Body)
	}
	if o := decodeMap(t, rec); o["apiVersion"] != "test.kapi.dev/v1beta1" {
		t.Errorf("create response apiVersion %v", o["apiVersion"])
	}
	o := decodeMap(t, crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/namespaces/default/gadgets/g1", ""))
	if o["apiVersion"] != "test.kapi.dev/v1" || o["spec"].(map[string]any)["extra"] != true {
		t.Errorf("v1 read %v", o)
	}
	list := decodeMap(t, crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/gadgets", ""))
	if list["kind"] != "GadgetList" || len(list["items"].([]any)) != 1 {
		t.Errorf("list %v", list)
	}

	// Protobuf: 406 alone, JSON when listed with it.
	if rec := crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/namespaces/default/gadgets/g1", "", "Accept", "application/vnd.kubernetes.protobuf"); rec.Code != http.StatusNotAcceptable {
		t.Errorf("protobuf only: %d", rec.Code)
	}
	if rec := crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/namespaces/default/gadgets/g1", "", "Accept", "application/vnd.kubernetes.protobuf, application/json"); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("protobuf or JSON: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec := crdServe(t, srv, "POST", "/apis/test.kapi.dev/v1/gadgets", `{"kind":"Gadget","metadata":{"name":"x"}}`); rec.Code != http.StatusNotFound {
		t.Errorf("cluster-scoped path of a namespaced resource: %d", rec.Code)
	}

	// A second CRD claiming the same kind in the group is not accepted.
	rec = crdServe(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", strings.NewReplacer(
		`"gadgets.test.kapi.dev"`, `"others.test.kapi.dev"`, `"plural": "gadgets"`, `"plural": "others"`,
		`"singular": "gadget"`, `"singular": "other"`, `["gd"]`, `["ot"]`).Replace(gadgetCRD))
	if rec.Code != http.StatusCreated {
		t.Fatalf("create conflicting CRD: %d %s", rec.Code, rec.Body)
	}
	other := decodeMap(t, crdServe(t, srv, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/others.test.kapi.dev", ""))
	oc := other["status"].(map[string]any)["conditions"].([]any)
	if oc[0].(map[string]any)["status"] != "False" || !strings.Contains(oc[0].(map[string]any)["message"].(string), `"Gadget" is already in use`) {
		t.Errorf("conflicting CRD conditions %v", oc)
	}
	if rec := crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/others", ""); rec.Code != http.StatusNotFound {
		t.Errorf("conflicting CRD served: %d", rec.Code)
	}
	crdServe(t, srv, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/others.test.kapi.dev", "")

	// Deleting the CRD: Terminating, creates refused, the object deleted once
	// its finalizer goes, then the CRD and its resource.
	rec = crdServe(t, srv, "DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.kapi.dev", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("delete CRD: %d %s", rec.Code, rec.Body)
	}
	crd = decodeMap(t, crdServe(t, srv, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.kapi.dev", ""))
	md := crd["metadata"].(map[string]any)
	if md["deletionTimestamp"] == nil || !strings.Contains(compactJSON(md["finalizers"]), crdCleanupFinalizer) ||
		!strings.Contains(compactJSON(crd["status"]), `"type":"Terminating"`) {
		t.Errorf("terminating CRD %v", crd)
	}
	rec = crdServe(t, srv, "POST", "/apis/test.kapi.dev/v1/namespaces/default/gadgets", `{"apiVersion":"test.kapi.dev/v1","kind":"Gadget","metadata":{"name":"g2"}}`)
	if want := `"gadgets.test.kapi.dev \"g2\" is forbidden: create not allowed while custom resource definition is terminating"`; rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("create while terminating: %d %s", rec.Code, rec.Body)
	}
	g := decodeMap(t, crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/namespaces/default/gadgets/g1", ""))
	if g["metadata"].(map[string]any)["deletionTimestamp"] == nil {
		t.Errorf("object not marked for deletion: %v", g)
	}
	g["metadata"].(map[string]any)["finalizers"] = nil
	b, _ := json.Marshal(g)
	if rec := crdServe(t, srv, "PUT", "/apis/test.kapi.dev/v1/namespaces/default/gadgets/g1", string(b)); rec.Code != http.StatusOK {
		t.Fatalf("removing the finalizer: %d %s", rec.Code, rec.Body)
	}
	waitFor(t, 10*time.Second, "the CRD to go", func() bool {
		return crdServe(t, srv, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.kapi.dev", "").Code == http.StatusNotFound
	}, srv)
	if rec := crdServe(t, srv, "GET", "/apis/test.kapi.dev/v1/gadgets", ""); rec.Code != http.StatusNotFound {
		t.Errorf("resource still served after its CRD went: %d", rec.Code)
	}
	if rec := crdServe(t, srv, "GET", "/apis/test.kapi.dev", ""); rec.Code != http.StatusNotFound {
		t.Errorf("group still discovered: %d", rec.Code)
	}
	if got := srv.crds.served(); len(got) != 0 {
		t.Errorf("still served: %v", got)
	}
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// waitFor waits, up to d, for cond to hold, checking it after every write to
// the server's store.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	w, err := srv.Storage().Watch(ctx, "/", storage.WatchOptions{ResourceVersion: srv.Storage().Revision()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-w.ResultChan():
		}
	}
}
