package registry

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/resource"
)

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestDefaultLimitRange(t *testing.T) {
	tests := []struct {
		name     string
		in, want corev1.LimitRangeItem
	}{
		{"default request from default",
			corev1.LimitRangeItem{Type: "Container", Default: rl("cpu", "500m")},
			corev1.LimitRangeItem{Type: "Container", Default: rl("cpu", "500m"), DefaultRequest: rl("cpu", "500m")}},
		{"default from max, request from default then min (full-core-limitranges)",
			corev1.LimitRangeItem{Type: "Container", Max: rl("cpu", "2", "memory", "1Gi"), Min: rl("cpu", "50m", "memory", "32Mi"), DefaultRequest: rl("cpu", "100m")},
			corev1.LimitRangeItem{Type: "Container", Max: rl("cpu", "2", "memory", "1Gi"), Min: rl("cpu", "50m", "memory", "32Mi"),
				Default: rl("cpu", "2", "memory", "1Gi"), DefaultRequest: rl("cpu", "100m", "memory", "1Gi")}},
		{"request from min without default",
			corev1.LimitRangeItem{Type: "Container", Min: rl("memory", "1Mi")},
			corev1.LimitRangeItem{Type: "Container", Min: rl("memory", "1Mi"), DefaultRequest: rl("memory", "1Mi")}},
		{"pod items get no defaults",
			corev1.LimitRangeItem{Type: "Pod", Max: rl("cpu", "4")},
			corev1.LimitRangeItem{Type: "Pod", Max: rl("cpu", "4")}},
		{"quantities rounded up to milli-units",
			corev1.LimitRangeItem{Type: "PersistentVolumeClaim", Max: rl("storage", "0.5m")},
			corev1.LimitRangeItem{Type: "PersistentVolumeClaim", Max: rl("storage", "1m")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{tt.in}}}
			defaultLimitRange(lr)
			sameJSON(t, lr.Spec.Limits[0], tt.want)
		})
	}
}

func TestDefaultReplicationController(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}}
	tests := []struct {
		name     string
		in, want corev1.ReplicationController
	}{
		{"selector, labels and replicas from the template",
			corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: tmpl}},
			corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(1)), Selector: map[string]string{"app": "x"}, Template: tmpl}}},
		{"own selector and labels kept",
			corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"l": "1"}},
				Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(0)), Selector: map[string]string{"s": "1"}, Template: tmpl}},
			corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"l": "1"}},
				Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(0)), Selector: map[string]string{"s": "1"}, Template: tmpl}}},
		{"no template: replicas only",
			corev1.ReplicationController{},
			corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Replicas: new(int32(1))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in.DeepCopy()
			if in.Spec.Template != nil {
				in.Spec.Template = in.Spec.Template.DeepCopy()
			}
			defaultReplicationController(in)
			want := tt.want.DeepCopy()
			if want.Spec.Template != nil {
				defaultPodSpec(&want.Spec.Template.Spec)
			}
			sameJSON(t, in, want)
		})
	}
}

func TestSyncDataSource(t *testing.T) {
	group := "snapshot.storage.k8s.io"
	ns := "other"
	tests := []struct {
		name     string
		in, want corev1.PersistentVolumeClaimSpec
	}{
		{"dataSource copied to dataSourceRef",
			corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "s"}},
			corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "s"},
				DataSourceRef: &corev1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: "s"}}},
		{"local dataSourceRef copied to dataSource",
			corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "c"}},
			corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "c"},
				DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "c"}}},
		{"cross-namespace dataSourceRef left alone",
			corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "c", Namespace: &ns}},
			corev1.PersistentVolumeClaimSpec{DataSourceRef: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "c", Namespace: &ns}}},
		{"neither", corev1.PersistentVolumeClaimSpec{}, corev1.PersistentVolumeClaimSpec{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			syncDataSource(&tt.in)
			sameJSON(t, tt.in, tt.want)
			if tt.in.DataSource != nil && tt.in.DataSourceRef != nil && tt.in.DataSource.APIGroup != nil &&
				tt.in.DataSource.APIGroup == tt.in.DataSourceRef.APIGroup {
				t.Error("dataSource and dataSourceRef share their apiGroup")
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	lines := func(s string) []string { return splitLines(s) }
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb", "a\nb", ""},
		{"one line changed in the middle",
			"1\n2\n3\n4\n5\n6\n7\n8\n9", "1\n2\n3\n4\nX\n6\n7\n8\n9",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n"},
		{"insertion at the start", "a\nb", "x\na\nb", "@@ -1,2 +1,3 @@\n+x\n a\n b\n"},
		{"deletion at the end", "a\nb\nc", "a\nb", "@@ -1,3 +1,2 @@\n a\n b\n-c\n"},
		{"two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\nY",
			"@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -8,4 +8,4 @@\n 8\n 9\n 10\n-11\n+Y\n"},
		{"everything replaced", "a", "b", "@@ -1 +1 @@\n-a\n+b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unifiedDiff(lines(tt.a), lines(tt.b), 3); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestIndentedGoDump(t *testing.T) {
	hp := corev1.HostPathType("")
	src := corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/p", Type: &hp}}
	got := indentedGoDump(src)
	if !strings.HasPrefix(got, "{\n \"GCEPersistentDisk\": null,\n \"AWSElasticBlockStore\": null,\n \"HostPath\": {\n  \"Path\": \"/p\",\n  \"Type\": \"\"\n },\n") {
		t.Errorf("indentedGoDump:\n%s", got)
	}
	sel := corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "In", Values: []string{"high"}}}}
	if got, want := (goDump{&sel}).String(), `{"MatchExpressions":[{"ScopeName":"PriorityClass","Operator":"In","Values":["high"]}]}`; got != want {
		t.Errorf("goDump %s, want %s", got, want)
	}
	q := corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}
	if got, want := indentedGoDump(q), "{\n \"Limits\": null,\n \"Requests\": {\n  \"storage\": \"1Gi\"\n }\n}"; got != want {
		t.Errorf("indentedGoDump %q, want %q", got, want)
	}
}

func TestValidateResourceQuota(t *testing.T) {
	tests := []struct {
		name string
		spec corev1.ResourceQuotaSpec
		want []string
	}{
		{"valid", corev1.ResourceQuotaSpec{Hard: rl("pods", "10", "count/deployments.apps", "5")}, nil},
		{"negative and unqualified (invalid-core-resourcequotas)",
			corev1.ResourceQuotaSpec{Hard: rl("cpu", "-1"), Scopes: []corev1.ResourceQuotaScope{"Bogus"}},
			[]string{`spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0`, `spec.scopes: Invalid value: ["Bogus"]: unsupported scope`}},
		{"not an integer", corev1.ResourceQuotaSpec{Hard: rl("pods", "1500m")},
			[]string{`spec.hard[pods]: Invalid value: "1500m": must be an integer`}},
		{"unknown standard name", corev1.ResourceQuotaSpec{Hard: rl("bogus", "1")},
			[]string{`spec.hard[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified`,
				`spec.hard[bogus]: Invalid value: "bogus": must be a standard resource for quota`}},
		{"scope that does not apply", corev1.ResourceQuotaSpec{Hard: rl("requests.storage", "1Gi"), Scopes: []corev1.ResourceQuotaScope{"BestEffort"}},
			[]string{`spec.scopes: Invalid value: ["BestEffort"]: unsupported scope applied to resource`}},
		{"conflicting scopes", corev1.ResourceQuotaSpec{Hard: rl("pods", "1"), Scopes: []corev1.ResourceQuotaScope{"Terminating", "NotTerminating"}},
			[]string{`spec.scopes: Invalid value: ["Terminating","NotTerminating"]: conflicting scopes`}},
		{"selector operator without values", corev1.ResourceQuotaSpec{Hard: rl("pods", "1"), ScopeSelector: &corev1.ScopeSelector{
			MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: "PriorityClass", Operator: "In"}}}},
			[]string{`spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when ` + "`operator`" + ` is 'In' or 'NotIn' for scope selector`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := validateResourceQuota(&corev1.ResourceQuota{Spec: tt.spec}, nil)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestValidateLimitRange(t *testing.T) {
	tests := []struct {
		name  string
		items []corev1.LimitRangeItem
		want  []string
	}{
		{"valid", []corev1.LimitRangeItem{{Type: "Container", Max: rl("cpu", "2"), Default: rl("cpu", "1"), DefaultRequest: rl("cpu", "1")}}, nil},
		{"pod defaults forbidden", []corev1.LimitRangeItem{{Type: "Pod", Default: rl("cpu", "1")}},
			[]string{"spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"}},
		{"claim without storage bounds", []corev1.LimitRangeItem{{Type: "PersistentVolumeClaim"}},
			[]string{"spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided"}},
		{"duplicate type", []corev1.LimitRangeItem{{Type: "Pod"}, {Type: "Pod"}},
			[]string{`spec.limits[1].type: Duplicate value: "Pod"`}},
		{"ratio below 1", []corev1.LimitRangeItem{{Type: "Container", MaxLimitRequestRatio: rl("cpu", "500m")}},
			[]string{`spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1`}},
		{"not a container resource (defaults copy it)", []corev1.LimitRangeItem{{Type: "Container", Max: rl("pods", "1")}},
			[]string{`spec.limits[0].max[pods]: Invalid value: "pods": must be a standard resource for containers`,
				`spec.limits[0].default[pods]: Invalid value: "pods": must be a standard resource for containers`,
				`spec.limits[0].defaultRequest[pods]: Invalid value: "pods": must be a standard resource for containers`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: tt.items}}
			defaultLimitRange(lr)
			var got []string
			for _, e := range validateLimitRange(lr, nil) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestGoDiffAsKubeAPIServer checks goDiff against messages kube-apiserver
// v1.37.2 answered: difflib matches the longest run first, so a replaced
// volume source shows as kube-apiserver shows it.
func TestGoDiffAsKubeAPIServer(t *testing.T) {
	hp := corev1.HostPathType("")
	a := corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x", Type: &hp}}
	b := corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/p"}}
	want := "@@ -1,12 +1,13 @@\n {\n  \"GCEPersistentDisk\": null,\n  \"AWSElasticBlockStore\": null,\n- \"HostPath\": {\n-  \"Path\": \"/x\",\n-  \"Type\": \"\"\n+ \"HostPath\": null,\n+ \"Glusterfs\": null,\n+ \"NFS\": {\n+  \"Server\": \"s\",\n+  \"Path\": \"/p\",\n+  \"ReadOnly\": false\n  },\n- \"Glusterfs\": null,\n- \"NFS\": null,\n  \"RBD\": null,\n  \"ISCSI\": null,\n  \"Cinder\": null,\n"
	if got := goDiff(a, b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestValidateUpdatesOfStorageKinds(t *testing.T) {
	class := "fast"
	fs, block := corev1.PersistentVolumeFilesystem, corev1.PersistentVolumeMode("Block")
	claim := func(mut func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}, VolumeMode: &fs}}
		if mut != nil {
			mut(c)
		}
		return c
	}
	volume := func(mode *corev1.PersistentVolumeMode) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{Capacity: rl("storage", "1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}, VolumeMode: mode}}
	}
	quota := func(scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
		return &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "1"), Scopes: scopes}}
	}
	tests := []struct {
		name     string
		validate func(o, old Object) metav1.FieldErrors
		obj, old Object
		want     string // the fields of the errors
	}{
		{"claim may get a class", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class }), claim(nil), ""},
		{"claim may not change its class", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = new("other") }),
			claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class }), "spec"},
		{"unbound claim may not change requests", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = rl("storage", "2Gi") }), claim(nil), "spec"},
		{"bound claim may change requests", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests = rl("storage", "2Gi")
			c.Status.Phase = corev1.ClaimBound
		}), claim(nil), ""},
		{"claim may be given its volume", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv" }), claim(nil), ""},
		{"class annotation immutable", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{betaStorageClassAnnotation: "x"}
		}), claim(nil), "metadata.annotations.volume.beta.kubernetes.io/storage-class"},
		{"annotated claim may get its annotation's class", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{betaStorageClassAnnotation: "fast"}
			c.Spec.StorageClassName = &class
		}), claim(func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{betaStorageClassAnnotation: "fast"}
		}), ""},
		{"annotated claim may not get another class", validatePersistentVolumeClaim, claim(func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{betaStorageClassAnnotation: "slow"}
			c.Spec.StorageClassName = &class
		}), claim(func(c *corev1.PersistentVolumeClaim) {
			c.Annotations = map[string]string{betaStorageClassAnnotation: "slow"}
		}), "spec"},
		{"volume mode immutable, named without spec.", validatePersistentVolume, volume(&block), volume(&fs), "volumeMode"},
		{"quota scopes immutable", validateResourceQuota, quota("NotTerminating"), quota(), "spec.scopes"},
		{"quota scopes reordered", validateResourceQuota, quota("NotTerminating", "NotBestEffort"), quota("NotBestEffort", "NotTerminating"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields []string
			for _, e := range tt.validate(tt.obj, tt.old) {
				fields = append(fields, e.Field)
			}
			if got := strings.Join(fields, ","); got != tt.want {
				t.Errorf("errors on %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReplicationControllerStatusErrors(t *testing.T) {
	tests := []struct {
		name string
		st   corev1.ReplicationControllerStatus
		want string
	}{
		{"valid", corev1.ReplicationControllerStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1}, ""},
		{"negative", corev1.ReplicationControllerStatus{FullyLabeledReplicas: -1, ObservedGeneration: -1},
			"status.fullyLabeledReplicas: Invalid value: -1: must be greater than or equal to 0, status.observedGeneration: Invalid value: -1: must be greater than or equal to 0"},
		{"more than replicas (kube-apiserver v1.37.2's order)", corev1.ReplicationControllerStatus{Replicas: 1, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 3},
			"status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas, status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas, " +
				"status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range replicationControllerStatusErrors(&tt.st) {
				got = append(got, e.Error())
			}
			if g := strings.Join(got, ", "); g != tt.want {
				t.Errorf("got\n%s\nwant\n%s", g, tt.want)
			}
		})
	}
}

// FuzzUnifiedDiff checks that any two texts give a diff whose hunks agree
// with their headers and rebuild both texts' lines in order.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc", "a\nx\nc")
	f.Add("", "x")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n10", "0\n2\n3\n4\n5\n6\n7\n8\n9\n11")
	f.Fuzz(func(t *testing.T, a, b string) {
		la, lb := splitLines(a), splitLines(b)
		d := unifiedDiff(la, lb, 3)
		if a == b {
			if d != "" {
				t.Fatalf("diff of equal texts: %q", d)
			}
			return
		}
		if d == "" {
			t.Fatal("no diff of different texts")
		}
		lines := splitLines(strings.TrimSuffix(d, "\n"))
		for i := 0; i < len(lines); {
			var aStart, aLen, bStart, bLen int
			h := strings.TrimSuffix(lines[i], "\n")
			if !strings.HasPrefix(h, "@@ -") {
				t.Fatalf("line %d %q is no hunk header in %q", i, h, d)
			}
			parse := func(r string) (int, int) {
				start, n, ok := strings.Cut(r, ",")
				s, _ := strconv.Atoi(start)
				if !ok {
					return s, 1
				}
				l, _ := strconv.Atoi(n)
				return s, l
			}
			ranges := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(h, "@@ "), " @@"))
			aStart, aLen = parse(strings.TrimPrefix(ranges[0], "-"))
			bStart, bLen = parse(strings.TrimPrefix(ranges[1], "+"))
			i++
			ai, bi := aStart-1, bStart-1
			if aLen == 0 {
				ai = aStart
			}
			if bLen == 0 {
				bi = bStart
			}
			gotA, gotB := 0, 0
			for ; i < len(lines) && !strings.HasPrefix(lines[i], "@@ -"); i++ {
				l := lines[i]
				switch l[0] {
				case ' ', '-':
					if ai >= len(la) || la[ai] != l[1:] {
						t.Fatalf("line %q is not a[%d] in %q", l, ai, d)
					}
					ai++
					gotA++
					if l[0] == ' ' {
						if bi >= len(lb) || lb[bi] != l[1:] {
							t.Fatalf("context %q is not b[%d] in %q", l, bi, d)
						}
						bi++
						gotB++
					}
				case '+':
					if bi >= len(lb) || lb[bi] != l[1:] {
						t.Fatalf("line %q is not b[%d] in %q", l, bi, d)
					}
					bi++
					gotB++
				default:
					t.Fatalf("bad line %q in %q", l, d)
				}
			}
			if gotA != aLen || gotB != bLen {
				t.Fatalf("hunk %q has %d and %d lines in %q", h, gotA, gotB, d)
			}
		}
	})
}

// TestValidateStorageKindsCreate checks causes kube-apiserver v1.37.2 gave
// for invalid volumes, claims and templates (fields and messages).
func TestValidateStorageKindsCreate(t *testing.T) {
	fs := corev1.PersistentVolumeFilesystem
	pv := func(src corev1.PersistentVolumeSource, na *corev1.VolumeNodeAffinity) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{Capacity: rl("storage", "1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			PersistentVolumeSource: src, NodeAffinity: na, VolumeMode: &fs}}
	}
	pvc := func(mut func(*corev1.PersistentVolumeClaimSpec)) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{"ReadWriteOnce"},
			Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}, VolumeMode: &fs}}
		mut(&c.Spec)
		return c
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a b": "c"}},
		Spec: corev1.PodSpec{RestartPolicy: "Always", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	tests := []struct {
		name     string
		validate func(o, old Object) metav1.FieldErrors
		obj      Object
		want     []string
	}{
		{"local volume without affinity", validatePersistentVolume, pv(corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "rel"}}, nil),
			[]string{"spec.nodeAffinity: Required value: Local volume requires node affinity"}},
		{"relative NFS path", validatePersistentVolume, pv(corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Path: "rel"}}, nil),
			[]string{"spec.nfs.server: Required value", `spec.nfs.path: Invalid value: "rel": must be an absolute path`}},
		{"host path with ..", validatePersistentVolume, pv(corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x/../y"}}, nil),
			[]string{`spec.hostPath.path: Invalid value: "/x/../y": must not contain '..'`}},
		{"affinity without terms before the source", validatePersistentVolume,
			pv(corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d"}}, &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{}}),
			[]string{"spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term", "spec.csi.volumeHandle: Required value"}},
		{"claim selector labels", validatePersistentVolumeClaim, pvc(func(s *corev1.PersistentVolumeClaimSpec) {
			s.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a b": "c"}}
		}), []string{`spec.selector.matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{"dataSource and dataSourceRef differ", validatePersistentVolumeClaim, pvc(func(s *corev1.PersistentVolumeClaimSpec) {
			s.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "x"}
			s.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "y"}
		}), []string{"spec: Invalid value: {}: must match dataSourceRef"}},
		{"template labels under template.labels", validatePodTemplate, &corev1.PodTemplate{Template: tmpl},
			[]string{`template.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range tt.validate(tt.obj, nil) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestStorageKindsWarnings checks the Warning texts and order
// kube-apiserver v1.37.2 sent for these objects.
func TestStorageKindsWarnings(t *testing.T) {
	terms := []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "beta.kubernetes.io/os", Operator: "Exists"}}}}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{betaStorageClassAnnotation: "x"}},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: "Recycle", NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}},
			PersistentVolumeSource: corev1.PersistentVolumeSource{StorageOS: &corev1.StorageOSPersistentVolumeSource{VolumeName: "v"}}}}
	pt := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"beta.kubernetes.io/os": "y", "beta.kubernetes.io/arch": "x"},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}}}}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"volume", persistentVolumeWarnings(pv, nil), []string{
			`metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead`,
			"spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.",
			`spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
			"spec.storageOS: deprecated in v1.22, non-functional in v1.25+",
		}},
		{"pod template", podTemplateWarnings(pt, nil), []string{
			`template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead`,
			`template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
			`template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use "kubernetes.io/os" instead`,
		}},
		{"claim without annotation", persistentVolumeClaimWarnings(&corev1.PersistentVolumeClaim{}, nil), nil},
		{"controller without template", replicationControllerWarnings(&corev1.ReplicationController{}, nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Join(tt.got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(tt.got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestPrepareStorageKindsCreate checks the create path of volumes and
// claims: protection finalizers once, Pending, a volume's transition at its
// creation time (the server's clock), a claim's dataSourceRef. The
// protection finalizers are the server's StorageObjectInUseProtection
// plugin's: PrepareForCreate keeps a volume's and adds none to a claim.
func TestPrepareStorageKindsCreate(t *testing.T) {
	g := Builtin()
	pvs, pvcs := g.ByGroupResource("", "persistentvolumes")[0], g.ByGroupResource("", "persistentvolumeclaims")[0]
	created := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created, Finalizers: []string{pvProtectionFinalizer}},
		Status: corev1.PersistentVolumeStatus{Phase: "Bound", Reason: "x"}}
	pvs.PrepareForCreate(pv)
	if pv.Status.Phase != corev1.VolumePending || pv.Status.Reason != "" || pv.Status.LastPhaseTransitionTime == nil ||
		!pv.Status.LastPhaseTransitionTime.Equal(&created) || len(pv.Finalizers) != 1 {
		t.Errorf("volume %+v %+v", pv.ObjectMeta, pv.Status)
	}
	pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{DataSource: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: "Bound"}}
	pvcs.PrepareForCreate(pvc)
	if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.DataSourceRef == nil || pvc.Spec.DataSourceRef.Name != "src" ||
		len(pvc.Finalizers) != 0 || pvc.Spec.VolumeMode == nil {
		t.Errorf("claim %+v %+v %+v", pvc.ObjectMeta, pvc.Spec, pvc.Status)
	}
}
