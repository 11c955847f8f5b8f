package registry

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

func TestJobPrepareForCreate(t *testing.T) {
	r := Builtin().Get("batch", "v1", "jobs")
	cases := []struct {
		name  string
		spec  batchv1.JobSpec
		check func(t *testing.T, j *batchv1.Job)
	}{
		{"minimal", batchv1.JobSpec{}, func(t *testing.T, j *batchv1.Job) {
			want := map[string]string{jobControllerUIDLabel: "uid-1", legacyJobControllerUIDLabel: "uid-1", jobNameLabel: "j", legacyJobNameLabel: "j"}
			sameJSON(t, j.Spec.Template.Labels, want)
			sameJSON(t, j.Labels, want)
			sameJSON(t, j.Spec.Selector, map[string]any{"matchLabels": map[string]string{jobControllerUIDLabel: "uid-1"}})
			if *j.Spec.Parallelism != 1 || *j.Spec.Completions != 1 || *j.Spec.BackoffLimit != 6 || *j.Spec.ManualSelector ||
				*j.Spec.CompletionMode != batchv1.NonIndexedCompletion || *j.Spec.Suspend || *j.Spec.PodReplacementPolicy != batchv1.TerminatingOrFailed {
				t.Errorf("spec %+v", j.Spec)
			}
			if j.Spec.Template.Spec.RestartPolicy != "" {
				t.Errorf("template restartPolicy defaulted to %q", j.Spec.Template.Spec.RestartPolicy)
			}
		}},
		{"parallelism only, per-index backoff, failure policy", batchv1.JobSpec{Parallelism: new(int32(3)), BackoffLimitPerIndex: new(int32(1)),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: "Ignore",
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget"}}}}}},
			func(t *testing.T, j *batchv1.Job) {
				if j.Spec.Completions != nil || *j.Spec.Parallelism != 3 || *j.Spec.BackoffLimit != math.MaxInt32 || *j.Spec.PodReplacementPolicy != batchv1.Failed {
					t.Errorf("spec %+v", j.Spec)
				}
				if s := j.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Status; s != corev1.ConditionTrue {
					t.Errorf("pod condition status %q", s)
				}
			}},
		{"own labels and selector kept", batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b", jobNameLabel: "mine"}}}},
			func(t *testing.T, j *batchv1.Job) {
				if j.Spec.Template.Labels[jobNameLabel] != "mine" || j.Spec.Selector.MatchLabels["a"] != "b" || j.Spec.Selector.MatchLabels[jobControllerUIDLabel] != "uid-1" {
					t.Errorf("labels %v selector %v", j.Spec.Template.Labels, j.Spec.Selector)
				}
			}},
		{"name too long for a label", batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: "Never",
			Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}, func(t *testing.T, j *batchv1.Job) {
			if len(j.Labels) != 0 {
				t.Errorf("the Job got the invalid labels %v", j.Labels)
			}
			msg := `Invalid value: "` + strings.Repeat("a", 70) + `": must be no more than 63 bytes`
			sameCauses(t, r.Validate(j, nil), "spec.template.labels|FieldValueInvalid|"+msg, "spec.template.labels|FieldValueInvalid|"+msg)
		}},
		{"manual selector", batchv1.JobSpec{ManualSelector: new(true), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
			func(t *testing.T, j *batchv1.Job) {
				if len(j.Spec.Template.Labels) != 0 || len(j.Spec.Selector.MatchLabels) != 1 || len(j.Labels) != 0 {
					t.Errorf("labels %v selector %v", j.Spec.Template.Labels, j.Spec.Selector)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "uid-1"}, Spec: c.spec}
			if c.name == "name too long for a label" {
				j.Name = strings.Repeat("a", 70)
			}
			r.Default(j)
			r.PrepareForCreate(j)
			c.check(t, j)
		})
	}
}

func TestValidateJob(t *testing.T) {
	labels := map[string]string{"a": "b"}
	valid := func() *batchv1.Job {
		return &batchv1.Job{Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{RestartPolicy: "Never", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	}
	sameCauses(t, validateJob(valid(), nil))
	sameCauses(t, validateJob(&batchv1.Job{Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{}}}, nil),
		"spec.template.spec.containers|FieldValueRequired|Required value",
		`spec.template.spec.restartPolicy|FieldValueRequired|Required value: valid values: "OnFailure", "Never"`)
	bad := valid()
	bad.Spec.Template.Spec.RestartPolicy = "Always"
	bad.Spec.Parallelism = new(int32(-1))
	bad.Spec.CompletionMode = new(batchv1.CompletionMode("Sometimes"))
	sameCauses(t, validateJob(bad, nil),
		"spec.parallelism|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 0",
		`spec.completionMode|FieldValueNotSupported|Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"`,
		`spec.template.spec.restartPolicy|FieldValueNotSupported|Unsupported value: "Always": supported values: "OnFailure", "Never"`)

	// On update: the template is immutable unless the Job is suspended.
	old := valid()
	next := valid()
	next.Spec.Template.Spec.Containers[0].Image = "j"
	errs := validateJob(next, old)
	if len(errs) != 1 || errs[0].Field != "spec.template" {
		t.Errorf("template change: %q", causeLines(errs))
	}
	// Suspended and never started: only where its pods run may change.
	old.Spec.Suspend = new(true)
	errs = validateJob(next, old)
	if len(errs) != 1 || errs[0].Field != "spec.template.spec" || !strings.HasPrefix(errs[0].ErrorBody(), `Invalid value: {"Volumes":null,`) {
		t.Errorf("image change of a suspended Job: %q", causeLines(errs))
	}
	next = valid()
	next.Spec.Template.Labels = map[string]string{"a": "b", "x": "y"}
	next.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	sameCauses(t, validateJob(next, old))
	next.Spec.Completions = new(int32(3))
	old.Spec.Completions = new(int32(1))
	sameCauses(t, validateJob(next, old), "spec.completions|FieldValueInvalid|Invalid value: 3: field is immutable")
	// An Indexed Job scales with completions and parallelism together.
	for _, j := range []*batchv1.Job{next, old} {
		j.Spec.CompletionMode = new(batchv1.IndexedCompletion)
		j.Spec.Parallelism = new(*j.Spec.Completions)
	}
	sameCauses(t, validateJob(next, old))
}

func TestValidateCronJob(t *testing.T) {
	tmpl := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{RestartPolicy: "OnFailure", Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	cron := func(mut func(*batchv1.CronJob)) *batchv1.CronJob {
		c := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", ConcurrencyPolicy: "Allow", JobTemplate: tmpl}}
		mut(c)
		return c
	}
	cases := []struct {
		name string
		cj   *batchv1.CronJob
		want []string
	}{
		{"valid", cron(func(*batchv1.CronJob) {}), nil},
		{"descriptor", cron(func(c *batchv1.CronJob) { c.Spec.Schedule = "@hourly"; c.Spec.TimeZone = new("Europe/Paris") }), nil},
		{"schedule, zone, policy (invalid-batch-cronjobs-schedule)", cron(func(c *batchv1.CronJob) {
			c.Spec.Schedule, c.Spec.TimeZone, c.Spec.ConcurrencyPolicy = "every day", new("Mars/Olympus"), "Sometimes"
		}), []string{
			`spec.schedule|FieldValueInvalid|Invalid value: "every day": expected exactly 5 fields, found 2: [every day]`,
			`spec.timeZone|FieldValueInvalid|Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus`,
			`spec.concurrencyPolicy|FieldValueNotSupported|Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`}},
		{"TZ in schedule", cron(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 3 * * *" }), []string{
			`spec.schedule|FieldValueInvalid|Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`}},
		{"TZ= (the parser panics)", cron(func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=" }), []string{
			`spec.schedule|FieldValueInvalid|Invalid value: "TZ=": invalid schedule format: runtime error: slice bounds out of range [:-1]`,
			`spec.schedule|FieldValueInvalid|Invalid value: "TZ=": cannot use TZ or CRON_TZ in schedule, use timeZone field instead`}},
		{"bad zone characters", cron(func(c *batchv1.CronJob) { c.Spec.TimeZone = new("../etc") }), []string{
			`spec.timeZone|FieldValueInvalid|Invalid value: "../etc": unknown time zone ../etc`}},
		{"Local", cron(func(c *batchv1.CronJob) { c.Spec.TimeZone = new("Local") }), []string{
			`spec.timeZone|FieldValueInvalid|Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones`}},
		{"empty (invalid-batch-cronjobs)", &batchv1.CronJob{Spec: batchv1.CronJobSpec{ConcurrencyPolicy: "Allow"}}, []string{
			"spec.jobTemplate.spec.template.spec.containers|FieldValueRequired|Required value",
			`spec.jobTemplate.spec.template.spec.restartPolicy|FieldValueRequired|Required value: valid values: "OnFailure", "Never"`,
			"spec.schedule|FieldValueRequired|Required value"}},
		{"long name, negative limits", cron(func(c *batchv1.CronJob) {
			c.Name = "a123456789a123456789a123456789a123456789a123456789abc"
			c.Spec.SuccessfulJobsHistoryLimit, c.Spec.StartingDeadlineSeconds = new(int32(-1)), new(int64(-2))
		}), []string{
			`metadata.name|FieldValueInvalid|Invalid value: "a123456789a123456789a123456789a123456789a123456789abc": must be no more than 52 characters`,
			"spec.startingDeadlineSeconds|FieldValueInvalid|Invalid value: -2: must be greater than or equal to 0",
			"spec.successfulJobsHistoryLimit|FieldValueInvalid|Invalid value: -1: must be greater than or equal to 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { sameCauses(t, validateCronJob(c.cj, nil), c.want...) })
	}
}

// FuzzValidateCronSchedule feeds schedules to the validation: it never
// panics, and a schedule it accepts has five fields or a descriptor.
func FuzzValidateCronSchedule(f *testing.F) {
	for _, s := range []string{"0 3 * * *", "*/15 * * * *", "@daily", "every day", "TZ=UTC 0 * * * *", "@every 1h", "60 * * * *", "0 0 31 2 *", "", "* * * * * *", "1-5/2 1,2 L ? JAN", "TZ=", "CRON_TZ=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		errs := ValidateCronSchedule(s, false, false, "spec.schedule")
		for _, e := range errs {
			if e.Field != "spec.schedule" {
				t.Fatalf("%q: error on %q", s, e.Field)
			}
		}
	})
}

func TestBatchRows(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-3 * time.Second))
	start := metav1.NewTime(now.Add(-90 * time.Second))
	done := metav1.NewTime(now.Add(-30 * time.Second))
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{jobControllerUIDLabel: "u"}}
	job := func(mut func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", CreationTimestamp: created}, Spec: batchv1.JobSpec{Template: tmpl, Selector: sel}}
		mut(j)
		return j
	}
	cond := func(typ batchv1.JobConditionType, s corev1.ConditionStatus) []batchv1.JobCondition {
		return []batchv1.JobCondition{{Type: typ, Status: s}}
	}
	cases := []struct {
		obj  Object
		p    *Printer
		want string
	}{
		{job(func(j *batchv1.Job) { j.Spec.Completions = new(int32(3)); j.Status.Succeeded = 1 }), jobPrinter,
			"[j Running 1/3  3s app busybox batch.kubernetes.io/controller-uid=u]"},
		{job(func(j *batchv1.Job) { j.Spec.Parallelism = new(int32(2)); j.Status.StartTime = &start }), jobPrinter,
			"[j Running 0/1 of 2 90s 3s app busybox batch.kubernetes.io/controller-uid=u]"},
		{job(func(j *batchv1.Job) {
			j.Status.StartTime, j.Status.CompletionTime, j.Status.Conditions = &start, &done, cond(batchv1.JobComplete, "True")
		}), jobPrinter, "[j Complete 0/1 60s 3s app busybox batch.kubernetes.io/controller-uid=u]"},
		{job(func(j *batchv1.Job) { j.Status.Conditions = cond(batchv1.JobSuspended, "True") }), jobPrinter,
			"[j Suspended 0/1  3s app busybox batch.kubernetes.io/controller-uid=u]"},
		{job(func(j *batchv1.Job) { j.Status.Conditions = cond(batchv1.JobFailed, "False") }), jobPrinter,
			"[j Running 0/1  3s app busybox batch.kubernetes.io/controller-uid=u]"},
		{&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: created},
			Spec:   batchv1.CronJobSpec{Schedule: "0 3 * * *", Suspend: new(true), TimeZone: new("Etc/UTC"), JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}},
			Status: batchv1.CronJobStatus{LastScheduleTime: &start, Active: []corev1.ObjectReference{{Name: "x"}}}}, cronJobPrinter,
			"[c 0 3 * * * Etc/UTC True 1 90s 3s app busybox <none>]"},
	}
	for i, c := range cases {
		cells, _ := c.p.Row(c.obj, now)
		if len(cells) != len(c.p.Columns) {
			t.Errorf("case %d: %d cells for %d columns", i, len(cells), len(c.p.Columns))
		}
		if got := fmt.Sprint(cells); got != c.want {
			t.Errorf("case %d: cells %s, want %s", i, got, c.want)
		}
	}
}
