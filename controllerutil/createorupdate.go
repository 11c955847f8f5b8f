package controllerutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// OperationResult says what [CreateOrUpdate] or [CreateOrPatch] did.
type OperationResult string

const (
	// Unchanged: the object existed and mutate changed nothing; nothing
	// was written.
	Unchanged OperationResult = "unchanged"
	// Created: the object did not exist and was created.
	Created OperationResult = "created"
	// Updated: the object existed and was replaced (CreateOrUpdate).
	Updated OperationResult = "updated"
	// Patched: the object existed and was patched (CreateOrPatch); its
	// status, if mutate changed it, too.
	Patched OperationResult = "patched"
	// PatchedStatusOnly: the object existed and mutate changed only its
	// status, which was patched through the status subresource
	// (CreateOrPatch).
	PatchedStatusOnly OperationResult = "patchedStatusOnly"
)

// MutateFunc sets the state the caller wants on an object: on the object
// read from the server, or on the caller's object when there is none. It
// must not change the object's name or namespace.
type MutateFunc[T any] func(*T) error

// KeyChangedError is the error of a mutate function that changed the name
// or the namespace of the object it was given: CreateOrUpdate and
// CreateOrPatch write the object they read, and would otherwise create or
// change another one.
type KeyChangedError struct {
	// Field is "name" or "namespace".
	Field string
	// Before and After are its values before and after mutate.
	Before, After string
}

// Error names the field.
func (e *KeyChangedError) Error() string {
	return fmt.Sprintf("controllerutil: mutate changed the object's %s from %q to %q; it must not change the name or namespace",
		e.Field, e.Before, e.After)
}

// mutate runs f on obj and checks it kept obj's name and namespace.
func mutate[T any, PT client.ObjectPtr[T]](f MutateFunc[T], obj PT, name, ns string) error {
	if err := f((*T)(obj)); err != nil {
		return err
	}
	if obj.GetName() != name {
		return &KeyChangedError{Field: "name", Before: name, After: obj.GetName()}
	}
	if obj.GetNamespace() != ns {
		return &KeyChangedError{Field: "namespace", Before: ns, After: obj.GetNamespace()}
	}
	return nil
}

// CreateOrUpdate reads the object obj names (by its name and namespace)
// into obj, and has mutate set the state the caller wants on it: when the
// object does not exist, obj itself is mutated and created; when mutate
// changed it (compared as JSON, so that only changes the server would see
// count), it is updated with the resourceVersion it was read at, and a
// concurrent change fails with a Conflict (wrap the call in
// [RetryOnConflict] to retry from a fresh read). obj holds the server's
// answer on success.
//
// mutate should set fields, not build a new object: it runs on the object
// the server has, and what it does not set is written back as read. Status
// is not written by Create or Update for kinds with a status subresource
// (use UpdateStatus, or CreateOrPatch for existing objects).
func CreateOrUpdate[T any, PT client.ObjectPtr[T]](ctx context.Context, res client.Resource[T], obj PT, f MutateFunc[T]) (OperationResult, error) {
	res = res.Namespace(obj.GetNamespace())
	result, before, after, err := readAndMutate(ctx, res, obj, f)
	if err != nil || result == Created || bytes.Equal(before, after) {
		return result, err
	}
	out, err := res.Update(ctx, (*T)(obj), metav1.UpdateOptions{})
	if err != nil {
		return Unchanged, err
	}
	*obj = *out
	return Updated, nil
}

// readAndMutate reads the object obj names into obj and mutates it,
// returning its JSON before and after; when there is none, it mutates and
// creates obj and returns Created.
func readAndMutate[T any, PT client.ObjectPtr[T]](ctx context.Context, res client.Resource[T], obj PT, f MutateFunc[T]) (result OperationResult, before, after []byte, err error) {
	name, ns := obj.GetName(), obj.GetNamespace()
	cur, err := res.Get(ctx, name, metav1.GetOptions{})
	if client.IsNotFound(err) {
		result, err := create(ctx, res, obj, f, name, ns)
		return result, nil, nil, err
	}
	if err != nil {
		return Unchanged, nil, nil, err
	}
	*obj = *cur
	if before, err = kjson.Marshal(obj); err != nil {
		return Unchanged, nil, nil, err
	}
	if err := mutate(f, obj, name, ns); err != nil {
		return Unchanged, nil, nil, err
	}
	if after, err = kjson.Marshal(obj); err != nil {
		return Unchanged, nil, nil, err
	}
	return Unchanged, before, after, nil
}

func create[T any, PT client.ObjectPtr[T]](ctx context.Context, res client.Resource[T], obj PT, f MutateFunc[T], name, ns string) (OperationResult, error) {
	if err := mutate(f, obj, name, ns); err != nil {
		return Unchanged, err
	}
	out, err := res.Create(ctx, (*T)(obj), metav1.CreateOptions{})
	if err != nil {
		return Unchanged, err
	}
	*obj = *out
	return Created, nil
}

// CreateOrPatch is CreateOrUpdate with a JSON merge patch of what mutate
// changed instead of an update: only the fields mutate changed are sent, so
// fields other writers set meanwhile are kept, and no resourceVersion is
// needed. When mutate changed the status, that part of the difference is
// patched through the status subresource (which the main patch would
// ignore for kinds that have one), after the rest; a kind without a status
// subresource then fails with NotFound.
//
// As with CreateOrUpdate, a new object is created as mutate left it (the
// server ignores the status of a create for kinds with a status
// subresource).
func CreateOrPatch[T any, PT client.ObjectPtr[T]](ctx context.Context, res client.Resource[T], obj PT, f MutateFunc[T]) (OperationResult, error) {
	name := obj.GetName()
	res = res.Namespace(obj.GetNamespace())
	result, before, after, err := readAndMutate(ctx, res, obj, f)
	if err != nil || result == Created {
		return result, err
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return Unchanged, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(patch, &fields); err != nil {
		return Unchanged, err
	}
	status, hasStatus := fields["status"]
	delete(fields, "status")
	if len(fields) > 0 {
		main, err := json.Marshal(fields)
		if err != nil {
			return Unchanged, err
		}
		out, err := res.Patch(ctx, name, client.MergePatchType, main, metav1.PatchOptions{})
		if err != nil {
			return Unchanged, err
		}
		*obj = *out
		result = Patched
	}
	if hasStatus {
		sp, err := json.Marshal(map[string]json.RawMessage{"status": status})
		if err != nil {
			return result, err
		}
		out, err := res.Patch(ctx, name, client.MergePatchType, sp, metav1.PatchOptions{}, "status")
		if err != nil {
			return result, err
		}
		*obj = *out
		if result == Unchanged {
			result = PatchedStatusOnly
		}
	}
	return result, nil
}
