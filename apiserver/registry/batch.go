package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // CronJob time zones are checked with the IANA database even where the host has none

	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/robfig/cron/v3"
)

// The batch/v1 kinds: Jobs and CronJobs, defaulted and checked as
// kube-apiserver v1.37's SetDefaults_* of batch/v1 and the strategies and
// validation of pkg/registry/batch do. A Job's pod template is defaulted
// as a pod spec is, except that its restartPolicy stays unset (a Job must
// choose OnFailure or Never).
//
// Schedules are parsed by github.com/robfig/cron/v3, the parser
// kube-apiserver uses, so that an invalid schedule is worded as the real
// server words it.

// The labels kube-apiserver gives a Job's pods (and, through the
// defaulting of the Job's own labels, the Job) when the Job does not
// choose its selector.
const (
	jobControllerUIDLabel       = "batch.kubernetes.io/controller-uid"
	jobNameLabel                = "batch.kubernetes.io/job-name"
	legacyJobControllerUIDLabel = "controller-uid"
	legacyJobNameLabel          = "job-name"
	// maxCronJobNameLength is the longest CronJob name: its Jobs are named
	// after it with an 11 character suffix.
	maxCronJobNameLength = 52
)

// batchKinds are batch/v1 Jobs and CronJobs.
func batchKinds(Options, services) []*Resource {
	return []*Resource{
		kind[batchv1.Job]("batch", "v1", "jobs", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Default: defaultJob, Validate: validateJob,
			PrepareForCreate: func(o Object) {
				j := o.(*batchv1.Job)
				defaultJob(j)
				ResetStatus(j)
				if j.Spec.ManualSelector == nil || !*j.Spec.ManualSelector {
					generateJobSelector(j)
				}
				// kube-apiserver answers with the object as decoded from
				// storage, defaulted again: the Job's labels default to its
				// template's, generated ones included. It validates before
				// that, so labels that are invalid (the name of a Job longer
				// than a label value) are refused on the template only.
				if len(ValidateLabels(j.Spec.Template.Labels, "")) == 0 {
					defaultJob(j)
				}
			},
			PrepareForUpdate: func(o, _ Object) { defaultJob(o) },
			SelectableFields: func(o Object) map[string]string {
				return map[string]string{"status.successful": strconv.Itoa(int(o.(*batchv1.Job).Status.Succeeded))}
			},
			Printer: jobPrinter}),
		kind[batchv1.CronJob]("batch", "v1", "cronjobs", Resource{Generation: true,
			Meta: MetaRules{Kube: true, UpdateOnly: true}, StatusMetadata: statusMetadata(false, false),
			Default: defaultCronJob, Validate: validateCronJob,
			PrepareForCreate: func(o Object) {
				defaultCronJob(o)
				ResetStatus(o)
			},
			PrepareForUpdate: func(o, _ Object) { defaultCronJob(o) },
			Printer:          cronJobPrinter}),
	}
}

// defaultJob applies batch/v1's Job defaults: one completion and one pod at
// a time when neither is given, NonIndexed completion, a backoff limit of 6
// (unlimited with a per-index limit), not suspended, pod conditions
// matching status True, the pod replacement policy that fits the pod
// failure policy, an automatic selector, the Job's labels from its
// template's when it has none, and the pod template's defaults.
func defaultJob(o Object) {
	j := o.(*batchv1.Job)
	defaultJobSpec(&j.Spec)
	if len(j.Labels) == 0 && len(j.Spec.Template.Labels) > 0 {
		j.Labels = make(map[string]string, len(j.Spec.Template.Labels))
		for k, v := range j.Spec.Template.Labels {
			j.Labels[k] = v
		}
	}
	if j.Spec.ManualSelector == nil {
		j.Spec.ManualSelector = new(false)
	}
}

// defaultJobSpec defaults what a Job and a CronJob's job template share:
// only the pod template (a CronJob's Jobs get the rest when they are
// created from it).
func defaultJobSpec(s *batchv1.JobSpec) {
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions = new(int32(1))
		s.Parallelism = new(int32(1))
	}
	if s.Parallelism == nil {
		s.Parallelism = new(int32(1))
	}
	if s.CompletionMode == nil {
		s.CompletionMode = new(batchv1.NonIndexedCompletion)
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = new(int32(math.MaxInt32))
		} else {
			s.BackoffLimit = new(int32(6))
		}
	}
	if s.Suspend == nil {
		s.Suspend = new(false)
	}
	if p := s.PodFailurePolicy; p != nil {
		for i := range p.Rules {
			for k := range p.Rules[i].OnPodConditions {
				if c := &p.Rules[i].OnPodConditions[k]; c.Status == "" {
					c.Status = corev1.ConditionTrue
				}
			}
		}
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = new(batchv1.Failed)
		} else {
			s.PodReplacementPolicy = new(batchv1.TerminatingOrFailed)
		}
	}
	defaultJobPodTemplate(&s.Template.Spec)
}

// defaultJobPodTemplate applies the pod spec defaults but leaves an unset
// restartPolicy unset, as kube-apiserver v1.37 does for Jobs.
func defaultJobPodTemplate(s *corev1.PodSpec) {
	rp := s.RestartPolicy
	defaultPodSpec(s)
	if rp == "" {
		s.RestartPolicy = ""
	}
}

// generateJobSelector gives a Job that does not choose its selector the
// labels that tie its pods to it (its uid and name, under the current and
// the legacy keys) and a selector of its uid.
func generateJobSelector(j *batchv1.Job) {
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{legacyJobNameLabel, jobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{legacyJobControllerUIDLabel, jobControllerUIDLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[jobControllerUIDLabel]; !ok {
		j.Spec.Selector.MatchLabels[jobControllerUIDLabel] = string(j.UID)
	}
}

// validateJob checks a Job's spec and, on update, what may not change:
// its selector, completions (unless an Indexed Job scales), its pod
// template (but where the pods of a suspended Job that never started run),
// its completion mode, pod failure policy and per-index backoff limit.
func validateJob(o, old Object) metav1.FieldErrors {
	j := o.(*batchv1.Job)
	errs := validateJobSpec(&j.Spec, "spec", true)
	if old == nil {
		return errs
	}
	os := &old.(*batchv1.Job).Spec
	s := &j.Spec
	if !equalJSON(s.Selector, os.Selector) {
		errs = append(errs, metav1.FieldInvalid("spec.selector", s.Selector, "field is immutable"))
	}
	if s.Completions != nil && !equalJSON(s.Completions, os.Completions) && !elasticIndexed(s, os) {
		errs = append(errs, metav1.FieldInvalid("spec.completions", int64(*s.Completions), "field is immutable"))
	}
	oj := old.(*batchv1.Job)
	if os.Suspend != nil && *os.Suspend && oj.Status.StartTime == nil {
		// A suspended Job that never started may change where its pods
		// run (and its template's labels and annotations), nothing else.
		next := s.Template.Spec.DeepCopy()
		next.NodeSelector, next.Tolerations, next.Affinity, next.SchedulingGates =
			os.Template.Spec.NodeSelector, os.Template.Spec.Tolerations, os.Template.Spec.Affinity, os.Template.Spec.SchedulingGates
		if !equalJSON(next, &os.Template.Spec) {
			errs = append(errs, metav1.FieldInvalid("spec.template.spec", goDump{s.Template.Spec}, "field is immutable"))
		}
	} else if !equalJSON(s.Template, os.Template) {
		errs = append(errs, metav1.FieldInvalid("spec.template", goDump{s.Template}, "field is immutable"))
	}
	if !equalJSON(s.CompletionMode, os.CompletionMode) {
		errs = append(errs, metav1.FieldInvalid("spec.completionMode", goDump{s.CompletionMode}, "field is immutable"))
	}
	if !equalJSON(s.PodFailurePolicy, os.PodFailurePolicy) {
		errs = append(errs, metav1.FieldInvalid("spec.podFailurePolicy", goDump{s.PodFailurePolicy}, "field is immutable"))
	}
	if !equalJSON(s.BackoffLimitPerIndex, os.BackoffLimitPerIndex) {
		errs = append(errs, metav1.FieldInvalid("spec.backoffLimitPerIndex", goDump{s.BackoffLimitPerIndex}, "field is immutable"))
	}
	return errs
}

// elasticIndexed reports whether an update of an Indexed Job scales it,
// changing completions and parallelism together, which kube-apiserver
// allows.
func elasticIndexed(s, old *batchv1.JobSpec) bool {
	indexed := s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion
	return indexed && s.Parallelism != nil && *s.Parallelism == *s.Completions &&
		old.Completions != nil && old.Parallelism != nil && *old.Completions == *old.Parallelism
}

// validateJobSpec checks a Job's spec (at path): its counts, its selector
// against its template's labels (withSelector: a Job's, not a CronJob's
// job template's, whose Jobs get one when created), its completion mode
// and its pod template, whose restartPolicy must be OnFailure or Never.
func validateJobSpec(s *batchv1.JobSpec, path string, withSelector bool) metav1.FieldErrors {
	var errs metav1.FieldErrors
	for _, f := range []struct {
		name string
		v    *int32
	}{{"parallelism", s.Parallelism}, {"completions", s.Completions}, {"backoffLimit", s.BackoffLimit},
		{"backoffLimitPerIndex", s.BackoffLimitPerIndex}, {"maxFailedIndexes", s.MaxFailedIndexes},
		{"ttlSecondsAfterFinished", s.TTLSecondsAfterFinished}} {
		if f.v != nil {
			errs = append(errs, validateNonNegative(path+"."+f.name, int64(*f.v))...)
		}
	}
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds <= 0 {
		errs = append(errs, metav1.FieldInvalid(path+".activeDeadlineSeconds", *s.ActiveDeadlineSeconds, "must be greater than or equal to 0"))
	}
	if withSelector {
		if s.Selector == nil {
			errs = append(errs, metav1.FieldRequired(path+".selector", ""))
		} else {
			errs = append(errs, labelSelectorErrors(s.Selector, path+".selector")...)
			if !selectorMatches(s.Selector, s.Template.Labels) {
				errs = append(errs, metav1.FieldInvalid(path+".template.metadata.labels", s.Template.Labels, "`selector` does not match template `labels`"))
			}
		}
	}
	if m := s.CompletionMode; m != nil && *m != batchv1.NonIndexedCompletion && *m != batchv1.IndexedCompletion {
		errs = append(errs, metav1.FieldNotSupported(path+".completionMode", string(*m), []string{string(batchv1.NonIndexedCompletion), string(batchv1.IndexedCompletion)}))
	}
	errs = append(errs, validatePodTemplateSpec(&s.Template, path+".template")...)
	rpPath := path + ".template.spec.restartPolicy"
	switch rp := s.Template.Spec.RestartPolicy; rp {
	case corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever:
	case "":
		errs = append(errs, metav1.FieldRequired(rpPath, `valid values: "OnFailure", "Never"`))
	default:
		errs = append(errs, metav1.FieldNotSupported(rpPath, string(rp), []string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}))
	}
	return errs
}

// defaultCronJob applies batch/v1's CronJob defaults: concurrent runs
// allowed, not suspended, 3 successful and 1 failed Jobs kept, and the
// defaults of its Jobs' pod template.
func defaultCronJob(o Object) {
	c := o.(*batchv1.CronJob)
	s := &c.Spec
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if s.Suspend == nil {
		s.Suspend = new(false)
	}
	if s.SuccessfulJobsHistoryLimit == nil {
		s.SuccessfulJobsHistoryLimit = new(int32(3))
	}
	if s.FailedJobsHistoryLimit == nil {
		s.FailedJobsHistoryLimit = new(int32(1))
	}
	defaultJobPodTemplate(&s.JobTemplate.Spec.Template.Spec)
}

// validateCronJob checks a CronJob as v1.37.2 does: its name's length (on
// create), schedule, starting deadline, time zone, concurrency policy, job
// template and history limits, then (a declarative rule there) that it has
// a schedule.
func validateCronJob(o, old Object) metav1.FieldErrors {
	c := o.(*batchv1.CronJob)
	s := &c.Spec
	var errs metav1.FieldErrors
	if old == nil && len(c.Name) > maxCronJobNameLength {
		errs = append(errs, metav1.FieldInvalid("metadata.name", c.Name, "must be no more than 52 characters"))
	}
	var oldSpec *batchv1.CronJobSpec
	if old != nil {
		oldSpec = &old.(*batchv1.CronJob).Spec
	}
	if s.Schedule != "" {
		allowTZ := oldSpec != nil && strings.Contains(oldSpec.Schedule, "TZ")
		errs = append(errs, ValidateCronSchedule(s.Schedule, allowTZ, s.TimeZone != nil, "spec.schedule")...)
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, validateNonNegative("spec.startingDeadlineSeconds", *s.StartingDeadlineSeconds)...)
	}
	if oldSpec == nil || !equalJSON(oldSpec.TimeZone, s.TimeZone) {
		errs = append(errs, validateTimeZone(s.TimeZone, "spec.timeZone")...)
	}
	policies := []string{string(batchv1.AllowConcurrent), string(batchv1.ForbidConcurrent), string(batchv1.ReplaceConcurrent)}
	switch s.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, metav1.FieldRequired("spec.concurrencyPolicy", ""))
	default:
		errs = append(errs, metav1.FieldNotSupported("spec.concurrencyPolicy", string(s.ConcurrencyPolicy), policies))
	}
	tmpl := &s.JobTemplate
	errs = append(errs, ValidateLabels(tmpl.Labels, "spec.jobTemplate.metadata.labels")...)
	errs = append(errs, ValidateAnnotations(tmpl.Annotations, "spec.jobTemplate.metadata.annotations")...)
	errs = append(errs, validateJobSpec(&tmpl.Spec, "spec.jobTemplate.spec", false)...)
	if s.SuccessfulJobsHistoryLimit != nil {
		errs = append(errs, validateNonNegative("spec.successfulJobsHistoryLimit", int64(*s.SuccessfulJobsHistoryLimit))...)
	}
	if s.FailedJobsHistoryLimit != nil {
		errs = append(errs, validateNonNegative("spec.failedJobsHistoryLimit", int64(*s.FailedJobsHistoryLimit))...)
	}
	if s.Schedule == "" {
		errs = append(errs, metav1.FieldRequired("spec.schedule", ""))
	}
	return errs
}

// ValidateCronSchedule checks a CronJob schedule in the standard five-field
// cron format (or a descriptor such as @daily) as kube-apiserver does,
// reporting errors on path: the parser's own message for a malformed
// schedule; TZ= or CRON_TZ= prefixes only where the stored schedule
// already had one (allowTZ) and never together with the timeZone field.
func ValidateCronSchedule(schedule string, allowTZ, hasTimeZone bool, path string) metav1.FieldErrors {
	var errs metav1.FieldErrors
	if err := parseCron(schedule); err != nil {
		errs = append(errs, metav1.FieldInvalid(path, schedule, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(schedule, "TZ") && hasTimeZone:
		errs = append(errs, metav1.FieldInvalid(path, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(schedule, "TZ"):
		errs = append(errs, metav1.FieldInvalid(path, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// parseCron parses a standard cron schedule. The parser panics on some
// inputs ("TZ=" with nothing after it); kube-apiserver recovers and words
// the panic as an invalid format, and so does parseCron.
func parseCron(schedule string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	_, err = cron.ParseStandard(schedule)
	return err
}

// validateTimeZone checks a CronJob's time zone: an IANA name the time
// zone database knows, not "Local".
func validateTimeZone(tz *string, path string) metav1.FieldErrors {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return metav1.FieldErrors{metav1.FieldInvalid(path, *tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZonePart(part) {
			return metav1.FieldErrors{metav1.FieldInvalid(path, *tz, "unknown time zone "+*tz)}
		}
	}
	var errs metav1.FieldErrors
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, metav1.FieldInvalid(path, *tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, metav1.FieldInvalid(path, *tz, err.Error()))
	}
	return errs
}

// validTimeZonePart reports whether s is made of the characters IANA time
// zone names use: letters, digits, '_', '-' and '+', at most 14 of them.
func validTimeZonePart(s string) bool {
	if len(s) == 0 || len(s) > 14 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '+') {
			return false
		}
	}
	return true
}
