package registry

import (
	"math/rand/v2"
	"strings"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Admission: the pieces of kube-apiserver's default admission plugins that
// concern the kinds of this package alone. The server's admission (package
// apiserver, admission.go) runs the plugins, reading what they need (the
// pod's ServiceAccount, PriorityClasses, LimitRanges ...) from its store,
// and calls these:
//
//   - ServiceAccount: every container and init container mounts a
//     projected token volume kube-api-access-<5 random characters>
//     read-only at /var/run/secrets/kubernetes.io/serviceaccount
//     (MountServiceAccountToken).
//   - DefaultTolerationSeconds: a pod that does not tolerate the not-ready
//     and unreachable NoExecute taints tolerates them for 300 seconds
//     (AddDefaultTolerations).
//   - TaintNodesByCondition: a new node carries the not-ready NoSchedule
//     taint until its kubelet reports it ready (TaintNewNode).
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

// MirrorPodAnnotation marks a pod the kubelet mirrors from a static pod;
// kube-apiserver's ServiceAccount plugin leaves its spec alone.
const MirrorPodAnnotation = mirrorPodAnnotation

// PodQOSClass is the quality-of-service class of a pod spec, as a pod's
// status carries it.
func PodQOSClass(spec *corev1.PodSpec) corev1.PodQOSClass { return qosClass(spec) }

// MountServiceAccountToken is mountServiceAccountToken for the server's
// ServiceAccount admission plugin.
func MountServiceAccountToken(s *corev1.PodSpec, suffix func() string) {
	mountServiceAccountToken(s, suffix)
}

// AddDefaultTolerations is the DefaultTolerationSeconds plugin: see
// addDefaultTolerations.
func AddDefaultTolerations(s *corev1.PodSpec) { addDefaultTolerations(s) }

// TaintNewNode is the TaintNodesByCondition plugin: see admitNodeCreate.
func TaintNewNode(n *corev1.Node) { admitNodeCreate(n) }

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
