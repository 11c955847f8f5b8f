package registry

import (
	"fmt"
	"math/rand/v2"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Admission: the mutations and checks of the kube-apiserver v1.32 admission
// plugins that are enabled by default and change or refuse the built-in kinds
// kapi serves:
//
//   - ServiceAccount: a pod without serviceAccountName runs as "default", and
//     unless it opts out (automountServiceAccountToken: false) every container
//     and init container mounts a projected token volume
//     kube-api-access-<5 random characters> read-only at
//     /var/run/secrets/kubernetes.io/serviceaccount. kube-apiserver also
//     refuses the pod when the service account does not exist and copies the
//     account's imagePullSecrets and automount preference; the registry
//     cannot read other objects, so kapi assumes the account exists, has no
//     pull secrets and does not opt out.
//   - Priority: a pod gets the priority and preemption policy of its priority
//     class, 0 and PreemptLowerPriority when it names none (the cluster has no
//     global default class), and is refused when it states a different value.
//     kapi serves no PriorityClass objects; it knows the two built-in classes
//     (system-cluster-critical, system-node-critical) and accepts any other
//     name as a class it cannot see, keeping the pod's own values (default 0,
//     PreemptLowerPriority), so that what a real cluster with that class
//     accepts kapi accepts too.
//   - DefaultTolerationSeconds: a pod that does not tolerate the not-ready and
//     unreachable NoExecute taints tolerates them for 300 seconds.
//   - TaintNodesByCondition: a new node carries the not-ready NoSchedule taint
//     until its kubelet reports it ready.
//
// These apply to pods and nodes only: a deployment's pod template gets the
// defaults of defaults.go and nothing from here.

// Names and values the plugins use.
const (
	serviceAccountVolumePrefix = "kube-api-access-"
	serviceAccountMountPath    = "/var/run/secrets/kubernetes.io/serviceaccount"
	defaultServiceAccountName  = "default"
	// boundTokenExpirationSeconds is the lifetime of the projected token:
	// one hour and seven seconds, the extra seconds telling kube-apiserver
	// that the token comes from this volume (its "warn-only" lifetime).
	boundTokenExpirationSeconds = int64(3607)
	rootCAConfigMap             = "kube-root-ca.crt"
	mirrorPodAnnotation         = "kubernetes.io/config.mirror"

	taintNodeNotReady        = "node.kubernetes.io/not-ready"
	taintNodeUnreachable     = "node.kubernetes.io/unreachable"
	defaultTolerationSeconds = int64(300)

	systemClusterCritical = "system-cluster-critical"
	systemNodeCritical    = "system-node-critical"
)

// nameAlphabet is the alphabet of Kubernetes' random name suffixes (no
// vowels, no look-alike digits).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// randomSuffix returns 5 random characters of nameAlphabet, as kube-apiserver
// appends to generated names.
func randomSuffix() string {
	var b [5]byte
	for i := range b {
		b[i] = nameAlphabet[rand.IntN(len(nameAlphabet))]
	}
	return string(b[:])
}

// admitPodCreate applies the ServiceAccount, Priority and
// DefaultTolerationSeconds mutations to a new pod; suffix draws the random
// part of the token volume's name.
func admitPodCreate(p *corev1.Pod, suffix func() string) {
	if _, mirror := p.Annotations[mirrorPodAnnotation]; !mirror {
		// The kubelet owns a mirror pod's spec; kube-apiserver leaves it alone.
		if p.Spec.ServiceAccountName == "" {
			p.Spec.ServiceAccountName = defaultServiceAccountName
		}
		p.Spec.DeprecatedServiceAccount = p.Spec.ServiceAccountName
		if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
			mountServiceAccountToken(&p.Spec, suffix)
		}
	}
	if value, policy, known := priorityClass(p.Spec.PriorityClassName); known {
		if p.Spec.Priority == nil {
			p.Spec.Priority = new(value)
		}
		if p.Spec.PreemptionPolicy == nil {
			p.Spec.PreemptionPolicy = new(policy)
		}
	} else {
		// A class kapi cannot see: keep what the pod says (see above).
		if p.Spec.Priority == nil {
			p.Spec.Priority = new(int32(0))
		}
		if p.Spec.PreemptionPolicy == nil {
			p.Spec.PreemptionPolicy = new(corev1.PreemptLowerPriority)
		}
	}
	addDefaultTolerations(&p.Spec)
}

// admitPodUpdate keeps the priority kube-apiserver set at creation when the
// client leaves it out, and adds the default tolerations again.
func admitPodUpdate(p, old *corev1.Pod) {
	if p.Spec.Priority == nil && old.Spec.Priority != nil {
		p.Spec.Priority = new(*old.Spec.Priority)
	}
	if p.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
		p.Spec.PreemptionPolicy = new(*old.Spec.PreemptionPolicy)
	}
	addDefaultTolerations(&p.Spec)
}

// checkPodCreate refuses a new pod whose priority or preemption policy
// differs from its priority class's, as the Priority plugin does.
func checkPodCreate(p *corev1.Pod) error {
	value, policy, known := priorityClass(p.Spec.PriorityClassName)
	if !known {
		return nil
	}
	if p.Spec.Priority != nil && *p.Spec.Priority != value {
		return fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; "+
			"priority admission controller computed %d from the given PriorityClass name", *p.Spec.Priority, value)
	}
	if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy != policy {
		return fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; "+
			"priority admission controller computed %s from the given PriorityClass name", *p.Spec.PreemptionPolicy, policy)
	}
	return nil
}

// priorityClass returns the value and preemption policy of a priority class
// kapi knows: none (the default) and the two classes every cluster has.
func priorityClass(name string) (int32, corev1.PreemptionPolicy, bool) {
	switch name {
	case "":
		return 0, corev1.PreemptLowerPriority, true
	case systemClusterCritical:
		return 2000000000, corev1.PreemptLowerPriority, true
	case systemNodeCritical:
		return 2000001000, corev1.PreemptLowerPriority, true
	}
	return 0, "", false
}

// mountServiceAccountToken mounts the projected service account token volume
// in every container and init container that has nothing mounted at the
// token path yet, adding the volume (named kube-api-access-<suffix>) unless
// the pod already has one of that prefix.
func mountServiceAccountToken(s *corev1.PodSpec, suffix func() string) {
	name, haveVolume := "", false
	for _, v := range s.Volumes {
		if strings.HasPrefix(v.Name, serviceAccountVolumePrefix) {
			name, haveVolume = v.Name, true
			break
		}
	}
	if name == "" {
		name = serviceAccountVolumePrefix + suffix()
	}
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: serviceAccountMountPath}
	needed := false
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			if !mountsAt(cs[i].VolumeMounts, serviceAccountMountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if needed && !haveVolume {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: tokenVolumeSource()}})
	}
}

func mountsAt(ms []corev1.VolumeMount, path string) bool {
	for _, m := range ms {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// tokenVolumeSource is the projected volume of a pod's service account
// credentials: a bound token, the cluster's CA bundle and the namespace.
func tokenVolumeSource() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: new(defaultVolumeFileMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(boundTokenExpirationSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}
}

// addDefaultTolerations makes the pod tolerate the not-ready and unreachable
// NoExecute taints for 300 seconds unless it already tolerates them (a
// toleration with no key or no effect matches them too).
func addDefaultTolerations(s *corev1.PodSpec) {
	notReady, unreachable := false, false
	for _, t := range s.Tolerations {
		if t.Effect != "" && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		notReady = notReady || t.Key == "" || t.Key == taintNodeNotReady
		unreachable = unreachable || t.Key == "" || t.Key == taintNodeUnreachable
	}
	for _, add := range []struct {
		key  string
		have bool
	}{{taintNodeNotReady, notReady}, {taintNodeUnreachable, unreachable}} {
		if !add.have {
			s.Tolerations = append(s.Tolerations, corev1.Toleration{
				Key: add.key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: new(defaultTolerationSeconds),
			})
		}
	}
}

// admitNodeCreate adds the not-ready NoSchedule taint to a new node unless it
// has a taint of that key and effect.
func admitNodeCreate(n *corev1.Node) {
	for _, t := range n.Spec.Taints {
		if t.Key == taintNodeNotReady && t.Effect == corev1.TaintEffectNoSchedule {
			return
		}
	}
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: taintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
}

// forbidden words an admission refusal as kube-apiserver does.
func forbidden(r *Resource, obj Object, err error) *metav1.Status {
	if err == nil {
		return nil
	}
	return metav1.NewForbidden(r.GroupResource(), obj.GetName(), err)
}
