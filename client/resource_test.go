package client

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	policyv1 "github.com/kapi-dev/kapi/api/policy/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/codec"
)

// decodedBy lists and watches (from resourceVersion 1) the ConfigMaps of
// namespace "test" with r, and returns the objects of each, in order.
func decodedBy[T any, PT ObjectPtr[T]](t *testing.T, r Reader[T], want int) (listed, watched []PT) {
	t.Helper()
	ctx := testContext(t)
	if _, err := r.ListEach(ctx, metav1.ListOptions{}, func(o *T) error {
		listed = append(listed, o)
		return nil
	}); err != nil {
		t.Fatalf("ListEach: %v", err)
	}
	w, err := r.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()
	for len(watched) < want {
		ev := next(t, w)
		if ev.Type != EventAdded {
			t.Fatalf("watch event %s: %v", ev.Type, ev.Err)
		}
		watched = append(watched, ev.Object)
	}
	if len(listed) != want {
		t.Fatalf("listed %d objects, want %d", len(listed), want)
	}
	return listed, watched
}

// checkDecoded checks what the decode options did to objects a and b,
// which the server stores with equal managedFields.
func checkDecoded[T any, PT ObjectPtr[T]](t *testing.T, what string, objs []PT, o codec.DecodeOptions, shares bool) {
	t.Helper()
	a, b := objs[0].GetManagedFields(), objs[1].GetManagedFields()
	if o.SkipManagedFields {
		if len(a) != 0 || len(b) != 0 {
			t.Errorf("%s with SkipManagedFields: managedFields %v %v, want none", what, a, b)
		}
		return
	}
	if len(a) == 0 || len(b) == 0 || a[0].FieldsV1 == nil || b[0].FieldsV1 == nil {
		t.Fatalf("%s: managedFields %v %v, want some", what, a, b)
	}
	ra, rb := a[0].FieldsV1.Raw, b[0].FieldsV1.Raw
	if string(ra) != string(rb) {
		t.Fatalf("%s: fieldsV1 %s and %s differ; the test wants them equal", what, ra, rb)
	}
	if shared := &ra[0] == &rb[0]; shared != (o.ShareFieldsV1 && shares) {
		t.Errorf("%s with %+v: the two objects share their fieldsV1 bytes: %v", what, o, shared)
	}
}

// WithDecodeOptions reaches the decoder of the lists and watches of every
// kind of resource, and leaves the resource it derives from as it was.
func TestWithDecodeOptions(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	for _, name := range []string{"a", "b"} {
		if _, err := For[corev1.ConfigMap](s.client(t, codec.MediaTypeJSON)).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{FieldManager: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	options := []codec.DecodeOptions{{}, {SkipManagedFields: true}, {ShareFieldsV1: true}}
	for _, enc := range encodings {
		c := s.client(t, enc.contentType)
		typed := For[corev1.ConfigMap](c)
		dynamic := Dynamic(c).Resource(configMapsGVR).Namespace("test")
		meta := Metadata(c).Resource(configMapsGVR).Namespace("test")
		for _, o := range options {
			t.Run(fmt.Sprintf("%s/%+v", enc.name, o), func(t *testing.T) {
				checkDecodeOptions(t, "typed", typed.WithDecodeOptions(o), o, true)
				// Unstructured objects hold their fields in maps: nothing
				// to share.
				checkDecodeOptions(t, "dynamic", dynamic.WithDecodeOptions(o), o, false)
				checkDecodeOptions(t, "metadata", meta.WithDecodeOptions(o), o, true)
			})
		}
		// The resources the options were set on decode as before.
		checkDecodeOptions(t, enc.name+" typed after WithDecodeOptions", typed, codec.DecodeOptions{}, true)
		checkDecodeOptions(t, enc.name+" metadata after WithDecodeOptions", meta, codec.DecodeOptions{}, true)
	}
}

// checkDecodeOptions checks that r's lists and watches decoded with o.
func checkDecodeOptions[T any, PT ObjectPtr[T]](t *testing.T, what string, r Reader[T], o codec.DecodeOptions, shares bool) {
	t.Helper()
	listed, watched := decodedBy[T, PT](t, r, 2)
	checkDecoded(t, what+" list", listed, o, shares)
	checkDecoded(t, what+" watch", watched, o, shares)
}

// resourceCalls makes every request of a Resource, obj naming an object in
// namespace "other", and returns the errors.
func resourceCalls[T any](ctx context.Context, r Resource[T], obj *T) []error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	_, err := r.Get(ctx, "a", metav1.GetOptions{ResourceVersion: "0"})
	add(err)
	_, err = r.List(ctx, metav1.ListOptions{LabelSelector: "x=y"})
	add(err)
	_, err = r.ListEach(ctx, metav1.ListOptions{Limit: 2}, func(*T) error { return nil })
	add(err)
	w, err := r.Watch(ctx, metav1.ListOptions{ResourceVersion: "5"})
	if err == nil {
		w.Stop()
	}
	add(err)
	_, err = r.Create(ctx, obj, metav1.CreateOptions{FieldManager: "m"})
	add(err)
	_, err = r.Update(ctx, obj, metav1.UpdateOptions{})
	add(err)
	_, err = r.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	add(err)
	_, err = r.Patch(ctx, "a", MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status")
	add(err)
	_, err = r.Apply(ctx, obj, metav1.ApplyOptions{FieldManager: "m"})
	add(err)
	_, err = r.ApplyStatus(ctx, obj, metav1.ApplyOptions{FieldManager: "m", Force: true})
	add(err)
	add(r.Delete(ctx, "a", metav1.DeleteOptions{}))
	add(r.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "x=y"}))
	var scale map[string]any
	add(r.GetSubresource(ctx, "a", "scale", &scale, metav1.GetOptions{}))
	var out T
	add(r.UpdateSubresource(ctx, "a", "status", obj, &out, metav1.UpdateOptions{}))
	add(r.CreateSubresource(ctx, "a", "eviction", &policyv1.Eviction{}, nil, metav1.CreateOptions{DryRun: []string{"All"}}))
	return errs
}

// The typed and dynamic clients make the same requests for the same verbs:
// paths, namespaces (the object's before the client's), parameters and
// media types. (Their bodies differ only in form.)
func TestTypedAndDynamicRequestsAgree(t *testing.T) {
	const object = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"other"}}`
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") == "true":
			// An empty stream: the watch ends at once.
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps"):
			_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"7"},"items":[` + object + `]}`))
		case r.Method == http.MethodDelete || strings.HasSuffix(r.URL.Path, "/eviction"):
			_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"Status","status":"Success"}`))
		default:
			_, _ = w.Write([]byte(object))
		}
	})
	c := newTestClient(t, &Config{Host: rec.srv.URL})
	ctx := testContext(t)

	typedErrs := resourceCalls(ctx, For[corev1.ConfigMap](c),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "other"}})
	typedReqs := rec.all()
	dynErrs := resourceCalls(ctx, Dynamic(c).Resource(configMapsGVR).Namespace("test"),
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "namespace": "other"}}})
	dynReqs := rec.all()[len(typedReqs):]
	for i := range typedErrs {
		if typedErrs[i] != nil || dynErrs[i] != nil {
			t.Errorf("call %d: typed %v, dynamic %v", i, typedErrs[i], dynErrs[i])
		}
	}

	const ns, other = "/api/v1/namespaces/test/configmaps", "/api/v1/namespaces/other/configmaps"
	want := []struct{ method, path, query, contentType, accept string }{
		{"GET", ns + "/a", "resourceVersion=0", "", "application/json"},
		{"GET", ns, "labelSelector=x%3Dy", "", "application/json"},
		{"GET", ns, "limit=2", "", "application/json"},
		{"GET", ns, "resourceVersion=5&watch=true", "", "application/json"},
		{"POST", other, "fieldManager=m", "application/json", "application/json"},
		{"PUT", other + "/a", "", "application/json", "application/json"},
		{"PUT", other + "/a/status", "", "application/json", "application/json"},
		{"PATCH", ns + "/a/status", "", codec.MediaTypeMergePatch, "application/json"},
		{"PATCH", other + "/a", "fieldManager=m&force=false", codec.MediaTypeApplyPatch, "application/json"},
		{"PATCH", other + "/a/status", "fieldManager=m&force=true", codec.MediaTypeApplyPatch, "application/json"},
		{"DELETE", ns + "/a", "", "application/json", "application/json"},
		{"DELETE", ns, "labelSelector=x%3Dy", "application/json", "application/json"},
		{"GET", ns + "/a/scale", "", "", "application/json"},
		{"PUT", ns + "/a/status", "", "application/json", "application/json"},
		{"POST", ns + "/a/eviction", "dryRun=All", "application/json", "application/json"},
	}
	if len(typedReqs) != len(want) || len(dynReqs) != len(want) {
		t.Fatalf("%d typed and %d dynamic requests, want %d each", len(typedReqs), len(dynReqs), len(want))
	}
	for i, w := range want {
		for _, side := range []struct {
			name string
			r    recordedRequest
		}{{"typed", typedReqs[i]}, {"dynamic", dynReqs[i]}} {
			r := side.r
			got := []string{r.Method, r.Path, r.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("Accept")}
			if exp := []string{w.method, w.path, w.query, w.contentType, w.accept}; !reflect.DeepEqual(got, exp) {
				t.Errorf("%s request %d: %q, want %q", side.name, i, got, exp)
			}
		}
	}
}

// Subresources that take an object of another kind (an eviction, a token
// request) go through CreateSubresource, in JSON whatever the client's
// encoding; a *T result of UpdateSubresource decodes as the resource's
// objects do.
func TestCreateSubresource(t *testing.T) {
	s := newTestServer(t)
	ctx := testContext(t)
	c := s.client(t, codec.MediaTypeProtobuf)
	pods := For[corev1.Pod](c)
	if _, err := pods.Create(ctx, newPod("p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &policyv1.Eviction{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "test"}}
	var st metav1.Status
	if err := pods.CreateSubresource(ctx, "p", "eviction", ev, &st, metav1.CreateOptions{}); err != nil {
		t.Fatalf("eviction: %v", err)
	}
	if x := s.last(http.MethodPost); x.Path != "/api/v1/namespaces/test/pods/p/eviction" || x.ContentType != codec.MediaTypeJSON {
		t.Errorf("eviction went to %s in %q", x.Path, x.ContentType)
	}
	if _, err := pods.Get(ctx, "p", metav1.GetOptions{}); !IsNotFound(err) {
		t.Errorf("pod after its eviction: %v, want NotFound", err)
	}

	sas := Dynamic(c).Resource(GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}).Namespace("test")
	sa := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "robot"}}}
	if _, err := sas.Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var tr map[string]any
	if err := sas.CreateSubresource(ctx, "robot", "token", map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": map[string]any{"audiences": []any{"aud"}}}, &tr, metav1.CreateOptions{}); err != nil {
		t.Fatalf("token: %v", err)
	}
	if tok, _, _ := unstructured.NestedString(tr, "status", "token"); tok == "" {
		t.Errorf("token request answered %v", tr)
	}
	if err := sas.CreateSubresource(ctx, "robot", "", nil, nil, metav1.CreateOptions{}); err == nil {
		t.Error("a subresource request without a subresource was sent")
	}
}

// The items of a typed list carry no kind: the dynamic client gives them
// the list's, and leaves the kind of items that have one. A null item is an
// empty object, as in Kubernetes.
func TestDynamicListItemKinds(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"9","continue":"c"},"items":[` +
			`{"metadata":{"name":"a"}},{"kind":"Gadget","apiVersion":"example.com/v2","metadata":{"name":"b"}},null]}`))
	})
	widgets := Dynamic(newTestClient(t, &Config{Host: rec.srv.URL})).Resource(widgetsGVR)
	list, err := widgets.List(testContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Kind != "WidgetList" || list.APIVersion != "example.com/v1" || list.ResourceVersion != "9" || list.Continue != "c" || len(list.Items) != 3 {
		t.Fatalf("list %+v", list)
	}
	for i, want := range [][2]string{{"Widget", "example.com/v1"}, {"Gadget", "example.com/v2"}, {"Widget", "example.com/v1"}} {
		if it := list.Items[i]; it.GetKind() != want[0] || it.GetAPIVersion() != want[1] {
			t.Errorf("item %d: kind %q apiVersion %q, want %q", i, it.GetKind(), it.GetAPIVersion(), want)
		}
	}
}
