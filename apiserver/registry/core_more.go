package registry

import (
	"maps"
	"strconv"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The finalizer kube-apiserver's StorageObjectInUseProtection admission
// plugin (the server's, admission.go) puts on every new PersistentVolume.
const pvProtectionFinalizer = "kubernetes.io/pv-protection"

// coreMoreKinds are the rest of the legacy core group: limitranges,
// resourcequotas, persistentvolumes, persistentvolumeclaims, podtemplates
// and replicationcontrollers, with the defaulting, status handling,
// validation and Table columns of kube-apiserver v1.37.
//
// The protection finalizers of PersistentVolumeClaims and PersistentVolumes
// are added by their create path here: in kube-apiserver they come from the
// StorageObjectInUseProtection admission plugin, which is on by default and
// does nothing else on create.
func coreMoreKinds(_ Options, _ services) []*Resource {
	return []*Resource{
		kind[corev1.LimitRange]("", "v1", "limitranges", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), AllowCreateOnUpdate: true,
			Default: defaultLimitRange, PrepareForCreate: defaultLimitRange,
			PrepareForUpdate: func(o, _ Object) { defaultLimitRange(o) },
			Validate:         validateLimitRange}),
		kind[corev1.ResourceQuota]("", "v1", "resourcequotas", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultResourceQuota,
			PrepareForCreate: func(o Object) {
				defaultResourceQuota(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultResourceQuotaSpec(o.(*corev1.ResourceQuota)) },
			Validate:         validateResourceQuota, Printer: resourceQuotaPrinter, ReturnDeletedObject: true}),
		kind[corev1.PersistentVolume]("", "v1", "persistentvolumes", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultPersistentVolume,
			PrepareForCreate: func(o Object) {
				pv := o.(*corev1.PersistentVolume)
				defaultPersistentVolume(pv)
				// kube-apiserver stamps the phase transition with the
				// time of the create: the server's clock, which set the
				// creation timestamp just before.
				t := pv.CreationTimestamp
				if t.IsZero() {
					t = metav1.NewTime(time.Now().UTC().Truncate(time.Second))
				}
				pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &t}
				// The pv-protection finalizer is the server's
				// StorageObjectInUseProtection plugin's (switchable).
			},
			PrepareForUpdate: func(o, _ Object) { defaultPersistentVolumeSpec(o.(*corev1.PersistentVolume)) },
			Validate:         validatePersistentVolume, Warnings: persistentVolumeWarnings, Printer: persistentVolumePrinter, ReturnDeletedObject: true}),
		kind[corev1.PersistentVolumeClaim]("", "v1", "persistentvolumeclaims", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultPersistentVolumeClaim,
			PrepareForCreate: func(o Object) {
				pvc := o.(*corev1.PersistentVolumeClaim)
				defaultPersistentVolumeClaim(pvc)
				pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
				syncDataSource(&pvc.Spec)
				// The pvc-protection finalizer is the server's
				// StorageObjectInUseProtection plugin's (switchable).
			},
			PrepareForUpdate: func(o, _ Object) {
				pvc := o.(*corev1.PersistentVolumeClaim)
				defaultPersistentVolumeClaimSpec(&pvc.Spec)
				syncDataSource(&pvc.Spec)
			},
			Validate: validatePersistentVolumeClaim, Warnings: persistentVolumeClaimWarnings, Printer: persistentVolumeClaimPrinter, ReturnDeletedObject: true}),
		kind[corev1.PodTemplate]("", "v1", "podtemplates", Resource{
			Generation: true, Meta: builtinMeta(NameIsDNSSubdomain),
			Default: defaultPodTemplate, PrepareForCreate: defaultPodTemplate,
			PrepareForUpdate: func(o, old Object) {
				pt, prev := o.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
				defaultPodTemplate(pt)
				// A pod template has no spec: its generation follows its
				// template, as kube-apiserver's strategy bumps it.
				if !SemanticEqual(pt.Template, prev.Template) {
					pt.Generation = prev.Generation + 1
				}
			},
			Validate: validatePodTemplate, Warnings: podTemplateWarnings, Printer: podTemplatePrinter, ReturnDeletedObject: true}),
		kind[corev1.ReplicationController]("", "v1", "replicationcontrollers", Resource{
			Generation: true, Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultReplicationController,
			PrepareForCreate: func(o Object) {
				defaultReplicationController(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultReplicationController(o) },
			Validate:         validateReplicationController, Warnings: replicationControllerWarnings, Printer: replicationControllerPrinter,
			SelectableFields: func(o Object) map[string]string {
				rc := o.(*corev1.ReplicationController)
				return map[string]string{"status.replicas": strconv.FormatInt(int64(rc.Status.Replicas), 10)}
			}}),
	}
}

// defaultLimitRange applies SetDefaults_LimitRangeItem to every item: a
// Container item's default limits come from its max, and its default
// requests from its default limits, then from its min. Every quantity is
// rounded up to milli-units.
func defaultLimitRange(o Object) {
	lr := o.(*corev1.LimitRange)
	for i := range lr.Spec.Limits {
		it := &lr.Spec.Limits[i]
		for _, l := range []corev1.ResourceList{it.Max, it.Min, it.Default, it.DefaultRequest, it.MaxLimitRequestRatio} {
			roundUpResources(l)
		}
		if it.Type != corev1.LimitTypeContainer {
			continue
		}
		if it.Default == nil {
			it.Default = corev1.ResourceList{}
		}
		if it.DefaultRequest == nil {
			it.DefaultRequest = corev1.ResourceList{}
		}
		for _, from := range []struct{ src, dst corev1.ResourceList }{
			{it.Max, it.Default}, {it.Default, it.DefaultRequest}, {it.Min, it.DefaultRequest},
		} {
			for k, q := range from.src {
				if _, ok := from.dst[k]; !ok {
					from.dst[k] = q
				}
			}
		}
	}
}

func defaultResourceQuota(o Object) {
	rq := o.(*corev1.ResourceQuota)
	defaultResourceQuotaSpec(rq)
	roundUpResources(rq.Status.Hard)
	roundUpResources(rq.Status.Used)
}

func defaultResourceQuotaSpec(rq *corev1.ResourceQuota) { roundUpResources(rq.Spec.Hard) }

// defaultPersistentVolume applies SetDefaults_PersistentVolume: reclaim
// policy Retain, volume mode Filesystem, phase Pending, and the defaults of
// its volume source.
func defaultPersistentVolume(o Object) {
	pv := o.(*corev1.PersistentVolume)
	defaultPersistentVolumeSpec(pv)
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
}

func defaultPersistentVolumeSpec(pv *corev1.PersistentVolume) {
	s := &pv.Spec
	if s.PersistentVolumeReclaimPolicy == "" {
		s.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if s.VolumeMode == nil {
		s.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	roundUpResources(s.Capacity)
	if hp := s.HostPath; hp != nil && hp.Type == nil {
		hp.Type = new(corev1.HostPathType(""))
	}
	if r := s.RBD; r != nil {
		if r.RBDPool == "" {
			r.RBDPool = "rbd"
		}
		if r.RadosUser == "" {
			r.RadosUser = "admin"
		}
		if r.Keyring == "" {
			r.Keyring = "/etc/ceph/keyring"
		}
	}
	if r := s.ISCSI; r != nil && r.ISCSIInterface == "" {
		r.ISCSIInterface = "default"
	}
	if a := s.AzureDisk; a != nil {
		if a.CachingMode == nil {
			a.CachingMode = new(corev1.AzureDataDiskCachingMode("ReadWrite"))
		}
		if a.FSType == nil {
			a.FSType = new("ext4")
		}
		if a.ReadOnly == nil {
			a.ReadOnly = new(false)
		}
		if a.Kind == nil {
			a.Kind = new(corev1.AzureDataDiskKind("Shared"))
		}
	}
	if sc := s.ScaleIO; sc != nil {
		if sc.StorageMode == "" {
			sc.StorageMode = "ThinProvisioned"
		}
		if sc.FSType == "" {
			sc.FSType = "xfs"
		}
	}
}

// defaultPersistentVolumeClaim applies SetDefaults_PersistentVolumeClaim
// and its spec's: phase Pending, volume mode Filesystem.
func defaultPersistentVolumeClaim(o Object) {
	pvc := o.(*corev1.PersistentVolumeClaim)
	defaultPersistentVolumeClaimSpec(&pvc.Spec)
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	roundUpResources(pvc.Status.Capacity)
	roundUpResources(pvc.Status.AllocatedResources)
}

func defaultPersistentVolumeClaimSpec(s *corev1.PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		s.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	roundUpResources(s.Resources.Limits)
	roundUpResources(s.Resources.Requests)
}

// syncDataSource keeps a claim's dataSource and dataSourceRef in step, as
// kube-apiserver's PVC strategy does for old clients: a dataSource alone is
// copied to dataSourceRef, a dataSourceRef without a namespace to
// dataSource.
func syncDataSource(s *corev1.PersistentVolumeClaimSpec) {
	switch {
	case s.DataSource != nil && s.DataSourceRef == nil:
		d := s.DataSource
		s.DataSourceRef = &corev1.TypedObjectReference{APIGroup: cloneString(d.APIGroup), Kind: d.Kind, Name: d.Name}
	case s.DataSourceRef != nil && s.DataSource == nil &&
		(s.DataSourceRef.Namespace == nil || *s.DataSourceRef.Namespace == ""):
		r := s.DataSourceRef
		s.DataSource = &corev1.TypedLocalObjectReference{APIGroup: cloneString(r.APIGroup), Kind: r.Kind, Name: r.Name}
	}
}

func cloneString(p *string) *string {
	if p == nil {
		return nil
	}
	return new(*p)
}

func defaultPodTemplate(o Object) {
	defaultPodSpec(&o.(*corev1.PodTemplate).Template.Spec)
}

// defaultReplicationController applies SetDefaults_ReplicationController:
// one replica, and the template's labels as selector and as labels when
// those are empty.
func defaultReplicationController(o Object) {
	rc := o.(*corev1.ReplicationController)
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = maps.Clone(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = maps.Clone(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = new(int32(1))
	}
	if rc.Spec.Template != nil {
		defaultPodSpec(&rc.Spec.Template.Spec)
	}
}
