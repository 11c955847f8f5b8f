package conformance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// crdDeletionStep is what a watcher of a CRD being deleted sees in one
// event: its type, the Terminating condition (status, reason, message),
// the finalizers and whether deletionGracePeriodSeconds is set.
func crdDeletionStep(ev event) string {
	term := "-"
	conds, _ := field(ev.Object, "status", "conditions")
	list, _ := conds.([]any)
	for _, c := range list {
		if m, ok := c.(map[string]any); ok && m["type"] == "Terminating" {
			term = fmt.Sprintf("%v/%v/%v", m["status"], m["reason"], m["message"])
		}
	}
	fins, _ := field(ev.Object, "metadata", "finalizers")
	return fmt.Sprintf("%s term=%s finalizers=%s grace=%v", ev.Type, term,
		strings.Join(toStrings(fins), ","), has(ev.Object, "metadata", "deletionGracePeriodSeconds"))
}

// TestCRDDeletionSequence checks, as a watcher of the CRD sees them, the
// steps of a CRD's deletion with a few objects: the Terminating condition
// goes pending (at the DELETE), in progress (the cleanup started), then,
// with another finalizer holding the CRD, completed (status False) in the
// same write that drops the cleanup finalizer; without, the CRD goes
// (DELETED shows it in progress). No deletionGracePeriodSeconds is set.
func TestCRDDeletionSequence(t *testing.T) {
	t.Parallel()
	e := target
	const (
		cleanup    = "customresourcecleanup.apiextensions.k8s.io"
		hold       = "conformance.kapi.dev/hold"
		pending    = "True/InstanceDeletionPending/CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
		inProgress = "True/InstanceDeletionInProgress/CustomResource deletion is in progress"
		completed  = "False/InstanceDeletionCompleted/removed all instances"
	)
	cases := []struct {
		name string
		hold bool
		want []string
	}{{
		"held", true, []string{
			"MODIFIED term=" + pending + " finalizers=" + hold + "," + cleanup + " grace=false",
			"MODIFIED term=" + inProgress + " finalizers=" + hold + "," + cleanup + " grace=false",
			"MODIFIED term=" + completed + " finalizers=" + hold + " grace=false",
		},
	}, {
		"free", false, []string{
			"MODIFIED term=" + pending + " finalizers=" + cleanup + " grace=false",
			"MODIFIED term=" + inProgress + " finalizers=" + cleanup + " grace=false",
			"DELETED term=" + inProgress + " finalizers=" + cleanup + " grace=false",
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ns := e.namespace(t)
			group, _ := e.createCRD(t)
			name := "widgets." + group
			base := "/apis/" + group + "/v1/namespaces/" + ns + "/widgets"
			for _, n := range []string{"a", "b", "c"} {
				w := widget(n, obj{"size": 1})
				w["apiVersion"] = group + "/v1"
				expect(t, e.post(t, base, w), http.StatusCreated)
			}
			crd := expect(t, e.get(t, crdPath+"/"+name), http.StatusOK)
			if c.hold {
				crd = e.modify(t, crdPath+"/"+name, false, func(o obj) {
					o["metadata"].(map[string]any)["finalizers"] = []any{hold}
				})
				t.Cleanup(func() {
					e.modify(t, crdPath+"/"+name, true, func(o obj) { o["metadata"].(map[string]any)["finalizers"] = nil })
				})
			}
			ws := e.watch(t, crdPath+q("watch", "1", "resourceVersion", rv(crd), "fieldSelector", "metadata.name="+name))
			marked := expect(t, e.del(t, crdPath+"/"+name, nil), http.StatusOK)
			if has(marked, "metadata", "deletionGracePeriodSeconds") {
				t.Errorf("DELETE answered deletionGracePeriodSeconds: %s", compact(marked["metadata"]))
			}
			var got []string
			for len(got) < len(c.want) {
				got = append(got, crdDeletionStep(ws.nextChange(t, 30*time.Second)))
			}
			for i := range c.want {
				if got[i] != c.want[i] {
					t.Errorf("event %d:\n%s\nwant\n%s", i, got[i], c.want[i])
				}
			}
			if !c.hold {
				return
			}
			e.modify(t, crdPath+"/"+name, false, func(o obj) { o["metadata"].(map[string]any)["finalizers"] = nil })
			want := "DELETED term=" + completed + " finalizers=" + hold + " grace=false"
			if got := crdDeletionStep(ws.nextChange(t, 30*time.Second)); got != want {
				t.Errorf("after the hold goes:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
