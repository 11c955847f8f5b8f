package client

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// These tests check the requests the typed client builds against a recording
// server, and apply the patches they send locally (json-patch) to check they
// mean what the caller meant; apply_test.go sends them to the reference
// server.

// patchServer answers every request with the pod it holds, after applying
// JSON and merge patches to it as the server would.
func patchServer(t *testing.T) (*recorder, *string) {
	t.Helper()
	current := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"test","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}`
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		// The recorder has read the body already; take it from the record.
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(current))
	})
	return rec, &current
}

func TestTypedPatchRequests(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			rec, current := patchServer(t)
			c := newTestClient(t, &Config{Host: rec.srv.URL, ContentType: enc.contentType})
			ctx := testContext(t)
			pods := For[corev1.Pod](c)

			cases := []struct {
				pt    PatchType
				patch string
				opts  metav1.PatchOptions
				sub   []string
				path  string
				query string
			}{
				{JSONPatchType, `[{"op":"replace","path":"/metadata/labels/app","value":"db"}]`, metav1.PatchOptions{}, nil,
					"/api/v1/namespaces/test/pods/p", ""},
				{MergePatchType, `{"metadata":{"labels":{"tier":"front"}}}`, metav1.PatchOptions{FieldManager: "me", DryRun: []string{metav1.DryRunAll}}, nil,
					"/api/v1/namespaces/test/pods/p", "dryRun=All&fieldManager=me"},
				{StrategicMergePatchType, `{"spec":{"containers":[{"name":"c","image":"nginx:1.28"}]}}`,
					metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict}, nil,
					"/api/v1/namespaces/test/pods/p", "fieldValidation=Strict"},
				{MergePatchType, `{"status":{"phase":"Running"}}`, metav1.PatchOptions{}, []string{"status"},
					"/api/v1/namespaces/test/pods/p/status", ""},
			}
			for i, tc := range cases {
				got, err := pods.Patch(ctx, "p", tc.pt, []byte(tc.patch), tc.opts, tc.sub...)
				if err != nil {
					t.Fatalf("Patch %s: %v", tc.pt, err)
				}
				if got.Name != "p" || got.Kind != "Pod" {
					t.Errorf("Patch %s answer %+v", tc.pt, got.ObjectMeta)
				}
				r := rec.all()[i]
				if r.Method != http.MethodPatch || r.Path != tc.path || r.RawQuery != tc.query {
					t.Errorf("Patch %s: %s %s?%s", tc.pt, r.Method, r.Path, r.RawQuery)
				}
				if ct := r.Header.Get("Content-Type"); ct != string(tc.pt) {
					t.Errorf("Patch %s sent Content-Type %q", tc.pt, ct)
				}
				if string(r.Body) != tc.patch {
					t.Errorf("Patch %s sent body %s", tc.pt, r.Body)
				}
				wantAccept := codec.MediaTypeJSON
				if enc.contentType == codec.MediaTypeProtobuf {
					wantAccept = acceptProtobuf
				}
				if a := r.Header.Get("Accept"); a != wantAccept {
					t.Errorf("Patch %s Accept %q", tc.pt, a)
				}
			}
			// The JSON and merge patches sent mean what they say.
			patched, err := jsonpatch.DecodePatch(rec.all()[0].Body)
			if err != nil {
				t.Fatal(err)
			}
			out, err := patched.Apply([]byte(*current))
			if err != nil || !strings.Contains(string(out), `"app":"db"`) {
				t.Errorf("JSON patch applies to %s: %v", out, err)
			}
			out, err = jsonpatch.MergePatch([]byte(*current), rec.all()[1].Body)
			if err != nil || !strings.Contains(string(out), `"tier":"front"`) || !strings.Contains(string(out), `"app":"web"`) {
				t.Errorf("merge patch applies to %s: %v", out, err)
			}
			if _, err := pods.Patch(ctx, "p", MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "a", "b"); err == nil {
				t.Error("two subresources accepted")
			}
			if _, err := pods.Patch(ctx, "", MergePatchType, []byte(`{}`), metav1.PatchOptions{}); err == nil {
				t.Error("empty name accepted")
			}
		})
	}
}

// Apply sends the object as an apply configuration: JSON (never protobuf)
// with kind and apiVersion, Content-Type application/apply-patch+yaml,
// fieldManager and an explicit force.
func TestTypedApplyRequests(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			rec, _ := patchServer(t)
			c := newTestClient(t, &Config{Host: rec.srv.URL, ContentType: enc.contentType})
			ctx := testContext(t)
			pods := For[corev1.Pod](c)
			cfg := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"owner": "alice"}}}
			if _, err := pods.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "alice"}); err != nil {
				t.Fatal(err)
			}
			if _, err := pods.ApplyStatus(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "other"}},
				metav1.ApplyOptions{FieldManager: "alice", Force: true, DryRun: []string{metav1.DryRunAll}}); err != nil {
				t.Fatal(err)
			}
			reqs := rec.all()
			r := reqs[0]
			if r.Method != http.MethodPatch || r.Path != "/api/v1/namespaces/test/pods/p" || r.RawQuery != "fieldManager=alice&force=false" {
				t.Errorf("apply: %s %s?%s", r.Method, r.Path, r.RawQuery)
			}
			if ct := r.Header.Get("Content-Type"); ct != codec.MediaTypeApplyPatch {
				t.Errorf("apply Content-Type %q", ct)
			}
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("apply body is not JSON (so not YAML either): %s", r.Body)
			}
			if body["kind"] != "Pod" || body["apiVersion"] != "v1" {
				t.Errorf("apply body lacks kind and apiVersion: %s", r.Body)
			}
			if !strings.HasPrefix(string(r.Body), `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","labels":{"owner":"alice"}}`) {
				t.Errorf("apply body %s", r.Body)
			}
			r = reqs[1]
			if r.Path != "/api/v1/namespaces/other/pods/p/status" || r.RawQuery != "dryRun=All&fieldManager=alice&force=true" {
				t.Errorf("apply status: %s?%s", r.Path, r.RawQuery)
			}
		})
	}
}

func TestEncodeJSON(t *testing.T) {
	tm := metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	cases := []struct {
		obj  any
		want string
	}{
		{&corev1.Pod{}, `{"kind":"Pod","apiVersion":"v1","metadata":{},"spec":{"containers":null},"status":{}}`},
		{&corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}}, `{"kind":"Pod","apiVersion":"v1","metadata":{},"spec":{"containers":null},"status":{}}`},
		{&Widget{}, `{"kind":"Pod","apiVersion":"v1","metadata":{},"spec":{},"status":{}}`},
		{&struct{ metav1.TypeMeta }{}, `{"kind":"Pod","apiVersion":"v1"}`},
		{map[string]any{"a": 1}, `{"a":1}`},
	}
	for _, tc := range cases {
		got, err := encodeJSON(tc.obj, tm)
		if err != nil || string(got) != tc.want {
			t.Errorf("encodeJSON(%T) = %s, %v; want %s", tc.obj, got, err, tc.want)
		}
	}
}
