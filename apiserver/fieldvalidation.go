package apiserver

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/patch"
	"github.com/kapi-dev/kapi/apiserver/schema"
	"github.com/kapi-dev/kapi/internal/kjson"
	"sigs.k8s.io/yaml"
)

// checkFields applies the request's fieldValidation to data (a JSON request
// body, or the result of a patch), as kube-apiserver does: the fields the
// resource does not know and the names an object repeats (and the
// duplicates of a patch body, h.patchDuplicates) are dropped silently with
// Ignore, dropped with a Warning header each with Warn (the default, golden
// 87; the last of repeated names wins), and refuse the request with Strict:
// a 400 for a body, a 422 naming the patched object for a patch. The
// problems are listed in document order, a patch body's duplicates first,
// a YAML body's repeated keys (checkYAMLDuplicates) before all.
// Decoding then drops the unknown fields.
func (h *handler) checkFields(data []byte, patched bool) *metav1.Status {
	mode := h.r.URL.Query().Get("fieldValidation")
	if mode == metav1.FieldValidationIgnore {
		return nil
	}
	msgs := h.fieldProblems(data)
	if len(msgs) == 0 && h.yamlDuplicates == "" {
		return nil
	}
	if mode == metav1.FieldValidationStrict {
		if h.yamlDuplicates != "" {
			msgs = append([]string{h.yamlDuplicates}, msgs...)
		}
		msg := "strict decoding error: " + strings.Join(msgs, ", ")
		if patched {
			return metav1.NewInvalid(metav1.GroupKind{}, "", metav1.FieldErrors{metav1.FieldInvalid("patch", string(data), msg)})
		}
		return metav1.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", h.res.Kind, h.res.Version, h.res.Kind, msg))
	}
	if h.yamlDuplicates != "" {
		for _, line := range strings.Split(h.yamlDuplicates, "\n")[1:] {
			h.warn(strings.TrimSpace(line))
		}
	}
	for _, m := range msgs {
		h.warn(m)
	}
	return nil
}

// yamlUnmarshalErrors is how the YAML library starts the list of keys a
// YAML document repeats.
const yamlUnmarshalErrors = "yaml: unmarshal errors:\n"

// checkYAMLDuplicates remembers, unless fieldValidation is Ignore, the keys
// a YAML body repeats in a mapping ("yaml: unmarshal errors:\n  line 3: key
// \"name\" already set in map"), which converting it to JSON loses (the
// last value wins), for checkFields.
func (h *handler) checkYAMLDuplicates(body []byte) {
	if h.r.URL.Query().Get("fieldValidation") == metav1.FieldValidationIgnore {
		return
	}
	if _, err := yaml.YAMLToJSONStrict(body); err != nil {
		if _, msg, ok := strings.Cut(err.Error(), yamlUnmarshalErrors); ok {
			h.yamlDuplicates = yamlUnmarshalErrors + msg
		}
	}
}

// fieldProblems lists the repeated names and unknown fields of data in
// document order, after the duplicates of the patch body, as
// kube-apiserver's strict decoding words them.
func (h *handler) fieldProblems(data []byte) []string {
	var msgs []string
	msgs = append(msgs, h.patchDuplicates...)
	unknown := map[string]bool{}
	for _, f := range h.unknownFields(data) {
		unknown[f] = true
	}
	_ = kjson.WalkNames(data, func(path string, dup bool) {
		switch {
		case dup:
			msgs = append(msgs, fmt.Sprintf("duplicate field %q", path))
		case unknown[path]:
			delete(unknown, path)
			msgs = append(msgs, fmt.Sprintf("unknown field %q", path))
		}
	})
	for _, f := range slices.Sorted(maps.Keys(unknown)) { // not met by the walk: none expected
		msgs = append(msgs, fmt.Sprintf("unknown field %q", f))
	}
	return msgs
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
