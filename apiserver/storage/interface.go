// Package storage is the reference server's MVCC object store: one global,
// strictly increasing revision (an object's resourceVersion), reads at the latest
// or at an exact past revision inside a history window, consistent paged lists,
// and watches that replay history and then follow live writes in revision order.
//
// Interface is what the API server and the registry use; Memory implements it in
// process, and Etcd (OpenEtcd) on an etcd cluster.
//
// # Durability
//
// OpenBolt returns a Memory made durable by a go.etcd.io/bbolt file under it:
// memory serves every read and watch, and every write is committed to the
// file (fsynced, concurrent writes sharing one transaction and one fsync)
// before it is published to readers and watchers and acknowledged. The file
// holds the objects at the compacted revision and one record per revision of
// the history window, compacted as memory compacts, plus the key that signs
// continue tokens: a store opened again has the same revisions, history,
// continue tokens and watch replays (see durable.go and bolt.go). Objects are
// encoded by a Codec the caller gives (the API server's encodes built-in
// kinds as protobuf in the Kubernetes envelope and custom resources as JSON,
// kube-apiserver's encodings in etcd).
//
// Objects handed to the store become the store's: it sets their resourceVersion
// and keeps them; callers must not modify them afterwards. Objects the store
// returns are shared with other readers and must be treated as read-only (copy
// before modifying).
//
// # On etcd
//
// OpenEtcd returns a store on an etcd cluster that behaves as
// kube-apiserver's etcd3 store: a resourceVersion is the etcd revision of
// the write (a new cluster is at revision 1 before any), writes are
// transactions comparing the key's mod revision (so that several stores,
// in several processes, share optimistic concurrency), reads are
// linearizable (serializable for Match Any), paged lists use
// kube-apiserver's continue tokens (not signed: any store on the cluster
// continues them), watches are etcd watches, and compaction is etcd's. The
// Codec and the Key mapping given decide the bytes and the keys, so that a
// kube-apiserver on the same cluster can share them (see the apiserver's
// Config.Etcd). Objects are decoded for every read: an Etcd hands out
// objects no one else holds.
//
// # Revisions and history
//
// Every write (Create, an update, Delete) takes the next revision of one
// global counter, so revisions have no gaps, and stamps it on the object as
// its resourceVersion. A store keeps the events of a history window and, for
// every key, the versions a read inside that window can see. Compacting to
// revision C drops the events up to C but keeps the state at C, as etcd does:
// Exact reads, continue tokens and watches need a revision at or above C and
// fail with ErrExpired below it.
//
// # Paged lists
//
// Every page of a list is read at the revision of its first page, so the pages
// together are the list at that revision. Continue tokens are opaque; Memory
// authenticates them, so a token altered, issued by another store or for
// another prefix is ErrInvalidContinue. When the first page's revision has
// been compacted, the ErrExpired error carries a token that continues at the
// latest revision, as kube-apiserver's 410 does.
//
// # Watches
//
// A watch delivers every event after its starting revision under its prefix
// exactly once and in revision order, however writes race with its start.
// Writers never wait for watchers: a watcher that falls more than its buffer
// behind ends with a Failed event wrapping ErrTooSlow, and one whose unread
// events were compacted with ErrExpired; the client then watches again from
// the last revision it saw (or lists again on ErrExpired).
//
// # Errors
//
// The store's failures are *Error values matched with errors.Is against the
// sentinels (ErrNotFound, ErrConflict, …). Their Message is worded as
// kube-apiserver words the same failure where one exists (precondition
// conflicts, "Too large resource version: R, current: C", "continue key is not
// valid: …"), so the server can put it in a Status as is.
package storage

import (
	"context"
	"fmt"
	"time"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
)

// Object is a stored API object: a typed kind or an unstructured one.
type Object = metav1.Object

// Interface is an MVCC store of API objects under string keys. Keys are paths
// such as "/core/configmaps/default/settings"; a prefix ending in "/" names a
// collection ("/core/configmaps/default/" or, for all namespaces,
// "/core/configmaps/").
type Interface interface {
	// Create stores obj under key at a new revision and sets obj's
	// resourceVersion. It fails with ErrAlreadyExists if key holds an object.
	Create(ctx context.Context, key string, obj Object) (Object, error)

	// Get returns the object under key as opts asks (see ReadOptions).
	// ErrNotFound if there is none at that revision.
	Get(ctx context.Context, key string, opts ReadOptions) (Object, error)

	// GuaranteedUpdate applies tryUpdate to the current object under key and
	// stores the result at a new revision, retrying with the fresh object if
	// another write won the race. tryUpdate gets a read-only object (nil if key
	// is empty and allowCreate is set; otherwise a missing key is ErrNotFound) and
	// returns a new object, or an error that aborts the update and is returned
	// as is. Preconditions are checked against the current object before each
	// try (ErrConflict). If tryUpdate returns an object whose resourceVersion is
	// set and differs from the current one, the update fails with ErrConflict
	// (optimistic concurrency). Returning the current object unchanged (same
	// pointer) is a no-op: no new revision, no event.
	GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *Preconditions,
		tryUpdate func(current Object) (Object, error)) (Object, error)

	// Delete removes the object under key at a new revision and returns its last
	// state (with the deletion's revision as resourceVersion). Preconditions are
	// checked (ErrConflict); validate, if not nil, may veto with an error
	// returned as is. ErrNotFound if key is empty.
	Delete(ctx context.Context, key string, pre *Preconditions, validate func(current Object) error) (Object, error)

	// List returns the objects under prefix as opts asks, sorted by key.
	List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error)

	// Watch streams changes under prefix (see WatchOptions). The watch ends
	// when ctx is done, when Stop is called, or when the watcher falls too far
	// behind (its channel is then closed after an Event of type Failed; the
	// client re-watches from its last revision).
	Watch(ctx context.Context, prefix string, opts WatchOptions) (Watcher, error)

	// Revision is the store's current revision (0 if nothing was ever written).
	Revision() uint64

	// Close stops background work and ends every watch.
	Close() error
}

// ReadMatch says which revision a read is served at.
type ReadMatch int

const (
	// Latest reads the current state (resourceVersion "" in the API).
	Latest ReadMatch = iota
	// Any may serve any state the store has; the memory store serves the
	// latest (resourceVersion "0").
	Any
	// NotOlderThan serves the latest state, which must be at least
	// ResourceVersion; if the store is behind, it waits up to a short bound
	// (ErrTooLargeResourceVersion after it).
	NotOlderThan
	// Exact serves the state at exactly ResourceVersion (ErrExpired if it was
	// compacted, ErrTooLargeResourceVersion if it is in the future).
	Exact
)

// ReadOptions select the revision of a read.
type ReadOptions struct {
	ResourceVersion uint64
	Match           ReadMatch
}

// ListOptions select a page of a list.
type ListOptions struct {
	ReadOptions
	// Limit is the page size; 0 means everything.
	Limit int64
	// Continue resumes a paged list from a token this store returned; the page
	// is served at the revision of the first page (ErrExpired, with a fresh
	// token in the error, if that revision was compacted; ErrInvalidContinue if
	// the token is malformed, tampered with or from another store).
	// ReadOptions must be zero with a token.
	Continue string
	// Predicate, if not nil, filters objects; filtered objects do not count
	// toward Limit. RemainingItemCount is not reported when it is set.
	Predicate func(Object) bool
}

// ListResult is one page of a list.
type ListResult struct {
	Items []Object
	// Revision is the revision the page was read at (the list's resourceVersion).
	Revision uint64
	// Continue is the token for the next page, empty on the last page.
	Continue string
	// RemainingItemCount is the number of items after this page when known
	// (no predicate and more pages follow), else nil.
	RemainingItemCount *int64
}

// WatchOptions select where a watch starts and what it sees.
type WatchOptions struct {
	// ResourceVersion is the revision to start after: events with a greater
	// revision are delivered. 0 means "now" (but see SendInitialEvents).
	// ErrExpired if it was compacted.
	ResourceVersion uint64
	// SendInitialEvents first delivers every object under the prefix as an
	// Added event (at ResourceVersion, or the latest state when it is 0), then
	// one Bookmark event marked InitialEventsEnd, then the changes that follow.
	SendInitialEvents bool
	// Predicate filters objects. A modification that makes an object stop
	// matching is delivered as Deleted of its previous state stamped with the
	// event's revision (as kube-apiserver does; PrevObject is that state as
	// stored); one that makes it start matching as Added.
	Predicate func(Object) bool
	// BookmarkInterval, if positive, asks for a Bookmark event about that often
	// while the watch is idle, carrying the revision up to which the watcher
	// has seen every event.
	BookmarkInterval time.Duration
	// BookmarkAt, if not zero, asks for one Bookmark event at that time
	// whether or not the watch is idle (kube-apiserver's cacher sends one two
	// seconds before a watch's deadline, so that the client resumes from as
	// recent a resourceVersion as possible). A time already past asks for
	// none.
	BookmarkAt time.Time
}

// EventType is the kind of a watch event.
type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Failed   EventType = "ERROR"
)

// Event is one change seen by a watch.
type Event struct {
	Type EventType
	// Object is the new state (Added, Modified), the last state (Deleted, with
	// the deletion's revision as resourceVersion), or nil (Bookmark, Error).
	Object Object
	// PrevObject is the state before a Modified or Deleted event, when known.
	PrevObject Object
	// Revision is the event's revision; for a Bookmark, every event up to it
	// has been delivered.
	Revision uint64
	// InitialEventsEnd marks the Bookmark that ends the initial events.
	InitialEventsEnd bool
	// Err is set for Failed events (e.g. ErrExpired, or a watcher too slow).
	Err error
}

// Watcher is a running watch.
type Watcher interface {
	// ResultChan delivers events in revision order; it is closed when the
	// watch ends.
	ResultChan() <-chan Event
	// Stop ends the watch; it may be called more than once.
	Stop()
}

// Preconditions must hold on the current object for a write to proceed.
type Preconditions struct {
	UID             *metav1.UID
	ResourceVersion *string
}

// Code classifies a storage error.
type Code int

const (
	CodeNotFound Code = iota + 1
	CodeAlreadyExists
	CodeConflict
	CodeExpired
	CodeTooLargeResourceVersion
	CodeInvalidContinue
	CodeInvalidObject
	CodeTooSlow
)

// Sentinel errors, matched with errors.Is against an *Error.
var (
	ErrNotFound                = &Error{Code: CodeNotFound}
	ErrAlreadyExists           = &Error{Code: CodeAlreadyExists}
	ErrConflict                = &Error{Code: CodeConflict}
	ErrExpired                 = &Error{Code: CodeExpired}
	ErrTooLargeResourceVersion = &Error{Code: CodeTooLargeResourceVersion}
	ErrInvalidContinue         = &Error{Code: CodeInvalidContinue}
	ErrTooSlow                 = &Error{Code: CodeTooSlow}
)

// Error is a storage failure.
type Error struct {
	Code Code
	Key  string
	// ResourceVersion is the revision the error concerns (the current one for
	// CodeTooLargeResourceVersion).
	ResourceVersion uint64
	// Continue is, for an expired continue token, a token that resumes the
	// list at the latest revision (an inconsistent continuation).
	Continue string
	Message  string
	Err      error
}

// Error returns the Message (or the Code's description), prefixed with the
// Key and followed by the wrapped error when they are set.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = [...]string{"", "not found", "already exists", "conflict", "expired", "too large resource version",
			"invalid continue token", "invalid object", "watcher too slow"}[e.Code]
	}
	if e.Key != "" {
		msg = fmt.Sprintf("%s: %s", e.Key, msg)
	}
	if e.Err != nil {
		msg = fmt.Sprintf("%s: %v", msg, e.Err)
	}
	return msg
}

// Is matches errors of the same Code, so errors.Is(err, ErrNotFound) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the wrapped error, if any.
func (e *Error) Unwrap() error { return e.Err }
