package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
	"github.com/kapi-dev/kapi/selector"
)

// handler serves one resource request.
type handler struct {
	s   *Server
	res *registry.Resource
	ri  requestInfo
	w   http.ResponseWriter
	r   *http.Request
}

func (h *handler) serve() {
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
	case "update":
		h.update()
	case "delete":
		h.delete()
	case "deletecollection":
		if h.res.Resource == "namespaces" || h.ri.Sub != "" {
			h.methodNotAllowed()
			return
		}
		h.deleteCollection()
	default:
		h.methodNotAllowed()
	}
}

// methodNotAllowed is golden case 60.
func (h *handler) methodNotAllowed() {
	h.fail(metav1.NewGenericServerResponse(http.StatusMethodNotAllowed, strings.ToLower(h.r.Method), metav1.GroupResource{}, "", "", 0, false))
}

func (h *handler) fail(st *metav1.Status) { h.s.writeStatus(h.w, h.r, st) }

// key is the storage key of the named object, or of the collection when name
// is empty (ending in "/").
func (h *handler) key(namespace, name string) string {
	var b strings.Builder
	b.WriteByte('/')
	if h.res.Group == "" {
		b.WriteString("core")
	} else {
		b.WriteString(h.res.Group)
	}
	b.WriteByte('/')
	b.WriteString(h.res.Resource)
	b.WriteByte('/')
	if h.res.Namespaced && namespace != "" {
		b.WriteString(namespace)
		b.WriteByte('/')
	}
	b.WriteString(name)
	return b.String()
}

// storageStatus turns a storage error into the Status kube-apiserver sends.
func (h *handler) storageStatus(err error, name string) *metav1.Status {
	var ste *statusError
	if errors.As(err, &ste) {
		return ste.st
	}
	var se *storage.Error
	if !errors.As(err, &se) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return metav1.NewTimeout("the request was cancelled or timed out", 0)
		}
		return metav1.NewInternalError(err)
	}
	gr := h.res.GroupResource()
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
		return metav1.NewTooLargeResourceVersion(h.requestedRV(), se.ResourceVersion, 1)
	case storage.CodeInvalidContinue:
		msg := se.Message
		if se.Err != nil {
			msg = se.Err.Error()
		}
		return metav1.NewBadRequest("invalid continue token: " + msg)
	}
	return metav1.NewInternalError(err)
}

func (h *handler) requestedRV() uint64 {
	v, _ := strconv.ParseUint(h.r.URL.Query().Get("resourceVersion"), 10, 64)
	return v
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
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
	if !ok {
		return
	}
	opts, err := metav1.DecodeGetOptions(h.r.URL.Query())
	if err != nil {
		h.fail(metav1.NewBadRequest(err.Error()))
		return
	}
	ro, st := readOptions(opts.ResourceVersion, "")
	if st != nil {
		h.fail(st)
		return
	}
	obj, err := h.s.store.Get(h.r.Context(), h.key(h.ri.Namespace, h.ri.Name), ro)
	if err != nil {
		h.fail(h.storageStatus(err, h.ri.Name))
		return
	}
	h.s.writeObject(h.w, mt, http.StatusOK, h.res, obj)
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
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
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
	result, err := h.s.store.List(h.r.Context(), h.key(h.ri.Namespace, ""), lo)
	if err != nil {
		var se *storage.Error
		if errors.As(err, &se) && se.Code == storage.CodeExpired && opts.Continue == "" {
			h.fail(metav1.NewListExpired())
			return
		}
		h.fail(h.storageStatus(err, ""))
		return
	}
	meta := metav1.ListMeta{ResourceVersion: strconv.FormatUint(result.Revision, 10), Continue: result.Continue,
		RemainingItemCount: result.RemainingItemCount}
	h.s.writeList(h.w, mt, h.res, &meta, result.Items)
}

// writeList streams a list.
func (s *Server) writeList(w http.ResponseWriter, mt codec.MediaType, res *registry.Resource, meta *metav1.ListMeta, items []storage.Object) {
	typ := metav1.TypeMeta{Kind: res.ListKind, APIVersion: res.GroupVersion()}
	if mt.Subtype == offerProtobuf.Subtype && res.Protobuf {
		w.Header().Set("Content-Type", codec.MediaTypeProtobuf)
		pm := make([]codec.ProtoMarshaler, len(items))
		for i, it := range items {
			pm[i] = it.(codec.ProtoMarshaler)
		}
		if err := codec.EncodeProtobufList(w, typ, meta, pm); err != nil {
			s.cfg.Logger.Debug("apiserver: writing list", "err", err)
		}
		return
	}
	if mt.Subtype == offerYAML.Subtype {
		var buf bytes.Buffer
		if err := codec.EncodeJSONList(&buf, typ, meta, items); err != nil {
			s.writeRawJSON(w, http.StatusInternalServerError, metav1.NewInternalError(err))
			return
		}
		s.writeYAML(w, http.StatusOK, json.RawMessage(buf.Bytes()))
		return
	}
	w.Header().Set("Content-Type", codec.MediaTypeJSON)
	if err := codec.EncodeJSONList(w, typ, meta, items); err != nil {
		s.cfg.Logger.Debug("apiserver: writing list", "err", err)
	}
}

// readBody reads the request body within the size limit.
func (h *handler) readBody() ([]byte, *metav1.Status) {
	body, err := io.ReadAll(http.MaxBytesReader(h.w, h.r.Body, h.s.cfg.MaxRequestBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, metav1.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", h.s.cfg.MaxRequestBodyBytes))
		}
		return nil, metav1.NewBadRequest("reading the request body: " + err.Error())
	}
	return body, nil
}

// decodeBody decodes the request body into a new object of the resource.
func (h *handler) decodeBody() (registry.Object, *metav1.Status) {
	body, st := h.readBody()
	if st != nil {
		return nil, st
	}
	accepted := []string{codec.MediaTypeJSON, codec.MediaTypeYAML}
	if h.res.Protobuf {
		accepted = append(accepted, codec.MediaTypeProtobuf)
	}
	ct := h.r.Header.Get("Content-Type")
	if ct == "" {
		ct = codec.MediaTypeJSON
	}
	mt, err := codec.ParseMediaType(ct)
	if err != nil {
		return nil, metav1.NewUnsupportedMediaType(accepted)
	}
	obj := h.res.New()
	switch {
	case mt.Type == "application" && mt.Subtype == "json":
		if err := kjson.Unmarshal(body, obj); err != nil {
			return nil, h.badBody(body, err)
		}
		var tm metav1.TypeMeta
		_ = kjson.Unmarshal(body, &tm)
		if st := h.checkTypeMeta(tm); st != nil {
			return nil, st
		}
	case mt.Type == "application" && mt.Subtype == "yaml":
		js, err := yamlToJSON(body)
		if err != nil {
			return nil, metav1.NewBadRequest("the object provided is unrecognized (must be of type " + h.res.Kind + "): " + err.Error())
		}
		if err := kjson.Unmarshal(js, obj); err != nil {
			return nil, h.badBody(js, err)
		}
	case mt.Type == "application" && mt.Subtype == offerProtobuf.Subtype && h.res.Protobuf:
		if _, err := codec.UnmarshalProtobuf(body, obj.(codec.ProtoUnmarshaler)); err != nil {
			msg := err.Error()
			if errors.Is(err, codec.ErrNotProtobufEnvelope) {
				// kube-apiserver's wording (golden 57).
				msg = fmt.Sprintf("provided data does not appear to be a protobuf message, expected prefix %v (%x)", []byte(codec.EnvelopeMagic), body[:min(len(body), 32)])
			}
			return nil, metav1.NewBadRequest("the object provided is unrecognized (must be of type " + h.res.Kind + "): " + msg)
		}
	default:
		return nil, metav1.NewUnsupportedMediaType(accepted)
	}
	// Stored objects carry no kind or apiVersion: responses add them, list
	// items go without, as in kube-apiserver.
	if k, ok := obj.(interface{ GetObjectKind() *metav1.TypeMeta }); ok {
		*k.GetObjectKind() = metav1.TypeMeta{}
	}
	// kube-apiserver applies defaults as it decodes a body.
	if h.res.Default != nil {
		h.res.Default(obj)
	}
	return obj, nil
}

// badBody words a JSON decoding failure as kube-apiserver does (golden 56),
// using encoding/json's message for a syntax error.
func (h *handler) badBody(body []byte, err error) *metav1.Status {
	var probe map[string]any
	if jerr := json.Unmarshal(body, &probe); jerr != nil {
		return metav1.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)",
			h.res.Kind, jerr, truncate(body, 64)))
	}
	return metav1.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v", h.res.Kind, err))
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(bytes.TrimSpace(b))
}

func (h *handler) checkTypeMeta(tm metav1.TypeMeta) *metav1.Status {
	if tm.Kind != "" && tm.Kind != h.res.Kind {
		return metav1.NewBadRequest(fmt.Sprintf("the kind in the body (%s) does not match the expected kind (%s)", tm.Kind, h.res.Kind))
	}
	if tm.APIVersion != "" && tm.APIVersion != h.res.GroupVersion() {
		return metav1.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, h.res.GroupVersion()))
	}
	return nil
}

// checkNamespace reconciles the object's namespace with the URL's (golden 49).
func (h *handler) checkNamespace(obj registry.Object) *metav1.Status {
	if !h.res.Namespaced {
		obj.SetNamespace("")
		return nil
	}
	switch ns := obj.GetNamespace(); {
	case ns == "":
		obj.SetNamespace(h.ri.Namespace)
	case ns != h.ri.Namespace:
		return metav1.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// validate runs name and kind validation; old is nil on create.
func (h *handler) validate(obj, old registry.Object) *metav1.Status {
	var errs metav1.FieldErrors
	if name := obj.GetName(); name == "" {
		if old == nil {
			errs = append(errs, metav1.FieldRequired("metadata.name", "name or generateName is required"))
		}
	} else if old == nil {
		vn := h.res.ValidateName
		if vn == nil {
			vn = registry.ValidateDNS1123Subdomain
		}
		for _, msg := range vn(name) {
			errs = append(errs, metav1.FieldInvalid("metadata.name", name, msg))
		}
	}
	if h.res.Validate != nil {
		errs = append(errs, h.res.Validate(obj, old)...)
	}
	if len(errs) > 0 {
		return metav1.NewInvalid(h.res.GroupKind(), obj.GetName(), errs)
	}
	return nil
}

// checkNamespaceExists refuses objects in a missing or terminating namespace
// (golden 47 and 102); name is the object's.
func (h *handler) checkNamespaceExists(ctx context.Context, ns, name string) *metav1.Status {
	if !h.res.Namespaced {
		return nil
	}
	obj, err := h.s.store.Get(ctx, "/core/namespaces/"+ns, storage.ReadOptions{})
	if errors.Is(err, storage.ErrNotFound) {
		return metav1.NewNotFound(metav1.GroupResource{Resource: "namespaces"}, ns)
	}
	if err != nil {
		return h.storageStatus(err, ns)
	}
	if obj.GetDeletionTimestamp() != nil {
		st := metav1.NewForbidden(h.res.GroupResource(), name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
		st.Details.Causes = append(st.Details.Causes, metav1.StatusCause{Type: "NamespaceTerminating",
			Message: fmt.Sprintf("namespace %s is being terminated", ns), Field: "metadata.namespace"})
		return st
	}
	return nil
}

func (h *handler) dryRun(values []string) bool { return len(values) > 0 }

func (h *handler) create() {
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
	if !ok {
		return
	}
	opts, err := metav1.DecodeCreateOptions(h.r.URL.Query())
	if err != nil {
		h.fail(metav1.NewBadRequest(err.Error()))
		return
	}
	if errs := metav1.ValidateCreateOptions(opts); len(errs) > 0 {
		h.fail(metav1.NewInvalidOptions("CreateOptions", errs))
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
	if obj.GetResourceVersion() != "" {
		h.fail(metav1.NewBadRequest("resourceVersion should not be set on objects to be created"))
		return
	}
	generated := obj.GetName() == "" && obj.GetGenerateName() != ""
	h.prepareCreate(obj)
	stored := false
	defer func() {
		if !stored && h.res.Release != nil {
			h.res.Release(obj) // give back what prepareCreate reserved (a cluster IP)
		}
	}()
	if st := h.admit(obj, nil); st != nil {
		h.fail(st)
		return
	}
	if st := h.validate(obj, nil); st != nil {
		h.fail(st)
		return
	}
	ctx := h.r.Context()
	if st := h.checkNamespaceExists(ctx, obj.GetNamespace(), obj.GetName()); st != nil {
		h.fail(st)
		return
	}
	if h.dryRun(opts.DryRun) {
		h.s.writeObject(h.w, mt, http.StatusCreated, h.res, obj)
		return
	}
	created, err := h.storeCreate(ctx, obj, generated)
	if err != nil {
		h.fail(h.storageStatus(err, obj.GetName()))
		return
	}
	stored = true
	h.s.writeObject(h.w, mt, http.StatusCreated, h.res, created)
}

// storeCreate stores a new object. A name the server generated is drawn again
// if it is taken; a name the client chose is not.
func (h *handler) storeCreate(ctx context.Context, obj registry.Object, generated bool) (registry.Object, error) {
	for attempt := 0; ; attempt++ {
		created, err := h.s.store.Create(ctx, h.key(obj.GetNamespace(), obj.GetName()), obj)
		if err == nil || !errors.Is(err, storage.ErrAlreadyExists) || !generated || attempt == 4 {
			return created, err
		}
		obj.SetName(obj.GetGenerateName() + h.s.cfg.NameSuffix())
	}
}

// admit runs the resource's admission checks (nil when it has none).
func (h *handler) admit(obj, old registry.Object) *metav1.Status {
	if h.res.Admit == nil {
		return nil
	}
	return h.res.Admit(obj, old)
}

// prepareCreate sets the system fields of a new object.
func (h *handler) prepareCreate(obj registry.Object) {
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + h.s.cfg.NameSuffix())
	}
	obj.SetUID(h.s.cfg.NewUID())
	obj.SetCreationTimestamp(metav1.NewTime(h.s.cfg.Now().UTC().Truncate(time.Second)))
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	if h.res.Generation {
		obj.SetGeneration(1)
	} else {
		obj.SetGeneration(0)
	}
	if h.res.PrepareForCreate != nil {
		h.res.PrepareForCreate(obj)
	}
}

func (h *handler) update() {
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
	if !ok {
		return
	}
	opts, err := metav1.DecodeUpdateOptions(h.r.URL.Query())
	if err != nil {
		h.fail(metav1.NewBadRequest(err.Error()))
		return
	}
	if errs := metav1.ValidateUpdateOptions(opts); len(errs) > 0 {
		h.fail(metav1.NewInvalidOptions("UpdateOptions", errs))
		return
	}
	obj, st := h.decodeBody()
	if st != nil {
		h.fail(st)
		return
	}
	if obj.GetName() != h.ri.Name {
		h.fail(metav1.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), h.ri.Name)))
		return
	}
	if st := h.checkNamespace(obj); st != nil {
		h.fail(st)
		return
	}
	h.writeUpdate(mt, obj, h.dryRun(opts.DryRun))
}

// writeUpdate stores obj as the new state of the named object (an update of
// the resource or of its status) and writes the response.
func (h *handler) writeUpdate(mt codec.MediaType, obj registry.Object, dryRun bool) {
	ctx := h.r.Context()
	key := h.key(h.ri.Namespace, h.ri.Name)
	created := false
	var result registry.Object
	tryUpdate := func(cur storage.Object) (storage.Object, error) {
		if cur == nil {
			if !h.res.AllowCreateOnUpdate || h.ri.Sub != "" {
				return nil, storage.ErrNotFound
			}
			if st := h.checkNamespaceExists(ctx, h.ri.Namespace, h.ri.Name); st != nil {
				return nil, asError(st)
			}
			next := h.res.Copy(obj)
			next.SetResourceVersion("")
			h.prepareCreate(next)
			if st := h.admit(next, nil); st != nil {
				h.release(next)
				return nil, asError(st)
			}
			if st := h.validate(next, nil); st != nil {
				h.release(next)
				return nil, asError(st)
			}
			created = true
			return next, nil
		}
		next, st := h.mergeUpdate(cur, obj)
		if st != nil {
			return nil, asError(st)
		}
		if dryRun {
			result = next
			return cur, nil
		}
		return next, nil
	}
	if dryRun {
		cur, err := h.s.store.Get(ctx, key, storage.ReadOptions{})
		if err != nil {
			h.fail(h.storageStatus(err, h.ri.Name))
			return
		}
		if _, err := tryUpdate(cur); err != nil {
			h.fail(h.storageStatus(err, h.ri.Name))
			return
		}
		h.s.writeObject(h.w, mt, http.StatusOK, h.res, result)
		return
	}
	out, err := h.s.store.GuaranteedUpdate(ctx, key, h.res.AllowCreateOnUpdate && h.ri.Sub == "", nil, tryUpdate)
	if err != nil {
		h.fail(h.storageStatus(err, h.ri.Name))
		return
	}
	out, err = h.s.finishDeletion(ctx, h.res, key, out)
	if err != nil {
		h.fail(h.storageStatus(err, h.ri.Name))
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	h.s.writeObject(h.w, mt, code, h.res, out)
}

// mergeUpdate builds the next state of cur from the client's object: system
// fields are kept, the status (for updates of the main resource) or everything
// but the status (for /status) comes from the stored object, the generation
// moves when the spec changes. It returns cur itself when nothing changes.
func (h *handler) mergeUpdate(cur, in storage.Object) (storage.Object, *metav1.Status) {
	next := h.res.Copy(in)
	if rv := next.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
		return nil, metav1.NewConflict(h.res.GroupResource(), h.ri.Name, errors.New(metav1.OptimisticLockErrorMsg))
	}
	if uid := next.GetUID(); uid != "" && uid != cur.GetUID() {
		return nil, metav1.NewConflict(h.res.GroupResource(), h.ri.Name,
			fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, cur.GetUID()))
	}
	if h.ri.Sub == "status" {
		status := next
		next = h.res.Copy(cur)
		registry.CopyStatus(next, status)
	} else if h.res.StatusSubresource {
		registry.CopyStatus(next, cur)
	}
	next.SetResourceVersion(cur.GetResourceVersion())
	next.SetUID(cur.GetUID())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetDeletionTimestamp(cur.GetDeletionTimestamp())
	next.SetDeletionGracePeriodSeconds(cur.GetDeletionGracePeriodSeconds())
	next.SetGeneration(cur.GetGeneration())
	if h.ri.Sub == "" {
		if h.res.PrepareForUpdate != nil {
			h.res.PrepareForUpdate(next, cur)
		}
		if st := h.admit(next, cur); st != nil {
			return nil, st
		}
	}
	if h.res.Generation && !registry.SpecEqual(cur, next) {
		next.SetGeneration(cur.GetGeneration() + 1)
	}
	if cur.GetDeletionTimestamp() != nil {
		if added := addedFinalizers(cur.GetFinalizers(), next.GetFinalizers()); len(added) > 0 {
			return nil, metav1.NewInvalid(h.res.GroupKind(), h.ri.Name, metav1.FieldErrors{metav1.FieldForbidden("metadata.finalizers",
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added))})
		}
	}
	if st := h.validate(next, cur); st != nil {
		return nil, st
	}
	if reflect.DeepEqual(next, cur) {
		return cur, nil
	}
	return next, nil
}

// addedFinalizers lists the finalizers of next that old lacks.
// release gives back what the resource reserved for obj (nil-safe).
func (h *handler) release(obj registry.Object) {
	if h.res.Release != nil {
		h.res.Release(obj)
	}
}

func addedFinalizers(old, next []string) []string {
	have := map[string]bool{}
	for _, f := range old {
		have[f] = true
	}
	var added []string
	for _, f := range next {
		if !have[f] {
			added = append(added, f)
		}
	}
	return added
}

// finishDeletion removes an object whose deletion was waiting on finalizers
// once the last one is gone.
func (s *Server) finishDeletion(ctx context.Context, res *registry.Resource, key string, obj storage.Object) (storage.Object, error) {
	if obj.GetDeletionTimestamp() == nil || len(obj.GetFinalizers()) > 0 {
		return obj, nil
	}
	rv := obj.GetResourceVersion()
	_, err := s.store.Delete(ctx, key, &storage.Preconditions{ResourceVersion: &rv}, nil)
	if err == nil && res.Release != nil {
		res.Release(obj)
	}
	if errors.Is(err, storage.ErrNotFound) {
		err = nil
	}
	return obj, err
}

// deleteOptions merges DeleteOptions from the body (if any) and the query.
func (h *handler) deleteOptions() (metav1.DeleteOptions, *metav1.Status) {
	opts, err := metav1.DecodeDeleteOptions(h.r.URL.Query())
	if err != nil {
		return opts, metav1.NewBadRequest(err.Error())
	}
	body, st := h.readBody()
	if st != nil {
		return opts, st
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var fromBody metav1.DeleteOptions
		if err := kjson.Unmarshal(body, &fromBody); err != nil {
			return opts, metav1.NewBadRequest("the body of the request could not be decoded as DeleteOptions: " + err.Error())
		}
		mergeDeleteOptions(&opts, &fromBody)
	}
	if errs := metav1.ValidateDeleteOptions(opts); len(errs) > 0 {
		return opts, metav1.NewInvalidOptions("DeleteOptions", errs)
	}
	return opts, nil
}

// mergeDeleteOptions fills what the query left unset from the body.
func mergeDeleteOptions(dst, src *metav1.DeleteOptions) {
	if dst.GracePeriodSeconds == nil {
		dst.GracePeriodSeconds = src.GracePeriodSeconds
	}
	if dst.Preconditions == nil {
		dst.Preconditions = src.Preconditions
	}
	if dst.OrphanDependents == nil {
		dst.OrphanDependents = src.OrphanDependents
	}
	if dst.PropagationPolicy == nil {
		dst.PropagationPolicy = src.PropagationPolicy
	}
	if len(dst.DryRun) == 0 {
		dst.DryRun = src.DryRun
	}
}

func (h *handler) delete() {
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
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
	out, deleted, err := h.s.deleteObject(h.r.Context(), h.res, h.key(h.ri.Namespace, h.ri.Name), &opts)
	if err != nil {
		h.fail(h.storageStatus(err, h.ri.Name))
		return
	}
	if deleted {
		st := metav1.NewDeleted(h.res.GroupResource(), h.ri.Name, out.GetUID())
		h.s.writeStatusAs(h.w, mt, st)
		return
	}
	h.s.writeObject(h.w, mt, http.StatusOK, h.res, out)
}

// deleteObject deletes the object at key, or, if it has finalizers, marks it
// for deletion. deleted reports which happened; out is the object's last or
// new state.
func (s *Server) deleteObject(ctx context.Context, res *registry.Resource, key string, opts *metav1.DeleteOptions) (out storage.Object, deleted bool, err error) {
	check := func(cur storage.Object) error {
		if opts.Preconditions != nil {
			if st := opts.Preconditions.Check(res.GroupKind(), cur); st != nil {
				return asError(st)
			}
		}
		return nil
	}
	cur, err := s.store.Get(ctx, key, storage.ReadOptions{})
	if err != nil {
		return nil, false, err
	}
	if err := check(cur); err != nil {
		return nil, false, err
	}
	hasFinalizers := len(cur.GetFinalizers()) > 0 || res.Resource == "namespaces"
	if len(opts.DryRun) > 0 {
		return cur, !hasFinalizers, nil
	}
	if !hasFinalizers {
		out, err := s.store.Delete(ctx, key, nil, func(cur storage.Object) error {
			if len(cur.GetFinalizers()) > 0 {
				return storage.ErrConflict
			}
			return check(cur)
		})
		if errors.Is(err, storage.ErrConflict) {
			return s.deleteObject(ctx, res, key, opts) // finalizers appeared meanwhile
		}
		if err == nil && res.Release != nil {
			res.Release(out)
		}
		return out, err == nil, err
	}
	out, err = s.store.GuaranteedUpdate(ctx, key, false, nil, func(cur storage.Object) (storage.Object, error) {
		if err := check(cur); err != nil {
			return nil, err
		}
		if cur.GetDeletionTimestamp() != nil {
			return cur, nil
		}
		next := res.Copy(cur)
		now := metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
		next.SetDeletionTimestamp(&now)
		if res.Resource != "namespaces" { // a namespace has no grace period (golden 101)
			zero := int64(0)
			next.SetDeletionGracePeriodSeconds(&zero)
		}
		markTerminating(next)
		return next, nil
	})
	if err != nil {
		return nil, false, err
	}
	if res.Resource == "namespaces" {
		s.startNamespaceCleanup(out.GetName())
	}
	return out, false, nil
}

func (h *handler) deleteCollection() {
	mt, ok := h.s.negotiate(h.w, h.r, h.res)
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
	result, err := h.s.store.List(ctx, h.key(h.ri.Namespace, ""), storage.ListOptions{Predicate: pred})
	if err != nil {
		h.fail(h.storageStatus(err, ""))
		return
	}
	// The response lists what was deleted as it was listed (golden 83), and
	// objects kept for their finalizers in their new state, at the list's
	// resourceVersion.
	items := make([]storage.Object, 0, len(result.Items))
	for _, it := range result.Items {
		out, deleted, err := h.s.deleteObject(ctx, h.res, h.key(it.GetNamespace(), it.GetName()), &opts)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			h.fail(h.storageStatus(err, it.GetName()))
			return
		}
		if deleted {
			out = it
		}
		items = append(items, out)
	}
	meta := metav1.ListMeta{ResourceVersion: strconv.FormatUint(result.Revision, 10)}
	h.s.writeList(h.w, mt, h.res, &meta, items)
}

// statusError carries a Status through code that returns errors (storage
// callbacks) back to the handler, which writes it as is.
type statusError struct{ st *metav1.Status }

func (e *statusError) Error() string { return e.st.Message }

func asError(st *metav1.Status) error { return &statusError{st} }
