package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	authenticationv1 "github.com/kapi-dev/kapi/api/authentication/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

// referenceServer starts kapi's reference API server on a loopback port
// (with the namespace "default", as every cluster), standing in for a cluster
// in the examples.
func referenceServer() (url string, stop func()) {
	api, err := apiserver.New(apiserver.Config{})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(api)
	return srv.URL, func() {
		srv.CloseClientConnections()
		srv.Close()
		api.Close()
	}
}

func examplePod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

// New builds a client from a Config, typically one from client.Load; here
// the reference server stands in for a cluster. Protobuf is used for the
// built-in kinds when the Config asks for it.
func ExampleNew() {
	host, stop := referenceServer()
	defer stop()

	c, err := client.New(&client.Config{
		Host:        host,
		ContentType: codec.MediaTypeProtobuf,
	})
	if err != nil {
		log.Fatal(err)
	}
	v, err := c.Discovery().ServerVersion(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("namespace:", c.Namespace())
	fmt.Println("server major version:", v.Major)
	// Output:
	// namespace: default
	// server major version: 1
}

// For makes a typed client for any registered Go type; its methods take and
// return *T.
func ExampleFor() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()

	pods := client.For[corev1.Pod](c) // in c.Namespace(), "default"
	if _, err := pods.Create(ctx, examplePod("web-0"), metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	pod, err := pods.Get(ctx, "web-0", metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pod.Kind, pod.Namespace+"/"+pod.Name, pod.Status.Phase)
	// Output: Pod default/web-0 Pending
}

// Create returns the object as stored: with generateName, the server picks
// the name.
func ExampleResource_Create() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "settings-"},
		Data:       map[string]string{"log-level": "debug"},
	}
	created, err := client.For[corev1.ConfigMap](c).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(created.Name) > len("settings-"), created.ResourceVersion != "", created.Data["log-level"])

	// Creating an object under a name that is taken fails with
	// AlreadyExists.
	again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: created.Name}}
	_, err = client.For[corev1.ConfigMap](c).Create(ctx, again, metav1.CreateOptions{})
	fmt.Println(client.IsAlreadyExists(err))
	// Output:
	// true true debug
	// true
}

// Subresources that take an object of their own kind, such as a service
// account's token or a pod's eviction, are posted with CreateSubresource;
// the answer is decoded into the caller's type.
func ExampleResource_CreateSubresource() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()

	sas := client.For[corev1.ServiceAccount](c)
	if _, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"example"}}}
	var tr authenticationv1.TokenRequest
	if err := sas.CreateSubresource(ctx, "robot", "token", req, &tr, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(tr.Status.Token != "", tr.Spec.Audiences)
	// Output: true [example]
}

// WithDecodeOptions makes a Resource whose lists and watches decode for a
// cache: here managedFields are skipped unread. The Resource it derives
// from is unchanged.
func ExampleResource_WithDecodeOptions() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()

	cms := client.For[corev1.ConfigMap](c)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	for _, r := range []client.Resource[corev1.ConfigMap]{cms, cms.WithDecodeOptions(codec.DecodeOptions{SkipManagedFields: true})} {
		list, err := r.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=settings"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(list.Items[0].ManagedFields))
	}
	// Output:
	// 1
	// 0
}

// Apply is server-side apply: the object holds only the fields its manager
// wants to own. Another manager changing one of them conflicts, unless it
// forces the change and takes the field over; fields a manager stops
// applying are removed when no one else owns them.
func ExampleResource_Apply() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()
	cms := client.For[corev1.ConfigMap](c)

	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"replicas": "3", "mode": "fast"}}
	if _, err := cms.Apply(ctx, mine, metav1.ApplyOptions{FieldManager: "deployer"}); err != nil {
		log.Fatal(err)
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"replicas": "5"}}
	_, err := cms.Apply(ctx, theirs, metav1.ApplyOptions{FieldManager: "autoscaler"})
	fmt.Println(client.IsConflict(err))
	fmt.Println(err)

	got, err := cms.Apply(ctx, theirs, metav1.ApplyOptions{FieldManager: "autoscaler", Force: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Data["replicas"], got.Data["mode"])
	// managedFields are ordered by time (to the second), then by manager.
	managers := map[string]string{}
	for _, m := range got.ManagedFields {
		managers[m.Manager] = string(m.Operation)
	}
	fmt.Println(managers)
	// Output:
	// true
	// Apply failed with 1 conflict: conflict with "deployer": .data.replicas
	// 5 fast
	// map[autoscaler:Apply deployer:Apply]
}

// Patch sends a JSON, merge or strategic merge patch; a strategic merge
// patch merges lists such as a pod's containers by name.
func ExampleResource_Patch() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()
	pods := client.For[corev1.Pod](c)
	if _, err := pods.Create(ctx, examplePod("web-0"), metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	// The container named web gets a new image and keeps its other fields.
	patch := `{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]},"metadata":{"labels":{"tier":"front"}}}`
	got, err := pods.Patch(ctx, "web-0", client.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, ctr := range got.Spec.Containers {
		fmt.Println(ctr.Name, ctr.Image, ctr.ImagePullPolicy)
	}
	fmt.Println(got.Labels["app"], got.Labels["tier"])
	// Output:
	// web nginx:1.28 IfNotPresent
	// web front
}

// Get returns NotFound as an error the predicates recognise.
func ExampleResource_Get() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})

	_, err := client.For[corev1.Pod](c).Get(context.Background(), "nope", metav1.GetOptions{})
	fmt.Println(client.IsNotFound(err))
	fmt.Println(err)
	// Output:
	// true
	// pods "nope" not found
}

// List decodes the response item by item; selectors and pagination are
// metav1.ListOptions.
func ExampleResource_List() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host, ContentType: codec.MediaTypeProtobuf})
	ctx := context.Background()
	pods := client.For[corev1.Pod](c)
	for _, name := range []string{"web-0", "web-1", "db-0"} {
		p := examplePod(name)
		if name == "db-0" {
			p.Labels["app"] = "db"
		}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			log.Fatal(err)
		}
	}

	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(list.Kind, len(list.Items))
	for _, p := range list.Items {
		fmt.Println(p.Name)
	}
	// Output:
	// PodList 2
	// web-0
	// web-1
}

// Watch delivers events until the context ends or Stop is called; start it
// from a list's resourceVersion so that no change is missed.
func ExampleResource_Watch() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pods := client.For[corev1.Pod](c)

	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()

	go func() {
		_, _ = pods.Create(ctx, examplePod("web-0"), metav1.CreateOptions{})
		// A pod no node runs goes at once; watchers first see it marked
		// for deletion (MODIFIED), as from kube-apiserver.
		_ = pods.Delete(ctx, "web-0", metav1.DeleteOptions{})
	}()
	for ev := range w.Events() {
		if ev.Type == client.EventError {
			log.Fatal(ev.Err)
		}
		fmt.Println(ev.Type, ev.Object.Name)
		if ev.Type == client.EventDeleted {
			break // stops the watch
		}
	}
	// Output:
	// ADDED web-0
	// MODIFIED web-0
	// DELETED web-0
}

// The dynamic client works on any resource by GroupVersionResource, with
// objects held as unstructured.Unstructured.
func ExampleDynamic() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})
	ctx := context.Background()

	cms := client.Dynamic(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "settings"},
		"data":       map[string]any{"color": "blue"},
	}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}
	got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	color, _, _ := unstructured.NestedString(got.Object, "data", "color")
	fmt.Println(got.GetKind(), got.GetName(), color)
	// Output: ConfigMap settings blue
}

// Gadget is a custom resource type: TypeMeta and ObjectMeta embedded, and
// fields of its own.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GadgetSpec `json:"spec"`
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	Size int `json:"size"`
}

// Register tells the client how a custom resource type is served, once; then
// For[Gadget] works like for any built-in kind. Custom resources are JSON
// only: Gadget has ObjectMeta's protobuf methods, but not its own.
func ExampleRegister() {
	client.Register[Gadget](client.Kind{
		Group: "example.com", Version: "v1", Resource: "gadgets", Kind: "Gadget", Namespaced: true,
	})

	k, _ := client.KindFor[Gadget](client.DefaultScheme())
	fmt.Println(k.GroupVersionResource(), k.ListKind, client.UsesProtobuf[Gadget](client.DefaultScheme()))
	// Output: gadgets.v1.example.com GadgetList false
}

// RESTMapper finds the resource of a kind from discovery.
func ExampleRESTMapper_RESTMapping() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host})

	m, err := c.RESTMapper().RESTMapping(context.Background(), metav1.GroupKind{Group: "apps", Kind: "Deployment"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Resource, m.Namespaced)
	// Output: deployments.v1.apps true
}
