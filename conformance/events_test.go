package conformance

import (
	"net/http"
	"testing"
)

// TestEventsTwoAPIs checks that core/v1 and events.k8s.io/v1 Events are
// one object under two resources: a write through either reads back
// through the other with the fields renamed (regarding as involvedObject,
// note as message), the new API validates strictly with the core field
// names in its causes and keeps the reporting fields immutable, and its
// field selectors are its own.
func TestEventsTwoAPIs(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	newAPI := "/apis/events.k8s.io/v1/namespaces/" + ns + "/events"
	core := "/api/v1/namespaces/" + ns + "/events"

	created := expect(t, e.post(t, newAPI, obj{
		"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": obj{"name": "web.1"},
		"eventTime": "2026-11-21T10:00:00.000000Z", "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
		"action": "Scale", "reason": "Scaled", "type": "Normal", "note": "scaled to 3",
		"regarding": obj{"kind": "Deployment", "namespace": ns, "name": "web"},
	}), http.StatusCreated)
	viaCore := expect(t, e.get(t, core+"/web.1"), http.StatusOK)
	if str(viaCore, "involvedObject", "name") != "web" || str(viaCore, "message") != "scaled to 3" ||
		str(viaCore, "reportingComponent") != "example.com/ctl" || str(viaCore, "metadata", "uid") != str(created, "metadata", "uid") {
		t.Errorf("read through core/v1: %s", compact(viaCore))
	}

	// A core write is seen through events.k8s.io.
	expect(t, e.post(t, core, obj{
		"metadata": obj{"name": "old.1"}, "involvedObject": obj{"kind": "Pod", "namespace": ns, "name": "p"},
		"reason": "Started", "message": "started", "type": "Normal", "count": 2, "source": obj{"component": "kubelet"},
	}), http.StatusCreated)
	viaNew := expect(t, e.get(t, newAPI+"/old.1"), http.StatusOK)
	if str(viaNew, "regarding", "name") != "p" || str(viaNew, "note") != "started" || str(viaNew, "deprecatedSource", "component") != "kubelet" {
		t.Errorf("read through events.k8s.io/v1: %s", compact(viaNew))
	}

	// Strict validation, with the core names.
	r := e.post(t, newAPI, obj{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": obj{"name": "bad"},
		"reportingController": "example.com/ctl", "reportingInstance": "ctl-1", "action": "A", "reason": "R", "type": "Bogus",
		"regarding": obj{"kind": "Pod", "namespace": ns, "name": "p"}})
	sameCauses(t, "strict create", causeList(t, r), []string{
		"eventTime: Required value",
		`type: Invalid value: "": has invalid value: Bogus`,
	})
	r = e.do(t, http.MethodPatch, newAPI+"/web.1", `{"reason":"Other"}`, "Content-Type", mergePatch)
	sameCauses(t, "immutable reason", causeList(t, r), []string{`reason: Invalid value: "Other": field is immutable`})

	// Field selectors of events.k8s.io/v1.
	list := expect(t, e.get(t, newAPI+"?fieldSelector=regarding.name%3Dweb"), http.StatusOK)
	if items, _ := list["items"].([]any); len(items) != 1 {
		t.Errorf("regarding.name=web: %d items", len(items))
	}
	checkStatus(t, e.get(t, newAPI+"?fieldSelector=involvedObject.name%3Dweb"), http.StatusBadRequest, "BadRequest",
		"field label not supported: involvedObject.name")
}
