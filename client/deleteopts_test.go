package client

import (
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// TestDeleteOptionsEncoding: the typed client sends DeleteOptions in the
// encoding of its objects, protobuf included (as client-go does), and the
// server honours every option so sent, on delete and deletecollection.
func TestDeleteOptionsEncoding(t *testing.T) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			srv := newTestServer(t)
			ctx := testContext(t)
			cms := For[corev1.ConfigMap](srv.client(t, enc.contentType))
			for _, name := range []string{"a", "b"} {
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"x": "y"}}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			wrong := metav1.UID("wrong")
			err := cms.Delete(ctx, "a", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrong}})
			if !IsConflict(err) {
				t.Fatalf("Delete with a wrong uid: %v, want a Conflict", err)
			}
			if got := srv.last("DELETE").ContentType; got != enc.contentType {
				t.Errorf("Delete sent Content-Type %q, want %q", got, enc.contentType)
			}
			dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
			if err := cms.Delete(ctx, "a", dry); err != nil {
				t.Fatalf("dry-run Delete: %v", err)
			}
			if err := cms.DeleteCollection(ctx, dry, metav1.ListOptions{LabelSelector: "x=y"}); err != nil {
				t.Fatalf("dry-run DeleteCollection: %v", err)
			}
			if got := srv.last("DELETE").ContentType; got != enc.contentType {
				t.Errorf("DeleteCollection sent Content-Type %q, want %q", got, enc.contentType)
			}
			if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 2 {
				t.Fatalf("after dry runs: %v, %v; want both objects", l, err)
			}
			if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "x=y"}); err != nil {
				t.Fatalf("DeleteCollection: %v", err)
			}
			if l, err := cms.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
				t.Fatalf("after DeleteCollection: %v, %v; want none", l, err)
			}
		})
	}
}
