package registry

import (
	"encoding/json"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

// sameJSON fails t unless got and want encode to the same JSON: quantities
// and int-or-strings compare by what they say, not how they are held.
func sameJSON(t *testing.T, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Errorf("\n got  %s\n want %s", g, w)
	}
}

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// minimalPod is the smallest valid pod, as a client sends it.
func minimalPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

// defaultedPod is minimalPod after Default.
func defaultedPod() *corev1.Pod {
	p := minimalPod()
	p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	p.Spec.DNSPolicy = corev1.DNSClusterFirst
	p.Spec.SchedulerName = "default-scheduler"
	p.Spec.TerminationGracePeriodSeconds = new(int64(30))
	p.Spec.SecurityContext = &corev1.PodSecurityContext{}
	p.Spec.EnableServiceLinks = new(true)
	defaultedContainer(&p.Spec.Containers[0])
	return p
}

func defaultedContainer(c *corev1.Container) {
	c.TerminationMessagePath = "/dev/termination-log"
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	c.ImagePullPolicy = corev1.PullIfNotPresent
}

// admittedPod is defaultedPod after PrepareForCreate with the volume suffix
// "abcde".
func admittedPod() *corev1.Pod {
	p := defaultedPod()
	p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "default", "default"
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{tokenMount()}
	p.Spec.Volumes = []corev1.Volume{tokenVolume()}
	p.Spec.Priority = new(int32(0))
	p.Spec.PreemptionPolicy = new(corev1.PreemptLowerPriority)
	p.Spec.Tolerations = defaultTolerations()
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort}
	return p
}

func tokenMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
}

// tokenVolume is the volume of golden 11, written out.
func tokenVolume() corev1.Volume {
	return corev1.Volume{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: new(int32(420)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: new(int64(3607)), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}}}
}

func defaultTolerations() []corev1.Toleration {
	return []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
	}
}

func fixedSuffix() string { return "abcde" }
