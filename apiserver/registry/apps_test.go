package registry

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/api/intstr"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// causeLines lists errs as "field|reason|message" strings, to compare in order.
func causeLines(errs metav1.FieldErrors) []string {
	var out []string
	for _, c := range errs.Causes() {
		out = append(out, c.Field+"|"+string(c.Type)+"|"+c.Message)
	}
	return out
}

func sameCauses(t *testing.T, got metav1.FieldErrors, want ...string) {
	t.Helper()
	if g := causeLines(got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("causes\n got  %q\n want %q", g, want)
	}
}

// sameJSONValue fails t unless got and want encode to equal JSON values
// (objects compare whatever the order of their members).
func sameJSONValue(t *testing.T, got, want any) {
	t.Helper()
	if !equalJSON(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("\n got  %s\n want %s", g, w)
	}
}

func statefulSet(mut func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	labels := map[string]string{"app": "db"}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}}}},
	}
	if mut != nil {
		mut(s)
	}
	return s
}

func TestDefaultStatefulSet(t *testing.T) {
	s := statefulSet(func(s *appsv1.StatefulSet) {
		s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	})
	defaultStatefulSet(s)
	sameJSON(t, s.Spec.Replicas, 1)
	sameJSONValue(t, s.Spec.UpdateStrategy, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 0, "maxUnavailable": 1}})
	sameJSONValue(t, s.Spec.PersistentVolumeClaimRetentionPolicy, map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"})
	if s.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement || *s.Spec.RevisionHistoryLimit != 10 {
		t.Errorf("policy %q, history %d", s.Spec.PodManagementPolicy, *s.Spec.RevisionHistoryLimit)
	}
	c := s.Spec.VolumeClaimTemplates[0]
	if c.Kind != "PersistentVolumeClaim" || c.APIVersion != "v1" || *c.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || c.Status.Phase != corev1.ClaimPending {
		t.Errorf("claim template %+v", c)
	}
	if s.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("template restartPolicy %q", s.Spec.Template.Spec.RestartPolicy)
	}

	// OnDelete gets no rolling update; what a client sets is kept.
	s = statefulSet(func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Delete"}
	})
	defaultStatefulSet(s)
	if s.Spec.UpdateStrategy.RollingUpdate != nil || s.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != "Delete" || s.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled != "Retain" {
		t.Errorf("spec %+v", s.Spec)
	}
}

func TestValidateStatefulSet(t *testing.T) {
	const mismatch = "spec.template.metadata.labels|FieldValueInvalid|Invalid value: null: `selector` does not match template `labels`"
	cases := []struct {
		name string
		new  *appsv1.StatefulSet
		old  *appsv1.StatefulSet
		want []string
	}{
		{"valid", statefulSet(nil), nil, nil},
		{"empty spec (invalid-apps-statefulsets)", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			PodManagementPolicy: "OrderedReady", UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: "RollingUpdate"}}}, nil,
			[]string{"spec.selector|FieldValueRequired|Required value", mismatch,
				"spec.template.spec.containers|FieldValueRequired|Required value"}},
		{"policies", statefulSet(func(s *appsv1.StatefulSet) {
			s.Spec.Replicas = new(int32(-1))
			s.Spec.PodManagementPolicy = "X"
			s.Spec.UpdateStrategy.Type = "Y"
			s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Z", WhenScaled: "Retain"}
		}), nil, []string{
			`spec.podManagementPolicy|FieldValueInvalid|Invalid value: "X": must be 'OrderedReady' or 'Parallel'`,
			`spec.updateStrategy|FieldValueInvalid|Invalid value: {"Type":"Y","RollingUpdate":null}: must be 'RollingUpdate' or 'OnDelete'`,
			`spec.persistentVolumeClaimRetentionPolicy.whenDeleted|FieldValueNotSupported|Unsupported value: "Z": supported values: "Retain", "Delete"`,
			"spec.replicas|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 0"}},
		{"immutable", statefulSet(func(s *appsv1.StatefulSet) {
			s.Spec.ServiceName = "other"
			s.Spec.PodManagementPolicy = "Parallel"
			s.Spec.UpdateStrategy.Type = "OnDelete"
			s.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "d"}}}
		}), statefulSet(func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = "OrderedReady" }), []string{
			`spec.template.metadata.labels|FieldValueInvalid|Invalid value: {"app":"db"}: ` + "`selector` does not match template `labels`",
			`spec.selector|FieldValueInvalid|Invalid value: {"matchLabels":{"app":"other"}}: field is immutable`,
			`spec.serviceName|FieldValueInvalid|Invalid value: "other": field is immutable`,
			`spec.podManagementPolicy|FieldValueInvalid|Invalid value: "Parallel": field is immutable`,
			`spec.volumeClaimTemplates|FieldValueInvalid|Invalid value: [{"name":"d","Spec":{"AccessModes":null,"Selector":null,"Resources":{"Limits":null,"Requests":null},"VolumeName":"","StorageClassName":null,"VolumeMode":null,"DataSource":null,"DataSourceRef":null,"VolumeAttributesClassName":null},"Status":{"Phase":"","AccessModes":null,"Capacity":null,"Conditions":null,"AllocatedResources":null,"AllocatedResourceStatuses":null,"CurrentVolumeAttributesClassName":null,"ModifyVolumeStatus":null,"HealthStatus":null}}]: field is immutable`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.new.Spec.PodManagementPolicy == "" {
				c.new.Spec.PodManagementPolicy = "OrderedReady"
				c.new.Spec.UpdateStrategy.Type = "RollingUpdate"
			}
			var old Object
			if c.old != nil {
				old = c.old
			}
			sameCauses(t, validateStatefulSet(c.new, old), c.want...)
		})
	}
}

func TestDaemonSetTemplateGeneration(t *testing.T) {
	r := Builtin().Get("apps", "v1", "daemonsets")
	labels := map[string]string{"app": "a"}
	d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	r.Default(d)
	r.PrepareForCreate(d)
	if g := d.Annotations[daemonSetTemplateGeneration]; g != "1" {
		t.Fatalf("created with generation %q", g)
	}
	sameJSONValue(t, d.Spec.UpdateStrategy, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": 1, "maxSurge": 0}})
	steps := []struct {
		name string
		mut  func(*appsv1.DaemonSet)
		want string
	}{
		{"outside the template", func(d *appsv1.DaemonSet) { d.Spec.MinReadySeconds = 3 }, "1"},
		{"annotation removed", func(d *appsv1.DaemonSet) { delete(d.Annotations, daemonSetTemplateGeneration) }, "1"},
		{"template", func(d *appsv1.DaemonSet) { d.Spec.Template.Spec.Containers[0].Image = "j" }, "2"},
	}
	for _, s := range steps {
		next := d.DeepCopy()
		s.mut(next)
		r.Default(next)
		r.PrepareForUpdate(next, d)
		if g := next.Annotations[daemonSetTemplateGeneration]; g != s.want {
			t.Errorf("%s: generation %q, want %q", s.name, g, s.want)
		}
		d = next
	}
}

func TestValidateDaemonSetAndReplicaSet(t *testing.T) {
	sameCauses(t, validateDaemonSet(&appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: "RollingUpdate"}}}, nil),
		"spec.template.metadata.labels|FieldValueInvalid|Invalid value: null: `selector` does not match template `labels`",
		"spec.template.spec.containers|FieldValueRequired|Required value")
	sameCauses(t, validateReplicaSet(&appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{}, Replicas: new(int32(-1)),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: "Never", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}, nil),
		"spec.selector|FieldValueInvalid|Invalid value: {}: empty selector is invalid for deployment",
		`spec.template.spec.restartPolicy|FieldValueNotSupported|Unsupported value: "Never": supported values: "Always"`,
		"spec.replicas|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 0")
	old := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}}
	next := old.DeepCopy()
	next.Spec.Selector.MatchLabels["a"] = "c"
	next.Spec.Template.Labels = map[string]string{"a": "c"}
	next.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "i"}}
	sameCauses(t, validateReplicaSet(next, old), `spec.selector|FieldValueInvalid|Invalid value: {"matchLabels":{"a":"c"}}: field is immutable`)
}

func TestValidateControllerRevision(t *testing.T) {
	sameCauses(t, validateControllerRevision(&appsv1.ControllerRevision{Revision: -1}, nil),
		"revision|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 0",
		"data|FieldValueRequired|Required value: data is mandatory")
	old := &appsv1.ControllerRevision{Revision: 1, Data: metav1.RawExtension{Raw: []byte(`{"a": 1}`)}}
	same := &appsv1.ControllerRevision{Revision: 2, Data: metav1.RawExtension{Raw: []byte(`{"a":1}`)}}
	sameCauses(t, validateControllerRevision(same, old))
	changed := &appsv1.ControllerRevision{Revision: 1, Data: metav1.RawExtension{Raw: []byte(`{"a":2}`)}}
	sameCauses(t, validateControllerRevision(changed, old), `data|FieldValueInvalid|Invalid value: {"a":2}: field is immutable`)
}

func TestAppsRows(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-3 * time.Second))
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{"b": "2", "a": "1"},
		Containers: []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "log", Image: "fluent"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	cases := []struct {
		p    *Printer
		obj  Object
		want string
	}{
		{statefulSetPrinter, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created},
			Spec: appsv1.StatefulSetSpec{Replicas: new(int32(3)), Template: tmpl}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 2}},
			`[s 2/3 3s app,log nginx,fluent]`},
		{daemonSetPrinter, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d", CreationTimestamp: created},
			Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}, Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, NumberReady: 1}},
			`[d 4 0 1 0 0 a=1,b=2 3s app,log nginx,fluent app=web]`},
		{replicaSetPrinter, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: created},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32(2)), Selector: sel}, Status: appsv1.ReplicaSetStatus{Replicas: 1}},
			`[r 2 1 0 3s   app=web]`},
		{controllerRevisionPrinter, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: created,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", Controller: new(true)}}}, Revision: 2},
			`[c statefulset.apps/web 2 3s]`},
		{controllerRevisionPrinter, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: created}, Revision: 1},
			`[c <none> 1 3s]`},
	}
	for _, c := range cases {
		cells, _ := c.p.Row(c.obj, now)
		if len(cells) != len(c.p.Columns) {
			t.Errorf("%s: %d cells for %d columns", c.obj.GetName(), len(cells), len(c.p.Columns))
		}
		if got := fmt.Sprint(cells); got != c.want {
			t.Errorf("%s: cells %s, want %s", c.obj.GetName(), got, c.want)
		}
	}
}

func TestGoDumpOfWorkloadTypes(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{appsv1.StatefulSetUpdateStrategy{Type: "Y"}, `{"Type":"Y","RollingUpdate":null}`},
		{appsv1.StatefulSetUpdateStrategy{Type: "RollingUpdate", RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: new(intstr.FromString("10%"))}},
			`{"Type":"RollingUpdate","RollingUpdate":{"Partition":null,"MaxUnavailable":"10%"}}`},
		{corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: corev1.PodSpec{NodeSelector: map[string]string{"k": "v"}}},
			`{"labels":{"a":"b"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":null,"EphemeralContainers":null,"RestartPolicy":"","TerminationGracePeriodSeconds":null,"ActiveDeadlineSeconds":null,"DNSPolicy":"","NodeSelector":{"k":"v"},`},
		{[]int32(nil), `null`},
		{map[string][]byte{"k": []byte("hi")}, `{"k":"aGk="}`},
	}
	for _, c := range cases {
		got := goDump{c.v}.String()
		if len(got) < len(c.want) || got[:len(c.want)] != c.want {
			t.Errorf("%T: got  %s\n want %s...", c.v, got, c.want)
		}
	}
}
