package cache

import (
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ChangeType says what a [Change] did to an object.
type ChangeType uint8

const (
	// Added means the object was not in the store before.
	Added ChangeType = iota + 1
	// Updated means an object with the same key was replaced. It is
	// reported even when nothing changed (the same resourceVersion), as
	// client-go's informers report a relist as updates; compare the
	// resourceVersions of Old and New to skip those.
	Updated
	// Deleted means the object was in the store and is no longer.
	Deleted
)

// String returns "Added", "Updated" or "Deleted".
func (t ChangeType) String() string {
	switch t {
	case Added:
		return "Added"
	case Updated:
		return "Updated"
	case Deleted:
		return "Deleted"
	}
	return "ChangeType(" + strconv.Itoa(int(t)) + ")"
}

// Change is one difference between the contents of a store before and
// after a [Store.Replace].
type Change[T Object] struct {
	// Type is what happened to the object.
	Type ChangeType
	// Old is the object the store held before: zero for Added, the last
	// known state of the object for Deleted (an object that vanished in a
	// relist was deleted at some unknown point after Old).
	Old T
	// New is the object the store holds now: zero for Deleted.
	New T
}

// ReplaceDiff tells how a [Store.Replace] changed the store: which objects
// it added, which it updated (with their previous state), and which it
// deleted (with their last known state). An informer turns these into
// OnAdd, OnUpdate and OnDelete notifications after a relist.
//
// The diff is computed from the replaced contents, which the store hands
// over at the swap, on the first call of a method, and outside the store's
// lock; a caller that never asks pays nothing. Until then the diff keeps
// the old objects alive. The diff describes the swap alone, whatever was
// written to the store afterwards.
//
// A ReplaceDiff is safe for concurrent use. A nil *ReplaceDiff is empty.
type ReplaceDiff[T Object] struct {
	once sync.Once
	// old is the replaced contents; compute takes it apart, so nothing
	// else may read it.
	old map[string]map[string]entry[T]
	// oldCount is the number of objects in old.
	oldCount int
	// items are the new objects, in the order given to Replace, without
	// the duplicates a later item overrode.
	items []T

	// olds[i] is the previous object under the key of items[i]; zero if
	// items[i] was added.
	olds []T
	// deleted holds the objects that vanished, in key order.
	deleted        []deletedObject[T]
	added, updated int
}

// deletedObject is an object a Replace removed, with its key.
type deletedObject[T Object] struct {
	key string
	obj T
}

// compute works out the diff once.
func (d *ReplaceDiff[T]) compute() {
	d.once.Do(func() {
		d.olds = make([]T, len(d.items))
		for i, obj := range d.items {
			if e, ok := d.old[obj.GetNamespace()][obj.GetName()]; ok {
				d.olds[i] = e.obj
				d.updated++
			}
		}
		d.added = len(d.items) - d.updated
		if d.updated < d.oldCount {
			// Some objects vanished: strike out the ones that are
			// still there, and what remains was deleted. Relists
			// without deletions, the common case, skip this.
			for _, obj := range d.items {
				if inner := d.old[obj.GetNamespace()]; inner != nil {
					delete(inner, obj.GetName())
				}
			}
			d.deleted = make([]deletedObject[T], 0, d.oldCount-d.updated)
			for ns, inner := range d.old {
				for name, e := range inner {
					d.deleted = append(d.deleted, deletedObject[T]{JoinKey(ns, name), e.obj})
				}
			}
			slices.SortFunc(d.deleted, func(a, b deletedObject[T]) int { return strings.Compare(a.key, b.key) })
		}
		d.old = nil
	})
}

// All yields every change: first the deletions, in key order, then an
// Added or Updated change for each new object, in the order given to
// Replace. This is the order in which client-go notifies handlers after a
// relist.
func (d *ReplaceDiff[T]) All() iter.Seq[Change[T]] {
	return func(yield func(Change[T]) bool) {
		if d == nil {
			return
		}
		d.compute()
		for _, del := range d.deleted {
			if !yield(Change[T]{Type: Deleted, Old: del.obj}) {
				return
			}
		}
		var zero T
		for i, obj := range d.items {
			c := Change[T]{Type: Added, New: obj}
			if old := d.olds[i]; old != zero {
				c.Type, c.Old = Updated, old
			}
			if !yield(c) {
				return
			}
		}
	}
}

// Counts returns the numbers of objects the Replace added, updated and
// deleted.
func (d *ReplaceDiff[T]) Counts() (added, updated, deleted int) {
	if d == nil {
		return 0, 0, 0
	}
	d.compute()
	return d.added, d.updated, len(d.deleted)
}
