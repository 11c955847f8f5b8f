package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// # The write pipeline
//
// resourceStore is the one way into the objects of a resource: the HTTP
// handlers (create, update, patch, apply, delete, deletecollection, status,
// scale) and the server's own controllers (the garbage collector, namespace
// cleanup, the default ServiceAccount and root CA ConfigMap of every
// namespace, the kubernetes Service) all read and write through it, so that
// no path skips a stage. A write runs, in kube-apiserver's order:
//
//  1. defaulting (Resource.Default) of what the writer sent;
//  2. managed fields (track; a server-side apply records its own);
//  3. the system fields of a create (prepareCreate, Resource.PrepareForCreate)
//     or the merge of an update with the stored object (mergeUpdate:
//     preconditions, status kept or taken, Resource.PrepareForUpdate);
//  4. the namespace's lifecycle, then the mutating admission plugins
//     (admission.go) and webhooks (webhook.go), then the kind's admission
//     checks (Resource.Admit);
//  5. metadata.generation, validation (validate: metadata by the kind's
//     rules, then Resource.Validate), then the validating phase
//     (admitValidating: the built-in plugins such as PodSecurity, the
//     ValidatingAdmissionPolicies, the validating webhooks, ResourceQuota
//     last);
//  6. the storage write (or nothing with DryRun), the completion of a
//     deletion by an update that removes the last finalizer
//     (updateOrFinish), and the release or retention of what the resource
//     reserved (Resource.Release, Resource.Retain).
//
// Its errors are *statusError: each carries the Status the API answers
// with it (404, 409, 422 ...), and unwraps to the storage error, if any,
// so errors.Is(err, storage.ErrNotFound) holds.
//
// # Adding a kind
//
// A kind is its generated Go type and a registry.Resource entry (scope,
// subresources, printer columns, field selectors, and the hooks above only
// where kube-apiserver's strategy for it does something of its own). The
// store and the handlers need nothing more.
//
// # Adding a subresource
//
// A subresource is a small function over the store: validSubresource
// (server.go) admits its name, and handler.serve routes its verbs to a
// handler that decodes the request, calls the store and writes the answer
// (virtual.go: serveVirtual, for all but status and scale).
//
//   - One written with the object's own representation (status; approval,
//     finalize, ephemeralcontainers, resize) goes through
//     resourceStore.Update with writeOptions.Subresource set; what it takes
//     from the body and what it keeps of the stored object is its entry in
//     subresourceTakes, and one validated by rules of its own (resize) has
//     an entry in subresourceValidates.
//   - One with a representation of its own (scale; binding) builds the
//     next state from the stored object in a function given to
//     resourceStore.update, calling track and validate as its semantics
//     ask (updateScale); a change made on the server's own behalf is
//     resourceStore.modify.
//   - One that deletes (eviction) checks what it must, then calls
//     resourceStore.Delete with the request's DeleteOptions; one that
//     creates something else (token) calls that resource's store.

// resourceStore reads and writes the objects of one resource through the
// write pipeline (see above). It is a small value: build one per use with
// Server.storeOf.
type resourceStore struct {
	s   *Server
	res *registry.Resource
}

// storeOf returns the store of res's objects.
func (s *Server) storeOf(res *registry.Resource) resourceStore { return resourceStore{s: s, res: res} }

// writeOptions say who writes and how.
type writeOptions struct {
	// Manager is the field manager the write is recorded for.
	Manager string
	// Subresource is the endpoint written: "" for the resource itself,
	// "status", "scale".
	Subresource string
	// Applying marks a server-side apply: the object comes from the field
	// manager, which recorded the managed fields itself.
	Applying bool
	// DryRun runs every stage but stores nothing.
	DryRun bool
	// Warnings receives the warnings of the write (nil drops them): the
	// request's handler, which sends them as Warning headers.
	Warnings warner
	// nameGenerated is set by a create whose name the server drew from
	// generateName: the mutating admission plugins name the object by its
	// generateName in their refusals, as kube-apiserver's, which run
	// before the name is drawn.
	nameGenerated bool
	// User is who makes the write, for RBAC's escalation checks
	// (rbac_escalation.go): the request's user; nil for the server's own
	// writes, which are not checked.
	User *User
}

// warner receives the warnings of a write.
type warner interface{ warn(msg string) }

func (o *writeOptions) warn(msg string) {
	if o.Warnings != nil {
		o.Warnings.warn(msg)
	}
}

// keyOf is the storage key of the object name of group/resource in
// namespace ("" for cluster-scoped objects), or, when name is "", the
// prefix of the resource's objects in namespace (of all of them when
// namespace is also ""): "/core/configmaps/NAMESPACE/NAME",
// "/apps/deployments/", "/core/namespaces/NAME". Every key of the store is
// built here.
func keyOf(group, resource, namespace, name string) string {
	group = groupSegment(group)
	n := 3 + len(group) + len(resource) + len(name)
	if namespace != "" {
		n += len(namespace) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '/')
	b = append(b, group...)
	b = append(b, '/')
	b = append(b, resource...)
	b = append(b, '/')
	if namespace != "" {
		b = append(b, namespace...)
		b = append(b, '/')
	}
	b = append(b, name...)
	return string(b)
}

// groupSegment is the first segment of the keys of a group's resources:
// the group, "core" for the legacy group.
func groupSegment(group string) string {
	if group == "" {
		return "core"
	}
	return group
}

// groupKey is the prefix of the keys of every resource of group ("/core/").
func groupKey(group string) string { return "/" + groupSegment(group) + "/" }

// groupPrefix is the prefix a watch of every resource of group follows:
// groupKey, or on etcd the whole store, since kube-apiserver's layout there
// has no prefix per group (the watch's handler then skips other objects).
func (s *Server) groupPrefix(group string) string {
	if len(s.cfg.Etcd.Servers) > 0 {
		return "/"
	}
	return groupKey(group)
}

// storageKey is keyOf for an object (or, name "", the collection) of res;
// the namespace is ignored for a cluster-scoped resource.
func storageKey(res *registry.Resource, namespace, name string) string {
	if !res.Namespaced {
		namespace = ""
	}
	return keyOf(res.Group, keyResource(res), namespace, name)
}

// keyResource is the resource segment of res's keys: its name, or for a
// resource stored as another's, its name and version (the view's keys,
// which sharedStorage maps to the other resource's: autoscaling/v1 and v2
// HorizontalPodAutoscalers share group and name).
func keyResource(res *registry.Resource) string {
	if res.StoredAs != nil {
		return res.Resource + "." + res.Version
	}
	return res.Resource
}

// sharedStorage returns store seen through a view for each resource of
// reg stored as another's (Resource.StoredAs): its keys map to the other
// resource's and its objects are converted in and out.
func sharedStorage(store storage.Interface, reg *registry.Registry) storage.Interface {
	all, _ := reg.All()
	for _, r := range all {
		if sa := r.StoredAs; sa != nil {
			store = storage.Converting(store, storage.Conversion{
				Prefix: keyOf(r.Group, keyResource(r), "", ""), StoragePrefix: keyOf(sa.Group, sa.Resource, "", ""),
				ToStorage: sa.ToStorage, FromStorage: sa.FromStorage,
			})
		}
	}
	return store
}

// namespaceKey is the storage key of a namespace.
func namespaceKey(name string) string { return keyOf("", "namespaces", "", name) }

// key is the storage key of the named object of the store's resource.
func (rs resourceStore) key(namespace, name string) string {
	return storageKey(rs.res, namespace, name)
}

// statusError is an error that carries the Status the API answers with it.
// err, when set, is the error it was made from (a storage error).
type statusError struct {
	st  *metav1.Status
	err error
}

func (e *statusError) Error() string { return e.st.Message }
func (e *statusError) Unwrap() error { return e.err }

// asError carries st as an error.
func asError(st *metav1.Status) error { return &statusError{st: st} }

// errorStatus is the Status of an error of the store (an internal error
// for any other).
func errorStatus(err error) *metav1.Status {
	var se *statusError
	if errors.As(err, &se) {
		return se.st
	}
	return metav1.NewInternalError(err)
}

// fail turns an error of the storage or of a stage into a *statusError for
// the object name; requestedRV is the resourceVersion a read asked for.
func (rs resourceStore) fail(err error, name string, requestedRV uint64) error {
	if err == nil {
		return nil
	}
	var se *statusError
	if errors.As(err, &se) {
		return err
	}
	return &statusError{st: storageStatus(rs.res, err, name, requestedRV), err: err}
}

// storageStatus turns a storage error into the Status kube-apiserver sends.
func storageStatus(res *registry.Resource, err error, name string, requestedRV uint64) *metav1.Status {
	var se *storage.Error
	if !errors.As(err, &se) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return metav1.NewTimeout("the request was cancelled or timed out", 0)
		}
		return metav1.NewInternalError(err)
	}
	gr := res.GroupResource()
	switch se.Code {
	case storage.CodeNotFound:
		return metav1.NewNotFound(gr, name)
	case storage.CodeAlreadyExists:
		return metav1.NewAlreadyExists(gr, name)
	case storage.CodeConflict:
		return metav1.NewConflict(gr, name, errors.New(metav1.OptimisticLockErrorMsg))
	case storage.CodeExpired:
		if se.Continue != "" {
			return metav1.NewContinueExpired(se.Continue)
		}
		return metav1.NewListExpired()
	case storage.CodeTooLargeResourceVersion:
		return metav1.NewTooLargeResourceVersion(requestedRV, se.ResourceVersion, 1)
	case storage.CodeInvalidContinue:
		msg := se.Message
		if se.Err != nil {
			msg = se.Err.Error()
		}
		return metav1.NewBadRequest("invalid continue token: " + msg)
	}
	return metav1.NewInternalError(err)
}

// Get reads the named object.
func (rs resourceStore) Get(ctx context.Context, namespace, name string, ro storage.ReadOptions) (storage.Object, error) {
	obj, err := rs.s.storageOf(rs.res).Get(ctx, rs.key(namespace, name), ro)
	return obj, rs.fail(err, name, ro.ResourceVersion)
}

// List lists the objects in namespace (all when ""). Custom resources'
// items carry the version they are read in.
func (rs resourceStore) List(ctx context.Context, namespace string, lo storage.ListOptions) (*storage.ListResult, error) {
	result, err := rs.s.storageOf(rs.res).List(ctx, rs.key(namespace, ""), lo)
	if err != nil {
		return result, rs.fail(err, "", lo.ResourceVersion)
	}
	if rs.res.Custom {
		// Custom resources are stored in their storage version.
		for i, it := range result.Items {
			result.Items[i] = rs.res.WithTypeMeta(it)
		}
	}
	return result, nil
}

// asDecoded finishes an object a writer sent as kube-apiserver does: it
// drops kind and apiVersion (stored objects carry none: responses add
// them, list items go without), the empty lists and maps of a custom
// resource's metadata (registry.CompactCustomMetadata), and applies the
// resource's defaults.
func (rs resourceStore) asDecoded(obj registry.Object) {
	if k, ok := obj.(interface{ GetObjectKind() *metav1.TypeMeta }); ok {
		*k.GetObjectKind() = metav1.TypeMeta{}
	}
	if rs.res.Custom {
		registry.CompactCustomMetadata(obj)
	}
	if rs.res.Default != nil {
		rs.res.Default(obj)
	}
}

// Create stores obj, a new object of the resource in its namespace, and
// returns it as stored (with DryRun, as it would be).
func (rs resourceStore) Create(ctx context.Context, obj registry.Object, o *writeOptions) (registry.Object, error) {
	rs.asDecoded(obj)
	if obj.GetResourceVersion() != "" {
		return nil, asError(metav1.NewBadRequest("resourceVersion should not be set on objects to be created"))
	}
	generated := obj.GetName() == "" && obj.GetGenerateName() != ""
	rs.track(o, nil, obj)
	rs.prepareCreate(ctx, obj)
	stored := false
	defer func() {
		if !stored {
			rs.release(obj) // give back what prepareCreate reserved (a cluster IP)
		}
	}()
	// The namespace is looked up first, as kube-apiserver's
	// NamespaceLifecycle admission does before validation.
	if st := rs.checkNamespaceExists(ctx, obj.GetNamespace(), obj.GetName()); st != nil {
		return nil, asError(st)
	}
	o.nameGenerated = generated
	if st := rs.admitAndValidate(ctx, o, nil, obj); st != nil {
		return nil, asError(st)
	}
	rs.res.StoredForm(obj)
	if o.DryRun {
		// A dry run stores nothing but fails as the write would on a name
		// that is taken.
		_, err := rs.s.store.Get(ctx, rs.key(obj.GetNamespace(), obj.GetName()), storage.ReadOptions{}) // only whether it exists
		switch {
		case err == nil:
			return nil, asError(metav1.NewAlreadyExists(rs.res.GroupResource(), obj.GetName()))
		case errors.Is(err, storage.ErrNotFound):
			return obj, nil
		}
		return nil, rs.fail(err, obj.GetName(), 0)
	}
	created, err := rs.storeCreate(ctx, obj, generated)
	if err != nil {
		return nil, rs.fail(err, obj.GetName(), 0)
	}
	stored = true
	rs.s.afterWrite(ctx, rs.res, created)
	return created, nil
}

// storeCreate stores a new object. A name the server generated is drawn again
// if it is taken; a name the client chose is not.
func (rs resourceStore) storeCreate(ctx context.Context, obj registry.Object, generated bool) (registry.Object, error) {
	for attempt := 0; ; attempt++ {
		created, err := rs.s.storageOf(rs.res).Create(ctx, rs.key(obj.GetNamespace(), obj.GetName()), obj)
		if err == nil || !errors.Is(err, storage.ErrAlreadyExists) || !generated || attempt == 4 {
			return created, err
		}
		obj.SetName(rs.generateName(obj.GetGenerateName()))
	}
}

// maxGeneratedPrefix is the longest part of a generateName kept in a
// generated name, so that with the 5 random characters it fits in 63.
const maxGeneratedPrefix = 63 - 5

// generateName draws a name from a generateName as kube-apiserver does: the
// prefix, cut to 58 characters, and a random suffix.
func (rs resourceStore) generateName(prefix string) string {
	if len(prefix) > maxGeneratedPrefix {
		prefix = prefix[:maxGeneratedPrefix]
	}
	return prefix + rs.s.cfg.NameSuffix()
}

// prepareCreate sets the system fields of a new object, made by the user
// of ctx's request.
func (rs resourceStore) prepareCreate(ctx context.Context, obj registry.Object) {
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(rs.generateName(obj.GetGenerateName()))
	}
	obj.SetUID(rs.s.cfg.NewUID())
	obj.SetCreationTimestamp(metav1.NewTime(rs.s.cfg.Now().UTC().Truncate(time.Second)))
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	if rs.res.Generation {
		obj.SetGeneration(1)
	} // else the client's, as kube-apiserver keeps it
	if rs.res.PrepareForCreate != nil {
		rs.res.PrepareForCreate(obj)
	}
	if rs.res.Requester != nil {
		u := contextUser(ctx)
		rs.res.Requester(obj, registry.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra})
	}
}

// build returns the object a write asks for, given the stored one (nil when
// there is none): the decoded body of an update, a patch applied to cur, an
// apply configuration merged into cur, a controller's change to cur.
type build func(cur storage.Object) (registry.Object, *metav1.Status)

// Update stores the object want builds as the new state of the named
// object (an update or patch of the resource or of its status), through
// every stage of the pipeline. allowCreate lets it create a missing object
// (created is then true). With DryRun it runs every stage but stores
// nothing.
func (rs resourceStore) Update(ctx context.Context, namespace, name string, want build, allowCreate bool, o *writeOptions) (out storage.Object, created bool, err error) {
	try := func(cur storage.Object) (storage.Object, error) {
		if cur == nil && !allowCreate {
			return nil, storage.ErrNotFound
		}
		in, st := want(cur)
		if st != nil {
			return nil, asError(st)
		}
		rs.asDecoded(in)
		if cur != nil {
			next, st := rs.mergeUpdate(ctx, o, name, cur, in)
			if st != nil {
				return nil, asError(st)
			}
			return next, nil
		}
		if st := rs.checkNamespaceExists(ctx, namespace, name); st != nil {
			return nil, asError(st)
		}
		next := rs.res.Copy(in)
		next.SetResourceVersion("")
		rs.track(o, nil, next)
		rs.prepareCreate(ctx, next)
		if st := rs.admitAndValidate(ctx, o, nil, next); st != nil {
			rs.release(next)
			return nil, asError(st)
		}
		rs.res.StoredForm(next)
		return next, nil
	}
	out, created, err = rs.update(ctx, namespace, name, allowCreate, nil, o, try)
	if err == nil && !o.DryRun {
		rs.s.afterWrite(ctx, rs.res, out)
	}
	return out, created, err
}

// update is the driver of every update: it calls try with the stored
// object (nil when there is none and allowCreate is set) until the store
// takes its result or try fails, completes a deletion that the update
// finishes (updateOrFinish), keeps what the resource reserved in step
// with what is stored (Retain, Release), and runs no write with DryRun.
// try builds the next state through the stages its write needs (Update's
// for the resource and status, a subresource's own); an object it builds
// without a current one is a create. pre is checked by the storage write
// (a dry run does not check it).
func (rs resourceStore) update(ctx context.Context, namespace, name string, allowCreate bool, pre *storage.Preconditions, o *writeOptions, try func(cur storage.Object) (storage.Object, error)) (out storage.Object, created bool, err error) {
	key := rs.key(namespace, name)
	var lastCur storage.Object // the stored state the last attempt saw
	tryUpdate := func(cur storage.Object) (storage.Object, error) {
		lastCur = cur
		next, err := try(cur)
		created = err == nil && cur == nil
		return next, err
	}
	if o.DryRun {
		var cur storage.Object
		cur, err = rs.s.storageOf(rs.res).Get(ctx, key, storage.ReadOptions{})
		if errors.Is(err, storage.ErrNotFound) && allowCreate {
			cur, err = nil, nil
		}
		if err == nil {
			out, err = tryUpdate(cur)
			if created {
				rs.release(out)
			}
		}
	} else {
		out, err = rs.s.updateOrFinish(ctx, rs.res, key, allowCreate, pre, tryUpdate)
	}
	if rs.res.Retain != nil {
		// Free what the update reserved and the stored state does not use.
		switch {
		case err == nil && !o.DryRun && !created:
			rs.res.Retain(out)
		case lastCur != nil && (err != nil || o.DryRun):
			rs.res.Retain(lastCur)
		}
	}
	return out, created, rs.fail(err, name, 0)
}

// modify writes the change a controller of the cluster makes to the named
// object: change returns the next state built from a copy of the stored
// one, or nil when there is nothing to change. The change goes through
// the update stages of the pipeline (defaulting, mergeUpdate: managed
// fields, PrepareForUpdate and admission for the resource itself, the
// generation, validation) and completes a deletion it finishes, under pre
// when not nil. It is what the garbage collector and namespace cleanup
// write with (the Subresource of o says which endpoint a real controller
// would call: "" for metadata, "status" for conditions, "finalize").
func (rs resourceStore) modify(ctx context.Context, namespace, name string, pre *storage.Preconditions, o *writeOptions, change func(cur storage.Object) storage.Object) (storage.Object, error) {
	out, _, err := rs.update(ctx, namespace, name, false, pre, o, func(cur storage.Object) (storage.Object, error) {
		if cur == nil {
			return nil, storage.ErrNotFound
		}
		in := change(cur)
		if in == nil {
			return cur, nil
		}
		rs.asDecoded(in)
		next, st := rs.mergeUpdate(ctx, o, name, cur, in)
		if st != nil {
			return nil, asError(st)
		}
		return next, nil
	})
	return out, err
}

// admit runs the resource's admission checks (nil when it has none).
func (rs resourceStore) admit(obj, old registry.Object) *metav1.Status {
	if rs.res.Admit == nil {
		return nil
	}
	return rs.res.Admit(obj, old)
}

// admitAndValidate runs admission and validation on a create (old nil) or
// update: the mutating admission plugins, the kind's checks, validation,
// the validating admission plugins.
func (rs resourceStore) admitAndValidate(ctx context.Context, o *writeOptions, old, obj registry.Object) *metav1.Status {
	name := obj.GetName()
	if old == nil && o.nameGenerated {
		name = obj.GetGenerateName()
	}
	if st := rs.s.checkEscalation(ctx, rs.res, obj, old, o); st != nil { // before admission, as kube-apiserver's RBAC storage
		return st
	}
	if st := rs.s.admitMutating(ctx, rs.res, name, obj, old, o); st != nil {
		return st
	}
	if st := rs.admitMutatingWebhooks(ctx, o, obj, old); st != nil {
		return st
	}
	if st := rs.admit(obj, old); st != nil {
		return st
	}
	if st := rs.validate(o, obj, old); st != nil {
		return st
	}
	return rs.admitValidating(ctx, o, obj, old, true)
}

// mergeUpdate builds the next state of cur from the writer's object: system
// fields are kept, the status (for updates of the main resource) or everything
// but the status (for /status) comes from the stored object, the generation
// moves when the spec changes. It returns cur itself when nothing changes.
func (rs resourceStore) mergeUpdate(ctx context.Context, o *writeOptions, name string, cur, in storage.Object) (storage.Object, *metav1.Status) {
	res := rs.res
	next := res.Copy(in)
	if rv := next.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, metav1.NewConflict(res.GroupResource(), name, errors.New(metav1.OptimisticLockErrorMsg))
	}
	if uid := next.GetUID(); uid != "" && uid != cur.GetUID() {
		return nil, metav1.NewConflict(res.GroupResource(), name,
			fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, cur.GetUID()))
	}
	body := next
	if take := subresourceTakes[o.Subresource]; take != nil {
		next = take(res, cur, next, rs.s.cfg.Now())
		if o.Applying {
			// The field manager's answer owns what the apply claimed
			// (track does not run for applies); the take keeps the
			// stored metadata, which would drop it.
			next.SetManagedFields(body.GetManagedFields())
		}
	} else if res.StatusSubresource {
		// The resource itself (and a subresource that takes the rest of
		// the object, such as finalize) keeps the stored status.
		registry.CopyStatus(next, cur)
	}
	next.SetResourceVersion(cur.GetResourceVersion())
	next.SetUID(cur.GetUID())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
	next.SetGeneration(cur.GetGeneration())
	if o.Subresource == "resize" {
		// kube-apiserver records what the request asked for, before the
		// subresource dropped what it does not take (an image).
		body.SetManagedFields(next.GetManagedFields())
		rs.track(o, cur, body)
		next.SetManagedFields(body.GetManagedFields())
	} else {
		rs.track(o, cur, next)
	}
	if st := rs.s.checkEscalation(ctx, res, next, cur, o); st != nil {
		return nil, st
	}
	if o.Subresource == "" {
		if res.PrepareForUpdate != nil {
			res.PrepareForUpdate(next, cur)
		}
		if st := rs.s.admitMutating(ctx, res, next.GetName(), next, cur, o); st != nil {
			return nil, st
		}
		if st := rs.admit(next, cur); st != nil {
			return nil, st
		}
	}
	if st := rs.admitMutatingWebhooks(ctx, o, next, cur); st != nil {
		return nil, st
	}
	if res.GenerationChanged(cur, next) {
		next.SetGeneration(cur.GetGeneration() + 1)
	}
	if st := rs.validate(o, next, cur); st != nil {
		return nil, st
	}
	// What is stored, and compared with cur to tell a no-op, is what the
	// storage keeps (a built-in object's empty lists and maps are gone).
	rs.res.StoredForm(next)
	same := sameObject(next, cur)
	// As kube-apiserver, the policies and webhooks see a no-op update too.
	if st := rs.admitValidating(ctx, o, next, cur, o.Subresource == "" && !same); st != nil {
		return nil, st
	}
	if same {
		return cur, nil
	}
	return next, nil
}

// sameObject reports whether a write of next over cur changes nothing, so
// that it is not stored (its resourceVersion stays). As kube-apiserver, which
// compares the encoded objects, it holds objects that differ only in Go
// (an empty map or slice where the other has nil) as the same.
func sameObject(next, cur registry.Object) bool {
	if reflect.DeepEqual(next, cur) {
		return true
	}
	a, err := kjson.Marshal(next)
	if err != nil {
		return false
	}
	b, err := kjson.Marshal(cur)
	return err == nil && bytes.Equal(a, b)
}

// subresourceTakes are the subresources written with the object's own
// representation that take only part of the body: each builds the next
// state from the stored object cur and the body in. A subresource absent
// here (the resource itself, namespaces/finalize) takes the whole body but
// the status of a kind with a status subresource. now is the write's time,
// for what the subresource stamps.
var subresourceTakes = map[string]func(res *registry.Resource, cur, in registry.Object, now time.Time) registry.Object{
	// /status changes the status and, for built-in kinds, some metadata;
	// the rest is the stored object's.
	"status": func(res *registry.Resource, cur, in registry.Object, _ time.Time) registry.Object {
		next := res.Copy(cur)
		registry.CopyStatus(next, in)
		if res.StatusMetadata != nil {
			res.StatusMetadata(next, in)
		}
		return next
	},
	// pods/ephemeralcontainers and pods/resize (pods_virtual.go).
	"ephemeralcontainers": takeEphemeralContainers,
	"resize":              takeResize,
	// certificatesigningrequests/approval (approval.go).
	"approval": takeApproval,
}

// release gives back what the resource reserved for obj (nil-safe).
func (rs resourceStore) release(obj registry.Object) {
	if rs.res.Release != nil && obj != nil {
		rs.res.Release(obj)
	}
}

// validate checks a new object (old nil) or the next state of old as
// kube-apiserver does, and answers 422 with every cause at once.
//
// On create that is the kind's own validation: its metadata
// (registry.ValidateObjectMeta by the kind's rules), then the rest
// (Resource.Validate). kube-apiserver then checks the metadata once more
// by the rules every object follows, which a kind's stricter rules have
// already covered.
//
// On update kube-apiserver runs several validations whose errors overlap:
// the metadata by the rules of every object, as new and as an update; then
// the kind's update validation, which checks the metadata as an update by
// its own rules and, for most kinds, again as new, then the rest. For
// built-in kinds repeated errors are reported once, where they first
// occur; for custom resources each time (kube-apiserver's answers differ
// so).
func (rs resourceStore) validate(o *writeOptions, obj, old registry.Object) *metav1.Status {
	res := rs.res
	rules := res.Meta
	var errs metav1.FieldErrors
	if old == nil {
		errs = registry.ValidateObjectMeta(obj, res.Namespaced, rules)
	} else {
		common := registry.MetaRules{Name: registry.NameIsPathSegment}
		errs = registry.ValidateObjectMeta(obj, res.Namespaced, common)
		errs = append(errs, registry.ValidateObjectMetaUpdate(obj, old, common)...)
		switch {
		case rules.UpdateOnly:
			errs = append(errs, registry.ValidateObjectMetaUpdate(obj, old, rules)...)
		case rules.NewFirst:
			errs = append(errs, registry.ValidateObjectMeta(obj, res.Namespaced, rules)...)
			errs = append(errs, registry.ValidateObjectMetaUpdate(obj, old, rules)...)
		default:
			errs = append(errs, registry.ValidateObjectMetaUpdate(obj, old, rules)...)
			errs = append(errs, registry.ValidateObjectMeta(obj, res.Namespaced, rules)...)
		}
	}
	validate := res.Validate
	if v, ok := subresourceValidates[o.Subresource]; ok && old != nil {
		validate = v // a subresource validated by its own rules (pods/resize)
	}
	if validate != nil {
		errs = append(errs, validate(obj, old)...)
	}
	if len(errs) > 0 {
		if !res.Custom { // a custom resource's repeat, as in kube-apiserver
			errs = dedupFieldErrors(errs)
		}
		return metav1.NewInvalid(res.InvalidGroupKind(), obj.GetName(), errs)
	}
	if res.Custom {
		for _, w := range registry.FinalizerWarnings(obj, old) {
			o.warn(w)
		}
	}
	if res.Warnings != nil {
		for _, w := range res.Warnings(obj, old) {
			o.warn(w)
		}
	}
	return nil
}

// dedupFieldErrors drops the errors equal to an earlier one (same type,
// field and message).
func dedupFieldErrors(errs metav1.FieldErrors) metav1.FieldErrors {
	type key struct {
		typ         metav1.CauseType
		field, body string
	}
	seen := make(map[key]bool, len(errs))
	out := errs[:0:0]
	for _, e := range errs {
		k := key{e.Type, e.Field, e.ErrorBody()}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// checkNamespaceExists refuses objects in a missing or terminating namespace
// (golden 47 and 102); name is the object's.
func (rs resourceStore) checkNamespaceExists(ctx context.Context, ns, name string) *metav1.Status {
	if !rs.res.Namespaced || !rs.s.admissionOn("NamespaceLifecycle") {
		return nil
	}
	obj, err := rs.s.store.Get(ctx, namespaceKey(ns), storage.ReadOptions{})
	if errors.Is(err, storage.ErrNotFound) {
		return metav1.NewNotFound(metav1.GroupResource{Resource: "namespaces"}, ns)
	}
	if err != nil {
		return storageStatus(rs.res, err, ns, 0)
	}
	if obj.GetDeletionTimestamp() != nil {
		st := metav1.NewForbidden(rs.res.GroupResource(), name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
		st.Details.Causes = append(st.Details.Causes, metav1.StatusCause{Type: "NamespaceTerminating",
			Message: fmt.Sprintf("namespace %s is being terminated", ns), Field: "metadata.namespace"})
		return st
	}
	return nil
}

// errEmptiedFinalizers stops an update that completes a deletion (see
// updateOrFinish).
type errEmptiedFinalizers struct {
	next storage.Object // the object the update built
	rv   string         // the resourceVersion it was built on
}

func (e *errEmptiedFinalizers) Error() string {
	return "apiserver: the update removes the last finalizer"
}

// completesDeletion reports whether writing next over cur completes cur's
// deletion, as kube-apiserver's ShouldDeleteDuringUpdate decides: cur is
// marked for deletion without a pending grace period and next has no
// finalizers left (nor, for a namespace, spec.finalizers: its cleanup is
// not done).
func completesDeletion(cur, next storage.Object) bool {
	if cur == nil || cur.GetDeletionTimestamp() == nil || len(next.GetFinalizers()) > 0 || namespaceHeld(next) {
		return false
	}
	return !gracePending(cur)
}

// updateOrFinish is store.GuaranteedUpdate, except that an update that
// completes a deletion (completesDeletion) is not written: the object is
// removed instead, as kube-apiserver does, so watchers see DELETED carrying
// its last stored state, finalizers included, and no MODIFIED without them.
// The result is then the object the update built (what kube-apiserver
// answers).
func (s *Server) updateOrFinish(ctx context.Context, res *registry.Resource, key string, allowCreate bool, pre *storage.Preconditions, tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	for attempt := 0; ; attempt++ {
		out, err := s.storageOf(res).GuaranteedUpdate(ctx, key, allowCreate, pre, func(cur storage.Object) (storage.Object, error) {
			next, err := tryUpdate(cur)
			if err == nil && completesDeletion(cur, next) {
				return nil, &errEmptiedFinalizers{next: next, rv: cur.GetResourceVersion()}
			}
			return next, err
		})
		var done *errEmptiedFinalizers
		if !errors.As(err, &done) {
			return out, err
		}
		remove := s.storageOf(res).Delete
		if res.Group == crdGroup && res.Resource == crdResourceName && s.crds != nil {
			// An update that empties a terminating CRD's finalizers
			// removes it, as any object's; crdStore's Delete would mark
			// it Terminating again (its watch unregisters the removed CRD).
			remove = s.crds.inner.Delete
		}
		removed, err := remove(ctx, key, &storage.Preconditions{ResourceVersion: &done.rv}, nil)
		switch {
		case err == nil:
			s.released(res, removed)
			s.recountQuotasOf(ctx, res, removed)
			return done.next, nil
		case errors.Is(err, storage.ErrNotFound):
			return done.next, nil // removed by a racing update
		case errors.Is(err, storage.ErrConflict) && attempt < 100:
			continue // written meanwhile: judge the update again
		}
		return nil, err
	}
}
