package apiserver

import (
	"fmt"
	"reflect"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
	"github.com/kapi-dev/kapi/apiserver/schema"
)

// checkFields applies the request's fieldValidation to the fields of data
// (a JSON request body, or the result of a patch) that the resource does not
// know, as kube-apiserver does: Ignore drops them silently, Warn (the
// default) drops them with a Warning header per field (golden 87), Strict
// refuses the request (400). Decoding then drops them.
func (h *handler) checkFields(data []byte) *metav1.Status {
	mode := h.r.URL.Query().Get("fieldValidation")
	if mode == metav1.FieldValidationIgnore {
		return nil
	}
	unknown := h.unknownFields(data)
	if len(unknown) == 0 {
		return nil
	}
	msgs := make([]string, len(unknown))
	for i, f := range unknown {
		msgs[i] = fmt.Sprintf("unknown field %q", f)
	}
	if mode == metav1.FieldValidationStrict {
		return metav1.NewBadRequest("strict decoding error: " + strings.Join(msgs, ", "))
	}
	for _, m := range msgs {
		h.warn(m)
	}
	return nil
}

// unknownFields lists the fields of data the resource does not know: those
// its Go type does not declare, or, for a custom resource, those its schema
// prunes. Data that does not decode has none (decoding reports it).
func (h *handler) unknownFields(data []byte) []string {
	if h.res.Custom {
		v, err := schema.DecodeJSON(data)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil
		}
		return schema.Prune(h.res.Schema, m)
	}
	unknown, _ := patch.UnknownFields(data, reflect.TypeOf(h.res.New()).Elem())
	return unknown
}

// warn adds a Warning header (code 299, as kube-apiserver sends them), once
// per message however often a retried write meets it.
func (h *handler) warn(msg string) {
	if h.warned[msg] {
		return
	}
	if h.warned == nil {
		h.warned = map[string]bool{}
	}
	h.warned[msg] = true
	h.w.Header().Add("Warning", fmt.Sprintf("299 - %q", msg))
}
