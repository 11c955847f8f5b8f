package manager_test

import (
	"context"
	"errors"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/manager"
)

func TestClient(t *testing.T) {
	f := fake.New(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "a"}, Data: map[string]string{"v": "1"}})
	m, err := manager.New(f.Client(), manager.Config{
		Logger:  quiet(),
		Factory: informer.FactoryConfig{Namespace: "web", Logger: quiet()},
		Client:  informer.ClientConfig{UnsafeDisableDeepCopy: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	cms := manager.Client[corev1.ConfigMap](m).Namespace("web")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := cms.Get(ctx, "a", metav1.GetOptions{}); !errors.Is(err, informer.ErrFactoryNotStarted) {
		t.Fatalf("Get before Start = %v, want ErrFactoryNotStarted", err)
	}
	start(t, m)
	waitFor(t, "the runnables to start", m.Elected())
	// Start synced the client's informer before starting the runnables.
	if !informer.For[corev1.ConfigMap](m.Factory()).HasSynced() {
		t.Fatal("the cached client's informer had not synced when the runnables started")
	}
	f.ClearActions()
	a1, err := cms.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a2, _ := cms.Get(ctx, "a", metav1.GetOptions{}); a2 != a1 {
		t.Error("Config.Client.UnsafeDisableDeepCopy is not applied: Get returned copies")
	}
	if acts := f.Actions(); len(acts) != 0 {
		t.Errorf("cached Gets sent %v", acts)
	}
	// Writes go to the server, and the client reads its own.
	upd := a1.DeepCopy()
	upd.Data["v"] = "2"
	if _, err := cms.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil || got.Data["v"] != "2" {
		t.Errorf("Get after Update = %v, %v; want the update", got, err)
	}
	// The factory's scope is the client's.
	if _, err := manager.Client[corev1.ConfigMap](m).Namespace("db").Get(ctx, "a", metav1.GetOptions{}); !errors.Is(err, informer.ErrOutOfScope) {
		t.Errorf("Get outside the factory's namespace = %v, want ErrOutOfScope", err)
	}
}
