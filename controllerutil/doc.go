// Package controllerutil holds the helpers a controller's reconcile
// function reaches for: owner references, finalizers and a finalizer flow,
// create-or-update and create-or-patch, and retry on conflict. They are
// generic over the object type and work with any [client.Resource], typed
// or dynamic. The names are controller-runtime's, the behaviour is better
// where theirs has known faults (each is said where it applies).
//
// # Owner references
//
// [SetControllerReference] makes an owner the controller of an object (the
// garbage collector deletes the object with its owner, and a controller's
// Owns finds the owner from it); [SetOwnerReference] adds a plain owner;
// [RemoveOwnerReference], [GetControllerOf], [HasControllerReference] and
// [IsControlledBy] read and remove them.
//
//	if err := controllerutil.SetControllerReference(cm, secret, controllerutil.OwnerOptions{}); err != nil {
//		return err // an *AlreadyOwnedError, or an *OwnerError
//	}
//
// The owner's apiVersion and kind come from the scheme ([OwnerOptions].Scheme,
// [client.DefaultScheme] by default), not from its TypeMeta, which objects
// read from the server usually lack. A second controller is refused with an
// [*AlreadyOwnedError]; references the garbage collector would ignore (an
// owner in another namespace, a namespaced owner of a cluster-scoped object,
// an owner without a uid) are refused with an [*OwnerError] instead of being
// written. blockOwnerDeletion is set only when asked for
// ([OwnerOptions].BlockOwnerDeletion), as it needs a permission many
// controllers lack.
//
// # Finalizers
//
// [AddFinalizer], [RemoveFinalizer] and [ContainsFinalizer] change and read
// an object in memory and report whether they changed it.
//
// [Finalize] is the whole flow, as kube-rs's finalizer(): it adds the
// finalizer to an object that is not being deleted and runs the reconcile
// function with an [Apply] event; on an object being deleted it runs it
// with a [Cleanup] event and removes the finalizer once cleanup succeeded.
// Its patches change only its finalizer and carry JSON patch test
// operations, so that a concurrent change of the finalizers (another
// controller's) is never overwritten: the server refuses the patch and the
// caller retries on a fresh object. Errors are [*FinalizerError]s saying
// which step failed.
//
// # Create or update
//
// [CreateOrUpdate] reads an object, lets a mutate function set what the
// caller wants on it, and creates it, updates it or leaves it alone,
// returning an [OperationResult] ([Created], [Updated], [Unchanged]).
// [CreateOrPatch] sends a JSON merge patch of what mutate changed instead
// ([Patched]), so fields another writer set meanwhile are kept; a change of
// the status goes to the status subresource ([PatchedStatusOnly] when it is
// the only change), where controller-runtime's first version silently lost
// it. A mutate function that renames or moves the object fails with a
// [*KeyChangedError] before anything is written.
//
// # Retry on conflict
//
// [RetryOnConflict] runs a read-modify-write function again while it fails
// with a Conflict, waiting as a [Backoff] says: its zero value is
// client-go's retry.DefaultRetry (5 attempts, 10ms apart, 10% jitter). It
// stops when its context ends, and takes a workqueue.Clock so tests need
// not wait.
package controllerutil
