package registry

import (
	"fmt"
	"strings"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The Table columns of the apps/v1 kinds besides Deployments, as
// kube-apiserver v1.37.2 prints them (testdata/golden-1.37/kinds/table-apps-*).

func intCol(name, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "integer", Description: desc}
}

// templateCells are the Containers and Images cells of a pod template:
// its containers' names and images, comma-separated.
func templateCells(spec *corev1.PodSpec) (names, images string) {
	n := make([]string, len(spec.Containers))
	im := make([]string, len(spec.Containers))
	for i, c := range spec.Containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// formatLabels prints a label set as kubectl does: sorted key=value pairs,
// "<none>" when empty.
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := sortedMapKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

var statefulSetPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Ready", "Number of the pod with ready state"),
		ageColumn(),
		wideCol("Containers", descContainers),
		wideCol("Images", descImages),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		s := o.(*appsv1.StatefulSet)
		var desired int32
		if s.Spec.Replicas != nil {
			desired = *s.Spec.Replicas
		}
		names, images := templateCells(&s.Spec.Template.Spec)
		return []any{s.Name, fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, desired), Age(s.CreationTimestamp, now), names, images}, nil
	},
}

var daemonSetPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		intCol("Desired", "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
		intCol("Current", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"),
		intCol("Ready", "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
		intCol("Up-to-date", "The total number of nodes that are running updated daemon pod"),
		intCol("Available", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
		col("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"),
		ageColumn(),
		wideCol("Containers", descContainers),
		wideCol("Images", descImages),
		wideCol("Selector", "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"),
	},
	RowAnnotations: []string{daemonSetTemplateGeneration},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		d := o.(*appsv1.DaemonSet)
		st := d.Status
		names, images := templateCells(&d.Spec.Template.Spec)
		return []any{d.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
			int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), formatLabels(d.Spec.Template.Spec.NodeSelector),
			Age(d.CreationTimestamp, now), names, images, LabelSelectorString(d.Spec.Selector)}, nil
	},
}

var replicaSetPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		intCol("Desired", "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset"),
		intCol("Current", "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset"),
		intCol("Ready", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."),
		ageColumn(),
		wideCol("Containers", descContainers),
		wideCol("Images", descImages),
		wideCol("Selector", "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		r := o.(*appsv1.ReplicaSet)
		var desired int32
		if r.Spec.Replicas != nil {
			desired = *r.Spec.Replicas
		}
		names, images := templateCells(&r.Spec.Template.Spec)
		return []any{r.Name, int64(desired), int64(r.Status.Replicas), int64(r.Status.ReadyReplicas), Age(r.CreationTimestamp, now),
			names, images, LabelSelectorString(r.Spec.Selector)}, nil
	},
}

var controllerRevisionPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Controller", "Controller of the object"),
		col("Revision", "Revision indicates the revision of the state represented by Data."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*appsv1.ControllerRevision)
		return []any{c.Name, controllerName(c.OwnerReferences), c.Revision, Age(c.CreationTimestamp, now)}, nil
	},
}

// controllerName prints an object's controller as kubectl does:
// "<kind>.<group>/<name>" in lower case ("statefulset.apps/web"), "<none>"
// when it has none.
func controllerName(refs []metav1.OwnerReference) string {
	for _, r := range refs {
		if r.Controller == nil || !*r.Controller {
			continue
		}
		kind := r.Kind
		if g, _, ok := strings.Cut(r.APIVersion, "/"); ok && g != "" {
			kind += "." + g
		}
		return strings.ToLower(kind) + "/" + r.Name
	}
	return "<none>"
}
