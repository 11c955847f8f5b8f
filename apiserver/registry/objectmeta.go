package registry

import (
	"fmt"
	"slices"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Object metadata validation, as kube-apiserver's ValidateObjectMeta and
// ValidateObjectMetaUpdate do it (apimachinery's, and the core API's
// wrapper that also checks finalizer names). The field paths, types and
// messages are kube-apiserver's. Where kube-apiserver walks a map (labels,
// annotations), its order is random; kapi walks the keys sorted.

// MaxAnnotationsSize is the most bytes an object's annotations may hold,
// keys and values together.
const MaxAnnotationsSize = 256 * 1024

// Standard finalizers: the names a finalizer may have without a "/".
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
	FinalizerKubernetes       = "kubernetes"
)

// MetaRules say how a kind's own validation checks its metadata.
type MetaRules struct {
	// Name validates metadata.name and metadata.generateName
	// (NameIsDNSSubdomain when nil).
	Name NameFunc
	// Kube adds the check of the built-in API groups: a finalizer without
	// "/" must be a standard one (custom resources only get a warning).
	Kube bool
	// UpdateOnly means the kind's validation of an update checks the
	// metadata as an update only, not again as a new object's (apps and
	// coordination kinds, custom resources): a generateName set by an
	// update then only has to fit in a URL.
	UpdateOnly bool
	// NewFirst means the kind's validation of an update checks the
	// metadata as a new object's before checking it as an update (nodes,
	// namespaces); most kinds do it the other way round.
	NewFirst bool
}

// builtinMeta are the MetaRules of a built-in kind whose names follow name.
func builtinMeta(name NameFunc) MetaRules { return MetaRules{Name: name, Kube: true} }

// statusMetadata is the StatusMetadata of the built-in kinds: a /status
// update takes labels, annotations, finalizers and owner references from
// the request, except owner references for pods (the kubelet's copies are
// not trusted) and labels for deployments.
func statusMetadata(keepOwners, keepLabels bool) func(next, in Object) {
	return func(next, in Object) {
		if !keepLabels {
			next.SetLabels(in.GetLabels())
		}
		next.SetAnnotations(in.GetAnnotations())
		next.SetFinalizers(in.GetFinalizers())
		if !keepOwners {
			next.SetOwnerReferences(in.GetOwnerReferences())
		}
	}
}

func (m MetaRules) name() NameFunc {
	if m.Name == nil {
		return NameIsDNSSubdomain
	}
	return m.Name
}

// ValidateObjectMeta checks the metadata of a new object (its name already
// generated): generateName and name by the kind's rules, the namespace
// (required and a DNS label when namespaced, forbidden otherwise), the
// generation, labels, annotations, owner references and finalizers.
func ValidateObjectMeta(obj Object, namespaced bool, rules MetaRules) metav1.FieldErrors {
	nameFn := rules.name()
	var errs metav1.FieldErrors
	if gn := obj.GetGenerateName(); gn != "" {
		for _, msg := range nameFn(gn, true) {
			errs = append(errs, metav1.FieldInvalid("metadata.generateName", gn, msg))
		}
	}
	if name := obj.GetName(); name == "" {
		errs = append(errs, metav1.FieldRequired("metadata.name", "name or generateName is required"))
	} else {
		for _, msg := range nameFn(name, false) {
			errs = append(errs, metav1.FieldInvalid("metadata.name", name, msg))
		}
	}
	if ns := obj.GetNamespace(); namespaced {
		if ns == "" {
			errs = append(errs, metav1.FieldRequired("metadata.namespace", ""))
		} else {
			for _, msg := range ValidateDNS1123Label(ns) {
				errs = append(errs, metav1.FieldInvalid("metadata.namespace", ns, msg))
			}
		}
	} else if ns != "" {
		errs = append(errs, metav1.FieldForbidden("metadata.namespace", "not allowed on this type"))
	}
	if g := obj.GetGeneration(); g < 0 {
		errs = append(errs, metav1.FieldInvalid("metadata.generation", g, "must be greater than or equal to 0"))
	}
	errs = append(errs, ValidateLabels(obj.GetLabels(), "metadata.labels")...)
	errs = append(errs, ValidateAnnotations(obj.GetAnnotations(), "metadata.annotations")...)
	errs = append(errs, validateOwnerReferences(obj.GetOwnerReferences(), "metadata.ownerReferences")...)
	errs = append(errs, validateFinalizers(obj.GetFinalizers(), "metadata.finalizers")...)
	if rules.Kube {
		errs = append(errs, kubeFinalizers(obj.GetFinalizers())...)
	}
	return errs
}

// ValidateObjectMetaUpdate checks the metadata of the next state of old: no
// finalizer added once the object is being deleted, a resourceVersion, a
// generation that does not go down, the system fields unchanged, and the
// labels, annotations and owner references as on create.
func ValidateObjectMetaUpdate(obj, old Object, rules MetaRules) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if old.GetDeletionTimestamp() != nil {
		if added := addedFinalizers(old.GetFinalizers(), obj.GetFinalizers()); len(added) > 0 {
			errs = append(errs, metav1.FieldForbidden("metadata.finalizers",
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added)))
		}
	}
	if obj.GetResourceVersion() == "" {
		errs = append(errs, metav1.FieldInvalid("metadata.resourceVersion", "", "must be specified for an update"))
	}
	if obj.GetGeneration() < old.GetGeneration() {
		errs = append(errs, metav1.FieldInvalid("metadata.generation", obj.GetGeneration(), "must not be decremented"))
	}
	immutable := func(path string, changed bool, value any) {
		if changed {
			errs = append(errs, metav1.FieldInvalid(path, value, "field is immutable"))
		}
	}
	immutable("metadata.name", obj.GetName() != old.GetName(), obj.GetName())
	immutable("metadata.namespace", obj.GetNamespace() != old.GetNamespace(), obj.GetNamespace())
	immutable("metadata.uid", obj.GetUID() != old.GetUID(), string(obj.GetUID()))
	errs = append(errs, ValidateLabels(obj.GetLabels(), "metadata.labels")...)
	errs = append(errs, ValidateAnnotations(obj.GetAnnotations(), "metadata.annotations")...)
	errs = append(errs, validateOwnerReferences(obj.GetOwnerReferences(), "metadata.ownerReferences")...)
	if rules.Kube {
		errs = append(errs, kubeFinalizers(obj.GetFinalizers())...)
	}
	return errs
}

// addedFinalizers lists, sorted and once each, the finalizers of next that
// old lacks.
func addedFinalizers(old, next []string) []string {
	var added []string
	for _, f := range next {
		if !slices.Contains(old, f) && !slices.Contains(added, f) {
			added = append(added, f)
		}
	}
	slices.Sort(added)
	return added
}

// ValidateLabels checks label keys (qualified names) and values; every
// error is on path itself.
func ValidateLabels(labels map[string]string, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, k := range sortedMapKeys(labels) {
		for _, msg := range ValidateQualifiedName(k) {
			errs = append(errs, metav1.FieldInvalid(path, k, msg))
		}
		v := labels[k]
		for _, msg := range ValidateLabelValue(v) {
			errs = append(errs, metav1.FieldInvalid(path, v, msg))
		}
	}
	return errs
}

// ValidateAnnotations checks annotation keys (qualified names, any case)
// and their total size.
func ValidateAnnotations(annotations map[string]string, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	size := 0
	for _, k := range sortedMapKeys(annotations) {
		for _, msg := range ValidateQualifiedName(strings.ToLower(k)) {
			errs = append(errs, metav1.FieldInvalid(path, k, msg))
		}
		size += len(k) + len(annotations[k])
	}
	if size > MaxAnnotationsSize {
		errs = append(errs, metav1.FieldTooLong(path, MaxAnnotationsSize))
	}
	return errs
}

// validateOwnerReferences checks that each reference names its owner
// fully, that no event owns anything, and that at most one is the
// controller.
func validateOwnerReferences(refs []metav1.OwnerReference, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	controller := ""
	for i, ref := range refs {
		p := fmt.Sprintf("%s[%d]", path, i)
		group, version, ok := splitAPIVersion(ref.APIVersion)
		switch {
		case ref.APIVersion == "":
			errs = append(errs, metav1.FieldRequired(p+".apiVersion", "must not be empty"))
		case !ok:
			errs = append(errs, metav1.FieldInvalid(p+".apiVersion", ref.APIVersion, "must be <group>/<version> or <version>"))
		}
		if ref.Kind == "" {
			errs = append(errs, metav1.FieldRequired(p+".kind", "must not be empty"))
		}
		if ref.Name == "" {
			errs = append(errs, metav1.FieldRequired(p+".name", "must not be empty"))
		}
		if ref.UID == "" {
			errs = append(errs, metav1.FieldRequired(p+".uid", "must not be empty"))
		}
		if ok && group == "" && version == "v1" && ref.Kind == "Event" {
			errs = append(errs, metav1.FieldInvalid(p, ref, "/v1, Kind=Event is disallowed from being an owner"))
		}
		if ref.Controller != nil && *ref.Controller {
			this := ref.Kind + "/" + ref.Name
			if controller != "" {
				errs = append(errs, metav1.FieldInvalid(path, refs,
					fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %s and %s", controller, this)))
			} else {
				controller = this
			}
		}
	}
	return errs
}

// splitAPIVersion splits "group/version" or "version"; ok is false for
// anything else, or an empty version.
func splitAPIVersion(apiVersion string) (group, version string, ok bool) {
	switch parts := strings.Split(apiVersion, "/"); len(parts) {
	case 1:
		return "", parts[0], parts[0] != ""
	case 2:
		return parts[0], parts[1], parts[1] != ""
	}
	return "", "", false
}

// validateFinalizers checks that finalizers are qualified names and that
// orphan and foregroundDeletion are not both asked for.
func validateFinalizers(finalizers []string, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	orphan, foreground := false, false
	for _, f := range finalizers {
		for _, msg := range ValidateQualifiedName(f) {
			errs = append(errs, metav1.FieldInvalid(path, f, msg))
		}
		orphan = orphan || f == FinalizerOrphanDependents
		foreground = foreground || f == FinalizerDeleteDependents
	}
	if orphan && foreground {
		errs = append(errs, metav1.FieldInvalid(path, finalizers,
			fmt.Sprintf("finalizer %s and %s cannot be both set", FinalizerOrphanDependents, FinalizerDeleteDependents)))
	}
	return errs
}

// kubeFinalizers is the check of the built-in API groups: a finalizer
// without "/" must be a standard one.
func kubeFinalizers(finalizers []string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for i, f := range finalizers {
		if msg := kubeFinalizerName(f); msg != "" {
			errs = append(errs, metav1.FieldInvalid(fmt.Sprintf("metadata.finalizers[%d]", i), f, msg))
		}
	}
	return errs
}

// kubeFinalizerName returns what is wrong with a finalizer name that has no
// domain and is not standard, or "".
func kubeFinalizerName(f string) string {
	if strings.Contains(f, "/") {
		return ""
	}
	switch f {
	case FinalizerKubernetes, FinalizerOrphanDependents, FinalizerDeleteDependents:
		return ""
	}
	return "name is neither a standard finalizer name nor is it fully qualified"
}

// ValidateFinalizerName checks a finalizer name as a namespace's
// spec.finalizers are checked: a qualified name, and standard when it has
// no domain. Every error is on path.
func ValidateFinalizerName(f, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, msg := range ValidateQualifiedName(f) {
		errs = append(errs, metav1.FieldInvalid(path, f, msg))
	}
	if msg := kubeFinalizerName(f); msg != "" {
		errs = append(errs, metav1.FieldInvalid(path, f, msg))
	}
	return errs
}

// FinalizerWarnings are the warnings kube-apiserver gives for the
// finalizers of a custom resource that obj adds to old (nil on create):
// custom resources may use any qualified name, but one without a domain is
// discouraged.
func FinalizerWarnings(obj, old Object) []string {
	var warnings []string
	var had []string
	if old != nil {
		had = old.GetFinalizers()
	}
	for _, f := range obj.GetFinalizers() {
		if slices.Contains(had, f) {
			continue
		}
		const path = "metadata.finalizers"
		for _, msg := range ValidateQualifiedName(f) {
			warnings = append(warnings, fmt.Sprintf("%s: %q: %s", path, f, msg))
		}
		if kubeFinalizerName(f) != "" {
			warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", path, f))
		}
	}
	return warnings
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
