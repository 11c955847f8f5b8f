package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// gcWait waits, without sleeping, until cond holds: it checks after every
// write to the store, for up to 10 seconds.
func gcWait(t *testing.T, srv *Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		rev := srv.store.Revision()
		if cond() {
			return
		}
		w, err := srv.store.Watch(ctx, "/", storage.WatchOptions{ResourceVersion: rev})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		select {
		case <-w.ResultChan():
		case <-ctx.Done():
		}
		w.Stop()
		if ctx.Err() != nil {
			if cond() {
				return
			}
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// gcSettle waits until the collector has nothing left to do: it has seen
// every write, including its own.
func gcSettle(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		rev := srv.store.Revision()
		if err := srv.gc.waitIdle(ctx, rev); err != nil {
			t.Fatalf("garbage collector not idle: %v", err)
		}
		if srv.store.Revision() == rev {
			return
		}
	}
}

func mustServe(t *testing.T, srv *Server, method, path, body string, code int) map[string]any {
	t.Helper()
	got, m := serve(t, srv, method, path, body)
	if got != code {
		t.Fatalf("%s %s: %d, want %d: %v", method, path, got, code, m)
	}
	return m
}

func uidOf(m map[string]any) string { return m["metadata"].(map[string]any)["uid"].(string) }

func ownerRef(kind, name, uid string, block bool) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":%q,"name":%q,"uid":%q,"blockOwnerDeletion":%t}`, kind, name, uid, block)
}

// cmWithOwners creates a ConfigMap in namespace t with owner references
// (JSON objects) and finalizers.
func cmWithOwners(t *testing.T, srv *Server, name string, finalizers []string, refs ...string) map[string]any {
	t.Helper()
	fins, _ := json.Marshal(finalizers)
	body := fmt.Sprintf(`{"metadata":{"name":%q,"finalizers":%s%s}}`, name, fins, refsJSON(refs))
	return mustServe(t, srv, "POST", "/api/v1/namespaces/t/configmaps", body, http.StatusCreated)
}

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func refsJSON(refs []string) string {
	if len(refs) == 0 {
		return ""
	}
	s := `,"ownerReferences":[`
	for i, r := range refs {
		if i > 0 {
			s += ","
		}
		s += r
	}
	return s + "]"
}

func cmExists(srv *Server, name string) bool {
	_, err := srv.store.Get(context.Background(), "/core/configmaps/t/"+name, storage.ReadOptions{})
	return err == nil
}

func cmObject(t *testing.T, srv *Server, name string) storage.Object {
	t.Helper()
	o, err := srv.store.Get(context.Background(), "/core/configmaps/t/"+name, storage.ReadOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	return o
}

func refUIDs(o storage.Object) []string {
	var out []string
	for _, r := range o.GetOwnerReferences() {
		out = append(out, string(r.UID))
	}
	return out
}

// Background (the default): the owner goes at once; dependents whose owners
// are all gone follow; a dependent with another live owner only loses the
// reference.
func TestGCBackground(t *testing.T) {
	srv := newTestServer(t)
	owner := uidOf(cmWithOwners(t, srv, "owner", nil))
	other := uidOf(cmWithOwners(t, srv, "other", nil))
	cmWithOwners(t, srv, "d1", nil, ownerRef("ConfigMap", "owner", owner, false))
	cmWithOwners(t, srv, "d2", nil, ownerRef("ConfigMap", "owner", owner, true))
	cmWithOwners(t, srv, "shared", nil, ownerRef("ConfigMap", "owner", owner, false), ownerRef("ConfigMap", "other", other, false))
	cmWithOwners(t, srv, "grandchild", nil, ownerRef("ConfigMap", "d1", uidOf(mustServe(t, srv, "GET", "/api/v1/namespaces/t/configmaps/d1", "", 200)), false))

	st := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner", "", http.StatusOK)
	if st["kind"] != "Status" || st["status"] != "Success" {
		t.Fatalf("background delete answered %v", st)
	}
	gcWait(t, srv, "dependents collected", func() bool {
		return !cmExists(srv, "d1") && !cmExists(srv, "d2") && !cmExists(srv, "grandchild")
	})
	gcSettle(t, srv)
	if got := refUIDs(cmObject(t, srv, "shared")); !reflect.DeepEqual(got, []string{other}) {
		t.Errorf("shared dependent references %v, want only the live owner %s", got, other)
	}
	if !cmExists(srv, "other") {
		t.Errorf("an unrelated owner was deleted")
	}
}

// Foreground: the owner is kept, marked, with the foregroundDeletion
// finalizer, until its blocking dependents are gone (one held by its own
// finalizer), then it goes.
func TestGCForeground(t *testing.T) {
	srv := newTestServer(t)
	owner := uidOf(cmWithOwners(t, srv, "owner", nil))
	cmWithOwners(t, srv, "free", nil, ownerRef("ConfigMap", "owner", owner, false))
	cmWithOwners(t, srv, "held", []string{"example.com/hold"}, ownerRef("ConfigMap", "owner", owner, true))
	mid := uidOf(cmWithOwners(t, srv, "mid", nil, ownerRef("ConfigMap", "owner", owner, true)))
	cmWithOwners(t, srv, "leaf", nil, ownerRef("ConfigMap", "mid", mid, true))

	got := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner?propagationPolicy=Foreground", "", http.StatusOK)
	meta := got["metadata"].(map[string]any)
	if got["kind"] != "ConfigMap" || meta["deletionTimestamp"] == nil || !reflect.DeepEqual(meta["finalizers"], []any{"foregroundDeletion"}) {
		t.Fatalf("foreground delete answered %v", got)
	}
	gcWait(t, srv, "free, mid and leaf deleted, held marked", func() bool {
		return !cmExists(srv, "free") && !cmExists(srv, "mid") && !cmExists(srv, "leaf") &&
			cmExists(srv, "held") && cmObject(t, srv, "held").GetDeletionTimestamp() != nil
	})
	gcSettle(t, srv)
	if !cmExists(srv, "owner") {
		t.Fatal("the owner went while a blocking dependent remained")
	}
	held := mustServe(t, srv, "GET", "/api/v1/namespaces/t/configmaps/held", "", 200)
	delete(held["metadata"].(map[string]any), "finalizers")
	b, _ := jsonMarshal(held)
	mustServe(t, srv, "PUT", "/api/v1/namespaces/t/configmaps/held", b, http.StatusOK)
	gcWait(t, srv, "the owner deleted", func() bool { return !cmExists(srv, "owner") && !cmExists(srv, "held") })
}

// Orphan (and the deprecated orphanDependents=true): the owner goes, its
// dependents stay without their reference to it.
func TestGCOrphan(t *testing.T) {
	for _, query := range []string{"?propagationPolicy=Orphan", "?orphanDependents=true"} {
		t.Run(query, func(t *testing.T) {
			srv := newTestServer(t)
			owner := uidOf(cmWithOwners(t, srv, "owner", nil))
			other := uidOf(cmWithOwners(t, srv, "other", nil))
			cmWithOwners(t, srv, "d1", nil, ownerRef("ConfigMap", "owner", owner, true))
			cmWithOwners(t, srv, "d2", nil, ownerRef("ConfigMap", "owner", owner, false), ownerRef("ConfigMap", "other", other, false))
			got := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner"+query, "", http.StatusOK)
			if fins := got["metadata"].(map[string]any)["finalizers"]; !reflect.DeepEqual(fins, []any{"orphan"}) {
				t.Fatalf("orphan delete answered %v", got)
			}
			gcWait(t, srv, "owner deleted", func() bool { return !cmExists(srv, "owner") })
			gcSettle(t, srv)
			if refs := refUIDs(cmObject(t, srv, "d1")); len(refs) != 0 {
				t.Errorf("d1 still references %v", refs)
			}
			if refs := refUIDs(cmObject(t, srv, "d2")); !reflect.DeepEqual(refs, []string{other}) {
				t.Errorf("d2 references %v, want [%s]", refs, other)
			}
		})
	}
}

// orphanDependents=false on an object kept by a finalizer is 202 Accepted.
func TestDeleteOrphanDependentsFalseAccepted(t *testing.T) {
	srv := newTestServer(t)
	cmWithOwners(t, srv, "fin", []string{"example.com/hold"})
	got := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/fin?orphanDependents=false", "", http.StatusAccepted)
	if got["kind"] != "ConfigMap" {
		t.Errorf("answered %v", got)
	}
}

// Dangling references: a dependent created with a reference to a missing
// owner is collected; one naming a kind the server does not serve, or a
// cluster-scoped dependent naming a namespaced kind, is left alone.
func TestGCDangling(t *testing.T) {
	srv := newTestServer(t)
	cmWithOwners(t, srv, "orphaned", nil, ownerRef("ConfigMap", "gone", "00000000-0000-0000-0000-000000000001", false))
	cmWithOwners(t, srv, "unknown-kind", nil, `{"apiVersion":"example.com/v1","kind":"Widget","name":"w","uid":"00000000-0000-0000-0000-000000000002"}`)
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"cluster-dep","ownerReferences":[`+
		ownerRef("ConfigMap", "gone", "00000000-0000-0000-0000-000000000003", false)+`]}}`, http.StatusCreated)
	gcWait(t, srv, "the dangling dependent collected", func() bool { return !cmExists(srv, "orphaned") })
	gcSettle(t, srv)
	if !cmExists(srv, "unknown-kind") {
		t.Error("a dependent of a kind the server does not serve was collected")
	}
	if _, err := srv.store.Get(context.Background(), "/core/namespaces/cluster-dep", storage.ReadOptions{}); err != nil {
		t.Errorf("a cluster-scoped dependent of a namespaced kind was collected: %v", err)
	}
}

// A dry-run delete changes nothing and answers what would happen.
func TestDeleteDryRunPropagation(t *testing.T) {
	srv := newTestServer(t)
	owner := cmWithOwners(t, srv, "owner", nil)
	cmWithOwners(t, srv, "dep", nil, ownerRef("ConfigMap", "owner", uidOf(owner), true))
	rev := srv.store.Revision()
	got := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner?dryRun=All&propagationPolicy=Foreground", "", http.StatusOK)
	meta := got["metadata"].(map[string]any)
	if meta["deletionTimestamp"] == nil || !reflect.DeepEqual(meta["finalizers"], []any{"foregroundDeletion"}) {
		t.Errorf("dry-run foreground delete answered %v", got)
	}
	st := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/dep?dryRun=All", "", http.StatusOK)
	if st["kind"] != "Status" {
		t.Errorf("dry-run delete answered %v", st)
	}
	gcSettle(t, srv)
	if srv.store.Revision() != rev {
		t.Errorf("a dry-run delete wrote: revision %d -> %d", rev, srv.store.Revision())
	}
}

// Preconditions on delete: a mismatch is 409 and nothing changes.
func TestDeletePreconditions(t *testing.T) {
	srv := newTestServer(t)
	o := cmWithOwners(t, srv, "pre", []string{"example.com/hold"})
	for _, body := range []string{`{"preconditions":{"resourceVersion":"1"}}`, `{"preconditions":{"uid":"nope"}}`} {
		st := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/pre", body, http.StatusConflict)
		if st["reason"] != "Conflict" {
			t.Errorf("%s: %v", body, st)
		}
	}
	if cmObject(t, srv, "pre").GetDeletionTimestamp() != nil {
		t.Error("a failed precondition marked the object")
	}
	rv := o["metadata"].(map[string]any)["resourceVersion"].(string)
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/pre", `{"preconditions":{"resourceVersion":"`+rv+`"}}`, http.StatusOK)
}

// Switching policy on an object already being deleted: Background removes
// the foregroundDeletion finalizer, and the object goes.
func TestDeletePolicySwitch(t *testing.T) {
	srv := newTestServer(t)
	owner := uidOf(cmWithOwners(t, srv, "owner", nil))
	cmWithOwners(t, srv, "held", []string{"example.com/hold"}, ownerRef("ConfigMap", "owner", owner, true))
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner?propagationPolicy=Foreground", "", http.StatusOK)
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner?propagationPolicy=Background", "", http.StatusOK)
	if cmExists(srv, "owner") {
		t.Error("owner kept after a Background delete removed its only finalizer")
	}
}

// deletecollection honours label and field selectors and the propagation
// policy of each deletion.
func TestDeleteCollectionSelectors(t *testing.T) {
	srv := newTestServer(t)
	for _, n := range []string{"a", "b", "c"} {
		mustServe(t, srv, "POST", "/api/v1/namespaces/t/configmaps", `{"metadata":{"name":"`+n+`","labels":{"x":"`+n+`"}}}`, http.StatusCreated)
	}
	got := mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps?fieldSelector=metadata.name%3Da", "", http.StatusOK)
	if items := got["items"].([]any); len(items) != 1 || cmExists(srv, "a") || !cmExists(srv, "b") {
		t.Errorf("field selector deletecollection: %v", got)
	}
	got = mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps?labelSelector=x%20in%20(b)", "", http.StatusOK)
	if items := got["items"].([]any); len(items) != 1 || cmExists(srv, "b") || !cmExists(srv, "c") {
		t.Errorf("label selector deletecollection: %v", got)
	}
	owner := uidOf(mustServe(t, srv, "GET", "/api/v1/namespaces/t/configmaps/c", "", 200))
	cmWithOwners(t, srv, "dep", nil, ownerRef("ConfigMap", "c", owner, false))
	got = mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps?labelSelector=x%3Dc&propagationPolicy=Orphan", "", http.StatusOK)
	if items := got["items"].([]any); len(items) != 1 {
		t.Errorf("orphan deletecollection: %v", got)
	}
	gcWait(t, srv, "c deleted", func() bool { return !cmExists(srv, "c") })
	gcSettle(t, srv)
	if !cmExists(srv, "dep") || len(cmObject(t, srv, "dep").GetOwnerReferences()) != 0 {
		t.Error("the orphaned dependent was not kept without its reference")
	}
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps?fieldSelector=data.x%3Dy", "", http.StatusBadRequest)
}

// widgets registers a custom resource (unstructured objects) with a scale
// subresource on srv.
func widgets(t *testing.T, srv *Server) *registry.Resource {
	t.Helper()
	res := &registry.Resource{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
		Custom: true, Generation: true,
		New:   func() registry.Object { return &unstructured.Unstructured{} },
		Copy:  func(o registry.Object) registry.Object { return o.(*unstructured.Unstructured).DeepCopy() },
		Scale: &registry.ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.selector"},
	}
	res.WithTypeMeta = func(o registry.Object) registry.Object { return o }
	if err := srv.reg.Add(res); err != nil {
		t.Fatal(err)
	}
	return res
}

// Custom resources are owners and dependents like any kind, and namespace
// deletion removes them.
func TestGCCustomResources(t *testing.T) {
	srv := newTestServer(t)
	widgets(t, srv)
	const path = "/apis/example.com/v1/namespaces/t/widgets"
	w := mustServe(t, srv, "POST", path, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":1}}`, http.StatusCreated)
	mustServe(t, srv, "POST", path, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2","ownerReferences":[`+
		`{"apiVersion":"example.com/v1","kind":"Widget","name":"w1","uid":"`+uidOf(w)+`"}]}}`, http.StatusCreated)
	cmWithOwners(t, srv, "cm", nil, `{"apiVersion":"example.com/v1","kind":"Widget","name":"w1","uid":"`+uidOf(w)+`"}`)
	mustServe(t, srv, "DELETE", path+"/w1", "", http.StatusOK)
	widgetExists := func(n string) bool {
		_, err := srv.store.Get(context.Background(), "/example.com/widgets/t/"+n, storage.ReadOptions{})
		return err == nil
	}
	gcWait(t, srv, "the widget's dependents collected", func() bool { return !widgetExists("w2") && !cmExists(srv, "cm") })

	mustServe(t, srv, "POST", path, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w3","finalizers":["example.com/hold"]}}`, http.StatusCreated)
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/t", "", http.StatusOK)
	gcWait(t, srv, "w3 marked", func() bool {
		o, err := srv.store.Get(context.Background(), "/example.com/widgets/t/w3", storage.ReadOptions{})
		return err == nil && o.GetDeletionTimestamp() != nil
	})
	w3 := mustServe(t, srv, "GET", path+"/w3", "", 200)
	delete(w3["metadata"].(map[string]any), "finalizers")
	b, _ := jsonMarshal(w3)
	mustServe(t, srv, "PUT", path+"/w3", b, http.StatusOK)
	gcWait(t, srv, "the namespace gone", func() bool {
		_, err := srv.store.Get(context.Background(), "/core/namespaces/t", storage.ReadOptions{})
		return err != nil
	})
}

// A namespace with a metadata finalizer waits for it after its content is
// gone; its spec.finalizers are cleared.
func TestNamespaceMetadataFinalizer(t *testing.T) {
	srv := newTestServer(t)
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"nsf","finalizers":["example.com/hold"]}}`, http.StatusCreated)
	mustServe(t, srv, "POST", "/api/v1/namespaces/nsf/configmaps", `{"metadata":{"name":"c"}}`, http.StatusCreated)
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/nsf", "", http.StatusOK)
	gcWait(t, srv, "content gone, spec.finalizers cleared", func() bool {
		_, err := srv.store.Get(context.Background(), "/core/configmaps/nsf/c", storage.ReadOptions{})
		ns, nerr := srv.store.Get(context.Background(), "/core/namespaces/nsf", storage.ReadOptions{})
		return err != nil && nerr == nil && !namespaceHeld(ns)
	})
	ns := mustServe(t, srv, "GET", "/api/v1/namespaces/nsf", "", 200)
	delete(ns["metadata"].(map[string]any), "finalizers")
	b, _ := jsonMarshal(ns)
	mustServe(t, srv, "PUT", "/api/v1/namespaces/nsf", b, http.StatusOK)
	if _, err := srv.store.Get(context.Background(), "/core/namespaces/nsf", storage.ReadOptions{}); err == nil {
		t.Error("namespace kept after its last finalizer went")
	}
}

func TestDefaultGCPolicy(t *testing.T) {
	for _, c := range []struct {
		group, version, resource string
		want                     gcPolicy
	}{
		{"apps", "v1", "deployments", gcDeleteDependents},
		{"", "v1", "configmaps", gcDeleteDependents},
		{"example.com", "v1", "widgets", gcDeleteDependents},
		{"", "v1", "replicationcontrollers", gcOrphanDependents},
		{"batch", "v1", "jobs", gcOrphanDependents},
		{"batch", "v1", "cronjobs", gcDeleteDependents},
		{"apps", "v1beta2", "deployments", gcOrphanDependents},
		{"", "v1", "events", gcUnsupported},
	} {
		res := &registry.Resource{Group: c.group, Version: c.version, Resource: c.resource}
		if got := defaultGCPolicy(res); got != c.want {
			t.Errorf("%s/%s %s: %v, want %v", c.group, c.version, c.resource, got, c.want)
		}
	}
}

// The deletion marks of kube-apiserver: a generation bump, a grace period of
// 0, the finalizers the policy asks for.
func TestMarkForDeletion(t *testing.T) {
	srv := newTestServer(t)
	mustServe(t, srv, "POST", "/apis/apps/v1/namespaces/t/deployments", deploymentJSON("web", 2), http.StatusCreated)
	got := mustServe(t, srv, "DELETE", "/apis/apps/v1/namespaces/t/deployments/web", `{"propagationPolicy":"Orphan"}`, http.StatusOK)
	meta := got["metadata"].(map[string]any)
	if meta["generation"] != float64(2) || meta["deletionGracePeriodSeconds"] != float64(0) || !reflect.DeepEqual(meta["finalizers"], []any{"orphan"}) {
		t.Errorf("marked deployment metadata %v", meta)
	}
	gcWait(t, srv, "deployment deleted", func() bool {
		_, err := srv.store.Get(context.Background(), "/apps/deployments/t/web", storage.ReadOptions{})
		return err != nil
	})
	_ = metav1.DeletePropagationOrphan
}

func deploymentJSON(name string, replicas int) string {
	return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`,
		name, replicas, name, name)
}

// With DisableGarbageCollector no collector runs: a dangling dependent stays,
// and a foreground deletion keeps its owner with the finalizer (as in
// envtest) until a client removes it.
func TestGCDisabled(t *testing.T) {
	srv, err := New(Config{DisableGarbageCollector: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"t"}}`, http.StatusCreated)
	if srv.gc != nil {
		t.Fatal("a garbage collector runs")
	}
	cmWithOwners(t, srv, "orphaned", nil, ownerRef("ConfigMap", "gone", "00000000-0000-0000-0000-000000000001", false))
	owner := cmWithOwners(t, srv, "owner", nil)
	cmWithOwners(t, srv, "dep", nil, ownerRef("ConfigMap", "owner", uidOf(owner), true))
	mustServe(t, srv, "DELETE", "/api/v1/namespaces/t/configmaps/owner?propagationPolicy=Foreground", "", http.StatusOK)
	// Every write the server makes on its own would come after this one;
	// with no collector there is none to wait for.
	if !cmExists(srv, "orphaned") || !cmExists(srv, "dep") || !cmExists(srv, "owner") {
		t.Error("objects were deleted with the collector off")
	}
	req := httptest.NewRequest("PATCH", "/api/v1/namespaces/t/configmaps/owner", strings.NewReader(`{"metadata":{"finalizers":null}}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("removing the finalizer: %d %s", rec.Code, rec.Body)
	}
	if cmExists(srv, "owner") {
		t.Error("the owner stayed after its last finalizer was removed")
	}
}
