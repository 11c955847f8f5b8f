package registry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/selector"
)

// The apps/v1 workload kinds besides Deployments (builtin.go): what
// kube-apiserver v1.37's SetDefaults_* of apps/v1 and the strategies of
// pkg/registry/apps fill in and check. Their pod templates are defaulted
// as a pod spec is (defaultPodSpec).

// daemonSetTemplateGeneration is the annotation in which apps/v1 carries a
// DaemonSet's template generation (1 on create, +1 on each template change).
const daemonSetTemplateGeneration = "deprecated.daemonset.template.generation"

// appsKinds are apps/v1 StatefulSets, DaemonSets, ReplicaSets and
// ControllerRevisions.
func appsKinds(Options, services) []*Resource {
	return []*Resource{
		kind[appsv1.StatefulSet]("apps", "v1", "statefulsets", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Default: defaultStatefulSet, Validate: validateStatefulSet,
			PrepareForCreate: func(o Object) {
				defaultStatefulSet(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultStatefulSet(o) },
			Bookmark:         func(o Object) { o.(*appsv1.StatefulSet).Spec.Replicas = new(int32) },
			Printer:          statefulSetPrinter}),
		kind[appsv1.DaemonSet]("apps", "v1", "daemonsets", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Default: defaultDaemonSet, Validate: validateDaemonSet,
			PrepareForCreate: func(o Object) {
				defaultDaemonSet(o)
				ResetStatus(o)
				setObjectAnnotation(o, daemonSetTemplateGeneration, "1")
			},
			PrepareForUpdate: func(o, old Object) {
				defaultDaemonSet(o)
				prepareDaemonSetUpdate(o.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet))
			},
			Bookmark: func(o Object) { setObjectAnnotation(o, daemonSetTemplateGeneration, "0") },
			Printer:  daemonSetPrinter}),
		kind[appsv1.ReplicaSet]("apps", "v1", "replicasets", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Default: defaultReplicaSet, Validate: validateReplicaSet,
			PrepareForCreate: func(o Object) {
				defaultReplicaSet(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultReplicaSet(o) },
			Bookmark:         func(o Object) { o.(*appsv1.ReplicaSet).Spec.Replicas = new(int32) },
			Printer:          replicaSetPrinter}),
		kind[appsv1.ControllerRevision]("apps", "v1", "controllerrevisions", Resource{
			Meta: MetaRules{Kube: true, UpdateOnly: true}, Validate: validateControllerRevision,
			Printer: controllerRevisionPrinter}),
	}
}

// setObjectAnnotation sets one annotation of o.
func setObjectAnnotation(o Object, key, value string) {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	o.SetAnnotations(a)
}

// defaultStatefulSet applies apps/v1's StatefulSet defaults: one replica,
// OrderedReady pods, a RollingUpdate strategy from partition 0 with one pod
// unavailable at a time, 10 revisions, PVCs retained, and the defaults of
// its pod template and volume claim templates.
func defaultStatefulSet(o Object) {
	s := o.(*appsv1.StatefulSet)
	sp := &s.Spec
	if sp.Replicas == nil {
		sp.Replicas = new(int32(1))
	}
	if sp.PodManagementPolicy == "" {
		sp.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if sp.UpdateStrategy.Type == "" {
		sp.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if sp.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if sp.UpdateStrategy.RollingUpdate == nil {
			sp.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		ru := sp.UpdateStrategy.RollingUpdate
		if ru.Partition == nil {
			ru.Partition = new(int32(0))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = new(intstr.FromInt32(1))
		}
	}
	if sp.RevisionHistoryLimit == nil {
		sp.RevisionHistoryLimit = new(int32(10))
	}
	if sp.PersistentVolumeClaimRetentionPolicy == nil {
		sp.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := sp.PersistentVolumeClaimRetentionPolicy; true {
		if p.WhenDeleted == "" {
			p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
		}
		if p.WhenScaled == "" {
			p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
		}
	}
	for i := range sp.VolumeClaimTemplates {
		defaultClaimTemplate(&sp.VolumeClaimTemplates[i])
	}
	defaultPodSpec(&sp.Template.Spec)
}

// defaultClaimTemplate fills in a StatefulSet's volume claim template as
// kube-apiserver does: its kind and apiVersion, and a PVC's defaults
// (Filesystem volume mode, phase Pending).
func defaultClaimTemplate(c *corev1.PersistentVolumeClaim) {
	if c.APIVersion == "" {
		c.APIVersion = "v1"
	}
	if c.Kind == "" {
		c.Kind = "PersistentVolumeClaim"
	}
	if c.Spec.VolumeMode == nil {
		c.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
	}
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
	roundUpResources(c.Spec.Resources.Limits)
	roundUpResources(c.Spec.Resources.Requests)
}

// defaultDaemonSet applies apps/v1's DaemonSet defaults: a RollingUpdate
// strategy with one node unavailable and no surge, 10 revisions, and the
// pod template's defaults.
func defaultDaemonSet(o Object) {
	d := o.(*appsv1.DaemonSet)
	st := &d.Spec.UpdateStrategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if st.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = new(intstr.FromInt32(1))
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = new(intstr.FromInt32(0))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(10))
	}
	// kube-apiserver keeps the template generation in its internal object
	// and writes the annotation back whenever it converts to apps/v1, so
	// the annotation is always there (0 until the strategy sets it).
	if _, ok := d.Annotations[daemonSetTemplateGeneration]; !ok {
		setObjectAnnotation(d, daemonSetTemplateGeneration, "0")
	}
	defaultPodSpec(&d.Spec.Template.Spec)
}

// prepareDaemonSetUpdate keeps the template generation annotation as
// stored, bumped by one when the template changes (a client cannot
// remove or set it).
func prepareDaemonSetUpdate(d, old *appsv1.DaemonSet) {
	gen, err := strconv.ParseInt(old.Annotations[daemonSetTemplateGeneration], 10, 64)
	if err != nil {
		gen = 0
	}
	if !equalJSON(d.Spec.Template, old.Spec.Template) {
		gen++
	}
	if gen > 0 {
		setObjectAnnotation(d, daemonSetTemplateGeneration, strconv.FormatInt(gen, 10))
	}
}

// defaultReplicaSet applies apps/v1's ReplicaSet defaults: one replica and
// the pod template's defaults.
func defaultReplicaSet(o Object) {
	r := o.(*appsv1.ReplicaSet)
	if r.Spec.Replicas == nil {
		r.Spec.Replicas = new(int32(1))
	}
	defaultPodSpec(&r.Spec.Template.Spec)
}

// validateSelectorAndTemplate checks a workload's selector against its pod
// template, as the apps validation does: a required selector (required
// false: a DaemonSet's, whose absence only shows as a mismatch), not
// empty, valid, and matching the template's labels; then the template's
// pod spec, whose restartPolicy must be Always.
func validateSelectorAndTemplate(sel *metav1.LabelSelector, tmpl *corev1.PodTemplateSpec, required bool, kindName string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if sel == nil {
		if required {
			errs = append(errs, metav1.FieldRequired("spec.selector", ""))
		}
	} else {
		errs = append(errs, labelSelectorErrors(sel, "spec.selector")...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, metav1.FieldInvalid("spec.selector", sel, "empty selector is invalid for "+kindName))
		}
	}
	if !selectorMatches(sel, tmpl.Labels) {
		errs = append(errs, metav1.FieldInvalid("spec.template.metadata.labels", tmpl.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodTemplateSpec(tmpl, "spec.template")...)
	if rp := tmpl.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyAlways {
		errs = append(errs, metav1.FieldNotSupported("spec.template.spec.restartPolicy", string(rp), []string{string(corev1.RestartPolicyAlways)}))
	}
	return errs
}

// selectorMatches reports whether sel selects labels: a nil selector
// selects nothing, an empty one everything; an invalid one is reported by
// labelSelectorErrors and counts as matching.
func selectorMatches(sel *metav1.LabelSelector, labels map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := selector.FromLabelSelector(sel)
	if err != nil {
		return true
	}
	return s.Matches(selector.Set(labels))
}

// validatePodTemplateSpec checks what every pod template needs: its labels
// and annotations, and its pod spec as a pod's (podSpecErrors).
func validatePodTemplateSpec(t *corev1.PodTemplateSpec, path string) metav1.FieldErrors {
	errs := ValidateLabels(t.Labels, path+".labels")
	errs = append(errs, ValidateAnnotations(t.Annotations, path+".annotations")...)
	return append(errs, podSpecErrors(&t.Spec, path+".spec")...)
}

// validateNonNegative reports a negative value of an optional field.
func validateNonNegative(path string, v int64) metav1.FieldErrors {
	if v < 0 {
		return metav1.FieldErrors{metav1.FieldInvalid(path, v, "must be greater than or equal to 0")}
	}
	return nil
}

// validateStatefulSet checks a StatefulSet as v1.37.2 does: its policies,
// selector and template, and on update the immutable selector, serviceName,
// podManagementPolicy and volumeClaimTemplates; replicas and
// minReadySeconds (declarative rules there) come last.
func validateStatefulSet(o, old Object) metav1.FieldErrors {
	s := o.(*appsv1.StatefulSet)
	sp := &s.Spec
	var errs metav1.FieldErrors
	switch sp.PodManagementPolicy {
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	case "":
		errs = append(errs, metav1.FieldRequired("spec.podManagementPolicy", ""))
	default:
		errs = append(errs, metav1.FieldInvalid("spec.podManagementPolicy", string(sp.PodManagementPolicy), "must be 'OrderedReady' or 'Parallel'"))
	}
	switch sp.UpdateStrategy.Type {
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := sp.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			errs = append(errs, validateNonNegative("spec.updateStrategy.rollingUpdate.partition", int64(*ru.Partition))...)
		}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if sp.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, metav1.FieldInvalid("spec.updateStrategy.rollingUpdate", goDump{sp.UpdateStrategy.RollingUpdate},
				"only allowed for updateStrategy 'RollingUpdate'"))
		}
	case "":
		errs = append(errs, metav1.FieldRequired("spec.updateStrategy", ""))
	default:
		errs = append(errs, metav1.FieldInvalid("spec.updateStrategy", goDump{sp.UpdateStrategy}, "must be 'RollingUpdate' or 'OnDelete'"))
	}
	if p := sp.PersistentVolumeClaimRetentionPolicy; p != nil {
		supported := []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}
		for _, f := range []struct {
			name string
			v    appsv1.PersistentVolumeClaimRetentionPolicyType
		}{{"whenDeleted", p.WhenDeleted}, {"whenScaled", p.WhenScaled}} {
			if f.v != appsv1.RetainPersistentVolumeClaimRetentionPolicyType && f.v != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
				errs = append(errs, metav1.FieldNotSupported("spec.persistentVolumeClaimRetentionPolicy."+f.name, string(f.v), supported))
			}
		}
	}
	if sp.Ordinals != nil {
		errs = append(errs, validateNonNegative("spec.ordinals.start", int64(sp.Ordinals.Start))...)
	}
	errs = append(errs, validateSelectorAndTemplate(sp.Selector, &sp.Template, true, "statefulset")...)
	if old != nil {
		op := &old.(*appsv1.StatefulSet).Spec
		if !equalJSON(sp.Selector, op.Selector) {
			errs = append(errs, metav1.FieldInvalid("spec.selector", sp.Selector, "field is immutable"))
		}
		if sp.ServiceName != op.ServiceName {
			errs = append(errs, metav1.FieldInvalid("spec.serviceName", sp.ServiceName, "field is immutable"))
		}
		if sp.PodManagementPolicy != op.PodManagementPolicy {
			errs = append(errs, metav1.FieldInvalid("spec.podManagementPolicy", string(sp.PodManagementPolicy), "field is immutable"))
		}
		if !equalJSON(sp.VolumeClaimTemplates, op.VolumeClaimTemplates) {
			errs = append(errs, metav1.FieldInvalid("spec.volumeClaimTemplates", goDump{sp.VolumeClaimTemplates}, "field is immutable"))
		}
	}
	if sp.Replicas != nil {
		errs = append(errs, validateNonNegative("spec.replicas", int64(*sp.Replicas))...)
	}
	errs = append(errs, validateNonNegative("spec.minReadySeconds", int64(sp.MinReadySeconds))...)
	return errs
}

// validateDaemonSet checks a DaemonSet's selector, template and update
// strategy, and on update its immutable selector.
func validateDaemonSet(o, old Object) metav1.FieldErrors {
	d := o.(*appsv1.DaemonSet)
	errs := validateSelectorAndTemplate(d.Spec.Selector, &d.Spec.Template, false, "daemonset")
	switch d.Spec.UpdateStrategy.Type {
	case appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType:
	default:
		errs = append(errs, metav1.FieldNotSupported("spec.updateStrategy.type", string(d.Spec.UpdateStrategy.Type),
			[]string{string(appsv1.OnDeleteDaemonSetStrategyType), string(appsv1.RollingUpdateDaemonSetStrategyType)}))
	}
	errs = append(errs, validateNonNegative("spec.minReadySeconds", int64(d.Spec.MinReadySeconds))...)
	if old != nil {
		if op := old.(*appsv1.DaemonSet); !equalJSON(d.Spec.Selector, op.Spec.Selector) {
			errs = append(errs, metav1.FieldInvalid("spec.selector", d.Spec.Selector, "field is immutable"))
		}
	}
	return errs
}

// validateReplicaSet checks a ReplicaSet's selector and template, its
// replicas, and on update its immutable selector.
func validateReplicaSet(o, old Object) metav1.FieldErrors {
	r := o.(*appsv1.ReplicaSet)
	errs := validateSelectorAndTemplate(r.Spec.Selector, &r.Spec.Template, true, "deployment")
	if old != nil {
		if op := old.(*appsv1.ReplicaSet); !equalJSON(r.Spec.Selector, op.Spec.Selector) {
			errs = append(errs, metav1.FieldInvalid("spec.selector", r.Spec.Selector, "field is immutable"))
		}
	}
	if r.Spec.Replicas != nil {
		errs = append(errs, validateNonNegative("spec.replicas", int64(*r.Spec.Replicas))...)
	}
	errs = append(errs, validateNonNegative("spec.minReadySeconds", int64(r.Spec.MinReadySeconds))...)
	return errs
}

// validateControllerRevision checks a revision number and data, and on
// update that the data did not change.
func validateControllerRevision(o, old Object) metav1.FieldErrors {
	c := o.(*appsv1.ControllerRevision)
	var errs metav1.FieldErrors
	errs = append(errs, validateNonNegative("revision", c.Revision)...)
	if len(c.Data.Raw) == 0 {
		errs = append(errs, metav1.FieldRequired("data", "data is mandatory"))
	}
	if old != nil {
		if oc := old.(*appsv1.ControllerRevision); !equalJSON(c.Data, oc.Data) {
			errs = append(errs, metav1.FieldInvalid("data", c.Data, "field is immutable"))
		}
	}
	return errs
}

// equalJSON reports whether a and b have the same JSON form (a nil and an
// empty list differ, as in kube-apiserver's semantic comparison; raw
// extensions compare by content, not spacing).
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	var va, vb any
	if json.Unmarshal(ja, &va) != nil || json.Unmarshal(jb, &vb) != nil {
		return bytes.Equal(ja, jb)
	}
	return reflect.DeepEqual(va, vb)
}
