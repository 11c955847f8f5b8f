package fieldmanager

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/merge"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Conflict is one field an apply would change that another manager owns.
type Conflict struct {
	// Manager names the owner as kube-apiserver's messages do:
	// `"bob" using v1` for an updater, `"alice"` for an applier, with
	// ` with subresource "status"` after the quoted name when there is one.
	Manager string
	// Field is the path of the field, as `.data.k1`,
	// `.spec.containers[name="app"].image` or `.metadata.finalizers[="x"]`.
	Field string
}

// ConflictError is the error of an apply that conflicts with other managers
// and was not forced. Status turns it into the 409 answer.
type ConflictError struct {
	// Conflicts lists every conflicting field, ordered by manager and path.
	Conflicts []Conflict
	// message is the summary kube-apiserver writes.
	message string
}

func newConflictError(cs merge.Conflicts) *ConflictError {
	type item struct {
		key string
		c   merge.Conflict
	}
	items := make([]item, len(cs))
	for i, c := range cs {
		items[i] = item{c.Manager, c}
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].key != items[j].key {
			return items[i].key < items[j].key
		}
		return items[i].c.Path.Compare(items[j].c.Path) < 0
	})
	e := &ConflictError{Conflicts: make([]Conflict, len(items))}
	for i, it := range items {
		e.Conflicts[i] = Conflict{Manager: describe(it.key), Field: it.c.Path.String()}
	}
	// The message: one conflict inline; several grouped by manager
	// (sorted by manager identity), one "- path" line each.
	if len(items) == 1 {
		e.message = fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", e.Conflicts[0].Manager, e.Conflicts[0].Field)
		return e
	}
	var lines []string
	for i, it := range items {
		if i == 0 || it.key != items[i-1].key {
			lines = append(lines, fmt.Sprintf("conflicts with %s:", e.Conflicts[i].Manager))
		}
		lines = append(lines, "- "+e.Conflicts[i].Field)
	}
	e.message = fmt.Sprintf("Apply failed with %d conflicts: %s", len(items), strings.Join(lines, "\n"))
	return e
}

// Error returns the message of the Status, such as
//
//	Apply failed with 1 conflict: conflict with "bob" using v1: .data.k1
//	Apply failed with 2 conflicts: conflicts with "bob" using v1:\n- .data.k1\n- .data.k2
func (e *ConflictError) Error() string { return e.message }

// Status returns the 409 Conflict Status kube-apiserver answers with (golden
// 75): reason Conflict, the Error message, and one cause of type
// FieldManagerConflict per field. kube-apiserver names neither the resource
// nor the object in it, so gr and name are not used; they are parameters so
// that callers need not know that.
func (e *ConflictError) Status(gr metav1.GroupResource, name string) *metav1.Status {
	_, _ = gr, name
	causes := make([]metav1.StatusCause, len(e.Conflicts))
	for i, c := range e.Conflicts {
		causes[i] = metav1.StatusCause{
			Type:    metav1.CauseTypeFieldManagerConflict,
			Message: "conflict with " + c.Manager,
			Field:   c.Field,
		}
	}
	return metav1.NewApplyConflict(causes, e.message)
}

// InvalidApplyError is the error of an apply configuration that cannot be
// applied: of another type than the manager's, carrying managedFields, or
// not matching the schema. Its Status is what kube-apiserver answers: a 400
// BadRequest, except for a configuration that does not match the schema,
// which kube-apiserver reports as a 500 with no reason.
type InvalidApplyError struct {
	// Message is the Status message, such as
	// "invalid object type: /v2, Kind=ConfigMap" or "failed to create typed
	// patch object (ns/name; /v1, Kind=ConfigMap): .nope: field not
	// declared in schema".
	Message string
	// notTyped is set when the configuration does not match the schema.
	notTyped bool
}

// Error returns the message.
func (e *InvalidApplyError) Error() string { return e.Message }

// Status returns the Status for e: 400 BadRequest, or for a configuration
// that does not match the schema a 500 with no reason and no details.
func (e *InvalidApplyError) Status() *metav1.Status {
	if e.notTyped {
		return &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure,
			Message:  e.Message,
			Code:     http.StatusInternalServerError,
		}
	}
	return metav1.NewBadRequest(e.Message)
}
