package controllerutil

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/client"
)

// OwnerOptions says how owner references are made. The zero value looks
// kinds up in [client.DefaultScheme] and leaves blockOwnerDeletion unset.
type OwnerOptions struct {
	// Scheme is where the owner's (and the owned object's) Go type is looked
	// up for its apiVersion, kind and scope; nil means client.DefaultScheme().
	// Pass the scheme of the client that writes the objects
	// (client.Client.Scheme) when it is not the default one.
	Scheme *client.Scheme
	// BlockOwnerDeletion sets blockOwnerDeletion on the reference: a
	// foreground deletion of the owner then waits until the owned object is
	// gone. It is off by default because a server running the
	// OwnerReferencesPermissionEnforcement admission plugin (OpenShift does)
	// refuses it unless the writer may update the owner's finalizers, the
	// most common failure of controller-runtime's SetControllerReference,
	// which always sets it. Background deletion (the default) collects owned
	// objects either way.
	BlockOwnerDeletion bool
}

func (o OwnerOptions) scheme() *client.Scheme {
	if o.Scheme == nil {
		return client.DefaultScheme()
	}
	return o.Scheme
}

// AlreadyOwnedError is the error of [SetControllerReference] when the object
// already has a controller other than the owner: an object has at most one
// controller, and taking it over from another is a decision the caller
// makes (by removing the other reference first), not a side effect.
// Match it with errors.As.
type AlreadyOwnedError struct {
	// Object names the object, as "namespace/name" or "name".
	Object string
	// Owner is the controller reference the object already has.
	Owner metav1.OwnerReference
}

// Error names the object and its controller.
func (e *AlreadyOwnedError) Error() string {
	return fmt.Sprintf("controllerutil: %s is already controlled by %s %s (uid %s)",
		e.Object, e.Owner.Kind, e.Owner.Name, e.Owner.UID)
}

// OwnerError is the error of an owner reference the server would not honour:
// an owner without a name or uid, an owner whose kind is unknown, a
// cluster-scoped object with a namespaced owner, or an owner in another
// namespace. The garbage collector ignores (and reports as events) such
// references, so the owned object would never be collected; they are
// refused here instead.
type OwnerError struct {
	// Object names the owned object, as "namespace/name" or "name".
	Object string
	// Reason says what is wrong.
	Reason string
}

// Error says which object and why.
func (e *OwnerError) Error() string {
	return "controllerutil: cannot own " + e.Object + ": " + e.Reason
}

// kindInfo is what is known of an object's kind: its apiVersion and kind,
// and its scope when the scheme knows the Go type.
type kindInfo struct {
	apiVersion, kind string
	scopeKnown       bool
	namespaced       bool
}

// group returns the API group of the kind's apiVersion.
func (k kindInfo) group() string { return groupOf(k.apiVersion) }

func groupOf(apiVersion string) string {
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// typeMetaReader is an object that carries its own kind and apiVersion:
// unstructured.Unstructured, whose kind the scheme cannot know.
type typeMetaReader interface {
	GetAPIVersion() string
	GetKind() string
}

// typeMetaHolder is an object that embeds metav1.TypeMeta
// (PartialObjectMetadata, or a Go type the scheme does not hold).
type typeMetaHolder interface{ GetObjectKind() *metav1.TypeMeta }

// kindOf returns T's kind from the scheme; only for a type the scheme does
// not hold (unstructured objects, PartialObjectMetadata) does it read the
// object's own apiVersion and kind, which must then be set.
func kindOf[T any, PT client.ObjectPtr[T]](obj PT, s *client.Scheme) (kindInfo, error) {
	if k, ok := client.KindFor[T](s); ok {
		return kindInfo{apiVersion: k.APIVersion(), kind: k.Kind, scopeKnown: true, namespaced: k.Namespaced}, nil
	}
	var apiVersion, kind string
	switch o := any(obj).(type) {
	case typeMetaReader:
		apiVersion, kind = o.GetAPIVersion(), o.GetKind()
	case typeMetaHolder:
		tm := o.GetObjectKind()
		apiVersion, kind = tm.APIVersion, tm.Kind
	}
	if apiVersion == "" || kind == "" {
		return kindInfo{}, &client.NotRegisteredError{Type: reflect.TypeFor[T]()}
	}
	return kindInfo{apiVersion: apiVersion, kind: kind}, nil
}

func objectName(obj metav1.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// ownerRef builds the reference to owner from obj, after checking that the
// server would honour it.
func ownerRef[O any, PO client.ObjectPtr[O], T any, PT client.ObjectPtr[T]](owner PO, obj PT, opts OwnerOptions) (metav1.OwnerReference, error) {
	s := opts.scheme()
	fail := func(format string, args ...any) (metav1.OwnerReference, error) {
		return metav1.OwnerReference{}, &OwnerError{Object: objectName(obj), Reason: fmt.Sprintf(format, args...)}
	}
	ok, err := kindOf(owner, s)
	if err != nil {
		return fail("the owner's kind is unknown: %v", err)
	}
	if owner.GetName() == "" || owner.GetUID() == "" {
		return fail("the owner %s %q has no name or no uid (read it from the server before owning with it)", ok.kind, owner.GetName())
	}
	ownerNamespaced := owner.GetNamespace() != ""
	if ok.scopeKnown {
		ownerNamespaced = ok.namespaced
	}
	if ownerNamespaced {
		oki, err := kindOf(obj, s)
		objNamespaced := obj.GetNamespace() != ""
		if err == nil && oki.scopeKnown {
			objNamespaced = oki.namespaced
		}
		switch {
		case !objNamespaced:
			return fail("a cluster-scoped object cannot have a namespaced owner (%s %s/%s)", ok.kind, owner.GetNamespace(), owner.GetName())
		case owner.GetNamespace() == "":
			return fail("the namespaced owner %s %q has no namespace", ok.kind, owner.GetName())
		case obj.GetNamespace() != owner.GetNamespace():
			return fail("the owner %s %s/%s is in another namespace than the object %q (owners must be in the object's namespace)",
				ok.kind, owner.GetNamespace(), owner.GetName(), obj.GetNamespace())
		}
	}
	ref := metav1.OwnerReference{APIVersion: ok.apiVersion, Kind: ok.kind, Name: owner.GetName(), UID: owner.GetUID()}
	if opts.BlockOwnerDeletion {
		ref.BlockOwnerDeletion = new(true)
	}
	return ref, nil
}

// sameOwner reports whether a and b refer to the same owner: the same group,
// kind and name (the version may differ: an owner is read in any of its
// versions). A reference with another uid is to an owner that was deleted
// and re-created under the same name, and is replaced.
func sameOwner(a, b metav1.OwnerReference) bool {
	return groupOf(a.APIVersion) == groupOf(b.APIVersion) && a.Kind == b.Kind && a.Name == b.Name
}

func isController(r metav1.OwnerReference) bool { return r.Controller != nil && *r.Controller }

// SetControllerReference makes owner the controller of obj: it adds (or
// updates) obj's owner reference to owner with controller set, so that the
// garbage collector deletes obj with owner and controllers that own obj's
// kind (such as a controller's Owns) find owner from obj. The owner's
// apiVersion and kind come from opts.Scheme, never from its TypeMeta (which
// objects read from the server usually lack); only for types the scheme
// cannot hold (unstructured objects, PartialObjectMetadata) are they read
// from the object.
//
// It fails with an [*AlreadyOwnedError] when obj already has another
// controller, and with an [*OwnerError] when the server would not honour
// the reference (see OwnerError). obj is changed in memory only; write it
// to the server yourself (or set the reference in a CreateOrUpdate mutate
// function).
func SetControllerReference[O any, PO client.ObjectPtr[O], T any, PT client.ObjectPtr[T]](owner PO, obj PT, opts OwnerOptions) error {
	ref, err := ownerRef(owner, obj, opts)
	if err != nil {
		return err
	}
	ref.Controller = new(true)
	refs := obj.GetOwnerReferences()
	for _, r := range refs {
		if isController(r) && !sameOwner(r, ref) {
			return &AlreadyOwnedError{Object: objectName(obj), Owner: r}
		}
	}
	obj.SetOwnerReferences(upsert(refs, ref))
	return nil
}

// SetOwnerReference adds (or updates) obj's owner reference to owner
// without making owner obj's controller: the garbage collector deletes obj
// once all its owners are gone. An existing controller reference to owner
// stays a controller reference. Kinds, scopes and errors are as for
// [SetControllerReference], except that obj may have another controller.
func SetOwnerReference[O any, PO client.ObjectPtr[O], T any, PT client.ObjectPtr[T]](owner PO, obj PT, opts OwnerOptions) error {
	ref, err := ownerRef(owner, obj, opts)
	if err != nil {
		return err
	}
	refs := obj.GetOwnerReferences()
	if i := slices.IndexFunc(refs, func(r metav1.OwnerReference) bool { return sameOwner(r, ref) }); i >= 0 {
		ref.Controller = refs[i].Controller
	}
	obj.SetOwnerReferences(upsert(refs, ref))
	return nil
}

// upsert returns refs with ref in place of the reference to the same owner,
// or appended, in a new slice.
func upsert(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	out := slices.Clone(refs)
	if i := slices.IndexFunc(out, func(r metav1.OwnerReference) bool { return sameOwner(r, ref) }); i >= 0 {
		out[i] = ref
		return out
	}
	return append(out, ref)
}

// RemoveOwnerReference removes obj's owner references to owner (controller
// or not) and reports whether there was one. The owner's kind is found as
// by SetControllerReference; an error says it is unknown.
func RemoveOwnerReference[O any, PO client.ObjectPtr[O], T any, PT client.ObjectPtr[T]](owner PO, obj PT, opts OwnerOptions) (bool, error) {
	k, err := kindOf(owner, opts.scheme())
	if err != nil {
		return false, &OwnerError{Object: objectName(obj), Reason: "the owner's kind is unknown: " + err.Error()}
	}
	ref := metav1.OwnerReference{APIVersion: k.apiVersion, Kind: k.kind, Name: owner.GetName()}
	refs := obj.GetOwnerReferences()
	kept := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return sameOwner(r, ref) })
	if len(kept) == len(refs) {
		return false, nil
	}
	obj.SetOwnerReferences(kept)
	return true, nil
}

// GetControllerOf returns a copy of obj's controller reference, or nil when
// obj has no controller.
func GetControllerOf(obj metav1.Object) *metav1.OwnerReference {
	for _, r := range obj.GetOwnerReferences() {
		if isController(r) {
			c := r
			c.Controller = new(true)
			if r.BlockOwnerDeletion != nil {
				c.BlockOwnerDeletion = new(*r.BlockOwnerDeletion)
			}
			return &c
		}
	}
	return nil
}

// HasControllerReference reports whether obj has a controller.
func HasControllerReference(obj metav1.Object) bool { return GetControllerOf(obj) != nil }

// IsControlledBy reports whether owner is obj's controller, comparing uids
// (which tell apart an owner from an earlier one of the same name).
func IsControlledBy(obj, owner metav1.Object) bool {
	c := GetControllerOf(obj)
	return c != nil && owner.GetUID() != "" && c.UID == owner.GetUID()
}
