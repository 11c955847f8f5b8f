package controllerutil_test

import (
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/fake"
)

// TestControllerReferenceCollected: the reference SetControllerReference
// writes is one the server's garbage collector follows: deleting the owner
// deletes the owned object.
func TestControllerReferenceCollected(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, configMap("web", "settings"))
	c := f.Client()
	cm, err := client.For[corev1.ConfigMap](c).Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := client.For[corev1.Secret](c).Namespace("web")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "copy"}}
	if err := controllerutil.SetControllerReference(cm, s, controllerutil.OwnerOptions{Scheme: c.Scheme()}); err != nil {
		t.Fatal(err)
	}
	s, err = secrets.Create(ctx, s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := secrets.Watch(ctx, metav1.ListOptions{ResourceVersion: s.ResourceVersion, FieldSelector: "metadata.name=copy"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := client.For[corev1.ConfigMap](c).Namespace("web").Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch ended")
			}
			if ev.Type == client.EventDeleted {
				return
			}
		case <-deadline:
			t.Fatal("the owned Secret was not collected")
		}
	}
}
