package controller_test

import (
	"context"
	"fmt"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
)

// A controller that gives every ConfigMap a Secret it controls, and
// reconciles the ConfigMap again when that Secret changes.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := fake.Start(ctx, fake.Options{}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"},
		Data:       map[string]string{"color": "blue"},
	})
	if err != nil {
		panic(err)
	}
	defer f.Close()

	factory := informer.NewFactory(f.Client(), informer.FactoryConfig{Namespace: "web"})
	configMaps := informer.For[corev1.ConfigMap](factory)
	secrets := client.For[corev1.Secret](f.Client())

	reconcile := func(ctx context.Context, req controller.Request) (controller.Result, error) {
		cm, err := configMaps.Lister().Namespace(req.Namespace).Get(req.Name)
		if client.IsNotFound(err) {
			return controller.Result{}, nil // deleted: the garbage collector removes its Secret
		} else if err != nil {
			return controller.Result{}, err
		}
		isController := true
		_, err = secrets.Namespace(req.Namespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: cm.Name + "-copy", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: &isController,
			}}},
			StringData: cm.Data,
		}, metav1.CreateOptions{})
		switch {
		case client.IsAlreadyExists(err):
			return controller.Result{}, nil // up to date
		case err != nil:
			return controller.Result{}, err // retried with backoff
		}
		fmt.Printf("%s: created Secret %s-copy\n", req, cm.Name)
		return controller.Result{}, nil
	}

	ctl := controller.New[corev1.ConfigMap](factory, controller.ReconcilerFunc(reconcile), controller.Config{Workers: 2})
	controller.Owns[corev1.Secret](ctl)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ctl.Run(runCtx) }()
	if err := ctl.WaitIdle(ctx); err != nil {
		panic(err)
	}
	stop()
	if err := <-done; err != nil {
		panic(err)
	}
	factory.Shutdown()
	// Output:
	// web/settings: created Secret settings-copy
}
