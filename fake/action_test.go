package fake_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/fake"
)

// Every kind of request is recorded with its Kubernetes verb, resource,
// subresource, namespace, name, query and body.
func TestActions(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, pod("web", "a"), configMap("web", "cm"))
	c := f.Client()
	pods := client.For[corev1.Pod](c).Namespace("web")
	cms := client.For[corev1.ConfigMap](c).Namespace("web")
	tests := []struct {
		name   string
		do     func() error
		want   string // Action.String
		verify func(a fake.Action) error
	}{
		{"get", func() error {
			_, err := pods.Get(ctx, "a", metav1.GetOptions{ResourceVersion: "0"})
			return err
		}, "get pods web/a", func(a fake.Action) error {
			if a.Query.Get("resourceVersion") != "0" || a.Body != nil {
				return fmt.Errorf("query %v body %q", a.Query, a.Body)
			}
			return nil
		}},
		{"list", func() error {
			_, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web", Limit: 5})
			return err
		}, "list pods web", func(a fake.Action) error {
			if a.Query.Get("labelSelector") != "app=web" || a.Query.Get("limit") != "5" {
				return fmt.Errorf("query %v", a.Query)
			}
			return nil
		}},
		{"list all namespaces", func() error {
			_, err := pods.Namespace("").List(ctx, metav1.ListOptions{})
			return err
		}, "list pods", nil},
		{"watch", func() error {
			w, err := pods.Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}, "watch pods web", nil},
		{"create", func() error {
			_, err := cms.Create(ctx, configMap("", "new", "k", "v"), metav1.CreateOptions{})
			return err
		}, "create configmaps web", func(a fake.Action) error {
			var cm corev1.ConfigMap
			if err := a.Into(&cm); err != nil {
				return err
			}
			if cm.Name != "new" || cm.Data["k"] != "v" || a.ContentType != codec.MediaTypeJSON {
				return fmt.Errorf("body %+v, content type %q", cm, a.ContentType)
			}
			return nil
		}},
		{"update", func() error {
			cm, err := cms.Get(ctx, "cm", metav1.GetOptions{})
			if err != nil {
				return err
			}
			f.ClearActions()
			cm.Data = map[string]string{"x": "y"}
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "test"})
			return err
		}, "update configmaps web/cm", func(a fake.Action) error {
			if a.Query.Get("fieldManager") != "test" {
				return fmt.Errorf("query %v", a.Query)
			}
			return nil
		}},
		{"update status", func() error {
			p, err := pods.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				return err
			}
			f.ClearActions()
			p.Status.Phase = corev1.PodRunning
			_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return err
		}, "update pods/status web/a", func(a fake.Action) error {
			if a.Subresource != "status" || a.Resource != (client.GroupVersionResource{Version: "v1", Resource: "pods"}) {
				return fmt.Errorf("resource %v subresource %q", a.Resource, a.Subresource)
			}
			return nil
		}},
		{"patch (recorded, though the server does not serve patches yet)", func() error {
			_, _ = cms.Patch(ctx, "cm", client.MergePatchType, []byte(`{"data":{"p":"q"}}`), metav1.PatchOptions{})
			return nil
		}, "patch configmaps web/cm", func(a fake.Action) error {
			if a.ContentType != codec.MediaTypeMergePatch || string(a.Body) != `{"data":{"p":"q"}}` {
				return fmt.Errorf("content type %q body %s", a.ContentType, a.Body)
			}
			return nil
		}},
		{"delete", func() error {
			return cms.Delete(ctx, "new", metav1.DeleteOptions{})
		}, "delete configmaps web/new", func(a fake.Action) error {
			var opts metav1.DeleteOptions
			if err := a.Into(&opts); err != nil {
				return err
			}
			if opts.Kind != "DeleteOptions" {
				return fmt.Errorf("body %s", a.Body)
			}
			return nil
		}},
		{"deletecollection", func() error {
			return cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "none=here"})
		}, "deletecollection configmaps web", nil},
		{"cluster-scoped", func() error {
			_, err := client.For[corev1.Namespace](c).Get(ctx, "web", metav1.GetOptions{})
			return err
		}, "get namespaces web", nil},
		{"namespace status", func() error {
			var ns corev1.Namespace
			return client.For[corev1.Namespace](c).GetSubresource(ctx, "web", "status", &ns, metav1.GetOptions{})
		}, "get namespaces/status web", nil},
		{"group", func() error {
			_, err := client.For[appsv1.Deployment](c).Namespace("web").List(ctx, metav1.ListOptions{})
			return err
		}, "list deployments.apps web", func(a fake.Action) error {
			if a.Resource != (client.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}) {
				return fmt.Errorf("resource %v", a.Resource)
			}
			return nil
		}},
		{"dynamic", func() error {
			_, err := client.Dynamic(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
				Namespace("web").Get(ctx, "cm", metav1.GetOptions{})
			return err
		}, "get configmaps web/cm", nil},
		{"raw request", func() error {
			_, err := c.NewRequest(http.MethodGet).AbsPath("/api/v1/namespaces/web/pods").Param("watch", "false").DoRaw(ctx)
			return err
		}, "list pods web", nil},
		{"discovery is not recorded", func() error {
			_, err := c.Discovery().ServerGroups(ctx)
			return err
		}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.ClearActions()
			if err := tt.do(); err != nil {
				t.Fatal(err)
			}
			actions := f.Actions()
			if tt.want == "" {
				if len(actions) != 0 {
					t.Fatalf("recorded %v", actions)
				}
				return
			}
			if len(actions) != 1 {
				t.Fatalf("recorded %v, want one action", actions)
			}
			if got := actions[0].String(); got != tt.want {
				t.Errorf("recorded %q, want %q", got, tt.want)
			}
			if tt.verify != nil {
				if err := tt.verify(actions[0]); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// Concurrent requests are all recorded (run with -race).
func TestActionsConcurrent(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t)
	cms := client.For[corev1.ConfigMap](f.Client()) // in "default"
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := cms.Create(ctx, configMap("", fmt.Sprintf("cm-%02d", i)), metav1.CreateOptions{}); err != nil {
				t.Error(err)
			}
			_ = f.Actions() // reading while others record
		})
	}
	wg.Wait()
	var names []string
	for _, a := range f.Actions() {
		var cm corev1.ConfigMap
		if err := a.Into(&cm); err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Verb+" "+cm.Name)
	}
	sort.Strings(names)
	if len(names) != n || names[0] != "create cm-00" || names[n-1] != fmt.Sprintf("create cm-%02d", n-1) {
		t.Errorf("recorded %v", names)
	}
	f.ClearActions()
	if len(f.Actions()) != 0 {
		t.Error("ClearActions left actions")
	}
}

func TestActionMatches(t *testing.T) {
	status := fake.Action{Verb: "update", Resource: client.GroupVersionResource{Version: "v1", Resource: "pods"}, Subresource: "status"}
	plain := fake.Action{Verb: "get", Resource: client.GroupVersionResource{Version: "v1", Resource: "pods"}}
	tests := []struct {
		a              fake.Action
		verb, resource string
		want           bool
	}{
		{status, "update", "pods", true},
		{status, "update", "pods/status", true},
		{status, "update", "pods/scale", false},
		{status, "update", "pods/*", true},
		{status, "update", "*/status", true},
		{status, "*", "*", true},
		{status, "get", "pods", false},
		{plain, "get", "pods/status", false},
		{plain, "get", "pods/*", false},
		{plain, "get", "*/status", false},
		{plain, "get", "configmaps", false},
		{plain, "*", "pods", true},
	}
	for _, tt := range tests {
		if got := tt.a.Matches(tt.verb, tt.resource); got != tt.want {
			t.Errorf("%s matches %s %s: %v, want %v", tt.a, tt.verb, tt.resource, got, tt.want)
		}
	}
}

func TestActionIntoErrors(t *testing.T) {
	var cm corev1.ConfigMap
	if err := (fake.Action{Verb: "get"}).Into(&cm); err == nil || !strings.Contains(err.Error(), "no body") {
		t.Errorf("Into without body: %v", err)
	}
	a := fake.Action{Verb: "create", Body: []byte("k8s\x00..."), ContentType: codec.MediaTypeProtobuf}
	var v struct{}
	if err := a.Into(&v); err == nil || !strings.Contains(err.Error(), "protobuf") {
		t.Errorf("Into protobuf: %v", err)
	}
}

// Protobuf bodies decode too.
func TestActionIntoProtobuf(t *testing.T) {
	ctx := testContext(t)
	f := fake.NewWithOptions(t, fake.Options{ContentType: codec.MediaTypeProtobuf})
	if _, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Create(ctx, configMap("web", "pb", "k", "v"), metav1.CreateOptions{}); err == nil {
		t.Fatal("created in a namespace that does not exist")
	}
	a := f.Actions()[0]
	var cm corev1.ConfigMap
	if err := a.Into(&cm); err != nil {
		t.Fatal(err)
	}
	if a.ContentType != codec.MediaTypeProtobuf || cm.Name != "pb" || cm.Data["k"] != "v" {
		t.Errorf("content type %q, decoded %+v", a.ContentType, cm)
	}
}
