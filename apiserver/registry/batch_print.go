package registry

import (
	"fmt"
	"time"

	batchv1 "github.com/kapi-dev/kapi/api/batch/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// The Table columns of Jobs and CronJobs, as kube-apiserver v1.37.2 prints
// them (testdata/golden-1.37/kinds/table-batch-*).

const descJobSelector = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"

var jobPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Status", "Status of the job."),
		col("Completions", "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs."),
		col("Duration", "Time required to complete the job."),
		ageColumn(),
		wideCol("Containers", descContainers),
		wideCol("Images", descImages),
		wideCol("Selector", descJobSelector),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		return jobRow(o.(*batchv1.Job), now), nil
	},
}

// jobRow prints a Job: what it came to (by its first condition of each
// type that is True), how many of its completions succeeded, and how long
// it ran or has been running.
func jobRow(j *batchv1.Job, now time.Time) []any {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var duration string
	switch st := j.Status; {
	case st.StartTime == nil:
	case st.CompletionTime == nil:
		duration = HumanDuration(now.Sub(st.StartTime.Time))
	default:
		duration = HumanDuration(st.CompletionTime.Sub(st.StartTime.Time))
	}
	status := "Running"
	switch {
	case jobCondition(j, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(j, batchv1.JobFailed):
		status = "Failed"
	case j.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(j, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(j, batchv1.JobFailureTarget):
		status = "FailureTarget"
	}
	names, images := templateCells(&j.Spec.Template.Spec)
	return []any{j.Name, status, completions, duration, Age(j.CreationTimestamp, now), names, images, LabelSelectorString(j.Spec.Selector)}
}

// jobCondition reports whether the Job's first condition of type t is True.
func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var cronJobPrinter = &Printer{
	Columns: []metav1.TableColumnDefinition{
		nameColumn(),
		col("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
		col("Timezone", "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"),
		{Name: "Suspend", Type: "boolean", Description: "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."},
		intCol("Active", "A list of pointers to currently running jobs."),
		col("Last Schedule", "Information when was the last time the job was successfully scheduled."),
		ageColumn(),
		wideCol("Containers", descContainers),
		wideCol("Images", descImages),
		wideCol("Selector", descJobSelector),
	},
	Row: func(o Object, now time.Time) ([]any, []metav1.TableRowCondition) {
		c := o.(*batchv1.CronJob)
		last := "<none>"
		if t := c.Status.LastScheduleTime; t != nil {
			last = Age(*t, now)
		}
		tz := "<none>"
		if c.Spec.TimeZone != nil {
			tz = *c.Spec.TimeZone
		}
		suspend := "<unset>"
		if c.Spec.Suspend != nil {
			suspend = "False"
			if *c.Spec.Suspend {
				suspend = "True"
			}
		}
		names, images := templateCells(&c.Spec.JobTemplate.Spec.Template.Spec)
		return []any{c.Name, c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, Age(c.CreationTimestamp, now),
			names, images, LabelSelectorString(c.Spec.JobTemplate.Spec.Selector)}, nil
	},
}
