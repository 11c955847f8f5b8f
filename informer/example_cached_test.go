package informer_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/fake"
	"github.com/kapi-dev/kapi/informer"
)

// A cached client reads from the factory's informer and writes to the
// server; a reconciler takes it as a client.Resource, as it would take
// client.For's.
func ExampleCached() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := fake.Start(ctx, fake.Options{Logger: quietLogger()},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web"}, Data: map[string]string{"mode": "a"}})
	if err != nil {
		panic(err)
	}
	defer f.Close()

	factory := informer.NewFactory(f.Client(), informer.FactoryConfig{Namespace: "web", Logger: quietLogger()})
	var cms client.Resource[corev1.ConfigMap] = informer.Cached[corev1.ConfigMap](factory, informer.ClientConfig{}).Namespace("web")
	factory.Start(ctx)
	defer func() {
		cancel()
		factory.Shutdown()
	}()

	cm, err := cms.Get(ctx, "settings", metav1.GetOptions{}) // from the cache: a copy of one's own
	if err != nil {
		panic(err)
	}
	fmt.Println("read:", cm.Data["mode"])

	cm.Data["mode"] = "b"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil { // to the server
		panic(err)
	}
	cm, err = cms.Get(ctx, "settings", metav1.GetOptions{}) // waits for the cache to see the update
	if err != nil {
		panic(err)
	}
	fmt.Println("after the update:", cm.Data["mode"])

	_, err = cms.Get(ctx, "missing", metav1.GetOptions{})
	fmt.Println(client.IsNotFound(err), err)

	_, err = cms.Namespace("kube-system").List(ctx, metav1.ListOptions{})
	fmt.Println(errors.Is(err, informer.ErrOutOfScope))
	// Output:
	// read: a
	// after the update: b
	// true configmaps "missing" not found
	// true
}
