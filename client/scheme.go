package client

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/codec"
)

// GroupVersionResource names a resource type on the server: API group (""
// for the core group), version and plural resource name, such as
// {"apps", "v1", "deployments"}.
type GroupVersionResource struct {
	Group, Version, Resource string // "" is the core group
}

// GroupVersion returns the API version the resource is served under: "v1" in
// the core group, "group/version" otherwise.
func (r GroupVersionResource) GroupVersion() string { return joinGroupVersion(r.Group, r.Version) }

// GroupResource drops the version.
func (r GroupVersionResource) GroupResource() metav1.GroupResource {
	return metav1.GroupResource{Group: r.Group, Resource: r.Resource}
}

// String formats r as "deployments.v1.apps", or "pods.v1" in the core group.
func (r GroupVersionResource) String() string {
	if r.Group == "" {
		return r.Resource + "." + r.Version
	}
	return r.Resource + "." + r.Version + "." + r.Group
}

// GroupVersionKind names a kind in an API version, such as
// {"apps", "v1", "Deployment"}.
type GroupVersionKind struct {
	Group, Version, Kind string // "" is the core group
}

// APIVersion returns the apiVersion objects of the kind carry: "v1" in the
// core group, "group/version" otherwise.
func (k GroupVersionKind) APIVersion() string { return joinGroupVersion(k.Group, k.Version) }

// GroupKind drops the version.
func (k GroupVersionKind) GroupKind() metav1.GroupKind {
	return metav1.GroupKind{Group: k.Group, Kind: k.Kind}
}

// String formats k as "apps/v1, Kind=Deployment".
func (k GroupVersionKind) String() string { return k.APIVersion() + ", Kind=" + k.Kind }

func joinGroupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// Kind describes how a Go type is served: its resource path, kind, scope and
// whether the server speaks protobuf for it. Register one per Go type.
type Kind struct {
	// Group is the API group, "" for the core group.
	Group string
	// Version is the API version within the group, such as "v1".
	Version string
	// Resource is the plural, lower-case resource name, such as "widgets".
	Resource string
	// Kind is the kind, such as "Widget".
	Kind string
	// ListKind is the kind of lists (default Kind+"List").
	ListKind string
	// Namespaced says the objects live in namespaces.
	Namespaced bool
	// Protobuf says the server accepts and serves the resource as protobuf,
	// as kube-apiserver does for built-in kinds and never for custom
	// resources. The client uses protobuf only when this is set, the Config
	// prefers it, and the Go type encodes itself (see Scheme.Add).
	Protobuf bool
	// ShortNames are the abbreviations discovery lists for the resource
	// ("po" for pods), as kubectl accepts them.
	ShortNames []string
	// Categories are the groups of resources discovery puts the resource
	// in ("all" for what kubectl get all lists).
	Categories []string
}

// clone returns k with slices of its own.
func (k Kind) clone() Kind {
	k.ShortNames, k.Categories = slices.Clone(k.ShortNames), slices.Clone(k.Categories)
	return k
}

// equal reports whether k and o describe the same registration.
func (k Kind) equal(o Kind) bool {
	return k.Group == o.Group && k.Version == o.Version && k.Resource == o.Resource && k.Kind == o.Kind &&
		k.ListKind == o.ListKind && k.Namespaced == o.Namespaced && k.Protobuf == o.Protobuf &&
		slices.Equal(k.ShortNames, o.ShortNames) && slices.Equal(k.Categories, o.Categories)
}

// GroupVersionResource returns the resource's name on the server.
func (k Kind) GroupVersionResource() GroupVersionResource {
	return GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
}

// GroupVersionKind returns the kind's full name.
func (k Kind) GroupVersionKind() GroupVersionKind {
	return GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

// APIVersion returns the apiVersion of objects of the kind.
func (k Kind) APIVersion() string { return joinGroupVersion(k.Group, k.Version) }

// TypeMeta returns the kind and apiVersion objects of the kind carry.
func (k Kind) TypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{Kind: k.Kind, APIVersion: k.APIVersion()}
}

func (k Kind) validate() error {
	if k.Version == "" || k.Resource == "" || k.Kind == "" {
		return fmt.Errorf("client: kind %+v needs Version, Resource and Kind", k)
	}
	return nil
}

// typeInfo is what the client knows of a registered Go type.
type typeInfo struct {
	goType reflect.Type // the struct type T
	kind   Kind
	// protobuf: the server speaks protobuf for the kind and *T encodes and
	// decodes itself with its own methods (not promoted ones).
	protobuf bool
}

// Scheme maps Go types to the resources they are served as. The client looks
// up the type given to For[T] here, so typed requests need no discovery.
//
// A Scheme is safe for concurrent use: registration takes a write lock,
// lookups a read lock. Register types before using them, typically in an init
// function or at program start.
type Scheme struct {
	mu     sync.RWMutex
	byType map[reflect.Type]*typeInfo
	byGVK  map[GroupVersionKind]reflect.Type
}

// NewScheme returns an empty scheme. Most programs use DefaultScheme, which
// holds the built-in kinds.
func NewScheme() *Scheme {
	return &Scheme{byType: map[reflect.Type]*typeInfo{}, byGVK: map[GroupVersionKind]reflect.Type{}}
}

// NewBuiltinScheme returns a scheme holding a Go type for every resource a
// default kube-apiserver v1.37 serves (the api/<group>/<version> packages,
// autoscaling's HorizontalPodAutoscaler in both v1 and v2), each registered
// with the resource name, kind, scope, short names and categories that
// server's discovery lists, and with Protobuf set, as kube-apiserver serves
// protobuf for every built-in kind. Subresource kinds (Scale, Eviction, the
// pod options) are not registered: they are not resources of their own.
func NewBuiltinScheme() *Scheme {
	s := NewScheme()
	for _, add := range builtinTypes {
		if err := add(s); err != nil {
			panic(err) // the table is static: a failure is a programming error
		}
	}
	return s
}

// defaultScheme is the process-wide registry; its own lock guards it.
var defaultScheme = NewBuiltinScheme()

// DefaultScheme returns the process-wide scheme that clients from New use:
// the built-in kinds and whatever Register added.
func DefaultScheme() *Scheme { return defaultScheme }

// ErrKindConflict is matched (errors.Is) by the error of a registration that
// contradicts an earlier one.
var ErrKindConflict = errors.New("client: conflicting kind registration")

// ObjectPtr is the constraint on the type parameters of the typed client and
// of registration: PT is *T, and *T has object metadata, as every struct that
// embeds metav1.ObjectMeta does.
type ObjectPtr[T any] interface {
	*T
	metav1.Object
}

// Add registers T in s as kind k. Registering the same type as the same kind
// again does nothing; registering a type or a kind a second time differently
// is an error matching ErrKindConflict.
//
// Protobuf is used for T when k.Protobuf is set and *T has its own protobuf
// methods (Size, MarshalToSizedBuffer and Unmarshal, as kapi's and
// k8s.io/api's generated types have). Methods a struct merely inherits from an
// embedded field do not count: a custom resource struct embedding
// metav1.ObjectMeta gets ObjectMeta's Marshal promoted to it, and would
// otherwise be sent as a bare ObjectMeta.
func Add[T any, PT ObjectPtr[T]](s *Scheme, k Kind) error {
	return s.add(reflect.TypeFor[T](), k)
}

// Register registers T in DefaultScheme as kind k, typically from an init
// function or a package-level var, in one line:
//
//	client.Register[Widget](client.Kind{Group: "example.com", Version: "v1",
//		Resource: "widgets", Kind: "Widget", Namespaced: true})
//
// It panics when k is incomplete or contradicts an earlier registration, as
// both are programming errors; use Add to get an error instead.
func Register[T any, PT ObjectPtr[T]](k Kind) {
	if err := Add[T, PT](defaultScheme, k); err != nil {
		panic(err)
	}
}

func (s *Scheme) add(t reflect.Type, k Kind) error {
	if err := k.validate(); err != nil {
		return err
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("client: %v is not a struct type", t)
	}
	if k.ListKind == "" {
		k.ListKind = k.Kind + "List"
	}
	k = k.clone()
	info := &typeInfo{goType: t, kind: k, protobuf: k.Protobuf && codec.HasOwnProtobuf(t)}
	gvk := k.GroupVersionKind()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byType[t]; ok {
		if old.kind.equal(k) {
			return nil
		}
		return fmt.Errorf("%w: %v is registered as %s, not %s", ErrKindConflict, t, old.kind.GroupVersionKind(), gvk)
	}
	if other, ok := s.byGVK[gvk]; ok {
		return fmt.Errorf("%w: %s is registered for %v, not %v", ErrKindConflict, gvk, other, t)
	}
	s.byType[t] = info
	s.byGVK[gvk] = t
	return nil
}

// lookup returns the registration of the struct type t.
func (s *Scheme) lookup(t reflect.Type) (*typeInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	info, ok := s.byType[t]
	return info, ok
}

// KindFor returns the kind T is registered as.
func KindFor[T any](s *Scheme) (Kind, bool) {
	info, ok := s.lookup(reflect.TypeFor[T]())
	if !ok {
		return Kind{}, false
	}
	return info.kind.clone(), true
}

// New returns a pointer to a new zero value of the Go type registered as
// gvk, such as a *batchv1.Job for {"batch", "v1", "Job"}, for decoding
// objects whose kind is known only at run time.
func (s *Scheme) New(gvk GroupVersionKind) (any, bool) {
	s.mu.RLock()
	t, ok := s.byGVK[gvk]
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return reflect.New(t).Interface(), true
}

// UsesProtobuf reports whether T is sent and received as protobuf when the
// Config prefers it: T is registered with Kind.Protobuf and *T encodes itself.
func UsesProtobuf[T any](s *Scheme) bool {
	info, ok := s.lookup(reflect.TypeFor[T]())
	return ok && info.protobuf
}

// Kinds returns every registered kind, sorted by group, version and kind.
func (s *Scheme) Kinds() []Kind {
	s.mu.RLock()
	out := make([]Kind, 0, len(s.byType))
	for _, info := range s.byType {
		out = append(out, info.kind.clone())
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return out
}

// NotRegisteredError is the error of typed requests for a Go type the
// client's scheme does not know.
type NotRegisteredError struct {
	// Type is the Go type.
	Type reflect.Type
}

// Error says which type is missing and how to register it.
func (e *NotRegisteredError) Error() string {
	return fmt.Sprintf("client: %v is not registered; register it with client.Register[%s](client.Kind{...})", e.Type, e.Type.Name())
}
