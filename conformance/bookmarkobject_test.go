package conformance

import (
	"strings"
	"testing"
	"time"
)

// TestInitialEventsEndObject checks the object of the bookmark that ends a
// streaming list's initial events, in an empty namespace: an empty object
// of the kind, as kube-apiserver converts its internal version to the
// served one (apps/v1 workloads then carry spec.replicas 0, a DaemonSet
// its template generation annotation "0"), with the initial-events-end
// annotation. A ReplicationController, whose internal spec.replicas is
// as optional as its served one, has none.
func TestInitialEventsEndObject(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	cases := []struct{ path, want string }{
		{"/apis/apps/v1/namespaces/" + ns + "/deployments",
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"replicas":0,"selector":null,"strategy":{},"template":{"metadata":{},"spec":{"containers":null}}},"status":{}}`},
		{"/apis/apps/v1/namespaces/" + ns + "/statefulsets",
			`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"replicas":0,"selector":null,"serviceName":"","template":{"metadata":{},"spec":{"containers":null}},"updateStrategy":{}},"status":{"availableReplicas":0,"replicas":0}}`},
		{"/apis/apps/v1/namespaces/" + ns + "/replicasets",
			`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}}},"status":{"replicas":0}}`},
		{"/apis/apps/v1/namespaces/" + ns + "/daemonsets",
			`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"annotations":{"deprecated.daemonset.template.generation":"0","k8s.io/initial-events-end":"true"}},"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"updateStrategy":{}},"status":{"currentNumberScheduled":0,"desiredNumberScheduled":0,"numberMisscheduled":0,"numberReady":0}}`},
		{"/apis/batch/v1/namespaces/" + ns + "/jobs",
			`{"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"template":{"metadata":{},"spec":{"containers":null}}},"status":{}}`},
		{"/api/v1/namespaces/" + ns + "/replicationcontrollers",
			`{"apiVersion":"v1","kind":"ReplicationController","metadata":{"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{},"status":{"replicas":0}}`},
	}
	for _, c := range cases {
		t.Run(c.path[strings.LastIndexByte(c.path, '/')+1:], func(t *testing.T) {
			w := e.watch(t, c.path+q("watch", "1", "sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan", "allowWatchBookmarks", "true"))
			defer w.close()
			ev := w.next(t, 10*time.Second)
			if ev.Type != "BOOKMARK" {
				t.Fatalf("first event %s, want the BOOKMARK ending the initial events", ev)
			}
			o := clone(ev.Object)
			md := o["metadata"].(obj)
			if rv(o) == "" {
				t.Errorf("bookmark without resourceVersion: %s", compact(o))
			}
			delete(md, "resourceVersion")
			if got := compact(o); got != c.want {
				t.Errorf("bookmark object\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
