package controllerutil_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "github.com/kapi-dev/kapi/api/core/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/controllerutil"
	"github.com/kapi-dev/kapi/fake"
)

const fin = "example.com/cleanup"

// seedFinalized starts a Fake holding the ConfigMap web/settings with
// finalizers, deleted (and so held by them) when deleting, and returns the
// Fake, the ConfigMaps of "web" and the object as read.
func seedFinalized(t *testing.T, finalizers []string, deleting bool, data ...string) (*fake.Fake, client.Resource[corev1.ConfigMap], *corev1.ConfigMap) {
	t.Helper()
	ctx := testContext(t)
	cm := configMap("web", "settings", data...)
	cm.Finalizers = finalizers
	f := fake.New(t, cm)
	cms := client.For[corev1.ConfigMap](f.Client()).Namespace("web")
	if deleting {
		if err := cms.Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := cms.Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f, cms, obj
}

// calls records the events a reconcile function saw.
type calls struct {
	events     []controllerutil.EventType
	finalizers [][]string // the object's finalizers at each event
	err        error      // returned by the reconcile function
}

func (c *calls) reconcile(_ context.Context, ev controllerutil.Event[corev1.ConfigMap]) (string, error) {
	c.events = append(c.events, ev.Type)
	c.finalizers = append(c.finalizers, ev.Object.Finalizers)
	if c.err != nil {
		return "", c.err
	}
	return ev.Type.String() + " done", nil
}

func TestFinalize(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		finalizers []string
		deleting   bool
		fnErr      error

		wantEvents     []controllerutil.EventType
		wantSeen       []string // finalizers the event's object had
		wantResult     string
		wantStep       controllerutil.FinalizerStep // "" for no error
		wantFinalizers []string                     // on the server; nil with wantGone
		wantGone       bool
		wantPatches    int
	}{
		{
			name:       "not deleting, no finalizer: added, then Apply",
			wantEvents: []controllerutil.EventType{controllerutil.Apply}, wantSeen: []string{fin},
			wantResult: "Apply done", wantFinalizers: []string{fin}, wantPatches: 1,
		},
		{
			name:       "not deleting, another finalizer: ours appended",
			finalizers: []string{"other.io/x"},
			wantEvents: []controllerutil.EventType{controllerutil.Apply}, wantSeen: []string{"other.io/x", fin},
			wantResult: "Apply done", wantFinalizers: []string{"other.io/x", fin}, wantPatches: 1,
		},
		{
			name:       "not deleting, finalizer present: Apply only",
			finalizers: []string{fin},
			wantEvents: []controllerutil.EventType{controllerutil.Apply}, wantSeen: []string{fin},
			wantResult: "Apply done", wantFinalizers: []string{fin},
		},
		{
			name:       "apply fails: the finalizer stays",
			fnErr:      boom,
			wantEvents: []controllerutil.EventType{controllerutil.Apply}, wantSeen: []string{fin},
			wantStep: controllerutil.StepApply, wantFinalizers: []string{fin}, wantPatches: 1,
		},
		{
			name:       "deleting with our finalizer only: Cleanup, removed, the object goes",
			finalizers: []string{fin}, deleting: true,
			wantEvents: []controllerutil.EventType{controllerutil.Cleanup}, wantSeen: []string{fin},
			wantResult: "Cleanup done", wantGone: true, wantPatches: 1,
		},
		{
			name:       "deleting with ours among others: only ours removed",
			finalizers: []string{"other.io/x", fin, "other.io/y"}, deleting: true,
			wantEvents: []controllerutil.EventType{controllerutil.Cleanup}, wantSeen: []string{"other.io/x", fin, "other.io/y"},
			wantResult: "Cleanup done", wantFinalizers: []string{"other.io/x", "other.io/y"}, wantPatches: 1,
		},
		{
			name:       "cleanup fails: the finalizer stays",
			finalizers: []string{"other.io/x", fin}, deleting: true, fnErr: boom,
			wantEvents: []controllerutil.EventType{controllerutil.Cleanup}, wantSeen: []string{"other.io/x", fin},
			wantStep: controllerutil.StepCleanup, wantFinalizers: []string{"other.io/x", fin},
		},
		{
			name:       "deleting without our finalizer: nothing runs",
			finalizers: []string{"other.io/x"}, deleting: true,
			wantFinalizers: []string{"other.io/x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			f, cms, obj := seedFinalized(t, tt.finalizers, tt.deleting, "k", "v")
			f.ClearActions()

			c := &calls{err: tt.fnErr}
			// The Resource given is for all namespaces: Finalize uses the object's.
			res, err := controllerutil.Finalize(ctx, client.For[corev1.ConfigMap](f.Client()), fin, obj, c.reconcile)

			var fe *controllerutil.FinalizerError
			switch {
			case tt.wantStep == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantStep != "" && (!errors.As(err, &fe) || fe.Step != tt.wantStep || !errors.Is(err, tt.fnErr)):
				t.Fatalf("err = %v, want a FinalizerError at step %q wrapping %v", err, tt.wantStep, tt.fnErr)
			}
			if res != tt.wantResult {
				t.Errorf("result = %q, want %q", res, tt.wantResult)
			}
			if !slices.Equal(c.events, tt.wantEvents) {
				t.Errorf("events = %v, want %v", c.events, tt.wantEvents)
			}
			if len(c.finalizers) > 0 && !slices.Equal(c.finalizers[0], tt.wantSeen) {
				t.Errorf("the event's object had finalizers %q, want %q", c.finalizers[0], tt.wantSeen)
			}
			patches := 0
			for _, a := range f.Actions() {
				if a.Verb == "patch" {
					patches++
				}
			}
			if patches != tt.wantPatches {
				t.Errorf("%d patches (%v), want %d", patches, verbs(f), tt.wantPatches)
			}
			got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
			switch {
			case tt.wantGone:
				if !client.IsNotFound(err) {
					t.Fatalf("the object is still there (%v, %v)", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case !slices.Equal(got.Finalizers, tt.wantFinalizers):
				t.Errorf("server finalizers = %q, want %q", got.Finalizers, tt.wantFinalizers)
			}
		})
	}
}

// TestFinalizeStale: a Finalize working from an object read before another
// writer changed the finalizers is refused by the server rather than
// overwriting the change (or adding our finalizer twice).
func TestFinalizeStale(t *testing.T) {
	tests := []struct {
		name       string
		finalizers []string
		deleting   bool
		// change is what another writer does after obj was read.
		change         func(*corev1.ConfigMap)
		wantStep       controllerutil.FinalizerStep
		wantFinalizers []string
	}{
		{
			name:     "adding the first finalizer after another writer added one",
			change:   func(cm *corev1.ConfigMap) { cm.Finalizers = []string{"other.io/x"} },
			wantStep: controllerutil.StepAddFinalizer, wantFinalizers: []string{"other.io/x"},
		},
		{
			name:       "adding ours after another writer added it already",
			finalizers: []string{"other.io/x"},
			change:     func(cm *corev1.ConfigMap) { cm.Finalizers = []string{"other.io/x", fin} },
			wantStep:   controllerutil.StepAddFinalizer, wantFinalizers: []string{"other.io/x", fin},
		},
		{
			name:       "removing ours after the list was reordered",
			finalizers: []string{fin, "other.io/x"}, deleting: true,
			change:   func(cm *corev1.ConfigMap) { cm.Finalizers = []string{"other.io/x", fin} },
			wantStep: controllerutil.StepRemoveFinalizer, wantFinalizers: []string{"other.io/x", fin},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			_, cms, stale := seedFinalized(t, tt.finalizers, tt.deleting)
			fresh := *stale
			tt.change(&fresh)
			if _, err := cms.Update(ctx, &fresh, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}

			c := &calls{}
			_, err := controllerutil.Finalize(ctx, cms, fin, stale, c.reconcile)
			var fe *controllerutil.FinalizerError
			if !errors.As(err, &fe) || fe.Step != tt.wantStep || !client.IsInvalid(err) {
				t.Fatalf("err = %v, want a 422 at step %q", err, tt.wantStep)
			}
			got, err := cms.Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Finalizers, tt.wantFinalizers) {
				t.Errorf("server finalizers = %q, want %q", got.Finalizers, tt.wantFinalizers)
			}
		})
	}
}

func TestFinalizeRefuses(t *testing.T) {
	ctx := testContext(t)
	f := fake.New(t)
	cms := client.For[corev1.ConfigMap](f.Client())
	c := &calls{}
	for name, tc := range map[string]struct {
		fin string
		obj *corev1.ConfigMap
	}{
		"no finalizer name":  {"", configMap("web", "x")},
		"no object name":     {fin, configMap("web", "")},
		"no resourceVersion": {fin, configMap("web", "x")},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := controllerutil.Finalize(ctx, cms, tc.fin, tc.obj, c.reconcile)
			var fe *controllerutil.FinalizerError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	if len(c.events) != 0 || len(f.Actions()) != 0 {
		t.Errorf("events %v, actions %v", c.events, verbs(f))
	}
}

// TestFinalizeServerAnswers: the answers of the finalizer patches are
// reported (a Conflict stays a Conflict), except NotFound on removal: the
// object is gone, which is what removing the finalizer was for.
func TestFinalizeServerAnswers(t *testing.T) {
	notFound := func(a fake.Action) (bool, any, error) {
		return true, nil, client.NewStatusError(metav1.NewNotFound(metav1.GroupResource{Resource: "configmaps"}, a.Name))
	}
	tests := []struct {
		name       string
		finalizers []string
		deleting   bool
		react      fake.ReactionFunc
		wantStep   controllerutil.FinalizerStep
		wantErr    func(error) bool
		wantEvents []controllerutil.EventType
	}{
		{"conflict adding", nil, false,
			func(a fake.Action) (bool, any, error) { return true, nil, conflict(a) },
			controllerutil.StepAddFinalizer, client.IsConflict, nil},
		{"conflict removing", []string{fin}, true,
			func(a fake.Action) (bool, any, error) { return true, nil, conflict(a) },
			controllerutil.StepRemoveFinalizer, client.IsConflict, []controllerutil.EventType{controllerutil.Cleanup}},
		{"gone when removing", []string{fin}, true, notFound,
			"", nil, []controllerutil.EventType{controllerutil.Cleanup}},
		{"gone when adding", nil, false, notFound,
			controllerutil.StepAddFinalizer, client.IsNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			f, cms, obj := seedFinalized(t, tt.finalizers, tt.deleting)
			f.PrependReactor("patch", "configmaps", tt.react)
			c := &calls{}
			_, err := controllerutil.Finalize(ctx, cms, fin, obj, c.reconcile)
			var fe *controllerutil.FinalizerError
			switch {
			case tt.wantStep == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantStep != "" && (!errors.As(err, &fe) || fe.Step != tt.wantStep || !tt.wantErr(err)):
				t.Fatalf("err = %v, want step %q", err, tt.wantStep)
			}
			if !slices.Equal(c.events, tt.wantEvents) {
				t.Errorf("events = %v, want %v", c.events, tt.wantEvents)
			}
		})
	}
}
