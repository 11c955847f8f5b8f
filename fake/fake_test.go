package fake_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/fake"
)

// The typed, dynamic and discovery clients of a Fake all reach the server.
func TestClients(t *testing.T) {
	f := fake.New(t, configMap("web", "settings", "k", "v"))
	ctx := testContext(t)
	tests := []struct {
		name string
		run  func(c *client.Client) (string, error)
	}{
		{"typed", func(c *client.Client) (string, error) {
			cm, err := client.For[corev1.ConfigMap](c).Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return cm.Kind + " " + cm.Data["k"], nil
		}},
		{"dynamic", func(c *client.Client) (string, error) {
			u, err := client.Dynamic(c).Resource(client.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
				Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			v, _, _ := unstructured.NestedString(u.Object, "data", "k")
			return u.GetKind() + " " + v, nil
		}},
		{"discovery", func(c *client.Client) (string, error) {
			m, err := c.RESTMapper().RESTMapping(ctx, metav1.GroupKind{Kind: "ConfigMap"})
			if err != nil {
				return "", err
			}
			return m.Kind.Kind + " " + m.Resource.Resource, nil
		}},
		{"version", func(c *client.Client) (string, error) {
			v, err := c.Discovery().ServerVersion(ctx)
			if err != nil {
				return "", err
			}
			return "major " + v.Major, nil
		}},
	}
	want := map[string]string{"typed": "ConfigMap v", "dynamic": "ConfigMap v", "discovery": "ConfigMap configmaps", "version": "major 1"}
	for _, enc := range []string{codec.MediaTypeJSON, codec.MediaTypeProtobuf} {
		cfg := f.Config()
		cfg.ContentType = enc
		c, err := client.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(enc+"/"+tt.name, func(t *testing.T) {
				got, err := tt.run(c)
				if err != nil {
					t.Fatal(err)
				}
				if got != want[tt.name] {
					t.Errorf("got %q, want %q", got, want[tt.name])
				}
			})
		}
	}
}

func TestNewClient(t *testing.T) {
	c := fake.NewClient(t, pod("", "a"))
	if c.Namespace() != "default" || c.Host() != fake.Host {
		t.Errorf("namespace %q host %q", c.Namespace(), c.Host())
	}
	p, err := client.For[corev1.Pod](c).Get(testContext(t), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Namespace != "default" || p.UID == "" || p.ResourceVersion == "" {
		t.Errorf("seeded pod %s/%s uid %q rv %q", p.Namespace, p.Name, p.UID, p.ResourceVersion)
	}
}

// Seeds are created through the server and come back as the server made
// them, whatever form they were given in.
func TestSeed(t *testing.T) {
	ctx := testContext(t)
	now := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	unstructuredCM := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "u", "namespace": "apps"},
		"data":     map[string]any{"k": "v"},
	}}
	withRV := configMap("web", "stale")
	withRV.ResourceVersion = "12345"
	withRV.UID = "from-elsewhere"
	running := pod("web", "running")
	running.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7"}
	finalizing := configMap("web", "finalizing")
	finalizing.Finalizers = []string{"example.com/hold"}
	finalizing.DeletionTimestamp = &now
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "ignored"}}
	generated := configMap("web", "")
	generated.GenerateName = "gen-"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"team": "a"}}}

	f := fake.New(t, unstructuredCM, withRV, *configMap("web", "value"), running, finalizing, node, generated, ns, configMap("", "in-default"))
	c := f.Client()
	cms := client.For[corev1.ConfigMap](c)
	recorded := len(f.Actions())

	tests := []struct {
		name  string
		check func() error
	}{
		{"unstructured, its namespace created", func() error {
			cm, err := cms.Namespace("apps").Get(ctx, "u", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["k"] != "v" {
				return fmt.Errorf("data %v", cm.Data)
			}
			_, err = client.For[corev1.Namespace](c).Get(ctx, "apps", metav1.GetOptions{})
			return err
		}},
		{"resourceVersion and uid are the server's", func() error {
			cm, err := cms.Namespace("web").Get(ctx, "stale", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.ResourceVersion == "12345" || cm.UID == "from-elsewhere" {
				return fmt.Errorf("rv %s uid %s", cm.ResourceVersion, cm.UID)
			}
			return nil
		}},
		{"a struct value", func() error {
			_, err := cms.Namespace("web").Get(ctx, "value", metav1.GetOptions{})
			return err
		}},
		{"status written through /status", func() error {
			p, err := client.For[corev1.Pod](c).Namespace("web").Get(ctx, "running", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP != "10.0.0.7" {
				return fmt.Errorf("status %+v", p.Status)
			}
			return nil
		}},
		{"marked for deletion, kept by its finalizer", func() error {
			cm, err := cms.Namespace("web").Get(ctx, "finalizing", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.DeletionTimestamp == nil || !reflect.DeepEqual(cm.Finalizers, []string{"example.com/hold"}) {
				return fmt.Errorf("deletionTimestamp %v finalizers %v", cm.DeletionTimestamp, cm.Finalizers)
			}
			return nil
		}},
		{"cluster-scoped, namespace ignored", func() error {
			n, err := client.For[corev1.Node](c).Get(ctx, "n1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if n.Namespace != "" {
				return fmt.Errorf("namespace %q", n.Namespace)
			}
			return nil
		}},
		{"generateName", func() error {
			// The first suffix drawn: seeded pods get no token volume (the
			// ServiceAccount plugin is off without the serviceaccount
			// controller, as in envtest).
			list, err := cms.Namespace("web").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=gen-bbbbb"})
			if err != nil {
				return err
			}
			if len(list.Items) != 1 {
				return fmt.Errorf("%d configmaps named gen-bbbbb", len(list.Items))
			}
			return nil
		}},
		{"namespace seeded as given, before its objects", func() error {
			n, err := client.For[corev1.Namespace](c).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if n.Labels["team"] != "a" {
				return fmt.Errorf("labels %v", n.Labels)
			}
			return nil
		}},
		{"no namespace: the client's", func() error {
			_, err := cms.Namespace("default").Get(ctx, "in-default", metav1.GetOptions{})
			return err
		}},
		{"seeds unchanged", func() error {
			if withRV.ResourceVersion != "12345" || unstructuredCM.GetUID() != "" || running.UID != "" {
				return errors.New("a seed was modified")
			}
			return nil
		}},
		{"seeding is not recorded", func() error {
			if recorded != 0 {
				return fmt.Errorf("%d actions recorded", recorded)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.check(); err != nil {
				t.Error(err)
			}
		})
	}
}

// A seed the server refuses, or that is no object at all, is an error that
// names it.
func TestSeedErrors(t *testing.T) {
	ctx := testContext(t)
	noKind := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	unknownKind := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}}}
	deleting := configMap("web", "deleting")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	noContainers := pod("web", "empty")
	noContainers.Spec.Containers = nil
	type widget struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	tests := []struct {
		name    string
		objects []any
		want    []string // substrings of the error
	}{
		{"invalid name", []any{configMap("web", "Not_Valid")}, []string{`seeding ConfigMap "web/Not_Valid"`, "metadata.name"}},
		{"invalid pod", []any{noContainers}, []string{`seeding Pod "web/empty"`, "spec.containers"}},
		{"duplicate", []any{configMap("web", "a"), configMap("web", "a")}, []string{`seeding ConfigMap "web/a"`, "already exists"}},
		{"nil", []any{nil}, []string{"seed 0", "nil object"}},
		{"nil pointer", []any{configMap("web", "ok"), (*corev1.Pod)(nil)}, []string{"seed 1 (*v1.Pod)", "nil object"}},
		{"not an object", []any{"pod"}, []string{"seed 0 (string)", "not an API object"}},
		{"unstructured without kind", []any{noKind}, []string{"seed 0", "apiVersion and kind"}},
		{"kind not served", []any{unknownKind}, []string{"seed 0", "does not serve kind Widget in example.com/v1"}},
		{"Go type not served", []any{&widget{ObjectMeta: metav1.ObjectMeta{Name: "w"}}}, []string{"seed 0", "serves no resource of Go type"}},
		{"deleting without finalizers", []any{deleting}, []string{`seed 0 (*v1.ConfigMap "web/deleting")`, "no finalizers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fake.Start(ctx, fake.Options{Logger: quietLogger()}, tt.objects...)
			if err == nil {
				f.Close()
				t.Fatal("Start succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// fatalRecorder is a testing.TB whose Fatal ends the goroutine and records
// the message, to test what New reports.
type fatalRecorder struct {
	testing.TB
	mu       sync.Mutex
	msg      string
	cleanups []func()
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatal(args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *fatalRecorder) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }
func (r *fatalRecorder) Cleanup(f func()) {
	r.mu.Lock()
	r.cleanups = append(r.cleanups, f)
	r.mu.Unlock()
}

// A bad seed fails the test with the object's name, and the Fake is still
// closed.
func TestNewFailsOnBadSeed(t *testing.T) {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fake.New(r, configMap("web", "ok"), configMap("web", "Bad Name"))
	}()
	<-done
	if !strings.Contains(r.msg, `fake: seeding ConfigMap "web/Bad Name"`) {
		t.Errorf("Fatal message %q", r.msg)
	}
	if len(r.cleanups) != 1 {
		t.Fatalf("%d cleanups registered", len(r.cleanups))
	}
	r.cleanups[0]() // closes the Fake; goleak checks nothing is left
}

// Two Fakes with the same Options and seeds produce the same objects: UIDs,
// generated names and timestamps.
func TestDeterministic(t *testing.T) {
	clock := func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	run := func() []corev1.Pod {
		f := fake.NewWithOptions(t, fake.Options{Now: clock}, pod("web", "a"))
		pods := client.For[corev1.Pod](f.Client()).Namespace("web")
		for range 3 {
			p := pod("web", "")
			p.GenerateName = "worker-"
			if _, err := pods.Create(testContext(t), p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		list, err := pods.List(testContext(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	first, second := run(), run()
	if !reflect.DeepEqual(first, second) {
		t.Errorf("two runs differ:\n%+v\n%+v", first, second)
	}
	var got []string
	for _, p := range first {
		got = append(got, fmt.Sprintf("%s %s %s", p.Name, p.UID, p.CreationTimestamp.UTC().Format(time.RFC3339)))
	}
	// Consecutive suffixes: without the serviceaccount controller the
	// ServiceAccount plugin is off (as in envtest), so no token volume
	// draws one in between.
	want := []string{
		"a 00000000-0000-0000-0000-000000000011 2025-06-01T12:00:00Z",
		"worker-bbbbb 00000000-0000-0000-0000-000000000012 2025-06-01T12:00:00Z",
		"worker-bbbbc 00000000-0000-0000-0000-000000000013 2025-06-01T12:00:00Z",
		"worker-bbbbd 00000000-0000-0000-0000-000000000014 2025-06-01T12:00:00Z",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pods:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Options reach the server and the client.
func TestOptions(t *testing.T) {
	var uids int
	f := fake.NewWithOptions(t, fake.Options{
		Namespace:   "apps",
		ContentType: codec.MediaTypeProtobuf,
		NewUID:      func() metav1.UID { uids++; return metav1.UID(fmt.Sprintf("uid-%d", uids)) },
		NameSuffix:  func() string { return "x" },
	})
	ctx := testContext(t)
	if f.Client().Namespace() != "apps" {
		t.Errorf("namespace %q", f.Client().Namespace())
	}
	cm := configMap("", "")
	cm.GenerateName = "cm-"
	if err := f.Seed(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got, err := client.For[corev1.ConfigMap](f.Client()).Get(ctx, "cm-x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Namespace != "apps" || !strings.HasPrefix(string(got.UID), "uid-") {
		t.Errorf("configmap %s/%s uid %s", got.Namespace, got.Name, got.UID)
	}
}

// Close ends watches and in-flight requests; later requests fail; Close may
// be called again.
func TestClose(t *testing.T) {
	ctx := testContext(t)
	f, err := fake.Start(ctx, fake.Options{Logger: quietLogger()}, pod("web", "a"))
	if err != nil {
		t.Fatal(err)
	}
	pods := client.For[corev1.Pod](f.Client()).Namespace("web")
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != client.EventAdded {
		t.Fatalf("first event %s", ev.Type)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, w)
	if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Get after Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Start works outside a test and seeds like New.
func TestStart(t *testing.T) {
	f, err := fake.Start(context.Background(), fake.Options{Logger: quietLogger()}, configMap("web", "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(testContext(t), "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The cluster's controllers that fill namespaces are off by default (a test
// sees what it creates) and on when asked; the kubernetes Service is there
// either way, as kube-apiserver makes it.
func TestClusterControllers(t *testing.T) {
	ctx := testContext(t)
	for _, tc := range []struct {
		name string
		opts fake.Options
		want bool
	}{
		{"default", fake.Options{}, false},
		{"on", fake.Options{ServiceAccountController: true, RootCAPublisher: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fake.NewWithOptions(t, tc.opts)
			_, saErr := client.For[corev1.ServiceAccount](f.Client()).Namespace("kube-system").Get(ctx, "default", metav1.GetOptions{})
			_, cmErr := client.For[corev1.ConfigMap](f.Client()).Namespace("kube-system").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			if (saErr == nil) != tc.want || (cmErr == nil) != tc.want {
				t.Errorf("service account: %v, kube-root-ca.crt: %v; want them present: %v", saErr, cmErr, tc.want)
			}
			if _, err := client.For[corev1.Service](f.Client()).Namespace("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
				t.Errorf("kubernetes service: %v", err)
			}
		})
	}
}
