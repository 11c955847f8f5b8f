package client_test

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/informer"
	"github.com/kapi-dev/kapi/reflector"
)

// The metadata client is a reflector.ListerWatcher of PartialObjectMetadata.
var _ reflector.ListerWatcher[metav1.PartialObjectMetadata] = client.MetadataResource(nil)

// TestMetadataInformer runs an informer on the metadata client, in JSON and
// protobuf, with paged lists and with a streaming list: it syncs, then
// follows creates, updates and deletes made while it runs, without a single
// list or watch error (a watch event it could not decode would be one).
func TestMetadataInformer(t *testing.T) {
	for _, ct := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		for _, streaming := range []bool{false, true} {
			name := ct
			if streaming {
				name += " streaming"
			}
			t.Run(name, func(t *testing.T) { testMetadataInformer(t, ct, streaming) })
		}
	}
}

func testMetadataInformer(t *testing.T, contentType string, streaming bool) {
	host, stop := referenceServer()
	defer stop()
	c, err := client.New(&client.Config{Host: host, ContentType: contentType})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cms := client.For[corev1.ConfigMap](c).Namespace("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Labels: map[string]string{"test": "metadata"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var watchErrs []error
	lw := client.Metadata(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	inf := informer.New[metav1.PartialObjectMetadata](lw, informer.Config[metav1.PartialObjectMetadata]{
		Reflector: reflector.Config[metav1.PartialObjectMetadata]{
			// The server's own objects in the namespace (kube-root-ca.crt)
			// are left out.
			ListOptions:      metav1.ListOptions{LabelSelector: "test=metadata"},
			UseStreamingList: streaming,
			WatchErrorHandler: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				watchErrs = append(watchErrs, err)
			},
		},
	})
	type change struct {
		typ, name, label string
	}
	changes := make(chan change, 16)
	label := func(p *metav1.PartialObjectMetadata) string { return p.Labels["v"] }
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[metav1.PartialObjectMetadata]{
		AddFunc:    func(p *metav1.PartialObjectMetadata, _ bool) { changes <- change{"add", p.Name, label(p)} },
		UpdateFunc: func(_, p *metav1.PartialObjectMetadata) { changes <- change{"update", p.Name, label(p)} },
		DeleteFunc: func(p *metav1.PartialObjectMetadata, _ bool) { changes <- change{"delete", p.Name, label(p)} },
	}); err != nil {
		t.Fatal(err)
	}
	runCtx, stopInformer := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- inf.Run(runCtx) }()
	defer func() {
		stopInformer()
		<-done
	}()
	select {
	case <-inf.Synced():
	case <-ctx.Done():
		t.Fatal("the informer did not sync")
	}
	next := func(want change) {
		t.Helper()
		select {
		case got := <-changes:
			if got != want {
				t.Fatalf("handler saw %+v, want %+v", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("no %+v", want)
		}
	}
	next(change{"add", "before", ""})

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live", Labels: map[string]string{"test": "metadata", "v": "1"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next(change{"add", "live", "1"})
	cm.Labels["v"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	next(change{"update", "live", "2"})
	cached, err := inf.Lister().Get("default", "live")
	if err != nil || cached.Labels["v"] != "2" || cached.Kind != "PartialObjectMetadata" {
		t.Fatalf("lister: %+v, %v", cached, err)
	}
	if err := cms.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next(change{"delete", "live", "2"})

	mu.Lock()
	defer mu.Unlock()
	if len(watchErrs) > 0 {
		t.Errorf("list or watch errors: %v", watchErrs)
	}
}
