package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// TestMetadataClient drives every method of the metadata client against the
// reference server, in JSON and protobuf, checking what goes on the wire.
func TestMetadataClient(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			srv := newTestServer(t)
			ctx := testContext(t)
			c := srv.client(t, enc.contentType)
			cms := For[corev1.ConfigMap](c)
			created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"},
				Annotations: map[string]string{"note": "n"}, Finalizers: []string{"example.com/f"}}, Data: map[string]string{"big": strings.Repeat("x", 1000)}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			meta := Metadata(c).Resource(configMapsGVR).Namespace("test")

			got, err := meta.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantType := enc.contentType
			if ex := srv.last("GET"); ex.RespContentType != wantType || !strings.Contains(ex.Accept, "as=PartialObjectMetadata;") {
				t.Errorf("get: Accept %q answered in %q, want %q", ex.Accept, ex.RespContentType, wantType)
			}
			if got.TypeMeta != partialTypeMeta || got.Name != "a" || got.UID != created.UID || got.ResourceVersion != created.ResourceVersion ||
				got.Labels["x"] != "y" || got.Annotations["note"] != "n" || len(got.Finalizers) != 1 || len(got.ManagedFields) == 0 {
				t.Errorf("Get: %+v", got)
			}

			list, err := meta.List(ctx, metav1.ListOptions{LabelSelector: "x=y"})
			if err != nil {
				t.Fatal(err)
			}
			if ex := srv.last("GET"); ex.RespContentType != wantType || !strings.Contains(ex.Accept, "as=PartialObjectMetadataList;") {
				t.Errorf("list: Accept %q answered in %q, want %q", ex.Accept, ex.RespContentType, wantType)
			}
			if list.Kind != "PartialObjectMetadataList" || list.ResourceVersion == "" || len(list.Items) != 1 || list.Items[0].Name != "a" || list.Items[0].TypeMeta != partialTypeMeta {
				t.Errorf("List: %+v", list)
			}

			w, err := meta.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			p, err := meta.Patch(ctx, "a", MergePatchType, []byte(`{"metadata":{"labels":{"x":"z"},"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Labels["x"] != "z" || len(p.Finalizers) != 0 || p.TypeMeta != partialTypeMeta {
				t.Errorf("Patch: %+v", p)
			}
			wrong := metav1.UID("wrong")
			if err := meta.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrong}}); !IsConflict(err) {
				t.Errorf("Delete with a wrong uid: %v, want a Conflict", err)
			}
			if ex := srv.last("DELETE"); ex.ContentType != enc.contentType {
				t.Errorf("Delete sent DeleteOptions in %q, want %q", ex.ContentType, enc.contentType)
			}
			if err := meta.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, want := range []EventType{EventModified, EventDeleted} {
				select {
				case ev := <-w.ResultChan():
					if ev.Type != want || ev.Object == nil || ev.Object.Name != "a" || ev.Object.TypeMeta != partialTypeMeta {
						t.Fatalf("event %v %+v, want %s of a", ev.Type, ev.Object, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("no %s event", want)
				}
			}

			for _, n := range []string{"b", "c"} {
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"x": "y"}}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := meta.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "x=y"}); err != nil {
				t.Fatal(err)
			}
			if l, err := meta.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
				t.Errorf("after DeleteCollection: %v, %v", l, err)
			}
			if _, err := meta.Get(ctx, "a", metav1.GetOptions{}); !IsNotFound(err) {
				t.Errorf("Get of a deleted object: %v, want NotFound", err)
			}
		})
	}
}

// TestMetadataClientFallback: against a server that cannot convert objects
// to their metadata (it serves only the whole objects, as the Accept
// header's last entry allows), the client keeps the metadata of the whole
// objects.
func TestMetadataClientFallback(t *testing.T) {
	srv := newTestServer(t)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Accept", codec.MediaTypeJSON) // a server without the conversions
		srv.http.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(plain.Close)
	ctx := testContext(t)
	for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		c := newTestClient(t, &Config{Host: plain.URL, ContentType: ct})
		if _, err := For[corev1.ConfigMap](c).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "f" + ct[len(ct)-4:], Labels: map[string]string{"f": "b"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		meta := Metadata(c).Resource(configMapsGVR).Namespace("test")
		list, err := meta.List(ctx, metav1.ListOptions{LabelSelector: "f=b"})
		if err != nil || len(list.Items) == 0 || list.Items[len(list.Items)-1].Labels["f"] != "b" || list.Items[0].TypeMeta != partialTypeMeta {
			t.Fatalf("%s List: %+v, %v", ct, list, err)
		}
		got, err := meta.Get(ctx, list.Items[0].Name, metav1.GetOptions{})
		if err != nil || got.Labels["f"] != "b" || got.TypeMeta != partialTypeMeta {
			t.Fatalf("%s Get: %+v, %v", ct, got, err)
		}
		wctx, cancel := context.WithCancel(ctx)
		w, err := meta.Watch(wctx, metav1.ListOptions{LabelSelector: "f=b"})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		ev := <-w.ResultChan()
		cancel()
		if ev.Type != EventAdded || ev.Object == nil || ev.Object.Labels["f"] != "b" {
			t.Fatalf("%s Watch: %+v", ct, ev)
		}
	}
}
