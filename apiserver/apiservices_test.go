package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"testing"
	"time"
)

// apiServicesPath is the collection of APIServices.
const apiServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"

// The server starts with the APIServices kube-apiserver v1.37.2 keeps for
// its built-in group versions, as captured
// (testdata/golden-1.37/cluster/apiservices-onstart.json: names, spec,
// labels, status, the kube-apiserver manager's fields), but uid,
// resourceVersion and times; one per group version the server serves, and
// no other (the aggregator's own group has none).
func TestLocalAPIServicesGolden(t *testing.T) {
	srv, err := New(Config{DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b, err := os.ReadFile("../testdata/golden-1.37/cluster/apiservices-onstart.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	code, got := serve(t, srv, http.MethodGet, apiServicesPath, "")
	if code != http.StatusOK {
		t.Fatalf("%d %v", code, got)
	}
	normalize := func(list map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, it := range list["items"].([]any) {
			o := it.(map[string]any)
			meta := o["metadata"].(map[string]any)
			created := meta["creationTimestamp"]
			for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
				if _, ok := meta[k]; !ok {
					t.Errorf("%s has no %s", meta["name"], k)
				}
				delete(meta, k)
			}
			mfs, _ := meta["managedFields"].([]any)
			for _, mf := range mfs {
				delete(mf.(map[string]any), "time")
			}
			conds, _ := o["status"].(map[string]any)["conditions"].([]any)
			for _, c := range conds {
				// Available since the creation, as kube-apiserver's.
				if c := c.(map[string]any); c["lastTransitionTime"] != created {
					t.Errorf("%s: available since %v, created %v", meta["name"], c["lastTransitionTime"], created)
				}
				delete(c.(map[string]any), "lastTransitionTime")
			}
			// kube-apiserver lists with kind and apiVersion on each item
			// when a client asks for a List of them; both omit them here.
			out[meta["name"].(string)] = o
		}
		return out
	}
	g, w := normalize(got), normalize(want)
	for name, wo := range w {
		spec := wo["spec"].(map[string]any)
		group, _ := spec["group"].(string)
		if g[name] == nil && !srv.Registry().HasGroupVersion(group, spec["version"].(string)) {
			continue // a group version kapi does not serve (yet): it has none
		}
		if !reflect.DeepEqual(g[name], wo) {
			t.Errorf("%s:\n got  %s\n want %s", name, compactJSON(g[name]), compactJSON(wo))
		}
	}
	for name := range g {
		if w[name] == nil {
			t.Errorf("%s is not kube-apiserver's", name)
		}
	}
}

// apiService returns the named APIService, or nil.
func apiService(t *testing.T, srv *Server, name string) map[string]any {
	t.Helper()
	code, o := serve(t, srv, http.MethodGet, apiServicesPath+"/"+name, "")
	if code == http.StatusNotFound {
		return nil
	}
	if code != http.StatusOK {
		t.Fatalf("%s: %d %v", name, code, o)
	}
	return o
}

// A custom resource's group version gets its APIService (labelled "true",
// priorities 1000 and 100) while a CRD serves it, and loses it when none
// does; a deleted built-in one comes back; a change a user makes to a
// built-in one stays, as do the user's own APIServices.
func TestLocalAPIServicesFollowServedVersions(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	if rec := crdServe(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetCRD); rec.Code != http.StatusCreated {
		t.Fatalf("create CRD: %d %s", rec.Code, rec.Body)
	}
	for _, name := range []string{"v1.test.kapi.dev", "v1beta1.test.kapi.dev"} {
		waitFor(t, 10*time.Second, "the APIService "+name, func() bool { return apiService(t, srv, name) != nil }, srv)
		a := apiService(t, srv, name)
		spec := a["spec"].(map[string]any)
		labels := a["metadata"].(map[string]any)["labels"].(map[string]any)
		if spec["groupPriorityMinimum"] != float64(1000) || spec["versionPriority"] != float64(100) || spec["group"] != "test.kapi.dev" ||
			labels["kube-aggregator.kubernetes.io/automanaged"] != "true" {
			t.Errorf("%s: %s", name, compactJSON(a))
		}
	}

	// A user's APIService of the same group, and a change to a built-in one.
	if code, o := serve(t, srv, http.MethodPost, apiServicesPath,
		`{"metadata":{"name":"v2.test.kapi.dev"},"spec":{"group":"test.kapi.dev","version":"v2","groupPriorityMinimum":10,"versionPriority":10}}`); code != http.StatusCreated {
		t.Fatalf("user APIService: %d %v", code, o)
	}
	rec := crdServe(t, srv, http.MethodPatch, apiServicesPath+"/v1.apps", `{"spec":{"versionPriority":16}}`, "Content-Type", "application/merge-patch+json")
	if rec.Code != http.StatusOK {
		t.Fatalf("patch v1.apps: %d %s", rec.Code, rec.Body)
	}

	// Deleting the CRD: its APIServices go, the user's stays.
	if code, o := serve(t, srv, http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.kapi.dev", ""); code != http.StatusOK {
		t.Fatalf("delete CRD: %d %v", code, o)
	}
	waitFor(t, 10*time.Second, "the CRD's APIServices to go", func() bool {
		return apiService(t, srv, "v1.test.kapi.dev") == nil && apiService(t, srv, "v1beta1.test.kapi.dev") == nil
	}, srv)
	if apiService(t, srv, "v2.test.kapi.dev") == nil {
		t.Error("the user's APIService was deleted")
	}

	// A deleted built-in one is recreated (with its spec); the changed one
	// keeps the change.
	if code, o := serve(t, srv, http.MethodDelete, apiServicesPath+"/v1.storage.k8s.io", ""); code != http.StatusOK {
		t.Fatalf("delete v1.storage.k8s.io: %d %v", code, o)
	}
	waitFor(t, 10*time.Second, "v1.storage.k8s.io back", func() bool { return apiService(t, srv, "v1.storage.k8s.io") != nil }, srv)
	if spec := apiService(t, srv, "v1.storage.k8s.io")["spec"].(map[string]any); spec["groupPriorityMinimum"] != float64(16800) {
		t.Errorf("v1.storage.k8s.io spec %v", spec)
	}
	if spec := apiService(t, srv, "v1.apps")["spec"].(map[string]any); spec["versionPriority"] != float64(16) {
		t.Errorf("v1.apps spec %v: the user's change is lost", spec)
	}
}
