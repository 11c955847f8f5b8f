package fieldmanager

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/internal/smdschema"
)

// DefaultMaxUpdateManagers is how many Update entries an object keeps, as in
// kube-apiserver: beyond it the oldest are merged, per apiVersion, into one
// entry of manager "ancient-changes".
const DefaultMaxUpdateManagers = 10

const (
	// ancientChangesManager is the manager the oldest Update entries are
	// merged into when there are more than DefaultMaxUpdateManagers.
	ancientChangesManager = "ancient-changes"
	// beforeFirstApplyManager takes ownership of every field of an object
	// that has no managedFields when it is first applied to.
	beforeFirstApplyManager = "before-first-apply"
	// unknownManager is the manager of writes that name none.
	unknownManager = "unknown"
	// currentOperation is the key under which an update's own changes are
	// computed before they are merged into the manager's entry; it is not
	// JSON, so no manager key can be equal to it.
	currentOperation = "current-operation"
)

// stripSet holds the fields no manager ever owns, Kubernetes' exact list:
// the type and the identity and bookkeeping of the object.
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// Manager tracks field ownership (metadata.managedFields) for objects of one
// kind served at one apiVersion through one endpoint, and performs
// server-side apply. It is immutable and safe for concurrent use.
type Manager struct {
	schema      *Schema
	apiVersion  string
	kind        string
	now         func() time.Time
	resetFields *fieldpath.Set
	maxUpdaters int
}

// New returns a manager for objects of one kind served under apiVersion
// ("v1", "apps/v1", "example.com/v1"). now gives the time recorded in
// entries (truncated to seconds, UTC); nil means time.Now. For a ForType
// schema the kind Apply expects is the Go type's name; see WithKind.
func New(s *Schema, apiVersion string, now func() time.Time) *Manager {
	if now == nil {
		now = time.Now
	}
	return &Manager{schema: s, apiVersion: apiVersion, kind: s.Kind(), now: now, maxUpdaters: DefaultMaxUpdateManagers}
}

// WithKind returns a copy of m whose Apply requires applied configurations
// of this kind (needed for ForCRD schemas, which do not know it). With no
// kind set, Apply requires the kind of the live object, when there is one.
func (m *Manager) WithKind(kind string) *Manager {
	c := *m
	c.kind = kind
	return &c
}

// WithResetFields returns a copy of m for an endpoint whose writes never own
// the given fields, as kube-apiserver's per-strategy "reset fields": each
// path is a dotted list of field names ("status", "spec",
// "metadata.deletionTimestamp") and covers everything below it. Use
// "status" for the main resource of kinds with a status subresource, and
// the fields outside status (typically "spec", plus any metadata the status
// strategy resets) for writes to /status. Changes to these fields neither
// give ownership nor take it from anyone, and cause no conflicts. The
// registry is still the one that drops changes to them.
func (m *Manager) WithResetFields(paths ...string) *Manager {
	c := *m
	c.resetFields = fieldpath.NewSet()
	if m.resetFields != nil {
		c.resetFields = m.resetFields.Copy()
	}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		elems := make([]any, len(parts))
		for i, s := range parts {
			elems[i] = s
		}
		c.resetFields.Insert(fieldpath.MakePathOrDie(elems...))
	}
	return &c
}

// WithMaxUpdateManagers returns a copy of m that keeps at most n Update
// entries (DefaultMaxUpdateManagers by default); see Update.
func (m *Manager) WithMaxUpdateManagers(n int) *Manager {
	c := *m
	c.maxUpdaters = n
	return &c
}

// identityConverter is the version converter SMD needs. kapi serves each
// kind with one schema, so an entry recorded at another apiVersion is read
// as if at this one, which is right for custom resources whose versions
// share a schema and keeps such entries instead of dropping them.
type identityConverter struct{}

func (identityConverter) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}

func (identityConverter) IsMissingVersionError(error) bool { return false }

// updater returns the SMD updater for a request whose managers are mf: reset
// fields are ignored at every apiVersion present.
func (m *Manager) updater(mf fieldpath.ManagedFields) *merge.Updater {
	b := merge.UpdaterBuilder{Converter: identityConverter{}}
	if m.resetFields != nil && !m.resetFields.Empty() {
		b.IgnoreFilter = map[fieldpath.APIVersion]fieldpath.Filter{}
		f := fieldpath.NewExcludeSetFilter(m.resetFields)
		b.IgnoreFilter[fieldpath.APIVersion(m.apiVersion)] = f
		for _, vs := range mf {
			b.IgnoreFilter[vs.APIVersion()] = f
		}
	}
	return b.BuildUpdater()
}

// stamp returns the time to record in an entry.
func (m *Manager) stamp() *time.Time {
	t := m.now().UTC().Truncate(time.Second)
	return &t
}

// typedValue converts obj into an SMD value of the kind.
func (m *Manager) typedValue(obj map[string]any, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	return m.schema.Parser().FromUnstructured(obj, opts...)
}

// zero returns the live object of a create.
func (m *Manager) zero() map[string]any { return m.schema.Zero() }

// Update records a write that is not an apply — a create (live == nil), an
// update, a non-apply patch, or a write to subresource ("status"; "" for the
// main resource) — by manager ("" reads "unknown"). It computes the fields
// the write added or changed, gives them to manager's Update entry (stamped
// with now), takes them from every other manager, and sets obj's
// metadata.managedFields to the result; obj is modified in place and also
// returned. Numbers in obj may be int64, float64 or json.Number (converted
// in place to int64 or float64).
//
// As kube-apiserver does:
//
//   - managedFields sent in obj replace the live ones when they are valid and
//     not empty; a list of one empty entry ([{}]) or an empty list resets
//     them, and obj comes out with none; an absent, null or invalid list
//     keeps the live ones. Writes to a subresource always keep the live
//     ones.
//   - an existing object without managedFields (reset, or created before
//     tracking) stays without them: only creates and applies start tracking.
//   - fields in Kubernetes' strip list (apiVersion, kind, metadata.name,
//     uid, resourceVersion, ...) and reset fields are never owned; empty
//     entries are dropped; beyond DefaultMaxUpdateManagers Update entries the
//     oldest are merged into "ancient-changes".
//
// An error means the ownership could not be computed (obj does not match the
// schema, say). obj then carries live's managedFields, as kube-apiserver
// keeps them in that case, so a server may log the error and go on.
func (m *Manager) Update(live, obj map[string]any, manager, subresource string) (map[string]any, error) {
	norm, _ := smdschema.Normalize(obj)
	for k, v := range norm.(map[string]any) {
		obj[k] = v
	}
	if live != nil {
		live = smdschema.NormalizeObject(live)
	}
	liveEntries, _, liveErr := managedFieldsOf(live)
	restore := func(err error) (map[string]any, error) {
		if liveErr == nil {
			setManagedFields(obj, deepCopy(any(liveEntries)).([]any))
		} else {
			setManagedFields(obj, nil)
		}
		return obj, err
	}
	mgd, err := m.decodeLiveOrNew(live, obj, subresource)
	if err != nil {
		return restore(err)
	}
	if live == nil {
		live = m.zero()
	} else if len(mgd.fields) == 0 && uidOf(live) != "" {
		// An existing object without managedFields: not tracked.
		setManagedFields(obj, nil)
		return obj, nil
	}
	id := managerID{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: m.apiVersion, Subresource: subresource}
	if id.Manager == "" {
		id.Manager = unknownManager
	}
	newObj := withoutManagedFields(obj)
	if err := m.update(withoutManagedFields(live), newObj, mgd, id.key()); err != nil {
		return restore(err)
	}
	m.capUpdaters(mgd)
	entries, err := mgd.encode()
	if err != nil {
		return restore(err)
	}
	setManagedFields(obj, entries)
	return obj, nil
}

// decodeLiveOrNew picks the managed fields an update starts from.
func (m *Manager) decodeLiveOrNew(live, obj map[string]any, subresource string) (*managed, error) {
	fromLive := func() *managed {
		entries, _, err := managedFieldsOf(live)
		if err != nil {
			return newManaged()
		}
		mgd, err := decodeManaged(entries)
		if err != nil {
			return newManaged()
		}
		return mgd
	}
	if subresource != "" {
		return fromLive(), nil
	}
	entries, present, err := managedFieldsOf(obj)
	if err != nil {
		return fromLive(), nil
	}
	if isReset(entries, present) {
		return newManaged(), nil
	}
	mgd, err := decodeManaged(entries)
	if err != nil || len(mgd.fields) == 0 {
		return fromLive(), nil
	}
	return mgd, nil
}

func uidOf(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	uid, _ := md["uid"].(string)
	return uid
}

// update gives key the fields changed from live to obj, takes them from the
// other managers, and stamps key's entry when it gained anything.
func (m *Manager) update(live, obj map[string]any, mgd *managed, key string) error {
	liveT, err := m.typedValue(live, typed.AllowDuplicates)
	if err != nil {
		return fmt.Errorf("live object does not match the schema: %w", err)
	}
	newT, err := m.typedValue(obj, typed.AllowDuplicates)
	if err != nil {
		return fmt.Errorf("object does not match the schema: %w", err)
	}
	_, fields, err := m.updater(mgd.fields).Update(liveT, newT, fieldpath.APIVersion(m.apiVersion), mgd.fields, currentOperation)
	if err != nil {
		return fmt.Errorf("failed to update managed fields: %w", err)
	}
	strip(fields, currentOperation)
	if vs, ok := fields[currentOperation]; ok {
		delete(fields, currentOperation)
		if prev, ok := fields[key]; ok {
			fields[key] = fieldpath.NewVersionedSet(vs.Set().Union(prev.Set()), vs.APIVersion(), vs.Applied())
		} else {
			fields[key] = vs
		}
		mgd.times[key] = m.stamp()
	}
	mgd.fields = fields
	return nil
}

// strip removes the never-owned fields from key's set, and the entry when
// nothing is left.
func strip(fields fieldpath.ManagedFields, key string) {
	vs, ok := fields[key]
	if !ok {
		return
	}
	s := vs.Set().Difference(stripSet)
	if s.Empty() {
		delete(fields, key)
		return
	}
	fields[key] = fieldpath.NewVersionedSet(s, vs.APIVersion(), vs.Applied())
}

// capUpdaters merges the oldest Update entries into "ancient-changes" (one
// per apiVersion) until at most m.maxUpdaters remain, as kube-apiserver
// does: the oldest entry of each apiVersion becomes the bucket, later ones
// are folded into it, and the bucket keeps the time of the last one folded.
func (m *Manager) capUpdaters(mgd *managed) {
	if m.maxUpdaters <= 0 {
		return
	}
	var updaters []string
	for key, vs := range mgd.fields {
		if !vs.Applied() {
			updaters = append(updaters, key)
		}
	}
	if len(updaters) <= m.maxUpdaters {
		return
	}
	secs := func(key string) int64 {
		if t := mgd.times[key]; t != nil {
			return t.Unix()
		}
		return 0
	}
	sort.Slice(updaters, func(i, j int) bool {
		if a, b := secs(updaters[i]), secs(updaters[j]); a != b {
			return a < b
		}
		return updaters[i] < updaters[j]
	})
	first := map[fieldpath.APIVersion]string{}
	for i, n := 0, len(updaters); i < len(updaters) && n > m.maxUpdaters; i++ {
		key := updaters[i]
		vs := mgd.fields[key]
		version := vs.APIVersion()
		bucket := managerID{Manager: ancientChangesManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: string(version)}.key()
		f, ok := first[version]
		if !ok {
			first[version] = key
			continue
		}
		if _, ok := mgd.fields[bucket]; !ok {
			mgd.fields[bucket] = mgd.fields[f]
			delete(mgd.fields, f)
			delete(mgd.times, f)
		}
		mgd.fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(mgd.fields[bucket].Set()), version, false)
		mgd.times[bucket] = mgd.times[key]
		delete(mgd.fields, key)
		delete(mgd.times, key)
		n--
	}
}

// Apply merges applied — the client's apply configuration, decoded from YAML
// or JSON — into live (nil when the object does not exist yet) for manager
// (operation Apply; "" reads "unknown", but servers should reject an apply
// without a field manager first, golden 77) writing to subresource ("" for
// the main resource). It returns a new object (live and applied are not
// modified) with managedFields set.
//
// The result holds live's fields with the applied values over them, minus
// the fields manager applied before, no longer applies and no one else
// owns. Manager's Apply entry becomes exactly the applied fields. Changing a
// field another manager owns is a conflict: without force, Apply returns a
// *ConflictError listing them all; with force, manager takes them over.
// An existing object with no managedFields is first given to a
// "before-first-apply" Update manager owning all its fields, as
// kube-apiserver does. When the apply changes nothing the result is a copy
// of live with the updated managedFields and no new timestamp.
//
// applied must have this manager's apiVersion and kind (else an
// *InvalidApplyError, 400 BadRequest), no metadata.managedFields, and only
// fields of the schema.
func (m *Manager) Apply(live, applied map[string]any, manager, subresource string, force bool) (map[string]any, error) {
	applied = smdschema.NormalizeObject(applied)
	if live != nil {
		live = smdschema.NormalizeObject(live)
	}
	if err := m.checkApplied(live, applied); err != nil {
		return nil, err
	}
	var mgd *managed
	if live == nil {
		live = m.zero()
		mgd = newManaged()
	} else {
		entries, _, err := managedFieldsOf(live)
		if err == nil {
			mgd, err = decodeManaged(entries)
		}
		if err != nil {
			return nil, fmt.Errorf("failed to decode managed fields: %w", err)
		}
		live = withoutManagedFields(live)
	}
	if len(mgd.fields) == 0 {
		id := managerID{Manager: beforeFirstApplyManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: m.apiVersion, Subresource: subresource}
		if err := m.update(m.zero(), live, mgd, id.key()); err != nil {
			return nil, fmt.Errorf("failed to create manager for existing fields: %w", err)
		}
		m.capUpdaters(mgd)
	}
	id := managerID{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource}
	if id.Manager == "" {
		id.Manager = unknownManager
	}
	key := id.key()

	liveT, err := m.typedValue(live, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("live object does not match the schema: %w", err)
	}
	appliedT, err := m.typedValue(applied)
	if err != nil {
		return nil, &InvalidApplyError{Message: fmt.Sprintf("failed to create typed patch object (%s): %v", describeApplied(applied), err), notTyped: true}
	}
	updater := m.updater(mgd.fields)
	newT, fields, err := updater.Apply(liveT, appliedT, fieldpath.APIVersion(m.apiVersion), mgd.fields, key, force)
	if err != nil {
		var conflicts merge.Conflicts
		if !errors.As(err, &conflicts) {
			return nil, err
		}
		// kubectl's server-side apply takes over, without conflicts, the
		// fields its client-side apply recorded and no one changed since.
		if manager != KubectlApplyManager {
			return nil, newConflictError(conflicts)
		}
		allowed, aerr := m.lastAppliedFields(live, liveT)
		if aerr != nil {
			return nil, newConflictError(conflicts)
		}
		if rest := conflictsOutside(conflicts, allowed); len(rest) > 0 {
			return nil, newConflictError(rest)
		}
		newT, fields, err = updater.Apply(liveT, appliedT, fieldpath.APIVersion(m.apiVersion), mgd.fields, key, true)
		if err != nil {
			return nil, err
		}
	}
	mgd.fields = fields
	strip(mgd.fields, key)
	var out map[string]any
	if newT != nil {
		mgd.times[key] = m.stamp()
		res, ok := newT.AsValue().Unstructured().(map[string]any)
		if !ok {
			return nil, fmt.Errorf("applied object is not an object")
		}
		out = deepCopy(res).(map[string]any)
	} else {
		out = deepCopy(live).(map[string]any)
	}
	entries, err := mgd.encode()
	if err != nil {
		return nil, err
	}
	setManagedFields(out, entries)
	if manager == KubectlApplyManager {
		if err := syncLastApplied(out, applied); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkApplied checks an apply configuration's type and metadata.
func (m *Manager) checkApplied(live, applied map[string]any) error {
	apiVersion, _ := applied["apiVersion"].(string)
	kind, _ := applied["kind"].(string)
	want := m.kind
	if want == "" && live != nil {
		want, _ = live["kind"].(string)
	}
	if apiVersion != m.apiVersion || kind == "" || (want != "" && kind != want) {
		return &InvalidApplyError{Message: "invalid object type: " + gvkString(apiVersion, kind)}
	}
	if md, ok := applied["metadata"].(map[string]any); ok {
		if mf, ok := md["managedFields"]; ok && mf != nil {
			return &InvalidApplyError{Message: "metadata.managedFields must be nil"}
		}
	}
	return nil
}

// gvkString formats a group, version and kind as Kubernetes prints a
// GroupVersionKind: "/v1, Kind=ConfigMap", "apps/v1, Kind=Deployment".
func gvkString(apiVersion, kind string) string {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	return group + "/" + version + ", Kind=" + kind
}

// describeApplied names an apply configuration as kube-apiserver's messages
// do: "namespace/name; group/version, Kind=Kind", from the configuration
// itself ("/name" without a namespace).
func describeApplied(applied map[string]any) string {
	md, _ := applied["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	apiVersion, _ := applied["apiVersion"].(string)
	kind, _ := applied["kind"].(string)
	return ns + "/" + name + "; " + gvkString(apiVersion, kind)
}

// Merge merges the apply configuration config into obj as an apply merges
// it (maps, list-type maps and sets merged by key, atomic lists and scalars
// replaced, nothing removed) and returns the result, recording no
// ownership: what a MutatingAdmissionPolicy's ApplyConfiguration mutation
// does. obj and config are JSON objects; neither is modified.
func (m *Manager) Merge(obj, config map[string]any) (map[string]any, error) {
	norm, _ := smdschema.Normalize(config)
	liveT, err := m.typedValue(smdschema.NormalizeObject(deepCopy(any(obj)).(map[string]any)), typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	cfgT, err := m.typedValue(norm.(map[string]any))
	if err != nil {
		return nil, err
	}
	out, err := liveT.Merge(cfgT)
	if err != nil {
		return nil, err
	}
	u, ok := out.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("merged object is not an object")
	}
	return u, nil
}
