package client

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	coordinationv1 "github.com/kapi-dev/kapi/api/coordination/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/golden"
)

// checkWire checks that the last request with method used the encoding: its
// body (for methods that send one) and the response.
func checkWire(t *testing.T, s *testServer, method, contentType string) {
	t.Helper()
	x := s.last(method)
	if x.Method == "" {
		t.Fatalf("no %s request seen", method)
	}
	if method == http.MethodPost || method == http.MethodPut {
		if x.ContentType != contentType {
			t.Errorf("%s %s: request Content-Type %q, want %q", method, x.Path, x.ContentType, contentType)
		}
	}
	if !strings.HasPrefix(x.RespContentType, contentType) {
		t.Errorf("%s %s: response Content-Type %q, want %q (Accept %q)", method, x.Path, x.RespContentType, contentType, x.Accept)
	}
}

func TestTypedPodLifecycle(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServer(t)
			ctx := testContext(t)
			pods := For[corev1.Pod](s.client(t, enc.contentType))

			created, err := pods.Create(ctx, newPod("web-0"), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			checkWire(t, s, http.MethodPost, enc.contentType)
			if created.UID == "" || created.ResourceVersion == "" || created.Namespace != "test" {
				t.Errorf("created pod lacks server fields: %+v", created.ObjectMeta)
			}
			if created.Kind != "Pod" || created.APIVersion != "v1" {
				t.Errorf("created TypeMeta = %+v, want Pod v1", created.TypeMeta)
			}
			if created.Status.Phase != corev1.PodPending {
				t.Errorf("created phase %q, want Pending", created.Status.Phase)
			}

			got, err := pods.Get(ctx, "web-0", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			checkWire(t, s, http.MethodGet, enc.contentType)
			if got.UID != created.UID || got.Spec.Containers[0].Image != "nginx:1.27" || got.Kind != "Pod" {
				t.Errorf("Get returned %+v", got)
			}

			// Update with the current resourceVersion, then with a stale one.
			got.Labels["tier"] = "front"
			updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			checkWire(t, s, http.MethodPut, enc.contentType)
			if updated.Labels["tier"] != "front" || updated.ResourceVersion == got.ResourceVersion {
				t.Errorf("Update returned labels %v rv %s (was %s)", updated.Labels, updated.ResourceVersion, got.ResourceVersion)
			}
			if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); !IsConflict(err) {
				t.Errorf("Update with stale resourceVersion: %v, want a Conflict", err)
			}

			// Status goes through the status subresource only.
			updated.Status.Phase = corev1.PodRunning
			updated.Status.PodIP = "10.0.0.7"
			st, err := pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("UpdateStatus: %v", err)
			}
			if st.Status.Phase != corev1.PodRunning || st.Status.PodIP != "10.0.0.7" {
				t.Errorf("UpdateStatus returned status %+v", st.Status)
			}
			var viaSub corev1.Pod
			if err := pods.GetSubresource(ctx, "web-0", "status", &viaSub, metav1.GetOptions{}); err != nil {
				t.Fatalf("GetSubresource(status): %v", err)
			}
			if viaSub.Status.PodIP != "10.0.0.7" || viaSub.Kind != "Pod" {
				t.Errorf("status subresource: %+v", viaSub.Status)
			}

			// Delete with a failing precondition, then for real.
			wrongUID := metav1.UID("not-the-uid")
			err = pods.Delete(ctx, "web-0", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
			if !IsConflict(err) {
				t.Errorf("Delete with wrong uid precondition: %v, want a Conflict", err)
			}
			if err := pods.Delete(ctx, "web-0", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if _, err := pods.Get(ctx, "web-0", metav1.GetOptions{}); !IsNotFound(err) {
				t.Errorf("Get after Delete: %v, want NotFound", err)
			}
		})
	}
}

func TestTypedListAndDeleteCollection(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServer(t)
			ctx := testContext(t)
			pods := For[corev1.Pod](s.client(t, enc.contentType))
			for i, name := range []string{"a", "b", "c", "d"} {
				p := newPod(name)
				if i%2 == 1 {
					p.Labels["app"] = "db"
				}
				if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			checkWire(t, s, http.MethodGet, enc.contentType)
			var names []string
			for _, p := range list.Items {
				names = append(names, p.Name)
				if p.Kind != "Pod" || p.APIVersion != "v1" {
					t.Errorf("item %s TypeMeta %+v", p.Name, p.TypeMeta)
				}
			}
			if !slices.Equal(names, []string{"a", "c"}) {
				t.Errorf("List app=web = %v, want [a c]", names)
			}
			if list.Kind != "PodList" || list.APIVersion != "v1" || list.ResourceVersion == "" {
				t.Errorf("list header %+v %+v", list.TypeMeta, list.ListMeta)
			}

			// Pages, item by item.
			var seen []string
			meta, err := pods.ListEach(ctx, metav1.ListOptions{Limit: 3}, func(p *corev1.Pod) error {
				seen = append(seen, p.Name)
				return nil
			})
			if err != nil {
				t.Fatalf("ListEach: %v", err)
			}
			if len(seen) != 3 || meta.Continue == "" {
				t.Fatalf("first page %v continue %q", seen, meta.Continue)
			}
			if _, err := pods.ListEach(ctx, metav1.ListOptions{Limit: 3, Continue: meta.Continue}, func(p *corev1.Pod) error {
				seen = append(seen, p.Name)
				return nil
			}); err != nil {
				t.Fatalf("ListEach page 2: %v", err)
			}
			if !slices.Equal(seen, []string{"a", "b", "c", "d"}) {
				t.Errorf("pages = %v", seen)
			}

			// An error from the callback stops the list.
			stop := errors.New("stop")
			n := 0
			if _, err := pods.ListEach(ctx, metav1.ListOptions{}, func(*corev1.Pod) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
				t.Errorf("ListEach with failing callback: %v after %d items", err, n)
			}

			if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=db"}); err != nil {
				t.Fatalf("DeleteCollection: %v", err)
			}
			list, err = pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 2 {
				t.Errorf("after DeleteCollection app=db: %d pods, want 2", len(list.Items))
			}
		})
	}
}

func TestTypedBuiltinKinds(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			s := newTestServer(t)
			ctx := testContext(t)
			c := s.client(t, enc.contentType)

			// Cluster-scoped: the client's namespace is ignored.
			node, err := For[corev1.Node](c).Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create node: %v", err)
			}
			if node.Namespace != "" || node.Kind != "Node" {
				t.Errorf("node %+v", node.ObjectMeta)
			}
			if x := s.last(http.MethodPost); x.Path != "/api/v1/nodes" {
				t.Errorf("node created at %s", x.Path)
			}

			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"k": "v"},
				BinaryData: map[string][]byte{"bin": {0, 1, 2}}}
			gotCM, err := For[corev1.ConfigMap](c).Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create configmap: %v", err)
			}
			if !maps.Equal(gotCM.Data, cm.Data) || string(gotCM.BinaryData["bin"]) != "\x00\x01\x02" {
				t.Errorf("configmap data %v %v", gotCM.Data, gotCM.BinaryData)
			}

			replicas := int32(2)
			dep := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.DeploymentSpec{
					Replicas: &replicas,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
					},
				},
			}
			deps := For[appsv1.Deployment](c)
			gotDep, err := deps.Create(ctx, dep, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create deployment: %v", err)
			}
			checkWire(t, s, http.MethodPost, enc.contentType)
			if gotDep.Generation != 1 || gotDep.APIVersion != "apps/v1" || *gotDep.Spec.Replicas != 2 {
				t.Errorf("deployment %+v %+v", gotDep.TypeMeta, gotDep.ObjectMeta)
			}
			if x := s.last(http.MethodPost); x.Path != "/apis/apps/v1/namespaces/test/deployments" {
				t.Errorf("deployment created at %s", x.Path)
			}

			holder := "me"
			lease, err := For[coordinationv1.Lease](c).Namespace("test").Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "lock"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create lease: %v", err)
			}
			if *lease.Spec.HolderIdentity != "me" || lease.APIVersion != "coordination.k8s.io/v1" {
				t.Errorf("lease %+v", lease)
			}
		})
	}
}

func TestTypedErrors(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			pods := For[corev1.Pod](s.client(t, enc.contentType))
			if _, err := pods.Get(ctx, "missing", metav1.GetOptions{}); !IsNotFound(err) || err.Error() != `pods "missing" not found` {
				t.Errorf("Get missing: %v", err)
			}
			if _, err := pods.Create(ctx, newPod("dup-"+enc.name), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := pods.Create(ctx, newPod("dup-"+enc.name), metav1.CreateOptions{}); !IsAlreadyExists(err) {
				t.Errorf("duplicate Create: %v", err)
			}
			bad := newPod("bad-" + enc.name)
			bad.Spec.Containers = nil
			_, err := pods.Create(ctx, bad, metav1.CreateOptions{})
			if !IsInvalid(err) {
				t.Fatalf("invalid Create: %v", err)
			}
			var se *StatusError
			if !errors.As(err, &se) || se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) == 0 ||
				se.ErrStatus.Details.Causes[0].Field != "spec.containers" {
				t.Errorf("invalid Create details: %+v", se)
			}
			if _, err := pods.Namespace("nope").Create(ctx, newPod("x"), metav1.CreateOptions{}); !IsNotFound(err) {
				t.Errorf("Create in missing namespace: %v", err)
			}
			if _, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "a in (b"}); !IsBadRequest(err) {
				t.Errorf("List with bad selector: %v", err)
			}
			if _, err := pods.Get(ctx, "", metav1.GetOptions{}); err == nil || IsNotFound(err) {
				t.Errorf("Get with empty name: %v", err)
			}
			if _, err := pods.Get(ctx, "a/b", metav1.GetOptions{}); err == nil {
				t.Errorf("Get with a / in the name succeeded")
			}
			if _, err := pods.Namespace("").Get(ctx, "x", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "namespaced") {
				t.Errorf("Get without namespace: %v", err)
			}
			// Dry run: validated and answered, not stored.
			if _, err := pods.Create(ctx, newPod("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatalf("dry-run Create: %v", err)
			}
			if _, err := pods.Get(ctx, "dry", metav1.GetOptions{}); !IsNotFound(err) {
				t.Errorf("dry-run Create stored the pod: %v", err)
			}
		})
	}
}

// A type nobody registered gets an error, not a panic.
func TestTypedNotRegistered(t *testing.T) {
	type Unregistered struct {
		metav1.TypeMeta
		metav1.ObjectMeta
	}
	c := newTestClient(t, &Config{Host: "http://127.0.0.1:1"})
	_, err := For[Unregistered](c).Get(testContext(t), "x", metav1.GetOptions{})
	var nr *NotRegisteredError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "client.Register") {
		t.Fatalf("Get of unregistered type: %v", err)
	}
}

// The typed client sends what client-go sends: paths, query options, the
// DeleteOptions body, and kind and apiVersion in JSON bodies.
func TestTypedRequestShape(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestClient(t, &Config{Host: rec.srv.URL, Namespace: "ns1"})
	ctx := testContext(t)
	pods := For[corev1.Pod](c)
	grace := int64(0)
	policy := metav1.DeletePropagationForeground
	rv := "42"
	_ = pods.Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: &grace, PropagationPolicy: &policy,
		Preconditions: &metav1.Preconditions{ResourceVersion: &rv}, DryRun: []string{metav1.DryRunAll}})
	_ = pods.Namespace("").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"})
	_, _ = pods.Create(ctx, newPod("p2"), metav1.CreateOptions{FieldManager: "me", DryRun: []string{metav1.DryRunAll}})
	_, _ = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=n1", Limit: 10, ResourceVersion: "0"})

	reqs := rec.all()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	want := []struct{ method, path, query, body string }{
		{"DELETE", "/api/v1/namespaces/ns1/pods/p1", "",
			`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"resourceVersion":"42"},"propagationPolicy":"Foreground","dryRun":["All"]}`},
		{"DELETE", "/api/v1/pods", "labelSelector=app%3Dweb", `{"kind":"DeleteOptions","apiVersion":"v1"}`},
		{"POST", "/api/v1/namespaces/ns1/pods", "dryRun=All&fieldManager=me", ""},
		{"GET", "/api/v1/namespaces/ns1/pods", "fieldSelector=spec.nodeName%3Dn1&limit=10&resourceVersion=0", ""},
	}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.Path != w.path || r.RawQuery != w.query {
			t.Errorf("request %d: %s %s?%s, want %s %s?%s", i, r.Method, r.Path, r.RawQuery, w.method, w.path, w.query)
		}
		if w.body != "" && string(r.Body) != w.body {
			t.Errorf("request %d body:\n got %s\nwant %s", i, r.Body, w.body)
		}
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "kapi/") {
			t.Errorf("request %d User-Agent %q", i, ua)
		}
	}
	if body := string(reqs[2].Body); !strings.HasPrefix(body, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p2"`) {
		t.Errorf("create body %s", body)
	}
	if reqs[2].Header.Get("Content-Type") != codec.MediaTypeJSON || reqs[2].Header.Get("Accept") != codec.MediaTypeJSON {
		t.Errorf("create headers %v", reqs[2].Header)
	}
}

// Protobuf negotiation: Accept offers protobuf then JSON, bodies are
// protobuf envelopes; a kind without its own protobuf methods stays JSON.
func TestTypedProtobufNegotiation(t *testing.T) {
	rec := newRecorder(t, nil)
	c := newTestClient(t, &Config{Host: rec.srv.URL, ContentType: codec.MediaTypeProtobuf})
	ctx := testContext(t)
	_, _ = For[corev1.Pod](c).Create(ctx, newPod("p"), metav1.CreateOptions{})
	_, _ = For[Widget](c.WithScheme(widgetScheme(t))).Create(ctx, &Widget{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{})
	reqs := rec.all()
	if got := reqs[0].Header.Get("Accept"); got != "application/vnd.kubernetes.protobuf, application/json" {
		t.Errorf("pod Accept %q", got)
	}
	if got := reqs[0].Header.Get("Content-Type"); got != codec.MediaTypeProtobuf {
		t.Errorf("pod Content-Type %q", got)
	}
	var pod corev1.Pod
	tm, err := codec.UnmarshalProtobuf(reqs[0].Body, &pod)
	if err != nil || tm.Kind != "Pod" || tm.APIVersion != "v1" || pod.Name != "p" {
		t.Errorf("pod body: %v %+v %q", err, tm, pod.Name)
	}
	if got := reqs[1].Header.Get("Accept"); got != codec.MediaTypeJSON {
		t.Errorf("widget Accept %q", got)
	}
	if got := reqs[1].Header.Get("Content-Type"); got != codec.MediaTypeJSON {
		t.Errorf("widget Content-Type %q", got)
	}
}

// scale is the autoscaling/v1 Scale of a subresource, as a user would
// declare it (kapi ships no autoscaling types).
type scale struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas int32 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas int32  `json:"replicas"`
		Selector string `json:"selector,omitempty"`
	} `json:"status"`
}

// Subresources of another kind (scale) are read and written as JSON into
// the caller's type. The reference server does not serve /scale yet (it
// answers 404), so the golden capture of kube-apiserver's answer stands in.
func TestTypedScaleSubresource(t *testing.T) {
	x, err := golden.Load("27-get-scale-deployment")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(x.ResponseBody)
	})
	c := newTestClient(t, &Config{Host: rec.srv.URL, Namespace: "golden", ContentType: codec.MediaTypeProtobuf})
	ctx := testContext(t)
	deps := For[appsv1.Deployment](c)
	var sc scale
	if err := deps.GetSubresource(ctx, "web", "scale", &sc, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if sc.Kind != "Scale" || sc.APIVersion != "autoscaling/v1" || sc.Spec.Replicas != 3 || sc.Status.Selector != "app=web" {
		t.Errorf("scale %+v", sc)
	}
	sc.Spec.Replicas = 5
	var out scale
	if err := deps.UpdateSubresource(ctx, "web", "scale", &sc, &out, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if r := reqs[0]; r.Method != http.MethodGet || r.Path != "/apis/apps/v1/namespaces/golden/deployments/web/scale" ||
		r.Header.Get("Accept") != codec.MediaTypeJSON {
		t.Errorf("get scale: %s %s Accept %q", r.Method, r.Path, r.Header.Get("Accept"))
	}
	r := reqs[1]
	if r.Method != http.MethodPut || r.Path != "/apis/apps/v1/namespaces/golden/deployments/web/scale" ||
		r.Header.Get("Content-Type") != codec.MediaTypeJSON || !strings.Contains(string(r.Body), `"spec":{"replicas":5}`) {
		t.Errorf("update scale: %s %s %q %s", r.Method, r.Path, r.Header.Get("Content-Type"), r.Body)
	}
	if out.Spec.Replicas != 3 { // what the stand-in answers
		t.Errorf("update answer %+v", out)
	}

	// What the reference server answers today.
	s := newTestServer(t)
	err = For[appsv1.Deployment](s.client(t, codec.MediaTypeJSON)).GetSubresource(ctx, "web", "scale", &sc, metav1.GetOptions{})
	if !IsNotFound(err) {
		t.Errorf("reference server /scale: %v", err)
	}
}
