package conformance

import (
	"net/http"
	"reflect"
	"slices"
	"testing"
)

// TestComponentStatuses checks componentstatuses (core/v1, get and list
// only, deprecated): the scheduler, the controller manager and etcd-0, in
// the order their probes end, each with one Healthy condition (whether the first two are
// up depends on the cluster, etcd-0 is "ok" when the server answers at
// all); a get of one, a 404 naming the resource by its singular; a watch
// refused; every answer with the deprecation Warning; the Table's columns
// as `kubectl get cs` prints them.
func TestComponentStatuses(t *testing.T) {
	t.Parallel()
	e := target
	const path = "/api/v1/componentstatuses"
	const warning = `299 - "v1 ComponentStatus is deprecated in v1.19+"`
	warned := func(r *response) {
		t.Helper()
		if got := r.Header.Values("Warning"); !reflect.DeepEqual(got, []string{warning}) {
			t.Errorf("%s %s: Warning %q, want %q", r.Method, r.Path, got, warning)
		}
	}

	r := e.get(t, path)
	warned(r)
	list := expect(t, r, http.StatusOK)
	if str(list, "kind") != "ComponentStatusList" || has(list, "metadata", "resourceVersion") {
		t.Errorf("list %s", compact(list))
	}
	items, _ := list["items"].([]any)
	var names []string
	for _, it := range items {
		o := it.(map[string]any)
		names = append(names, str(o, "metadata", "name"))
		conds, _ := o["conditions"].([]any)
		if len(conds) != 1 || str(conds[0].(map[string]any), "type") != "Healthy" {
			t.Errorf("%s: conditions %v", str(o, "metadata", "name"), conds)
		}
	}
	// kube-apiserver lists them in the order its probes end.
	slices.Sort(names)
	if want := []string{"controller-manager", "etcd-0", "scheduler"}; !reflect.DeepEqual(names, want) {
		t.Errorf("components %q, want %q", names, want)
	}

	r = e.get(t, path+"/etcd-0")
	warned(r)
	etcd := expect(t, r, http.StatusOK)
	if want := (obj{"kind": "ComponentStatus", "apiVersion": "v1", "metadata": obj{"name": "etcd-0"},
		"conditions": []any{obj{"type": "Healthy", "status": "True", "message": "ok"}}}); compact(etcd) != compact(want) {
		t.Errorf("etcd-0 %s, want %s", compact(etcd), compact(want))
	}

	r = e.get(t, path+"/kapi-missing")
	warned(r)
	st := checkStatus(t, r, http.StatusNotFound, "NotFound", `componentstatus "kapi-missing" not found`)
	if str(st, "details", "kind") != "componentstatus" {
		t.Errorf("details %v", st["details"])
	}

	r = e.get(t, path+"?watch=1")
	warned(r)
	checkStatus(t, r, http.StatusMethodNotAllowed, "MethodNotAllowed", `watch is not supported on resources of kind "componentstatuses"`)

	r = e.get(t, path+"?fieldSelector=metadata.name%3Detcd-0", "Accept", tableAccept)
	warned(r)
	table := expect(t, r, http.StatusOK)
	var cols []string
	defs, _ := table["columnDefinitions"].([]any)
	for _, d := range defs {
		cols = append(cols, str(d.(map[string]any), "name"))
	}
	if want := []string{"Name", "Status", "Message", "Error"}; !reflect.DeepEqual(cols, want) {
		t.Errorf("columns %q, want %q", cols, want)
	}
	rows, _ := table["rows"].([]any)
	if len(rows) != 1 || !reflect.DeepEqual(rows[0].(map[string]any)["cells"], []any{"etcd-0", "Healthy", "ok", ""}) {
		t.Errorf("rows %v", rows)
	}

	// Writes are not routed: 405, without the Warning.
	for _, w := range []struct{ method, path string }{{http.MethodPost, path}, {http.MethodDelete, path + "/etcd-0"}} {
		r := e.do(t, w.method, w.path, obj{})
		if r.Code != http.StatusMethodNotAllowed || r.Header.Get("Warning") != "" {
			t.Errorf("%s %s: %d, Warning %q", w.method, w.path, r.Code, r.Header.Get("Warning"))
		}
	}
}
