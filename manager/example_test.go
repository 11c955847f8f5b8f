package manager_test

import (
	"context"
	"fmt"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/controller"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/manager"
)

// A manager running a controller and a runnable of one's own, stopped by
// its context.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := fake.Start(ctx, fake.Options{}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"},
	})
	if err != nil {
		panic(err)
	}
	defer f.Close()

	m, err := manager.New(f.Client(), manager.Config{Factory: informer.FactoryConfig{Namespace: "web"}})
	if err != nil {
		panic(err)
	}
	reconciled := make(chan struct{})
	ctl := controller.New[corev1.ConfigMap](m.Factory(), controller.ReconcilerFunc(
		func(ctx context.Context, req controller.Request) (controller.Result, error) {
			fmt.Println("reconciled", req)
			close(reconciled)
			return controller.Result{}, nil
		}), controller.Config{})
	if err := m.Add(manager.Controller(ctl)); err != nil {
		panic(err)
	}
	// A runnable that stops the manager once the controller has worked.
	if err := m.Add(manager.RunnableFunc(func(ctx context.Context) error {
		select {
		case <-reconciled:
			cancel()
		case <-ctx.Done():
		}
		return nil
	})); err != nil {
		panic(err)
	}
	fmt.Println("Start:", m.Start(ctx))
	// Output:
	// reconciled web/settings
	// Start: <nil>
}
