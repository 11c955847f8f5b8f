package v1

// Object is the metadata every Kubernetes object carries, as accessors. ObjectMeta
// implements it, so every kind that embeds ObjectMeta does, and so does
// unstructured.Unstructured. Code that handles objects generically (caches,
// informers, the dynamic client) works through it.
type Object interface {
	GetNamespace() string
	SetNamespace(namespace string)
	GetName() string
	SetName(name string)
	GetGenerateName() string
	SetGenerateName(name string)
	GetUID() UID
	SetUID(uid UID)
	GetResourceVersion() string
	SetResourceVersion(version string)
	GetGeneration() int64
	SetGeneration(generation int64)
	GetCreationTimestamp() Time
	SetCreationTimestamp(timestamp Time)
	GetDeletionTimestamp() *Time
	SetDeletionTimestamp(timestamp *Time)
	GetDeletionGracePeriodSeconds() *int64
	SetDeletionGracePeriodSeconds(*int64)
	GetLabels() map[string]string
	SetLabels(labels map[string]string)
	GetAnnotations() map[string]string
	SetAnnotations(annotations map[string]string)
	GetFinalizers() []string
	SetFinalizers(finalizers []string)
	GetOwnerReferences() []OwnerReference
	SetOwnerReferences([]OwnerReference)
	GetManagedFields() []ManagedFieldsEntry
	SetManagedFields(managedFields []ManagedFieldsEntry)
}

// ListInterface is the metadata of a list, as accessors. ListMeta implements it.
type ListInterface interface {
	GetResourceVersion() string
	SetResourceVersion(version string)
	GetContinue() string
	SetContinue(c string)
	GetRemainingItemCount() *int64
	SetRemainingItemCount(c *int64)
}

var (
	_ Object        = (*ObjectMeta)(nil)
	_ ListInterface = (*ListMeta)(nil)
)

// GetObjectMeta returns m itself, so any kind embedding ObjectMeta exposes it.
func (m *ObjectMeta) GetObjectMeta() Object { return m }

func (m *ObjectMeta) GetNamespace() string                  { return m.Namespace }
func (m *ObjectMeta) SetNamespace(namespace string)         { m.Namespace = namespace }
func (m *ObjectMeta) GetName() string                       { return m.Name }
func (m *ObjectMeta) SetName(name string)                   { m.Name = name }
func (m *ObjectMeta) GetGenerateName() string               { return m.GenerateName }
func (m *ObjectMeta) SetGenerateName(name string)           { m.GenerateName = name }
func (m *ObjectMeta) GetUID() UID                           { return m.UID }
func (m *ObjectMeta) SetUID(uid UID)                        { m.UID = uid }
func (m *ObjectMeta) GetResourceVersion() string            { return m.ResourceVersion }
func (m *ObjectMeta) SetResourceVersion(version string)     { m.ResourceVersion = version }
func (m *ObjectMeta) GetGeneration() int64                  { return m.Generation }
func (m *ObjectMeta) SetGeneration(generation int64)        { m.Generation = generation }
func (m *ObjectMeta) GetCreationTimestamp() Time            { return m.CreationTimestamp }
func (m *ObjectMeta) SetCreationTimestamp(t Time)           { m.CreationTimestamp = t }
func (m *ObjectMeta) GetDeletionTimestamp() *Time           { return m.DeletionTimestamp }
func (m *ObjectMeta) SetDeletionTimestamp(t *Time)          { m.DeletionTimestamp = t }
func (m *ObjectMeta) GetDeletionGracePeriodSeconds() *int64 { return m.DeletionGracePeriodSeconds }
func (m *ObjectMeta) SetDeletionGracePeriodSeconds(s *int64) {
	m.DeletionGracePeriodSeconds = s
}
func (m *ObjectMeta) GetLabels() map[string]string                 { return m.Labels }
func (m *ObjectMeta) SetLabels(labels map[string]string)           { m.Labels = labels }
func (m *ObjectMeta) GetAnnotations() map[string]string            { return m.Annotations }
func (m *ObjectMeta) SetAnnotations(annotations map[string]string) { m.Annotations = annotations }
func (m *ObjectMeta) GetFinalizers() []string                      { return m.Finalizers }
func (m *ObjectMeta) SetFinalizers(finalizers []string)            { m.Finalizers = finalizers }
func (m *ObjectMeta) GetOwnerReferences() []OwnerReference         { return m.OwnerReferences }
func (m *ObjectMeta) SetOwnerReferences(refs []OwnerReference)     { m.OwnerReferences = refs }
func (m *ObjectMeta) GetManagedFields() []ManagedFieldsEntry       { return m.ManagedFields }
func (m *ObjectMeta) SetManagedFields(f []ManagedFieldsEntry)      { m.ManagedFields = f }

func (m *ListMeta) GetResourceVersion() string    { return m.ResourceVersion }
func (m *ListMeta) SetResourceVersion(v string)   { m.ResourceVersion = v }
func (m *ListMeta) GetContinue() string           { return m.Continue }
func (m *ListMeta) SetContinue(c string)          { m.Continue = c }
func (m *ListMeta) GetRemainingItemCount() *int64 { return m.RemainingItemCount }
func (m *ListMeta) SetRemainingItemCount(c *int64) {
	m.RemainingItemCount = c
}

// GetListMeta returns m itself, so any list kind embedding ListMeta exposes it.
func (m *ListMeta) GetListMeta() ListInterface { return m }
