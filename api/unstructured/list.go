package unstructured

import metav1 "github.com/kapi-dev/kapi/api/meta/v1"

// UnstructuredList is a Kubernetes list of any kind (a PodList, a list of a
// custom resource) held as JSON: the list's own fields in Object and its items
// in Items. *UnstructuredList implements [metav1.ListInterface].
//
// Object normally has no "items" field: decoding moves the items to Items, and
// encoding writes Items as "items", in place of any "items" left in Object.
// An UnstructuredList is not safe for concurrent use.
type UnstructuredList struct {
	// Object is the list's JSON form without its items: "apiVersion",
	// "kind" and "metadata".
	Object map[string]any
	// Items are the members of the list.
	Items []Unstructured
}

var (
	_ metav1.ListInterface = (*UnstructuredList)(nil)
	_ Interface            = (*UnstructuredList)(nil)
)

func (u *UnstructuredList) set(value any, fields ...string) {
	if u.Object == nil {
		u.Object = make(map[string]any)
	}
	_ = setNestedFieldNoCopy(u.Object, value, fields...)
}

// GetAPIVersion returns the apiVersion, "" when it is missing.
func (u *UnstructuredList) GetAPIVersion() string { return getString(u.Object, "apiVersion") }

// SetAPIVersion sets the apiVersion.
func (u *UnstructuredList) SetAPIVersion(version string) { u.set(version, "apiVersion") }

// GetKind returns the kind of the list ("PodList"), "" when it is missing.
func (u *UnstructuredList) GetKind() string { return getString(u.Object, "kind") }

// SetKind sets the kind.
func (u *UnstructuredList) SetKind(kind string) { u.set(kind, "kind") }

// GetResourceVersion returns metadata.resourceVersion.
func (u *UnstructuredList) GetResourceVersion() string {
	return getString(u.Object, "metadata", "resourceVersion")
}

// SetResourceVersion sets metadata.resourceVersion. As in Kubernetes, and
// unlike [Unstructured.SetResourceVersion], "" is stored rather than removed.
func (u *UnstructuredList) SetResourceVersion(version string) {
	u.set(version, "metadata", "resourceVersion")
}

// GetSelfLink returns metadata.selfLink, which servers no longer set.
func (u *UnstructuredList) GetSelfLink() string {
	return getString(u.Object, "metadata", "selfLink")
}

// SetSelfLink sets metadata.selfLink; "" is stored.
func (u *UnstructuredList) SetSelfLink(selfLink string) { u.set(selfLink, "metadata", "selfLink") }

// GetContinue returns metadata.continue, the token for the next page.
func (u *UnstructuredList) GetContinue() string {
	return getString(u.Object, "metadata", "continue")
}

// SetContinue sets metadata.continue; "" is stored.
func (u *UnstructuredList) SetContinue(c string) { u.set(c, "metadata", "continue") }

// GetRemainingItemCount returns metadata.remainingItemCount, nil when it is
// missing or not an integer.
func (u *UnstructuredList) GetRemainingItemCount() *int64 {
	return getInt64Pointer(u.Object, "metadata", "remainingItemCount")
}

// SetRemainingItemCount sets metadata.remainingItemCount, removing it for nil.
func (u *UnstructuredList) SetRemainingItemCount(c *int64) {
	if c == nil {
		RemoveNestedField(u.Object, "metadata", "remainingItemCount")
		return
	}
	u.set(*c, "metadata", "remainingItemCount")
}

// IsList reports true: an UnstructuredList is always a list.
func (u *UnstructuredList) IsList() bool { return true }

// EachListItem calls fn with a pointer to each member of Items, in order, and
// stops at the first error, which it returns. fn may change the item in place.
func (u *UnstructuredList) EachListItem(fn func(*Unstructured) error) error {
	for i := range u.Items {
		if err := fn(&u.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// UnstructuredContent returns the list's whole JSON form: a shallow copy of
// Object with "items" set to the items' maps.
func (u *UnstructuredList) UnstructuredContent() map[string]any {
	out := make(map[string]any, len(u.Object)+1)
	for k, v := range u.Object {
		out[k] = v
	}
	items := make([]any, len(u.Items))
	for i := range u.Items {
		items[i] = u.Items[i].UnstructuredContent()
	}
	out["items"] = items
	return out
}

// SetUnstructuredContent sets Object to content, without copying it, and Items
// to the objects of its "items" list. Members of "items" that are not objects
// are dropped, from Items and from content["items"] alike, which is set to an
// empty list when it is missing or not a list.
func (u *UnstructuredList) SetUnstructuredContent(content map[string]any) {
	u.Object = content
	if content == nil {
		u.Items = nil
		return
	}
	list, _ := content["items"].([]any)
	items := make([]Unstructured, 0, len(list))
	kept := make([]any, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			items = append(items, Unstructured{Object: m})
			kept = append(kept, m)
		}
	}
	u.Items = items
	content["items"] = kept
}

// DeepCopy returns a deep copy of u (see [DeepCopyJSON]), nil for nil.
func (u *UnstructuredList) DeepCopy() *UnstructuredList {
	if u == nil {
		return nil
	}
	out := new(UnstructuredList)
	u.DeepCopyInto(out)
	return out
}

// DeepCopyInto sets *out to a deep copy of u.
func (u *UnstructuredList) DeepCopyInto(out *UnstructuredList) {
	out.Object = DeepCopyJSON(u.Object)
	if u.Items == nil {
		out.Items = nil
		return
	}
	out.Items = make([]Unstructured, len(u.Items))
	for i := range u.Items {
		u.Items[i].DeepCopyInto(&out.Items[i])
	}
}
