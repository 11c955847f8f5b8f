package client_test

import (
	"context"
	"fmt"
	"log"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
)

// The metadata client reads only objects' metadata, of any resource: here
// Secrets, whose data it never downloads. It speaks protobuf when the Config
// prefers it.
func ExampleMetadata() {
	host, stop := referenceServer()
	defer stop()
	c, _ := client.New(&client.Config{Host: host, ContentType: codec.MediaTypeProtobuf})
	ctx := context.Background()

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "token", Labels: map[string]string{"team": "a"}},
		StringData: map[string]string{"password": "s3cr3t"},
	}
	if _, err := client.For[corev1.Secret](c).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}

	secrets := client.Metadata(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("default")
	list, err := secrets.List(ctx, metav1.ListOptions{LabelSelector: "team=a"})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range list.Items {
		fmt.Println(m.Kind, m.Name, m.Labels["team"])
	}
	// A merge patch of metadata returns the new metadata.
	m, err := secrets.Patch(ctx, "token", client.MergePatchType, []byte(`{"metadata":{"labels":{"team":"b"}}}`), metav1.PatchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Name, m.Labels["team"])
	// Output:
	// PartialObjectMetadata token a
	// token b
}
