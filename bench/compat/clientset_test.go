package compat

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// typedClient is what client-go's generated clients of a namespaced kind
// have in common (they are gentype.ClientWithListAndApply).
type typedClient[T interface {
	metav1.Object
	runtime.Object
}, L runtime.Object, A any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Apply(ctx context.Context, obj A, opts metav1.ApplyOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// crudCase drives every verb of one kind through its typed client.
type crudCase[T interface {
	metav1.Object
	runtime.Object
}, L runtime.Object, A any] struct {
	client typedClient[T, L, A]
	// newObj returns an object named name with labels, two containers
	// (main and side) or two data keys.
	newObj func(name string, labels map[string]string) T
	// update changes the object for an update; updated says whether a read
	// object carries that change.
	update  func(T)
	updated func(T) error
	// strategic is a strategic merge patch that changes main's image (or a
	// data key); patched checks it, and that side (or the other key) is kept,
	// which a JSON merge patch of a list would not do.
	strategic []byte
	patched   func(T) error
	// apply is an apply configuration of the object named name that sets
	// the label applied=yes.
	apply func(name string) A
}

const fieldManager = "compat-test"

func runCRUD[T interface {
	metav1.Object
	runtime.Object
}, L runtime.Object, A any](t *testing.T, c crudCase[T, L, A]) {
	ctx := testContext(t)
	var created T
	ok := t.Run("create", func(t *testing.T) {
		obj, err := c.client.Create(ctx, c.newObj("crud-a", map[string]string{"compat": "crud"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		if obj.GetName() != "crud-a" || obj.GetUID() == "" || obj.GetResourceVersion() == "" || obj.GetCreationTimestamp().Time.IsZero() {
			t.Fatalf("Create returned name %q uid %q resourceVersion %q creationTimestamp %v", obj.GetName(), obj.GetUID(), obj.GetResourceVersion(), obj.GetCreationTimestamp())
		}
		if obj.GetLabels()["compat"] != "crud" {
			t.Fatalf("Create returned labels %v", obj.GetLabels())
		}
		created = obj
	})
	if !ok {
		t.Skip("create failed: the other verbs need the object")
	}
	t.Run("get", func(t *testing.T) {
		obj, err := c.client.Get(ctx, "crud-a", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if obj.GetUID() != created.GetUID() || obj.GetResourceVersion() != created.GetResourceVersion() {
			t.Fatalf("Get: uid %s resourceVersion %s, created uid %s resourceVersion %s", obj.GetUID(), obj.GetResourceVersion(), created.GetUID(), created.GetResourceVersion())
		}
		_, err = c.client.Get(ctx, "crud-missing", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("Get of a missing object: %v, want NotFound", err)
		}
	})
	t.Run("list", func(t *testing.T) {
		list, err := c.client.List(ctx, metav1.ListOptions{LabelSelector: "compat=crud"})
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if names := itemNames(t, list); !slices.Equal(names, []string{"crud-a"}) {
			t.Fatalf("List compat=crud: %v, want [crud-a]", names)
		}
		if lm, err := apimeta.ListAccessor(list); err != nil || lm.GetResourceVersion() == "" {
			t.Fatalf("List: no resourceVersion (%v)", err)
		}
	})
	t.Run("update", func(t *testing.T) {
		// On a cluster, controllers write too (a Deployment's status): read,
		// modify and update again on a conflict, as clients do.
		var obj T
		var before string
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var err error
			if obj, err = c.client.Get(ctx, "crud-a", metav1.GetOptions{}); err != nil {
				return err
			}
			before = obj.GetResourceVersion()
			c.update(obj)
			obj, err = c.client.Update(ctx, obj, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if obj.GetResourceVersion() == before {
			t.Fatalf("Update kept resourceVersion %s", before)
		}
		if err := c.updated(obj); err != nil {
			t.Fatalf("Update returned: %v", err)
		}
		// A stale resourceVersion is a conflict.
		obj.SetResourceVersion(before)
		if _, err := c.client.Update(ctx, obj, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("Update with a stale resourceVersion: %v, want Conflict", err)
		}
		got, err := c.client.Get(ctx, "crud-a", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if err := c.updated(got); err != nil {
			t.Fatalf("Get after Update: %v", err)
		}
	})
	t.Run("patch-strategic", func(t *testing.T) {
		obj, err := c.client.Patch(ctx, "crud-a", types.StrategicMergePatchType, c.strategic, metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if err := c.patched(obj); err != nil {
			t.Fatalf("strategic merge patch %s: %v", c.strategic, err)
		}
	})
	t.Run("patch-merge", func(t *testing.T) {
		obj, err := c.client.Patch(ctx, "crud-a", types.MergePatchType, []byte(`{"metadata":{"labels":{"merge":"yes"}}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if l := obj.GetLabels(); l["merge"] != "yes" || l["compat"] != "crud" {
			t.Fatalf("merge patch: labels %v, want merge=yes and compat=crud", l)
		}
		if err := c.patched(obj); err != nil {
			t.Fatalf("merge patch lost the strategic patch's change: %v", err)
		}
	})
	t.Run("patch-json", func(t *testing.T) {
		obj, err := c.client.Patch(ctx, "crud-a", types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("Patch: %v", err)
		}
		if l := obj.GetLabels(); l["json"] != "yes" || l["merge"] != "yes" {
			t.Fatalf("JSON patch: labels %v, want json=yes and merge=yes", l)
		}
	})
	t.Run("apply", func(t *testing.T) {
		obj, err := c.client.Apply(ctx, c.apply("crud-a"), metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if l := obj.GetLabels(); l["applied"] != "yes" || l["compat"] != "crud" {
			t.Fatalf("Apply: labels %v, want applied=yes and compat=crud", l)
		}
		if err := hasApplyManager(obj); err != nil {
			t.Fatal(err)
		}
		// Apply also creates.
		obj, err = c.client.Apply(ctx, c.apply("crud-applied"), metav1.ApplyOptions{FieldManager: fieldManager})
		if err != nil {
			t.Fatalf("Apply of a new object: %v", err)
		}
		if obj.GetUID() == "" || obj.GetLabels()["applied"] != "yes" {
			t.Fatalf("Apply of a new object: uid %q labels %v", obj.GetUID(), obj.GetLabels())
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := c.client.Delete(ctx, "crud-a", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		eventually(t, 10*time.Second, "deleted object gone", func(ctx context.Context) error {
			_, err := c.client.Get(ctx, "crud-a", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("Get after Delete: %v", err)
		})
		if err := c.client.Delete(ctx, "crud-a", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("second Delete: %v, want NotFound", err)
		}
		// Preconditions travel in the DeleteOptions body too.
		err := c.client.Delete(ctx, "crud-applied", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(types.UID("not-its-uid"))}})
		if !apierrors.IsConflict(err) {
			t.Fatalf("Delete with a wrong UID precondition: %v, want Conflict", err)
		}
	})
	t.Run("deletecollection", func(t *testing.T) {
		for _, name := range []string{"bulk-1", "bulk-2"} {
			if _, err := c.client.Create(ctx, c.newObj(name, map[string]string{"compat": "bulk"}), metav1.CreateOptions{}); err != nil {
				t.Fatalf("Create %s: %v", name, err)
			}
		}
		if _, err := c.client.Create(ctx, c.newObj("bulk-kept", map[string]string{"compat": "kept"}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if err := c.client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "compat=bulk"}); err != nil {
			t.Fatalf("DeleteCollection: %v", err)
		}
		eventually(t, 10*time.Second, "DeleteCollection", func(ctx context.Context) error {
			list, err := c.client.List(ctx, metav1.ListOptions{LabelSelector: "compat in (bulk,kept)"})
			if err != nil {
				return err
			}
			if names := itemNames(t, list); !slices.Equal(names, []string{"bulk-kept"}) {
				return fmt.Errorf("left %v, want [bulk-kept]", names)
			}
			return nil
		})
	})
}

// itemNames are the names of a list's items, sorted.
func itemNames(t testing.TB, list runtime.Object) []string {
	t.Helper()
	items, err := apimeta.ExtractList(list)
	if err != nil {
		t.Fatalf("ExtractList: %v", err)
	}
	var names []string
	for _, it := range items {
		m, err := apimeta.Accessor(it)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.GetName())
	}
	slices.Sort(names)
	return names
}

// hasApplyManager checks that the object records an Apply by fieldManager.
func hasApplyManager(obj metav1.Object) error {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == fieldManager && e.Operation == metav1.ManagedFieldsOperationApply {
			return nil
		}
	}
	var got []string
	for _, e := range obj.GetManagedFields() {
		got = append(got, string(e.Manager)+"/"+string(e.Operation))
	}
	return fmt.Errorf("managedFields %v have no Apply entry of %s", got, fieldManager)
}

func twoContainers() []corev1.Container {
	return []corev1.Container{
		{Name: "main", Image: "registry.k8s.io/pause:3.10"},
		{Name: "side", Image: "registry.k8s.io/pause:3.10"},
	}
}

// containersPatched checks the strategic patch of main's image kept side.
func containersPatched(cs []corev1.Container) error {
	if len(cs) != 2 || cs[0].Name != "main" || cs[0].Image != "registry.k8s.io/pause:3.9" || cs[1].Name != "side" {
		return fmt.Errorf("containers %+v, want main with pause:3.9 and side", cs)
	}
	return nil
}

const containersPatch = `{"spec":{"containers":[{"name":"main","image":"registry.k8s.io/pause:3.9"}]}}`

// TestClientset drives client-go's typed clientset, with its defaults
// (protobuf for built-in kinds, request and DeleteOptions bodies included),
// through every verb on configmaps, pods and deployments, and a watch.
func TestClientset(t *testing.T) {
	ns := newNamespace(t, "clientset")
	cs, err := kubernetes.NewForConfig(restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("configmaps", func(t *testing.T) {
		runCRUD(t, crudCase[*corev1.ConfigMap, *corev1.ConfigMapList, *corev1ac.ConfigMapApplyConfiguration]{
			client: cs.CoreV1().ConfigMaps(ns),
			newObj: func(name string, labels map[string]string) *corev1.ConfigMap {
				return &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
					Data:       map[string]string{"a": "1", "b": "2"},
				}
			},
			update: func(cm *corev1.ConfigMap) { cm.Data["a"] = "updated" },
			updated: func(cm *corev1.ConfigMap) error {
				if cm.Data["a"] != "updated" {
					return fmt.Errorf("data %v, want a=updated", cm.Data)
				}
				return nil
			},
			strategic: []byte(`{"data":{"b":"patched"}}`),
			patched: func(cm *corev1.ConfigMap) error {
				if cm.Data["a"] != "updated" || cm.Data["b"] != "patched" {
					return fmt.Errorf("data %v, want a=updated b=patched", cm.Data)
				}
				return nil
			},
			apply: func(name string) *corev1ac.ConfigMapApplyConfiguration {
				return corev1ac.ConfigMap(name, ns).WithLabels(map[string]string{"applied": "yes"})
			},
		})
	})
	t.Run("pods", func(t *testing.T) {
		runCRUD(t, crudCase[*corev1.Pod, *corev1.PodList, *corev1ac.PodApplyConfiguration]{
			client: cs.CoreV1().Pods(ns),
			newObj: func(name string, labels map[string]string) *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
					Spec:       corev1.PodSpec{Containers: twoContainers()},
				}
			},
			update: func(p *corev1.Pod) { p.Labels["updated"] = "yes" },
			updated: func(p *corev1.Pod) error {
				if p.Labels["updated"] != "yes" {
					return fmt.Errorf("labels %v, want updated=yes", p.Labels)
				}
				return nil
			},
			strategic: []byte(containersPatch),
			patched:   func(p *corev1.Pod) error { return containersPatched(p.Spec.Containers) },
			apply: func(name string) *corev1ac.PodApplyConfiguration {
				return corev1ac.Pod(name, ns).WithLabels(map[string]string{"applied": "yes"}).
					WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("registry.k8s.io/pause:3.9")))
			},
		})
	})
	t.Run("deployments", func(t *testing.T) {
		runCRUD(t, crudCase[*appsv1.Deployment, *appsv1.DeploymentList, *appsv1ac.DeploymentApplyConfiguration]{
			client: cs.AppsV1().Deployments(ns),
			newObj: func(name string, labels map[string]string) *appsv1.Deployment {
				return newDeployment(name, labels)
			},
			update: func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](2) },
			updated: func(d *appsv1.Deployment) error {
				if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
					return fmt.Errorf("replicas %v, want 2", d.Spec.Replicas)
				}
				return nil
			},
			strategic: []byte(`{"spec":{"template":` + containersPatch + `}}`),
			patched:   func(d *appsv1.Deployment) error { return containersPatched(d.Spec.Template.Spec.Containers) },
			apply: func(name string) *appsv1ac.DeploymentApplyConfiguration {
				return appsv1ac.Deployment(name, ns).WithLabels(map[string]string{"applied": "yes"}).
					WithSpec(appsv1ac.DeploymentSpec().
						WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": name})).
						WithTemplate(corev1ac.PodTemplateSpec().
							WithLabels(map[string]string{"app": name}).
							WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("main").WithImage("registry.k8s.io/pause:3.9")))))
			},
		})
	})
	t.Run("deployments-scale", func(t *testing.T) {
		ctx := testContext(t)
		d := cs.AppsV1().Deployments(ns)
		if _, err := d.Create(ctx, newDeployment("scaled", nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Create: %v", err)
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			scale, err := d.GetScale(ctx, "scaled", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("GetScale: %w", err)
			}
			if scale.Spec.Replicas != 1 {
				t.Fatalf("GetScale: replicas %d, want 1", scale.Spec.Replicas)
			}
			scale.Spec.Replicas = 3
			if _, err := d.UpdateScale(ctx, "scaled", scale, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("UpdateScale: %w", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Get(ctx, "scaled", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if *got.Spec.Replicas != 3 {
			t.Fatalf("replicas after UpdateScale: %d, want 3", *got.Spec.Replicas)
		}
	})
	t.Run("watch", func(t *testing.T) {
		ctx := testContext(t)
		cms := cs.CoreV1().ConfigMaps(ns)
		sel := metav1.ListOptions{LabelSelector: "compat=watch"}
		list, err := cms.List(ctx, sel)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		sel.ResourceVersion = list.ResourceVersion
		w, err := cms.Watch(ctx, sel)
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		defer w.Stop()
		cm, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "watched", Labels: map[string]string{"compat": "watch"}},
			Data:       map[string]string{"v": "1"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("Create: %v", err)
		}
		expectEvent(t, w, watch.Added, cm.ResourceVersion, "1")
		cm.Data["v"] = "2"
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("Update: %v", err)
		}
		expectEvent(t, w, watch.Modified, cm.ResourceVersion, "2")
		if err := cms.Delete(ctx, "watched", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		expectEvent(t, w, watch.Deleted, "", "2")
	})
}

// expectEvent reads the next event of w: its type, and for a ConfigMap named
// watched its data v (and resourceVersion, unless rv is empty).
func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, rv, v string) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed, want %s", typ)
		}
		cm, isCM := ev.Object.(*corev1.ConfigMap)
		if ev.Type != typ || !isCM {
			t.Fatalf("watch event %s %T (%v), want %s of a ConfigMap", ev.Type, ev.Object, ev.Object, typ)
		}
		if cm.Name != "watched" || cm.Data["v"] != v || (rv != "" && cm.ResourceVersion != rv) {
			t.Fatalf("%s event: %s data %v resourceVersion %s, want watched v=%s resourceVersion %s", typ, cm.Name, cm.Data, cm.ResourceVersion, v, rv)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s event within 10s", typ)
	}
}

func newDeployment(name string, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: twoContainers()},
			},
		},
	}
}
