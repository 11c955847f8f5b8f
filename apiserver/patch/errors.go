package patch

import "net/http"

// Error is a patch that cannot be applied. Code is the HTTP status code
// kube-apiserver answers for it (400 for a malformed patch, 422 for a patch that
// does not apply to the document, 413 for a patch over the limits, 500 for a
// document that is not JSON) and Message the Status message it sends.
type Error struct {
	Code    int
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Messages kube-apiserver sends.
const (
	// msgUnprocessable is the message of a 422 that carries no detail: what
	// kube-apiserver answers when a JSON patch does not apply.
	msgUnprocessable = "the server rejected our request due to an error in our request"

	msgBadPrimitiveList   = "invalid patch format of primitive list"
	msgBadRetainKeys      = "invalid patch format of retainKeys"
	msgBadSetElementOrder = "invalid patch format of setElementOrder list"
	msgRetainKeysMismatch = "patch content doesn't match retainKeys list"
	msgListOfLists        = "lists of lists are not supported"
)

func badRequest(msg string) *Error { return &Error{Code: http.StatusBadRequest, Message: msg} }

func unprocessable(msg string) *Error {
	return &Error{Code: http.StatusUnprocessableEntity, Message: msg}
}
