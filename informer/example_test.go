package informer_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/selector"
)

// exampleClient starts a reference server with namespace "web" holding
// ConfigMap "settings", and returns a client for it.
func exampleClient() (*client.Client, func()) {
	// Without the controllers that would add kube-root-ca.crt to "web", so
	// that the examples print only what they create.
	srv, err := apiserver.New(apiserver.Config{Logger: quietLogger(), DisableServiceAccountController: true, DisableRootCAPublisher: true})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv)
	stop := func() {
		ts.CloseClientConnections()
		ts.Close()
		_ = srv.Close()
	}
	c, err := client.New(&client.Config{Host: ts.URL, Logger: quietLogger()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if _, err := client.For[corev1.Namespace](c).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}}, metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "web", Labels: map[string]string{"app": "web"}}}
	if _, err := client.For[corev1.ConfigMap](c).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	return c, stop
}

// A factory shares one informer per type; handlers hear of the initial
// list and of every change, and the lister reads the cache.
func ExampleNewFactory() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())

	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web"})
	cms := informer.For[corev1.ConfigMap](f)
	events := make(chan string, 10)
	reg, err := cms.AddEventHandler(informer.HandlerFuncs[corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, initial bool) {
			events <- fmt.Sprintf("add %s (initial list: %v)", cm.Name, initial)
		},
		UpdateFunc: func(_, cm *corev1.ConfigMap) { events <- "update " + cm.Name + " " + cm.Data["mode"] },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { events <- "delete " + cm.Name },
	})
	if err != nil {
		panic(err)
	}
	f.Start(ctx)
	if err := informer.WaitForSync(ctx, reg); err != nil {
		panic(err)
	}
	fmt.Println(<-events)

	typed := client.For[corev1.ConfigMap](c).Namespace("web")
	cm, _ := typed.Get(ctx, "settings", metav1.GetOptions{})
	cm.Data = map[string]string{"mode": "fast"}
	_, _ = typed.Update(ctx, cm, metav1.UpdateOptions{})
	fmt.Println(<-events)
	_ = typed.Delete(ctx, "settings", metav1.DeleteOptions{})
	fmt.Println(<-events)

	_, err = cms.Lister().Namespace("web").Get("settings")
	fmt.Println(err)

	cancel()
	f.Shutdown()
	// Output:
	// add settings (initial list: true)
	// update settings fast
	// delete settings
	// configmaps "settings" not found
}

// An informer can also be made from any ListerWatcher, such as a typed
// client set to a namespace, and run on its own.
func ExampleNew() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())

	inf := informer.New(client.For[corev1.ConfigMap](c).Namespace("web"), informer.Config[corev1.ConfigMap]{
		Resource: metav1.GroupResource{Resource: "configmaps"},
	})
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	if err := informer.WaitForSync(ctx, inf); err != nil {
		panic(err)
	}
	web, _ := inf.Lister().List(selector.MustParseLabels("app=web"))
	for _, cm := range web {
		fmt.Println(cm.Namespace, cm.Name)
	}

	cancel()
	fmt.Println(<-done)
	// Output:
	// web settings
	// context canceled
}

// Per-type settings override the factory's defaults: here ConfigMaps are
// selected by label and transformed before they are cached, with a
// function of the ConfigMap type itself, while Secrets keep the defaults.
func ExampleObject() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := informer.NewFactory(c, informer.FactoryConfig{
		Namespace:         "web",
		DropManagedFields: true,
		ByObject: []informer.ObjectConfig{
			informer.Object[corev1.ConfigMap]{
				LabelSelector: "app=web",
				Transform: func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
					cm.Annotations = map[string]string{"cached": "yes"}
					return cm, nil
				},
			},
		},
	})
	cms := informer.For[corev1.ConfigMap](f)
	secrets := informer.For[corev1.Secret](f)
	f.Start(ctx)
	defer f.Shutdown()
	if err := f.WaitForCacheSync(ctx); err != nil {
		panic(err)
	}
	cm, _ := cms.Lister().Namespace("web").Get("settings")
	fmt.Println(cms.Name(), cm.Name, cm.Annotations["cached"], len(cm.ManagedFields))
	fmt.Println(secrets.Name())
	cancel()
	// Output:
	// v1.ConfigMap[namespace=web,labels=app=web] settings yes 0
	// v1.Secret[namespace=web]
}

// A FilteringHandler sees only the objects its filter accepts; an object
// that starts or stops matching arrives as an add or a delete.
func ExampleFilteringHandler() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web"})
	events := make(chan string, 10)
	_, _ = informer.For[corev1.ConfigMap](f).AddEventHandler(informer.FilteringHandler[corev1.ConfigMap]{
		Filter: func(cm *corev1.ConfigMap) bool { return cm.Data["enabled"] == "true" },
		Handler: informer.HandlerFuncs[corev1.ConfigMap]{
			AddFunc:    func(cm *corev1.ConfigMap, _ bool) { events <- "enabled " + cm.Name },
			DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { events <- "disabled " + cm.Name },
		},
	})
	f.Start(ctx)
	defer f.Shutdown()

	typed := client.For[corev1.ConfigMap](c).Namespace("web")
	for _, enabled := range []string{"true", "false"} {
		cm, _ := typed.Get(ctx, "settings", metav1.GetOptions{})
		cm.Data = map[string]string{"enabled": enabled}
		_, _ = typed.Update(ctx, cm, metav1.UpdateOptions{})
		fmt.Println(<-events)
	}
	cancel()
	// Output:
	// enabled settings
	// disabled settings
}

// Dynamic informers cache any resource as unstructured objects.
func ExampleFactory_ForResource() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := informer.NewFactory(c, informer.FactoryConfig{})
	cms := f.ForResource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	f.Start(ctx)
	defer f.Shutdown()
	if err := f.WaitForCacheSync(ctx); err != nil {
		panic(err)
	}
	var names []string
	for _, u := range cms.Indexer().List() {
		if u.GetNamespace() == "web" {
			names = append(names, u.GetKind()+" "+u.GetName())
		}
	}
	slices.Sort(names)
	fmt.Println(names)
	cancel()
	// Output:
	// [ConfigMap settings]
}

// A handler added to a running informer first gets what the cache holds,
// as initial-list adds; its registration syncs once it has handled them.
func ExampleInformer_AddEventHandler() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web"})
	cms := informer.For[corev1.ConfigMap](f)
	f.Start(ctx)
	defer f.Shutdown()
	_ = f.WaitForCacheSync(ctx)

	reg, _ := cms.AddEventHandler(informer.HandlerFuncs[corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, initial bool) {
			fmt.Println("add", cm.Name, "initial list:", initial)
		},
	})
	_ = informer.WaitForSync(ctx, reg)
	fmt.Println("synced:", reg.HasSynced())
	cancel()
	// Output:
	// add settings initial list: true
	// synced: true
}

// Handlers implementing OnResync hear of every cached object once per
// resync period, which is never reported as an update.
func ExampleResyncHandler() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web", ResyncPeriod: 10 * time.Millisecond})
	resyncs := make(chan string, 100)
	_, _ = informer.For[corev1.ConfigMap](f).AddEventHandler(informer.HandlerFuncs[corev1.ConfigMap]{
		ResyncFunc: func(cm *corev1.ConfigMap) {
			select {
			case resyncs <- cm.Name:
			default:
			}
		},
	})
	f.Start(ctx)
	defer f.Shutdown()
	fmt.Println("resync", <-resyncs)
	cancel()
	// Output:
	// resync settings
}

// A metadata-only informer caches the metadata of the objects of a
// resource — names, labels, owners, finalizers — at a fraction of the
// memory of the objects, here the ConfigMaps of namespace "web" without
// their managedFields. Handlers and the lister get
// metav1.PartialObjectMetadata with the kind of the resource.
func ExampleForMetadata() {
	c, stop := exampleClient()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())

	f := informer.NewFactory(c, informer.FactoryConfig{Namespace: "web", DropManagedFields: true})
	cms := informer.ForMetadata[corev1.ConfigMap](f)
	// The same informer, by resource, as a program that has no Go type
	// for it asks for it.
	same := f.ForMetadataResource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	fmt.Println("shared:", same == cms)
	events := make(chan string, 10)
	reg, err := cms.AddEventHandler(informer.HandlerFuncs[metav1.PartialObjectMetadata]{
		AddFunc: func(m *metav1.PartialObjectMetadata, _ bool) {
			events <- fmt.Sprintf("add %s %s/%s labels %v", m.APIVersion, m.Kind, m.Name, m.Labels)
		},
		UpdateFunc: func(_, m *metav1.PartialObjectMetadata) {
			events <- "update " + m.Name + " finalizers " + fmt.Sprint(m.Finalizers)
		},
	})
	if err != nil {
		panic(err)
	}
	f.Start(ctx)
	if err := informer.WaitForSync(ctx, reg); err != nil {
		panic(err)
	}
	fmt.Println(<-events)

	typed := client.For[corev1.ConfigMap](c).Namespace("web")
	cm, _ := typed.Get(ctx, "settings", metav1.GetOptions{})
	cm.Finalizers = []string{"example.com/cleanup"}
	_, _ = typed.Update(ctx, cm, metav1.UpdateOptions{})
	fmt.Println(<-events)
	m, _ := cms.Lister().Namespace("web").Get("settings")
	fmt.Println("cached:", m.Name, m.Finalizers, "managedFields:", len(m.ManagedFields))

	cancel()
	f.Shutdown()
	// Output:
	// shared: true
	// add v1 ConfigMap/settings labels map[app:web]
	// update settings finalizers [example.com/cleanup]
	// cached: settings [example.com/cleanup] managedFields: 0
}
