package conformance

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestResourceURIs checks the resource paths of the spec: namespaced objects
// and collections, cluster-scoped ones (namespaces, nodes), the all-namespaces
// collection, the status subresource, and the answers to paths that name no
// resource (golden 58, 59, 60).
func TestResourceURIs(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)

	t.Run("namespaced", func(t *testing.T) {
		t.Parallel()
		ns := e.namespace(t)
		base := e.baseline(t, ns)
		// golden 06's request, which carries kind and apiVersion.
		body := strings.ReplaceAll(string(loadGolden(t, "06-create-configmap").RequestBody), `"namespace": "golden"`, `"namespace": "`+ns+`"`)
		created := expect(t, e.post(t, cmPath(ns), body), http.StatusCreated)
		checkMetadataLike(t, created, "06-create-configmap")
		got := expect(t, e.get(t, cmPath(ns, "cm1")), http.StatusOK)
		checkMetadataLike(t, got, "07-get-configmap-json")
		want := goldenObject(t, "07-get-configmap-json")
		for _, k := range []string{"kind", "apiVersion", "data", "binaryData"} {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s = %v, want %v", k, got[k], want[k])
			}
		}
		if str(got, "metadata", "namespace") != ns || rv(got) != rv(created) || str(got, "metadata", "uid") != str(created, "metadata", "uid") {
			t.Errorf("get returned %s, created %s", compact(got["metadata"]), compact(created["metadata"]))
		}
		list := expect(t, e.get(t, cmPath(ns)), http.StatusOK)
		if str(list, "kind") != "ConfigMapList" || str(list, "apiVersion") != "v1" || rv(list) == "" {
			t.Errorf("list head: kind %q apiVersion %q resourceVersion %q", str(list, "kind"), str(list, "apiVersion"), rv(list))
		}
		its := items(t, list)
		if want := sortedKeys(withBaseline(map[string]string{"cm1": ""}, base)); !reflect.DeepEqual(names(its), want) {
			t.Fatalf("list names %v, want %v", names(its), want)
		}
		// Items of a list carry no kind/apiVersion in JSON (golden 29).
		for _, it := range its {
			if has(it, "kind") || has(it, "apiVersion") {
				t.Errorf("list item carries kind/apiVersion: %s", compact(it))
			}
		}
	})

	t.Run("cluster-scoped/namespaces", func(t *testing.T) {
		t.Parallel()
		got := expect(t, e.get(t, "/api/v1/namespaces/"+ns), http.StatusOK)
		if str(got, "kind") != "Namespace" || str(got, "apiVersion") != "v1" || name(got) != ns || has(got, "metadata", "namespace") {
			t.Errorf("namespace object: %s", compact(got))
		}
		if l := str(got, "metadata", "labels", "kubernetes.io/metadata.name"); l != ns {
			t.Errorf("label kubernetes.io/metadata.name = %q, want %q", l, ns)
		}
		if f, _ := field(got, "spec", "finalizers"); !reflect.DeepEqual(f, []any{"kubernetes"}) {
			t.Errorf("spec.finalizers = %v, want [kubernetes]", f)
		}
		if p := str(got, "status", "phase"); p != "Active" {
			t.Errorf("status.phase = %q, want Active", p)
		}
		list := expect(t, e.get(t, "/api/v1/namespaces"+q("fieldSelector", "metadata.name="+ns)), http.StatusOK)
		if str(list, "kind") != "NamespaceList" || !reflect.DeepEqual(names(items(t, list)), []string{ns}) {
			t.Errorf("namespace list by name: %s", truncate([]byte(compact(list))))
		}
	})

	t.Run("cluster-scoped/nodes", func(t *testing.T) {
		t.Parallel()
		node := ns + "-node"
		created := expect(t, e.post(t, "/api/v1/nodes", obj{"metadata": obj{"name": node, "labels": obj{"conformance": ns}}}), http.StatusCreated)
		t.Cleanup(func() { e.del(t, "/api/v1/nodes/"+node, nil) })
		if has(created, "metadata", "namespace") || str(created, "kind") != "Node" {
			t.Errorf("created node: %s", compact(created))
		}
		// (A real cluster's node controller may taint the node meanwhile, so
		// its resourceVersion may have moved.)
		uid := str(created, "metadata", "uid")
		got := expect(t, e.get(t, "/api/v1/nodes/"+node), http.StatusOK)
		if name(got) != node || str(got, "metadata", "uid") != uid {
			t.Errorf("get node: %s", compact(got["metadata"]))
		}
		list := expect(t, e.get(t, "/api/v1/nodes"+q("labelSelector", "conformance="+ns)), http.StatusOK)
		if str(list, "kind") != "NodeList" || !reflect.DeepEqual(names(items(t, list)), []string{node}) {
			t.Errorf("node list: %s", truncate([]byte(compact(list))))
		}
		// The status subresource of a cluster-scoped resource.
		st := expect(t, e.get(t, "/api/v1/nodes/"+node+"/status"), http.StatusOK)
		if str(st, "kind") != "Node" || name(st) != node || str(st, "metadata", "uid") != uid {
			t.Errorf("GET nodes/%s/status: %s", node, compact(st))
		}
		// A cluster-scoped resource has no namespaced path.
		checkGoldenStatus(t, e.get(t, "/api/v1/namespaces/"+ns+"/nodes/"+node), "58-unknown-resource")
		expect(t, e.del(t, "/api/v1/nodes/"+node, nil), http.StatusOK)
		checkStatus(t, e.get(t, "/api/v1/nodes/"+node), http.StatusNotFound, "NotFound", `nodes "`+node+`" not found`)
	})

	t.Run("all-namespaces", func(t *testing.T) {
		t.Parallel()
		other := e.namespace(t)
		label := map[string]string{"conformance-run": ns}
		e.createCM(t, ns, "same", label, nil)
		e.createCM(t, other, "same", label, nil)
		list := expect(t, e.get(t, "/api/v1/configmaps"+q("labelSelector", "conformance-run="+ns)), http.StatusOK)
		var got []string
		for _, it := range items(t, list) {
			got = append(got, str(it, "metadata", "namespace")+"/"+name(it))
		}
		sortStrings(got)
		want := []string{ns + "/same", other + "/same"}
		sortStrings(want)
		if str(list, "kind") != "ConfigMapList" || !reflect.DeepEqual(got, want) {
			t.Errorf("all-namespaces list: %v, want %v", got, want)
		}
	})

	t.Run("status-subresource/namespaced", func(t *testing.T) {
		t.Parallel()
		e.ensureDefaultServiceAccount(t, ns)
		created := expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/pods", pod("p", "", nil)), http.StatusCreated)
		st := expect(t, e.get(t, "/api/v1/namespaces/"+ns+"/pods/p/status"), http.StatusOK)
		if str(st, "kind") != "Pod" || name(st) != "p" || rv(st) != rv(created) || !has(st, "spec") {
			t.Errorf("GET pods/p/status: %s", truncate([]byte(compact(st))))
		}
		// configmaps have no status subresource.
		e.createCM(t, ns, "nostatus", nil, nil)
		checkGoldenStatus(t, e.get(t, cmPath(ns, "nostatus")+"/status"), "58-unknown-resource")
	})

	t.Run("unknown-resource", func(t *testing.T) {
		t.Parallel()
		checkGoldenStatus(t, e.get(t, "/api/v1/namespaces/"+ns+"/widgets"), "58-unknown-resource")
	})

	t.Run("unknown-group", func(t *testing.T) {
		t.Parallel()
		g := loadGolden(t, "59-unknown-group")
		r := e.get(t, g.Path)
		if r.Code != g.Status || r.Header.Get("Content-Type") != g.ResponseHeader["Content-Type"] || string(r.Body) != string(g.ResponseBody) {
			t.Errorf("want golden 59 (%d %q %q), got:\n%s", g.Status, g.ResponseHeader["Content-Type"], g.ResponseBody, r)
		}
	})

	t.Run("method-not-allowed", func(t *testing.T) {
		t.Parallel()
		e.createCM(t, ns, "mna", nil, nil)
		checkGoldenStatus(t, e.post(t, cmPath(ns, "mna"), obj{"metadata": obj{"name": "mna"}}), "60-method-not-allowed")
	})
}
