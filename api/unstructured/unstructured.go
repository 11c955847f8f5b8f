package unstructured

import (
	"errors"
	"fmt"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Unstructured is a Kubernetes object of any kind held as its JSON form: a map
// of field names to JSON values (see the package documentation for the Go
// types of values). Its accessors read and write the standard metadata of
// meta.k8s.io/v1 ObjectMeta inside Object, so *Unstructured implements
// [metav1.Object]; it also implements [metav1.ListInterface] for a list held
// in an Unstructured.
//
// The zero Unstructured is an empty object; setters create Object when it is
// nil. An Unstructured is not safe for concurrent use.
type Unstructured struct {
	// Object is the object's JSON form, with "apiVersion", "kind",
	// "metadata" and the kind's own fields.
	Object map[string]any
}

var (
	_ metav1.Object        = (*Unstructured)(nil)
	_ metav1.ListInterface = (*Unstructured)(nil)
	_ Interface            = (*Unstructured)(nil)
)

// Interface is what [Unstructured] and [UnstructuredList] have in common: an
// object or a list of any kind held as JSON. [Decode] returns one or the other.
type Interface interface {
	GetAPIVersion() string
	SetAPIVersion(version string)
	GetKind() string
	SetKind(kind string)
	// IsList reports whether the object is a list: always for an
	// UnstructuredList, when it has an "items" array for an Unstructured.
	IsList() bool
	// EachListItem calls fn with each item of a list, stopping at the first
	// error, which it returns.
	EachListItem(fn func(*Unstructured) error) error
	// UnstructuredContent returns the JSON form of the object.
	UnstructuredContent() map[string]any
	// SetUnstructuredContent replaces the object by a JSON form.
	SetUnstructuredContent(content map[string]any)
	// MarshalJSON encodes the object as JSON.
	MarshalJSON() ([]byte, error)
}

// ErrMissingKind is returned, wrapped, when decoding an object or a list whose
// JSON has no "kind" string, which Kubernetes refuses too.
var ErrMissingKind = errors.New("unstructured: Object 'Kind' is missing")

// SplitAPIVersion splits an apiVersion into its API group and version:
// "apps/v1" into "apps" and "v1", "v1" (the core group) into "" and "v1", ""
// into two empty strings. An apiVersion with more than one "/" is an error.
func SplitAPIVersion(apiVersion string) (group, version string, err error) {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return "", apiVersion, nil
	}
	if strings.Contains(version, "/") {
		return "", "", fmt.Errorf("unstructured: unexpected apiVersion %q: more than one /", apiVersion)
	}
	return group, version, nil
}

// JoinAPIVersion is the apiVersion of an API group and version: "apps/v1", or
// just the version for the core group "".
func JoinAPIVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// getString is the string at fields, or "" when it is missing or not a string.
func getString(obj map[string]any, fields ...string) string {
	s, _, _ := NestedString(obj, fields...)
	return s
}

// getInt64Pointer is the int64 at fields, or nil when it is missing or not an
// int64.
func getInt64Pointer(obj map[string]any, fields ...string) *int64 {
	i, found, err := NestedInt64(obj, fields...)
	if !found || err != nil {
		return nil
	}
	return &i
}

// getTime parses the RFC 3339 timestamp at fields as [metav1.Time] does; a
// missing, mistyped or unparsable one is the zero time.
func getTime(obj map[string]any, fields ...string) metav1.Time {
	var t metav1.Time
	s := getString(obj, fields...)
	if s == "" {
		return t
	}
	if err := t.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
		return metav1.Time{}
	}
	return t
}

// formatTime is the JSON string of t, as [metav1.Time] writes it (RFC 3339 in
// UTC, to the second), or "" for the zero time.
func formatTime(t metav1.Time) string {
	b, _ := t.MarshalJSON()
	if len(b) < 2 || b[0] != '"' {
		return ""
	}
	return string(b[1 : len(b)-1])
}

// set stores value at fields, creating Object if needed. As in Kubernetes,
// nothing is stored when a value on the way is not a map.
func (u *Unstructured) set(value any, fields ...string) {
	if u.Object == nil {
		u.Object = make(map[string]any)
	}
	_ = setNestedFieldNoCopy(u.Object, value, fields...)
}

// setOrRemove stores s at metadata.field, or removes the field when s is "".
func (u *Unstructured) setOrRemove(s string, field string) {
	if s == "" {
		RemoveNestedField(u.Object, "metadata", field)
		return
	}
	u.set(s, "metadata", field)
}

// GetAPIVersion returns the apiVersion, "" when it is missing.
func (u *Unstructured) GetAPIVersion() string { return getString(u.Object, "apiVersion") }

// SetAPIVersion sets the apiVersion.
func (u *Unstructured) SetAPIVersion(version string) { u.set(version, "apiVersion") }

// GetKind returns the kind, "" when it is missing.
func (u *Unstructured) GetKind() string { return getString(u.Object, "kind") }

// SetKind sets the kind.
func (u *Unstructured) SetKind(kind string) { u.set(kind, "kind") }

// GetNamespace returns metadata.namespace.
func (u *Unstructured) GetNamespace() string { return getString(u.Object, "metadata", "namespace") }

// SetNamespace sets metadata.namespace, removing it for "".
func (u *Unstructured) SetNamespace(namespace string) { u.setOrRemove(namespace, "namespace") }

// GetName returns metadata.name.
func (u *Unstructured) GetName() string { return getString(u.Object, "metadata", "name") }

// SetName sets metadata.name, removing it for "".
func (u *Unstructured) SetName(name string) { u.setOrRemove(name, "name") }

// GetGenerateName returns metadata.generateName.
func (u *Unstructured) GetGenerateName() string {
	return getString(u.Object, "metadata", "generateName")
}

// SetGenerateName sets metadata.generateName, removing it for "".
func (u *Unstructured) SetGenerateName(name string) { u.setOrRemove(name, "generateName") }

// GetUID returns metadata.uid.
func (u *Unstructured) GetUID() metav1.UID {
	return metav1.UID(getString(u.Object, "metadata", "uid"))
}

// SetUID sets metadata.uid, removing it for "".
func (u *Unstructured) SetUID(uid metav1.UID) { u.setOrRemove(string(uid), "uid") }

// GetResourceVersion returns metadata.resourceVersion.
func (u *Unstructured) GetResourceVersion() string {
	return getString(u.Object, "metadata", "resourceVersion")
}

// SetResourceVersion sets metadata.resourceVersion, removing it for "".
func (u *Unstructured) SetResourceVersion(version string) {
	u.setOrRemove(version, "resourceVersion")
}

// GetSelfLink returns metadata.selfLink, which servers no longer set.
func (u *Unstructured) GetSelfLink() string { return getString(u.Object, "metadata", "selfLink") }

// SetSelfLink sets metadata.selfLink, removing it for "".
func (u *Unstructured) SetSelfLink(selfLink string) { u.setOrRemove(selfLink, "selfLink") }

// GetGeneration returns metadata.generation, 0 when it is missing or not an
// integer.
func (u *Unstructured) GetGeneration() int64 {
	i, _, _ := NestedInt64(u.Object, "metadata", "generation")
	return i
}

// SetGeneration sets metadata.generation, removing it for 0.
func (u *Unstructured) SetGeneration(generation int64) {
	if generation == 0 {
		RemoveNestedField(u.Object, "metadata", "generation")
		return
	}
	u.set(generation, "metadata", "generation")
}

// GetContinue returns metadata.continue, for a list held in an Unstructured.
func (u *Unstructured) GetContinue() string { return getString(u.Object, "metadata", "continue") }

// SetContinue sets metadata.continue, removing it for "".
func (u *Unstructured) SetContinue(c string) { u.setOrRemove(c, "continue") }

// GetRemainingItemCount returns metadata.remainingItemCount, for a list held in
// an Unstructured; nil when it is missing or not an integer.
func (u *Unstructured) GetRemainingItemCount() *int64 {
	return getInt64Pointer(u.Object, "metadata", "remainingItemCount")
}

// SetRemainingItemCount sets metadata.remainingItemCount, removing it for nil.
func (u *Unstructured) SetRemainingItemCount(c *int64) {
	if c == nil {
		RemoveNestedField(u.Object, "metadata", "remainingItemCount")
		return
	}
	u.set(*c, "metadata", "remainingItemCount")
}

// GetCreationTimestamp returns metadata.creationTimestamp, the zero time when it
// is missing or is not an RFC 3339 string.
func (u *Unstructured) GetCreationTimestamp() metav1.Time {
	return getTime(u.Object, "metadata", "creationTimestamp")
}

// SetCreationTimestamp sets metadata.creationTimestamp in the RFC 3339 form of
// [metav1.Time] (UTC, whole seconds), removing it for the zero time.
func (u *Unstructured) SetCreationTimestamp(timestamp metav1.Time) {
	u.setOrRemove(formatTime(timestamp), "creationTimestamp")
}

// GetDeletionTimestamp returns metadata.deletionTimestamp, nil when it is
// missing or is not an RFC 3339 string.
func (u *Unstructured) GetDeletionTimestamp() *metav1.Time {
	t := getTime(u.Object, "metadata", "deletionTimestamp")
	if t.IsZero() {
		return nil
	}
	return &t
}

// SetDeletionTimestamp sets metadata.deletionTimestamp like
// [Unstructured.SetCreationTimestamp], removing it for nil or the zero time.
func (u *Unstructured) SetDeletionTimestamp(timestamp *metav1.Time) {
	if timestamp == nil {
		RemoveNestedField(u.Object, "metadata", "deletionTimestamp")
		return
	}
	u.setOrRemove(formatTime(*timestamp), "deletionTimestamp")
}

// GetDeletionGracePeriodSeconds returns metadata.deletionGracePeriodSeconds,
// nil when it is missing or not an integer.
func (u *Unstructured) GetDeletionGracePeriodSeconds() *int64 {
	return getInt64Pointer(u.Object, "metadata", "deletionGracePeriodSeconds")
}

// SetDeletionGracePeriodSeconds sets metadata.deletionGracePeriodSeconds,
// removing it for nil.
func (u *Unstructured) SetDeletionGracePeriodSeconds(seconds *int64) {
	if seconds == nil {
		RemoveNestedField(u.Object, "metadata", "deletionGracePeriodSeconds")
		return
	}
	u.set(*seconds, "metadata", "deletionGracePeriodSeconds")
}

// GetLabels returns a copy of metadata.labels. JSON null values read as "";
// a label map that is missing, null or holds a non-string reads as nil.
func (u *Unstructured) GetLabels() map[string]string {
	m, _, _ := NestedNullCoercingStringMap(u.Object, "metadata", "labels")
	return m
}

// SetLabels sets metadata.labels to a copy of labels, removing it for nil (but
// not for an empty map).
func (u *Unstructured) SetLabels(labels map[string]string) { u.setStringMap(labels, "labels") }

// GetAnnotations returns a copy of metadata.annotations, like
// [Unstructured.GetLabels].
func (u *Unstructured) GetAnnotations() map[string]string {
	m, _, _ := NestedNullCoercingStringMap(u.Object, "metadata", "annotations")
	return m
}

// SetAnnotations sets metadata.annotations to a copy of annotations, removing it
// for nil (but not for an empty map).
func (u *Unstructured) SetAnnotations(annotations map[string]string) {
	u.setStringMap(annotations, "annotations")
}

func (u *Unstructured) setStringMap(value map[string]string, field string) {
	if value == nil {
		RemoveNestedField(u.Object, "metadata", field)
		return
	}
	m := make(map[string]any, len(value))
	for k, v := range value {
		m[k] = v
	}
	u.set(m, "metadata", field)
}

// GetFinalizers returns a copy of metadata.finalizers, nil when it is missing
// or is not a list of strings.
func (u *Unstructured) GetFinalizers() []string {
	s, _, _ := NestedStringSlice(u.Object, "metadata", "finalizers")
	return s
}

// SetFinalizers sets metadata.finalizers to a copy of finalizers, removing it
// for nil (but not for an empty slice).
func (u *Unstructured) SetFinalizers(finalizers []string) {
	if finalizers == nil {
		RemoveNestedField(u.Object, "metadata", "finalizers")
		return
	}
	list := make([]any, len(finalizers))
	for i, f := range finalizers {
		list[i] = f
	}
	u.set(list, "metadata", "finalizers")
}

// GetOwnerReferences converts metadata.ownerReferences to typed owner
// references. Fields that are missing or mistyped are left zero; when the list
// is missing, not a list, or has a member that is not an object, the result is
// nil.
func (u *Unstructured) GetOwnerReferences() []metav1.OwnerReference {
	val, found, err := NestedFieldNoCopy(u.Object, "metadata", "ownerReferences")
	if !found || err != nil {
		return nil
	}
	list, ok := val.([]any)
	if !ok {
		return nil
	}
	refs := make([]metav1.OwnerReference, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil
		}
		refs = append(refs, metav1.OwnerReference{
			APIVersion:         getString(m, "apiVersion"),
			Kind:               getString(m, "kind"),
			Name:               getString(m, "name"),
			UID:                metav1.UID(getString(m, "uid")),
			Controller:         getBoolPointer(m, "controller"),
			BlockOwnerDeletion: getBoolPointer(m, "blockOwnerDeletion"),
		})
	}
	return refs
}

func getBoolPointer(obj map[string]any, field string) *bool {
	b, found, err := NestedBool(obj, field)
	if !found || err != nil {
		return nil
	}
	return &b
}

// SetOwnerReferences sets metadata.ownerReferences to the JSON form of refs,
// removing it for nil (but not for an empty slice).
func (u *Unstructured) SetOwnerReferences(refs []metav1.OwnerReference) {
	if refs == nil {
		RemoveNestedField(u.Object, "metadata", "ownerReferences")
		return
	}
	list := make([]any, len(refs))
	for i, ref := range refs {
		m := map[string]any{
			"apiVersion": ref.APIVersion,
			"kind":       ref.Kind,
			"name":       ref.Name,
			"uid":        string(ref.UID),
		}
		if ref.Controller != nil {
			m["controller"] = *ref.Controller
		}
		if ref.BlockOwnerDeletion != nil {
			m["blockOwnerDeletion"] = *ref.BlockOwnerDeletion
		}
		list[i] = m
	}
	u.set(list, "metadata", "ownerReferences")
}

// GetManagedFields converts metadata.managedFields to typed entries; fieldsV1
// is re-encoded as JSON with sorted keys. As in Kubernetes, the result is nil
// when the list is missing or when any entry does not convert: a member that
// is not an object, a field of the wrong JSON type, an unparsable time.
func (u *Unstructured) GetManagedFields() []metav1.ManagedFieldsEntry {
	val, found, err := NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	if !found || err != nil {
		return nil
	}
	list, ok := val.([]any)
	if !ok {
		return nil
	}
	entries := make([]metav1.ManagedFieldsEntry, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil
		}
		e, err := managedFieldsEntryFromJSON(m)
		if err != nil {
			return nil
		}
		entries = append(entries, e)
	}
	return entries
}

// managedFieldsEntryFromJSON converts one managedFields member. Unknown fields
// are ignored and nulls leave fields zero, as decoding the JSON into the typed
// struct would.
func managedFieldsEntryFromJSON(m map[string]any) (metav1.ManagedFieldsEntry, error) {
	var e metav1.ManagedFieldsEntry
	str := func(field string) (string, error) {
		switch v := m[field].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		default:
			return "", typeError([]string{field}, v, "string")
		}
	}
	var err error
	var op string
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"manager", &e.Manager},
		{"operation", &op},
		{"apiVersion", &e.APIVersion},
		{"fieldsType", &e.FieldsType},
		{"subresource", &e.Subresource},
	} {
		if *f.dst, err = str(f.name); err != nil {
			return e, err
		}
	}
	e.Operation = metav1.ManagedFieldsOperationType(op)

	switch v := m["time"].(type) {
	case nil:
	case string:
		t := new(metav1.Time)
		if err := t.UnmarshalJSON([]byte(`"` + v + `"`)); err != nil {
			return e, err
		}
		e.Time = t
	default:
		return e, typeError([]string{"time"}, v, "string")
	}

	if v, ok := m["fieldsV1"]; ok && v != nil {
		raw, err := marshalValue(v)
		if err != nil {
			return e, err
		}
		e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	}
	return e, nil
}

// SetManagedFields sets metadata.managedFields to the JSON form of entries,
// removing it for nil (but not for an empty slice). As in Kubernetes, nothing
// changes when an entry's FieldsV1 is not valid JSON.
func (u *Unstructured) SetManagedFields(entries []metav1.ManagedFieldsEntry) {
	if entries == nil {
		RemoveNestedField(u.Object, "metadata", "managedFields")
		return
	}
	list := make([]any, len(entries))
	for i, e := range entries {
		m := make(map[string]any, 7)
		for _, f := range []struct{ name, value string }{
			{"manager", e.Manager},
			{"operation", string(e.Operation)},
			{"apiVersion", e.APIVersion},
			{"fieldsType", e.FieldsType},
			{"subresource", e.Subresource},
		} {
			if f.value != "" {
				m[f.name] = f.value
			}
		}
		if e.Time != nil {
			if s := formatTime(*e.Time); s != "" {
				m["time"] = s
			} else {
				m["time"] = nil
			}
		}
		if e.FieldsV1 != nil {
			if e.FieldsV1.Raw == nil {
				m["fieldsV1"] = nil
			} else {
				v, err := unmarshalValue(e.FieldsV1.Raw)
				if err != nil {
					return
				}
				m["fieldsV1"] = v
			}
		}
		list[i] = m
	}
	u.set(list, "metadata", "managedFields")
}

// IsList reports whether the object has an "items" list, as a list read into
// an Unstructured does.
func (u *Unstructured) IsList() bool {
	_, ok := u.Object["items"].([]any)
	return ok
}

// EachListItem calls fn with an Unstructured for each member of the "items"
// list, sharing its map, and stops at the first error, which it returns. It
// is an error for the object not to be a list or for a member not to be an
// object.
func (u *Unstructured) EachListItem(fn func(*Unstructured) error) error {
	val, ok := u.Object["items"]
	if !ok {
		return errors.New("unstructured: content is not a list: no items")
	}
	items, ok := val.([]any)
	if !ok {
		return fmt.Errorf("unstructured: content is not a list: items is of the type %T", val)
	}
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("unstructured: items[%d] is of the type %T, expected an object", i, item)
		}
		if err := fn(&Unstructured{Object: m}); err != nil {
			return err
		}
	}
	return nil
}

// ToList returns the list held in u as an UnstructuredList sharing u's maps,
// with Object still holding "items". When u is not a list, the result has no
// items.
func (u *Unstructured) ToList() (*UnstructuredList, error) {
	list := &UnstructuredList{Object: u.Object}
	if !u.IsList() {
		return list, nil
	}
	err := u.EachListItem(func(item *Unstructured) error {
		list.Items = append(list.Items, *item)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// UnstructuredContent returns Object itself, or a new empty map when Object is
// nil (u is left unchanged, so changes to that map are lost).
func (u *Unstructured) UnstructuredContent() map[string]any {
	if u.Object == nil {
		return make(map[string]any)
	}
	return u.Object
}

// SetUnstructuredContent sets Object to content, without copying it.
func (u *Unstructured) SetUnstructuredContent(content map[string]any) { u.Object = content }

// DeepCopy returns a deep copy of u (see [DeepCopyJSON]), nil for nil.
func (u *Unstructured) DeepCopy() *Unstructured {
	if u == nil {
		return nil
	}
	return &Unstructured{Object: DeepCopyJSON(u.Object)}
}

// DeepCopyInto sets *out to a deep copy of u.
func (u *Unstructured) DeepCopyInto(out *Unstructured) {
	out.Object = DeepCopyJSON(u.Object)
}
