package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
)

// The HTTP side of writes: each handler decodes the request, calls the
// resource's store (store.go), which runs the write pipeline, and writes
// the answer.

func (h *handler) dryRun(values []string) bool { return len(values) > 0 }

// store is the store of the request's resource.
func (h *handler) store() resourceStore { return h.s.storeOf(h.res) }

// writeOptions are the options of the request's write: its field manager,
// subresource and warnings.
func (h *handler) writeOptions(dryRun bool) *writeOptions {
	u := h.s.requestUser(h.r)
	return &writeOptions{Manager: h.manager, Subresource: h.ri.Sub, Applying: h.applying, DryRun: dryRun, Warnings: h, User: &u}
}

// failErr writes the Status of an error of the store.
func (h *handler) failErr(err error) { h.fail(errorStatus(err)) }

// createRequest reads what every create starts with: the answer's media
// type, the CreateOptions of the query and the body, decoded as an object
// of res; it records the field manager. When ok is false it has answered.
func (h *handler) createRequest(res *registry.Resource) (mt codec.MediaType, opts metav1.CreateOptions, obj registry.Object, ok bool) {
	if mt, ok = h.negotiate(); !ok {
		return
	}
	opts, st := queryOptions(h, metav1.DecodeCreateOptions, metav1.ValidateCreateOptions, "CreateOptions")
	if st == nil {
		obj, st = h.decodeAs(res)
	}
	if st != nil {
		h.fail(st)
		return mt, opts, nil, false
	}
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
	return mt, opts, obj, true
}

func (h *handler) create() {
	mt, opts, obj, ok := h.createRequest(h.res)
	if !ok {
		return
	}
	if h.ri.Sub != "" {
		h.methodNotAllowed()
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	created, err := h.store().Create(h.r.Context(), obj, h.writeOptions(h.dryRun(opts.DryRun)))
	if err != nil {
		h.failErr(err)
		return
	}
	h.writeObject(mt, http.StatusCreated, created)
}

func (h *handler) update() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, st := queryOptions(h, metav1.DecodeUpdateOptions, metav1.ValidateUpdateOptions, "UpdateOptions")
	if st != nil {
		h.fail(st)
		return
	}
	obj, st := h.decodeBody()
	if st != nil {
		h.fail(st)
		return
	}
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
	if obj.GetName() != h.ri.Name {
		h.fail(metav1.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), h.ri.Name)))
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	h.writeUpdate(mt, func(storage.Object) (registry.Object, *metav1.Status) { return obj, nil },
		h.res.AllowCreateOnUpdate && h.ri.Sub == "", h.dryRun(opts.DryRun))
}

// writeUpdate stores the object want builds as the new state of the named
// object (an update, patch or apply of the resource or of its status) and
// writes the response: 201 when allowCreate let it create the object.
func (h *handler) writeUpdate(mt codec.MediaType, want build, allowCreate, dryRun bool) {
	out, created, err := h.store().Update(h.r.Context(), h.ri.Namespace, h.ri.Name, want, allowCreate, h.writeOptions(dryRun))
	if err != nil {
		h.failErr(err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	h.writeObject(mt, code, out)
}

// deleteOptions reads the DeleteOptions of a delete or deletecollection:
// from the body when there is one, decoded by its Content-Type
// (optionsbody.go), and from the query otherwise, as kube-apiserver does
// (a body's options replace the query's, which are then not read).
func (h *handler) deleteOptions() (metav1.DeleteOptions, *metav1.Status) {
	body, st := h.readBody()
	if st != nil {
		return metav1.DeleteOptions{}, st
	}
	var opts metav1.DeleteOptions
	if len(body) > 0 {
		if opts, st = decodeDeleteOptionsBody(body, h.r.Header.Get("Content-Type")); st != nil {
			return opts, st
		}
	} else {
		var err error
		if opts, err = metav1.DecodeDeleteOptions(h.r.URL.Query()); err != nil {
			return opts, metav1.NewBadRequest(err.Error())
		}
	}
	if errs := metav1.ValidateDeleteOptions(opts); len(errs) > 0 {
		return opts, metav1.NewInvalidOptions("DeleteOptions", errs)
	}
	return opts, nil
}

func (h *handler) delete() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	if h.ri.Sub != "" {
		h.methodNotAllowed()
		return
	}
	opts, st := h.deleteOptions()
	if st != nil {
		h.fail(st)
		return
	}
	out, deleted, err := h.store().deleteIf(h.r.Context(), h.ri.Namespace, h.ri.Name, &opts, nil, h)
	if err != nil {
		h.failErr(err)
		return
	}
	if deleted && !h.res.ReturnDeletedObject {
		st := metav1.NewDeleted(h.res.GroupResource(), h.ri.Name, out.GetUID())
		h.s.writeStatusAs(h.w, mt, st)
		return
	}
	// kube-apiserver answers 202 Accepted to a delete that did not remove the
	// object when the client asked for cascading with the deprecated
	// orphanDependents=false, and 200 otherwise (kept for old clients).
	code := http.StatusOK
	if opts.OrphanDependents != nil && !*opts.OrphanDependents {
		code = http.StatusAccepted
	}
	h.writeObject(mt, code, out)
}

func (h *handler) deleteCollection() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, st := h.deleteOptions()
	if st != nil {
		h.fail(st)
		return
	}
	lopts, pred, st := h.listOptions()
	if st != nil {
		h.fail(st)
		return
	}
	_ = lopts
	ctx := h.r.Context()
	rs := h.store()
	result, err := h.s.storageOf(h.res).List(ctx, rs.key(h.ri.Namespace, ""), storage.ListOptions{Predicate: pred})
	if err != nil {
		h.fail(h.storageStatus(err, ""))
		return
	}
	// The response lists what was deleted as it was listed (golden 83), and
	// objects kept for their finalizers in their new state, at the list's
	// resourceVersion.
	items := make([]storage.Object, 0, len(result.Items))
	for _, it := range result.Items {
		out, deleted, err := rs.deleteIf(ctx, it.GetNamespace(), it.GetName(), &opts, nil, h)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			h.failErr(err)
			return
		}
		if deleted {
			out = it
		}
		items = append(items, out)
	}
	meta := metav1.ListMeta{ResourceVersion: strconv.FormatUint(result.Revision, 10)}
	h.writeList(mt, &meta, items)
}
