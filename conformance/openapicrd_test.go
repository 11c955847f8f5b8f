package conformance

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenAPIFollowsCRD checks that /openapi/v3 and /openapi/v2 follow a
// CRD: a property added to its schema by an update shows in both documents,
// and once the CRD is deleted its group version leaves the v3 index and
// its definition leaves v2.
func TestOpenAPIFollowsCRD(t *testing.T) {
	t.Parallel()
	e := target
	group, _ := e.createCRD(t)
	gv := "apis/" + group + "/v1"
	labels := strings.Split(group, ".")
	slices.Reverse(labels)
	def := strings.Join(labels, ".") + ".v1.Widget"
	crdItem := crdPath + "/widgets." + group

	// v3 reads the group version's document through the index (its URL
	// carries the document's hash), "" when the index has none.
	v3Spec := func() map[string]any {
		url := e.openAPIIndex(t)[gv]
		if url == "" {
			return nil
		}
		r := e.get(t, url)
		if r.Code != http.StatusOK {
			return nil // the document changed between the index and the read
		}
		spec, _ := field(decode(t, r.Body), "components", "schemas", def, "properties", "spec", "properties")
		m, _ := spec.(map[string]any)
		return m
	}
	v2Definitions := func() map[string]any {
		defs, _ := field(expect(t, e.get(t, "/openapi/v2"), http.StatusOK), "definitions")
		m, _ := defs.(map[string]any)
		return m
	}
	v2Spec := func() map[string]any {
		spec, _ := field(obj(v2Definitions()), def, "properties", "spec", "properties")
		m, _ := spec.(map[string]any)
		return m
	}
	// await polls cond, paced, until it holds or the deadline passes.
	await := func(what string, pace time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(e.within(60 * time.Second))
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			<-time.After(pace) // pacing a poll that has a deadline
		}
	}
	await("the CRD's schema in /openapi/v3", 100*time.Millisecond, func() bool { return v3Spec()["size"] != nil })
	if v3Spec()["weight"] != nil {
		t.Fatal("spec.weight in /openapi/v3 before the update")
	}

	// An update adds spec.weight to the v1 schema.
	crd := expect(t, e.get(t, crdItem), http.StatusOK)
	versions, _ := field(crd, "spec", "versions")
	for _, v := range versions.([]any) {
		props, _ := field(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties")
		props.(map[string]any)["weight"] = obj{"type": "string", "description": "added by an update"}
	}
	expect(t, e.put(t, crdItem, crd), http.StatusOK)
	await("spec.weight in /openapi/v3", 100*time.Millisecond, func() bool { return v3Spec()["weight"] != nil })
	if w, _ := v3Spec()["weight"].(map[string]any); w["type"] != "string" || w["description"] != "added by an update" {
		t.Errorf("spec.weight in /openapi/v3: %s", compact(w))
	}
	await("spec.weight in /openapi/v2", time.Second, func() bool { return v2Spec()["weight"] != nil })
	if w, _ := v2Spec()["weight"].(map[string]any); w["type"] != "string" {
		t.Errorf("spec.weight in /openapi/v2: %s", compact(w))
	}

	// Deleted, the CRD leaves both documents.
	expect(t, e.del(t, crdItem, nil), http.StatusOK)
	e.waitCollection(t, crdPath+q("fieldSelector", "metadata.name=widgets."+group), "the CRD to go", 30*time.Second,
		func(objs map[string]obj) bool { return len(objs) == 0 })
	await(gv+" to leave the /openapi/v3 index", 100*time.Millisecond, func() bool { return e.openAPIIndex(t)[gv] == "" })
	await(def+" to leave /openapi/v2", time.Second, func() bool { _, ok := v2Definitions()[def]; return !ok })
}
