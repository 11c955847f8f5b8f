package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/selector"
)

// handler serves one resource request.
type handler struct {
	s   *Server
	res *registry.Resource
	ri  requestInfo
	w   http.ResponseWriter
	r   *http.Request

	// manager is the field manager a write is recorded for (managed.go);
	// applying means a server-side apply, which records its own.
	manager  string
	applying bool
	// warned holds the Warning messages sent (fieldvalidation.go).
	warned map[string]bool
	// patchDuplicates are the messages for the names a patch body repeats
	// in an object, reported with the patched object's fields.
	patchDuplicates []string
	// yamlDuplicates is the YAML library's list of the keys a YAML body
	// repeats (fieldvalidation.go).
	yamlDuplicates string
}

func (h *handler) serve() {
	if h.res.Computed != nil {
		h.serveComputed() // computed.go
		return
	}
	if h.res.Warning != "" { // a deprecated API: every answer says so
		h.w.Header().Add("Warning", fmt.Sprintf("299 - %q", h.res.Warning))
	}
	if h.ri.Sub == "scale" {
		h.serveScale() // scale.go
		return
	}
	if h.serveVirtual() { // virtual.go: reviews, bindings, binding, eviction, token ...
		return
	}
	if h.ri.Sub == "" && !h.res.HasVerb(h.ri.Verb) { // e.g. a review is only created
		h.methodNotAllowed()
		return
	}
	switch h.ri.Verb {
	case "get":
		h.get()
	case "list":
		h.list()
	case "watch":
		h.watch()
	case "create":
		if h.ri.Name != "" {
			h.methodNotAllowed()
			return
		}
		h.create()
	case "update", "patch":
		if h.ri.Name == "" { // a collection is not updated or patched
			h.methodNotAllowed()
			return
		}
		if h.ri.Verb == "update" {
			h.update()
		} else {
			h.patch()
		}
	case "delete":
		h.delete()
	case "deletecollection":
		if h.ri.Sub != "" {
			h.methodNotAllowed()
			return
		}
		h.deleteCollection()
	default:
		h.methodNotAllowed()
	}
}

// methodNotAllowed is golden case 60.
func (h *handler) methodNotAllowed() { h.fail(methodNotAllowed()) }

func (h *handler) fail(st *metav1.Status) { h.s.writeStatus(h.w, h.r, st) }

// key is the storage key of the named object, or of the collection when name
// is empty (ending in "/").
func (h *handler) key(namespace, name string) string { return storageKey(h.res, namespace, name) }

// storageStatus is the Status of an error of the store or of the storage,
// for the named object.
func (h *handler) storageStatus(err error, name string) *metav1.Status {
	var se *statusError
	if errors.As(err, &se) {
		return se.st
	}
	return storageStatus(h.res, err, name, h.requestedRV())
}

func (h *handler) requestedRV() uint64 {
	v, _ := strconv.ParseUint(h.r.URL.Query().Get("resourceVersion"), 10, 64)
	return v
}

// queryOptions decodes the options of a request from its query and validates
// them (validate may be nil): a parameter that does not parse is 400, an
// invalid value 422 naming the options' kind ("CreateOptions").
func queryOptions[T any](h *handler, decode func(url.Values) (T, error), validate func(T) metav1.FieldErrors, kind string) (T, *metav1.Status) {
	o, err := decode(h.r.URL.Query())
	if err != nil {
		return o, metav1.NewBadRequest(err.Error())
	}
	if validate != nil {
		if errs := validate(o); len(errs) > 0 {
			return o, metav1.NewInvalidOptions(kind, errs)
		}
	}
	return o, nil
}

// readOptions maps an API resourceVersion and resourceVersionMatch onto a
// storage read (the get and list tables of the spec).
func readOptions(rv string, match metav1.ResourceVersionMatch) (storage.ReadOptions, *metav1.Status) {
	switch {
	case rv == "":
		return storage.ReadOptions{Match: storage.Latest}, nil
	case rv == "0" && match == "":
		return storage.ReadOptions{Match: storage.Any}, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return storage.ReadOptions{}, metav1.NewBadRequest(fmt.Sprintf("invalid resource version %q: %v", rv, err))
	}
	if match == metav1.ResourceVersionMatchExact {
		return storage.ReadOptions{ResourceVersion: n, Match: storage.Exact}, nil
	}
	return storage.ReadOptions{ResourceVersion: n, Match: storage.NotOlderThan}, nil
}

func (h *handler) get() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, st := queryOptions(h, metav1.DecodeGetOptions, nil, "GetOptions")
	if st != nil {
		h.fail(st)
		return
	}
	ro, st := readOptions(opts.ResourceVersion, "")
	if st != nil {
		h.fail(st)
		return
	}
	obj, err := h.store().Get(h.r.Context(), h.ri.Namespace, h.ri.Name, ro)
	if err != nil {
		h.failErr(err)
		return
	}
	h.writeObject(mt, http.StatusOK, obj)
}

// listOptions decodes and validates the list/watch query, and builds the
// selector predicate.
func (h *handler) listOptions() (metav1.ListOptions, func(storage.Object) bool, *metav1.Status) {
	opts, err := metav1.DecodeListOptions(h.r.URL.Query())
	if err != nil {
		return opts, nil, metav1.NewBadRequest(err.Error())
	}
	if errs := metav1.ValidateListOptions(opts); len(errs) > 0 {
		return opts, nil, metav1.NewInvalidOptions("ListOptions", errs)
	}
	if st := metav1.CheckListContinue(opts); st != nil {
		return opts, nil, st
	}
	pred, st := h.predicate(opts.LabelSelector, opts.FieldSelector)
	return opts, pred, st
}

// predicate parses the label and field selectors into a filter (nil when both
// are empty).
func (h *handler) predicate(labelSel, fieldSel string) (func(storage.Object) bool, *metav1.Status) {
	ls, err := selector.ParseLabels(labelSel)
	if err != nil {
		return nil, metav1.NewBadRequest(selectorMessage(err))
	}
	fs, err := selector.ParseFields(fieldSel)
	if err != nil {
		return nil, metav1.NewBadRequest(selectorMessage(err))
	}
	for _, req := range fs.Requirements() {
		if !h.res.KnownField(req.Field()) {
			if h.res.SelectableFields == nil {
				return nil, metav1.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q", req.Field(), "metadata.name", "metadata.namespace"))
			}
			return nil, metav1.NewBadRequest("field label not supported: " + req.Field())
		}
	}
	if ls.Empty() && fs.Empty() {
		return nil, nil
	}
	res := h.res
	return func(o storage.Object) bool {
		if !ls.Matches(selector.Set(o.GetLabels())) {
			return false
		}
		return fs.Empty() || fs.Matches(selector.Set(res.FieldSet(o)))
	}, nil
}

// selectorMessage is the parse error without its position, as kube-apiserver
// words it.
func selectorMessage(err error) string {
	var pe *selector.ParseError
	if errors.As(err, &pe) && pe.Msg != "" {
		return pe.Msg
	}
	return err.Error()
}

func (h *handler) list() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	opts, pred, st := h.listOptions()
	if st != nil {
		h.fail(st)
		return
	}
	lo := storage.ListOptions{Limit: opts.Limit, Continue: opts.Continue, Predicate: pred}
	if opts.Continue == "" {
		match := opts.ResourceVersionMatch
		if match == "" && opts.Limit > 0 && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			// The spec's legacy cell: a paged list at a given resourceVersion is
			// served at exactly that version.
			match = metav1.ResourceVersionMatchExact
		}
		ro, st := readOptions(opts.ResourceVersion, match)
		if st != nil {
			h.fail(st)
			return
		}
		lo.ReadOptions = ro
	}
	result, err := h.store().List(h.r.Context(), h.ri.Namespace, lo)
	if err != nil {
		var se *storage.Error
		if errors.As(err, &se) && se.Code == storage.CodeExpired && opts.Continue == "" {
			h.fail(metav1.NewListExpired())
			return
		}
		h.failErr(err)
		return
	}
	meta := metav1.ListMeta{ResourceVersion: strconv.FormatUint(result.Revision, 10), Continue: result.Continue,
		RemainingItemCount: result.RemainingItemCount}
	h.writeList(mt, &meta, result.Items)
}
