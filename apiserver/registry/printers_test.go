package registry

import (
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	discoveryv1 "github.com/kapi-dev/kapi/api/discovery/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
)

var now = time.Date(2026, 11, 21, 19, 1, 9, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-3 * time.Second, "<invalid>"},
		{-1500 * time.Millisecond, "0s"},
		{0, "0s"},
		{5 * time.Second, "5s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{3*time.Minute + 2*time.Second, "3m2s"},
		{9*time.Minute + 59*time.Second, "9m59s"},
		{10*time.Minute + 30*time.Second, "10m"},
		{179 * time.Minute, "179m"},
		{3 * time.Hour, "3h"},
		{5*time.Hour + 10*time.Minute, "5h10m"},
		{8*time.Hour + 10*time.Minute, "8h"},
		{47 * time.Hour, "47h"},
		{48 * time.Hour, "2d"},
		{3*24*time.Hour + 4*time.Hour, "3d4h"},
		{8 * 24 * time.Hour, "8d"},
		{400 * 24 * time.Hour, "400d"},
		{2*365*24*time.Hour + 30*24*time.Hour, "2y30d"},
		{3 * 365 * 24 * time.Hour, "3y"},
		{9*365*24*time.Hour + 100*24*time.Hour, "9y"},
	}
	for _, c := range cases {
		if got := HumanDuration(c.d); got != c.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := Age(metav1.Time{}, now); got != "<unknown>" {
		t.Errorf("Age(zero) = %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
}

func TestPodRow(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: ago(7 * time.Second)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	cases := []struct {
		name   string
		mod    func(p *corev1.Pod)
		cells  []any
		conds  bool
		status string
	}{
		{name: "pending", mod: func(p *corev1.Pod) { p.Status = corev1.PodStatus{Phase: corev1.PodPending} },
			cells: []any{"p", "0/2", "Pending", "0", "7s", "<none>", "<none>", "<none>", "<none>"}},
		{name: "running, one ready, restarts with time", mod: func(p *corev1.Pod) {
			p.Spec.NodeName = "node-a"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.244.0.7"}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running(), RestartCount: 2,
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: ago(9*time.Hour + 2*time.Minute)}}},
				{Name: "b", State: running()},
			}
		}, cells: []any{"p", "1/2", "Running", "2 (9h ago)", "7s", "10.244.0.7", "node-a", "<none>", "<none>"}},
		{name: "crash loop", mod: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", RestartCount: 4, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
			}
		}, status: "CrashLoopBackOff"},
		{name: "exit code", mod: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}},
			}
		}, status: "ExitCode:3"},
		{name: "signal", mod: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}},
			}
		}, status: "Signal:9"},
		{name: "completed", mod: func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			}
		}, status: "Completed", conds: true},
		{name: "completed but one still running and ready", mod: func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running()},
				{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			}
		}, status: "Running"},
		{name: "completed, running, not ready", mod: func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "a", Ready: true, State: running()},
				{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
			}
		}, status: "NotReady"},
		{name: "init waiting", mod: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
				{Name: "i2", State: running()},
			}
		}, status: "Init:1/2"},
		{name: "init crash", mod: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
			}
		}, status: "Init:CrashLoopBackOff"},
		{name: "init failed", mod: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{Name: "i1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}},
			}
		}, status: "Init:ExitCode:2"},
		{name: "sidecar counts as a container", mod: func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "side", RestartPolicy: &always}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "side", Started: ptr(true), Ready: true, State: running(), RestartCount: 1}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", Ready: true, State: running()}, {Name: "b", Ready: true, State: running()}}
		}, cells: []any{"p", "3/3", "Running", "1", "7s", "<none>", "<none>", "<none>", "<none>"}},
		{name: "terminating", mod: func(p *corev1.Pod) {
			ts := ago(0)
			p.DeletionTimestamp = &ts
		}, status: "Terminating"},
		{name: "node lost", mod: func(p *corev1.Pod) {
			ts := ago(0)
			p.DeletionTimestamp = &ts
			p.Status.Reason = "NodeLost"
		}, status: "Unknown"},
		{name: "scheduling gated", mod: func(p *corev1.Pod) {
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Reason: "SchedulingGated"}}}
		}, status: "SchedulingGated"},
		{name: "readiness gates", mod: func(p *corev1.Pod) {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/a"}, {ConditionType: "example.com/b"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/a", Status: corev1.ConditionTrue}, {Type: "example.com/b", Status: corev1.ConditionFalse}}
			p.Status.NominatedNodeName = "node-b"
		}, cells: []any{"p", "0/2", "Running", "0", "7s", "<none>", "<none>", "node-b", "1/2"}},
	}
	pr := builtinPrinters["/pods"]
	for _, c := range cases {
		p := base()
		c.mod(p)
		cells, conds := pr.Row(p, now)
		if len(cells) != len(pr.Columns) {
			t.Errorf("%s: %d cells for %d columns", c.name, len(cells), len(pr.Columns))
		}
		if c.cells != nil && !reflect.DeepEqual(cells, c.cells) {
			t.Errorf("%s: cells %#v, want %#v", c.name, cells, c.cells)
		}
		if c.status != "" && cells[2] != c.status {
			t.Errorf("%s: status %v, want %s", c.name, cells[2], c.status)
		}
		if (conds != nil) != c.conds {
			t.Errorf("%s: conditions %v", c.name, conds)
		}
	}
}

func TestBuiltinRows(t *testing.T) {
	created := ago(6 * time.Second)
	cases := []struct {
		res  string
		obj  Object
		want []any
	}{
		{"/configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm1", CreationTimestamp: created},
			Data: map[string]string{"a": "", "b": ""}, BinaryData: map[string][]byte{"bin": nil}}, []any{"cm1", int64(3), "6s"}},
		{"/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", CreationTimestamp: created},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, []any{"ns", "Active", "6s"}},
		{"/secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created}, Type: "Opaque",
			Data: map[string][]byte{"k": nil}}, []any{"s", "Opaque", int64(1), "6s"}},
		// v1.37 prints no Secrets column (testdata/golden-1.37/kinds/table-core-serviceaccounts).
		{"/serviceaccounts", &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: created},
			Secrets: []corev1.ObjectReference{{Name: "t"}}}, []any{"default", "6s"}},
		{"coordination.k8s.io/leases", &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l", CreationTimestamp: created},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("me")}}, []any{"l", "me", "6s"}},
		{"apps/deployments", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: created},
			Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(3)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "In", Values: []string{"b", "a"}}}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}, {Name: "side", Image: "busybox"}}}}},
			Status: appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 2, AvailableReplicas: 1}},
			[]any{"web", "1/3", int64(2), int64(1), "6s", "app,side", "nginx:1.27,busybox", "app=web,tier in (a,b)"}},
		{"/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", CreationTimestamp: created,
			Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x", "kubernetes.io/role": "edge"}},
			Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.1"}},
				NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.32.2", ContainerRuntimeVersion: "containerd://1.7"}}},
			[]any{"node-a", "NotReady,SchedulingDisabled", "control-plane,edge", "6s", "v1.32.2", "192.0.2.10", "203.0.113.1", "<unknown>", "<unknown>", "containerd://1.7"}},
		// The Kernel-Version cell carries the architecture since v1.33, as a
		// v1.37.2 kube-apiserver answers (testdata/golden-1.37/67-table-nodes).
		{"/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "arm", CreationTimestamp: created},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1.0", Architecture: "arm64"}}},
			[]any{"arm", "Unknown", "<none>", "6s", "", "<none>", "<none>", "<unknown>", "6.1.0 (arm64)", "<unknown>"}},
		{"/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "arch-only", CreationTimestamp: created},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{Architecture: "arm64"}}},
			[]any{"arch-only", "Unknown", "<none>", "6s", "", "<none>", "<none>", "<unknown>", "<unknown> (arm64)", "<unknown>"}},
		{"/nodes", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare", CreationTimestamp: created}},
			[]any{"bare", "Unknown", "<none>", "6s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
		{"/services", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", CreationTimestamp: created},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.96.0.10"}, Selector: map[string]string{"b": "2", "a": "1"},
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: "TCP"}, {Port: 53, Protocol: "UDP"}}}},
			[]any{"svc", "NodePort", "10.96.0.10", "<none>", "80:30080/TCP,53/UDP", "6s", "a=1,b=2"}},
		{"/services", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lb", CreationTimestamp: created},
			Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalIPs: []string{"198.51.100.2"}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.example"}, {IP: "198.51.100.1"}}}}},
			[]any{"lb", "LoadBalancer", "<none>", "198.51.100.1,lb.example,198.51.100.2", "<none>", "6s", "<none>"}},
		{"/services", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", CreationTimestamp: created},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example"}},
			[]any{"ext", "ExternalName", "<none>", "db.example", "<none>", "6s", "<none>"}},
		{"/endpoints", &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", CreationTimestamp: created},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.1"}}, Ports: []corev1.EndpointPort{{Name: "https", Port: 17443}}}}},
			[]any{"kubernetes", "192.0.2.1:17443", "6s"}},
		{"/endpoints", &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "many", CreationTimestamp: created},
			Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}, Ports: []corev1.EndpointPort{{Port: 80}, {Port: 81}}},
				{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.3"}}}}},
			[]any{"many", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:81 + 2 more...", "6s"}},
		{"/endpoints", &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "empty", CreationTimestamp: created}},
			[]any{"empty", "<none>", "6s"}},
		{"discovery.k8s.io/endpointslices", &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", CreationTimestamp: created},
			AddressType: "IPv4", Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.1"}}},
			Ports: []discoveryv1.EndpointPort{{Name: ptr("https"), Port: ptr(int32(17443))}, {Name: ptr("dns")}, {}}},
			[]any{"kubernetes", "IPv4", "17443,dns,*", "192.0.2.1", "6s"}},
		{"discovery.k8s.io/endpointslices", &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "none", CreationTimestamp: created}, AddressType: "IPv6"},
			[]any{"none", "IPv6", "<unset>", "<unset>", "6s"}},
		{"/events", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", CreationTimestamp: created},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "rich", FieldPath: "spec.containers{app}"},
			Reason:         "Started", Message: " Started container \n", Type: "Normal",
			Source:         corev1.EventSource{Component: "kubelet", Host: "node-a"},
			FirstTimestamp: ago(3 * time.Minute), LastTimestamp: ago(5 * time.Second), Count: 2},
			[]any{"5s", "Normal", "Started", "pod/rich", "spec.containers{app}", "kubelet, node-a", "Started container", "3m", int64(2), "e1"}},
		{"/events", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e2"}, InvolvedObject: corev1.ObjectReference{Kind: "Node"},
			EventTime: metav1.NewMicroTime(now.Add(-time.Minute)), ReportingController: "ctrl",
			Series: &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(now.Add(-10 * time.Second))}},
			[]any{"10s", "", "", "node", "", "ctrl", "", "60s", int64(7), "e2"}},
	}
	for _, c := range cases {
		p := builtinPrinters[c.res]
		cells, _ := p.Row(c.obj, now)
		if !reflect.DeepEqual(cells, c.want) {
			t.Errorf("%s %s: cells %#v,\n want %#v", c.res, c.obj.GetName(), cells, c.want)
		}
		if len(cells) != len(p.Columns) {
			t.Errorf("%s: %d cells for %d columns", c.res, len(cells), len(p.Columns))
		}
	}
}

func TestLabelSelectorString(t *testing.T) {
	cases := []struct {
		sel  *metav1.LabelSelector
		want string
	}{
		{nil, "<none>"},
		{&metav1.LabelSelector{}, ""},
		{&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Exists"}, {Key: "b", Operator: "DoesNotExist"}, {Key: "c", Operator: "NotIn", Values: []string{"x"}}}}, "a,!b,c notin (x)"},
		{&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}, "<invalid>"},
	}
	for _, c := range cases {
		if got := LabelSelectorString(c.sel); got != c.want {
			t.Errorf("LabelSelectorString(%v) = %q, want %q", c.sel, got, c.want)
		}
	}
}

func TestPrinterFor(t *testing.T) {
	g := Builtin()
	for _, r := range g.ForGroupVersion("", "v1") {
		// kube-apiserver has no LimitRange printer: Name and Created At,
		// "rows":null when empty (table-core-limitranges).
		if r.Resource == "limitranges" {
			if PrinterFor(r) != defaultPrinter {
				t.Errorf("limitranges has a printer of its own")
			}
			continue
		}
		if PrinterFor(r) == defaultPrinter && !r.NotStored { // bindings are only created
			t.Errorf("%s has no printer", r.Resource)
		}
	}
	crd := &Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	p := PrinterFor(crd)
	if p != defaultPrinter || p.Columns[1].Name != "Created At" || p.Columns[1].Type != "date" {
		t.Errorf("CRD printer columns %v", p.Columns)
	}
	cells, _ := p.Row(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: ago(time.Hour)}}, now)
	if want := []any{"x", "2026-11-21T18:01:09Z"}; !reflect.DeepEqual(cells, want) {
		t.Errorf("default cells %v, want %v", cells, want)
	}
}

func TestCustomPrinter(t *testing.T) {
	cols := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.size"},
		{Name: "Color", Type: "string", JSONPath: ".spec.color", Description: "the colour", Priority: 1},
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		{Name: "Tags", Type: "string", JSONPath: ".spec.tags"},
		{Name: "Missing", Type: "string", JSONPath: ".spec.nothing"},
		{Name: "Wrong", Type: "integer", JSONPath: ".spec.color"},
		{Name: "BadDate", Type: "date", JSONPath: ".spec.color"},
		{Name: "Broken", Type: "string", JSONPath: ".spec["},
		{Name: "Float", Type: "string", JSONPath: ".spec.ratio"},
	}
	p := PrinterFor(&Resource{Custom: true, PrinterColumns: cols})
	if len(p.Columns) != len(cols)+1 || p.Columns[0].Name != "Name" {
		t.Fatalf("columns %v", p.Columns)
	}
	if d := p.Columns[1].Description; d != "Custom resource definition column (in JSONPath format): .spec.size" {
		t.Errorf("default description %q", d)
	}
	if c := p.Columns[3]; c.Description != "the colour" || c.Priority != 1 {
		t.Errorf("column %+v", c)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "w1", "creationTimestamp": "2026-11-21T19:01:04Z"},
		"spec":     map[string]any{"size": int64(3), "color": "red", "on": true, "tags": []any{"a", "b"}, "ratio": 2.5},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}}
	cells, _ := p.Row(u, now)
	want := []any{"w1", int64(3), float64(3), "red", "True", "5s", true, `["a","b"]`, nil, nil, "<invalid>", nil, "2.5"}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %#v,\n want %#v", cells, want)
	}

	// No columns: Name and Age.
	p = PrinterFor(&Resource{Custom: true})
	if len(p.Columns) != 2 || p.Columns[1].Name != "Age" || p.Columns[1].Type != "date" {
		t.Errorf("default custom columns %v", p.Columns)
	}
	if cells, _ := p.Row(u, now); !reflect.DeepEqual(cells, []any{"w1", "5s"}) {
		t.Errorf("default custom cells %v", cells)
	}
}
