package controllerutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// EventType says what [Finalize] asks the reconcile function to do.
type EventType int

const (
	// Apply: the object is not being deleted and carries the finalizer;
	// bring the world in line with it.
	Apply EventType = iota + 1
	// Cleanup: the object is being deleted and still carries the finalizer;
	// release what it holds. The finalizer is removed only once Cleanup
	// returns no error, so Cleanup must be idempotent: it runs again after
	// an error, or when the removal itself fails.
	Cleanup
)

// String returns "Apply" or "Cleanup".
func (t EventType) String() string {
	switch t {
	case Apply:
		return "Apply"
	case Cleanup:
		return "Cleanup"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is what [Finalize] hands the reconcile function: the event and the
// object, as last written (with the finalizer when Finalize just added it).
type Event[T any] struct {
	Type   EventType
	Object *T
}

// FinalizerStep names the step of [Finalize] that failed.
type FinalizerStep string

const (
	// StepAddFinalizer: the patch adding the finalizer failed.
	StepAddFinalizer FinalizerStep = "add finalizer"
	// StepApply: the reconcile function failed on an Apply event.
	StepApply FinalizerStep = "apply"
	// StepCleanup: the reconcile function failed on a Cleanup event; the
	// finalizer was kept.
	StepCleanup FinalizerStep = "cleanup"
	// StepRemoveFinalizer: cleanup succeeded but the patch removing the
	// finalizer failed; the next call runs Cleanup again.
	StepRemoveFinalizer FinalizerStep = "remove finalizer"
)

// FinalizerError is the error of [Finalize]: which step failed, on which
// object, and why (Err, which errors.Is and errors.As see through, so that
// client.IsConflict or the reconcile function's own errors still match).
//
// A patch of the finalizers is guarded by a JSON patch test operation (the
// finalizers, or the resourceVersion, that the object had when read): when
// the object changed in between, the server refuses it with a 422 Invalid
// error instead of overwriting a concurrent change, and the caller retries
// with a fresh object (a controller requeues).
type FinalizerError struct {
	Step      FinalizerStep
	Finalizer string
	// Object names the object, as "namespace/name" or "name".
	Object string
	Err    error
}

// Error says which step failed on which object.
func (e *FinalizerError) Error() string {
	return fmt.Sprintf("controllerutil: finalizer %s on %s: %s: %v", e.Finalizer, e.Object, e.Step, e.Err)
}

// Unwrap returns the cause.
func (e *FinalizerError) Unwrap() error { return e.Err }

// Finalize runs reconcile under a finalizer, as kube-rs's finalizer():
//
//   - obj is not being deleted: the finalizer is added (a patch) when
//     missing, then reconcile runs with an Apply event;
//   - obj is being deleted and has the finalizer: reconcile runs with a
//     Cleanup event, and when it succeeds the finalizer is removed (a
//     patch), which lets the deletion go on;
//   - obj is being deleted without the finalizer: nothing runs (the
//     cleanup is done, or never was needed), and Finalize returns R's zero
//     value.
//
// Finalize returns what reconcile returns (R is typically controller.Result,
// so that Finalize is a reconciler's last line), or an [*FinalizerError]. res is the resource
// obj belongs to, in any namespace (obj's own is used); obj is not
// modified. The patches change only this finalizer and are refused when
// the finalizers changed since obj was read (see FinalizerError), so
// another controller's finalizer is never lost nor ours added twice. An
// object that is already gone when the finalizer is removed is not an
// error.
func Finalize[T any, PT client.ObjectPtr[T], R any](ctx context.Context, res client.Resource[T], finalizer string, obj PT,
	reconcile func(context.Context, Event[T]) (R, error)) (R, error) {
	var zero R
	ferr := func(step FinalizerStep, err error) (R, error) {
		return zero, &FinalizerError{Step: step, Finalizer: finalizer, Object: objectName(obj), Err: err}
	}
	if finalizer == "" {
		return ferr(StepAddFinalizer, errors.New("the finalizer has no name"))
	}
	if obj.GetName() == "" {
		return ferr(StepAddFinalizer, errors.New("the object has no name"))
	}
	res = res.Namespace(obj.GetNamespace())
	finalizers := obj.GetFinalizers()
	i := slices.Index(finalizers, finalizer)
	switch {
	case obj.GetDeletionTimestamp() == nil:
		cur := (*T)(obj)
		if i < 0 {
			patch, err := addFinalizerPatch(obj, finalizer)
			if err != nil {
				return ferr(StepAddFinalizer, err)
			}
			if cur, err = res.Patch(ctx, obj.GetName(), client.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return ferr(StepAddFinalizer, err)
			}
		}
		r, err := reconcile(ctx, Event[T]{Type: Apply, Object: cur})
		if err != nil {
			return ferr(StepApply, err)
		}
		return r, nil
	case i < 0:
		return zero, nil
	default:
		r, err := reconcile(ctx, Event[T]{Type: Cleanup, Object: obj})
		if err != nil {
			return ferr(StepCleanup, err)
		}
		path := "/metadata/finalizers/" + strconv.Itoa(i)
		patch, err := json.Marshal([]jsonPatchOp{
			{Op: "test", Path: path, Value: finalizer},
			{Op: "remove", Path: path},
		})
		if err != nil {
			return ferr(StepRemoveFinalizer, err)
		}
		if _, err := res.Patch(ctx, obj.GetName(), client.JSONPatchType, patch, metav1.PatchOptions{}); err != nil && !client.IsNotFound(err) {
			return ferr(StepRemoveFinalizer, err)
		}
		return r, nil
	}
}

type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// addFinalizerPatch appends finalizer to obj's finalizers if they are still
// those obj has; when obj has none, it sets them if obj's resourceVersion is
// still the server's (an absent list and an empty one cannot be told apart
// in a Go object, so the list itself cannot be tested).
func addFinalizerPatch(obj metav1.Object, finalizer string) ([]byte, error) {
	if f := obj.GetFinalizers(); len(f) > 0 {
		return json.Marshal([]jsonPatchOp{
			{Op: "test", Path: "/metadata/finalizers", Value: f},
			{Op: "add", Path: "/metadata/finalizers/-", Value: finalizer},
		})
	}
	rv := obj.GetResourceVersion()
	if rv == "" {
		return nil, errors.New("the object has no resourceVersion (read it from the server first)")
	}
	return json.Marshal([]jsonPatchOp{
		{Op: "test", Path: "/metadata/resourceVersion", Value: rv},
		{Op: "add", Path: "/metadata/finalizers", Value: []string{finalizer}},
	})
}
