package apiserver

import (
	"encoding/json"
	"errors"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/fieldmanager"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
	"github.com/kapi-dev/kapi/codec"
)

// apply serves a server-side apply (application/apply-patch+yaml, whose body
// is YAML or JSON): the configuration is merged into the stored object by
// the field manager (structured-merge-diff), which owns what it applies,
// reports conflicts with other managers (409) unless force is set, and
// removes what the applier stopped applying and no one else owns. A missing
// object is created (201).
func (h *handler) apply(mt codec.MediaType, body []byte, opts metav1.PatchOptions) {
	js, err := yamlToJSON(body)
	if err != nil {
		h.fail(metav1.NewBadRequest("error decoding YAML: " + err.Error()))
		return
	}
	// Keys the configuration repeats are refused or warned about as
	// fieldValidation says, in the YAML library's words.
	if h.checkYAMLDuplicates(body); h.yamlDuplicates != "" {
		if h.r.URL.Query().Get("fieldValidation") == metav1.FieldValidationStrict {
			h.fail(metav1.NewBadRequest("error strict decoding patch: error converting YAML to JSON: " + h.yamlDuplicates))
			return
		}
		for _, line := range strings.Split(h.yamlDuplicates, "\n")[1:] {
			h.warn(strings.TrimSpace(line))
		}
	}
	applied, err := decodeJSONObject(js)
	if err != nil || applied == nil {
		h.fail(metav1.NewBadRequest("the apply configuration must be an object"))
		return
	}
	m, err := h.s.fieldManager(h.res, h.ri.Sub)
	if err != nil {
		h.fail(metav1.NewInternalError(err))
		return
	}
	h.applying = true
	force := opts.Force != nil && *opts.Force
	want := func(cur storage.Object) (registry.Object, *metav1.Status) {
		var live map[string]any
		if cur != nil {
			if live, err = toMap(h.res, cur); err != nil {
				return nil, metav1.NewInternalError(err)
			}
		}
		merged, err := m.Apply(live, applied, h.manager, h.ri.Sub, force)
		if err != nil {
			var ce *fieldmanager.ConflictError
			var ie *fieldmanager.InvalidApplyError
			switch {
			case errors.As(err, &ce):
				return nil, ce.Status(h.res.GroupResource(), h.ri.Name)
			case errors.As(err, &ie):
				return nil, ie.Status()
			}
			return nil, metav1.NewInternalError(err)
		}
		data, err := json.Marshal(merged)
		if err != nil {
			return nil, metav1.NewInternalError(err)
		}
		return h.decodePatched(data)
	}
	h.writeUpdate(mt, want, h.ri.Sub == "", h.dryRun(opts.DryRun))
}
