package controllerutil_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	appsv1 "github.com/kapi-dev/kapi/api/apps/v1"
	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/fake"
)

type writeFunc func(context.Context, client.Resource[corev1.ConfigMap], *corev1.ConfigMap, controllerutil.MutateFunc[corev1.ConfigMap]) (controllerutil.OperationResult, error)

func TestCreateOrUpdateAndPatch(t *testing.T) {
	boom := errors.New("boom")
	setMode := func(mode string) controllerutil.MutateFunc[corev1.ConfigMap] {
		return func(cm *corev1.ConfigMap) error {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data["mode"] = mode
			return nil
		}
	}
	type write struct {
		name string
		fn   writeFunc
		// changed is the result and the verbs when the object exists and
		// changes.
		changed controllerutil.OperationResult
		verbs   []string
	}
	writes := []write{
		{"CreateOrUpdate", controllerutil.CreateOrUpdate[corev1.ConfigMap], controllerutil.Updated, []string{"get", "update"}},
		{"CreateOrPatch", controllerutil.CreateOrPatch[corev1.ConfigMap], controllerutil.Patched, []string{"get", "patch"}},
	}
	tests := []struct {
		name   string
		seed   bool // the object exists, with data mode=slow, owner=x
		mutate controllerutil.MutateFunc[corev1.ConfigMap]

		changed    bool // want the write's changed result and verbs
		wantResult controllerutil.OperationResult
		wantVerbs  []string
		wantData   map[string]string // on the server; nil for no object
		wantErr    func(error) bool
	}{
		{name: "absent: created", mutate: setMode("fast"),
			wantResult: controllerutil.Created, wantVerbs: []string{"get", "create"}, wantData: map[string]string{"mode": "fast"}},
		{name: "present, changed", seed: true, mutate: setMode("fast"), changed: true,
			wantData: map[string]string{"mode": "fast", "owner": "x"}},
		{name: "present, unchanged: no write", seed: true, mutate: setMode("slow"),
			wantResult: controllerutil.Unchanged, wantVerbs: []string{"get"}, wantData: map[string]string{"mode": "slow", "owner": "x"}},
		{name: "mutate fails: no write", seed: true, mutate: func(*corev1.ConfigMap) error { return boom },
			wantResult: controllerutil.Unchanged, wantVerbs: []string{"get"}, wantData: map[string]string{"mode": "slow", "owner": "x"},
			wantErr: func(err error) bool { return errors.Is(err, boom) }},
		{name: "mutate renames: refused", seed: true, mutate: func(cm *corev1.ConfigMap) error { cm.Name = "other"; return nil },
			wantResult: controllerutil.Unchanged, wantVerbs: []string{"get"}, wantData: map[string]string{"mode": "slow", "owner": "x"},
			wantErr: func(err error) bool {
				var ke *controllerutil.KeyChangedError
				return errors.As(err, &ke) && ke.Field == "name" && ke.After == "other"
			}},
		{name: "mutate moves a new object: refused", mutate: func(cm *corev1.ConfigMap) error { cm.Namespace = "db"; return nil },
			wantResult: controllerutil.Unchanged, wantVerbs: []string{"get"},
			wantErr: func(err error) bool {
				var ke *controllerutil.KeyChangedError
				return errors.As(err, &ke) && ke.Field == "namespace" && ke.Before == "web"
			}},
	}
	for _, w := range writes {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				ctx := testContext(t)
				seeds := []any{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web"}}}
				if tt.seed {
					seeds = append(seeds, configMap("web", "settings", "mode", "slow", "owner", "x"))
				}
				f := fake.New(t, seeds...)
				f.ClearActions()
				cms := client.For[corev1.ConfigMap](f.Client())
				obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "settings"}}
				result, err := w.fn(ctx, cms, obj, tt.mutate)
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !tt.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				wantResult, wantVerbs := tt.wantResult, tt.wantVerbs
				if tt.changed {
					wantResult, wantVerbs = w.changed, w.verbs
				}
				if result != wantResult {
					t.Errorf("result = %q, want %q", result, wantResult)
				}
				if got := verbs(f); !slices.Equal(got, wantVerbs) {
					t.Errorf("requests %v, want %v", got, wantVerbs)
				}
				got, err := client.For[corev1.ConfigMap](f.Client()).Namespace("web").Get(ctx, "settings", metav1.GetOptions{})
				if tt.wantData == nil {
					if !client.IsNotFound(err) {
						t.Fatalf("an object was written: %v", got)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(got.Data, tt.wantData) {
					t.Errorf("server data = %v, want %v", got.Data, tt.wantData)
				}
				if tt.wantErr == nil && (obj.ResourceVersion != got.ResourceVersion || obj.UID == "") {
					t.Errorf("obj is not the server's answer: rv %q uid %q, server rv %q", obj.ResourceVersion, obj.UID, got.ResourceVersion)
				}
			})
		}
	}
}

// TestCreateOrUpdateReadFails: an error reading the object other than
// NotFound is returned before mutate runs.
func TestCreateOrUpdateReadFails(t *testing.T) {
	for _, w := range []writeFunc{controllerutil.CreateOrUpdate[corev1.ConfigMap], controllerutil.CreateOrPatch[corev1.ConfigMap]} {
		ctx := testContext(t)
		f := fake.New(t)
		f.PrependReactor("get", "configmaps", func(a fake.Action) (bool, any, error) {
			return true, nil, client.NewStatusError(metav1.NewForbidden(metav1.GroupResource{Resource: "configmaps"}, a.Name, errors.New("no")))
		})
		ran := false
		_, err := w(ctx, client.For[corev1.ConfigMap](f.Client()), configMap("web", "settings"),
			func(*corev1.ConfigMap) error { ran = true; return nil })
		if !client.IsForbidden(err) || ran {
			t.Errorf("err = %v, mutate ran: %v", err, ran)
		}
	}
}

// TestCreateOrPatchSendsOnlyTheChange: the patch holds what mutate changed,
// so a field another writer set after the read is kept, where Update would
// have failed with a Conflict.
func TestCreateOrPatchSendsOnlyTheChange(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, configMap("web", "settings", "mode", "slow", "owner", "x"))
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	f.ClearActions()
	obj := configMap("web", "settings")
	result, err := controllerutil.CreateOrPatch(ctx, cms, obj, func(cm *corev1.ConfigMap) error {
		// Another writer changes the object between our read and our patch.
		other, err := cms.Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err
		}
		other.Data["owner"] = "y"
		if _, err := cms.Update(ctx, other, metav1.UpdateOptions{}); err != nil {
			return err
		}
		cm.Data["mode"] = "fast"
		delete(cm.Data, "unset")
		return nil
	})
	if err != nil || result != controllerutil.Patched {
		t.Fatalf("result %q, err %v", result, err)
	}
	acts := f.Actions()
	last := acts[len(acts)-1]
	var patch map[string]any
	if err := json.Unmarshal(last.Body, &patch); err != nil || last.ContentType != string(client.MergePatchType) {
		t.Fatalf("last request %s %s: %v", last, last.ContentType, err)
	}
	if want := map[string]any{"data": map[string]any{"mode": "fast"}}; !reflect.DeepEqual(patch, want) {
		t.Errorf("patch = %v, want %v", patch, want)
	}
	if want := map[string]string{"mode": "fast", "owner": "y"}; !maps.Equal(obj.Data, want) {
		t.Errorf("data = %v, want %v", obj.Data, want)
	}
}

func deployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			},
		},
	}
}

// TestCreateOrPatchStatus: a status change goes to the status subresource
// (which the main patch would silently drop).
func TestCreateOrPatchStatus(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*appsv1.Deployment)
		wantResult controllerutil.OperationResult
		wantVerbs  []string
		wantRepl   int32
	}{
		{"status only", func(d *appsv1.Deployment) { d.Status.ObservedGeneration = 7 },
			controllerutil.PatchedStatusOnly, []string{"get", "patch/status"}, 1},
		{"spec and status", func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(3)); d.Status.ObservedGeneration = 7 },
			controllerutil.Patched, []string{"get", "patch", "patch/status"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			f := fake.New(t, deployment(1))
			f.ClearActions()
			deps := client.For[appsv1.Deployment](f.Client())
			obj := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "web"}}
			result, err := controllerutil.CreateOrPatch(ctx, deps, obj, func(d *appsv1.Deployment) error { tt.mutate(d); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if result != tt.wantResult {
				t.Errorf("result = %q, want %q", result, tt.wantResult)
			}
			if got := verbs(f); !slices.Equal(got, tt.wantVerbs) {
				t.Errorf("requests %v, want %v", got, tt.wantVerbs)
			}
			got, err := deps.Namespace("web").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.ObservedGeneration != 7 || *got.Spec.Replicas != tt.wantRepl {
				t.Errorf("server: observedGeneration %d, replicas %d", got.Status.ObservedGeneration, *got.Spec.Replicas)
			}
			if obj.Status.ObservedGeneration != 7 || obj.ResourceVersion != got.ResourceVersion {
				t.Errorf("obj is not the last answer")
			}
		})
	}
}

// TestCreateOrUpdateConflict: a Conflict on update is returned, and
// RetryOnConflict around CreateOrUpdate reads afresh and succeeds.
func TestCreateOrUpdateConflict(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t, configMap("web", "settings", "mode", "slow"))
	cms := client.For[corev1.ConfigMap](f.Client())
	conflicts := 2
	f.PrependReactor("update", "configmaps", func(a fake.Action) (bool, any, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, conflict(a)
	})
	mutate := func(cm *corev1.ConfigMap) error { cm.Data["mode"] = "fast"; return nil }
	_, err := controllerutil.CreateOrUpdate(ctx, cms, configMap("web", "settings"), mutate)
	if !client.IsConflict(err) {
		t.Fatalf("err = %v, want a Conflict", err)
	}
	f.ClearActions()
	var result controllerutil.OperationResult
	err = controllerutil.RetryOnConflict(ctx, controllerutil.Backoff{Clock: &instantClock{}}, func() error {
		result, err = controllerutil.CreateOrUpdate(ctx, cms, configMap("web", "settings"), mutate)
		return err
	})
	if err != nil || result != controllerutil.Updated {
		t.Fatalf("result %q, err %v", result, err)
	}
	if got, want := verbs(f), []string{"get", "update", "get", "update"}; !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}
