package registry

import (
	"slices"
	"strconv"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
	"github.com/kapi-dev/kapi/internal/namefmt"
)

// storage.k8s.io/v1: the kinds of CSI drivers, storage classes and volume
// attachments, with kube-apiserver v1.37.2's defaults, validation (causes in
// its order, which puts the errors of its declarative validation, such as a
// missing provisioner, after the hand-written ones) and immutable fields
// (testdata/golden-1.37/kinds/*-storage.k8s.io-*).

// FinalizerVACProtection is the finalizer kube-apiserver's
// StorageObjectInUseProtection admission plugin puts on every new
// VolumeAttributesClass, for a controller to remove once no claim uses it.
const FinalizerVACProtection = "kubernetes.io/vac-protection"

func storageKinds(Options, services) []*Resource {
	return []*Resource{
		kind[storagev1.CSIDriver]("storage.k8s.io", "v1", "csidrivers", Resource{
			Meta: MetaRules{Name: nameIsCSIDriverName}, Default: defaultCSIDriver,
			PrepareForCreate: defaultCSIDriver,
			PrepareForUpdate: func(o, old Object) {
				d, prev := o.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver)
				defaultCSIDriver(d)
				// kube-apiserver's strategy sets no generation at create (the
				// client's stays, usually none) but bumps it on every change
				// of the spec: the first makes it 1.
				if !SemanticEqual(d.Spec, prev.Spec) {
					d.Generation = prev.Generation + 1
				}
			},
			Validate: validateCSIDriver, Warnings: CSIDriverWarnings, Printer: csiDriverPrinter}),
		kind[storagev1.CSINode]("storage.k8s.io", "v1", "csinodes", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			PrepareForCreate: ResetStatus, Validate: validateCSINode, Printer: csiNodePrinter}),
		kind[storagev1.CSIStorageCapacity]("storage.k8s.io", "v1", "csistoragecapacities", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateCSIStorageCapacity}),
		kind[storagev1.StorageClass]("storage.k8s.io", "v1", "storageclasses", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultStorageClass,
			PrepareForCreate: defaultStorageClass, PrepareForUpdate: func(o, _ Object) { defaultStorageClass(o) },
			Validate: validateStorageClass, Printer: storageClassPrinter}),
		kind[storagev1.VolumeAttachment]("storage.k8s.io", "v1", "volumeattachments", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			PrepareForCreate: ResetStatus, Validate: validateVolumeAttachment, Printer: volumeAttachmentPrinter}),
		kind[storagev1.VolumeAttributesClass]("storage.k8s.io", "v1", "volumeattributesclasses", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), PrepareForCreate: protectVolumeAttributesClass,
			Validate: validateVolumeAttributesClass, Printer: volumeAttributesClassPrinter}),
	}
}

// nameIsCSIDriverName is the rule for CSIDriver names: a DNS subdomain of
// at most 63 characters (a CSI driver's name in the CSI spec).
func nameIsCSIDriverName(name string, prefix bool) []string {
	msgs := NameIsDNSSubdomain(name, prefix)
	if !prefix && len(name) > 63 {
		msgs = append(msgs, maxLen(63))
	}
	return msgs
}

func defaultCSIDriver(o Object) {
	s := &o.(*storagev1.CSIDriver).Spec
	setBool := func(p **bool, v bool) {
		if *p == nil {
			*p = &v
		}
	}
	setBool(&s.AttachRequired, true)
	setBool(&s.PodInfoOnMount, false)
	setBool(&s.StorageCapacity, false)
	setBool(&s.RequiresRepublish, false)
	setBool(&s.SELinuxMount, false)
	setBool(&s.PreventPodSchedulingIfMissing, false)
	if s.FSGroupPolicy == nil {
		p := storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy
		s.FSGroupPolicy = &p
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

// CSIDriverWarnings are the warnings kube-apiserver sends with the create
// of a CSIDriver (old nil): tokenRequests without
// serviceAccountTokenInSecrets. An update gets none.
func CSIDriverWarnings(o, old Object) []string {
	if old != nil {
		return nil
	}
	s := o.(*storagev1.CSIDriver).Spec
	if len(s.TokenRequests) > 0 && s.ServiceAccountTokenInSecrets == nil {
		return []string{"spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes"}
	}
	return nil
}

func validateCSIDriver(o, old Object) metav1.FieldErrors {
	d := o.(*storagev1.CSIDriver)
	s := d.Spec
	var errs metav1.FieldErrors
	if old != nil {
		os := old.(*storagev1.CSIDriver).Spec
		// kube-apiserver reports attachRequired under a misspelt path.
		if !equalPtr(s.AttachRequired, os.AttachRequired) {
			errs = append(errs, metav1.FieldInvalid("spec.attachedRequired", s.AttachRequired, "field is immutable"))
		}
		if !slices.Equal(s.VolumeLifecycleModes, os.VolumeLifecycleModes) {
			errs = append(errs, metav1.FieldInvalid("spec.volumeLifecycleModes", s.VolumeLifecycleModes, "field is immutable"))
		}
	}
	if s.AttachRequired == nil {
		errs = append(errs, metav1.FieldRequired("spec.attachRequired", ""))
	}
	if s.FSGroupPolicy != nil && !slices.Contains([]storagev1.FSGroupPolicy{"File", "None", "ReadWriteOnceWithFSType"}, *s.FSGroupPolicy) {
		errs = append(errs, metav1.FieldNotSupported("spec.fsGroupPolicy", string(*s.FSGroupPolicy), []string{"File", "None", "ReadWriteOnceWithFSType"}))
	}
	seen := map[string]bool{}
	for i, tr := range s.TokenRequests {
		path := "spec.tokenRequests[" + strconv.Itoa(i) + "]"
		if seen[tr.Audience] {
			errs = append(errs, metav1.FieldDuplicate(path+".audience", tr.Audience))
		}
		seen[tr.Audience] = true
		if e := tr.ExpirationSeconds; e != nil {
			switch {
			case *e < 600:
				errs = append(errs, metav1.FieldInvalid(path+".expirationSeconds", *e, "may not specify a duration less than 10 minutes"))
			case *e > 1<<32:
				errs = append(errs, metav1.FieldInvalid(path+".expirationSeconds", *e, "may not specify a duration larger than 2^32 seconds"))
			}
		}
	}
	for _, m := range s.VolumeLifecycleModes {
		if m != storagev1.VolumeLifecyclePersistent && m != storagev1.VolumeLifecycleEphemeral {
			errs = append(errs, metav1.FieldNotSupported("spec.volumeLifecycleModes", string(m), []string{"Persistent", "Ephemeral"}))
		}
	}
	if p := s.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < 10 {
		errs = append(errs, metav1.FieldInvalid("spec.nodeAllocatableUpdatePeriodSeconds", *p, "must be greater than or equal to 10 seconds"))
	}
	return errs
}

func validateCSINode(o, old Object) metav1.FieldErrors {
	n := o.(*storagev1.CSINode)
	var errs metav1.FieldErrors
	seen := map[string]bool{}
	for i, d := range n.Spec.Drivers {
		path := "spec.drivers[" + strconv.Itoa(i) + "]"
		for _, msg := range nameIsCSIDriverName(d.Name, false) {
			errs = append(errs, metav1.FieldInvalid(path+".name", d.Name, msg))
		}
		if seen[d.Name] {
			errs = append(errs, metav1.FieldDuplicate(path+".name", d.Name))
		}
		seen[d.Name] = true
		switch {
		case d.NodeID == "":
			errs = append(errs, metav1.FieldRequired(path+".nodeID", ""))
		case len(d.NodeID) > 192:
			errs = append(errs, metav1.FieldTooLong(path+".nodeID", 192))
		}
		for j, k := range d.TopologyKeys {
			for _, msg := range ValidateQualifiedName(k) {
				errs = append(errs, metav1.FieldInvalid(path+".topologyKeys["+strconv.Itoa(j)+"]", k, msg))
			}
		}
		if a := d.Allocatable; a != nil && a.Count != nil && *a.Count < 0 {
			errs = append(errs, metav1.FieldInvalid(path+".allocatable.count", *a.Count, "must be greater than or equal to 0"))
		}
	}
	if old != nil {
		// A driver keeps its node ID and topology keys; drivers may come
		// and go, and their allocatable count may change.
		for _, d := range n.Spec.Drivers {
			for _, od := range old.(*storagev1.CSINode).Spec.Drivers {
				if od.Name == d.Name && (od.NodeID != d.NodeID || !slices.Equal(od.TopologyKeys, d.TopologyKeys)) {
					errs = append(errs, metav1.FieldInvalid("spec.drivers", goDump{d}, "field is immutable"))
				}
			}
		}
	}
	return errs
}

func validateCSIStorageCapacity(o, _ Object) metav1.FieldErrors {
	c := o.(*storagev1.CSIStorageCapacity)
	var errs metav1.FieldErrors
	if c.NodeTopology != nil {
		errs = append(errs, labelSelectorErrors(c.NodeTopology, "nodeTopology")...)
	}
	for _, msg := range ValidateDNS1123Subdomain(c.StorageClassName) {
		errs = append(errs, metav1.FieldInvalid("storageClassName", c.StorageClassName, msg))
	}
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		errs = append(errs, metav1.FieldInvalid("capacity", c.Capacity.String(), "must be greater than or equal to 0"))
	}
	if c.MaximumVolumeSize != nil && c.MaximumVolumeSize.Sign() < 0 {
		errs = append(errs, metav1.FieldInvalid("maximumVolumeSize", c.MaximumVolumeSize.String(), "must be greater than or equal to 0"))
	}
	return errs
}

func defaultStorageClass(o Object) {
	sc := o.(*storagev1.StorageClass)
	if sc.ReclaimPolicy == nil {
		p := corev1.PersistentVolumeReclaimDelete
		sc.ReclaimPolicy = &p
	}
	if sc.VolumeBindingMode == nil {
		m := storagev1.VolumeBindingImmediate
		sc.VolumeBindingMode = &m
	}
}

func validateStorageClass(o, old Object) metav1.FieldErrors {
	sc := o.(*storagev1.StorageClass)
	var errs metav1.FieldErrors
	if old != nil {
		osc := old.(*storagev1.StorageClass)
		immutable := func(path string, changed bool) {
			if changed {
				errs = append(errs, metav1.FieldInvalid(path, nil, "field is immutable"))
			}
		}
		immutable("provisioner", sc.Provisioner != osc.Provisioner)
		immutable("parameters", !mapsEqual(sc.Parameters, osc.Parameters))
		immutable("reclaimPolicy", !equalPtr(sc.ReclaimPolicy, osc.ReclaimPolicy))
		immutable("volumeBindingMode", !equalPtr(sc.VolumeBindingMode, osc.VolumeBindingMode))
	}
	if sc.Provisioner != "" {
		lower := strings.ToLower(sc.Provisioner)
		for _, msg := range ValidateQualifiedName(lower) {
			errs = append(errs, metav1.FieldInvalid("provisioner", lower, msg))
		}
	}
	size := 0
	for _, k := range sortedMapKeys(sc.Parameters) {
		if k == "" {
			errs = append(errs, metav1.FieldInvalid("parameters", k, "field can not be empty."))
		}
		size += len(k) + len(sc.Parameters[k])
	}
	if len(sc.Parameters) > 512 {
		errs = append(errs, metav1.FieldTooLong("parameters", 512))
	} else if size > 256*1024 {
		errs = append(errs, metav1.FieldTooLong("parameters", 256*1024))
	}
	if p := sc.ReclaimPolicy; p != nil && *p != corev1.PersistentVolumeReclaimDelete && *p != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, metav1.FieldNotSupported("reclaimPolicy", string(*p), []string{"Delete", "Retain"}))
	}
	if m := sc.VolumeBindingMode; m != nil && *m != storagev1.VolumeBindingImmediate && *m != storagev1.VolumeBindingWaitForFirstConsumer {
		errs = append(errs, metav1.FieldNotSupported("volumeBindingMode", string(*m), []string{"Immediate", "WaitForFirstConsumer"}))
	}
	for i, term := range sc.AllowedTopologies {
		for j, e := range term.MatchLabelExpressions {
			p := "allowedTopologies[" + strconv.Itoa(i) + "].matchLabelExpressions[" + strconv.Itoa(j) + "]"
			if len(e.Values) == 0 {
				errs = append(errs, metav1.FieldRequired(p+".values", ""))
			}
			for _, msg := range ValidateQualifiedName(e.Key) {
				errs = append(errs, metav1.FieldInvalid(p+".key", e.Key, msg))
			}
		}
	}
	if sc.Provisioner == "" {
		errs = append(errs, metav1.FieldRequired("provisioner", ""))
	}
	return errs
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func validateVolumeAttachment(o, old Object) metav1.FieldErrors {
	va := o.(*storagev1.VolumeAttachment)
	var errs metav1.FieldErrors
	if old != nil {
		if !SpecEqual(o, old) {
			errs = append(errs, metav1.FieldInvalid("spec", nil, "field is immutable"))
		}
	}
	s := va.Spec
	if (s.Source.PersistentVolumeName == nil) == (s.Source.InlineVolumeSpec == nil) {
		errs = append(errs, metav1.FieldRequired("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
	} else if pv := s.Source.PersistentVolumeName; pv != nil {
		if *pv == "" {
			errs = append(errs, metav1.FieldRequired("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"))
		}
		for _, msg := range ValidateDNS1123Subdomain(*pv) {
			errs = append(errs, metav1.FieldInvalid("spec.source.persistentVolumeName", *pv, msg))
		}
	}
	for _, msg := range ValidateDNS1123Subdomain(s.NodeName) {
		errs = append(errs, metav1.FieldInvalid("spec.nodeName", s.NodeName, msg))
	}
	if s.Attacher == "" {
		errs = append(errs, metav1.FieldRequired("spec.attacher", ""))
	}
	for _, msg := range attacherName(s.Attacher) {
		errs = append(errs, metav1.FieldInvalid("spec.attacher", s.Attacher, msg))
	}
	return errs
}

// attacherName checks a VolumeAttachment's attacher: a CSI driver name,
// checked as a DNS subdomain in any case, of at most 63 characters.
func attacherName(name string) []string {
	if name == "" {
		return nil
	}
	var msgs []string
	if len(name) > 63 {
		msgs = append(msgs, maxLen(63))
	}
	if !namefmt.DNS1123SubdomainRe.MatchString(strings.ToLower(name)) {
		msgs = append(msgs, regexMessage("an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', "+
			"and must start and end with an alphanumeric character", namefmt.DNS1123Subdomain, "Example.com"))
	}
	return msgs
}

// protectVolumeAttributesClass adds kubernetes.io/vac-protection, as
// kube-apiserver's StorageObjectInUseProtection admission plugin does to
// every new VolumeAttributesClass (kapi applies it here, in the kind's
// create step, rather than in a switchable admission plugin).
func protectVolumeAttributesClass(o Object) {
	if !slices.Contains(o.GetFinalizers(), FinalizerVACProtection) {
		o.SetFinalizers(append(o.GetFinalizers(), FinalizerVACProtection))
	}
}

func validateVolumeAttributesClass(o, old Object) metav1.FieldErrors {
	c := o.(*storagev1.VolumeAttributesClass)
	var errs metav1.FieldErrors
	if old != nil {
		oc := old.(*storagev1.VolumeAttributesClass)
		if c.DriverName != oc.DriverName {
			errs = append(errs, metav1.FieldForbidden("driverName", "updates to driverName are forbidden."))
		}
		if !mapsEqual(c.Parameters, oc.Parameters) {
			errs = append(errs, metav1.FieldForbidden("parameters", "updates to parameters are forbidden."))
		}
	}
	if c.DriverName == "" {
		errs = append(errs, metav1.FieldRequired("driverName", ""))
	}
	if len(c.Parameters) == 0 {
		errs = append(errs, metav1.FieldRequired("parameters", "must contain at least one key/value pair"))
	}
	return errs
}
