package conformance

import (
	"net/http"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// The admission plugins kube-apiserver enables by default, seen through
// what they refuse and set. Each case makes only objects of its own
// namespace (the cluster-wide classes a plugin reads are left alone).

// withQuotaKinds is, in-process, a fresh server that also serves
// limitranges and resourcequotas (bare, without the defaulting and
// validation of their own that a real server has) where the reference
// server does not serve them yet; the target otherwise.
func withQuotaKinds(t *testing.T) *env {
	t.Helper()
	return withDefaults(t, func(cfg *apiserver.Config) {
		reg := registry.Builtin()
		for _, r := range []*registry.Resource{
			registry.Typed[corev1.LimitRange](&registry.Resource{Version: "v1", Resource: "limitranges", Kind: "LimitRange", Singular: "limitrange", Namespaced: true}),
			registry.Typed[corev1.ResourceQuota](&registry.Resource{Version: "v1", Resource: "resourcequotas", Kind: "ResourceQuota", Singular: "resourcequota", Namespaced: true, StatusSubresource: true}),
		} {
			if reg.Get(r.Group, r.Version, r.Resource) == nil {
				if err := reg.Add(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		cfg.Registry = reg
	})
}

// served reports whether the target serves the collection at path (a
// kind not served in-process yet makes its case skip there).
func (e *env) served(t *testing.T, path string) bool {
	t.Helper()
	return e.get(t, path).Code == http.StatusOK
}

// TestAdmissionServiceAccount: a pod's service account must exist; the
// account's automountServiceAccountToken decides the token volume when the
// pod says nothing.
func TestAdmissionServiceAccount(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	p := pod("p1", "", nil)
	p["spec"].(obj)["serviceAccountName"] = "nosa"
	st := checkStatus(t, e.post(t, pods, p), http.StatusForbidden, "Forbidden", "")
	if want := `pods "p1" is forbidden: error looking up service account ` + ns + `/nosa: serviceaccount "nosa" not found`; str(st, "message") != want {
		t.Errorf("message %q\nwant    %q", str(st, "message"), want)
	}
	expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/serviceaccounts", obj{"metadata": obj{"name": "quiet"}, "automountServiceAccountToken": false}), http.StatusCreated)
	p = pod("p2", "", nil)
	p["spec"].(obj)["serviceAccountName"] = "quiet"
	got := expect(t, e.post(t, pods, p), http.StatusCreated)
	if has(got, "spec", "volumes") || str(got, "spec", "serviceAccount") != "quiet" {
		t.Errorf("pod of an account that opts out: %v", got["spec"])
	}
	got = expect(t, e.post(t, pods, pod("p3", "", nil)), http.StatusCreated)
	if str(got, "spec", "serviceAccountName") != "default" || !has(got, "spec", "volumes") {
		t.Errorf("pod of the default account: %v", got["spec"])
	}
}

// TestAdmissionPriority: the priority comes from the PriorityClass; an
// unknown class, or a priority the pod states itself, is refused.
func TestAdmissionPriority(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	for _, tc := range []struct {
		name string
		spec obj
		msg  string
	}{
		{"p1", obj{"priorityClassName": "nopc"}, `pods "p1" is forbidden: no PriorityClass with name nopc was found`},
		{"p2", obj{"priority": 5}, `pods "p2" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
		{"p3", obj{"runtimeClassName": "norc"}, `pods "p3" is forbidden: pod rejected: RuntimeClass "norc" not found`},
	} {
		p := pod(tc.name, "", nil)
		for k, v := range tc.spec {
			p["spec"].(obj)[k] = v
		}
		if st := checkStatus(t, e.post(t, pods, p), http.StatusForbidden, "Forbidden", ""); str(st, "message") != tc.msg {
			t.Errorf("%s: %q\nwant %q", tc.name, str(st, "message"), tc.msg)
		}
	}
	p := pod("crit", "", nil)
	p["spec"].(obj)["priorityClassName"] = "system-node-critical"
	got := expect(t, e.post(t, pods, p), http.StatusCreated)
	if n, _ := num(got, "spec", "priority"); n != 2000001000 || str(got, "spec", "preemptionPolicy") != "PreemptLowerPriority" {
		t.Errorf("system-node-critical: %v", got["spec"])
	}
}

// TestAdmissionPodSecurity: a namespace's pod-security.kubernetes.io
// labels are checked; its enforced level refuses pods with every violation
// listed, its warn level answers with a Warning header.
func TestAdmissionPodSecurity(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	nsPath := "/api/v1/namespaces/" + ns
	label := func(labels obj) *response {
		return e.do(t, "PATCH", nsPath, obj{"metadata": obj{"labels": labels}}, "Content-Type", "application/merge-patch+json")
	}
	st := checkStatus(t, label(obj{"pod-security.kubernetes.io/enforce": "bogus"}), http.StatusUnprocessableEntity, "Invalid", "")
	if want := `Namespace "` + ns + `" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted`; str(st, "message") != want {
		t.Errorf("bad label: %q\nwant %q", str(st, "message"), want)
	}
	expect(t, label(obj{"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}), http.StatusOK)
	pods := nsPath + "/pods"
	p := pod("bad", "", nil)
	p["spec"].(obj)["hostNetwork"] = true
	p["spec"].(obj)["containers"].([]any)[0].(obj)["securityContext"] = obj{"privileged": true}
	st = checkStatus(t, e.post(t, pods, p), http.StatusForbidden, "Forbidden", "")
	if want := `pods "bad" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container "app" must not set securityContext.privileged=true)`; str(st, "message") != want {
		t.Errorf("enforce: %q\nwant %q", str(st, "message"), want)
	}
	r := e.post(t, pods, pod("warned", "", nil))
	expect(t, r, http.StatusCreated)
	want := `299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"app\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"app\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"app\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"app\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"`
	if w := r.Header.Values("Warning"); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q\nwant %q", w, want)
	}
	r = label(obj{"pod-security.kubernetes.io/enforce": "restricted"})
	expect(t, r, http.StatusOK)
	if w := r.Header.Values("Warning"); len(w) != 2 ||
		w[0] != `299 - "existing pods in namespace \"`+ns+`\" violate the new PodSecurity enforce level \"restricted:latest\""` ||
		w[1] != `299 - "warned: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"` {
		t.Errorf("warnings of the stricter level: %q", w)
	}
}

// TestAdmissionLimitRanger: a LimitRange's defaults are set on a new pod
// (and recorded in an annotation), its min, max and ratio refuse.
func TestAdmissionLimitRanger(t *testing.T) {
	t.Parallel()
	e := withQuotaKinds(t)
	ns := e.namespace(t)
	lrs := "/api/v1/namespaces/" + ns + "/limitranges"
	if !e.served(t, lrs) {
		t.Skipf("%s does not serve limitranges", e.name)
	}
	e.ensureDefaultServiceAccount(t, ns)
	expect(t, e.post(t, lrs, obj{"metadata": obj{"name": "lr"}, "spec": obj{"limits": []any{
		obj{"type": "Container", "default": obj{"cpu": "500m", "memory": "256Mi"}, "defaultRequest": obj{"cpu": "100m"},
			"min": obj{"cpu": "50m"}, "max": obj{"cpu": "1"}, "maxLimitRequestRatio": obj{"cpu": "10"}},
		obj{"type": "Pod", "max": obj{"memory": "1Gi"}}}}}), http.StatusCreated)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	got := expect(t, e.post(t, pods, pod("lp1", "", nil)), http.StatusCreated)
	if a := str(got, "metadata", "annotations", "kubernetes.io/limit-ranger"); a != "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app" {
		t.Errorf("annotation %q", a)
	}
	if q := str(got, "status", "qosClass"); q != "Burstable" {
		t.Errorf("QoS class %q", q)
	}
	p := pod("lp2", "", nil)
	p["spec"].(obj)["containers"].([]any)[0].(obj)["resources"] = obj{"requests": obj{"cpu": "10m"}, "limits": obj{"cpu": "2", "memory": "2Gi"}}
	st := checkStatus(t, e.post(t, pods, p), http.StatusForbidden, "Forbidden", "")
	if want := `pods "lp2" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 10, but provided ratio is 200.000000, maximum memory usage per Pod is 1Gi, but limit is 2Gi]`; str(st, "message") != want {
		t.Errorf("limits: %q\nwant %q", str(st, "message"), want)
	}
}

// TestAdmissionResourceQuota: a quota's status is computed, writes are
// charged and refused beyond the quota, a deletion gives back.
func TestAdmissionResourceQuota(t *testing.T) {
	t.Parallel()
	e := withQuotaKinds(t)
	ns := e.namespace(t)
	quotas := "/api/v1/namespaces/" + ns + "/resourcequotas"
	if !e.served(t, quotas) {
		t.Skipf("%s does not serve resourcequotas", e.name)
	}
	e.ensureDefaultServiceAccount(t, ns)
	expect(t, e.post(t, quotas, obj{"metadata": obj{"name": "q"}, "spec": obj{"hard": obj{"pods": "1", "requests.cpu": "1"}}}), http.StatusCreated)
	used := func(want string) {
		t.Helper()
		e.waitCollection(t, quotas, "quota usage "+want, e.within(30*time.Second), func(objs map[string]obj) bool {
			q := objs[ns+"/q"]
			return q != nil && str(q, "status", "used", "pods")+","+str(q, "status", "used", "requests.cpu") == want
		})
	}
	used("0,0")
	pods := "/api/v1/namespaces/" + ns + "/pods"
	cpuPod := func(name, cpu string) obj {
		p := pod(name, "", nil)
		p["spec"].(obj)["containers"].([]any)[0].(obj)["resources"] = obj{"requests": obj{"cpu": cpu}}
		return p
	}
	expect(t, e.post(t, pods, cpuPod("qp1", "200m")), http.StatusCreated)
	used("1,200m")
	st := checkStatus(t, e.post(t, pods, cpuPod("qp4", "2")), http.StatusForbidden, "Forbidden", "")
	if want := `pods "qp4" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=2, used: pods=1,requests.cpu=200m, limited: pods=1,requests.cpu=1`; str(st, "message") != want {
		t.Errorf("exceeded: %q\nwant %q", str(st, "message"), want)
	}
	st = checkStatus(t, e.post(t, pods, pod("qp3", "", nil)), http.StatusForbidden, "Forbidden", "")
	if want := `pods "qp3" is forbidden: failed quota: q: must specify requests.cpu for: app`; str(st, "message") != want {
		t.Errorf("must specify: %q\nwant %q", str(st, "message"), want)
	}
	expect(t, e.del(t, pods+"/qp1?gracePeriodSeconds=0", nil), http.StatusOK)
	used("0,0")
}
