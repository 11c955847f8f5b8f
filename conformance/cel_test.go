package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// celGroup is the CRD group of the captures in testdata/cel, replaced by a
// fresh group in each run.
const celGroup = "cel.i16.kapi.dev"

// celStep is one request of testdata/cel/steps.json; its answer from
// kube-apiserver v1.37.2 is testdata/cel/<name>.json (capture.py).
type celStep struct {
	Name        string          `json:"name"`
	CRD         string          `json:"crd"` // "probe", "cost", "more", "emb", "rat", or "" for CRDs
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	ContentType string          `json:"contentType"`
	Keep        string          `json:"keep"` // the part of a success compared`
	Body        json.RawMessage `json:"body"`
}

// celFile reads a testdata/cel file with the group replaced.
func celFile(t *testing.T, name, group string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cel", name))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(b), celGroup, group))
}

// TestCELValidationRules checks x-kubernetes-validations as kube-apiserver
// v1.37.2 answers them (captured in testdata/cel): rules with message,
// messageExpression, reason and fieldPath on create; a rule that fails to
// evaluate; rules blocked by schema errors; list-type set and map
// duplicates; int-or-string and quantity; transition rules and
// optionalOldSelf on update (merge and JSON patch, server-side apply); the
// status subresource; CRDs refused for invalid rule fields, rules that do
// not compile, an estimated cost over budget, oldSelf under lists whose
// items do not correlate, and list-map keys without
// default; a rule over its runtime cost budget; and the defaults and
// pruning of embedded resources; transition rules run on unchanged values
// (they are not ratcheted).
//
// Where kube-apiserver walks an object's properties in map order, the
// order of causes varies: they are compared as a set, and the message must
// list them in the order the causes have.
func TestCELValidationRules(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	group := "c" + randomSuffix() + "." + celGroup
	plural := map[string]string{"probe": "probes", "cost": "bads", "more": "mores", "emb": "embs", "rat": "rats"}
	for _, f := range []string{"probe-crd.json", "cost-crd.json", "more-crd.json", "emb-crd.json", "rat-crd.json"} {
		var crd obj
		if err := json.Unmarshal(celFile(t, f, group), &crd); err != nil {
			t.Fatal(err)
		}
		e.createServedCRD(t, crd)
	}
	var steps []celStep
	if err := json.Unmarshal(celFile(t, "steps.json", group), &steps); err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		if s.Name == "runtime-cost" && raceEnabled && e.inProcess {
			t.Logf("%s: not run under the race detector (see race_test.go)", s.Name)
			continue
		}
		base := crdPath
		if s.CRD != "" {
			base = "/apis/" + group + "/v1/namespaces/" + ns + "/" + plural[s.CRD]
		}
		ct := s.ContentType
		if ct == "" {
			ct = "application/json"
		}
		got := e.do(t, s.Method, base+s.Path, []byte(s.Body), "Content-Type", ct)
		var want struct {
			Code int `json:"code"`
			Body obj `json:"body"`
		}
		if err := json.Unmarshal(celFile(t, s.Name+".json", group), &want); err != nil {
			t.Fatal(err)
		}
		if got.Code != want.Code {
			t.Errorf("%s: HTTP %d, want %d:\n%s", s.Name, got.Code, want.Code, got.Body)
			continue
		}
		switch {
		case want.Code < 300 && s.Keep != "":
			if g, w := compact(decode(t, got.Body)[s.Keep]), compact(want.Body[s.Keep]); g != w {
				t.Errorf("%s: %s\n got  %s\n want %s", s.Name, s.Keep, g, w)
			}
		case want.Code >= 300:
			checkSameStatus(t, s.Name, decode(t, got.Body), want.Body)
		}
	}
}

// checkSameStatus compares a failure Status with a captured one: reason,
// code, details name, group and kind, the causes as a set; and the message
// must be the one kube-apiserver builds from the causes in their order.
func checkSameStatus(t *testing.T, step string, got, want obj) {
	t.Helper()
	for _, f := range [][]string{{"reason"}, {"details", "name"}, {"details", "group"}, {"details", "kind"}} {
		if g, w := str(got, f...), str(want, f...); g != w {
			t.Errorf("%s: %s %q, want %q", step, strings.Join(f, "."), g, w)
		}
	}
	gc, wc := celCauses(got), celCauses(want)
	if !slices.Equal(sortedCopy(gc), sortedCopy(wc)) {
		t.Errorf("%s: causes\n got  %q\n want %q", step, gc, wc)
	}
	// The message: "<Kind> "name" is invalid: " and the causes, each once.
	prefix, _, _ := strings.Cut(str(want, "message"), " is invalid: ")
	var parts []string
	for _, c := range celCauseList(got) {
		p := c.field + ": " + c.message
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	msg := prefix + " is invalid: " + strings.Join(parts, ", ")
	if len(parts) > 1 {
		msg = prefix + " is invalid: [" + strings.Join(parts, ", ") + "]"
	}
	if m := str(got, "message"); m != msg {
		t.Errorf("%s: message\n got  %s\n want %s", step, m, msg)
	}
}

func celCauseList(st obj) []cause {
	raw, _ := field(st, "details", "causes")
	list, _ := raw.([]any)
	var out []cause
	for _, x := range list {
		m, _ := x.(map[string]any)
		f, _ := m["field"].(string)
		r, _ := m["reason"].(string)
		ms, _ := m["message"].(string)
		out = append(out, cause{f, r, ms})
	}
	return out
}

func celCauses(st obj) []string {
	var out []string
	for _, c := range celCauseList(st) {
		out = append(out, fmt.Sprintf("%s|%s|%s", c.field, c.reason, c.message))
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// createServedCRD is createCRDObject, then waits until the CRD's resource
// is served (a real server serves it shortly after Established).
func (e *env) createServedCRD(t *testing.T, crd obj) {
	t.Helper()
	e.createCRDObject(t, crd)
	group, _ := field(crd, "spec", "group")
	plural, _ := field(crd, "spec", "names", "plural")
	path := fmt.Sprintf("/apis/%s/v1/%s", group, plural)
	e.waitCondition(t, path+" to be served", func() bool { return e.get(t, path).Code == http.StatusOK })
}
