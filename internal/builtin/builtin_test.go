package builtin

import (
	"slices"
	"testing"
)

func TestLookup(t *testing.T) {
	pods, ok := Lookup("", "v1", "pods")
	if !ok || pods.Kind != "Pod" || !pods.Namespaced || pods.Singular != "pod" ||
		!slices.Equal(pods.ShortNames, []string{"po"}) || !slices.Equal(pods.Categories, []string{"all"}) {
		t.Fatalf("pods: %+v %v", pods, ok)
	}
	ev, ok := pods.Subresource("eviction")
	if !ok || ev.Group != "policy" || ev.Version != "v1" || ev.Kind != "Eviction" || !slices.Equal(ev.Verbs, []string{"create"}) {
		t.Errorf("pods/eviction: %+v %v", ev, ok)
	}
	if _, ok := pods.Subresource("nope"); ok {
		t.Error("pods/nope found")
	}
	if _, ok := Lookup("apps", "v1", "pods"); ok {
		t.Error("apps/v1 pods found")
	}
	// Callers own what they get.
	pods.Verbs[0] = "x"
	pods.Subresources[0].Verbs[0] = "x"
	again, _ := Lookup("", "v1", "pods")
	if again.Verbs[0] != "create" || again.Subresources[0].Verbs[0] != "create" {
		t.Error("Lookup shares the table's slices")
	}
}

func TestTable(t *testing.T) {
	all := Resources()
	if len(all) < 70 {
		t.Fatalf("%d resources", len(all))
	}
	seen := map[string]bool{}
	for _, g := range Groups() {
		for _, v := range g.Versions {
			seen[g.Name+"/"+v] = true
		}
	}
	for _, r := range all {
		if !seen[r.Group+"/"+r.Version] {
			t.Errorf("%s/%s/%s: group version not in Groups", r.Group, r.Version, r.Resource)
		}
		if r.Kind == "" || r.Singular == "" || len(r.Verbs) == 0 || !slices.IsSorted(r.Verbs) {
			t.Errorf("%s/%s/%s: incomplete %+v", r.Group, r.Version, r.Resource, r)
		}
	}
	hpa := 0
	for _, r := range all {
		if r.Group == "autoscaling" && r.Resource == "horizontalpodautoscalers" {
			hpa++
		}
	}
	if hpa != 2 {
		t.Errorf("horizontalpodautoscalers in %d autoscaling versions, want 2 (v2 and v1)", hpa)
	}
}
