package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/cel"
)

// rulesCRD is a CRD of kind Rule whose spec has n validation rules.
func rulesCRD(n int) string {
	rules := []string{
		`{"rule":"self.replicas >= 0 && self.replicas <= 100","message":"replicas out of range"}`,
		`{"rule":"self.name.matches('^[a-z][a-z0-9-]*$')"}`,
		`{"rule":"self.tags.all(t, t.size() < 20)"}`,
		`{"rule":"!has(self.mode) || self.mode in ['fast', 'slow']"}`,
		`{"rule":"quantity(self.memory).isLessThan(quantity('64Gi'))"}`,
		`{"rule":"self.ports.all(p, p.port > 0 && p.port < 65536)"}`,
		`{"rule":"self.ports.exists_one(p, p.name == 'http')","reason":"FieldValueRequired","message":"one http port"}`,
		`{"rule":"self.labels.all(k, k.size() < 64)"}`,
		`{"rule":"!format.dns1123Label().validate(self.name).hasValue()"}`,
		`{"rule":"self.name == oldSelf.name","message":"name is immutable"}`,
	}[:n]
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"rules.bench.kapi.dev"},
"spec":{"group":"bench.kapi.dev","scope":"Namespaced","names":{"plural":"rules","singular":"rule","kind":"Rule","listKind":"RuleList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
"x-kubernetes-validations":[` + strings.Join(rules, ",") + `],
"properties":{"replicas":{"type":"integer"},"name":{"type":"string","maxLength":63},"mode":{"type":"string"},"memory":{"type":"string","maxLength":20},
"tags":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":30}},
"labels":{"type":"object","maxProperties":20,"additionalProperties":{"type":"string","maxLength":63}},
"ports":{"type":"array","maxItems":10,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
 "items":{"type":"object","required":["name"],"properties":{"name":{"type":"string","maxLength":15},"port":{"type":"integer"}}}}}}}}}}]}}`
}

func ruleBody(name string) string {
	return fmt.Sprintf(`{"apiVersion":"bench.kapi.dev/v1","kind":"Rule","metadata":{"name":%q},"spec":{"replicas":3,"name":"web","mode":"fast",
"memory":"512Mi","tags":["a","b","c"],"labels":{"app":"web","tier":"front"},"ports":[{"name":"http","port":80},{"name":"https","port":443}]}}`, name)
}

// TestCRDRulesCompiledOnce checks that a CRD's rules are compiled when its
// version is registered (once per generation), not for each request, and
// again after the CRD changes.
func TestCRDRulesCompiledOnce(t *testing.T) {
	srv, _ := newCRDTestServer(t)
	if rec := crdServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"r"}}`); rec.Code != http.StatusCreated {
		t.Fatal(rec.Code, rec.Body)
	}
	if rec := crdServe(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", rulesCRD(10)); rec.Code != http.StatusCreated {
		t.Fatal(rec.Code, rec.Body)
	}
	path := "/apis/bench.kapi.dev/v1/namespaces/r/rules"
	before := cel.Compiles()
	for i := range 5 {
		if rec := crdServe(t, srv, "POST", path, ruleBody(fmt.Sprint("r", i))); rec.Code != http.StatusCreated {
			t.Fatal(rec.Code, rec.Body)
		}
		if rec := crdServe(t, srv, "PATCH", path+"/r"+fmt.Sprint(i), `{"spec":{"replicas":4}}`, "Content-Type", "application/merge-patch+json"); rec.Code != http.StatusOK {
			t.Fatal(rec.Code, rec.Body)
		}
	}
	if rec := crdServe(t, srv, "PATCH", path+"/r0", `{"spec":{"name":"other"}}`, "Content-Type", "application/merge-patch+json"); rec.Code != http.StatusUnprocessableEntity ||
		!strings.Contains(rec.Body.String(), "name is immutable") {
		t.Fatalf("transition rule: %d %s", rec.Code, rec.Body)
	}
	if n := cel.Compiles() - before; n != 1 {
		t.Errorf("compiled %d times for 11 requests, want once", n)
	}
	// A new generation of the CRD (one rule fewer) is compiled again, once.
	rec := crdServe(t, srv, "PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rules.bench.kapi.dev", rulesCRD(9),
		"Content-Type", "application/merge-patch+json")
	if rec.Code != http.StatusOK {
		t.Fatal(rec.Code, rec.Body)
	}
	before = cel.Compiles()
	if rec := crdServe(t, srv, "PATCH", path+"/r0", `{"spec":{"name":"other"}}`, "Content-Type", "application/merge-patch+json"); rec.Code != http.StatusOK {
		t.Fatalf("after the CRD dropped the transition rule: %d %s", rec.Code, rec.Body)
	}
	crdServe(t, srv, "PATCH", path+"/r1", `{"spec":{"replicas":5}}`, "Content-Type", "application/merge-patch+json")
	if n := cel.Compiles() - before; n != 1 {
		t.Errorf("compiled %d times after the CRD changed, want once", n)
	}
}

// BenchmarkCreateWithRules measures creates of a custom resource whose
// schema has 0 or 10 validation rules (in-process, no network).
func BenchmarkCreateWithRules(b *testing.B) {
	for _, n := range []int{0, 10} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			srv, _ := newBenchServer(b)
			mustDo(b, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", rulesCRD(n), http.StatusCreated)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				mustDo(b, srv, "POST", "/apis/bench.kapi.dev/v1/namespaces/bench/rules", ruleBody(fmt.Sprint("r", i)), http.StatusCreated)
				i++
			}
		})
	}
}
