package registry

import (
	"strconv"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
)

// Warnings kube-apiserver v1.37 sends on writes of the kinds of
// core_more.go (their strategies' WarningsOnCreate and WarningsOnUpdate).

// deprecatedNodeLabels are the node labels kube-apiserver warns about,
// with what to say about each.
var deprecatedNodeLabels = map[string]string{
	"beta.kubernetes.io/arch":                  `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	"beta.kubernetes.io/os":                    `deprecated since v1.14; use "kubernetes.io/os" instead`,
	"failure-domain.beta.kubernetes.io/region": `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	"failure-domain.beta.kubernetes.io/zone":   `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	"beta.kubernetes.io/instance-type":         `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
}

// nodeSelectorTermWarnings warns about deprecated node labels in the keys
// of node selector terms.
func nodeSelectorTermWarnings(terms []corev1.NodeSelectorTerm, path string) []string {
	var out []string
	for i, t := range terms {
		for j, e := range t.MatchExpressions {
			if msg, ok := deprecatedNodeLabels[e.Key]; ok {
				out = append(out, path+"["+strconv.Itoa(i)+"].matchExpressions["+strconv.Itoa(j)+"].key: "+e.Key+" is "+msg)
			}
		}
	}
	return out
}

// templateNodeLabelWarnings warns about deprecated node labels in a pod
// template's node selector and required node affinity.
func templateNodeLabelWarnings(s *corev1.PodSpec, path string) []string {
	var out []string
	for _, k := range sortedMapKeys(s.NodeSelector) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			out = append(out, path+".nodeSelector["+k+"]: "+msg)
		}
	}
	if a := s.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		out = append(out, nodeSelectorTermWarnings(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
			path+".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")...)
	}
	return out
}

// storageClassAnnotationWarning is the warning about the beta class
// annotation of volumes and claims.
func storageClassAnnotationWarning(annotations map[string]string) []string {
	if _, ok := annotations[betaStorageClassAnnotation]; ok {
		return []string{"metadata.annotations[" + betaStorageClassAnnotation + `]: deprecated since v1.8; use "storageClassName" attribute instead`}
	}
	return nil
}

func persistentVolumeWarnings(o, _ Object) []string {
	pv := o.(*corev1.PersistentVolume)
	out := storageClassAnnotationWarning(pv.Annotations)
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		out = append(out, "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.")
	}
	if na := pv.Spec.NodeAffinity; na != nil && na.Required != nil {
		out = append(out, nodeSelectorTermWarnings(na.Required.NodeSelectorTerms, "spec.nodeAffinity.required.nodeSelectorTerms")...)
	}
	s := &pv.Spec.PersistentVolumeSource
	for _, d := range []struct {
		set           bool
		field, since  string
		nonFunctional string
	}{
		{s.Glusterfs != nil, "glusterfs", "v1.25", "v1.26"},
		{s.RBD != nil, "rbd", "v1.28", "v1.31"},
		{s.CephFS != nil, "cephfs", "v1.28", "v1.31"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk", "v1.11", "v1.16"},
		{s.ScaleIO != nil, "scaleIO", "v1.16", "v1.22"},
		{s.StorageOS != nil, "storageOS", "v1.22", "v1.25"},
	} {
		if d.set {
			out = append(out, "spec."+d.field+": deprecated in "+d.since+", non-functional in "+d.nonFunctional+"+")
		}
	}
	return out
}

func persistentVolumeClaimWarnings(o, _ Object) []string {
	return storageClassAnnotationWarning(o.(*corev1.PersistentVolumeClaim).Annotations)
}

func podTemplateWarnings(o, _ Object) []string {
	return templateNodeLabelWarnings(&o.(*corev1.PodTemplate).Template.Spec, "template.spec")
}

func replicationControllerWarnings(o, _ Object) []string {
	if t := o.(*corev1.ReplicationController).Spec.Template; t != nil {
		return templateNodeLabelWarnings(&t.Spec, "spec.template.spec")
	}
	return nil
}
