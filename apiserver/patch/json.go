package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// MaxJSONPatchOperations is the most operations a JSON patch may hold, as in
// kube-apiserver; a longer patch is refused with 413.
const MaxJSONPatchOperations = 10000

// maxCopyBytes bounds the bytes copy operations of one JSON patch may
// duplicate, so a small patch cannot blow a document up (kube-apiserver bounds
// them the same way, by three times its largest request body).
const maxCopyBytes = 3 * 3 * 1024 * 1024

// JSONPatch applies an RFC 6902 patch to a JSON document.
//
// A patch that does not decode is a 400 *Error with the decoder's message; one
// with more than [MaxJSONPatchOperations] operations is 413; one that does not
// apply (a failed test, a path that does not exist, an index out of range) is
// 422 with kube-apiserver's generic message.
func JSONPatch(doc, patch []byte) ([]byte, error) {
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		// The library also checks the operations while decoding; kube-apiserver
		// finds a bad operation (an unknown op, a missing path) only when it
		// applies the patch, and answers 422 for it. Only a body that is not a
		// list of objects is a malformed patch.
		var shape []map[string]json.RawMessage
		if json.Unmarshal(patch, &shape) == nil {
			return nil, unprocessable(msgUnprocessable)
		}
		return nil, badRequest(err.Error())
	}
	if len(ops) > MaxJSONPatchOperations {
		return nil, &Error{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf(
			"Request entity too large: The allowed maximum operations in a JSON patch is %d, got %d",
			MaxJSONPatchOperations, len(ops))}
	}
	opts := jsonpatch.NewApplyOptions()
	opts.AccumulatedCopySizeLimit = maxCopyBytes
	opts.EscapeHTML = false
	out, err := ops.ApplyWithOptions(doc, opts)
	if err != nil {
		return nil, unprocessable(msgUnprocessable)
	}
	return out, nil
}

// MergePatch applies an RFC 7386 merge patch.
//
// A patch that is not JSON is a 400 *Error ("Invalid JSON Patch", as
// kube-apiserver words it); a document that is not JSON is 500.
func MergePatch(doc, patch []byte) ([]byte, error) {
	out, err := jsonpatch.MergePatch(doc, patch)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, jsonpatch.ErrBadJSONPatch):
		return nil, badRequest(err.Error())
	default:
		return nil, &Error{Code: http.StatusInternalServerError, Message: err.Error()}
	}
}
