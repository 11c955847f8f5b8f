package registry

import (
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

func TestDefaultSecret(t *testing.T) {
	tests := []struct {
		name     string
		in, want corev1.Secret
	}{
		{"type defaults to Opaque", corev1.Secret{}, corev1.Secret{Type: corev1.SecretTypeOpaque}},
		{"type kept", corev1.Secret{Type: corev1.SecretTypeTLS}, corev1.Secret{Type: corev1.SecretTypeTLS}},
		{"stringData folded into data (golden 09)",
			corev1.Secret{Data: map[string][]byte{"k": []byte("value")}, StringData: map[string]string{"plain": "text"}},
			corev1.Secret{Data: map[string][]byte{"k": []byte("value"), "plain": []byte("text")}, Type: corev1.SecretTypeOpaque}},
		{"stringData without data",
			corev1.Secret{StringData: map[string]string{"a": "b"}},
			corev1.Secret{Data: map[string][]byte{"a": []byte("b")}, Type: corev1.SecretTypeOpaque}},
		{"stringData wins over data",
			corev1.Secret{Data: map[string][]byte{"a": []byte("old")}, StringData: map[string]string{"a": "new"}},
			corev1.Secret{Data: map[string][]byte{"a": []byte("new")}, Type: corev1.SecretTypeOpaque}},
		{"empty stringData dropped",
			corev1.Secret{StringData: map[string]string{}},
			corev1.Secret{Type: corev1.SecretTypeOpaque}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defaultSecret(&tt.in)
			sameJSON(t, tt.in, tt.want)
		})
	}
}

func TestDefaultNamespace(t *testing.T) {
	tests := []struct {
		name       string
		in         corev1.Namespace
		wantLabels map[string]string
	}{
		{"named", corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, map[string]string{"kubernetes.io/metadata.name": "a"}},
		{"label corrected", corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"kubernetes.io/metadata.name": "b", "x": "y"}}},
			map[string]string{"kubernetes.io/metadata.name": "a", "x": "y"}},
		{"generated name: later", corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "a-"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defaultNamespace(&tt.in)
			sameJSON(t, tt.in.Labels, tt.wantLabels)
		})
	}
}

func TestDefaultNode(t *testing.T) {
	tests := []struct {
		name     string
		in, want corev1.Node
	}{
		{"nothing to do", corev1.Node{}, corev1.Node{}},
		{"podCIDR fills podCIDRs",
			corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"}},
			corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24"}}}},
		{"podCIDRs fills podCIDR",
			corev1.Node{Spec: corev1.NodeSpec{PodCIDRs: []string{"10.244.0.0/24", "fd00::/64"}}},
			corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24", "fd00::/64"}}}},
		{"podCIDR wins",
			corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.1.0.0/24", PodCIDRs: []string{"10.2.0.0/24"}}},
			corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.1.0.0/24", PodCIDRs: []string{"10.1.0.0/24"}}}},
		{"allocatable defaults to capacity",
			corev1.Node{Status: corev1.NodeStatus{Capacity: quantities("cpu", "4", "pods", "110")}},
			corev1.Node{Status: corev1.NodeStatus{Capacity: quantities("cpu", "4", "pods", "110"), Allocatable: quantities("cpu", "4", "pods", "110")}}},
		{"allocatable kept (golden 16)",
			corev1.Node{Status: corev1.NodeStatus{Capacity: quantities("cpu", "4"), Allocatable: quantities("cpu", "3800m")}},
			corev1.Node{Status: corev1.NodeStatus{Capacity: quantities("cpu", "4"), Allocatable: quantities("cpu", "3800m")}}},
		{"quantities rounded",
			corev1.Node{Status: corev1.NodeStatus{Capacity: quantities("cpu", "0.0001")}},
			corev1.Node{Status: corev1.NodeStatus{Capacity: quantities("cpu", "1m"), Allocatable: quantities("cpu", "1m")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defaultNode(&tt.in)
			sameJSON(t, tt.in, tt.want)
		})
	}
}

func TestRoundUpResources(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1", "1"},
		{"250m", "250m"},
		{"0.5m", "1m"},
		{"1.0001", "1001m"},
		{"-0.5m", "-1m"},
		{"128Mi", "128Mi"},
		{"1n", "1m"},
		{"100e-9", "1e-3"}, // the notation is kept
		{"9e18", "9e18"},   // too large to count in milli-units: left alone
	}
	for _, tt := range tests {
		l := quantities("x", tt.in)
		roundUpResources(l)
		if got := l["x"]; got.String() != tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, got.String(), tt.want)
		}
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.27", corev1.PullIfNotPresent},
		{"library/nginx", corev1.PullAlways},
		{"docker.io/library/nginx:1.27", corev1.PullIfNotPresent},
		{"localhost:5000/app", corev1.PullAlways},
		{"localhost:5000/app:v1", corev1.PullIfNotPresent},
		{"registry.example.com:443/team/app:latest", corev1.PullAlways},
		{"[::1]:5000/app", corev1.PullAlways},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullAlways},
		{"nginx:1.27@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"", corev1.PullIfNotPresent},               // unparsable: validation's business
		{"NGINX", corev1.PullIfNotPresent},          // upper case repository
		{"nginx:", corev1.PullIfNotPresent},         // empty tag
		{"nginx:bad tag", corev1.PullIfNotPresent},  // space
		{"Registry.Example/app", corev1.PullAlways}, // a domain may be upper case
		{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent}, // an image ID
	}
	for _, tt := range tests {
		if got := defaultPullPolicy(tt.image); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.image, got, tt.want)
		}
	}
}

func TestDefaultPod(t *testing.T) {
	tests := []struct {
		name string
		in   func(*corev1.Pod) // changes minimalPod
		want func(*corev1.Pod) // changes defaultedPod
	}{
		{name: "minimal"},
		{name: "set values kept",
			in: func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.DNSPolicy = corev1.DNSDefault
				p.Spec.SchedulerName = "other"
				p.Spec.TerminationGracePeriodSeconds = new(int64(5))
				p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: new(int64(1000))}
				p.Spec.EnableServiceLinks = new(false)
				c := &p.Spec.Containers[0]
				c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.PullNever, "/log", corev1.TerminationMessageFallbackToLogsOnError
			},
			want: func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.DNSPolicy = corev1.DNSDefault
				p.Spec.SchedulerName = "other"
				p.Spec.TerminationGracePeriodSeconds = new(int64(5))
				p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: new(int64(1000))}
				p.Spec.EnableServiceLinks = new(false)
				c := &p.Spec.Containers[0]
				c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy = corev1.PullNever, "/log", corev1.TerminationMessageFallbackToLogsOnError
			}},
		{name: "latest image pulled always",
			in: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx" },
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = "nginx", corev1.PullAlways
			}},
		{name: "requests default to limits",
			in: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: quantities("cpu", "1", "memory", "128Mi"), Requests: quantities("cpu", "250m")}
				p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox:1.36", Resources: corev1.ResourceRequirements{Limits: quantities("cpu", "1")}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: quantities("cpu", "1", "memory", "128Mi"), Requests: quantities("cpu", "250m", "memory", "128Mi")}
				p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox:1.36", Resources: corev1.ResourceRequirements{Limits: quantities("cpu", "1"), Requests: quantities("cpu", "1")}}}
				defaultedContainer(&p.Spec.InitContainers[0])
			}},
		{name: "resources rounded to milli-units",
			in: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: quantities("cpu", "0.5m")}
				p.Spec.Overhead = quantities("cpu", "0.1m")
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: quantities("cpu", "1m")}
				p.Spec.Overhead = quantities("cpu", "1m")
			}},
		{name: "ports: TCP, host ports with host network",
			in: func(p *corev1.Pod) {
				p.Spec.HostNetwork = true
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP, HostPort: 5353}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.HostNetwork = true
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80, Protocol: corev1.ProtocolTCP}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP, HostPort: 5353}}
			}},
		{name: "no host ports without host network",
			in: func(p *corev1.Pod) { p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}} },
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}}
			}},
		{name: "env field reference version",
			in: func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"},
					{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "x"}}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: "1"},
					{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
					{Name: "X", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "x"}}}}
			}},
		{name: "probes and lifecycle hooks",
			in: func(p *corev1.Pod) {
				c := &p.Spec.Containers[0]
				c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
					InitialDelaySeconds: 3, PeriodSeconds: 20}
				c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}, FailureThreshold: 5}
				c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}}
				c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}},
					PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			},
			want: func(p *corev1.Pod) {
				c := &p.Spec.Containers[0]
				c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
					InitialDelaySeconds: 3, TimeoutSeconds: 1, PeriodSeconds: 20, SuccessThreshold: 1, FailureThreshold: 3}
				c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}},
					TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 5}
				c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000, Service: new("")}},
					TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
				c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP}},
					PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			}},
		{name: "ephemeral containers",
			in: func(p *corev1.Pod) {
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox",
					TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullAlways}}}
			}},
		{name: "deprecated serviceAccount read",
			in:   func(p *corev1.Pod) { p.Spec.DeprecatedServiceAccount = "old" },
			want: func(p *corev1.Pod) { p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "old", "old" }},
		{name: "deprecated serviceAccount follows the name",
			in:   func(p *corev1.Pod) { p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "new", "old" },
			want: func(p *corev1.Pod) { p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "new", "new" }},
		{name: "podIP fills podIPs",
			in:   func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.1" },
			want: func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.1"}} }},
		{name: "podIPs fill podIP",
			in: func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}} },
			want: func(p *corev1.Pod) {
				p.Status.PodIP, p.Status.PodIPs = "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
			}},
		{name: "podIP wins",
			in:   func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.2"}} },
			want: func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "10.0.0.1", []corev1.PodIP{{IP: "10.0.0.1"}} }},
		{name: "hostIP left alone (golden 12)",
			in:   func(p *corev1.Pod) { p.Status.HostIP = "192.0.2.10" },
			want: func(p *corev1.Pod) { p.Status.HostIP = "192.0.2.10" }},
		{name: "volumes",
			in: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "empty"}, {Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "empty", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: new(int32(420))}}}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := minimalPod(), defaultedPod()
			if tt.in != nil {
				tt.in(got)
			}
			if tt.want != nil {
				tt.want(want)
			}
			defaultPod(got)
			sameJSON(t, got, want)
			defaultPod(got)
			sameJSON(t, got, want) // idempotent
		})
	}
}

func TestDefaultVolume(t *testing.T) {
	mode := new(int32(420))
	tests := []struct {
		name     string
		in, want corev1.VolumeSource
	}{
		{"no source is an emptyDir", corev1.VolumeSource{}, corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{"emptyDir kept", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("1Gi"))}},
			corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("1Gi"))}}},
		{"secret", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}},
			corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: mode}}},
		{"secret mode kept", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: new(int32(256))}},
			corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{DefaultMode: new(int32(256))}}},
		{"configMap", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}},
			corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: mode}}},
		{"downwardAPI", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "l", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
			corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: mode, Items: []corev1.DownwardAPIVolumeFile{
				{Path: "l", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}}}}},
		{"projected (golden 11)", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}},
			corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: mode, Sources: []corev1.VolumeProjection{
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.labels"}}}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: new(int64(3600))}}}}}},
		{"hostPath", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}},
			corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x", Type: new(corev1.HostPathUnset)}}},
		{"iscsi", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "p"}},
			corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "p", ISCSIInterface: "default"}}},
		{"rbd", corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{RBDImage: "i"}},
			corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{RBDImage: "i", RBDPool: "rbd", RadosUser: "admin", Keyring: "/etc/ceph/keyring"}}},
		{"azureDisk", corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d"}},
			corev1.VolumeSource{AzureDisk: &corev1.AzureDiskVolumeSource{DiskName: "d", CachingMode: new(corev1.AzureDataDiskCachingReadWrite),
				FSType: new("ext4"), ReadOnly: new(false), Kind: new(corev1.AzureSharedBlobDisk)}}},
		{"scaleIO", corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "g"}},
			corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{Gateway: "g", StorageMode: "ThinProvisioned", FSType: "xfs"}}},
		{"ephemeral", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: quantities("storage", "1Gi")}}}}},
			corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
				Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: quantities("storage", "1Gi")},
					VolumeMode: new(corev1.PersistentVolumeFilesystem)}}}}},
		{"image", corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "artifact:v1"}},
			corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "artifact:v1", PullPolicy: corev1.PullIfNotPresent}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := corev1.Volume{Name: "v", VolumeSource: tt.in}
			defaultVolume(&v)
			sameJSON(t, v.VolumeSource, tt.want)
		})
	}
}

func TestDefaultService(t *testing.T) {
	tests := []struct {
		name     string
		in, want corev1.Service
	}{
		{"cluster IP service (golden 18)",
			corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}},
			corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
				Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster)}}},
		{"target port defaults to port",
			corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}, {Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("")}}}},
			corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)}},
				Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster)}}},
		{"client IP affinity gets a timeout",
			corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP}},
			corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP,
				SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(int32(10800))}},
				Type:                  corev1.ServiceTypeClusterIP, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster)}}},
		{"no affinity config without affinity",
			corev1.Service{Spec: corev1.ServiceSpec{SessionAffinityConfig: &corev1.SessionAffinityConfig{}}},
			corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityNone,
				Type: corev1.ServiceTypeClusterIP, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster)}}},
		{"node port service",
			corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}},
			corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, SessionAffinity: corev1.ServiceAffinityNone,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster)}}},
		{"external IPs make it external",
			corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.1"}}},
			corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.1"}, Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster)}}},
		{"load balancer",
			corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb"}}}}},
			corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityNone,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster),
				AllocateLoadBalancerNodePorts: new(true)},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
					{IP: "192.0.2.1", IPMode: new(corev1.LoadBalancerIPModeVIP)}, {Hostname: "lb"}}}}}},
		{"external name has no traffic policy",
			corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
			corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", SessionAffinity: corev1.ServiceAffinityNone}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defaultService(&tt.in)
			sameJSON(t, tt.in, tt.want)
			defaultService(&tt.in)
			sameJSON(t, tt.in, tt.want)
		})
	}
}

func TestDefaultDeployment(t *testing.T) {
	template := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}}}
	}
	// The template gets the pod spec defaults, not the pod-only ones
	// (enableServiceLinks, admission): golden 25.
	defaultedTemplate := func() corev1.PodTemplateSpec {
		tp := template()
		tp.Spec.RestartPolicy, tp.Spec.DNSPolicy, tp.Spec.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
		tp.Spec.TerminationGracePeriodSeconds = new(int64(30))
		tp.Spec.SecurityContext = &corev1.PodSecurityContext{}
		defaultedContainer(&tp.Spec.Containers[0])
		return tp
	}
	pct := func(s string) *intstr.IntOrString { return new(intstr.FromString(s)) }
	tests := []struct {
		name     string
		in, want appsv1.DeploymentSpec
	}{
		{"all defaults",
			appsv1.DeploymentSpec{Template: template()},
			appsv1.DeploymentSpec{Template: defaultedTemplate(), Replicas: new(int32(1)),
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: pct("25%"), MaxSurge: pct("25%")}},
				RevisionHistoryLimit: new(int32(10)), ProgressDeadlineSeconds: new(int32(600))}},
		{"golden 25",
			appsv1.DeploymentSpec{Template: template(), Replicas: new(int32(3)),
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: pct("25%"), MaxUnavailable: new(intstr.FromInt32(1))}}},
			appsv1.DeploymentSpec{Template: defaultedTemplate(), Replicas: new(int32(3)),
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: new(intstr.FromInt32(1)), MaxSurge: pct("25%")}},
				RevisionHistoryLimit: new(int32(10)), ProgressDeadlineSeconds: new(int32(600))}},
		{"recreate has no rolling update",
			appsv1.DeploymentSpec{Template: template(), Replicas: new(int32(0)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				RevisionHistoryLimit: new(int32(2)), ProgressDeadlineSeconds: new(int32(60))},
			appsv1.DeploymentSpec{Template: defaultedTemplate(), Replicas: new(int32(0)), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
				RevisionHistoryLimit: new(int32(2)), ProgressDeadlineSeconds: new(int32(60))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{Spec: tt.in}
			defaultDeployment(d)
			sameJSON(t, d.Spec, tt.want)
			defaultDeployment(d)
			sameJSON(t, d.Spec, tt.want)
		})
	}
}

// Default must leave what the server stored alone: clients send back what
// they read, and an update that changes nothing must stay a no-op.
func TestDefaultKeepsStoredObjects(t *testing.T) {
	g := mustBuiltin(t, Options{NameSuffix: fixedSuffix})
	objects := map[string]Object{
		"pods":        minimalPod(),
		"services":    newService("uid-s", "s", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}),
		"nodes":       &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24"}},
		"secrets":     &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"a": "b"}},
		"namespaces":  &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		"deployments": &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: minimalPod().Spec}}},
	}
	for name, obj := range objects {
		t.Run(name, func(t *testing.T) {
			group := ""
			if name == "deployments" {
				group = "apps"
			}
			r := g.Get(group, "v1", name)
			if r.Default == nil || r.PrepareForCreate == nil || r.PrepareForUpdate == nil {
				t.Fatal("hooks missing")
			}
			r.PrepareForCreate(obj)
			stored := r.Copy(obj)
			r.Default(obj)
			sameJSON(t, obj, stored)
			next := r.Copy(stored)
			r.PrepareForUpdate(next, stored)
			sameJSON(t, next, stored)
		})
	}
}
