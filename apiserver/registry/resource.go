package registry

import (
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	resourcev1 "github.com/kapi-dev/kapi/api/resource/v1"
)

// resource.k8s.io/v1 (dynamic resource allocation): device classes, taint
// rules, claims, claim templates and slices, with kube-apiserver v1.37.2's
// defaults, validation causes, immutable fields and Table columns
// (testdata/golden-1.37/kinds/*-resource.k8s.io-*). CEL selectors are not
// compiled: an expression kube-apiserver refuses as invalid CEL is stored.

func resourceKinds(Options, services) []*Resource {
	return []*Resource{
		kind[resourcev1.DeviceClass]("resource.k8s.io", "v1", "deviceclasses", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateDeviceClass, Printer: deviceClassPrinter}),
		// kube-apiserver v1.37 stores DeviceTaintRules as v1beta2
		// (discovery's storageVersionHash says so).
		kind[resourcev1.DeviceTaintRule]("resource.k8s.io", "v1", "devicetaintrules", Resource{Generation: true,
			StorageVersion: "v1beta2",
			Meta:           builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: func(o Object) { stampDeviceTaint(o, nil) },
			PrepareForCreate: func(o Object) {
				ResetStatus(o)
				stampDeviceTaint(o, nil)
			},
			PrepareForUpdate: stampDeviceTaint,
			Validate:         validateDeviceTaintRule, Printer: deviceTaintRulePrinter}),
		kind[resourcev1.ResourceClaim]("resource.k8s.io", "v1", "resourceclaims", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), StatusMetadata: statusMetadata(false, false),
			Default: defaultResourceClaim,
			PrepareForCreate: func(o Object) {
				defaultResourceClaim(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultResourceClaim(o) },
			Validate:         validateResourceClaim, Printer: resourceClaimPrinter}),
		kind[resourcev1.ResourceClaimTemplate]("resource.k8s.io", "v1", "resourceclaimtemplates", Resource{
			Meta: builtinMeta(NameIsDNSSubdomain), Default: defaultResourceClaimTemplate,
			PrepareForCreate: defaultResourceClaimTemplate, PrepareForUpdate: func(o, _ Object) { defaultResourceClaimTemplate(o) },
			Validate: validateResourceClaimTemplate, Printer: resourceClaimTemplatePrinter}),
		kind[resourcev1.ResourceSlice]("resource.k8s.io", "v1", "resourceslices", Resource{Generation: true,
			Meta: builtinMeta(NameIsDNSSubdomain), Validate: validateResourceSlice, Printer: resourceSlicePrinter,
			SelectableFields: func(o Object) map[string]string {
				s := o.(*resourcev1.ResourceSlice).Spec
				node := ""
				if s.NodeName != nil {
					node = *s.NodeName
				}
				return map[string]string{"spec.nodeName": node, "spec.driver": s.Driver, "spec.pool.name": s.Pool.Name}
			}}),
	}
}

func validateDeviceClass(o, _ Object) metav1.FieldErrors {
	c := o.(*resourcev1.DeviceClass)
	return validateDeviceSelectors(c.Spec.Selectors, "spec.selectors")
}

func validateDeviceSelectors(sels []resourcev1.DeviceSelector, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for i, s := range sels {
		p := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case s.CEL == nil:
			errs = append(errs, metav1.FieldRequired(p+".cel", ""))
		case s.CEL.Expression == "":
			errs = append(errs, metav1.FieldRequired(p+".cel.expression", ""))
		}
	}
	return errs
}

// stampDeviceTaint sets a DeviceTaintRule's spec.taint.timeAdded to now
// when the client leaves it unset, and on an update that changes the
// effect but keeps the old time, as kube-apiserver does. It is also the
// kind's Default, so that the field set at create is the client's in
// metadata.managedFields, as kube-apiserver records it.
func stampDeviceTaint(o, old Object) {
	t := &o.(*resourcev1.DeviceTaintRule).Spec.Taint
	if t.TimeAdded == nil {
		now := metav1.Now()
		t.TimeAdded = &now
		return
	}
	if old != nil {
		ot := old.(*resourcev1.DeviceTaintRule).Spec.Taint
		if ot.Effect != t.Effect && ot.TimeAdded != nil && ot.TimeAdded.Equal(t.TimeAdded) {
			now := metav1.Now()
			t.TimeAdded = &now
		}
	}
}

func validateDeviceTaintRule(o, _ Object) metav1.FieldErrors {
	r := o.(*resourcev1.DeviceTaintRule)
	errs := validateDeviceTaint(r.Spec.Taint, "spec.taint")
	if sel := r.Spec.DeviceSelector; sel != nil {
		if sel.Driver != nil {
			for _, msg := range ValidateDNS1123Subdomain(*sel.Driver) {
				errs = append(errs, metav1.FieldInvalid("spec.deviceSelector.driver", *sel.Driver, msg))
			}
		}
	}
	return errs
}

var deviceTaintEffects = []string{"NoExecute", "NoSchedule", "None"}

func validateDeviceTaint(t resourcev1.DeviceTaint, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, msg := range ValidateQualifiedName(t.Key) {
		errs = append(errs, metav1.FieldInvalid(path+".key", t.Key, msg))
	}
	for _, msg := range ValidateLabelValue(t.Value) {
		errs = append(errs, metav1.FieldInvalid(path+".value", t.Value, msg))
	}
	switch t.Effect {
	case "":
		errs = append(errs, metav1.FieldRequired(path+".effect", ""))
	case resourcev1.DeviceTaintEffectNone, resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute:
	default:
		errs = append(errs, metav1.FieldNotSupported(path+".effect", string(t.Effect), deviceTaintEffects))
	}
	return errs
}

func defaultResourceClaim(o Object) { defaultDeviceClaim(&o.(*resourcev1.ResourceClaim).Spec.Devices) }

func defaultResourceClaimTemplate(o Object) {
	defaultDeviceClaim(&o.(*resourcev1.ResourceClaimTemplate).Spec.Spec.Devices)
}

// defaultDeviceClaim gives each request (and sub-request) the allocation
// mode ExactCount and, in that mode, a count of 1 when unset.
func defaultDeviceClaim(c *resourcev1.DeviceClaim) {
	mode := func(m *resourcev1.DeviceAllocationMode, count *int64) {
		if *m == "" {
			*m = "ExactCount"
		}
		if *m == "ExactCount" && *count == 0 {
			*count = 1
		}
	}
	for i := range c.Requests {
		r := &c.Requests[i]
		if r.Exactly != nil {
			mode(&r.Exactly.AllocationMode, &r.Exactly.Count)
		}
		for j := range r.FirstAvailable {
			mode(&r.FirstAvailable[j].AllocationMode, &r.FirstAvailable[j].Count)
		}
	}
}

func validateResourceClaim(o, old Object) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if old != nil && !SpecEqual(o, old) {
		errs = append(errs, metav1.FieldInvalid("spec", nil, "field is immutable"))
	}
	return append(errs, validateDeviceClaim(o.(*resourcev1.ResourceClaim).Spec.Devices, "spec.devices")...)
}

func validateResourceClaimTemplate(o, old Object) metav1.FieldErrors {
	t := o.(*resourcev1.ResourceClaimTemplate)
	var errs metav1.FieldErrors
	if old != nil && !SpecEqual(o, old) {
		errs = append(errs, metav1.FieldInvalid("spec", goDump{t.Spec}, "field is immutable"))
	}
	return append(errs, validateDeviceClaim(t.Spec.Spec.Devices, "spec.spec.devices")...)
}

func validateDeviceClaim(c resourcev1.DeviceClaim, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	names := map[string]bool{}
	for i, r := range c.Requests {
		p := path + ".requests[" + strconv.Itoa(i) + "]"
		for _, msg := range ValidateDNS1123Label(r.Name) {
			errs = append(errs, metav1.FieldInvalid(p+".name", r.Name, msg))
		}
		if names[r.Name] {
			errs = append(errs, metav1.FieldDuplicate(p+".name", r.Name))
		}
		names[r.Name] = true
		switch {
		case (r.Exactly == nil) == (len(r.FirstAvailable) == 0):
			errs = append(errs, metav1.FieldRequired(p, "exactly one of `exactly` or `firstAvailable` is required"))
		case r.Exactly != nil:
			e := r.Exactly
			errs = append(errs, validateDeviceRequest(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, p+".exactly")...)
		default:
			for j, s := range r.FirstAvailable {
				sp := p + ".firstAvailable[" + strconv.Itoa(j) + "]"
				for _, msg := range ValidateDNS1123Label(s.Name) {
					errs = append(errs, metav1.FieldInvalid(sp+".name", s.Name, msg))
				}
				errs = append(errs, validateDeviceRequest(s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, sp)...)
			}
		}
	}
	return errs
}

func validateDeviceRequest(class string, sels []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if class == "" {
		errs = append(errs, metav1.FieldRequired(path+".deviceClassName", ""))
	} else {
		for _, msg := range ValidateDNS1123Subdomain(class) {
			errs = append(errs, metav1.FieldInvalid(path+".deviceClassName", class, msg))
		}
	}
	errs = append(errs, validateDeviceSelectors(sels, path+".selectors")...)
	switch mode {
	case "All":
		if count != 0 {
			errs = append(errs, metav1.FieldInvalid(path+".count", count, "must not be specified when allocationMode is 'All'"))
		}
	case "ExactCount":
		if count <= 0 {
			errs = append(errs, metav1.FieldInvalid(path+".count", count, "must be greater than zero"))
		}
	default:
		errs = append(errs, metav1.FieldNotSupported(path+".allocationMode", string(mode), []string{"All", "ExactCount"}))
	}
	return errs
}

func validateResourceSlice(o, old Object) metav1.FieldErrors {
	s := o.(*resourcev1.ResourceSlice)
	sp := s.Spec
	var errs metav1.FieldErrors
	if old != nil {
		os := old.(*resourcev1.ResourceSlice).Spec
		if sp.Pool.Name != os.Pool.Name {
			errs = append(errs, metav1.FieldInvalid("spec.pool.name", sp.Pool.Name, "field is immutable"))
		}
		if sp.Driver != os.Driver {
			errs = append(errs, metav1.FieldInvalid("spec.driver", sp.Driver, "field is immutable"))
		}
		if !equalPtr(sp.NodeName, os.NodeName) {
			errs = append(errs, metav1.FieldInvalid("spec.nodeName", sp.NodeName, "field is immutable"))
		}
	}
	if sp.Driver == "" {
		errs = append(errs, metav1.FieldRequired("spec.driver", ""))
	} else {
		for _, msg := range ValidateDNS1123Subdomain(sp.Driver) {
			errs = append(errs, metav1.FieldInvalid("spec.driver", sp.Driver, msg))
		}
	}
	if sp.Pool.Name == "" {
		errs = append(errs, metav1.FieldRequired("spec.pool.name", ""))
	}
	if sp.Pool.Generation < 0 {
		errs = append(errs, metav1.FieldInvalid("spec.pool.generation", sp.Pool.Generation, "must be greater than or equal to zero"))
	}
	if sp.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, metav1.FieldInvalid("spec.pool.resourceSliceCount", sp.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	set := 0
	if sp.NodeName != nil && *sp.NodeName != "" {
		set++
		for _, msg := range ValidateDNS1123Subdomain(*sp.NodeName) {
			errs = append(errs, metav1.FieldInvalid("spec.nodeName", *sp.NodeName, msg))
		}
	}
	if sp.NodeSelector != nil {
		set++
	}
	if sp.AllNodes != nil && *sp.AllNodes {
		set++
	}
	if sp.PerDeviceNodeSelection != nil && *sp.PerDeviceNodeSelection {
		set++
	}
	switch {
	case set == 0:
		errs = append(errs, metav1.FieldRequired("spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case set > 1:
		errs = append(errs, metav1.FieldInvalid("spec", "{`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`}",
			"exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	names := map[string]bool{}
	for i, d := range sp.Devices {
		p := "spec.devices[" + strconv.Itoa(i) + "].name"
		for _, msg := range ValidateDNS1123Label(d.Name) {
			errs = append(errs, metav1.FieldInvalid(p, d.Name, msg))
		}
		if names[d.Name] {
			errs = append(errs, metav1.FieldDuplicate(p, d.Name))
		}
		names[d.Name] = true
	}
	return errs
}
