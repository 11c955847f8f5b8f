package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// metaEvent is what a metadata informer's handler saw.
type metaEvent struct {
	typ    string // add, update, delete
	name   string
	labels map[string]string
}

// TestMetadata drives client-go's metadata client (PartialObjectMetadata
// and PartialObjectMetadataList) and a metadata informer that follows live
// changes: each change must reach the handler within seconds (a watch that
// streams whole objects instead makes the informer fail on every event and
// relist with backoff).
func TestMetadata(t *testing.T) {
	ns := newNamespace(t, "metadata")
	ctx := testContext(t)
	cfg := restConfig(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg.WrapTransport = rec.wrap
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	// partialAnswer checks the server answered the last such request with
	// metadata only (client-go's metadata client also accepts a whole
	// object, and keeps only its metadata, from servers that cannot).
	partialAnswer := func(t *testing.T, path string, watch bool) {
		t.Helper()
		ex := rec.matching("GET", path, watch)
		if len(ex) == 0 {
			t.Fatalf("no GET %s recorded", path)
		}
		if e := ex[len(ex)-1]; !e.partial.Load() {
			t.Errorf("GET %s (watch %v) asked %q and got %d %s without a PartialObjectMetadata: the server ignored as=PartialObjectMetadata", path, watch, e.accept, e.status, e.contentType)
		}
	}
	pre, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "pre", Labels: map[string]string{"compat": "meta"}},
		Data:       map[string]string{"big": "data the metadata client never sees"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}

	t.Run("get", func(t *testing.T) {
		m, err := mc.Resource(gvr).Namespace(ns).Get(ctx, "pre", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if m.Name != "pre" || m.UID != pre.UID || m.ResourceVersion != pre.ResourceVersion || m.Labels["compat"] != "meta" {
			t.Fatalf("Get returned %+v", m.ObjectMeta)
		}
		partialAnswer(t, path+"/pre", false)
	})
	t.Run("list", func(t *testing.T) {
		l, err := mc.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "compat=meta"})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != "pre" || l.Items[0].UID != pre.UID || l.ResourceVersion == "" {
			t.Fatalf("List returned %+v", l)
		}
		partialAnswer(t, path, false)
	})
	t.Run("patch", func(t *testing.T) {
		m, err := mc.Resource(gvr).Namespace(ns).Patch(ctx, "pre", types.MergePatchType, []byte(`{"metadata":{"annotations":{"patched":"yes"}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if m.Annotations["patched"] != "yes" {
			t.Fatalf("Patch returned %+v", m.ObjectMeta)
		}
	})

	t.Run("informer", func(t *testing.T) {
		events := make(chan metaEvent, 100)
		record := func(typ string, obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				events <- metaEvent{typ: fmt.Sprintf("%s of a %T", typ, obj)}
				return
			}
			events <- metaEvent{typ: typ, name: m.Name, labels: m.Labels}
		}
		// Only the test's own objects: a cluster (and kapi-apiserver) puts
		// kube-root-ca.crt in every namespace.
		factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, ns, func(o *metav1.ListOptions) { o.LabelSelector = "compat" })
		inf := factory.ForResource(gvr).Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { record("add", obj) },
			UpdateFunc: func(_, obj any) { record("update", obj) },
			DeleteFunc: func(obj any) { record("delete", obj) },
		}); err != nil {
			t.Fatal(err)
		}
		before := len(rec.exchanges())
		// Also when an event is missing: how the informer listed says why.
		defer func() { checkMetadataOnly(t, &recorder{log: rec.exchanges()[before:]}, path) }()
		ictx, cancel := context.WithCancel(ctx)
		defer factory.Shutdown()
		defer cancel()
		factory.Start(ictx.Done())
		synced := factory.WaitForCacheSync(ictx.Done())
		if !synced[gvr] {
			t.Fatalf("metadata informer not synced: %v", synced)
		}
		expectMeta(t, events, "add", "pre", "meta")
		// Every live change reaches the handler quickly.
		if _, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "live", Labels: map[string]string{"compat": "v1"}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		expectMeta(t, events, "add", "live", "v1")
		if _, err := cms.Patch(ctx, "live", types.MergePatchType, []byte(`{"metadata":{"labels":{"compat":"v2"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("Patch: %v", err)
		}
		expectMeta(t, events, "update", "live", "v2")
		if err := mc.Resource(gvr).Namespace(ns).Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("metadata client Delete: %v", err)
		}
		expectMeta(t, events, "delete", "live", "v2")
		// One list, then one watch that delivered every change: a watch
		// the informer cannot decode ends and the informer lists again.
		// The informer's store holds metadata only.
		obj, exists, err := inf.GetStore().GetByKey(ns + "/pre")
		if err != nil || !exists {
			t.Fatalf("store: pre missing (%v)", err)
		}
		if _, ok := obj.(*metav1.PartialObjectMetadata); !ok {
			t.Fatalf("store holds a %T", obj)
		}
		if _, err := mc.Resource(gvr).Namespace(ns).Get(ctx, "live", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("Get after Delete: %v, want NotFound", err)
		}
	})
}

// expectMeta waits up to 5s for the next event and checks it.
func expectMeta(t *testing.T, events <-chan metaEvent, typ, name, label string) {
	t.Helper()
	select {
	case ev := <-events:
		if ev.typ != typ || ev.name != name || ev.labels["compat"] != label {
			t.Fatalf("event %s %s labels %v, want %s %s with compat=%s (if it is an update of an object that did not change, the informer listed again)", ev.typ, ev.name, ev.labels, typ, name, label)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s event for %s within 5s", typ, name)
	}
}
