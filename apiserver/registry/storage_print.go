package registry

import (
	"strings"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
)

// The Tables of storage.k8s.io/v1, as kube-apiserver v1.37.2 prints them
// (testdata/golden-1.37/kinds/table-storage.k8s.io-*). CSIStorageCapacities
// have no printer there: they get the default Name / Created At columns.

var csiDriverPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "AttachRequired", Type: "boolean", Description: "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable."},
		{Name: "PodInfoOnMount", Type: "boolean", Description: "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable."},
		{Name: "StorageCapacity", Type: "boolean", Description: "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable."},
		{Name: "TokenRequests", Type: "string", Description: "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically."},
		{Name: "RequiresRepublish", Type: "boolean", Description: "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container."},
		{Name: "Modes", Type: "string", Description: "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		d := o.(*storagev1.CSIDriver)
		s := d.Spec
		tokens := "<unset>"
		if len(s.TokenRequests) > 0 {
			audiences := make([]string, len(s.TokenRequests))
			for i, t := range s.TokenRequests {
				audiences[i] = t.Audience
			}
			tokens = strings.Join(audiences, ",")
		}
		modes := make([]string, len(s.VolumeLifecycleModes))
		for i, m := range s.VolumeLifecycleModes {
			modes[i] = string(m)
		}
		return []any{d.Name, boolValue(s.AttachRequired), boolValue(s.PodInfoOnMount), boolValue(s.StorageCapacity), tokens,
			boolValue(s.RequiresRepublish), strings.Join(modes, ","), Age(d.CreationTimestamp, now)}, nil
	},
}

// boolValue is *b, false when nil.
func boolValue(b *bool) bool { return b != nil && *b }

var csiNodePrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Drivers", Type: "integer", Description: "Drivers indicates the number of CSI drivers registered on the node"},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		n := o.(*storagev1.CSINode)
		return []any{n.Name, int64(len(n.Spec.Drivers)), Age(n.CreationTimestamp, now)}, nil
	},
}

var storageClassPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Provisioner", Type: "string", Description: "provisioner indicates the type of the provisioner."},
		{Name: "ReclaimPolicy", Type: "string", Description: "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete."},
		{Name: "VolumeBindingMode", Type: "string", Description: "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature."},
		{Name: "AllowVolumeExpansion", Type: "string", Description: "allowVolumeExpansion shows whether the storage class allow volume expand."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		sc := o.(*storagev1.StorageClass)
		name := sc.Name
		if isDefaultClass(sc.Annotations) {
			name += " (default)"
		}
		reclaim, binding := "Delete", "Immediate"
		if sc.ReclaimPolicy != nil {
			reclaim = string(*sc.ReclaimPolicy)
		}
		if sc.VolumeBindingMode != nil {
			binding = string(*sc.VolumeBindingMode)
		}
		return []any{name, sc.Provisioner, reclaim, binding, boolValue(sc.AllowVolumeExpansion), Age(sc.CreationTimestamp, now)}, nil
	},
}

// isDefaultClass reports whether a storage class's annotations make it the
// cluster's default, as kubectl's printer reads them (the beta annotation
// too).
func isDefaultClass(ann map[string]string) bool {
	return ann["storageclass.kubernetes.io/is-default-class"] == "true" || ann["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

var volumeAttachmentPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Attacher", Type: "string", Format: "name", Description: "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName()."},
		{Name: "PV", Type: "string", Description: "persistentVolumeName represents the name of the persistent volume to attach."},
		{Name: "Node", Type: "string", Description: "nodeName represents the node that the volume should be attached to."},
		{Name: "Attached", Type: "boolean", Description: "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		va := o.(*storagev1.VolumeAttachment)
		pv := ""
		if va.Spec.Source.PersistentVolumeName != nil {
			pv = *va.Spec.Source.PersistentVolumeName
		}
		return []any{va.Name, va.Spec.Attacher, pv, va.Spec.NodeName, va.Status.Attached, Age(va.CreationTimestamp, now)}, nil
	},
}

var volumeAttributesClassPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "DriverName", Type: "string", Description: "driverName is the name of the CSI driver This field is immutable."},
		ageColumn(),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*storagev1.VolumeAttributesClass)
		return []any{c.Name, c.DriverName, Age(c.CreationTimestamp, now)}, nil
	},
}
