package fake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/api/unstructured"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// seed is an object to create, resolved to its resource.
type seed struct {
	res     *registry.Resource
	obj     *unstructured.Unstructured // the body to create
	status  any                        // the status to write after creating, nil if none
	delete  bool                       // delete after creating (it has finalizers: it stays, marked)
	display string                     // `Pod "web/frontend-0"`, for errors
}

// Seed creates objects through the server, as a client would, so that they
// get what the server gives every object (uid, resourceVersion, creation
// timestamp, defaults) and go through its validation. Objects are typed
// kapi objects (or any type the server's registry serves), as pointers or
// values, or *unstructured.Unstructured with apiVersion and kind.
//
// Beyond a plain create, seeding does what it takes to make the object
// exist as given:
//
//   - Namespaces come first, in the order given; then every namespace a
//     seed names that does not exist yet is created; then the other objects,
//     in the order given.
//   - A namespaced object without a namespace goes to the client's default
//     namespace; a cluster-scoped object's namespace is ignored.
//   - The server's system fields are the server's: a seed's uid,
//     resourceVersion, creationTimestamp and generation are ignored.
//   - A status the create resets (kinds with a status subresource) is then
//     written through /status, as a controller would.
//   - An object with a deletionTimestamp is deleted after it is created; it
//     must have finalizers, which keep it, marked for deletion (the
//     timestamp is the server's clock at seeding).
//
// The objects given are not modified. The first seed the server refuses
// stops seeding with an error naming the object (the objects before it
// stay). Seeding requests are neither recorded in Actions nor given to
// reactors.
func (f *Fake) Seed(ctx context.Context, objects ...any) error {
	ctx = context.WithValue(ctx, seedingKey{}, true)
	seeds := make([]seed, 0, len(objects))
	for i, obj := range objects {
		s, err := f.prepareSeed(obj)
		if err != nil {
			return fmt.Errorf("fake: seed %d (%T%s): %w", i, obj, nameOf(obj), err)
		}
		seeds = append(seeds, s)
	}
	// Namespaces first, then the missing ones, then the rest.
	seeded := map[string]bool{}
	for _, s := range seeds {
		if isNamespace(s.res) {
			if err := f.create(ctx, s); err != nil {
				return err
			}
			seeded[s.obj.GetName()] = true
		}
	}
	for _, s := range seeds {
		ns := s.obj.GetNamespace()
		if !s.res.Namespaced || seeded[ns] {
			continue
		}
		seeded[ns] = true
		if err := f.ensureNamespace(ctx, ns, s.display); err != nil {
			return err
		}
	}
	for _, s := range seeds {
		if !isNamespace(s.res) {
			if err := f.create(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func isNamespace(res *registry.Resource) bool {
	return res.Group == "" && res.Resource == "namespaces"
}

// nameOf is ` "ns/name"` for an object with metadata, "" otherwise.
func nameOf(obj any) string {
	o, ok := obj.(metav1.Object)
	if v := reflect.ValueOf(obj); !ok || v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	return " " + objectName(o.GetNamespace(), o.GetName(), o.GetGenerateName())
}

// objectName is "ns/name", "name", or `generateName "prefix-"` quoted.
func objectName(ns, name, generateName string) string {
	switch {
	case name == "" && generateName != "":
		name = generateName + "…"
	case name == "":
		name = "(no name)"
	}
	if ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%q", name)
}

// prepareSeed turns an object into the request body of its create.
func (f *Fake) prepareSeed(obj any) (seed, error) {
	var u *unstructured.Unstructured
	var goType reflect.Type
	switch o := obj.(type) {
	case nil:
		return seed{}, errors.New("nil object")
	case *unstructured.Unstructured:
		if o == nil {
			return seed{}, errors.New("nil object")
		}
		u = &unstructured.Unstructured{Object: unstructured.DeepCopyJSON(o.Object)}
	case unstructured.Unstructured:
		u = &unstructured.Unstructured{Object: unstructured.DeepCopyJSON(o.Object)}
	default:
		v := reflect.ValueOf(obj)
		switch {
		case v.Kind() == reflect.Pointer && v.IsNil():
			return seed{}, errors.New("nil object")
		case v.Kind() == reflect.Struct:
			p := reflect.New(v.Type())
			p.Elem().Set(v)
			obj = p.Interface()
		}
		if _, ok := obj.(metav1.Object); !ok {
			return seed{}, errors.New("not an API object: it has no object metadata (embed metav1.ObjectMeta)")
		}
		goType = reflect.TypeOf(obj)
		b, err := kjson.Marshal(obj)
		if err != nil {
			return seed{}, fmt.Errorf("encoding: %w", err)
		}
		u = &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil && !errors.Is(err, unstructured.ErrMissingKind) {
			return seed{}, fmt.Errorf("encoding: %w", err)
		}
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	res, err := f.resourceOf(u, goType)
	if err != nil {
		return seed{}, err
	}
	u.SetAPIVersion(res.GroupVersion())
	u.SetKind(res.Kind)
	u.SetResourceVersion("")
	if !res.Namespaced {
		u.SetNamespace("")
	} else if u.GetNamespace() == "" {
		u.SetNamespace(f.client.Namespace())
	}
	s := seed{res: res, obj: u, display: res.Kind + " " + objectName(u.GetNamespace(), u.GetName(), u.GetGenerateName())}
	if st, ok := u.Object["status"]; ok && res.StatusSubresource && !emptyJSON(st) {
		s.status = st
	}
	if u.GetDeletionTimestamp() != nil {
		if len(u.GetFinalizers()) == 0 {
			return seed{}, errors.New("it has a deletionTimestamp but no finalizers: the server would delete it at once (add a finalizer to seed an object being deleted)")
		}
		s.delete = true
	}
	return s, nil
}

// emptyJSON reports whether a JSON value is null, an empty object or an
// empty array.
func emptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// resourceOf finds the resource the server serves u as: by its apiVersion
// and kind when it has them, else by the Go type of a typed seed.
func (f *Fake) resourceOf(u *unstructured.Unstructured, goType reflect.Type) (*registry.Resource, error) {
	reg := f.server.Registry()
	if apiVersion, kind := u.GetAPIVersion(), u.GetKind(); apiVersion != "" && kind != "" {
		group, version, err := unstructured.SplitAPIVersion(apiVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range reg.ForGroupVersion(group, version) {
			if r.Kind == kind {
				return r, nil
			}
		}
		return nil, fmt.Errorf("the server does not serve kind %s in %s", kind, apiVersion)
	}
	if goType == nil {
		return nil, errors.New("an unstructured object needs its apiVersion and kind")
	}
	groups := reg.Groups()
	for _, g := range reg.GroupOrder() {
		for _, v := range groups[g] {
			for _, r := range reg.ForGroupVersion(g, v) {
				if reflect.TypeOf(r.New()) == goType {
					return r, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("the server serves no resource of Go type %v: set its apiVersion and kind, or register the resource (Options.Registry)", goType)
}

// gvr is the resource's name for the client.
func gvr(res *registry.Resource) client.GroupVersionResource {
	return client.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Resource}
}

// create creates one seed, then writes its status and deletes it if need
// be.
func (f *Fake) create(ctx context.Context, s seed) error {
	fail := func(err error) error { return fmt.Errorf("fake: seeding %s: %w", s.display, err) }
	body, err := s.obj.MarshalJSON()
	if err != nil {
		return fail(err)
	}
	created := &unstructured.Unstructured{}
	err = f.client.NewRequest(http.MethodPost).Resource(gvr(s.res)).Namespace(s.obj.GetNamespace()).
		SetHeader("Accept", codec.MediaTypeJSON).Body(body, codec.MediaTypeJSON).Into(ctx, created)
	if err != nil {
		return fail(err)
	}
	name := created.GetName()
	if s.status != nil && !reflect.DeepEqual(created.Object["status"], s.status) {
		created.Object["status"] = s.status
		body, err := created.MarshalJSON()
		if err != nil {
			return fail(err)
		}
		err = f.client.NewRequest(http.MethodPut).Resource(gvr(s.res)).Namespace(created.GetNamespace()).Name(name).
			SubResource("status").SetHeader("Accept", codec.MediaTypeJSON).Body(body, codec.MediaTypeJSON).Into(ctx, created)
		if err != nil {
			return fail(fmt.Errorf("writing its status: %w", err))
		}
	}
	if s.delete {
		resp, err := f.client.NewRequest(http.MethodDelete).Resource(gvr(s.res)).Namespace(created.GetNamespace()).Name(name).
			SetHeader("Accept", codec.MediaTypeJSON).Do(ctx)
		if err != nil {
			return fail(fmt.Errorf("marking it for deletion: %w", err))
		}
		_ = resp.Close()
	}
	return nil
}

// ensureNamespace creates namespace ns unless it exists; for names the
// seed that needs it.
func (f *Fake) ensureNamespace(ctx context.Context, ns, forSeed string) error {
	// Look first: a create refused as AlreadyExists would still use up a
	// UID, shifting the sequential UIDs of the objects that follow.
	namespaces := client.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	resp, err := f.client.NewRequest(http.MethodGet).Resource(namespaces).Name(ns).
		SetHeader("Accept", codec.MediaTypeJSON).Do(ctx)
	if err == nil {
		return resp.Close()
	}
	if !client.IsNotFound(err) {
		return fmt.Errorf("fake: reading namespace %q for %s: %w", ns, forSeed, err)
	}
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":` + quoteJSON(ns) + `}}`)
	resp, err = f.client.NewRequest(http.MethodPost).Resource(namespaces).
		SetHeader("Accept", codec.MediaTypeJSON).Body(body, codec.MediaTypeJSON).Do(ctx)
	if client.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fake: creating namespace %q for %s: %w", ns, forSeed, err)
	}
	_ = resp.Close()
	return nil
}

// quoteJSON encodes s as a JSON string.
func quoteJSON(s string) string {
	b, _ := kjson.Marshal(s)
	return string(b)
}
