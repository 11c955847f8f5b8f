package conformance

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

const apiServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"

// localAPIService checks that a is a local APIService of group/version
// labelled automanaged: no service, Available (Local).
func localAPIService(t *testing.T, a obj, group, version, automanaged string) {
	t.Helper()
	name := str(a, "metadata", "name")
	if str(a, "spec", "group") != group || str(a, "spec", "version") != version || has(a, "spec", "service") ||
		str(a, "metadata", "labels", "kube-aggregator.kubernetes.io/automanaged") != automanaged {
		t.Errorf("%s: %s", name, compact(a))
	}
	if conditionStatus(a, "Available") != "True" {
		t.Errorf("%s is not Available: %s", name, compact(a))
	}
}

// TestLocalAPIServices checks the APIServices the server keeps for the
// group versions it serves itself: one per group version of discovery
// (version.group, "v1." for the legacy group) but the aggregator's own
// (apiregistration.k8s.io), local and Available; those
// of the built-in groups labelled automanaged "onstart", those of a custom
// resource's group "true", with priorities 1000 and 100, present while a
// CRD serves the group version and gone once none does.
func TestLocalAPIServices(t *testing.T) {
	t.Parallel()
	e := target
	// Other cases create and delete CRDs meanwhile: only the group versions
	// served both before and after the list are checked against it.
	before := map[string]bool{}
	for _, g := range expect(t, e.get(t, "/apis"), http.StatusOK)["groups"].([]any) {
		for _, v := range g.(map[string]any)["versions"].([]any) {
			before[str(v.(map[string]any), "version")+"."+str(g.(map[string]any), "name")] = true
		}
	}
	list := expect(t, e.get(t, apiServicesPath), http.StatusOK)
	byName := map[string]obj{}
	items, _ := list["items"].([]any)
	for _, it := range items {
		o := it.(map[string]any)
		byName[str(o, "metadata", "name")] = o
	}
	served := map[string]bool{"v1.": true}
	if a := byName["v1."]; a == nil {
		t.Error("no APIService v1.")
	} else {
		localAPIService(t, a, "", "v1", "onstart")
	}
	groups := expect(t, e.get(t, "/apis"), http.StatusOK)
	gs, _ := groups["groups"].([]any)
	for _, g := range gs {
		g := g.(map[string]any)
		if str(g, "name") == "apiregistration.k8s.io" {
			continue // the aggregator's own group has none
		}
		vs, _ := g["versions"].([]any)
		for _, v := range vs {
			version := str(v.(map[string]any), "version")
			name := version + "." + str(g, "name")
			served[name] = true
			if !before[name] {
				continue
			}
			a := byName[name]
			if a == nil {
				t.Errorf("no APIService %s", name)
				continue
			}
			label := str(a, "metadata", "labels", "kube-aggregator.kubernetes.io/automanaged")
			if label != "onstart" && label != "true" {
				t.Errorf("%s: automanaged %q", name, label)
			}
			localAPIService(t, a, str(g, "name"), version, label)
		}
	}
	for name, a := range byName {
		if str(a, "metadata", "labels", "kube-aggregator.kubernetes.io/automanaged") == "onstart" && !served[name] {
			t.Errorf("APIService %s of a group version not served", name)
		}
	}

	// A custom resource's group versions.
	group, _ := e.createCRD(t)
	for _, version := range []string{"v1", "v1beta1"} {
		name := version + "." + group
		e.waitCollection(t, apiServicesPath+q("fieldSelector", "metadata.name="+name), "the APIService "+name, 30*time.Second,
			func(objs map[string]obj) bool { return len(objs) == 1 })
		a := expect(t, e.get(t, apiServicesPath+"/"+name), http.StatusOK)
		localAPIService(t, a, group, version, "true")
		g, _ := field(a, "spec", "groupPriorityMinimum")
		v, _ := field(a, "spec", "versionPriority")
		if fmt.Sprint(g, " ", v) != "1000 100" {
			t.Errorf("%s: groupPriorityMinimum %v, versionPriority %v", name, g, v)
		}
	}
	expect(t, e.del(t, crdPath+"/widgets."+group, nil), http.StatusOK)
	for _, version := range []string{"v1", "v1beta1"} {
		name := version + "." + group
		e.waitCollection(t, apiServicesPath+q("fieldSelector", "metadata.name="+name), "the APIService "+name+" to go", 30*time.Second,
			func(objs map[string]obj) bool { return len(objs) == 0 })
	}
}
