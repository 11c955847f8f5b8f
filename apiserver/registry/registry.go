// Package registry describes the resources the reference API server serves and
// the behaviour each one has on top of generic storage: how to make and copy its
// objects, which names it accepts, which fields label its objects for field
// selectors, what a create or update resets (status, generation), and whether it
// has a status subresource.
//
// # Built-in resources
//
// Builtin returns the resources of Kubernetes' core, apps, coordination and
// discovery groups that kapi ships types for; BuiltinWith configures them. A
// server can register more (custom resources come through the same Resource
// description).
//
// # Deletion
//
// Resource.GracePeriod makes deletion graceful, as for pods: a pod bound to
// a node is marked with deletionTimestamp and deletionGracePeriodSeconds and
// kept until deleted with a period of 0. Resource.ReturnDeletedObject makes a
// delete answer with the object instead of a Status (pods, services, service
// accounts).
//
// # Defaulting and admission
//
// The built-in kinds fill in what kube-apiserver v1.32 fills in, so that a
// created object reads back as it would from a real cluster: the defaults
// kube-apiserver applies when it decodes an object (Resource.Default: a
// pod's restartPolicy, a deployment's strategy, a secret's stringData folded
// into data, …) and what its strategies and allocators set
// (Resource.PrepareForCreate and PrepareForUpdate: a pod's status, a
// service's cluster IP and IP families). The admission plugins, which read
// other objects (a pod's ServiceAccount, PriorityClasses, LimitRanges,
// quotas), are the server's (package apiserver, admission.go); the pieces
// of them that concern one kind alone are here (admission.go: the token
// volume, default tolerations, a new node's taint).
//
// Cluster IPs and node ports come from allocators that each BuiltinWith call
// owns, in memory: a server must call Resource.Release when a service is
// deleted or a create does not store it, and Resource.Retain after an update;
// over a persistent store an allocator starts empty, unaware of the addresses
// and ports stored services hold.
//
// # Validation
//
// Every object's metadata is checked as kube-apiserver checks it
// (ValidateObjectMeta, ValidateObjectMetaUpdate), by the rules of its kind
// (Resource.Meta: names as DNS subdomains, DNS labels or path segments,
// the standard-finalizer rule of the built-in groups); the string formats
// are in names.go, worded as kube-apiserver words them. Resource.Validate
// checks the rest (ConfigMap and Secret data, namespace finalizers, pod and
// deployment basics, custom resources by their schema).
//
// # Concurrency
//
// A Registry is safe for concurrent use; registration takes a write lock, lookups
// a read lock.
package registry

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "github.com/kapi-dev/kapi/api/apiextensions/v1"
	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/schema"
	"github.com/kapi-dev/kapi/codec"
)

// Object is a stored API object.
type Object = metav1.Object

// Resource describes one resource (e.g. "pods" in core/v1).
type Resource struct {
	Group, Version string
	Resource       string // plural, lower case: "configmaps"
	Singular       string
	Kind, ListKind string
	Namespaced     bool
	ShortNames     []string
	Categories     []string
	// Verbs are the verbs the resource serves, as discovery lists them
	// (sorted for a built-in resource). Registration fills in every verb
	// of a stored resource when nil.
	Verbs []string
	// Subresources are the subresources discovery lists, in its order.
	// Registration lists status and scale, as StatusSubresource and Scale
	// say, when nil.
	Subresources []Subresource

	// Computed, when set, answers the resource's get and list (its only
	// verbs) at each request: the objects of the resource (name "") or
	// the one called name, or the Status to answer with (404). Such a
	// resource is NotStored: kube-apiserver's componentstatuses, probes of
	// the cluster's components.
	Computed func(ctx context.Context, env ComputeEnv, name string) ([]Object, *metav1.Status)
	// ResetFields are, per endpoint ("" the resource itself, "status"),
	// the fields (dotted paths) that writes through it never own in
	// managedFields: kube-apiserver's strategy's GetResetFields. An
	// endpoint it does not list resets status on the resource itself of a
	// kind with a status subresource, spec and metadata on /status (and
	// /approval).
	ResetFields map[string][]string
	// StatusSubresource means the resource has /status: updates of the main
	// resource keep the stored status, updates of /status change only status.
	StatusSubresource bool
	// Generation means the object's metadata.generation starts at 1 and is
	// bumped whenever its spec changes (GenerationChanged). Without it, the
	// generation a client sets on create is kept and never changes.
	Generation bool
	// SameSpec, when set, tells GenerationChanged whether two objects have
	// the same spec, for kinds whose spec is not a field named Spec
	// (webhook configurations: their webhooks).
	SameSpec func(a, b Object) bool
	// GenerationOnAnnotations makes a change of annotations bump the
	// generation too (deployments: their annotations are copied to their
	// replica sets).
	GenerationOnAnnotations bool
	// AllowCreateOnUpdate lets PUT create a missing object.
	AllowCreateOnUpdate bool
	// Bookmark, when set, fills the empty object of a BOOKMARK watch
	// event as kube-apiserver shows it: its bookmarks are empty objects of
	// the kind's internal version converted to the served one, and the
	// conversion writes some fields whatever their value (a Deployment's
	// spec.replicas, a DaemonSet's template generation annotation).
	Bookmark func(Object)
	// Protobuf means objects can be served and accepted as protobuf.
	Protobuf bool

	// New returns an empty object of the kind.
	New func() Object
	// Copy returns a deep copy.
	Copy func(Object) Object
	// SelectableFields are the field selector fields beyond metadata.name and
	// metadata.namespace, with their values for an object.
	SelectableFields func(Object) map[string]string
	// Meta says how the kind's own validation checks metadata: the rule
	// for names (DNS-1123 subdomain by default), whether finalizers follow
	// the built-in groups' rule. Every kind's metadata is also checked as
	// kube-apiserver checks any object's (ValidateObjectMeta).
	Meta MetaRules
	// Validate checks a new or updated object beyond its metadata; old is
	// nil on create.
	Validate func(obj, old Object) metav1.FieldErrors
	// Warnings are kube-apiserver's warnings for a valid new or updated
	// object (its strategy's WarningsOnCreate and WarningsOnUpdate; old is
	// nil on create), sent as Warning headers of the write's response.
	Warnings func(obj, old Object) []string
	// StatusMetadata, when set, copies from in to next the metadata that an
	// update of /status may change (next is the stored object with the new
	// status). Nil means a /status update changes no metadata, as for
	// custom resources.
	StatusMetadata func(next, in Object)
	// Default fills in the defaults kube-apiserver applies when it decodes a
	// request body (the SetDefaults_* functions of k8s.io/kubernetes, and
	// what its v1 conversion does, such as folding a Secret's stringData into
	// data). It is idempotent. A server calls it on every object it decodes
	// from a client: create, update, /status update, patch result.
	Default func(obj Object)
	// PrepareForCreate resets what a client may not set on create (e.g.
	// status) and applies the mutations of kube-apiserver's default admission
	// plugins and allocators (a pod's service account token volume, a
	// service's cluster IP). The built-in kinds apply Default first, so a
	// created object is defaulted even where the server does not call
	// Default itself.
	PrepareForCreate func(obj Object)
	// Requester, if set, records who creates obj, after PrepareForCreate:
	// user is the request's (a CertificateSigningRequest's spec.username,
	// uid, groups and extra are the requester's, whatever the client sent).
	Requester func(obj Object, user UserInfo)
	// PrepareForUpdate is PrepareForCreate for an update of the main resource
	// (not /status): obj is the next state, already carrying the stored
	// status and system metadata, old the stored object. It keeps what the
	// server assigned at creation when the client leaves it out (a service's
	// cluster IP, a pod's priority) and applies update-time admission
	// mutations. The built-in kinds apply the spec half of Default first.
	// It never modifies old, not even through obj's status, which may share
	// memory with it.
	PrepareForUpdate func(obj, old Object)
	// Admit runs the checks of kube-apiserver's default admission plugins
	// that refuse a request, on a create (old nil) or an update of the main
	// resource, after PrepareForCreate or PrepareForUpdate and before
	// Validate. A non-nil Status is the response (the plugins answer 403
	// Forbidden).
	Admit func(obj, old Object) *metav1.Status
	// Release frees what PrepareForCreate or PrepareForUpdate reserved for
	// obj (a service's cluster IPs), once obj has been removed from storage
	// or when an object that went through PrepareForCreate will not be
	// stored (dry run, refused, storage error). Reservations belong to the
	// object's UID, so Release never frees another object's and may be
	// called more than once.
	Release func(obj Object)
	// Retain frees what PrepareForUpdate reserved for obj's UID that obj,
	// the object's stored state after an update (or the state a failed
	// update left), does not use: a service's node ports that an update
	// replaced.
	Retain func(obj Object)
	// GracePeriod, when set, makes deletion graceful, as the strategies of
	// kube-apiserver that implement CheckGracefulDelete: it returns the grace
	// period, in seconds, that a delete asking for requested (nil when the
	// client gave none) gives obj. A positive period marks the object with
	// deletionTimestamp (now plus the period) and deletionGracePeriodSeconds
	// and keeps it until a delete with a period of 0; 0 removes it at once.
	GracePeriod func(obj Object, requested *int64) int64
	// Warning, when set, is the text of the Warning header (code 299) every
	// request of the resource is answered with: kube-apiserver's notice for
	// a deprecated API.
	Warning string
	// ReturnDeletedObject makes a delete that removes the object answer with
	// the object as it was last stored instead of a Status (pods, services,
	// service accounts, as kube-apiserver's storage of those kinds).
	ReturnDeletedObject bool
	// WithTypeMeta returns a shallow copy of obj with kind and apiVersion set,
	// for responses that carry them (stored objects do not).
	WithTypeMeta func(obj Object) Object

	// Custom marks a custom resource (served from a CustomResourceDefinition):
	// objects are *unstructured.Unstructured, never protobuf, and strategic
	// merge patches are refused (415), as in kube-apiserver.
	Custom bool
	// Schema is a custom resource version's openAPIV3Schema: objects are
	// validated and pruned by it, and server-side apply merges by it. Nil
	// for built-in kinds, whose structure is their Go type.
	Schema *apiextensionsv1.JSONSchemaProps
	// Printer, when set, prints the resource's Table (`kubectl get`
	// columns); see PrinterFor for the others.
	Printer *Printer
	// PrinterColumns are a custom resource version's
	// additionalPrinterColumns, for Table responses. Built-in kinds have
	// their own printers.
	PrinterColumns []apiextensionsv1.CustomResourceColumnDefinition
	// Scale, when set, serves the scale subresource.
	Scale *ScaleSubresource
	// StoredAs, when set, stores the resource's objects as another
	// resource's, converted both ways: both resources read and write the
	// same objects, each in its own shape, as kube-apiserver stores
	// events.k8s.io Events as core Events and autoscaling/v1
	// HorizontalPodAutoscalers as v2 ones.
	StoredAs *StoredAs
	// Convert, when set, converts an object of the resource's group and kind
	// to version, returning obj itself when it is in that version (a custom
	// resource whose CRD converts through a webhook): the server reads
	// objects through it in Version and writes them in StorageVersion.
	// Without it, objects are stored as they are written.
	Convert func(ctx context.Context, obj Object, version string) (Object, error)
	// StorageVersion is the version objects are stored in when it is not
	// Version (a custom resource served in several versions); discovery
	// hashes it into storageVersionHash.
	StorageVersion string
	// NotStored marks a resource the server answers without storing it
	// (the reviews, bindings): discovery gives it no storageVersionHash,
	// and a create is answered by the server's handler for it.
	NotStored bool
}

// ComputeEnv is what the server gives a Computed resource.
type ComputeEnv struct {
	// StorageHealth returns nil when the server's storage answers.
	StorageHealth func(context.Context) error
}

// ScaleSubresource says where the scale subresource reads and writes an
// object's replicas (JSON paths as a CustomResourceDefinition spells them,
// ".spec.replicas").
type ScaleSubresource struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	// LabelSelectorPath is the path of a string holding the label selector in
	// its serialised form; empty when the object has none.
	LabelSelectorPath string
}

// GroupVersion is "v1" for the core group, "group/version" otherwise.
func (r *Resource) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// GroupResource names the resource in errors ("configmaps", "deployments.apps").
func (r *Resource) GroupResource() metav1.GroupResource {
	return metav1.GroupResource{Group: r.Group, Resource: r.Resource}
}

// GroupKind names the kind in validation errors.
func (r *Resource) GroupKind() metav1.GroupKind {
	return metav1.GroupKind{Group: r.Group, Kind: r.Kind}
}

// InvalidGroupKind is the group and kind an Invalid (422) Status of the
// resource names: kube-apiserver names its internal kind, which for a
// resource stored as another's is of the storage's group (an
// events.k8s.io Event is invalid as a core Event).
func (r *Resource) InvalidGroupKind() metav1.GroupKind {
	if r.StoredAs != nil {
		return metav1.GroupKind{Group: r.StoredAs.Group, Kind: r.Kind}
	}
	return r.GroupKind()
}

// TypeMeta is the kind and apiVersion of objects of the resource.
func (r *Resource) TypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{Kind: r.Kind, APIVersion: r.GroupVersion()}
}

// FieldSet returns the field selector values of obj, metadata.name and
// metadata.namespace included.
func (r *Resource) FieldSet(obj Object) map[string]string {
	m := map[string]string{"metadata.name": obj.GetName()}
	if r.Namespaced {
		m["metadata.namespace"] = obj.GetNamespace()
	}
	if r.SelectableFields != nil {
		for k, v := range r.SelectableFields(obj) {
			m[k] = v
		}
	}
	return m
}

// KnownField reports whether field can be used in a field selector.
func (r *Resource) KnownField(field string) bool {
	if field == "metadata.name" || field == "metadata.namespace" {
		return true
	}
	if r.SelectableFields == nil {
		return false
	}
	_, ok := r.SelectableFields(r.New())[field]
	return ok
}

// StoredAs names the resource whose storage a resource shares, and
// converts between the two shapes. ToStorage and FromStorage return new
// objects and never modify their argument.
type StoredAs struct {
	Group, Resource        string
	ToStorage, FromStorage func(Object) Object
}

// Subresource is a subresource of a resource as discovery lists it: its
// name, the kind its requests and responses carry (Group and Version empty
// when the kind is of the resource's own group version) and its verbs.
type Subresource struct {
	Name  string
	Kind  metav1.GroupVersionKind
	Verbs []string
}

// defaultVerbs are the verbs of a stored resource as discovery lists them:
// a custom resource's in kube-apiserver's order for them, a built-in one's
// sorted.
func defaultVerbs(custom bool) []string {
	if custom {
		return []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

// defaultSubresources lists status and scale for a resource that does not
// list its subresources itself: a custom resource's status first, as
// kube-apiserver lists them.
func defaultSubresources(r *Resource) []Subresource {
	var subs []Subresource
	if r.StatusSubresource {
		subs = append(subs, Subresource{Name: "status", Kind: metav1.GroupVersionKind{Kind: r.Kind}, Verbs: []string{"get", "patch", "update"}})
	}
	if r.Scale != nil {
		subs = append(subs, Subresource{Name: "scale", Kind: metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"},
			Verbs: []string{"get", "patch", "update"}})
	}
	return subs
}

// HasVerb reports whether r serves verb.
func (r *Resource) HasVerb(verb string) bool { return slices.Contains(r.Verbs, verb) }

// Subresource returns r's subresource called name.
func (r *Resource) Subresource(name string) (Subresource, bool) {
	for _, s := range r.Subresources {
		if s.Name == name {
			return s, true
		}
	}
	return Subresource{}, false
}

// Registry holds the resources a server serves.
type Registry struct {
	mu        sync.RWMutex
	resources map[string]*Resource // key: group/version/resource
	groups    []string             // API groups in registration order ("" first)
	gen       uint64               // bumped by every Add, Put and Remove
}

// Generation is a number that changes whenever a resource is registered,
// replaced or removed, so that what is derived from the registry (OpenAPI
// documents) can be cached until it changes.
func (g *Registry) Generation() uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.gen
}

// All returns every registered resource, sorted by group, version and
// resource, with the generation they belong to.
func (g *Registry) All() ([]*Resource, uint64) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*Resource, 0, len(g.resources))
	for _, r := range g.resources {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Resource < b.Resource
	})
	return out, g.gen
}

// New returns an empty registry.
func New() *Registry { return &Registry{resources: map[string]*Resource{}} }

// Add registers r. It fails if the resource is already registered or the
// description is incomplete.
func (g *Registry) Add(r *Resource) error { return g.register(r, false) }

// Put registers r like Add, replacing a registration of the same
// group/version/resource.
func (g *Registry) Put(r *Resource) error { return g.register(r, true) }

func (g *Registry) register(r *Resource, replace bool) error {
	if r.Version == "" || r.Resource == "" || r.Kind == "" || r.New == nil || r.Copy == nil {
		return fmt.Errorf("registry: resource %q is incomplete", r.Resource)
	}
	if r.ListKind == "" {
		r.ListKind = r.Kind + "List"
	}
	if r.Singular == "" {
		r.Singular = strings.ToLower(r.Kind)
	}
	if r.Verbs == nil {
		r.Verbs = defaultVerbs(r.Custom)
	}
	if r.Subresources == nil {
		r.Subresources = defaultSubresources(r)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key := r.Group + "/" + r.Version + "/" + r.Resource
	if _, dup := g.resources[key]; dup && !replace {
		return fmt.Errorf("registry: %s already registered", key)
	}
	g.resources[key] = r
	g.gen++
	if !containsString(g.groups, r.Group) {
		g.groups = append(g.groups, r.Group)
	}
	return nil
}

// Remove unregisters group/version/resource and reports whether it was
// registered. A group left without resources leaves GroupOrder.
func (g *Registry) Remove(group, version, resource string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := group + "/" + version + "/" + resource
	if _, ok := g.resources[key]; !ok {
		return false
	}
	delete(g.resources, key)
	g.gen++
	for _, r := range g.resources {
		if r.Group == group {
			return true
		}
	}
	for i, x := range g.groups {
		if x == group {
			g.groups = append(g.groups[:i:i], g.groups[i+1:]...)
			break
		}
	}
	return true
}

// Get returns the resource, or nil.
func (g *Registry) Get(group, version, resource string) *Resource {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.resources[group+"/"+version+"/"+resource]
}

// ByGroupResource returns the resources named group/resource in every version
// served, sorted by version.
func (g *Registry) ByGroupResource(group, resource string) []*Resource {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*Resource
	for _, r := range g.resources {
		if r.Group == group && r.Resource == resource {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// HasGroupVersion reports whether any resource is served under group/version.
func (g *Registry) HasGroupVersion(group, version string) bool {
	return len(g.ForGroupVersion(group, version)) > 0
}

// ForGroupVersion returns the resources of group/version sorted by name.
func (g *Registry) ForGroupVersion(group, version string) []*Resource {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*Resource
	for _, r := range g.resources {
		if r.Group == group && r.Version == version {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// Groups returns the API groups with their versions, in registration order.
func (g *Registry) Groups() map[string][]string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	m := map[string][]string{}
	for _, r := range g.resources {
		if !containsString(m[r.Group], r.Version) {
			m[r.Group] = append(m[r.Group], r.Version)
		}
	}
	return m
}

// GroupOrder is the order groups were first registered in.
func (g *Registry) GroupOrder() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return append([]string(nil), g.groups...)
}

func containsString(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Typed fills New and Copy for a Go type T that embeds ObjectMeta and has a
// generated DeepCopy.
func Typed[T any, PT interface {
	*T
	metav1.Object
	DeepCopy() *T
	GetObjectKind() *metav1.TypeMeta
}](r *Resource) *Resource {
	r.New = func() Object { return PT(new(T)) }
	r.Copy = func(o Object) Object { return PT(o.(PT).DeepCopy()) }
	r.WithTypeMeta = func(o Object) Object {
		c := PT(new(T))
		*c = *o.(PT)
		*c.GetObjectKind() = metav1.TypeMeta{Kind: r.Kind, APIVersion: r.GroupVersion()}
		return c
	}
	// Only a type that declares its own protobuf methods is served as
	// protobuf; a custom resource struct inherits ObjectMeta's, which would
	// encode the metadata alone.
	r.Protobuf = codec.HasOwnProtobuf(reflect.TypeFor[T]())
	return r
}

// field returns the struct field name of obj (a pointer to a struct), or an
// invalid Value.
func field(obj Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

// SpecEqual reports whether a and b have equal spec fields, by
// SemanticEqual (for custom resources, everything but apiVersion, kind,
// metadata and status; true when the kind has no spec).
func SpecEqual(a, b Object) bool {
	if ua, ok := a.(*unstructured.Unstructured); ok {
		if ub, ok := b.(*unstructured.Unstructured); ok {
			return customSpecEqual(ua, ub)
		}
	}
	fa, fb := field(a, "Spec"), field(b, "Spec")
	if !fa.IsValid() || !fb.IsValid() {
		return true
	}
	return SemanticEqual(fa.Interface(), fb.Interface())
}

// GenerationChanged reports whether an update from old to next bumps the
// generation, as kube-apiserver's strategies decide: a kind with Generation
// on a change of its spec (and, with GenerationOnAnnotations, of its
// annotations); a custom resource on a change of anything but metadata and,
// when it has a status subresource, status.
func (r *Resource) GenerationChanged(old, next Object) bool {
	if !r.Generation {
		return false
	}
	if r.SameSpec != nil {
		if !r.SameSpec(old, next) {
			return true
		}
	} else if !SpecEqual(old, next) {
		return true
	}
	if r.Custom && !r.StatusSubresource {
		ua, _ := old.(*unstructured.Unstructured)
		ub, _ := next.(*unstructured.Unstructured)
		if ua != nil && ub != nil {
			x, okx := ua.Object["status"]
			y, oky := ub.Object["status"]
			if okx != oky || (okx && !schema.Equal(x, y)) {
				return true
			}
		}
	}
	return r.GenerationOnAnnotations && !maps.Equal(old.GetAnnotations(), next.GetAnnotations())
}

// CopyStatus sets dst's status to src's (no-op for kinds without status;
// a custom resource's "status" member).
func CopyStatus(dst, src Object) {
	if ud, ok := dst.(*unstructured.Unstructured); ok {
		if us, ok := src.(*unstructured.Unstructured); ok {
			customCopyStatus(ud, us)
		}
		return
	}
	d, s := field(dst, "Status"), field(src, "Status")
	if d.IsValid() && s.IsValid() && d.CanSet() {
		d.Set(s)
	}
}

// CopySpec sets dst's spec to src's (no-op for kinds without spec).
func CopySpec(dst, src Object) {
	if ud, ok := dst.(*unstructured.Unstructured); ok {
		if us, ok := src.(*unstructured.Unstructured); ok {
			customCopySpec(ud, us)
		}
		return
	}
	d, s := field(dst, "Spec"), field(src, "Spec")
	if d.IsValid() && s.IsValid() && d.CanSet() {
		d.Set(s)
	}
}

// ResetStatus zeroes obj's status.
func ResetStatus(obj Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		delete(u.Object, "status")
		return
	}
	if f := field(obj, "Status"); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}
