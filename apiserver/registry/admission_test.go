package registry

import (
	"net/http"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	"github.com/kapi-dev/kapi/apiserver/admission"
)

func TestPodPrepareForCreate(t *testing.T) {
	tests := []struct {
		name string
		in   func(*corev1.Pod) // changes minimalPod
		want func(*corev1.Pod) // changes admittedPod
	}{
		{name: "minimal"},
		{name: "service account kept",
			in:   func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" },
			want: func(p *corev1.Pod) { p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "builder", "builder" }},
		{name: "every container and init container mounts the token",
			in: func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox:1.36"}}
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Image: "nginx:1.27",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}})
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox:1.36", VolumeMounts: []corev1.VolumeMount{tokenMount()}}}
				defaultedContainer(&p.Spec.InitContainers[0])
				d := corev1.Container{Name: "d", Image: "nginx:1.27", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, tokenMount()}}
				defaultedContainer(&d)
				p.Spec.Containers = append(p.Spec.Containers, d)
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, tokenVolume()}
			}},
		{name: "opted out",
			in: func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = new(false) },
			want: func(p *corev1.Pod) {
				p.Spec.AutomountServiceAccountToken = new(false)
				p.Spec.Containers[0].VolumeMounts, p.Spec.Volumes = nil, nil
			}},
		{name: "opted in",
			in:   func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = new(true) },
			want: func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = new(true) }},
		{name: "a container with its own token mount is left alone",
			in: func(p *corev1.Pod) {
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
				p.Spec.Volumes = []corev1.Volume{{Name: "mine", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
				p.Spec.Volumes = []corev1.Volume{{Name: "mine", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			}},
		{name: "an existing token volume is reused",
			in: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-zzzzz", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access-zzzzz", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				m := tokenMount()
				m.Name = "kube-api-access-zzzzz"
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{m}
			}},
		{name: "mirror pods keep their spec",
			in: func(p *corev1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"} },
			want: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"}
				p.Spec.ServiceAccountName, p.Spec.DeprecatedServiceAccount = "", ""
				p.Spec.Containers[0].VolumeMounts, p.Spec.Volumes = nil, nil
			}},
		{name: "tolerations kept, missing ones added (golden 11)",
			in: func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule},
					{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{
					{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule},
					{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
					defaultTolerations()[1],
				}
			}},
		{name: "a toleration of every taint needs nothing more",
			in:   func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} },
			want: func(p *corev1.Pod) { p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}} }},
		{name: "a NoSchedule toleration of the key does not count",
			in: func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Tolerations = append([]corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					defaultTolerations()...)
			}},
		{name: "a toleration of the key with any effect counts",
			in: func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists}}
			},
			want: func(p *corev1.Pod) {
				p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists}, defaultTolerations()[0]}
			}},
		{name: "system priority class",
			in: func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" },
			want: func(p *corev1.Pod) {
				p.Spec.PriorityClassName, p.Spec.Priority = "system-node-critical", new(int32(2000001000))
			}},
		{name: "QoS class after requests are defaulted",
			in: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Limits = quantities("cpu", "1", "memory", "1Gi")
			},
			want: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: quantities("cpu", "1", "memory", "1Gi"), Requests: quantities("cpu", "1", "memory", "1Gi")}
				p.Status.QOSClass = corev1.PodQOSGuaranteed
			}},
		{name: "status reset",
			in:   func(p *corev1.Pod) { p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"} },
			want: func(p *corev1.Pod) {}},
	}
	res := mustBuiltin(t, Options{NameSuffix: fixedSuffix}).Get("", "v1", "pods")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := minimalPod(), admittedPod()
			if tt.in != nil {
				tt.in(got)
			}
			if tt.want != nil {
				tt.want(want)
			}
			if err := prepareAndAdmitPod(res, got); err != nil {
				t.Fatalf("refused: %v", err)
			}
			sameJSON(t, got, want)
		})
	}
}

// prepareAndAdmitPod is what the server does to a new pod with its default
// admission plugins, in a namespace whose service accounts exist and
// without PriorityClass objects: PrepareForCreate, then the pieces of
// ServiceAccount, Priority and DefaultTolerationSeconds that live here (the
// plugins themselves are tested in package apiserver).
func prepareAndAdmitPod(res *Resource, p *corev1.Pod) error {
	res.PrepareForCreate(p)
	if _, mirror := p.Annotations[MirrorPodAnnotation]; !mirror {
		if p.Spec.ServiceAccountName == "" {
			p.Spec.ServiceAccountName = "default"
		}
		p.Spec.DeprecatedServiceAccount = p.Spec.ServiceAccountName
		if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
			MountServiceAccountToken(&p.Spec, fixedSuffix)
		}
	}
	var class *schedulingv1.PriorityClass
	for _, c := range admission.SystemPriorityClasses {
		if c.Name == p.Spec.PriorityClassName {
			class = c
		}
	}
	if err := admission.PriorityAdmitPod(p, class, nil); err != nil {
		return err
	}
	AddDefaultTolerations(&p.Spec)
	return nil
}

func TestPodVolumeNameIsRandom(t *testing.T) {
	res := Builtin().Get("", "v1", "pods")
	names := map[string]bool{}
	for range 20 {
		p := minimalPod()
		res.PrepareForCreate(p)
		MountServiceAccountToken(&p.Spec, randomSuffix)
		name := p.Spec.Volumes[0].Name
		if len(name) != len("kube-api-access-xxxxx") || name[:16] != "kube-api-access-" {
			t.Fatalf("volume name %q", name)
		}
		names[name] = true
	}
	if len(names) < 15 {
		t.Errorf("only %d distinct names in 20", len(names))
	}
}

func TestPodAdmitRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   func(*corev1.Pod)
		want string // message, "" when admitted
	}{
		{"no class, no priority", func(*corev1.Pod) {}, ""},
		{"no class, priority 0", func(p *corev1.Pod) { p.Spec.Priority = new(int32(0)) }, ""},
		{"no class, other priority", func(p *corev1.Pod) { p.Spec.Priority = new(int32(5)) },
			`pods "p" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
		{"system class, wrong priority", func(p *corev1.Pod) {
			p.Spec.PriorityClassName, p.Spec.Priority = "system-cluster-critical", new(int32(1))
		}, `pods "p" is forbidden: the integer value of priority (1) must not be provided in pod spec; priority admission controller computed 2000000000 from the given PriorityClass name`},
		{"wrong preemption policy", func(p *corev1.Pod) { p.Spec.PreemptionPolicy = new(corev1.PreemptNever) },
			`pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`},
		{"unknown class", func(p *corev1.Pod) {
			p.Spec.PriorityClassName, p.Spec.Priority = "high", new(int32(5))
		}, `pods "p" is forbidden: no PriorityClass with name high was found`},
	}
	res := Builtin().Get("", "v1", "pods")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := minimalPod()
			tt.in(p)
			st := forbidden(res, p, prepareAndAdmitPod(res, p))
			switch {
			case tt.want == "" && st != nil:
				t.Errorf("refused: %s", st.Message)
			case tt.want != "" && st == nil:
				t.Errorf("admitted, want %s", tt.want)
			case st != nil && (st.Code != http.StatusForbidden || st.Message != tt.want):
				t.Errorf("got %d %q\nwant 403 %q", st.Code, st.Message, tt.want)
			}
		})
	}
}

func TestPodPrepareForUpdate(t *testing.T) {
	tests := []struct {
		name string
		in   func(next *corev1.Pod) // changes the client's copy of admittedPod
		want func(*corev1.Pod)      // changes admittedPod
	}{
		{name: "unchanged"},
		{name: "priority kept",
			in: func(p *corev1.Pod) { p.Spec.Priority, p.Spec.PreemptionPolicy = nil, nil }},
		{name: "tolerations added again",
			in: func(p *corev1.Pod) { p.Spec.Tolerations = nil }},
		{name: "defaults applied",
			in: func(p *corev1.Pod) { p.Spec.RestartPolicy, p.Spec.Containers[0].ImagePullPolicy = "", "" }},
		{name: "no service account admission on update",
			in: func(p *corev1.Pod) { p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = nil, nil },
			want: func(p *corev1.Pod) {
				p.Spec.Volumes, p.Spec.Containers[0].VolumeMounts = nil, nil
			}},
	}
	res := mustBuiltin(t, Options{NameSuffix: fixedSuffix}).Get("", "v1", "pods")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, next, want := admittedPod(), admittedPod(), admittedPod()
			if tt.in != nil {
				tt.in(next)
			}
			if tt.want != nil {
				tt.want(want)
			}
			res.PrepareForUpdate(next, old)
			// The server's Priority and DefaultTolerationSeconds plugins.
			admission.PriorityKeepOnUpdate(next, old)
			AddDefaultTolerations(&next.Spec)
			sameJSON(t, next, want)
			sameJSON(t, old, admittedPod()) // old untouched
		})
	}
}

func TestNodePrepareForCreate(t *testing.T) {
	notReady := corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	dedicated := corev1.Taint{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name     string
		in, want []corev1.Taint
	}{
		{"none", nil, []corev1.Taint{notReady}},
		{"appended (golden 15)", []corev1.Taint{dedicated}, []corev1.Taint{dedicated, notReady}},
		{"present", []corev1.Taint{notReady, dedicated}, []corev1.Taint{notReady, dedicated}},
		{"present with a value", []corev1.Taint{{Key: notReady.Key, Value: "x", Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Taint{{Key: notReady.Key, Value: "x", Effect: corev1.TaintEffectNoSchedule}}},
		{"other effect", []corev1.Taint{{Key: notReady.Key, Effect: corev1.TaintEffectNoExecute}},
			[]corev1.Taint{{Key: notReady.Key, Effect: corev1.TaintEffectNoExecute}, notReady}},
	}
	res := Builtin().Get("", "v1", "nodes")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &corev1.Node{Spec: corev1.NodeSpec{Taints: tt.in}}
			res.PrepareForCreate(n)
			TaintNewNode(n) // the server's TaintNodesByCondition plugin
			sameJSON(t, n.Spec.Taints, tt.want)
			// Updates keep what the client sends (golden 16 goes through /status).
			next := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{dedicated}}}
			res.PrepareForUpdate(next, n)
			sameJSON(t, next.Spec.Taints, []corev1.Taint{dedicated})
		})
	}
}

// mustBuiltin is BuiltinWith for tests.
func mustBuiltin(t *testing.T, opts Options) *Registry {
	t.Helper()
	g, err := BuiltinWith(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
