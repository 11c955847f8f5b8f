package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/kjson"
)

// patchTypes are the patch media types a resource accepts, in the order
// kube-apiserver lists them in a 415: custom resources have no strategic
// merge patch (their Go type carries no merge keys).
func patchTypes(res *registry.Resource) []string {
	if res.Custom {
		return []string{codec.MediaTypeJSONPatch, codec.MediaTypeMergePatch, codec.MediaTypeApplyPatch}
	}
	return []string{codec.MediaTypeJSONPatch, codec.MediaTypeMergePatch, codec.MediaTypeStrategicMergePatch, codec.MediaTypeApplyPatch}
}

// patchRequest reads what every PATCH has: the patch type (415 for one the
// resource or subresource does not take, accepted lists them), the options
// (validated; fieldManager names the writer) and the body.
func (h *handler) patchRequest(accepted []string) (ctype string, opts metav1.PatchOptions, body []byte, st *metav1.Status) {
	if m, err := codec.ParseMediaType(h.r.Header.Get("Content-Type")); err == nil {
		ctype = m.Type + "/" + m.Subtype
	}
	if !slices.Contains(accepted, ctype) {
		return "", opts, nil, metav1.NewUnsupportedMediaType(accepted)
	}
	opts, st = queryOptions(h, metav1.DecodePatchOptions, func(o metav1.PatchOptions) metav1.FieldErrors {
		return metav1.ValidatePatchOptions(o, ctype == codec.MediaTypeApplyPatch)
	}, "PatchOptions")
	if st != nil {
		return "", opts, nil, st
	}
	h.manager = managerName(opts.FieldManager, h.r.UserAgent())
	body, st = h.readBody()
	return ctype, opts, body, st
}

// applyPatch applies a JSON, merge or strategic merge patch (ctype) to doc, a
// JSON object of Go type typ.
func applyPatch(ctype string, doc, body []byte, typ reflect.Type) ([]byte, error) {
	switch ctype {
	case codec.MediaTypeJSONPatch:
		return patch.JSONPatch(doc, body)
	case codec.MediaTypeMergePatch:
		return patch.MergePatch(doc, body)
	default:
		return patch.Strategic(doc, body, typ)
	}
}

// patch serves PATCH: a JSON, merge or strategic merge patch applied to the
// stored object, or a server-side apply.
func (h *handler) patch() {
	mt, ok := h.negotiate()
	if !ok {
		return
	}
	if h.ri.Sub != "" && h.ri.Sub != "status" && h.ri.Sub != "ephemeralcontainers" && h.ri.Sub != "resize" && h.ri.Sub != "approval" {
		h.methodNotAllowed()
		return
	}
	ctype, opts, body, st := h.patchRequest(patchTypes(h.res))
	if st != nil {
		h.fail(st)
		return
	}
	if ctype == codec.MediaTypeApplyPatch {
		h.apply(mt, body, opts)
		return
	}
	if h.r.URL.Query().Get("fieldValidation") != metav1.FieldValidationIgnore {
		// A name the patch body repeats is reported with the patched
		// object's problems.
		format := "duplicate field %q"
		if ctype == codec.MediaTypeJSONPatch {
			format = "json patch duplicate field %q"
		}
		dups, _ := kjson.DuplicateNames(body)
		for _, d := range dups {
			h.patchDuplicates = append(h.patchDuplicates, fmt.Sprintf(format, d))
		}
	}
	typ := reflect.TypeOf(h.res.New()).Elem()
	want := func(cur storage.Object) (registry.Object, *metav1.Status) {
		doc, err := kjson.Marshal(h.res.WithTypeMeta(cur))
		if err != nil {
			return nil, metav1.NewInternalError(err)
		}
		patched, err := applyPatch(ctype, doc, body, typ)
		if err != nil {
			return nil, h.patchStatus(err)
		}
		if h.res.Custom {
			return h.decodePatched(patched)
		}
		return h.decodePatchedWith(patched, func(err error) *metav1.Status {
			return patchInvalid(ctype, body, patched, typ, err)
		})
	}
	h.writeUpdate(mt, want, false, h.dryRun(opts.DryRun))
}

// decodePatched decodes the result of a patch or apply as a new state of the
// named object.
func (h *handler) decodePatched(data []byte) (registry.Object, *metav1.Status) {
	return h.decodePatchedWith(data, func(err error) *metav1.Status {
		return metav1.NewInvalid(h.res.InvalidGroupKind(), h.ri.Name, metav1.FieldErrors{metav1.FieldInvalid("patch", truncate(data, 256), err.Error())})
	})
}

// decodePatchedWith is decodePatched with invalid, the Status of data that
// does not decode as the resource's Go type.
func (h *handler) decodePatchedWith(data []byte, invalid func(error) *metav1.Status) (registry.Object, *metav1.Status) {
	obj, st := h.decodeJSON(data, true, invalid)
	if st != nil {
		return nil, st
	}
	if obj.GetName() != h.ri.Name {
		return nil, metav1.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), h.ri.Name))
	}
	if st := h.checkNamespace(obj); st != nil {
		return nil, st
	}
	return obj, nil
}

// patchStatus is the Status of a patch that does not apply: the code and
// message the patch package chose, worded as kube-apiserver (golden 71).
func (h *handler) patchStatus(err error) *metav1.Status {
	var pe *patch.Error
	if !errors.As(err, &pe) {
		return metav1.NewInternalError(err)
	}
	st := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(pe.Code), Message: pe.Message}
	switch pe.Code {
	case http.StatusBadRequest:
		st.Reason = metav1.StatusReasonBadRequest
	case http.StatusUnprocessableEntity:
		st.Reason, st.Details = metav1.StatusReasonInvalid, &metav1.StatusDetails{}
	case http.StatusRequestEntityTooLarge:
		st.Reason = metav1.StatusReasonRequestEntityTooLarge
	default:
		st.Reason = metav1.StatusReasonInternalError
	}
	return st
}
