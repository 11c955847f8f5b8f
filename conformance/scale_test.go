package conformance

import (
	"net/http"
	"reflect"
	"testing"
)

// TestScale checks the scale subresource of a Deployment (golden 27): an
// autoscaling/v1 Scale with the deployment's identity, spec.replicas and its
// selector as a string; PUT changes only spec.replicas, and a stale
// resourceVersion is 409; PATCH works as kubectl scale sends it. Discovery
// lists deployments/scale.
func TestScale(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/apis/apps/v1/namespaces/" + ns + "/deployments"
	d := expect(t, e.post(t, path, deployment("web", 3)), http.StatusCreated)
	scalePath := path + "/web/scale"

	sc := expect(t, e.get(t, scalePath), http.StatusOK)
	checkMetadataLike(t, sc, "27-get-scale-deployment")
	if str(sc, "kind") != "Scale" || str(sc, "apiVersion") != "autoscaling/v1" {
		t.Errorf("scale kind %q apiVersion %q", str(sc, "kind"), str(sc, "apiVersion"))
	}
	if n, _ := num(sc, "spec", "replicas"); n != 3 || str(sc, "status", "selector") != "app=web" || !has(sc, "status", "replicas") {
		t.Errorf("scale %s", compact(sc))
	}
	if str(sc, "metadata", "uid") != str(d, "metadata", "uid") || str(sc, "metadata", "name") != "web" || str(sc, "metadata", "namespace") != ns {
		t.Errorf("scale metadata %v, deployment %v", sc["metadata"], d["metadata"])
	}

	// PUT at the current resourceVersion (again on a conflict: a real
	// cluster's controller writes the deployment's status meanwhile).
	var put obj
	for attempt := 0; ; attempt++ {
		cur := expect(t, e.get(t, scalePath), http.StatusOK)
		cur["spec"] = obj{"replicas": 5}
		r := e.put(t, scalePath, cur)
		if r.Code == http.StatusConflict && attempt < 20 {
			continue
		}
		put = expect(t, r, http.StatusOK)
		break
	}
	if n, _ := num(put, "spec", "replicas"); n != 5 || str(put, "kind") != "Scale" {
		t.Errorf("scale update answered %s", compact(put))
	}
	after := expect(t, e.get(t, path+"/web"), http.StatusOK)
	if n, _ := num(after, "spec", "replicas"); n != 5 {
		t.Errorf("deployment spec.replicas %d after scaling to 5", n)
	}
	if !reflect.DeepEqual(after["spec"].(map[string]any)["template"], d["spec"].(map[string]any)["template"]) {
		t.Errorf("scaling changed the template")
	}

	stale := obj{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": obj{"name": "web", "namespace": ns, "resourceVersion": rv(d)}, "spec": obj{"replicas": 1}}
	checkStatus(t, e.put(t, scalePath, stale), http.StatusConflict, "Conflict", "the object has been modified")

	neg := obj{"metadata": obj{"name": "web"}, "spec": obj{"replicas": -1}}
	checkStatus(t, e.put(t, scalePath, neg), http.StatusUnprocessableEntity, "Invalid", "spec.replicas: Invalid value: -1: must be greater than or equal to 0")

	checkStatus(t, e.get(t, path+"/missing/scale"), http.StatusNotFound, "NotFound", "not found")

	// PATCH, as kubectl scale sends it; dry-run first, which changes nothing.
	dry := expect(t, e.patch(t, scalePath+q("dryRun", "All"), mergePatch, `{"spec":{"replicas":7}}`), http.StatusOK)
	if n, _ := num(dry, "spec", "replicas"); n != 7 {
		t.Errorf("dry-run scale patch answered %s", compact(dry))
	}
	if n, _ := num(expect(t, e.get(t, path+"/web"), http.StatusOK), "spec", "replicas"); n != 5 {
		t.Errorf("a dry-run scale patch changed spec.replicas to %d", n)
	}
	patched := expect(t, e.patch(t, scalePath, jsonPatch, `[{"op":"replace","path":"/spec/replicas","value":2}]`), http.StatusOK)
	if n, _ := num(patched, "spec", "replicas"); n != 2 || str(patched, "kind") != "Scale" {
		t.Errorf("scale json patch answered %s", compact(patched))
	}
	after = expect(t, e.get(t, path+"/web"), http.StatusOK)
	if n, _ := num(after, "spec", "replicas"); n != 2 {
		t.Errorf("deployment spec.replicas %d after patching its scale to 2", n)
	}
	// The write through /scale is recorded with its subresource, owning
	// spec.replicas.
	var scaleEntry obj
	mf, _ := field(after, "metadata", "managedFields")
	for _, m := range mf.([]any) {
		if m.(obj)["subresource"] == "scale" {
			scaleEntry = m.(obj)
		}
	}
	if scaleEntry == nil || compact(scaleEntry["fieldsV1"]) != `{"f:spec":{"f:replicas":{}}}` {
		t.Errorf("managedFields after scaling: %s", compact(mf))
	}

	t.Run("discovery", func(t *testing.T) {
		list := expect(t, e.get(t, "/apis/apps/v1"), http.StatusOK)
		resources, _ := list["resources"].([]any)
		for _, r := range resources {
			m, _ := r.(map[string]any)
			if m["name"] != "deployments/scale" {
				continue
			}
			if m["group"] != "autoscaling" || m["version"] != "v1" || m["kind"] != "Scale" ||
				!reflect.DeepEqual(m["verbs"], []any{"get", "patch", "update"}) {
				t.Errorf("deployments/scale in discovery: %v", m)
			}
			return
		}
		t.Error("discovery does not list deployments/scale")
	})
}
