package admission

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

func container(name string, sc *corev1.SecurityContext) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox", SecurityContext: sc}
}

// restrictedContainer passes every restricted check.
func restrictedContainer(name string) corev1.Container {
	return container(name, &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), RunAsNonRoot: new(true),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}})
}

func TestEvaluatePod(t *testing.T) {
	tests := []struct {
		name  string
		level Level
		spec  corev1.PodSpec
		meta  metav1.ObjectMeta
		want  string
	}{
		{name: "privileged checks nothing", level: LevelPrivileged,
			spec: corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{container("c", &corev1.SecurityContext{Privileged: new(true)})}}},
		{name: "baseline: a plain pod passes", level: LevelBaseline, spec: corev1.PodSpec{Containers: []corev1.Container{container("c", nil)}}},
		// Captured from kube-apiserver v1.37.2 (namespace enforce=restricted).
		{name: "restricted: everything wrong", level: LevelRestricted,
			spec: corev1.PodSpec{HostNetwork: true, HostPID: true,
				Volumes: []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}}},
				Containers: []corev1.Container{
					container("c", &corev1.SecurityContext{Privileged: new(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "SYS_TIME"}}}),
					{Name: "d", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}},
				}},
			want: `host namespaces (hostNetwork=true, hostPID=true), hostPort (container "d" uses hostPort 80), privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (containers "c", "d" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (containers "c", "d" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add), restricted volume types (volume "h" uses restricted volume type "hostPath"), runAsNonRoot != true (pod or containers "c", "d" must set securityContext.runAsNonRoot=true), seccompProfile (pod or containers "c", "d" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
		// The same pod at baseline: the baseline checks the restricted
		// ones replace come back.
		{name: "baseline: everything wrong", level: LevelBaseline,
			spec: corev1.PodSpec{HostNetwork: true, HostPID: true,
				Volumes: []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}}},
				Containers: []corev1.Container{
					container("c", &corev1.SecurityContext{Privileged: new(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "SYS_TIME", "CHOWN"}}}),
					{Name: "d", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}, {ContainerPort: 81, HostPort: 8080}}},
				}},
			want: `non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add), host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "h"), hostPort (container "d" uses hostPorts 80, 8080), privileged (container "c" must not set securityContext.privileged=true)`},
		// Captured from kube-apiserver v1.37.2 (warn=restricted).
		{name: "restricted: a plain pod", level: LevelRestricted, spec: corev1.PodSpec{Containers: []corev1.Container{container("c", nil)}},
			want: `allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
		{name: "restricted: compliant", level: LevelRestricted,
			spec: corev1.PodSpec{Containers: []corev1.Container{restrictedContainer("c")}, InitContainers: []corev1.Container{restrictedContainer("i")}}},
		{name: "restricted: pod-level settings count", level: LevelRestricted,
			spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}},
				Containers: []corev1.Container{container("c", &corev1.SecurityContext{AllowPrivilegeEscalation: new(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}}})}}},
		{name: "restricted: explicit root and unconfined seccomp", level: LevelRestricted,
			spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(false), RunAsUser: new(int64(0)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
				Containers: []corev1.Container{restrictedContainer("c")}},
			want: `runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0), seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")`},
		{name: "restricted: user namespaces relax root checks", level: LevelRestricted,
			spec: corev1.PodSpec{HostUsers: new(false), Containers: []corev1.Container{container("c", &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), RunAsUser: new(int64(0)),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}})}}},
		{name: "restricted: windows pods skip the linux checks", level: LevelRestricted,
			spec: corev1.PodSpec{OS: &corev1.PodOS{Name: corev1.Windows}, SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(true)}, Containers: []corev1.Container{container("c", nil)}}},
		{name: "baseline: sysctls, selinux, procMount, apparmor, probes, hostProcess", level: LevelBaseline,
			spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{
				Sysctls:         []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}, {Name: "net.ipv4.tcp_syncookies", Value: "1"}},
				SELinuxOptions:  &corev1.SELinuxOptions{Type: "spc_t", User: "root"},
				WindowsOptions:  &corev1.WindowsSecurityContextOptions{HostProcess: new(true)},
				AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}},
				Containers: []corev1.Container{{Name: "c", Image: "i", SecurityContext: &corev1.SecurityContext{ProcMount: new(corev1.UnmaskedProcMount)},
					LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1"}}}}}},
			want: `forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined"), probe or lifecycle host (container "c" uses probe or lifecycle host "10.0.0.1"), procMount (container "c" must not set securityContext.procMount to "Unmasked"), seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set), forbidden sysctls (kernel.msgmax), hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)`},
		// Captured from kube-apiserver v1.37.2 (enforce=baseline, dry run).
		{name: "baseline: captured", level: LevelBaseline,
			spec: corev1.PodSpec{HostNetwork: true, HostPID: true,
				SecurityContext: &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.msgmax", Value: "1"}},
					SELinuxOptions: &corev1.SELinuxOptions{Type: "spc_t", User: "root"}, AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}},
				Volumes: []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}}},
				Containers: []corev1.Container{
					{Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: new(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "SYS_TIME", "CHOWN"}}},
						LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1"}}}},
					{Name: "d", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}, {ContainerPort: 81, HostPort: 81}}},
				}},
			want: `forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined"), non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_TIME" in securityContext.capabilities.add), host namespaces (hostNetwork=true, hostPID=true), hostPath volumes (volume "h"), hostPort (container "d" uses hostPorts 80, 81), probe or lifecycle host (container "c" uses probe or lifecycle host "10.0.0.1"), privileged (container "c" must not set securityContext.privileged=true), seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set), forbidden sysctls (kernel.msgmax)`},
		{name: "restricted: volume types", level: LevelRestricted,
			spec: corev1.PodSpec{Containers: []corev1.Container{restrictedContainer("c")}, Volumes: []corev1.Volume{
				{Name: "ok", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}},
				{Name: "g", VolumeSource: corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "r"}}},
			}},
			want: `restricted volume types (volumes "n", "g" use restricted volume types "gitRepo", "nfs")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EvaluatePod(tt.level, &tt.meta, &tt.spec).String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPolicyFromLabels(t *testing.T) {
	latest := func(l Level) LevelVersion { return LevelVersion{l, "latest"} }
	tests := []struct {
		name   string
		labels map[string]string
		want   PodSecurityPolicy
		errs   string
	}{
		{"none", nil, PodSecurityPolicy{latest(LevelPrivileged), latest(LevelPrivileged), latest(LevelPrivileged)}, ""},
		{"enforce makes warn follow", map[string]string{EnforceLevelLabel: "baseline", EnforceVersionLabel: "v1.30"},
			PodSecurityPolicy{LevelVersion{LevelBaseline, "v1.30"}, latest(LevelPrivileged), LevelVersion{LevelBaseline, "v1.30"}}, ""},
		{"explicit warn stays", map[string]string{EnforceLevelLabel: "restricted", WarnLevelLabel: "baseline"},
			PodSecurityPolicy{latest(LevelRestricted), latest(LevelPrivileged), latest(LevelBaseline)}, ""},
		// Captured from kube-apiserver v1.37.2.
		{"bad enforce is restricted", map[string]string{EnforceLevelLabel: "bogus"},
			PodSecurityPolicy{latest(LevelRestricted), latest(LevelPrivileged), latest(LevelPrivileged)},
			`metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`},
		{"bad version and warn", map[string]string{WarnLevelLabel: "x", AuditVersionLabel: "1.2"},
			PodSecurityPolicy{latest(LevelPrivileged), latest(LevelPrivileged), latest(LevelPrivileged)},
			`[metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "1.2": must be "latest" or "v1.x", metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "x": must be one of privileged, baseline, restricted]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := PolicyFromLabels(tt.labels)
			if got != tt.want {
				t.Errorf("policy %+v, want %+v", got, tt.want)
			}
			if errs.Message() != tt.errs {
				t.Errorf("errors %q, want %q", errs.Message(), tt.errs)
			}
		})
	}
}

func FuzzPolicyFromLabels(f *testing.F) {
	f.Add("restricted", "v1.30", "baseline", "latest")
	f.Add("bogus", "v1.", "", "v01.2")
	f.Fuzz(func(t *testing.T, enforce, enforceVersion, warn, warnVersion string) {
		p, errs := PolicyFromLabels(map[string]string{EnforceLevelLabel: enforce, EnforceVersionLabel: enforceVersion,
			WarnLevelLabel: warn, WarnVersionLabel: warnVersion})
		for _, lv := range []LevelVersion{p.Enforce, p.Audit, p.Warn} {
			switch lv.Level {
			case LevelPrivileged, LevelBaseline, LevelRestricted:
			default:
				t.Fatalf("level %q", lv.Level)
			}
			if lv.Version != "latest" && !psVersion.MatchString(lv.Version) {
				t.Fatalf("version %q", lv.Version)
			}
		}
		if len(errs) > 4 {
			t.Fatalf("%d errors", len(errs))
		}
	})
}

func TestNamespacePodWarnings(t *testing.T) {
	pod := func(name string, c corev1.Container) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
	}
	privileged := container("c", &corev1.SecurityContext{Privileged: new(true)})
	pods := []*corev1.Pod{pod("z", privileged), pod("b", privileged), pod("ok", container("c", nil)),
		pod("h", corev1.Container{Name: "c", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 1, HostPort: 1}}})}
	got := NamespacePodWarnings("ns", LevelVersion{LevelBaseline, "latest"}, pods)
	want := []string{`existing pods in namespace "ns" violate the new PodSecurity enforce level "baseline:latest"`,
		"b (and 1 other pod): privileged", "h: hostPort"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("warning %d: %q, want %q", i, got[i], want[i])
		}
	}
}
