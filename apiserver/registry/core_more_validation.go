package registry

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// Validation of the kinds of core_more.go, as kube-apiserver v1.37 words
// it. Where kube-apiserver walks a map (a quota's hard limits, a limit
// range item's resources) its causes come in Go's random map order; kapi
// sorts the keys.

// standardResourceNames are the unprefixed resource names kube-apiserver
// accepts in limit ranges and quotas (IsStandardResourceName), besides
// hugepages-*.
var standardResourceNames = []string{
	"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
	"replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
	"services.nodeports", "services.loadbalancers",
}

// standardQuotaResourceNames are the unprefixed names a quota may limit
// (IsStandardQuotaResourceName), besides hugepages-* and requests.hugepages-*.
var standardQuotaResourceNames = []string{
	"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
	"requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
	"resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps",
	"services.nodeports", "services.loadbalancers",
}

// integerResourceNames are counted in whole units (IsIntegerResourceName).
var integerResourceNames = []string{
	"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
	"persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
}

func isHugePages(name string) bool { return strings.HasPrefix(name, "hugepages-") }

func isStandardResourceName(name string) bool {
	return slices.Contains(standardResourceNames, name) || isHugePages(name) || strings.HasPrefix(name, "requests.hugepages-")
}

func isStandardQuotaResourceName(name string) bool {
	return slices.Contains(standardQuotaResourceNames, name) || isHugePages(name) || strings.HasPrefix(name, "requests.hugepages-")
}

// isNativeResource reports whether name is in the kubernetes.io namespace
// (unprefixed names are).
func isNativeResource(name string) bool {
	return !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/")
}

// isExtendedResourceName reports whether name is an extended resource: not
// native, not requests.*, and a qualified name once prefixed with
// "requests.".
func isExtendedResourceName(name string) bool {
	if isNativeResource(name) || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(ValidateQualifiedName("requests."+name)) == 0
}

func isIntegerResourceName(name string) bool {
	return slices.Contains(integerResourceNames, name) || isExtendedResourceName(name)
}

// validateResourceName checks a resource name: a qualified name, and one
// of the standard names when it has no prefix.
func validateResourceName(name, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, msg := range ValidateQualifiedName(name) {
		errs = append(errs, metav1.FieldInvalid(path, name, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(name, "/") && !isStandardResourceName(name) {
		errs = append(errs, metav1.FieldInvalid(path, name, "must be a standard resource type or fully qualified"))
	}
	return errs
}

// validateContainerResourceName checks a resource name a container (or a
// pod) may request.
func validateContainerResourceName(name, path string) metav1.FieldErrors {
	errs := validateResourceName(name, path)
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(name, "/") {
		if name != "cpu" && name != "memory" && name != "ephemeral-storage" && !isHugePages(name) {
			errs = append(errs, metav1.FieldInvalid(path, name, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(name) && !isExtendedResourceName(name) {
		errs = append(errs, metav1.FieldInvalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}

// validateQuantityValue checks a quantity of a resource: not negative, and
// whole for the resources counted in units.
func validateQuantityValue(name string, q resource.Quantity, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if q.Sign() < 0 {
		errs = append(errs, metav1.FieldInvalid(path, q.String(), "must be greater than or equal to 0"))
	}
	if isIntegerResourceName(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, metav1.FieldInvalid(path, q.String(), "must be an integer"))
	}
	return errs
}

// resourceKeys returns the resource names of l, sorted.
func resourceKeys(l corev1.ResourceList) []string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	return keys
}

// keyPath is a map key in a field path: path[key].
func keyPath(path, k string) string { return path + "[" + k + "]" }

func validateLimitRange(o, _ Object) metav1.FieldErrors {
	lr := o.(*corev1.LimitRange)
	var errs metav1.FieldErrors
	seen := map[corev1.LimitType]bool{}
	for i := range lr.Spec.Limits {
		it := &lr.Spec.Limits[i]
		path := "spec.limits[" + strconv.Itoa(i) + "]"
		errs = append(errs, validateLimitType(string(it.Type), path+".type")...)
		if seen[it.Type] {
			errs = append(errs, metav1.FieldDuplicate(path+".type", string(it.Type)))
		}
		seen[it.Type] = true
		names := func(l corev1.ResourceList, field string) {
			for _, k := range resourceKeys(l) {
				if it.Type == corev1.LimitTypePod || it.Type == corev1.LimitTypeContainer {
					errs = append(errs, validateContainerResourceName(k, keyPath(path+"."+field, k))...)
				} else {
					errs = append(errs, validateResourceName(k, keyPath(path+"."+field, k))...)
				}
			}
		}
		names(it.Max, "max")
		names(it.Min, "min")
		if it.Type == corev1.LimitTypePod {
			if len(it.Default) > 0 {
				errs = append(errs, metav1.FieldForbidden(path+".default", "may not be specified when `type` is 'Pod'"))
			}
			if len(it.DefaultRequest) > 0 {
				errs = append(errs, metav1.FieldForbidden(path+".defaultRequest", "may not be specified when `type` is 'Pod'"))
			}
		} else {
			names(it.Default, "default")
			names(it.DefaultRequest, "defaultRequest")
		}
		if it.Type == corev1.LimitTypePersistentVolumeClaim {
			_, hasMin := it.Min[corev1.ResourceStorage]
			_, hasMax := it.Max[corev1.ResourceStorage]
			if !hasMin && !hasMax {
				errs = append(errs, metav1.FieldRequired(path+".limits", "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		names(it.MaxLimitRequestRatio, "maxLimitRequestRatio")
		keys := map[string]bool{}
		for _, l := range []corev1.ResourceList{it.Max, it.Min, it.MaxLimitRequestRatio} {
			for k := range l {
				keys[string(k)] = true
			}
		}
		if it.Type != corev1.LimitTypePod {
			for _, l := range []corev1.ResourceList{it.Default, it.DefaultRequest} {
				for k := range l {
					keys[string(k)] = true
				}
			}
		}
		for _, k := range sortedKeys(keys) {
			errs = append(errs, compareLimits(it, corev1.ResourceName(k), path)...)
		}
	}
	return errs
}

func validateLimitType(t, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, msg := range ValidateQualifiedName(t) {
		errs = append(errs, metav1.FieldInvalid(path, t, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(t, "/") && t != string(corev1.LimitTypePod) && t != string(corev1.LimitTypeContainer) &&
		t != string(corev1.LimitTypePersistentVolumeClaim) {
		errs = append(errs, metav1.FieldInvalid(path, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// compareLimits checks that a limit range item's values of resource k are
// in order: min <= default request <= default <= max, and the ratio fits.
func compareLimits(it *corev1.LimitRangeItem, k corev1.ResourceName, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	ks := string(k)
	lMin, hasMin := it.Min[k]
	lMax, hasMax := it.Max[k]
	def, hasDef := it.Default[k]
	req, hasReq := it.DefaultRequest[k]
	if it.Type == corev1.LimitTypePod {
		hasDef, hasReq = false, false
	}
	ratio, hasRatio := it.MaxLimitRequestRatio[k]
	if hasMin && hasMax && lMin.Cmp(lMax) > 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".min", ks), lMin.String(),
			fmt.Sprintf("min value %s is greater than max value %s", lMin.String(), lMax.String())))
	}
	if hasReq && hasMin && lMin.Cmp(req) > 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".defaultRequest", ks), req.String(),
			fmt.Sprintf("min value %s is greater than default request value %s", lMin.String(), req.String())))
	}
	if hasReq && hasMax && req.Cmp(lMax) > 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".defaultRequest", ks), req.String(),
			fmt.Sprintf("default request value %s is greater than max value %s", req.String(), lMax.String())))
	}
	if hasReq && hasDef && req.Cmp(def) > 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".defaultRequest", ks), req.String(),
			fmt.Sprintf("default request value %s is greater than default limit value %s", req.String(), def.String())))
	}
	if hasDef && hasMin && lMin.Cmp(def) > 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".default", ks), lMin.String(),
			fmt.Sprintf("min value %s is greater than default value %s", lMin.String(), def.String())))
	}
	if hasDef && hasMax && def.Cmp(lMax) > 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".default", ks), lMax.String(),
			fmt.Sprintf("default value %s is greater than max value %s", def.String(), lMax.String())))
	}
	if hasRatio && ratio.CmpInt64(1) < 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".maxLimitRequestRatio", ks), ratio.String(),
			fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax {
		r, lo, hi := float64(ratio.Value()), lMin.Value(), lMax.Value()
		const maxMilli = int64(9223372036854775807) / 1000
		if ratio.Value() < maxMilli && lo < maxMilli && hi < maxMilli {
			r, lo, hi = float64(ratio.MilliValue())/1000, lMin.MilliValue(), lMax.MilliValue()
		}
		if limit := float64(hi) / float64(lo); r > limit {
			errs = append(errs, metav1.FieldInvalid(keyPath(path+".maxLimitRequestRatio", ks), ratio.String(),
				fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
		}
	}
	overcommit := !isHugePages(ks) && isNativeResource(ks)
	if !overcommit && hasDef && hasReq && def.Cmp(req) != 0 {
		errs = append(errs, metav1.FieldInvalid(keyPath(path+".defaultRequest", ks), req.String(),
			fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), req.String(), ks)))
	}
	return errs
}

// standardQuotaScopes are the scopes a quota may name.
var standardQuotaScopes = []corev1.ResourceQuotaScope{
	corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
	corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
	corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
	corev1.ResourceQuotaScopeVolumeAttributesClass,
}

// scopeAppliesTo reports whether a quota scope can limit resource
// (IsResourceQuotaScopeValidForResource).
func scopeAppliesTo(scope corev1.ResourceQuotaScope, res string) bool {
	podCount := res == "pods"
	podCompute := slices.Contains([]string{"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}, res)
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCount || podCompute
	case corev1.ResourceQuotaScopeBestEffort:
		return podCount
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return res == "persistentvolumeclaims" || res == "requests.storage"
	}
	return true
}

func validateResourceQuota(o, old Object) metav1.FieldErrors {
	rq := o.(*corev1.ResourceQuota)
	var errs metav1.FieldErrors
	for _, k := range resourceKeys(rq.Spec.Hard) {
		path := keyPath("spec.hard", k)
		errs = append(errs, validateQuotaResourceName(k, path)...)
		errs = append(errs, validateQuantityValue(k, rq.Spec.Hard[corev1.ResourceName(k)], path)...)
	}
	hard := resourceKeys(rq.Spec.Hard)
	conflicts := func(scopes map[corev1.ResourceQuotaScope]bool, path string, value any) metav1.FieldErrors {
		var errs metav1.FieldErrors
		for _, pair := range [][2]corev1.ResourceQuotaScope{
			{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
			{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
		} {
			if scopes[pair[0]] && scopes[pair[1]] {
				errs = append(errs, metav1.FieldInvalid(path, value, "conflicting scopes"))
			}
		}
		return errs
	}
	if len(rq.Spec.Scopes) > 0 {
		seen := map[corev1.ResourceQuotaScope]bool{}
		for _, s := range rq.Spec.Scopes {
			if !slices.Contains(standardQuotaScopes, s) {
				errs = append(errs, metav1.FieldInvalid("spec.scopes", rq.Spec.Scopes, "unsupported scope"))
			}
			for _, k := range hard {
				if isStandardQuotaResourceName(k) && !scopeAppliesTo(s, k) {
					errs = append(errs, metav1.FieldInvalid("spec.scopes", rq.Spec.Scopes, "unsupported scope applied to resource"))
				}
			}
			seen[s] = true
		}
		errs = append(errs, conflicts(seen, "spec.scopes", rq.Spec.Scopes)...)
	}
	if sel := rq.Spec.ScopeSelector; sel != nil {
		path := "spec.scopeSelector.matchExpressions"
		seen := map[corev1.ResourceQuotaScope]bool{}
		for _, req := range sel.MatchExpressions {
			if !slices.Contains(standardQuotaScopes, req.ScopeName) {
				errs = append(errs, metav1.FieldInvalid(path+".scopeName", string(req.ScopeName), "unsupported scope"))
			}
			for _, k := range hard {
				if isStandardQuotaResourceName(k) && !scopeAppliesTo(req.ScopeName, k) {
					errs = append(errs, metav1.FieldInvalid(path, goDump{sel}, "unsupported scope applied to resource"))
				}
			}
			switch req.ScopeName {
			case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
				corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating:
				if req.Operator != corev1.ScopeSelectorOpExists {
					errs = append(errs, metav1.FieldInvalid(path+".operator", string(req.Operator),
						"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
				}
			}
			switch req.Operator {
			case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
				if len(req.Values) == 0 {
					errs = append(errs, metav1.FieldRequired(path+".values",
						"must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
				}
			case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
				if len(req.Values) != 0 {
					errs = append(errs, metav1.FieldInvalid(path+".values", req.Values,
						"must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
				}
			default:
				errs = append(errs, metav1.FieldInvalid(path+".operator", string(req.Operator), "not a valid selector operator"))
			}
			seen[req.ScopeName] = true
		}
		errs = append(errs, conflicts(seen, path, rq.Spec.Scopes)...)
	}
	for _, l := range []struct {
		path string
		list corev1.ResourceList
	}{{"status.hard", rq.Status.Hard}, {"status.used", rq.Status.Used}} {
		for _, k := range resourceKeys(l.list) {
			errs = append(errs, validateQuotaResourceName(k, keyPath(l.path, k))...)
			errs = append(errs, validateQuantityValue(k, l.list[corev1.ResourceName(k)], keyPath(l.path, k))...)
		}
	}
	if old != nil {
		prev := old.(*corev1.ResourceQuota)
		set := func(s []corev1.ResourceQuotaScope) map[corev1.ResourceQuotaScope]bool {
			m := map[corev1.ResourceQuotaScope]bool{}
			for _, x := range s {
				m[x] = true
			}
			return m
		}
		if !reflect.DeepEqual(set(rq.Spec.Scopes), set(prev.Spec.Scopes)) {
			errs = append(errs, metav1.FieldInvalid("spec.scopes", rq.Spec.Scopes, "field is immutable"))
		}
	}
	return errs
}

func validateQuotaResourceName(name, path string) metav1.FieldErrors {
	errs := validateResourceName(name, path)
	if !strings.Contains(name, "/") && !isStandardQuotaResourceName(name) {
		errs = append(errs, metav1.FieldInvalid(path, name, "must be a standard resource for quota"))
	}
	return errs
}

// supportedAccessModes are the access modes of volumes and claims, sorted.
var supportedAccessModes = []string{"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"}

// volumeSourceNames are the JSON names of PersistentVolumeSource's fields,
// in order.
func volumeSourcesSet(s *corev1.PersistentVolumeSource) []string {
	var set []string
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			set = append(set, name)
		}
	}
	return set
}

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, m := range modes {
		if !slices.Contains(supportedAccessModes, string(m)) {
			errs = append(errs, metav1.FieldNotSupported(path, string(m), supportedAccessModes))
		}
	}
	if slices.Contains(modes, corev1.ReadWriteOncePod) && len(modes) > 1 {
		errs = append(errs, metav1.FieldForbidden(path, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

func validatePersistentVolume(o, old Object) metav1.FieldErrors {
	pv := o.(*corev1.PersistentVolume)
	s := &pv.Spec
	var errs metav1.FieldErrors
	if len(s.AccessModes) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.accessModes", ""))
	}
	errs = append(errs, validateAccessModes(s.AccessModes, "spec.accessModes")...)
	if len(s.Capacity) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.capacity", ""))
	}
	if _, ok := s.Capacity[corev1.ResourceStorage]; !ok || len(s.Capacity) > 1 {
		errs = append(errs, metav1.FieldNotSupported("spec.capacity", s.Capacity, []string{"storage"}))
	}
	for _, k := range resourceKeys(s.Capacity) {
		q := s.Capacity[corev1.ResourceName(k)]
		if q.Value() < 0 {
			errs = append(errs, metav1.FieldInvalid(keyPath("spec.capacity", k), q.Value(), "must be a valid resource quantity"))
		}
		if q.Sign() <= 0 {
			errs = append(errs, metav1.FieldInvalid(keyPath("spec.capacity", k), q.String(), "must be greater than zero"))
		}
	}
	if p := s.PersistentVolumeReclaimPolicy; p != "" && p != corev1.PersistentVolumeReclaimRetain &&
		p != corev1.PersistentVolumeReclaimDelete && p != corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, metav1.FieldNotSupported("spec.persistentVolumeReclaimPolicy", string(p), []string{"Delete", "Recycle", "Retain"}))
	}
	if s.StorageClassName != "" {
		for _, msg := range ValidateDNS1123Subdomain(s.StorageClassName) {
			errs = append(errs, metav1.FieldInvalid("spec.storageClassName", s.StorageClassName, msg))
		}
	}
	if na := s.NodeAffinity; na != nil {
		if na.Required == nil {
			errs = append(errs, metav1.FieldRequired("spec.nodeAffinity.required", "must have at least one node selector term"))
		} else if len(na.Required.NodeSelectorTerms) == 0 {
			errs = append(errs, metav1.FieldRequired("spec.nodeAffinity.required.nodeSelectorTerms", "must have at least one node selector term"))
		}
	}
	switch set := volumeSourcesSet(&s.PersistentVolumeSource); len(set) {
	case 0:
		errs = append(errs, metav1.FieldRequired("spec", "must specify a volume type"))
	case 1:
		errs = append(errs, validateVolumeSourceFields(&s.PersistentVolumeSource)...)
	default:
		for _, name := range set[1:] {
			errs = append(errs, metav1.FieldForbidden("spec."+name, "may not specify more than 1 volume type"))
		}
	}
	if s.Local != nil && s.NodeAffinity == nil {
		errs = append(errs, metav1.FieldRequired("spec.nodeAffinity", "Local volume requires node affinity"))
	}
	if hp := s.HostPath; hp != nil && path.Clean(hp.Path) == "/" && s.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, metav1.FieldForbidden("spec.persistentVolumeReclaimPolicy", "may not be 'recycle' for a hostPath mount of '/'"))
	}
	if m := s.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem && *m != "Block" {
		errs = append(errs, metav1.FieldNotSupported("spec.volumeMode", string(*m), []string{"Block", "Filesystem"}))
	}
	if old == nil {
		return errs
	}
	prev := old.(*corev1.PersistentVolume)
	if !reflect.DeepEqual(s.PersistentVolumeSource, prev.Spec.PersistentVolumeSource) {
		errs = append(errs, metav1.FieldForbidden("spec.persistentvolumesource",
			"spec.persistentvolumesource is immutable after creation\n"+goDiff(prev.Spec.PersistentVolumeSource, s.PersistentVolumeSource)))
	}
	if !reflect.DeepEqual(s.VolumeMode, prev.Spec.VolumeMode) {
		// kube-apiserver names the field without its "spec.".
		errs = append(errs, metav1.FieldInvalid("volumeMode", s.VolumeMode, "field is immutable"))
	}
	return errs
}

// validateVolumeSourceFields checks the required fields of the common
// volume sources of a PersistentVolume.
func validateVolumeSourceFields(s *corev1.PersistentVolumeSource) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if hp := s.HostPath; hp != nil {
		if hp.Path == "" {
			errs = append(errs, metav1.FieldRequired("spec.hostPath.path", ""))
		} else if slices.Contains(strings.Split(filepathSlash(hp.Path), "/"), "..") {
			errs = append(errs, metav1.FieldInvalid("spec.hostPath.path", hp.Path, "must not contain '..'"))
		}
	}
	if c := s.CSI; c != nil {
		if c.Driver == "" {
			errs = append(errs, metav1.FieldRequired("spec.csi.driver", ""))
		} else {
			for _, msg := range ValidateDNS1123Subdomain(c.Driver) {
				errs = append(errs, metav1.FieldInvalid("spec.csi.driver", c.Driver, msg))
			}
		}
		if c.VolumeHandle == "" {
			errs = append(errs, metav1.FieldRequired("spec.csi.volumeHandle", ""))
		}
	}
	if n := s.NFS; n != nil {
		if n.Server == "" {
			errs = append(errs, metav1.FieldRequired("spec.nfs.server", ""))
		}
		if n.Path == "" {
			errs = append(errs, metav1.FieldRequired("spec.nfs.path", ""))
		} else if !path.IsAbs(n.Path) {
			errs = append(errs, metav1.FieldInvalid("spec.nfs.path", n.Path, "must be an absolute path"))
		}
	}
	if l := s.Local; l != nil && l.Path == "" {
		errs = append(errs, metav1.FieldRequired("spec.local.path", ""))
	}
	return errs
}

// filepathSlash turns a Windows path's separators into slashes, so that
// ".." is found in either form.
func filepathSlash(p string) string { return strings.ReplaceAll(p, "\\", "/") }

func validatePersistentVolumeClaim(o, old Object) metav1.FieldErrors {
	pvc := o.(*corev1.PersistentVolumeClaim)
	s := &pvc.Spec
	var errs metav1.FieldErrors
	if len(s.AccessModes) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.accessModes", "at least 1 access mode is required"))
	}
	if sel := s.Selector; sel != nil {
		errs = append(errs, labelSelectorErrors(sel, "spec.selector")...)
	}
	errs = append(errs, validateAccessModes(s.AccessModes, "spec.accessModes")...)
	path := keyPath("spec.resources", "storage")
	if q, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, metav1.FieldRequired(path, ""))
	} else {
		if q.Sign() <= 0 {
			errs = append(errs, metav1.FieldInvalid(path, q.String(), "must be greater than zero"))
		}
	}
	if c := s.StorageClassName; c != nil && *c != "" {
		for _, msg := range ValidateDNS1123Subdomain(*c) {
			errs = append(errs, metav1.FieldInvalid("spec.storageClassName", *c, msg))
		}
	}
	if m := s.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem && *m != "Block" {
		errs = append(errs, metav1.FieldNotSupported("spec.volumeMode", string(*m), []string{"Block", "Filesystem"}))
	}
	if d, r := s.DataSource, s.DataSourceRef; d != nil && r != nil && (r.Namespace == nil || *r.Namespace == "") &&
		(d.Kind != r.Kind || d.Name != r.Name || !reflect.DeepEqual(d.APIGroup, r.APIGroup)) {
		// kube-apiserver shows a field path as the value, which prints as {}.
		errs = append(errs, metav1.FieldInvalid("spec", goDump{struct{}{}}, "must match dataSourceRef"))
	}
	for _, k := range resourceKeys(pvc.Status.Capacity) {
		if q := pvc.Status.Capacity[corev1.ResourceName(k)]; q.Value() < 0 {
			errs = append(errs, metav1.FieldInvalid(keyPath("status.capacity", k), q.Value(), "must be a valid resource quantity"))
		}
	}
	if old == nil {
		return errs
	}
	prev := old.(*corev1.PersistentVolumeClaim)
	oldSpec, newSpec := *prev.Spec.DeepCopy(), *s.DeepCopy()
	if oldSpec.VolumeName == "" {
		oldSpec.VolumeName = newSpec.VolumeName
	}
	if pvc.Status.Phase == corev1.ClaimBound && newSpec.Resources.Requests != nil {
		if q, ok := oldSpec.Resources.Requests[corev1.ResourceStorage]; ok {
			newSpec.Resources.Requests[corev1.ResourceStorage] = q
		}
	}
	// A claim without a class may be given one: the class its beta
	// annotation names, or any when it has no annotation (a default class
	// added afterwards). Otherwise the annotation is immutable.
	oldClass, annotated := prev.Annotations[betaStorageClassAnnotation]
	newClass, stillAnnotated := pvc.Annotations[betaStorageClassAnnotation]
	if annotated && stillAnnotated && oldClass == newClass && oldSpec.StorageClassName == nil &&
		newSpec.StorageClassName != nil && *newSpec.StorageClassName == oldClass {
		newSpec.StorageClassName = nil
	} else if oldClass != newClass {
		errs = append(errs, metav1.FieldInvalid("metadata.annotations."+betaStorageClassAnnotation, newClass, "field is immutable"))
	}
	if !annotated && oldSpec.StorageClassName == nil && newSpec.StorageClassName != nil {
		newSpec.StorageClassName = nil
	}
	oldSpec.VolumeAttributesClassName = newSpec.VolumeAttributesClassName
	if !reflect.DeepEqual(oldSpec, newSpec) {
		errs = append(errs, metav1.FieldForbidden("spec",
			"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"+goDiff(oldSpec, newSpec)))
	}
	return errs
}

// validatePodTemplateSpecBasics checks a pod template: its labels and
// annotations (under path.labels, as kube-apiserver names them), and its
// spec as a pod's (podSpecErrors).
func validatePodTemplateSpecBasics(t *corev1.PodTemplateSpec, path string) metav1.FieldErrors {
	errs := ValidateLabels(t.Labels, path+".labels")
	errs = append(errs, ValidateAnnotations(t.Annotations, path+".annotations")...)
	return append(errs, podSpecErrors(&t.Spec, path+".spec")...)
}

func validatePodTemplate(o, _ Object) metav1.FieldErrors {
	pt := o.(*corev1.PodTemplate)
	return validatePodTemplateSpecBasics(&pt.Template, "template")
}

func validateReplicationController(o, _ Object) metav1.FieldErrors {
	rc := o.(*corev1.ReplicationController)
	s := &rc.Spec
	var errs metav1.FieldErrors
	if len(s.Selector) == 0 {
		errs = append(errs, metav1.FieldRequired("spec.selector", ""))
	}
	if s.Template == nil {
		errs = append(errs, metav1.FieldRequired("spec.template", ""))
	} else {
		for k, v := range s.Selector {
			if s.Template.Labels[k] != v {
				errs = append(errs, metav1.FieldInvalid("spec.template.metadata.labels", s.Template.Labels,
					"`selector` does not match template `labels`"))
				break
			}
		}
		errs = append(errs, validatePodTemplateSpecBasics(s.Template, "spec.template")...)
		if p := s.Template.Spec.RestartPolicy; p != corev1.RestartPolicyAlways {
			errs = append(errs, metav1.FieldNotSupported("spec.template.spec.restartPolicy", string(p), []string{"Always"}))
		}
		if s.Template.Spec.ActiveDeadlineSeconds != nil {
			errs = append(errs, metav1.FieldForbidden("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicationController is not Supported"))
		}
	}
	if s.Replicas != nil && *s.Replicas < 0 {
		errs = append(errs, metav1.FieldInvalid("spec.replicas", int64(*s.Replicas), "must be greater than or equal to 0"))
	}
	if s.MinReadySeconds < 0 {
		errs = append(errs, metav1.FieldInvalid("spec.minReadySeconds", int64(s.MinReadySeconds), "must be greater than or equal to 0"))
	}
	return append(errs, replicationControllerStatusErrors(&rc.Status)...)
}

// replicationControllerStatusErrors checks the counts of a replication
// controller's status, as kube-apiserver does on every update (a status
// that did not change is valid).
func replicationControllerStatusErrors(st *corev1.ReplicationControllerStatus) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, c := range []struct {
		field string
		n     int64
	}{{"replicas", int64(st.Replicas)}, {"fullyLabeledReplicas", int64(st.FullyLabeledReplicas)}, {"readyReplicas", int64(st.ReadyReplicas)},
		{"availableReplicas", int64(st.AvailableReplicas)}, {"observedGeneration", st.ObservedGeneration}} {
		if c.n < 0 {
			errs = append(errs, metav1.FieldInvalid("status."+c.field, c.n, "must be greater than or equal to 0"))
		}
	}
	const more = "cannot be greater than status.replicas"
	if st.FullyLabeledReplicas > st.Replicas {
		errs = append(errs, metav1.FieldInvalid("status.fullyLabeledReplicas", int64(st.FullyLabeledReplicas), more))
	}
	if st.ReadyReplicas > st.Replicas {
		errs = append(errs, metav1.FieldInvalid("status.readyReplicas", int64(st.ReadyReplicas), more))
	}
	if st.AvailableReplicas > st.Replicas {
		errs = append(errs, metav1.FieldInvalid("status.availableReplicas", int64(st.AvailableReplicas), more))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, metav1.FieldInvalid("status.availableReplicas", int64(st.AvailableReplicas), "cannot be greater than readyReplicas"))
	}
	return errs
}
