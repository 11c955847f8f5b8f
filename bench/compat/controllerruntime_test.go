package compat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// replicasReconciler keeps, for each Deployment, a ConfigMap <name>-replicas
// it owns (as controller) whose data says the Deployment's replicas.
type replicasReconciler struct {
	client client.Client
	scheme *runtime.Scheme
}

func (r *replicasReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var d appsv1.Deployment
	if err := r.client.Get(ctx, req.NamespacedName, &d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !d.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-replicas", Namespace: d.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, cm, func() error {
		cm.Data = map[string]string{"replicas": strconv.Itoa(int(ptr.Deref(d.Spec.Replicas, 1)))}
		return controllerutil.SetControllerReference(&d, cm, r.scheme)
	})
	return reconcile.Result{}, err
}

// labelsSeen records what a metadata-only reconciler read from its cache.
type labelsSeen struct {
	mu     sync.Mutex
	labels map[string]map[string]string
	errs   []error
}

func (s *labelsSeen) get(name string) (map[string]string, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.labels[name], slices.Clone(s.errs)
}

// TestControllerRuntime runs a controller-runtime manager, configured as
// controller-runtime's own config loader and manager defaults have it, with
// a reconciler For Deployments that Owns ConfigMaps and a metadata-only
// (builder.OnlyMetadata) controller for Secrets, and uses the manager's
// cache-backed client: Create, Update, Patch, Delete, DeleteAllOf.
func TestControllerRuntime(t *testing.T) {
	ns := newNamespace(t, "ctrl")
	ctx := testContext(t)
	cfg, err := ctrlconfig.GetConfig() // -kubeconfig or KUBECONFIG, as an operator's main does
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{} // sees the requests, changes nothing
	cfg.WrapTransport = rec.wrap
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// Not client settings: no metrics listener on a fixed port, only
		// this test's namespace in the caches (on a shared cluster the
		// reconciler must not act on other namespaces), and controller names
		// may repeat when the test runs more than once in the process.
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}).
		Owns(&corev1.ConfigMap{}).
		Complete(&replicasReconciler{client: mgr.GetClient(), scheme: scheme}); err != nil {
		t.Fatalf("build the Deployment controller: %v", err)
	}
	seen := &labelsSeen{labels: map[string]map[string]string{}}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("secrets-metadata").
		For(&corev1.Secret{}, builder.OnlyMetadata).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			err := mgr.GetClient().Get(ctx, req.NamespacedName, m)
			seen.mu.Lock()
			defer seen.mu.Unlock()
			if err != nil && !apierrors.IsNotFound(err) {
				seen.errs = append(seen.errs, err)
			} else {
				seen.labels[req.Name] = m.Labels
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		})); err != nil {
		t.Fatalf("build the Secret controller: %v", err)
	}

	mctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop within 30s of its context's end")
		}
	})
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("manager caches not synced within 20s")
	}

	c := mgr.GetClient()         // reads from the cache, writes to the server
	direct := mgr.GetAPIReader() // reads from the server
	owned := func(name string) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		err := direct.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
		return cm, err
	}
	// ownedWith waits for the owned ConfigMap to say replicas and returns it.
	ownedWith := func(t *testing.T, replicas string) *corev1.ConfigMap {
		t.Helper()
		var cm *corev1.ConfigMap
		eventually(t, 10*time.Second, "owned ConfigMap with replicas "+replicas, func(ctx context.Context) error {
			var err error
			if cm, err = owned("web-replicas"); err != nil {
				return err
			}
			if cm.Data["replicas"] != replicas {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
		return cm
	}

	deploy := newDeployment("web", nil)
	deploy.Namespace = ns
	ok := t.Run("reconcile-creates-owned", func(t *testing.T) {
		if err := c.Create(ctx, deploy); err != nil {
			t.Fatalf("client.Create: %v", err)
		}
		cm := ownedWith(t, "1")
		ref := metav1.GetControllerOf(cm)
		if ref == nil || ref.Kind != "Deployment" || ref.Name != "web" || ref.UID != deploy.UID {
			t.Fatalf("owned ConfigMap's controller reference %+v, want Deployment web %s", ref, deploy.UID)
		}
	})
	if !ok {
		t.Fatal("the reconciler does not work: the rest depends on it")
	}
	t.Run("reacts-to-owner", func(t *testing.T) {
		before := deploy.DeepCopy()
		deploy.Spec.Replicas = ptr.To[int32](3)
		if err := c.Patch(ctx, deploy, client.MergeFrom(before)); err != nil {
			t.Fatalf("client.Patch: %v", err)
		}
		ownedWith(t, "3")
	})
	t.Run("reacts-to-owned", func(t *testing.T) {
		var tampered string
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm, err := owned("web-replicas")
			if err != nil {
				return err
			}
			cm.Data["replicas"] = "tampered"
			err = c.Update(ctx, cm)
			tampered = cm.ResourceVersion
			return err
		})
		if err != nil {
			t.Fatalf("client.Update: %v", err)
		}
		if cm := ownedWith(t, "3"); cm.ResourceVersion == tampered {
			t.Fatalf("ConfigMap still at the tampered resourceVersion %s", tampered)
		}
	})
	t.Run("client.Delete-owned", func(t *testing.T) {
		cm, err := owned("web-replicas")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, cm); err != nil {
			t.Fatalf("client.Delete: %v", err)
		}
		// The Owns watch sees the delete; the reconciler recreates it.
		eventually(t, 10*time.Second, "owned ConfigMap recreated", func(ctx context.Context) error {
			again, err := owned("web-replicas")
			if err != nil {
				return err
			}
			if again.UID == cm.UID {
				return errors.New("still the deleted one")
			}
			return nil
		})
	})
	t.Run("cache-backed-client", func(t *testing.T) {
		eventually(t, 10*time.Second, "the cache follows the server", func(ctx context.Context) error {
			var list appsv1.DeploymentList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(list.Items) != 1 || list.Items[0].Name != "web" || ptr.Deref(list.Items[0].Spec.Replicas, 0) != 3 {
				return fmt.Errorf("cached deployments %v", list.Items)
			}
			var cm corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-replicas"}, &cm); err != nil {
				return err
			}
			if cm.Data["replicas"] != "3" {
				return fmt.Errorf("cached ConfigMap data %v", cm.Data)
			}
			return nil
		})
		// A namespace the cache does not hold is an error, not a silent miss.
		var other appsv1.DeploymentList
		if err := c.List(ctx, &other, client.InNamespace("kube-system")); err == nil {
			t.Fatal("List of a namespace outside the cache succeeded")
		}
	})
	t.Run("OnlyMetadata", func(t *testing.T) {
		secrets := "/api/v1/namespaces/" + ns + "/secrets"
		defer checkMetadataOnly(t, rec, secrets)
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: ns, Labels: map[string]string{"v": "1"}},
			StringData: map[string]string{"password": "not in the metadata cache"},
		}
		if err := c.Create(ctx, s); err != nil {
			t.Fatalf("client.Create: %v", err)
		}
		for _, v := range []string{"1", "2"} {
			if v == "2" {
				if err := c.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"v":"2"}}}`))); err != nil {
					t.Fatalf("client.Patch: %v", err)
				}
			}
			eventually(t, 10*time.Second, "metadata-only reconciler sees v="+v, func(context.Context) error {
				l, errs := seen.get("s1")
				if len(errs) > 0 {
					return fmt.Errorf("reconciler's Get from the metadata cache: %v", errs)
				}
				if l["v"] != v {
					return fmt.Errorf("labels %v", l)
				}
				return nil
			})
		}
		// Straight from the server (the manager's API reader).
		pom := &metav1.PartialObjectMetadata{}
		pom.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := direct.Get(ctx, client.ObjectKeyFromObject(s), pom); err != nil {
			t.Fatalf("APIReader Get of PartialObjectMetadata: %v", err)
		}
		if pom.Labels["v"] != "2" || pom.UID != s.UID {
			t.Fatalf("APIReader Get of PartialObjectMetadata: %+v", pom.ObjectMeta)
		}
		if ex := rec.matching("GET", secrets+"/s1", false); len(ex) != 1 || !ex[0].partial.Load() {
			for _, e := range ex {
				t.Errorf("GET %s/s1 asked %q and got %d %s without a PartialObjectMetadata: the server ignored as=PartialObjectMetadata", secrets, e.accept, e.status, e.contentType)
			}
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatalf("List of PartialObjectMetadata from the cache: %v", err)
		}
		var names []string
		for _, it := range list.Items {
			names = append(names, it.Name)
		}
		if !slices.Contains(names, "s1") {
			t.Fatalf("cached Secret metadata %v lacks s1", names)
		}
	})
	t.Run("DeleteAllOf", func(t *testing.T) {
		for _, name := range []string{"bulk-1", "bulk-2", "bulk-3", "kept"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"bulk": strconv.FormatBool(name != "kept")}}}
			if err := c.Create(ctx, cm); err != nil {
				t.Fatalf("client.Create: %v", err)
			}
		}
		if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"bulk": "true"}); err != nil {
			t.Fatalf("client.DeleteAllOf: %v", err)
		}
		var list corev1.ConfigMapList
		if err := direct.List(ctx, &list, client.InNamespace(ns), client.HasLabels{"bulk"}); err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "kept" {
			t.Fatalf("left after DeleteAllOf: %v", itemNames(t, &list))
		}
	})
	t.Run("client.Delete-owner-garbage-collects", func(t *testing.T) {
		if err := c.Delete(ctx, deploy, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatalf("client.Delete: %v", err)
		}
		eventually(t, 20*time.Second, "Deployment and its owned ConfigMap gone", func(ctx context.Context) error {
			if err := direct.Get(ctx, client.ObjectKeyFromObject(deploy), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Deployment: %v", err)
			}
			if _, err := owned("web-replicas"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("owned ConfigMap: %v", err)
			}
			return nil
		})
	})
}

// TestEnvtest starts envtest with UseExistingCluster: it loads the
// kubeconfig as controller-runtime does (KUBECONFIG, which TestMain points
// at kapi-apiserver's or the given one), installs a CRD and waits for it to
// be served, and uninstalls it on Stop.
func TestEnvtest(t *testing.T) {
	group := "envtest" + suffix() + ".kapi.dev"
	crd := widgetCRD(group)
	env := &envtest.Environment{
		UseExistingCluster: ptr.To(true),
		CRDInstallOptions: envtest.CRDInstallOptions{
			CRDs:            []*apiextensionsv1.CustomResourceDefinition{crd},
			CleanUpAfterUse: true,
		},
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			env.Stop()
		}
	})
	ns := newNamespace(t, "envtest")
	ctx := testContext(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := widget(group, "w", 5)
	u.SetNamespace(ns)
	if err := c.Create(ctx, u); err != nil {
		t.Fatalf("create a Widget right after envtest Start: %v", err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if specSize(got) != 5 {
		t.Fatalf("Get returned %v", got.Object)
	}
	var list corev1.NamespaceList
	if err := c.List(ctx, &list); err != nil || len(list.Items) == 0 {
		t.Fatalf("List namespaces: %d, %v", len(list.Items), err)
	}
	stopped = true
	if err := env.Stop(); err != nil {
		t.Fatalf("envtest Stop: %v", err)
	}
	ax, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "CRD uninstalled by Stop", func(ctx context.Context) error {
		_, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("Get CRD: %v", err)
	})
}

// checkMetadataOnly checks the requests of a metadata informer of path: one
// list (or streaming list) answered with metadata only, then watches that
// carry PartialObjectMetadata. A watch the informer cannot decode ends, and
// the informer lists again (after a backoff).
func checkMetadataOnly(t *testing.T, rec *recorder, path string) {
	t.Helper()
	syncs := rec.initialSyncs(path)
	if len(syncs) == 0 {
		t.Errorf("no list or streaming list of %s recorded", path)
	} else if len(syncs) != 1 || !syncs[0].partial.Load() {
		e := syncs[0]
		t.Errorf("the metadata informer made %d lists or streaming lists of %s, want 1 with metadata only (then it follows its watch); the first asked %q and got %d %s, PartialObjectMetadata: %v",
			len(syncs), path, e.accept, e.status, e.contentType, e.partial.Load())
	}
	for _, e := range rec.matching("GET", path, true) {
		if !e.initial && !e.partial.Load() {
			t.Errorf("watch %s asked %q and got %d %s without PartialObjectMetadata", path, e.accept, e.status, e.contentType)
			break
		}
	}
}
