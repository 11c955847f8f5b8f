package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The kinds of registry/core_more.go answer the kinds captures of
// kube-apiserver v1.37.2 (testdata/golden-1.37/kinds) as it does: the
// created objects (defaults, status, finalizers), the 422s of invalid
// objects and of changes to immutable fields, the Table columns and the
// cells that do not come from controllers. What varies between runs is
// left out: uids, resourceVersions, times, managedFields' manager and
// time, Age cells. Causes are compared as a set where kube-apiserver walks
// a map to find them (a quota's hard limits), so their order is random
// there.
func TestCoreMoreKindsGolden(t *testing.T) {
	// controllerCells are the Table cells kube-controller-manager had
	// written when the capture was taken (status counts), by resource.
	controllerCells := map[string][]int{
		"replicationcontrollers": {2, 3},
		"resourcequotas":         {1, 2},
	}
	for _, res := range []string{"limitranges", "resourcequotas", "persistentvolumes", "persistentvolumeclaims", "podtemplates", "replicationcontrollers"} {
		t.Run(res, func(t *testing.T) {
			srv := newTestServer(t)
			serve(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"kinds-`+res+`"}}`)
			names, err := filepath.Glob("../testdata/golden-1.37/kinds/*-core-" + res + "*.txt")
			if err != nil || len(names) == 0 {
				t.Fatalf("no captures: %v", err)
			}
			order := map[string]int{"create": 0, "full": 1, "invalid": 2, "update": 3, "table": 4, "subresource": 5}
			sort.SliceStable(names, func(i, j int) bool {
				pi, _, _ := strings.Cut(filepath.Base(names[i]), "-")
				pj, _, _ := strings.Cut(filepath.Base(names[j]), "-")
				return order[pi] < order[pj]
			})
			for _, name := range names {
				base := strings.TrimSuffix(filepath.Base(name), ".txt")
				raw, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				reqPart, respPart, _ := bytes.Cut(raw, []byte("\n---\n"))
				reqHead, reqBody, _ := bytes.Cut(reqPart, []byte("\n\n"))
				reqLines := strings.Split(string(reqHead), "\n")
				method, path, _ := strings.Cut(reqLines[0], " ")
				respHead, respBody, _ := bytes.Cut(respPart, []byte("\n\n"))
				wantCode := strings.SplitN(string(respHead), " ", 2)[0]

				req := httptest.NewRequest(method, path, bytes.NewReader(reqBody))
				for _, l := range reqLines[1:] {
					if k, v, ok := strings.Cut(l, ": "); ok {
						req.Header.Set(k, v)
					}
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if got := rec.Result().Status; !strings.HasPrefix(got, wantCode) {
					t.Errorf("%s: %s %s", base, got, rec.Body)
					continue
				}
				var got, want map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("%s: %v", base, err)
				}
				if err := json.Unmarshal(bytes.TrimSpace(respBody), &want); err != nil {
					t.Fatalf("%s: %v", base, err)
				}
				switch want["kind"] {
				case "Table":
					compareTable(t, base, got, want, controllerCells[res])
					continue
				case "Status":
					if causes, _ := want["details"].(map[string]any)["causes"].([]any); len(causes) > 1 {
						for _, o := range []map[string]any{got, want} {
							d := o["details"].(map[string]any)
							cs, _ := d["causes"].([]any)
							sort.Slice(cs, func(i, j int) bool {
								a, _ := json.Marshal(cs[i])
								b, _ := json.Marshal(cs[j])
								return string(a) < string(b)
							})
							delete(o, "message")
						}
					}
				default:
					for _, o := range []map[string]any{got, want} {
						normaliseObject(o)
					}
				}
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("%s\n got  %s\n want %s", base, g, w)
				}
			}
		})
	}
}

// normaliseObject drops what varies between runs from an object.
func normaliseObject(o map[string]any) {
	meta := o["metadata"].(map[string]any)
	delete(meta, "uid")
	delete(meta, "resourceVersion")
	delete(meta, "creationTimestamp")
	if mf, ok := meta["managedFields"].([]any); ok {
		for _, e := range mf {
			delete(e.(map[string]any), "time")
			e.(map[string]any)["manager"] = "" // the capture's client named itself "unknown"
		}
	}
	if st, ok := o["status"].(map[string]any); ok {
		delete(st, "lastPhaseTransitionTime")
		if o["kind"] == "Scale" {
			// kube-controller-manager had counted the pods it made.
			delete(st, "replicas")
		}
	}
}

// compareTable compares two Tables' columns and their rows' cells but for
// Age and date columns and the cells listed in skip.
func compareTable(t *testing.T, name string, got, want map[string]any, skip []int) {
	t.Helper()
	if !reflect.DeepEqual(got["columnDefinitions"], want["columnDefinitions"]) {
		g, _ := json.Marshal(got["columnDefinitions"])
		w, _ := json.Marshal(want["columnDefinitions"])
		t.Errorf("%s: columns\n got  %s\n want %s", name, g, w)
		return
	}
	age := map[int]bool{}
	for i, c := range want["columnDefinitions"].([]any) {
		if c := c.(map[string]any); c["name"] == "Age" || c["type"] == "date" {
			age[i] = true
		}
	}
	for _, i := range skip {
		age[i] = true
	}
	gr, _ := got["rows"].([]any)
	wr, _ := want["rows"].([]any)
	if len(gr) != len(wr) {
		t.Errorf("%s: %d rows, want %d", name, len(gr), len(wr))
		return
	}
	for r := range wr {
		gc := gr[r].(map[string]any)["cells"].([]any)
		wc := wr[r].(map[string]any)["cells"].([]any)
		for i := range wc {
			if age[i] {
				continue
			}
			if !reflect.DeepEqual(gc[i], wc[i]) {
				t.Errorf("%s: row %d cell %d = %v, want %v", name, r, i, gc[i], wc[i])
			}
		}
	}
}
