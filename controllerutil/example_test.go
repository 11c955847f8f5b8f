package controllerutil_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/fake"
)

// A controller makes the Secret it derives from a ConfigMap: CreateOrUpdate
// creates it the first time, sets the ConfigMap as its controller so the
// garbage collector deletes it with the ConfigMap, and leaves it alone when
// nothing changed.
func ExampleCreateOrUpdate() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{}, configMap("web", "settings", "mode", "fast"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	c := f.Client()
	cm, err := client.For[corev1.ConfigMap](c).Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	secrets := client.For[corev1.Secret](c)
	for range 2 {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "settings-copy"}}
		result, err := controllerutil.CreateOrUpdate(ctx, secrets, secret, func(s *corev1.Secret) error {
			s.Data = map[string][]byte{"mode": []byte(cm.Data["mode"])}
			return controllerutil.SetControllerReference(cm, s, controllerutil.OwnerOptions{Scheme: c.Scheme()})
		})
		if err != nil {
			log.Fatal(err)
		}
		owner := controllerutil.GetControllerOf(secret)
		fmt.Println(result, owner.Kind, owner.Name, controllerutil.IsControlledBy(secret, cm))
	}
	// Output:
	// created ConfigMap settings true
	// unchanged ConfigMap settings true
}

// A second controller is refused: taking an object over is the caller's
// decision.
func ExampleSetControllerReference() {
	first := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "a", UID: "uid-a"}}
	second := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "b", UID: "uid-b"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "s"}}

	fmt.Println(controllerutil.SetControllerReference(first, secret, controllerutil.OwnerOptions{}))
	err := controllerutil.SetControllerReference(second, secret, controllerutil.OwnerOptions{})
	var owned *controllerutil.AlreadyOwnedError
	fmt.Println(errors.As(err, &owned), owned.Owner.Name)
	fmt.Println(err)

	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "c", UID: "uid-c"}}
	fmt.Println(controllerutil.SetOwnerReference(other, secret, controllerutil.OwnerOptions{}))
	// Output:
	// <nil>
	// true a
	// controllerutil: web/s is already controlled by ConfigMap a (uid uid-a)
	// controllerutil: cannot own web/s: the owner ConfigMap db/c is in another namespace than the object "web" (owners must be in the object's namespace)
}

// A reconcile function runs under a finalizer: Apply while the object lives
// (the finalizer is added first), Cleanup once it is deleted, after which
// the finalizer is removed and the deletion completes.
func ExampleFinalize() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{}, configMap("web", "settings"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	reconcile := func(_ context.Context, ev controllerutil.Event[corev1.ConfigMap]) (string, error) {
		fmt.Println(ev.Type, ev.Object.Finalizers)
		return "ok", nil
	}
	const finalizer = "example.com/cleanup"

	cm, _ := cms.Get(ctx, "settings", metav1.GetOptions{})
	if _, err := controllerutil.Finalize(ctx, cms, finalizer, cm, reconcile); err != nil {
		log.Fatal(err)
	}
	if err := cms.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		log.Fatal(err)
	}
	cm, _ = cms.Get(ctx, "settings", metav1.GetOptions{}) // being deleted, held by the finalizer
	if _, err := controllerutil.Finalize(ctx, cms, finalizer, cm, reconcile); err != nil {
		log.Fatal(err)
	}
	_, err = cms.Get(ctx, "settings", metav1.GetOptions{})
	fmt.Println(client.IsNotFound(err))
	// Output:
	// Apply [example.com/cleanup]
	// Cleanup [example.com/cleanup]
	// true
}

// RetryOnConflict reruns a read-modify-write while it fails with a
// Conflict: here CreateOrUpdate's update, which carries the resourceVersion
// it read, loses once to another writer and succeeds on a fresh read.
func ExampleRetryOnConflict() {
	ctx := context.Background()
	f, err := fake.Start(ctx, fake.Options{}, configMap("web", "settings", "mode", "slow"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	cms := client.For[corev1.ConfigMap](f.Client())
	first := true
	f.PrependReactor("update", "configmaps", func(a fake.Action) (bool, any, error) {
		if first { // someone else wrote first
			first = false
			return true, nil, conflict(a)
		}
		return false, nil, nil
	})
	var result controllerutil.OperationResult
	err = controllerutil.RetryOnConflict(ctx, controllerutil.Backoff{}, func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "settings"}}
		result, err = controllerutil.CreateOrUpdate(ctx, cms, cm, func(cm *corev1.ConfigMap) error {
			cm.Data["mode"] = "fast"
			return nil
		})
		return err
	})
	fmt.Println(result, err)
	// Output:
	// updated <nil>
}
