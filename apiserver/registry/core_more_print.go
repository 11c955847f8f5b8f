package registry

import (
	"strings"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/selector"
)

// Table columns of the kinds of core_more.go, as kube-apiserver v1.37 prints
// them (testdata/golden-1.37/kinds/table-core-*.txt). LimitRanges have no
// printer of their own: the default Name / Created At columns.

var resourceQuotaPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
		col("Limit", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		rq := o.(*corev1.ResourceQuota)
		var request, limit []string
		for _, k := range resourceKeys(rq.Status.Hard) {
			used, hard := rq.Status.Used[corev1.ResourceName(k)], rq.Status.Hard[corev1.ResourceName(k)]
			cell := k + ": " + used.String() + "/" + hard.String()
			if first, _, ok := strings.Cut(k, "."); ok && first == "limits" {
				limit = append(limit, cell)
			} else {
				request = append(request, cell)
			}
		}
		return []any{rq.Name, strings.Join(request, ", "), strings.Join(limit, ", "), Age(rq.CreationTimestamp, now)}, nil
	},
}

// accessModesString abbreviates access modes as kubectl does ("RWO,ROX").
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"}} {
		for _, x := range modes {
			if x == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

// betaStorageClassAnnotation names a volume's or claim's class before
// storageClassName existed; it wins over the field.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

func storageClassOf(annotations map[string]string, field string) string {
	if c, ok := annotations[betaStorageClassAnnotation]; ok {
		return c
	}
	return field
}

func orUnset(p *string) string {
	if p == nil || *p == "" {
		return "<unset>"
	}
	return *p
}

func volumeModeString(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

var persistentVolumePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Capacity", "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity"),
		col("Access Modes", "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes"),
		col("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming"),
		col("Status", "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase"),
		col("Claim", "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding"),
		col("StorageClass", "StorageClass of the pv"),
		col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
		col("Reason", "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."),
		ageColumn(),
		wideCol("VolumeMode", "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec."),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		pv := o.(*corev1.PersistentVolume)
		claim := ""
		if r := pv.Spec.ClaimRef; r != nil {
			claim = r.Namespace + "/" + r.Name
		}
		capacity := ""
		if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		} else {
			capacity = "0"
		}
		phase := string(pv.Status.Phase)
		if pv.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		return []any{pv.Name, capacity, accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
			phase, claim, storageClassOf(pv.Annotations, pv.Spec.StorageClassName), orUnset(pv.Spec.VolumeAttributesClassName),
			pv.Status.Reason, Age(pv.CreationTimestamp, now), volumeModeString(pv.Spec.VolumeMode)}, nil
	},
}

var persistentVolumeClaimPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "phase represents the current phase of PersistentVolumeClaim."),
		col("Volume", "volumeName is the binding reference to the PersistentVolume backing this claim."),
		col("Capacity", "capacity represents the actual resources of the underlying volume."),
		col("Access Modes", "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"),
		col("StorageClass", "StorageClass of the pvc"),
		col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
		ageColumn(),
		wideCol("VolumeMode", "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		pvc := o.(*corev1.PersistentVolumeClaim)
		phase := string(pvc.Status.Phase)
		if pvc.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		var capacity, modes string
		if pvc.Spec.VolumeName != "" {
			modes = accessModesString(pvc.Status.AccessModes)
			q := pvc.Status.Capacity[corev1.ResourceStorage]
			capacity = q.String()
		}
		class := ""
		if pvc.Spec.StorageClassName != nil {
			class = *pvc.Spec.StorageClassName
		}
		return []any{pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, storageClassOf(pvc.Annotations, class),
			orUnset(pvc.Spec.VolumeAttributesClassName), Age(pvc.CreationTimestamp, now), volumeModeString(pvc.Spec.VolumeMode)}, nil
	},
}

// containerNamesImages joins a pod spec's container names and images.
func containerNamesImages(s *corev1.PodSpec) (names, images string) {
	n := make([]string, len(s.Containers))
	im := make([]string, len(s.Containers))
	for i, c := range s.Containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}

// labelsString formats labels as kubectl does: "a=b,c=d", "<none>" when empty.
func labelsString(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	return selector.Set(m).String()
}

var podTemplatePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Containers", descContainers),
		col("Images", descImages),
		col("Pod Labels", "The labels for the pod template."),
	},
	Row: func(o Object, _ time.Time) ([]any, []metav1.TableRowCondition) {
		pt := o.(*corev1.PodTemplate)
		names, images := containerNamesImages(&pt.Template.Spec)
		return []any{pt.Name, names, images, labelsString(pt.Template.Labels)}, nil
	},
}

var replicationControllerPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Desired", Type: "integer", Description: "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"},
		{Name: "Current", Type: "integer", Description: "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller"},
		{Name: "Ready", Type: "integer", Description: "The number of ready replicas for this replication controller."},
		ageColumn(),
		wideCol("Containers", descContainers),
		wideCol("Images", descImages),
		wideCol("Selector", "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		rc := o.(*corev1.ReplicationController)
		var desired int64
		if rc.Spec.Replicas != nil {
			desired = int64(*rc.Spec.Replicas)
		}
		var names, images string
		if rc.Spec.Template != nil {
			names, images = containerNamesImages(&rc.Spec.Template.Spec)
		}
		return []any{rc.Name, desired, int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas), Age(rc.CreationTimestamp, now),
			names, images, labelsString(rc.Spec.Selector)}, nil
	},
}
