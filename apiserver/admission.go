package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
	"github.com/kapi-dev/kapi/apiserver/admission"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// # Admission
//
// The admission plugins a kube-apiserver v1.37 enables by default run in
// the write pipeline (store.go) in two phases, as in kube-apiserver:
//
//   - mutating, after the namespace check of a create and before the
//     kind's own admission checks and validation: LimitRanger's defaults,
//     ServiceAccount, TaintNodesByCondition, Priority,
//     DefaultTolerationSeconds, DefaultStorageClass,
//     StorageObjectInUseProtection, RuntimeClass, DefaultIngressClass;
//   - validating, after validation, before the storage write: LimitRanger's
//     limits, CertificateSubjectRestriction, PodSecurity, then the
//     ValidatingAdmissionPolicies and the validating webhooks, then
//     ResourceQuota (which charges the quotas it admits against).
//
// Each reads the objects it needs (ServiceAccounts, LimitRanges,
// PriorityClasses, RuntimeClasses, StorageClasses, IngressClasses,
// ResourceQuotas, Namespaces, Pods) from the store, by type, whether or not
// their kind is served. Config.DisableAdmissionPlugins turns plugins off by
// kube-apiserver's names, as --disable-admission-plugins does. The
// decisions themselves are in package admission.
//
// What kube-controller-manager's resourcequota controller does is done
// here too, at once: a ResourceQuota's status (hard and used) is computed
// when it is created or its spec changes, and the usage of a namespace's
// quotas is counted again when an object they cover is removed.

// DefaultAdmissionPlugins are the admission plugins kube-apiserver v1.37
// enables by default, in its order. kapi implements the effect of those
// that change or refuse requests it serves (the webhook plugins in
// webhook.go, MutatingAdmissionPolicy and ValidatingAdmissionPolicy in
// policy.go and policy_mutating.go); CertificateApproval,
// CertificateSigning and ClusterTrustBundleAttest check authorization,
// under which everything is allowed until the server
// has RBAC; PodGroupProtection, PersistentVolumeClaimResize,
// PodTopologyLabels, NodeDeclaredFeatureValidator and PodResizeValidator
// have no effect kapi can show without nodes and volumes.
var DefaultAdmissionPlugins = []string{
	"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity", "Priority",
	"DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection", "PodGroupProtection",
	"PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval", "CertificateSigning",
	"ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass", "PodTopologyLabels",
	"NodeDeclaredFeatureValidator", "PodResizeValidator", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook",
	"ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota",
}

// KnownAdmissionPlugins are every admission plugin kube-apiserver v1.37
// knows, on by default or not.
var KnownAdmissionPlugins = []string{
	"AlwaysAdmit", "AlwaysDeny", "AlwaysPullImages", "CertificateApproval", "CertificateSigning",
	"CertificateSubjectRestriction", "ClusterTrustBundleAttest", "DefaultIngressClass", "DefaultStorageClass",
	"DefaultTolerationSeconds", "DenyServiceExternalIPs", "EventRateLimit", "ExtendedResourceToleration",
	"ImagePolicyWebhook", "LimitPodHardAntiAffinityTopology", "LimitRanger", "MutatingAdmissionPolicy",
	"MutatingAdmissionWebhook", "NamespaceAutoProvision", "NamespaceExists", "NamespaceLifecycle",
	"NodeDeclaredFeatureValidator", "NodeRestriction", "OwnerReferencesPermissionEnforcement",
	"PersistentVolumeClaimResize", "PodGroupProtection", "PodNodeSelector", "PodResizeValidator", "PodSecurity",
	"PodTolerationRestriction", "PodTopologyLabels", "Priority", "ResourceQuota", "RuntimeClass", "ServiceAccount",
	"StorageObjectInUseProtection", "TaintNodesByCondition", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
}

// checkAdmissionPlugins refuses names kube-apiserver does not know, as its
// flag does.
func checkAdmissionPlugins(names []string) error {
	for _, n := range names {
		if !slices.Contains(KnownAdmissionPlugins, n) {
			return fmt.Errorf("apiserver: admission plugin %q is unknown", n)
		}
	}
	return nil
}

// admissionOn reports whether the named plugin runs.
func (s *Server) admissionOn(name string) bool {
	return !slices.Contains(s.cfg.DisableAdmissionPlugins, name)
}

// readObject is the stored object group/resource ns/name, nil when there
// is none (or it cannot be read).
func (s *Server) readObject(ctx context.Context, group, resource, ns, name string) storage.Object {
	obj, err := s.store.Get(ctx, keyOf(group, resource, ns, name), storage.ReadOptions{})
	if err != nil {
		return nil
	}
	return obj
}

// readObjects are the stored objects of group/resource in ns ("" for a
// cluster-scoped resource), as T (others are skipped).
func readObjects[T any](ctx context.Context, s *Server, group, resource, ns string) []T {
	key := keyOf(group, resource, ns, "")
	list, err := s.store.List(ctx, key, storage.ListOptions{})
	if err != nil {
		return nil
	}
	out := make([]T, 0, len(list.Items))
	for _, it := range list.Items {
		if t, ok := it.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// admitMutating runs the mutating admission plugins on a create (old nil)
// or an update of the resource itself, then the MutatingAdmissionPolicies
// (policy_mutating.go); name is what their refusals call the object.
func (s *Server) admitMutating(ctx context.Context, res *registry.Resource, name string, obj, old registry.Object, o *writeOptions) *metav1.Status {
	if st := s.admitMutatingPlugins(ctx, res, name, obj, old); st != nil {
		return st
	}
	return s.admitMutatingPolicies(ctx, res, name, obj, old, o.DryRun)
}

// admitMutatingPlugins runs the built-in mutating admission plugins.
func (s *Server) admitMutatingPlugins(ctx context.Context, res *registry.Resource, name string, obj, old registry.Object) *metav1.Status {
	refuse := func(err error) *metav1.Status {
		if err == nil {
			return nil
		}
		return metav1.NewForbidden(res.GroupResource(), name, err)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		if res.Group != "" || res.Resource != "pods" {
			return nil
		}
		if old == nil {
			return refuse(s.admitNewPod(ctx, o))
		}
		if oldPod, ok := old.(*corev1.Pod); ok {
			if s.admissionOn("Priority") {
				admission.PriorityKeepOnUpdate(o, oldPod)
			}
			if s.admissionOn("DefaultTolerationSeconds") {
				registry.AddDefaultTolerations(&o.Spec)
			}
		}
	case *corev1.Node:
		if old == nil && s.admissionOn("TaintNodesByCondition") {
			registry.TaintNewNode(o)
		}
	case *corev1.PersistentVolumeClaim:
		if old != nil {
			return nil
		}
		if o.Spec.StorageClassName == nil && s.admissionOn("DefaultStorageClass") {
			classes := readObjects[*storagev1.StorageClass](ctx, s, "storage.k8s.io", "storageclasses", "")
			if name := admission.DefaultStorageClassName(classes); name != "" {
				o.Spec.StorageClassName = &name
			}
		}
		if s.admissionOn("StorageObjectInUseProtection") {
			admission.AddFinalizer(o, admission.PVCProtectionFinalizer)
		}
	case *corev1.PersistentVolume:
		if old == nil && s.admissionOn("StorageObjectInUseProtection") {
			admission.AddFinalizer(o, admission.PVProtectionFinalizer)
		}
	case *networkingv1.Ingress:
		if old == nil && o.Spec.IngressClassName == nil && s.admissionOn("DefaultIngressClass") {
			if _, annotated := o.Annotations[admission.IngressClassAnnotation]; !annotated {
				classes := readObjects[*networkingv1.IngressClass](ctx, s, "networking.k8s.io", "ingressclasses", "")
				if name := admission.DefaultIngressClassName(classes); name != "" {
					o.Spec.IngressClassName = &name
				}
			}
		}
	}
	return nil
}

// admitNewPod runs the mutating plugins on a new pod, in kube-apiserver's
// order.
func (s *Server) admitNewPod(ctx context.Context, p *corev1.Pod) error {
	if s.admissionOn("LimitRanger") {
		if ranges := readObjects[*corev1.LimitRange](ctx, s, "", "limitranges", p.Namespace); len(ranges) > 0 {
			admission.LimitRangerDefaultPod(p, ranges)
			p.Status.QOSClass = registry.PodQOSClass(&p.Spec)
		}
	}
	if s.admissionOn("ServiceAccount") {
		if err := s.admitServiceAccount(ctx, p); err != nil {
			return err
		}
	}
	if s.admissionOn("Priority") {
		var class, def *schedulingv1.PriorityClass
		if name := p.Spec.PriorityClassName; name != "" {
			class = s.priorityClass(ctx, name)
		} else {
			def = admission.DefaultPriorityClass(readObjects[*schedulingv1.PriorityClass](ctx, s, "scheduling.k8s.io", "priorityclasses", ""))
		}
		if err := admission.PriorityAdmitPod(p, class, def); err != nil {
			return err
		}
	}
	if s.admissionOn("DefaultTolerationSeconds") {
		registry.AddDefaultTolerations(&p.Spec)
	}
	if s.admissionOn("RuntimeClass") {
		var rc *nodev1.RuntimeClass
		if n := p.Spec.RuntimeClassName; n != nil && *n != "" {
			rc, _ = s.readObject(ctx, "node.k8s.io", "runtimeclasses", "", *n).(*nodev1.RuntimeClass)
		}
		if err := admission.RuntimeClassAdmitPod(p, rc); err != nil {
			return err
		}
	}
	return nil
}

// priorityClass is the named PriorityClass, the built-in one of that name
// when the store has none, nil when there is none.
func (s *Server) priorityClass(ctx context.Context, name string) *schedulingv1.PriorityClass {
	if pc, ok := s.readObject(ctx, "scheduling.k8s.io", "priorityclasses", "", name).(*schedulingv1.PriorityClass); ok {
		return pc
	}
	for _, pc := range admission.SystemPriorityClasses {
		if pc.Name == name {
			return pc
		}
	}
	return nil
}

// admitServiceAccount is the ServiceAccount plugin: a pod runs as
// "default" unless it names an account, which must exist; it mounts the
// account's token unless the pod, or else the account, opts out; it gets
// the account's image pull secrets when it has none.
func (s *Server) admitServiceAccount(ctx context.Context, p *corev1.Pod) error {
	if _, mirror := p.Annotations[registry.MirrorPodAnnotation]; mirror {
		return nil // the kubelet owns a mirror pod's spec
	}
	if p.Spec.ServiceAccountName == "" {
		p.Spec.ServiceAccountName = DefaultServiceAccountName
	}
	p.Spec.DeprecatedServiceAccount = p.Spec.ServiceAccountName
	sa, ok := s.readObject(ctx, "", "serviceaccounts", p.Namespace, p.Spec.ServiceAccountName).(*corev1.ServiceAccount)
	if !ok && p.Spec.ServiceAccountName == DefaultServiceAccountName && !s.cfg.DisableServiceAccountController {
		// kube-controller-manager creates it as the namespace is; a
		// client that creates a pod at once may meet the moment before.
		// kapi's controller is not late.
		s.ensureNamespaceDefaults(ctx, p.Namespace)
		sa, ok = s.readObject(ctx, "", "serviceaccounts", p.Namespace, p.Spec.ServiceAccountName).(*corev1.ServiceAccount)
	}
	if !ok {
		return fmt.Errorf("error looking up service account %s/%s: serviceaccount %q not found", p.Namespace, p.Spec.ServiceAccountName, p.Spec.ServiceAccountName)
	}
	automount := true
	switch {
	case p.Spec.AutomountServiceAccountToken != nil:
		automount = *p.Spec.AutomountServiceAccountToken
	case sa.AutomountServiceAccountToken != nil:
		automount = *sa.AutomountServiceAccountToken
	}
	if automount {
		registry.MountServiceAccountToken(&p.Spec, s.cfg.NameSuffix)
	}
	if len(p.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		p.Spec.ImagePullSecrets = slices.Clone(sa.ImagePullSecrets)
	}
	return nil
}

// admitValidating runs the validating phase of admission on a valid
// create (old nil) or update, in kube-apiserver's order: the built-in
// validating plugins (LimitRanger, CertificateSubjectRestriction,
// PodSecurity), the ValidatingAdmissionPolicies (policy.go), the
// validating webhooks (webhook.go), and ResourceQuota last, so that a
// request a plugin refuses never reaches a webhook and a quota is charged
// only for what everything else admitted. The built-in plugins and
// ResourceQuota see only writes of the resource itself that change it
// (builtins false skips them: a subresource, a no-op update); the policies
// and webhooks see every write. o's warnings receive PodSecurity's, the
// policies' and the webhooks'; ResourceQuota charges the quotas unless o
// is a dry run.
func (rs resourceStore) admitValidating(ctx context.Context, o *writeOptions, obj, old registry.Object, builtins bool) *metav1.Status {
	s, res := rs.s, rs.res
	if builtins {
		if st := s.admitValidatingPlugins(ctx, res, obj, old, o); st != nil {
			return st
		}
	}
	if st := s.admitPolicies(ctx, res, o.Subresource, obj, old, o); st != nil {
		return st
	}
	if st := rs.admitValidatingWebhooks(ctx, o, obj, old); st != nil {
		return st
	}
	if builtins && s.admissionOn("ResourceQuota") && res.Namespaced && !res.Custom { // custom resources' counts: not yet
		if err := s.chargeQuota(ctx, res, obj, old, o.DryRun); err != nil {
			var se *statusError
			if errors.As(err, &se) {
				return se.st
			}
			return metav1.NewForbidden(res.GroupResource(), obj.GetName(), err)
		}
	}
	return nil
}

// admitValidatingPlugins runs the built-in validating admission plugins
// that come before the policies and webhooks: LimitRanger's limits,
// CertificateSubjectRestriction and PodSecurity (whose warnings go to o).
func (s *Server) admitValidatingPlugins(ctx context.Context, res *registry.Resource, obj, old registry.Object, o *writeOptions) *metav1.Status {
	refuse := func(err error) *metav1.Status {
		if err == nil {
			return nil
		}
		return metav1.NewForbidden(res.GroupResource(), obj.GetName(), err)
	}
	switch x := obj.(type) {
	case *corev1.Pod:
		if res.Group == "" && res.Resource == "pods" && old == nil && s.admissionOn("LimitRanger") {
			if ranges := readObjects[*corev1.LimitRange](ctx, s, "", "limitranges", x.Namespace); len(ranges) > 0 {
				if st := refuse(admission.LimitRangerCheckPod(x, ranges)); st != nil {
					return st
				}
			}
		}
	case *corev1.PersistentVolumeClaim:
		if s.admissionOn("LimitRanger") {
			if ranges := readObjects[*corev1.LimitRange](ctx, s, "", "limitranges", x.Namespace); len(ranges) > 0 {
				if st := refuse(admission.LimitRangerCheckClaim(x, ranges)); st != nil {
					return st
				}
			}
		}
	case *certificatesv1.CertificateSigningRequest:
		if old == nil && s.admissionOn("CertificateSubjectRestriction") {
			if st := refuse(admission.CertificateSubjectRestriction(x)); st != nil {
				return st
			}
		}
	}
	if s.admissionOn("PodSecurity") {
		return s.admitPodSecurity(ctx, res, obj, old, o)
	}
	return nil
}

// podTemplateOf is the pod template of a workload PodSecurity checks
// (warnings only), nil for other objects.
func podTemplateOf(obj registry.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *corev1.PodTemplate:
		return &o.Template
	case *corev1.ReplicationController:
		return o.Spec.Template
	case *appsv1.ReplicaSet:
		return &o.Spec.Template
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *batchv1.Job:
		return &o.Spec.Template
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template
	}
	return nil
}

// namespacePolicy is the Pod Security policy of namespace ns.
func (s *Server) namespacePolicy(ctx context.Context, ns string) (admission.PodSecurityPolicy, bool) {
	n, ok := s.readObject(ctx, "", "namespaces", "", ns).(*corev1.Namespace)
	if !ok {
		return admission.PodSecurityPolicy{}, false
	}
	p, _ := admission.PolicyFromLabels(n.Labels)
	return p, true
}

// admitPodSecurity is the PodSecurity plugin: pods are refused when they
// violate their namespace's enforced level and warned about when they
// violate its warn level; workloads' pod templates are warned about;
// namespaces must carry valid labels, and a namespace whose enforced level
// becomes stricter warns about the pods that violate it.
func (s *Server) admitPodSecurity(ctx context.Context, res *registry.Resource, obj, old registry.Object, o *writeOptions) *metav1.Status {
	if ns, ok := obj.(*corev1.Namespace); ok && res.Group == "" && res.Resource == "namespaces" {
		return s.admitNamespacePodSecurity(ctx, res, ns, old, o)
	}
	if !res.Namespaced || res.Custom {
		return nil
	}
	var meta *metav1.ObjectMeta
	var spec *corev1.PodSpec
	pod, isPod := obj.(*corev1.Pod)
	switch {
	case isPod && res.Group == "" && res.Resource == "pods":
		if oldPod, ok := old.(*corev1.Pod); ok && !admission.SignificantPodUpdate(pod, oldPod) {
			return nil
		}
		meta, spec = &pod.ObjectMeta, &pod.Spec
	default:
		t := podTemplateOf(obj)
		if t == nil {
			return nil
		}
		meta, spec = &t.ObjectMeta, &t.Spec
	}
	policy, ok := s.namespacePolicy(ctx, obj.GetNamespace())
	if !ok || policy.FullyPrivileged() {
		return nil
	}
	if isPod {
		if v := admission.EvaluatePod(policy.Enforce.Level, meta, spec); len(v) > 0 {
			return metav1.NewForbidden(res.GroupResource(), obj.GetName(),
				fmt.Errorf("violates PodSecurity %q: %s", policy.Enforce.String(), v.String()))
		}
	}
	if v := admission.EvaluatePod(policy.Warn.Level, meta, spec); len(v) > 0 {
		o.warn(fmt.Sprintf("would violate PodSecurity %q: %s", policy.Warn.String(), v.String()))
	}
	return nil
}

// admitNamespacePodSecurity checks a namespace's Pod Security labels and,
// when its enforced level becomes stricter, warns about the pods in it
// that violate the new level.
func (s *Server) admitNamespacePodSecurity(ctx context.Context, res *registry.Resource, ns *corev1.Namespace, old registry.Object, o *writeOptions) *metav1.Status {
	policy, errs := admission.PolicyFromLabels(ns.Labels)
	oldNs, _ := old.(*corev1.Namespace)
	if len(errs) > 0 {
		if oldNs == nil {
			return metav1.NewInvalid(res.GroupKind(), ns.Name, errs)
		}
		if _, oldErrs := admission.PolicyFromLabels(oldNs.Labels); errs.Message() != oldErrs.Message() {
			return metav1.NewInvalid(res.GroupKind(), ns.Name, errs)
		}
	}
	if oldNs == nil {
		return nil
	}
	oldPolicy, _ := admission.PolicyFromLabels(oldNs.Labels)
	switch {
	case policy.Enforce == oldPolicy.Enforce, policy.Enforce.Level == admission.LevelPrivileged:
		return nil
	case policy.Enforce.Version == oldPolicy.Enforce.Version && !admission.Stricter(policy.Enforce.Level, oldPolicy.Enforce.Level):
		return nil
	}
	pods := readObjects[*corev1.Pod](ctx, s, "", "pods", ns.Name)
	for _, w := range admission.NamespacePodWarnings(ns.Name, policy.Enforce, pods) {
		o.warn(w)
	}
	return nil
}

// chargeQuota is the ResourceQuota plugin: the write is checked against
// the quotas of its namespace that cover it, and their status.used takes
// what it charges (unless dryRun). A quota written meanwhile is read again.
func (s *Server) chargeQuota(ctx context.Context, res *registry.Resource, obj, old registry.Object, dryRun bool) error {
	qres := s.reg.Get("", "v1", "resourcequotas")
	if qres == nil {
		return nil
	}
	for attempt := 0; ; attempt++ {
		quotas := readObjects[*corev1.ResourceQuota](ctx, s, "", "resourcequotas", obj.GetNamespace())
		if len(quotas) == 0 {
			return nil
		}
		var oldAny any
		if old != nil {
			oldAny = old
		}
		charges, err := admission.QuotaAdmit(quotas, res.Group, res.Resource, obj, oldAny)
		if err != nil || dryRun || len(charges) == 0 {
			return err
		}
		conflict := false
		for _, c := range charges {
			rv := c.Quota.ResourceVersion
			used := c.Used
			_, err := s.storeOf(qres).modify(ctx, c.Quota.Namespace, c.Quota.Name, &storage.Preconditions{ResourceVersion: &rv},
				&writeOptions{Manager: managerAPIServer, Subresource: "status"}, func(cur storage.Object) storage.Object {
					q := cur.(*corev1.ResourceQuota).DeepCopy()
					q.Status.Used = used
					return q
				})
			if errors.Is(err, storage.ErrConflict) {
				conflict = true
				break
			}
			if err != nil {
				return err
			}
		}
		if !conflict || attempt == 10 {
			return nil
		}
	}
}

// afterWrite is what the cluster's controllers do at once after obj, of
// res, is stored: a ResourceQuota's status is computed; the quotas of a
// pod that has finished are counted again (it uses nothing any more).
func (s *Server) afterWrite(ctx context.Context, res *registry.Resource, obj registry.Object) {
	if q, ok := obj.(*corev1.ResourceQuota); ok && res.Group == "" && res.Resource == "resourcequotas" {
		s.recountQuota(ctx, res, q.Namespace, q.Name)
	}
	if p, ok := obj.(*corev1.Pod); ok && res.Group == "" && res.Resource == "pods" && admission.PodTerminal(p) {
		s.recountQuotasOf(ctx, res, obj)
	}
}

// recountQuotasOf counts again the quotas of obj's namespace that cover
// objects of res, as the resourcequota controller does when one is removed
// or a pod finishes.
func (s *Server) recountQuotasOf(ctx context.Context, res *registry.Resource, obj registry.Object) {
	if !res.Namespaced || res.Custom || (res.Group == "" && res.Resource == "resourcequotas") {
		return
	}
	qres := s.reg.Get("", "v1", "resourcequotas")
	if qres == nil {
		return
	}
	for _, q := range readObjects[*corev1.ResourceQuota](ctx, s, "", "resourcequotas", obj.GetNamespace()) {
		if _, ok := q.Status.Used[admission.CountResource(res.Group, res.Resource)]; ok || quotaCovers(q, res) {
			s.recountQuota(ctx, qres, q.Namespace, q.Name)
		}
	}
}

// quotaCovers reports whether q limits anything objects of res use.
func quotaCovers(q *corev1.ResourceQuota, res *registry.Resource) bool {
	for name := range q.Spec.Hard {
		if g, r, ok := admission.QuotaCountedResource(name); ok && g == res.Group && r == res.Resource {
			return true
		}
		if res.Group == "" && (res.Resource == "pods" || res.Resource == "services" || res.Resource == "persistentvolumeclaims") &&
			!strings.HasPrefix(string(name), "count/") {
			return true
		}
	}
	return false
}

// recountQuota writes a quota's status as the resourcequota controller
// computes it: hard from its spec, used counted from the objects it
// covers.
func (s *Server) recountQuota(ctx context.Context, qres *registry.Resource, ns, name string) {
	_, err := s.storeOf(qres).modify(ctx, ns, name, nil, &writeOptions{Manager: managerControllerManager, Subresource: "status"},
		func(cur storage.Object) storage.Object {
			q := cur.(*corev1.ResourceQuota).DeepCopy()
			q.Status.Hard = q.Spec.Hard
			q.Status.Used = admission.QuotaRecount(q, func(group, resource string) []any {
				list, err := s.store.List(ctx, keyOf(group, resource, ns, ""), storage.ListOptions{})
				if err != nil {
					return nil
				}
				out := make([]any, len(list.Items))
				for i, it := range list.Items {
					out[i] = it
				}
				return out
			})
			return q
		})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.logInternal(ctx, "resourcequota", ns, err)
	}
}
