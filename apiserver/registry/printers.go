package registry

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/jsonpath"
	"github.com/kapi-dev/kapi/selector"
)

// Printer turns objects of one resource into the rows of a meta.k8s.io
// Table, as kube-apiserver v1.32 does for `kubectl get`: the same columns in
// the same order (the server always prints the wide set; priority 1 columns
// are the ones kubectl shows with -o wide) and the same cell values.
type Printer struct {
	// Columns are the column definitions, in cell order.
	Columns []metav1.TableColumnDefinition
	// Row returns the cells of obj (one per column) and the row conditions,
	// with ages measured at now.
	Row func(obj Object, now time.Time) (cells []any, conditions []metav1.TableRowCondition)
	// RowAnnotations, when set, are annotations a row's metadata leaves out:
	// kube-apiserver prints the metadata of its internal object, which
	// keeps some of what the versioned shape carries as annotations in
	// fields of its own (a DaemonSet's template generation).
	RowAnnotations []string
	// NullRows means an empty list prints "rows":null rather than "rows":[]
	// (kube-apiserver's default printer, for kinds without columns of their
	// own, never allocates the slice).
	NullRows bool
	// Less, when set, orders a list's rows (a before b), as the printers
	// of kube-apiserver that sort their lists do (FlowSchemas by
	// matchingPrecedence, then name); nil keeps the list's order.
	Less func(a, b Object) bool
}

// Column descriptions kube-apiserver sends. Those of the ObjectMeta fields
// and of the columns captured in testdata/golden are Kubernetes' wording;
// the others are kapi's.
const (
	descName = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	descAge  = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"

	descNodeAddresses = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP)."
	descContainers    = "Names of each container in the template."
	descImages        = "Images referenced by each container in the template."
)

func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: descName}
}

func ageColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: descAge}
}

func col(name, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Description: desc}
}

func wideCol(name, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Description: desc, Priority: 1}
}

// PrinterFor returns the printer of a resource: Resource.Printer, or its own
// columns for the built-in kinds kube-apiserver has printers for, the additionalPrinterColumns
// for a custom resource (an Age column when it declares none), and the
// default Name / Created At columns otherwise (CustomResourceDefinitions
// themselves, for one).
func PrinterFor(r *Resource) *Printer {
	if r.Custom {
		return customPrinter(r.PrinterColumns)
	}
	if r.Printer != nil {
		return r.Printer
	}
	if p, ok := builtinPrinters[r.Group+"/"+r.Resource]; ok {
		return p
	}
	return defaultPrinter
}

var defaultPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Created At", Type: "date", Description: descAge},
	},
	Row: func(o Object, _ time.Time) ([]any, []metav1.TableRowCondition) {
		return []any{o.GetName(), o.GetCreationTimestamp().UTC().Format(time.RFC3339)}, nil
	},
	NullRows: true,
}

var builtinPrinters = map[string]*Printer{
	"/pods": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
			col("Status", "The aggregate status of the containers in this pod."),
			col("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
			ageColumn(),
			wideCol("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."),
			wideCol("Node", "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename"),
			wideCol("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled."),
			wideCol("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) { return podRow(o.(*corev1.Pod), now) },
	},
	"/configmaps": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Data", "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."),
			ageColumn(),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			cm := o.(*corev1.ConfigMap)
			return []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), Age(cm.CreationTimestamp, now)}, nil
		},
	},
	"/namespaces": {
		Columns: []metav1.TableColumnDefinition{nameColumn(), col("Status", "The status of the namespace"), ageColumn()},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			ns := o.(*corev1.Namespace)
			return []any{ns.Name, string(ns.Status.Phase), Age(ns.CreationTimestamp, now)}, nil
		},
	},
	"/secrets": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Type", "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
			col("Data", "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
			ageColumn(),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			s := o.(*corev1.Secret)
			return []any{s.Name, string(s.Type), int64(len(s.Data)), Age(s.CreationTimestamp, now)}, nil
		},
	},
	"/serviceaccounts": {
		// v1.37 prints no Secrets column any more (v1.32 did).
		Columns: []metav1.TableColumnDefinition{nameColumn(), ageColumn()},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			sa := o.(*corev1.ServiceAccount)
			return []any{sa.Name, Age(sa.CreationTimestamp, now)}, nil
		},
	},
	"/services": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Type", "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types"),
			col("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"),
			col("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system."),
			col("Port(s)", "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies"),
			ageColumn(),
			wideCol("Selector", "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/"),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			return serviceRow(o.(*corev1.Service), now), nil
		},
	},
	"/nodes": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Status", "The status of the node"),
			col("Roles", "The roles of the node"),
			ageColumn(),
			col("Version", "Kubelet Version reported by the node."),
			wideCol("Internal-IP", descNodeAddresses),
			wideCol("External-IP", descNodeAddresses),
			wideCol("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
			wideCol("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
			wideCol("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			return nodeRow(o.(*corev1.Node), now), nil
		},
	},
	"/events": {
		Columns: []metav1.TableColumnDefinition{
			col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
			col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
			col("Reason", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
			col("Object", "The object that this event is about."),
			wideCol("Subobject", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object."),
			wideCol("Source", "The component reporting this event. Should be a short machine understandable string."),
			col("Message", "A human-readable description of the status of this operation."),
			wideCol("First Seen", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"),
			wideCol("Count", "The number of times this event has occurred."),
			{Name: "Name", Type: "string", Format: "name", Description: descName, Priority: 1},
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			return eventRow(o.(*corev1.Event), now), nil
		},
	},
	"apps/deployments": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Ready", "Number of the pod with ready state"),
			col("Up-to-date", "Total number of non-terminating pods targeted by this deployment that have the desired template spec."),
			col("Available", "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment."),
			ageColumn(),
			wideCol("Containers", descContainers),
			wideCol("Images", descImages),
			wideCol("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels."),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			return deploymentRow(o.(*appsv1.Deployment), now), nil
		},
	},
	"coordination.k8s.io/leases": {
		Columns: []metav1.TableColumnDefinition{
			nameColumn(),
			col("Holder", "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field."),
			ageColumn(),
		},
		Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
			l := o.(*coordinationv1.Lease)
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return []any{l.Name, holder, Age(l.CreationTimestamp, now)}, nil
		},
	},
}

// Age is how kubectl prints the time since t: HumanDuration of now - t, or
// "<unknown>" for the zero time.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return HumanDuration(now.Sub(t.Time))
}

func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return HumanDuration(now.Sub(t.Time))
}

// HumanDuration renders d the way kubectl prints ages: two significant units
// at most, precision falling as the duration grows ("45s", "3m2s", "15m",
// "5h10m", "20h", "3d4h", "40d", "2y30d", "9y"). Up to two seconds in the
// future is clock skew and reads "0s"; further in the future is "<invalid>".
func HumanDuration(d time.Duration) string {
	if seconds := int(d.Seconds()); seconds < -1 {
		return "<invalid>"
	} else if seconds < 0 {
		return "0s"
	} else if seconds < 60*2 {
		return strconv.Itoa(seconds) + "s"
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	} else if minutes < 60*3 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := minutes % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 24*8:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*2:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*8:
		if dy := (hours / 24) % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, dy)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

var (
	podSucceededConditions = []metav1.TableRowCondition{{Type: "Completed", Status: "True", Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions    = []metav1.TableRowCondition{{Type: "Completed", Status: "True", Reason: string(corev1.PodFailed), Message: "The pod failed."}}
)

func isRestartableInit(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) (corev1.ConditionStatus, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status, true
		}
	}
	return "", false
}

// podRow is kubectl's pod printer: READY counts ready containers (and
// started, ready restartable init containers) against all containers; STATUS
// is the phase refined by the init containers' and containers' states
// (Init:N/M, Init:<reason>, CrashLoopBackOff, Completed, ExitCode:N,
// Terminating...); RESTARTS adds the time since the last restart.
func podRow(p *corev1.Pod, now time.Time) ([]any, []metav1.TableRowCondition) {
	restarts, sidecarRestarts := 0, 0
	total := len(p.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart time.Time

	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}
	var conds []metav1.TableRowCondition
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		conds = podSucceededConditions
	case corev1.PodFailed:
		conds = podFailedConditions
	}

	inits := make(map[string]*corev1.Container, len(p.Spec.InitContainers))
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		inits[c.Name] = c
		if isRestartableInit(c) {
			total++
		}
	}
	later := func(t *time.Time, st corev1.ContainerState) {
		if st.Terminated != nil && st.Terminated.FinishedAt.After(*t) {
			*t = st.Terminated.FinishedAt.Time
		}
	}

	initializing := false
	for i, cs := range p.Status.InitContainerStatuses {
		restarts += int(cs.RestartCount)
		later(&lastRestart, cs.LastTerminationState)
		sidecar := isRestartableInit(inits[cs.Name])
		if sidecar {
			sidecarRestarts += int(cs.RestartCount)
			later(&lastSidecarRestart, cs.LastTerminationState)
		}
		switch t, w := cs.State.Terminated, cs.State.Waiting; {
		case t != nil && t.ExitCode == 0:
			continue
		case sidecar && cs.Started != nil && *cs.Started:
			if cs.Ready {
				ready++
			}
			continue
		case t != nil:
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case w != nil && w.Reason != "" && w.Reason != "PodInitializing":
			reason = "Init:" + w.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(p.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if initialized, _ := podCondition(p, corev1.PodInitialized); !initializing || initialized == corev1.ConditionTrue {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		hasRunning := false
		for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := p.Status.ContainerStatuses[i]
			restarts += int(cs.RestartCount)
			later(&lastRestart, cs.LastTerminationState)
			switch t, w := cs.State.Terminated, cs.State.Waiting; {
			case w != nil && w.Reason != "":
				reason = w.Reason
			case t != nil && t.Reason != "":
				reason = t.Reason
			case t != nil && t.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", t.Signal)
			case t != nil:
				reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" && hasRunning {
			if st, _ := podCondition(p, corev1.PodReady); st == corev1.ConditionTrue {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	if p.DeletionTimestamp != nil && p.Status.Reason == "NodeLost" {
		reason = "Unknown"
	} else if p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		reason = "Terminating"
	}

	restartsCell := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, Age(metav1.NewTime(lastRestart), now))
	}

	ip := "<none>"
	if len(p.Status.PodIPs) > 0 && p.Status.PodIPs[0].IP != "" {
		ip = p.Status.PodIPs[0].IP
	}
	gates := "<none>"
	if len(p.Spec.ReadinessGates) > 0 {
		n := 0
		for _, g := range p.Spec.ReadinessGates {
			if st, _ := podCondition(p, g.ConditionType); st == corev1.ConditionTrue {
				n++
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(p.Spec.ReadinessGates))
	}
	return []any{p.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsCell, Age(p.CreationTimestamp, now),
		ip, orNone(p.Spec.NodeName), orNone(p.Status.NominatedNodeName), gates}, conds
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// nodeRow: STATUS is Ready, NotReady or Unknown (no Ready condition), with
// SchedulingDisabled for a cordoned node; ROLES come from
// node-role.kubernetes.io/<role> labels and the kubernetes.io/role label.
func nodeRow(n *corev1.Node, now time.Time) []any {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				status = []string{"Ready"}
			} else {
				status = []string{"NotReady"}
			}
		}
	}
	if len(status) == 0 {
		status = []string{"Unknown"}
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	roleSet := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roleSet[r] = true
			}
		case k == "kubernetes.io/role" && v != "":
			roleSet[v] = true
		}
	}
	roles := make([]string, 0, len(roleSet))
	for r := range roleSet {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	address := func(t corev1.NodeAddressType) string {
		for _, a := range n.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	info := n.Status.NodeInfo
	kernel := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")" // since v1.33
	}
	return []any{n.Name, strings.Join(status, ","), orNone(strings.Join(roles, ",")), Age(n.CreationTimestamp, now),
		info.KubeletVersion, address(corev1.NodeInternalIP), address(corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernel, orUnknown(info.ContainerRuntimeVersion)}
}

func deploymentRow(d *appsv1.Deployment, now time.Time) []any {
	var desired int32
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	names := make([]string, len(d.Spec.Template.Spec.Containers))
	images := make([]string, len(d.Spec.Template.Spec.Containers))
	for i, c := range d.Spec.Template.Spec.Containers {
		names[i], images[i] = c.Name, c.Image
	}
	return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, desired), int64(d.Status.UpdatedReplicas),
		int64(d.Status.AvailableReplicas), Age(d.CreationTimestamp, now),
		strings.Join(names, ","), strings.Join(images, ","), LabelSelectorString(d.Spec.Selector)}
}

// LabelSelectorString renders a metav1.LabelSelector as kubectl does
// ("app=web,tier in (a,b)"): "<none>" for a nil selector, "" for an empty
// one, "<invalid>" when it cannot be converted.
func LabelSelectorString(ls *metav1.LabelSelector) string {
	if ls == nil {
		return "<none>"
	}
	sel, err := selector.FromLabelSelector(ls)
	if err != nil {
		return "<invalid>"
	}
	return sel.String()
}

func serviceRow(s *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	if len(s.Spec.ClusterIPs) > 0 {
		clusterIP = s.Spec.ClusterIPs[0]
	}
	var external string
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		external = orNone(strings.Join(s.Spec.ExternalIPs, ","))
	case corev1.ServiceTypeLoadBalancer:
		set := map[string]bool{}
		for _, in := range s.Status.LoadBalancer.Ingress {
			if in.IP != "" {
				set[in.IP] = true
			} else if in.Hostname != "" {
				set[in.Hostname] = true
			}
		}
		lb := make([]string, 0, len(set))
		for k := range set {
			lb = append(lb, k)
		}
		sort.Strings(lb)
		all := append(lb, s.Spec.ExternalIPs...)
		external = strings.Join(all, ",")
		if external == "" {
			external = "<pending>"
		}
	case corev1.ServiceTypeExternalName:
		external = s.Spec.ExternalName
	default:
		external = "<unknown>"
	}
	ports := make([]string, len(s.Spec.Ports))
	for i, p := range s.Spec.Ports {
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		} else {
			ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		}
	}
	sel := "<none>"
	if len(s.Spec.Selector) > 0 {
		sel = selector.Set(s.Spec.Selector).String()
	}
	return []any{s.Name, string(s.Spec.Type), clusterIP, external, orNone(strings.Join(ports, ",")),
		Age(s.CreationTimestamp, now), sel}
}

func eventRow(e *corev1.Event, now time.Time) []any {
	first := Age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := Age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	component, host := e.Source.Component, e.Source.Host
	if component == "" {
		component = e.ReportingController
	}
	if host == "" {
		host = e.ReportingInstance
	}
	source := component
	if host != "" {
		source += ", " + host
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message),
		first, int64(count), e.Name}
}

// customPrinter is kube-apiserver's printer for custom resources: Name, then
// one column per additionalPrinterColumn, whose cell is the first value its
// JSONPath selects, converted to the column's type (nil when there is none
// or it does not convert).
func customPrinter(cols []apiextensionsv1.CustomResourceColumnDefinition) *Printer {
	if len(cols) == 0 {
		cols = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", Description: descAge, JSONPath: ".metadata.creationTimestamp"}}
	}
	p := &Printer{Columns: []metav1.TableColumnDefinition{nameColumn()}}
	paths := make([]*jsonpath.Path, len(cols))
	types := make([]string, len(cols))
	for i, c := range cols {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		p.Columns = append(p.Columns, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format,
			Description: desc, Priority: c.Priority})
		paths[i], _ = jsonpath.Parse(c.JSONPath) // nil (an empty cell) if it does not parse
		types[i] = c.Type
	}
	p.Row = func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		cells := make([]any, 1, 1+len(paths))
		cells[0] = o.GetName()
		var content map[string]any
		if u, ok := o.(*unstructured.Unstructured); ok {
			content = u.Object
		} else if b, err := json.Marshal(o); err == nil {
			_ = json.Unmarshal(b, &content)
		}
		for i, path := range paths {
			var v any
			var ok bool
			if path != nil {
				v, ok = path.First(content)
			}
			if !ok {
				cells = append(cells, nil)
				continue
			}
			cells = append(cells, customCell(types[i], v, now))
		}
		return cells, nil
	}
	return p
}

// customCell converts a JSONPath result to a cell of a column's type.
func customCell(typ string, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	switch typ {
	case "string":
		switch v := v.(type) {
		case string:
			return v
		case map[string]any, []any:
			b, err := json.Marshal(v)
			if err != nil {
				return nil
			}
			return string(b)
		}
		return fmt.Sprint(v)
	case "integer":
		switch v := v.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		}
	case "number":
		switch v := v.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			if s == "" {
				return "<unknown>"
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return Age(metav1.NewTime(t), now)
		}
	}
	return nil
}
