package webhook

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/kapi-dev/kapi/codec"
)

// MaxRequestBytes is the largest review body the handlers read. kube-apiserver
// limits an object to 3 MiB and an AdmissionReview holds two of them (object
// and oldObject) plus options; a larger body is refused with 413 before it is
// decoded, so a client cannot make the webhook buffer without bound.
const MaxRequestBytes = 7 << 20

// httpError is a refusal of the HTTP request itself (not of the object): the
// review could not be read, so there is no uid to answer with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// readReview checks the method and content type of r, reads its body into
// review (an AdmissionReview or a ConversionReview) and returns the apiVersion
// the answer must carry: the one the review was sent with, if it is one of
// versions.
func readReview(w http.ResponseWriter, r *http.Request, review any, apiVersionOf func() string, versions ...string) (string, error) {
	if r.Method != http.MethodPost {
		return "", &httpError{http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed: reviews are sent with POST", r.Method)}
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return "", &httpError{http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q is not supported: reviews are sent as application/json", ct)}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return "", &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", MaxRequestBytes)}
		}
		return "", &httpError{http.StatusBadRequest, "reading request body: " + err.Error()}
	}
	if len(body) == 0 {
		return "", &httpError{http.StatusBadRequest, "request body is empty"}
	}
	if err := codec.UnmarshalJSON(body, review); err != nil {
		return "", &httpError{http.StatusBadRequest, "request body is not a review: " + err.Error()}
	}
	v := apiVersionOf()
	for _, ok := range versions {
		if v == ok {
			return v, nil
		}
	}
	return "", &httpError{http.StatusBadRequest, fmt.Sprintf("apiVersion %q is not supported: want one of %q", v, versions)}
}

// writeReview answers with review as JSON, or with an HTTP error when err is
// an *httpError.
func writeReview(w http.ResponseWriter, review any, err error) {
	if he, ok := errors.AsType[*httpError](err); ok {
		http.Error(w, he.msg, he.code)
		return
	}
	b, err := codec.MarshalJSON(review)
	if err != nil { // the review types always marshal; never seen
		http.Error(w, "encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(b); err != nil {
		slog.Debug("webhook: writing response", "err", err)
	}
}
