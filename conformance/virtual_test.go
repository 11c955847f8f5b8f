package conformance

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
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReviews checks the reviews: created and answered, never stored; the
// requesting user (the suite's credentials: an admin in system:masters
// against a real cluster, kapi's only user in-process) is allowed, and
// invalid reviews get kube-apiserver's 400 and 422s.
func TestReviews(t *testing.T) {
	t.Parallel()
	e := target
	ssr := expect(t, e.post(t, "/apis/authentication.k8s.io/v1/selfsubjectreviews", obj{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}), http.StatusCreated)
	groups, _ := field(ssr, "status", "userInfo", "groups")
	if str(ssr, "status", "userInfo", "username") == "" || !slices.Contains(anyStrings(groups), "system:authenticated") {
		t.Errorf("SelfSubjectReview answered %s", compact(ssr))
	}

	sar := expect(t, e.post(t, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", obj{"spec": obj{
		"resourceAttributes": obj{"namespace": "default", "verb": "create", "group": "apps", "resource": "deployments"}}}), http.StatusCreated)
	if allowed, _ := field(sar, "status", "allowed"); allowed != true || str(sar, "spec", "resourceAttributes", "resource") != "deployments" {
		t.Errorf("SelfSubjectAccessReview answered %s", compact(sar))
	}
	nonres := expect(t, e.post(t, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", obj{"spec": obj{
		"nonResourceAttributes": obj{"path": "/healthz", "verb": "get"}}}), http.StatusCreated)
	if allowed, _ := field(nonres, "status", "allowed"); allowed != true {
		t.Errorf("SelfSubjectAccessReview of /healthz answered %s", compact(nonres))
	}

	both := obj{"spec": obj{"resourceAttributes": obj{"verb": "get", "resource": "pods"}, "nonResourceAttributes": obj{"path": "/healthz", "verb": "get"}}}
	st := checkStatus(t, e.post(t, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", both), http.StatusUnprocessableEntity, "Invalid",
		`spec: Invalid value: {"Path":"/healthz","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified`)
	if str(st, "details", "group") != "authorization.k8s.io" || has(st, "details", "kind") {
		t.Errorf("invalid review details %s", compact(st["details"]))
	}
	checkStatus(t, e.post(t, "/apis/authorization.k8s.io/v1/subjectaccessreviews", obj{"spec": obj{"resourceAttributes": obj{"verb": "get", "resource": "pods"}}}),
		http.StatusUnprocessableEntity, "Invalid", `spec.user: Invalid value: "": at least one of user or group must be specified`)
	ns := e.namespace(t)
	checkStatus(t, e.post(t, "/apis/authorization.k8s.io/v1/namespaces/"+ns+"/localsubjectaccessreviews", obj{"spec": obj{"user": "jane",
		"resourceAttributes": obj{"namespace": "other", "verb": "get", "resource": "pods"}}}),
		http.StatusUnprocessableEntity, "Invalid", `spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`)
	checkStatus(t, e.post(t, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", obj{"spec": obj{}}), http.StatusBadRequest, "BadRequest", "no namespace on request")
	rules := expect(t, e.post(t, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", obj{"spec": obj{"namespace": ns}}), http.StatusCreated)
	if rr, _ := field(rules, "status", "resourceRules"); len(rr.([]any)) == 0 || has(rules, "spec", "namespace") {
		t.Errorf("SelfSubjectRulesReview answered %s", compact(rules))
	}

	checkStatus(t, e.post(t, "/apis/authentication.k8s.io/v1/tokenreviews", obj{"spec": obj{}}), http.StatusBadRequest, "BadRequest", "token is required for TokenReview in authentication")
	bad := expect(t, e.post(t, "/apis/authentication.k8s.io/v1/tokenreviews", obj{"spec": obj{"token": "not-a-valid-token"}}), http.StatusCreated)
	if has(bad, "status", "authenticated") || str(bad, "status", "error") != "invalid bearer token" {
		t.Errorf("TokenReview of a bad token answered %s", compact(bad))
	}
	// Nothing is stored: a review is only created.
	checkStatus(t, e.get(t, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"), http.StatusMethodNotAllowed, "MethodNotAllowed", "")
}

// TestPodBinding checks pods/binding and the bindings collection: a
// binding assigns an unscheduled pod to its node (spec.nodeName, and the
// PodScheduled condition), a second is 409, a binding of a missing pod 404.
func TestPodBinding(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	expect(t, e.post(t, pods, pod("bind-me", "", nil)), http.StatusCreated)
	binding := func(name, node string) obj {
		return obj{"apiVersion": "v1", "kind": "Binding", "metadata": obj{"name": name}, "target": obj{"apiVersion": "v1", "kind": "Node", "name": node}}
	}
	ok := expect(t, e.post(t, pods+"/bind-me/binding", binding("bind-me", "conformance-node-a")), http.StatusCreated)
	if str(ok, "kind") != "Status" || str(ok, "status") != "Success" {
		t.Errorf("binding answered %s", compact(ok))
	}
	p := expect(t, e.get(t, pods+"/bind-me"), http.StatusOK)
	if str(p, "spec", "nodeName") != "conformance-node-a" {
		t.Errorf("bound pod's nodeName %q", str(p, "spec", "nodeName"))
	}
	conds, _ := field(p, "status", "conditions")
	scheduled := false
	for _, c := range conds.([]any) {
		if c := c.(map[string]any); c["type"] == "PodScheduled" && c["status"] == "True" {
			scheduled = true
		}
	}
	if !scheduled {
		t.Errorf("bound pod's conditions %s", compact(conds))
	}
	st := checkStatus(t, e.post(t, pods+"/bind-me/binding", binding("bind-me", "conformance-node-b")), http.StatusConflict, "Conflict",
		`Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "conformance-node-a"`)
	if str(st, "details", "kind") != "pods/binding" {
		t.Errorf("binding conflict details %s", compact(st["details"]))
	}
	checkStatus(t, e.post(t, "/api/v1/namespaces/"+ns+"/bindings", binding("nope", "conformance-node-a")), http.StatusNotFound, "NotFound", `pods "nope" not found`)
	expect(t, e.del(t, pods+"/bind-me", obj{"gracePeriodSeconds": 0}), http.StatusOK)
}

// TestEviction checks pods/eviction: a Pending pod is evicted whatever its
// budgets say, a name that is not the URL's is 400, a missing pod 404; a
// running pod whose PodDisruptionBudget allows no disruption is refused
// with 429 and a DisruptionBudget cause, one whose budget allows it is
// deleted.
func TestEviction(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	eviction := func(name string) obj {
		return obj{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": obj{"name": name, "namespace": ns}}
	}
	checkStatus(t, e.post(t, pods+"/nope/eviction", eviction("nope")), http.StatusNotFound, "NotFound", `pods "nope" not found`)
	expect(t, e.post(t, pods, pod("pending", "", map[string]string{"evict": "blocked"})), http.StatusCreated)
	checkStatus(t, e.post(t, pods+"/pending/eviction", eviction("other")), http.StatusBadRequest, "BadRequest", "name in URL does not match name in Eviction object")

	pdbs := "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets"
	pdb := func(name string, minAvailable int, label string) obj {
		return obj{"metadata": obj{"name": name}, "spec": obj{"minAvailable": minAvailable, "selector": obj{"matchLabels": obj{"evict": label}}}}
	}
	withBudgets := e.post(t, pdbs, pdb("block", 1, "blocked")).Code == http.StatusCreated
	if withBudgets {
		expect(t, e.post(t, pdbs, pdb("allow", 0, "ok")), http.StatusCreated)
	}
	for _, p := range []struct{ name, label string }{{"evict-ok", "ok"}, {"evict-blocked", "blocked"}} {
		expect(t, e.post(t, pods, pod(p.name, "", map[string]string{"evict": p.label})), http.StatusCreated)
		expect(t, e.patch(t, pods+"/"+p.name+"/status", mergePatch, `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`), http.StatusOK)
	}
	if withBudgets && !e.kapi(t) {
		// kube-controller-manager's disruption controller computes what
		// the budgets allow; the eviction reads it.
		for _, name := range []string{"block", "allow"} {
			e.waitCollection(t, pdbs+q("fieldSelector", "metadata.name="+name), "budget "+name+" observed with its pods", 30*time.Second,
				func(objs map[string]obj) bool {
					o, ok := objs[ns+"/"+name]
					n, _ := num(o, "status", "expectedPods")
					g, _ := num(o, "status", "observedGeneration")
					return ok && g >= 1 && n >= 1
				})
		}
	}
	ok := expect(t, e.post(t, pods+"/pending/eviction", eviction("pending")), http.StatusCreated)
	if str(ok, "status") != "Success" {
		t.Errorf("eviction answered %s", compact(ok))
	}
	checkStatus(t, e.get(t, pods+"/pending"), http.StatusNotFound, "NotFound", "")
	if !withBudgets {
		t.Log("PodDisruptionBudgets are not served here: the budget cases are skipped")
		return
	}
	st := checkStatus(t, e.post(t, pods+"/evict-blocked/eviction", eviction("evict-blocked")), http.StatusTooManyRequests, "TooManyRequests",
		"Cannot evict pod as it would violate the pod's disruption budget.")
	causes, _ := field(st, "details", "causes")
	if cs, _ := causes.([]any); len(cs) != 1 || cs[0].(map[string]any)["reason"] != "DisruptionBudget" ||
		cs[0].(map[string]any)["message"] != "The disruption budget block needs 1 healthy pods and has 1 currently" {
		t.Errorf("refused eviction causes %s", compact(causes))
	}
	expect(t, e.post(t, pods+"/evict-ok/eviction", eviction("evict-ok")), http.StatusCreated)
	checkStatus(t, e.get(t, pods+"/evict-ok"), http.StatusNotFound, "NotFound", "")
}

// TestServiceAccountToken checks serviceaccounts/token and TokenReview: a
// TokenRequest answers a JWT for the audiences asked (the API's by
// default) lasting expirationSeconds (at least 10 minutes), with the
// service account's identity in its claims; a TokenReview authenticates it
// for its audiences only, and a token bound to a pod only while the pod
// exists.
func TestServiceAccountToken(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	sa := "/api/v1/namespaces/" + ns + "/serviceaccounts/default"
	tr := expect(t, e.post(t, sa+"/token", obj{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": obj{"audiences": []any{"conformance-aud"}, "expirationSeconds": 3600}}), http.StatusCreated)
	if str(tr, "kind") != "TokenRequest" || str(tr, "metadata", "name") != "default" || str(tr, "status", "expirationTimestamp") == "" {
		t.Errorf("TokenRequest answered %s", compact(tr))
	}
	token := str(tr, "status", "token")
	claims := jwtClaims(t, token)
	if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != 3600 {
		t.Errorf("token lasts %v s, want 3600", exp-iat)
	}
	if claims["sub"] != "system:serviceaccount:"+ns+":default" || !slices.Equal(anyStrings(claims["aud"]), []string{"conformance-aud"}) {
		t.Errorf("token claims %s", compact(claims))
	}
	k8s, _ := claims["kubernetes.io"].(map[string]any)
	if k8s["namespace"] != ns || k8s["serviceaccount"].(map[string]any)["name"] != "default" || k8s["serviceaccount"].(map[string]any)["uid"] != str(tr, "metadata", "uid") {
		t.Errorf("token's kubernetes.io claim %s", compact(k8s))
	}
	checkStatus(t, e.post(t, sa+"/token", obj{"spec": obj{"expirationSeconds": 60}}), http.StatusUnprocessableEntity, "Invalid",
		"spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes")
	checkStatus(t, e.post(t, "/api/v1/namespaces/"+ns+"/serviceaccounts/nope/token", obj{"spec": obj{}}), http.StatusNotFound, "NotFound", `serviceaccounts "nope" not found`)

	review := func(token string, audiences ...string) obj {
		spec := obj{"token": token}
		if audiences != nil {
			spec["audiences"] = audiences
		}
		return expect(t, e.post(t, "/apis/authentication.k8s.io/v1/tokenreviews", obj{"spec": spec}), http.StatusCreated)
	}
	r := review(token, "conformance-aud")
	if a, _ := field(r, "status", "authenticated"); a != true || str(r, "status", "user", "username") != "system:serviceaccount:"+ns+":default" ||
		!slices.Equal(anyStrings(mustField(r, "status", "audiences")), []string{"conformance-aud"}) {
		t.Errorf("TokenReview answered %s", compact(r))
	}
	r = review(token)
	if has(r, "status", "authenticated") || !strings.Contains(str(r, "status", "error"), `token audiences ["conformance-aud"] is invalid for the target audiences`) {
		t.Errorf("TokenReview for the API audience answered %s", compact(r))
	}

	// The default: the API's audience, an hour.
	def := expect(t, e.post(t, sa+"/token", obj{"spec": obj{}}), http.StatusCreated)
	if n, _ := num(def, "spec", "expirationSeconds"); n != 3600 || len(anyStrings(mustField(def, "spec", "audiences"))) != 1 {
		t.Errorf("default TokenRequest answered %s", compact(def["spec"]))
	}
	if r := review(str(def, "status", "token")); mustField(r, "status", "authenticated") != true {
		t.Errorf("TokenReview of a default token answered %s", compact(r))
	}

	// Bound to a pod: good while the pod exists.
	p := expect(t, e.post(t, "/api/v1/namespaces/"+ns+"/pods", pod("holder", "", nil)), http.StatusCreated)
	bound := expect(t, e.post(t, sa+"/token", obj{"spec": obj{"boundObjectRef": obj{"apiVersion": "v1", "kind": "Pod", "name": "holder", "uid": str(p, "metadata", "uid")}}}), http.StatusCreated)
	btoken := str(bound, "status", "token")
	if pc, _ := jwtClaims(t, btoken)["kubernetes.io"].(map[string]any)["pod"].(map[string]any); pc["name"] != "holder" || pc["uid"] != str(p, "metadata", "uid") {
		t.Errorf("bound token's pod claim %s", compact(pc))
	}
	r = review(btoken)
	extra, _ := field(r, "status", "user", "extra")
	if ex, _ := extra.(map[string]any); !slices.Equal(anyStrings(ex["authentication.kubernetes.io/pod-name"]), []string{"holder"}) {
		t.Errorf("TokenReview of a pod-bound token answered %s", compact(r))
	}
	expect(t, e.del(t, "/api/v1/namespaces/"+ns+"/pods/holder", obj{"gracePeriodSeconds": 0}), http.StatusOK)
	// The authenticator of a real server reads pods from its cache: it
	// may take a moment to see the deletion.
	poll(t, e.within(30*time.Second), "the pod-bound token to be refused", func() bool {
		r := review(btoken)
		return !has(r, "status", "authenticated") && str(r, "status", "error") != ""
	})
}

func mustField(o obj, path ...string) any {
	v, _ := field(o, path...)
	return v
}

// jwtClaims decodes the claims of a JWT (without verifying it).
func jwtClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// TestNamespaceFinalize checks namespaces/finalize: a PUT replaces
// the namespace but its status (spec.finalizers validated); a namespace whose spec.finalizers are
// emptied is only marked Terminating by a delete, and removed by the next.
func TestNamespaceFinalize(t *testing.T) {
	t.Parallel()
	e := target
	name := "kapi-finalize-" + randomSuffix()
	path := "/api/v1/namespaces/" + name
	ns := expect(t, e.post(t, "/api/v1/namespaces", obj{"metadata": obj{"name": name}}), http.StatusCreated)
	t.Cleanup(func() { e.del(t, path, nil) })
	ns["spec"] = obj{"finalizers": []any{"kubernetes", "example.com/kapi"}}
	ns["metadata"].(map[string]any)["labels"].(map[string]any)["taken"] = "yes"
	ns["status"] = obj{"phase": "Terminating"}
	out := expect(t, e.put(t, path+"/finalize", ns), http.StatusOK)
	if got := anyStrings(mustField(out, "spec", "finalizers")); !slices.Equal(got, []string{"kubernetes", "example.com/kapi"}) ||
		str(out, "metadata", "labels", "taken") != "yes" || str(out, "status", "phase") != "Active" {
		t.Errorf("finalize answered %s", compact(out))
	}
	out["spec"] = obj{"finalizers": []any{"bad finalizer"}}
	st := checkStatus(t, e.put(t, path+"/finalize", out), http.StatusUnprocessableEntity, "Invalid", `spec.finalizers[0]: Invalid value: "bad finalizer"`)
	if causes, _ := field(st, "details", "causes"); len(causes.([]any)) != 2 {
		t.Errorf("causes %s", compact(causes))
	}
	out["spec"] = obj{"finalizers": []any{}}
	out = expect(t, e.put(t, path+"/finalize", out), http.StatusOK)
	if has(out, "spec", "finalizers") {
		t.Errorf("finalize with no finalizers answered %s", compact(out))
	}
	del := expect(t, e.del(t, path, nil), http.StatusOK)
	if str(del, "status", "phase") != "Terminating" || str(del, "metadata", "deletionTimestamp") == "" {
		t.Errorf("first delete answered %s", compact(del))
	}
	expect(t, e.get(t, path), http.StatusOK)
	again := expect(t, e.del(t, path, nil), http.StatusOK)
	if str(again, "kind") != "Namespace" {
		t.Errorf("second delete answered %s", compact(again))
	}
	checkStatus(t, e.get(t, path), http.StatusNotFound, "NotFound", "")
}

// TestPodConnect checks the kubelet subresources of a pod on no node: an
// empty log (204), and exec refused with 400 before any upgrade.
func TestPodConnect(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	expect(t, e.post(t, pods, pod("nonode", "", nil)), http.StatusCreated)
	r := e.get(t, pods+"/nonode/log")
	if r.Code != http.StatusNoContent || len(r.Body) != 0 {
		t.Errorf("log of a pod without a node:\n%s", r)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		checkStatus(t, e.do(t, method, pods+"/nonode/exec"+q("command", "ls", "stdout", "true"), nil), http.StatusBadRequest, "BadRequest",
			"pod nonode does not have a host assigned")
	}
	checkStatus(t, e.get(t, pods+"/missing/log"), http.StatusNotFound, "NotFound", `pods "missing" not found`)
}

// poll checks cond every 50 ms until it holds, failing the test after d:
// for a state no watch shows (an authenticator's cache).
func poll(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// TestPodEphemeralContainersAndResize checks pods/ephemeralcontainers (an
// ephemeral container added with its defaults; ports refused) and
// pods/resize (container resources changed, any other change dropped,
// requests above limits and QoS class changes refused).
func TestPodEphemeralContainersAndResize(t *testing.T) {
	t.Parallel()
	e := target
	ns := e.namespace(t)
	e.ensureDefaultServiceAccount(t, ns)
	pods := "/api/v1/namespaces/" + ns + "/pods"
	p := pod("debug", "", nil)
	p["spec"].(obj)["containers"].([]any)[0].(obj)["resources"] = obj{"limits": obj{"cpu": "200m", "memory": "128Mi"}, "requests": obj{"cpu": "100m", "memory": "64Mi"}}
	expect(t, e.post(t, pods, p), http.StatusCreated)
	path := pods + "/debug"
	if got := expect(t, e.get(t, path+"/ephemeralcontainers"), http.StatusOK); str(got, "kind") != "Pod" {
		t.Errorf("GET ephemeralcontainers answered %s", compact(got))
	}
	out := expect(t, e.patch(t, path+"/ephemeralcontainers", strategicPatch,
		`{"spec":{"ephemeralContainers":[{"name":"debugger","image":"busybox:1.36","command":["sh"],"targetContainerName":"app"}]}}`), http.StatusOK)
	ecs, _ := field(out, "spec", "ephemeralContainers")
	if l, _ := ecs.([]any); len(l) != 1 || l[0].(map[string]any)["terminationMessagePolicy"] != "File" || l[0].(map[string]any)["imagePullPolicy"] != "IfNotPresent" {
		t.Errorf("ephemeral containers %s", compact(ecs))
	}
	if g, _ := num(out, "metadata", "generation"); g != 2 {
		t.Errorf("generation %d after adding an ephemeral container", g)
	}
	checkStatus(t, e.patch(t, path+"/ephemeralcontainers", strategicPatch, `{"spec":{"ephemeralContainers":[{"name":"debugger2","image":"busybox:1.36","ports":[{"containerPort":80}]}]}}`),
		http.StatusUnprocessableEntity, "Invalid", "ports: Forbidden: cannot be set for an Ephemeral Container")

	resized := expect(t, e.patch(t, path+"/resize", strategicPatch,
		`{"spec":{"containers":[{"name":"app","image":"registry.k8s.io/pause:3.9","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"300m"}}}]}}`), http.StatusOK)
	c := mustField(resized, "spec", "containers").([]any)[0].(map[string]any)
	if c["image"] != "registry.k8s.io/pause:3.10" || compact(c["resources"]) != `{"limits":{"cpu":"300m","memory":"128Mi"},"requests":{"cpu":"150m","memory":"64Mi"}}` {
		t.Errorf("resized container %s", compact(c))
	}
	checkStatus(t, e.patch(t, path+"/resize", strategicPatch, `{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"300m"}}}]}}`),
		http.StatusUnprocessableEntity, "Invalid", `spec.containers[0].resources.requests: Invalid value: "500m": must be less than or equal to cpu limit of 300m`)
	checkStatus(t, e.patch(t, path+"/resize", strategicPatch,
		`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m","memory":"128Mi"},"limits":{"cpu":"200m","memory":"128Mi"}}}]}}`),
		http.StatusUnprocessableEntity, "Invalid", `spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing`)
}

// TestCSRApproval checks certificatesigningrequests/approval: a PUT takes
// the request's conditions (stamped with times), nothing else, and an
// Approved condition beside a Denied one is refused.
func TestCSRApproval(t *testing.T) {
	t.Parallel()
	e := target
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "kapi-approval"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	path := "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	name := "kapi-approval-" + randomSuffix()
	csr := expect(t, e.post(t, path, obj{"metadata": obj{"name": name}, "spec": obj{"request": base64.StdEncoding.EncodeToString(req),
		"signerName": "example.com/kapi", "usages": []any{"client auth"}}}), http.StatusCreated)
	t.Cleanup(func() { e.del(t, path+"/"+name, nil) })
	csr["status"] = obj{"conditions": []any{obj{"type": "Approved", "status": "True", "reason": "KapiApprove", "message": "by the conformance suite"}}}
	csr["spec"].(map[string]any)["signerName"] = "example.com/other"
	out := expect(t, e.put(t, path+"/"+name+"/approval", csr), http.StatusOK)
	conds, _ := field(out, "status", "conditions")
	cs, _ := conds.([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["type"] != "Approved" || cs[0].(map[string]any)["lastUpdateTime"] == nil || cs[0].(map[string]any)["lastTransitionTime"] == nil {
		t.Errorf("approval answered conditions %s", compact(conds))
	}
	if str(out, "spec", "signerName") != "example.com/kapi" {
		t.Errorf("approval changed the signer to %q", str(out, "spec", "signerName"))
	}
	out["status"].(map[string]any)["conditions"] = append(cs, obj{"type": "Denied", "status": "True", "reason": "KapiDeny"})
	checkStatus(t, e.put(t, path+"/"+name+"/approval", out), http.StatusUnprocessableEntity, "Invalid",
		"must specify at most one of: `conditions[{\"type\": \"Approved\"}]`, `conditions[{\"type\": \"Denied\"}]`")
}
