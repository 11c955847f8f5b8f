package conformance

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// podTemplate is a pod template with one container and the given labels
// (nil: none) and restartPolicy ("": unset).
func podTemplate(labels obj, restartPolicy string) obj {
	spec := obj{"containers": []any{obj{"name": "app", "image": "registry.k8s.io/pause:3.10"}}}
	if restartPolicy != "" {
		spec["restartPolicy"] = restartPolicy
	}
	t := obj{"spec": spec}
	if labels != nil {
		t["metadata"] = obj{"labels": labels}
	}
	return t
}

// TestStatefulSet checks a StatefulSet's defaults (replicas, pod management
// and update policies, history limit, PVC retention), that its selector,
// serviceName and podManagementPolicy cannot change (the causes in
// kube-apiserver v1.37's order, the spec checks first), that a template
// change bumps its generation, and that replicas and minReadySeconds may
// not be negative.
func TestStatefulSet(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/apis/apps/v1/namespaces/" + ns + "/statefulsets"
	labels := obj{"app": "db"}
	created := expect(t, e.post(t, path, obj{"metadata": obj{"name": "db"}, "spec": obj{
		"serviceName": "db", "selector": obj{"matchLabels": labels}, "template": podTemplate(labels, "")}}), http.StatusCreated)
	spec, _ := created["spec"].(map[string]any)
	want := map[string]any{
		"replicas": 1.0, "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10.0,
		"updateStrategy":                       map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"partition": 0.0, "maxUnavailable": 1.0}},
		"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Retain", "whenScaled": "Retain"},
	}
	for k, v := range want {
		if compact(spec[k]) != compact(v) {
			t.Errorf("spec.%s = %s, want %s", k, compact(spec[k]), compact(v))
		}
	}
	if g, _ := num(created, "metadata", "generation"); g != 1 {
		t.Errorf("generation %d on create", g)
	}
	if str(created, "spec", "template", "spec", "restartPolicy") != "Always" {
		t.Errorf("template restartPolicy %q, want Always", str(created, "spec", "template", "spec", "restartPolicy"))
	}

	r := e.patch(t, path+"/db", mergePatch, `{"spec":{"podManagementPolicy":"Parallel","serviceName":"other","selector":{"matchLabels":{"app":"other"}}}}`)
	checkInvalid(t, r, "StatefulSet.apps", "db",
		invalidValue("spec.template.metadata.labels", `{"app":"db"}`, "`selector` does not match template `labels`"),
		invalidValue("spec.selector", `{"matchLabels":{"app":"other"}}`, "field is immutable"),
		invalidValue("spec.serviceName", `"other"`, "field is immutable"),
		invalidValue("spec.podManagementPolicy", `"Parallel"`, "field is immutable"))

	r = e.patch(t, path+"/db", mergePatch, `{"spec":{"replicas":-2,"minReadySeconds":-1}}`)
	checkInvalid(t, r, "StatefulSet.apps", "db",
		invalidValue("spec.replicas", "-2", "must be greater than or equal to 0"),
		invalidValue("spec.minReadySeconds", "-1", "must be greater than or equal to 0"))

	updated := expect(t, e.patch(t, path+"/db", mergePatch, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}}}`), http.StatusOK)
	if g, _ := num(updated, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after a template change, want 2", g)
	}

	// /status ignores the spec but takes labels and annotations.
	st := expect(t, e.patch(t, path+"/db/status", mergePatch, `{"metadata":{"labels":{"x":"y"},"annotations":{"x":"y"}},"spec":{"minReadySeconds":7}}`), http.StatusOK)
	if str(st, "metadata", "labels", "x") != "y" || str(st, "metadata", "annotations", "x") != "y" || has(st, "spec", "minReadySeconds") {
		t.Errorf("after a /status patch: metadata %s, spec.minReadySeconds present %v", compact(st["metadata"].(map[string]any)["labels"]), has(st, "spec", "minReadySeconds"))
	}
	if g, _ := num(st, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after a /status patch, want 2", g)
	}
}

// TestDaemonSetTemplateGeneration checks the template generation
// annotation of a DaemonSet: 1 on create, bumped by a template change
// only, and an invalid strategy's cause.
func TestDaemonSetTemplateGeneration(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/apis/apps/v1/namespaces/" + ns + "/daemonsets"
	labels := obj{"app": "agent"}
	const ann = "deprecated.daemonset.template.generation"
	created := expect(t, e.post(t, path, obj{"metadata": obj{"name": "agent"}, "spec": obj{
		"selector": obj{"matchLabels": labels}, "template": podTemplate(labels, "")}}), http.StatusCreated)
	if a := str(created, "metadata", "annotations", ann); a != "1" {
		t.Errorf("%s %q on create, want 1", ann, a)
	}
	if s := compact(created["spec"].(map[string]any)["updateStrategy"]); s != `{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1},"type":"RollingUpdate"}` {
		t.Errorf("updateStrategy %s", s)
	}
	same := expect(t, e.patch(t, path+"/agent", mergePatch, `{"spec":{"minReadySeconds":3}}`), http.StatusOK)
	if a := str(same, "metadata", "annotations", ann); a != "1" {
		t.Errorf("%s %q after a change outside the template, want 1", ann, a)
	}
	changed := expect(t, e.patch(t, path+"/agent", mergePatch, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}}}`), http.StatusOK)
	if a := str(changed, "metadata", "annotations", ann); a != "2" {
		t.Errorf("%s %q after a template change, want 2", ann, a)
	}
	if g, _ := num(changed, "metadata", "generation"); g != 3 {
		t.Errorf("generation %d after two spec changes, want 3", g)
	}
}

// TestJobGeneratedSelector checks what the server gives a Job that does
// not choose its selector: a selector of its uid, its uid and name as
// template labels (current and legacy keys) and as its own labels; the
// batch defaults; the status.successful field selector; and that its
// selector and template cannot change while it runs.
func TestJobGeneratedSelector(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/apis/batch/v1/namespaces/" + ns + "/jobs"
	job := expect(t, e.post(t, path, obj{"metadata": obj{"name": "once"}, "spec": obj{
		"suspend": true, "template": podTemplate(nil, "Never")}}), http.StatusCreated)
	uid := str(job, "metadata", "uid")
	wantLabels := map[string]any{
		"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
		"batch.kubernetes.io/job-name": "once", "job-name": "once",
	}
	if l, _ := field(job, "spec", "template", "metadata", "labels"); !reflect.DeepEqual(l, wantLabels) {
		t.Errorf("template labels %s", compact(l))
	}
	if l, _ := field(job, "metadata", "labels"); !reflect.DeepEqual(l, wantLabels) {
		t.Errorf("labels %s", compact(l))
	}
	if s, _ := field(job, "spec", "selector"); compact(s) != `{"matchLabels":{"batch.kubernetes.io/controller-uid":"`+uid+`"}}` {
		t.Errorf("selector %s", compact(s))
	}
	for k, v := range map[string]any{"parallelism": 1.0, "completions": 1.0, "backoffLimit": 6.0, "manualSelector": false,
		"completionMode": "NonIndexed", "podReplacementPolicy": "TerminatingOrFailed"} {
		if got, _ := field(job, "spec", k); compact(got) != compact(v) {
			t.Errorf("spec.%s = %v, want %v", k, got, v)
		}
	}

	list := expect(t, e.get(t, path+q("fieldSelector", "status.successful=0")), http.StatusOK)
	if n := names(items(t, list)); !reflect.DeepEqual(n, []string{"once"}) {
		t.Errorf("jobs with status.successful=0: %v", n)
	}
	checkStatus(t, e.get(t, "/apis/apps/v1/namespaces/"+ns+"/replicasets"+q("fieldSelector", "status.replicas=1")), http.StatusBadRequest, "BadRequest",
		`"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"`)

	// Suspended and never started: where its pods run may change, not
	// what they run.
	expect(t, e.patch(t, path+"/once", mergePatch, `{"spec":{"template":{"spec":{"nodeSelector":{"disk":"ssd"}}}}}`), http.StatusOK)
	st := checkStatus(t, e.patch(t, path+"/once", mergePatch, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.8"}]}}}}`),
		http.StatusUnprocessableEntity, "Invalid", "")
	if c, _ := field(st, "details", "causes"); c == nil || len(c.([]any)) != 1 || c.([]any)[0].(map[string]any)["field"] != "spec.template.spec" {
		t.Errorf("causes of a suspended Job's image change: %s", compact(c))
	}

	// Unsuspended, the template is immutable.
	expect(t, e.patch(t, path+"/once", mergePatch, `{"spec":{"suspend":false}}`), http.StatusOK)
	r := e.patch(t, path+"/once", mergePatch, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9"}]}}}}`)
	st = checkStatus(t, r, http.StatusUnprocessableEntity, "Invalid", "")
	if c, _ := field(st, "details", "causes"); c != nil {
		cs := c.([]any)
		m := cs[0].(map[string]any)
		if len(cs) != 1 || m["field"] != "spec.template" || m["reason"] != "FieldValueInvalid" ||
			!strings.HasPrefix(m["message"].(string), `Invalid value: {"labels":{`) || !strings.HasSuffix(m["message"].(string), `}}: field is immutable`) ||
			!strings.Contains(m["message"].(string), `"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"app","Image":"registry.k8s.io/pause:3.9"`) {
			t.Errorf("causes %s", compact(cs))
		}
	}
	r = e.patch(t, path+"/once", mergePatch, `{"spec":{"selector":{"matchLabels":{"app":"other"}}}}`)
	labelsJSON := `{"batch.kubernetes.io/controller-uid":"` + uid + `","batch.kubernetes.io/job-name":"once","controller-uid":"` + uid + `","job-name":"once"}`
	checkInvalid(t, r, "Job.batch", "once",
		invalidValue("spec.template.metadata.labels", labelsJSON, "`selector` does not match template `labels`"),
		invalidValue("spec.selector", `{"matchLabels":{"app":"other","batch.kubernetes.io/controller-uid":"`+uid+`"}}`, "field is immutable"))
}

// TestCronJobValidation checks a CronJob's defaults and how an invalid
// schedule, time zone and concurrency policy are refused, worded as
// kube-apiserver words them (its cron parser's message), and a missing
// restart policy and schedule.
func TestCronJobValidation(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	path := "/apis/batch/v1/namespaces/" + ns + "/cronjobs"
	cj := expect(t, e.post(t, path, obj{"metadata": obj{"name": "nightly"}, "spec": obj{
		"schedule": "0 3 * * *", "jobTemplate": obj{"spec": obj{"template": podTemplate(nil, "OnFailure")}}}}), http.StatusCreated)
	for k, v := range map[string]any{"concurrencyPolicy": "Allow", "suspend": false, "successfulJobsHistoryLimit": 3.0, "failedJobsHistoryLimit": 1.0} {
		if got, _ := field(cj, "spec", k); compact(got) != compact(v) {
			t.Errorf("spec.%s = %v, want %v", k, got, v)
		}
	}
	if has(cj, "spec", "jobTemplate", "spec", "backoffLimit") {
		t.Errorf("the job template got Job defaults: %s", compact(cj["spec"]))
	}

	r := e.post(t, path, obj{"metadata": obj{"name": "bad"}, "spec": obj{
		"schedule": "every day", "timeZone": "Mars/Olympus", "concurrencyPolicy": "Sometimes",
		"jobTemplate": obj{"spec": obj{"template": podTemplate(nil, "Never")}}}})
	checkInvalid(t, r, "CronJob.batch", "bad",
		invalidValue("spec.schedule", `"every day"`, "expected exactly 5 fields, found 2: [every day]"),
		invalidValue("spec.timeZone", `"Mars/Olympus"`, "unknown time zone Mars/Olympus"),
		cause{"spec.concurrencyPolicy", "FieldValueNotSupported", `Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"`})

	r = e.post(t, path, obj{"metadata": obj{"name": "bad"}, "spec": obj{}})
	checkInvalid(t, r, "CronJob.batch", "bad",
		cause{"spec.jobTemplate.spec.template.spec.containers", "FieldValueRequired", "Required value"},
		cause{"spec.jobTemplate.spec.template.spec.restartPolicy", "FieldValueRequired", `Required value: valid values: "OnFailure", "Never"`},
		cause{"spec.schedule", "FieldValueRequired", "Required value"})
}

// TestPodDisruptionBudgetAndAutoscaler checks a PodDisruptionBudget's
// validation (both bounds, a negative count, a percentage over 100%, an
// unknown policy) and a HorizontalPodAutoscaler's defaults (one replica,
// 80% CPU, the behavior rules under what a client sets).
func TestPodDisruptionBudgetAndAutoscaler(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	r := e.post(t, "/apis/policy/v1/namespaces/"+ns+"/poddisruptionbudgets", obj{"metadata": obj{"name": "bad"},
		"spec": obj{"minAvailable": -1, "maxUnavailable": "150%", "unhealthyPodEvictionPolicy": "Sometimes"}})
	checkInvalid(t, r, "PodDisruptionBudget.policy", "bad",
		invalidValue("spec", `{"MinAvailable":-1,"Selector":null,"MaxUnavailable":"150%","UnhealthyPodEvictionPolicy":"Sometimes"}`, "minAvailable and maxUnavailable cannot be both set"),
		invalidValue("spec.minAvailable", "-1", "must be greater than or equal to 0"),
		invalidValue("spec.maxUnavailable", `"150%"`, "must not be greater than 100%"),
		cause{"spec.unhealthyPodEvictionPolicy", "FieldValueNotSupported", `Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"`})
	pdb := expect(t, e.post(t, "/apis/policy/v1/namespaces/"+ns+"/poddisruptionbudgets", obj{"metadata": obj{"name": "web"},
		"spec": obj{"minAvailable": 1, "selector": obj{"matchLabels": obj{"app": "web"}}}}), http.StatusCreated)
	if g, _ := num(pdb, "metadata", "generation"); g != 1 || !has(pdb, "status", "disruptionsAllowed") {
		t.Errorf("created budget %s", compact(pdb))
	}

	hpa := expect(t, e.post(t, "/apis/autoscaling/v2/namespaces/"+ns+"/horizontalpodautoscalers", obj{"metadata": obj{"name": "web"},
		"spec": obj{"scaleTargetRef": obj{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5,
			"behavior": obj{"scaleDown": obj{"stabilizationWindowSeconds": 120}}}}), http.StatusCreated)
	spec := hpa["spec"].(map[string]any)
	if compact(spec["metrics"]) != `[{"resource":{"name":"cpu","target":{"averageUtilization":80,"type":"Utilization"}},"type":"Resource"}]` || compact(spec["minReplicas"]) != "1" {
		t.Errorf("autoscaler spec %s", compact(spec))
	}
	if b := compact(spec["behavior"]); b != `{"scaleDown":{"policies":[{"periodSeconds":15,"type":"Percent","value":100}],"selectPolicy":"Max","stabilizationWindowSeconds":120},`+
		`"scaleUp":{"policies":[{"periodSeconds":15,"type":"Pods","value":4},{"periodSeconds":15,"type":"Percent","value":100}],"selectPolicy":"Max","stabilizationWindowSeconds":0}}` {
		t.Errorf("behavior %s", b)
	}
	r = e.post(t, "/apis/autoscaling/v2/namespaces/"+ns+"/horizontalpodautoscalers", obj{"metadata": obj{"name": "bad"}, "spec": obj{}})
	checkInvalid(t, r, "HorizontalPodAutoscaler.autoscaling", "bad",
		invalidValue("spec.maxReplicas", "0", "must be greater than or equal to `minReplicas`"),
		cause{"spec.scaleTargetRef.kind", "FieldValueRequired", "Required value"},
		cause{"spec.scaleTargetRef.name", "FieldValueRequired", "Required value"},
		invalidValue("spec.scaleTargetRef.apiVersion", `""`, "apiVersion must specify API group"),
		cause{"spec.maxReplicas", "FieldValueRequired", "Required value"})
}
