package apiserver

import (
	"fmt"
	"net/http"

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
	return &writeOptions{Manager: h.manager, Subresource: h.ri.Sub, Applying: h.applying, DryRun: dryRun, Warn: h.warn}
}

// failErr writes the Status of an error of the store.
func (h *handler) failErr(err error) { h.fail(errorStatus(err)) }

func (h *handler) create() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, st := queryOptions(h, metav1.DecodeCreateOptions, metav1.ValidateCreateOptions, "CreateOptions")
	if st != nil {
		h.fail(st)
		return
	}
	obj, st := h.decodeBody()
	if st != nil {
		h.fail(st)
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
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
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
