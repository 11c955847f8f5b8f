package admission

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"

	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
)

// The priority classes every cluster has (kube-apiserver creates them at
// start), used when the store holds no object of that name.
var SystemPriorityClasses = []*schedulingv1.PriorityClass{
	{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}, Value: 2000001000,
		Description: "Used for system critical pods that must not be moved from their current node."},
	{ObjectMeta: metav1.ObjectMeta{Name: "system-cluster-critical"}, Value: 2000000000,
		Description: "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
}

// DefaultPriorityClass is the global default class among classes: the one
// with the lowest value when several are (nil when none is).
func DefaultPriorityClass(classes []*schedulingv1.PriorityClass) *schedulingv1.PriorityClass {
	var d *schedulingv1.PriorityClass
	for _, c := range classes {
		if c.GlobalDefault && (d == nil || c.Value < d.Value) {
			d = c
		}
	}
	return d
}

// PriorityAdmitPod sets a new pod's priority and preemption policy from
// its class (class nil: the pod names none and there is no default; def
// is the global default class, nil when none), as the Priority plugin
// does, and refuses a pod that states other values. classFound reports
// whether the class the pod names exists.
func PriorityAdmitPod(p *corev1.Pod, class *schedulingv1.PriorityClass, def *schedulingv1.PriorityClass) error {
	var value int32
	policy := corev1.PreemptLowerPriority
	switch {
	case p.Spec.PriorityClassName != "":
		if class == nil {
			return fmt.Errorf("no PriorityClass with name %s was found", p.Spec.PriorityClassName)
		}
		value = class.Value
		if class.PreemptionPolicy != nil {
			policy = *class.PreemptionPolicy
		}
	case def != nil:
		p.Spec.PriorityClassName = def.Name
		value = def.Value
		if def.PreemptionPolicy != nil {
			policy = *def.PreemptionPolicy
		}
	}
	if p.Spec.Priority != nil && *p.Spec.Priority != value {
		return fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; "+
			"priority admission controller computed %d from the given PriorityClass name", *p.Spec.Priority, value)
	}
	p.Spec.Priority = &value
	if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != policy {
		return fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; "+
			"priority admission controller computed %s from the given PriorityClass name", *p.Spec.PreemptionPolicy, policy)
	}
	p.Spec.PreemptionPolicy = &policy
	return nil
}

// PriorityKeepOnUpdate keeps the priority and preemption policy set at
// creation when an update leaves them out.
func PriorityKeepOnUpdate(p, old *corev1.Pod) {
	if p.Spec.Priority == nil && old.Spec.Priority != nil {
		p.Spec.Priority = new(*old.Spec.Priority)
	}
	if p.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
		p.Spec.PreemptionPolicy = new(*old.Spec.PreemptionPolicy)
	}
}

// RuntimeClassAdmitPod applies a pod's RuntimeClass (nil when the pod
// names one that does not exist) as the RuntimeClass plugin does: the
// class's overhead becomes the pod's, its node selector and tolerations
// are merged into the pod's; a pod whose overhead or node selector
// disagrees with the class is refused.
func RuntimeClassAdmitPod(p *corev1.Pod, rc *nodev1.RuntimeClass) error {
	if p.Spec.RuntimeClassName == nil || *p.Spec.RuntimeClassName == "" {
		if p.Spec.Overhead != nil {
			return errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
		}
		return nil
	}
	if rc == nil {
		return fmt.Errorf("pod rejected: RuntimeClass %q not found", *p.Spec.RuntimeClassName)
	}
	if rc.Overhead != nil {
		if p.Spec.Overhead != nil {
			if !resourceListEqual(p.Spec.Overhead, rc.Overhead.PodFixed) {
				return errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
			}
		} else {
			p.Spec.Overhead = maps.Clone(rc.Overhead.PodFixed)
		}
	} else if p.Spec.Overhead != nil {
		return errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
	}
	if rc.Scheduling == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(rc.Scheduling.NodeSelector)) {
		v := rc.Scheduling.NodeSelector[k]
		if have, ok := p.Spec.NodeSelector[k]; ok && have != v {
			return fmt.Errorf("pod rejected: conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, have)
		}
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[k] = v
	}
	for _, t := range rc.Scheduling.Tolerations {
		if !slices.ContainsFunc(p.Spec.Tolerations, func(x corev1.Toleration) bool { return tolerationEqual(x, t) }) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, t)
		}
	}
	return nil
}

func tolerationEqual(a, b corev1.Toleration) bool {
	if a.Key != b.Key || a.Operator != b.Operator || a.Value != b.Value || a.Effect != b.Effect {
		return false
	}
	if (a.TolerationSeconds == nil) != (b.TolerationSeconds == nil) {
		return false
	}
	return a.TolerationSeconds == nil || *a.TolerationSeconds == *b.TolerationSeconds
}

func resourceListEqual(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// The annotations that mark a default class.
const (
	DefaultStorageClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	BetaDefaultStorageClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
	DefaultIngressClassAnnotation     = "ingressclass.kubernetes.io/is-default-class"
	// IngressClassAnnotation is the deprecated way an Ingress names its
	// class; an Ingress with it gets no default class.
	IngressClassAnnotation = "kubernetes.io/ingress.class"
)

// newest is the object kube-apiserver picks among several marked default:
// the most recently created, the first by name on a tie.
func newest[T metav1.Object](objs []T) (T, bool) {
	var best T
	found := false
	for _, o := range objs {
		if !found {
			best, found = o, true
			continue
		}
		a, b := o.GetCreationTimestamp(), best.GetCreationTimestamp()
		if a.After(b.Time) || (a.Equal(&b) && o.GetName() < best.GetName()) {
			best = o
		}
	}
	return best, found
}

// DefaultStorageClassName is the name of the default StorageClass among
// classes ("" when none is marked), as the DefaultStorageClass plugin
// chooses it.
func DefaultStorageClassName(classes []*storagev1.StorageClass) string {
	var marked []*storagev1.StorageClass
	for _, c := range classes {
		if c.Annotations[DefaultStorageClassAnnotation] == "true" || c.Annotations[BetaDefaultStorageClassAnnotation] == "true" {
			marked = append(marked, c)
		}
	}
	if c, ok := newest(marked); ok {
		return c.Name
	}
	return ""
}

// DefaultIngressClassName is DefaultStorageClassName for IngressClasses.
func DefaultIngressClassName(classes []*networkingv1.IngressClass) string {
	var marked []*networkingv1.IngressClass
	for _, c := range classes {
		if c.Annotations[DefaultIngressClassAnnotation] == "true" {
			marked = append(marked, c)
		}
	}
	if c, ok := newest(marked); ok {
		return c.Name
	}
	return ""
}

// The finalizers of the StorageObjectInUseProtection plugin.
const (
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
)

// AddFinalizer adds f to obj's finalizers unless it is there.
func AddFinalizer(obj metav1.Object, f string) {
	if fs := obj.GetFinalizers(); !slices.Contains(fs, f) {
		obj.SetFinalizers(append(fs, f))
	}
}

// kubeAPIServerClientSigner is the signer of client certificates for
// kube-apiserver.
const kubeAPIServerClientSigner = "kubernetes.io/kube-apiserver-client"

// CertificateSubjectRestriction refuses a request for a kube-apiserver
// client certificate in the system:masters group, as the plugin of that
// name does (such a certificate would bypass authorization).
func CertificateSubjectRestriction(csr *certificatesv1.CertificateSigningRequest) error {
	if csr.Spec.SignerName != kubeAPIServerClientSigner {
		return nil
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil {
		return errors.New("failed to parse CSR: PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return fmt.Errorf("failed to parse CSR: %w", err)
	}
	if slices.Contains(req.Subject.Organization, "system:masters") {
		return fmt.Errorf("use of %s signer with system:masters group is not allowed", kubeAPIServerClientSigner)
	}
	return nil
}
