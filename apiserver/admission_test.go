package apiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	certificatesv1 "github.com/kapi-dev/kapi/api/certificates/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	networkingv1 "github.com/kapi-dev/kapi/api/networking/v1"
	nodev1 "github.com/kapi-dev/kapi/api/node/v1"
	schedulingv1 "github.com/kapi-dev/kapi/api/scheduling/v1"
	storagev1 "github.com/kapi-dev/kapi/api/storage/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
)

// admissionServer is a server with the kinds the admission plugins read
// and act on (those the built-in registry does not serve yet registered
// bare, without behaviour of their own), a namespace "t" with its default
// ServiceAccount, and cfg's settings.
func admissionServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	reg := registry.Builtin()
	bare := func(r *registry.Resource) {
		if reg.Get(r.Group, r.Version, r.Resource) != nil {
			return
		}
		if r.Singular == "" {
			r.Singular = strings.ToLower(r.Kind)
		}
		if err := reg.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	bare(registry.Typed[corev1.LimitRange](&registry.Resource{Version: "v1", Resource: "limitranges", Kind: "LimitRange", Namespaced: true}))
	bare(registry.Typed[corev1.ResourceQuota](&registry.Resource{Version: "v1", Resource: "resourcequotas", Kind: "ResourceQuota", Namespaced: true, StatusSubresource: true}))
	bare(registry.Typed[corev1.PersistentVolumeClaim](&registry.Resource{Version: "v1", Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true, StatusSubresource: true}))
	bare(registry.Typed[corev1.PersistentVolume](&registry.Resource{Version: "v1", Resource: "persistentvolumes", Kind: "PersistentVolume", StatusSubresource: true}))
	bare(registry.Typed[schedulingv1.PriorityClass](&registry.Resource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses", Kind: "PriorityClass"}))
	bare(registry.Typed[storagev1.StorageClass](&registry.Resource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Kind: "StorageClass"}))
	bare(registry.Typed[networkingv1.IngressClass](&registry.Resource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses", Kind: "IngressClass"}))
	bare(registry.Typed[networkingv1.Ingress](&registry.Resource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Kind: "Ingress", Namespaced: true, StatusSubresource: true}))
	bare(registry.Typed[nodev1.RuntimeClass](&registry.Resource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses", Kind: "RuntimeClass"}))
	bare(registry.Typed[certificatesv1.CertificateSigningRequest](&registry.Resource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests", Kind: "CertificateSigningRequest", StatusSubresource: true}))
	cfg.Registry = reg
	cfg.DisableServiceAccountController, cfg.DisableRootCAPublisher = true, true
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"t"}}`, http.StatusCreated)
	mustServe(t, srv, "POST", "/api/v1/namespaces/t/serviceaccounts", `{"metadata":{"name":"default"}}`, http.StatusCreated)
	return srv
}

const podBody = `{"metadata":{"name":%q},"spec":{"containers":[{"name":"c","image":"busybox"}]%s}}`

func podJSON(name, extra string) string {
	b, _ := json.Marshal(name)
	return strings.Replace(strings.Replace(podBody, "%q", string(b), 1), "%s", extra, 1)
}

func spec(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

func message(m map[string]any) string { s, _ := m["message"].(string); return s }

func TestAdmissionServiceAccount(t *testing.T) {
	srv := admissionServer(t, Config{})
	const pods = "/api/v1/namespaces/t/pods"
	// Captured from kube-apiserver v1.37.2 (p1).
	code, st := serve(t, srv, "POST", pods, podJSON("p1", `,"serviceAccountName":"nosa"`))
	if code != http.StatusForbidden || message(st) != `pods "p1" is forbidden: error looking up service account t/nosa: serviceaccount "nosa" not found` {
		t.Errorf("missing account: %d %v", code, st)
	}
	// Captured from kube-apiserver v1.37.2: a refusal of a mutating plugin
	// names the object by its generateName, drawn after them.
	code, st = serve(t, srv, "POST", pods, `{"metadata":{"generateName":"gen-"},"spec":{"serviceAccountName":"nosa","containers":[{"name":"c","image":"i"}]}}`)
	if code != http.StatusForbidden || message(st) != `pods "gen-" is forbidden: error looking up service account t/nosa: serviceaccount "nosa" not found` {
		t.Errorf("generated name: %d %v", code, st)
	}
	got := mustServe(t, srv, "POST", pods, podJSON("p2", ""), http.StatusCreated)
	if spec(got)["serviceAccountName"] != "default" || len(spec(got)["volumes"].([]any)) != 1 {
		t.Errorf("default account: %v", spec(got))
	}
	mustServe(t, srv, "POST", "/api/v1/namespaces/t/serviceaccounts",
		`{"metadata":{"name":"quiet"},"automountServiceAccountToken":false,"imagePullSecrets":[{"name":"regcred"}]}`, http.StatusCreated)
	got = mustServe(t, srv, "POST", pods, podJSON("p3", `,"serviceAccountName":"quiet"`), http.StatusCreated)
	if spec(got)["volumes"] != nil || spec(got)["imagePullSecrets"] == nil {
		t.Errorf("the account's preferences: %v", spec(got))
	}
	got = mustServe(t, srv, "POST", pods, podJSON("p4", `,"serviceAccountName":"quiet","automountServiceAccountToken":true`), http.StatusCreated)
	if spec(got)["volumes"] == nil {
		t.Errorf("the pod's preference wins: %v", spec(got))
	}

	off := admissionServer(t, Config{DisableAdmissionPlugins: []string{"ServiceAccount"}})
	got = mustServe(t, off, "POST", pods, podJSON("p", `,"serviceAccountName":"nosa"`), http.StatusCreated)
	if spec(got)["volumes"] != nil {
		t.Errorf("ServiceAccount disabled: %v", spec(got))
	}
}

func TestAdmissionPriority(t *testing.T) {
	srv := admissionServer(t, Config{})
	const pods = "/api/v1/namespaces/t/pods"
	code, st := serve(t, srv, "POST", pods, podJSON("p", `,"priorityClassName":"nopc"`))
	if code != http.StatusForbidden || message(st) != `pods "p" is forbidden: no PriorityClass with name nopc was found` {
		t.Errorf("unknown class: %d %v", code, st)
	}
	got := mustServe(t, srv, "POST", pods, podJSON("crit", `,"priorityClassName":"system-node-critical"`), http.StatusCreated)
	if spec(got)["priority"] != 2000001000.0 {
		t.Errorf("system class: %v", spec(got)["priority"])
	}
	mustServe(t, srv, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", `{"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"Never"}`, http.StatusCreated)
	mustServe(t, srv, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", `{"metadata":{"name":"base"},"value":10,"globalDefault":true}`, http.StatusCreated)
	got = mustServe(t, srv, "POST", pods, podJSON("high", `,"priorityClassName":"high"`), http.StatusCreated)
	if spec(got)["priority"] != 1000.0 || spec(got)["preemptionPolicy"] != "Never" {
		t.Errorf("class: %v", spec(got))
	}
	got = mustServe(t, srv, "POST", pods, podJSON("plain", ""), http.StatusCreated)
	if spec(got)["priority"] != 10.0 || spec(got)["priorityClassName"] != "base" {
		t.Errorf("global default: %v", spec(got))
	}
	// An update that leaves the priority out keeps it.
	delete(spec(got), "priority")
	b, _ := json.Marshal(got)
	got = mustServe(t, srv, "PUT", pods+"/plain", string(b), http.StatusOK)
	if spec(got)["priority"] != 10.0 {
		t.Errorf("update: %v", spec(got)["priority"])
	}
}

func TestAdmissionLimitRanger(t *testing.T) {
	srv := admissionServer(t, Config{})
	mustServe(t, srv, "POST", "/api/v1/namespaces/t/limitranges", `{"metadata":{"name":"lr"},"spec":{"limits":[
		{"type":"Container","default":{"cpu":"500m","memory":"256Mi"},"defaultRequest":{"cpu":"100m"},"min":{"cpu":"50m"},"max":{"cpu":"1"},"maxLimitRequestRatio":{"cpu":"10"}},
		{"type":"Pod","max":{"memory":"1Gi"}}]}}`, http.StatusCreated)
	const pods = "/api/v1/namespaces/t/pods"
	got := mustServe(t, srv, "POST", pods, podJSON("lp1", ""), http.StatusCreated)
	want := "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"
	if a := got["metadata"].(map[string]any)["annotations"].(map[string]any)["kubernetes.io/limit-ranger"]; a != want {
		t.Errorf("annotation %v", a)
	}
	if q := got["status"].(map[string]any)["qosClass"]; q != "Burstable" {
		t.Errorf("QoS class %v after the defaults", q)
	}
	code, st := serve(t, srv, "POST", pods, podJSON("lp2", `,"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"10m"},"limits":{"cpu":"2","memory":"2Gi"}}}]`))
	if code != http.StatusForbidden || message(st) != `pods "lp2" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 10, but provided ratio is 200.000000, maximum memory usage per Pod is 1Gi, but limit is 2Gi]` {
		t.Errorf("limits: %d %s", code, message(st))
	}
}

func TestAdmissionResourceQuota(t *testing.T) {
	srv := admissionServer(t, Config{})
	const quotas, pods = "/api/v1/namespaces/t/resourcequotas", "/api/v1/namespaces/t/pods"
	mustServe(t, srv, "POST", quotas, `{"metadata":{"name":"q"},"spec":{"hard":{"pods":"1","requests.cpu":"1","configmaps":"3"}}}`, http.StatusCreated)
	status := func() map[string]any {
		return mustServe(t, srv, "GET", quotas+"/q", "", http.StatusOK)["status"].(map[string]any)
	}
	used := func() string { b, _ := json.Marshal(status()["used"]); return string(b) }
	if u := used(); u != `{"configmaps":"0","pods":"0","requests.cpu":"0"}` {
		t.Errorf("new quota used %s", u)
	}
	if h, _ := json.Marshal(status()["hard"]); string(h) != `{"configmaps":"3","pods":"1","requests.cpu":"1"}` {
		t.Errorf("hard %s", h)
	}
	cpuPod := func(name, cpu string) string {
		return podJSON(name, `,"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"`+cpu+`"}}}]`)
	}
	mustServe(t, srv, "POST", pods+"?dryRun=All", cpuPod("dry", "200m"), http.StatusCreated)
	if u := used(); u != `{"configmaps":"0","pods":"0","requests.cpu":"0"}` {
		t.Errorf("a dry run charged: %s", u)
	}
	mustServe(t, srv, "POST", pods, cpuPod("qp1", "200m"), http.StatusCreated)
	if u := used(); u != `{"configmaps":"0","pods":"1","requests.cpu":"200m"}` {
		t.Errorf("after a pod: %s", u)
	}
	code, st := serve(t, srv, "POST", pods, cpuPod("qp4", "2"))
	if code != http.StatusForbidden || message(st) != `pods "qp4" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=2, used: pods=1,requests.cpu=200m, limited: pods=1,requests.cpu=1` {
		t.Errorf("exceeded: %d %s", code, message(st))
	}
	code, st = serve(t, srv, "POST", pods, podJSON("qp3", ""))
	if code != http.StatusForbidden || message(st) != `pods "qp3" is forbidden: failed quota: q: must specify requests.cpu for: c` {
		t.Errorf("must specify: %d %s", code, message(st))
	}
	mustServe(t, srv, "DELETE", pods+"/qp1?gracePeriodSeconds=0", "", http.StatusOK)
	if u := used(); u != `{"configmaps":"0","pods":"0","requests.cpu":"0"}` {
		t.Errorf("after the delete: %s", u)
	}
	// A pod that has finished uses nothing.
	done := mustServe(t, srv, "POST", pods, cpuPod("done", "200m"), http.StatusCreated)
	if u := used(); u != `{"configmaps":"0","pods":"1","requests.cpu":"200m"}` {
		t.Errorf("after a second pod: %s", u)
	}
	done["status"] = map[string]any{"phase": "Succeeded"}
	b, _ := json.Marshal(done)
	mustServe(t, srv, "PUT", pods+"/done/status", string(b), http.StatusOK)
	if u := used(); u != `{"configmaps":"0","pods":"0","requests.cpu":"0"}` {
		t.Errorf("after the pod finished: %s", u)
	}
	mustServe(t, srv, "POST", "/api/v1/namespaces/t/configmaps", `{"metadata":{"name":"a"}}`, http.StatusCreated)
	if u := used(); u != `{"configmaps":"1","pods":"0","requests.cpu":"0"}` {
		t.Errorf("after a configmap: %s", u)
	}
	off := admissionServer(t, Config{DisableAdmissionPlugins: []string{"ResourceQuota"}})
	mustServe(t, off, "POST", quotas, `{"metadata":{"name":"q"},"spec":{"hard":{"pods":"0"}}}`, http.StatusCreated)
	mustServe(t, off, "POST", pods, podJSON("p", ""), http.StatusCreated)
}

func TestAdmissionPodSecurity(t *testing.T) {
	srv := admissionServer(t, Config{})
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/namespaces", strings.NewReader(
		`{"metadata":{"name":"ps","labels":{"pod-security.kubernetes.io/enforce":"bogus"}}}`)))
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(),
		`metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"bogus\": must be one of privileged, baseline, restricted`) {
		t.Errorf("bad label: %d %s", rec.Code, rec.Body)
	}
	mustServe(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ps","labels":{"pod-security.kubernetes.io/enforce":"baseline","pod-security.kubernetes.io/warn":"restricted"}}}`, http.StatusCreated)
	mustServe(t, srv, "POST", "/api/v1/namespaces/ps/serviceaccounts", `{"metadata":{"name":"default"}}`, http.StatusCreated)
	code, st := serve(t, srv, "POST", "/api/v1/namespaces/ps/pods", podJSON("bad", `,"hostNetwork":true`))
	if code != http.StatusForbidden || message(st) != `pods "bad" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)` {
		t.Errorf("enforce: %d %s", code, message(st))
	}
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/namespaces/ps/pods", strings.NewReader(podJSON("warned", ""))))
	want := `299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")"`
	if rec.Code != http.StatusCreated || rec.Header().Get("Warning") != want {
		t.Errorf("warn: %d %q", rec.Code, rec.Header().Values("Warning"))
	}
	// Making the namespace restricted warns about the pod.
	ns := mustServe(t, srv, "GET", "/api/v1/namespaces/ps", "", http.StatusOK)
	ns["metadata"].(map[string]any)["labels"].(map[string]any)["pod-security.kubernetes.io/enforce"] = "restricted"
	b, _ := json.Marshal(ns)
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("PUT", "/api/v1/namespaces/ps", strings.NewReader(string(b))))
	if w := rec.Header().Values("Warning"); rec.Code != http.StatusOK || len(w) != 2 ||
		w[0] != `299 - "existing pods in namespace \"ps\" violate the new PodSecurity enforce level \"restricted:latest\""` ||
		w[1] != `299 - "warned: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"` {
		t.Errorf("namespace update: %d %q", rec.Code, w)
	}
	// A workload is warned about, not refused.
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("POST", "/apis/apps/v1/namespaces/ps/deployments", strings.NewReader(
		`{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"hostPID":true,"containers":[{"name":"c","image":"i"}]}}}}`)))
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Header().Get("Warning"), `would violate PodSecurity \"restricted:latest\": host namespaces (hostPID=true)`) {
		t.Errorf("deployment: %d %q", rec.Code, rec.Header().Values("Warning"))
	}
	off := admissionServer(t, Config{DisableAdmissionPlugins: []string{"PodSecurity"}})
	mustServe(t, off, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ps","labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`, http.StatusCreated)
	mustServe(t, off, "POST", "/api/v1/namespaces/ps/serviceaccounts", `{"metadata":{"name":"default"}}`, http.StatusCreated)
	mustServe(t, off, "POST", "/api/v1/namespaces/ps/pods", podJSON("p", `,"hostNetwork":true`), http.StatusCreated)
}

func TestAdmissionStorageAndIngressClasses(t *testing.T) {
	srv := admissionServer(t, Config{})
	mustServe(t, srv, "POST", "/apis/storage.k8s.io/v1/storageclasses", `{"metadata":{"name":"fast","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"x"}`, http.StatusCreated)
	got := mustServe(t, srv, "POST", "/api/v1/namespaces/t/persistentvolumeclaims", `{"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, http.StatusCreated)
	if spec(got)["storageClassName"] != "fast" || got["metadata"].(map[string]any)["finalizers"].([]any)[0] != "kubernetes.io/pvc-protection" {
		t.Errorf("claim: %v", got)
	}
	got = mustServe(t, srv, "POST", "/api/v1/namespaces/t/persistentvolumeclaims", `{"metadata":{"name":"e"},"spec":{"storageClassName":"","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, http.StatusCreated)
	if spec(got)["storageClassName"] != "" {
		t.Errorf("an empty class is kept: %v", spec(got))
	}
	got = mustServe(t, srv, "POST", "/api/v1/persistentvolumes", `{"metadata":{"name":"v"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/x"}}}`, http.StatusCreated)
	if got["metadata"].(map[string]any)["finalizers"].([]any)[0] != "kubernetes.io/pv-protection" {
		t.Errorf("volume: %v", got["metadata"])
	}
	mustServe(t, srv, "POST", "/apis/networking.k8s.io/v1/ingressclasses", `{"metadata":{"name":"nginx","annotations":{"ingressclass.kubernetes.io/is-default-class":"true"}},"spec":{"controller":"k8s.io/ingress-nginx"}}`, http.StatusCreated)
	got = mustServe(t, srv, "POST", "/apis/networking.k8s.io/v1/namespaces/t/ingresses", `{"metadata":{"name":"i"},"spec":{"defaultBackend":{"service":{"name":"s","port":{"number":80}}}}}`, http.StatusCreated)
	if spec(got)["ingressClassName"] != "nginx" {
		t.Errorf("ingress: %v", spec(got))
	}
	off := admissionServer(t, Config{DisableAdmissionPlugins: []string{"DefaultStorageClass", "StorageObjectInUseProtection"}})
	mustServe(t, off, "POST", "/apis/storage.k8s.io/v1/storageclasses", `{"metadata":{"name":"fast","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"x"}`, http.StatusCreated)
	got = mustServe(t, off, "POST", "/api/v1/namespaces/t/persistentvolumeclaims", `{"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, http.StatusCreated)
	if spec(got)["storageClassName"] != nil || got["metadata"].(map[string]any)["finalizers"] != nil {
		t.Errorf("disabled: %v", got)
	}
}

func TestAdmissionRuntimeClassAndNamespaceLifecycle(t *testing.T) {
	srv := admissionServer(t, Config{})
	code, st := serve(t, srv, "POST", "/api/v1/namespaces/t/pods", podJSON("p3", `,"runtimeClassName":"norc"`))
	if code != http.StatusForbidden || message(st) != `pods "p3" is forbidden: pod rejected: RuntimeClass "norc" not found` {
		t.Errorf("unknown runtime class: %d %s", code, message(st))
	}
	mustServe(t, srv, "POST", "/apis/node.k8s.io/v1/runtimeclasses", `{"metadata":{"name":"gvisor"},"handler":"runsc","overhead":{"podFixed":{"cpu":"250m"}}}`, http.StatusCreated)
	got := mustServe(t, srv, "POST", "/api/v1/namespaces/t/pods", podJSON("p", `,"runtimeClassName":"gvisor"`), http.StatusCreated)
	if b, _ := json.Marshal(spec(got)["overhead"]); string(b) != `{"cpu":"250m"}` {
		t.Errorf("overhead %s", b)
	}
	if code, _ := serve(t, srv, "POST", "/api/v1/namespaces/missing/configmaps", `{"metadata":{"name":"a"}}`); code != http.StatusNotFound {
		t.Errorf("missing namespace: %d", code)
	}
	off := admissionServer(t, Config{DisableAdmissionPlugins: []string{"NamespaceLifecycle"}})
	mustServe(t, off, "POST", "/api/v1/namespaces/missing/configmaps", `{"metadata":{"name":"a"}}`, http.StatusCreated)
	if _, err := New(Config{DisableAdmissionPlugins: []string{"Nope"}}); err == nil || err.Error() != `apiserver: admission plugin "Nope" is unknown` {
		t.Errorf("unknown plugin: %v", err)
	}
}

func TestAdmissionCertificateSubjectRestriction(t *testing.T) {
	srv := admissionServer(t, Config{})
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x", Organization: []string{"system:masters"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	body := func(signer string) string {
		return `{"metadata":{"name":"c"},"spec":{"signerName":"` + signer + `","usages":["client auth"],"request":"` + req + `"}}`
	}
	const csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	code, st := serve(t, srv, "POST", csrs, body("kubernetes.io/kube-apiserver-client"))
	if code != http.StatusForbidden || message(st) != `certificatesigningrequests.certificates.k8s.io "c" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed` {
		t.Errorf("masters: %d %s", code, message(st))
	}
	mustServe(t, srv, "POST", csrs, body("example.com/other"), http.StatusCreated)
}
