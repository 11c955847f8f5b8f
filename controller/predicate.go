package controller

import (
	"maps"

	"github.com/kapi-dev/kapi/client"
)

// Predicate filters the notifications of one source (the primary kind given
// to New, or an Owns or Watches source) before they enqueue anything. Each
// function says whether a notification should go on; a nil function lets
// every notification of its kind through. A source with several predicates
// enqueues only what all of them let through.
//
// Predicates see the objects the informer shares with every other reader:
// they must not modify them.
type Predicate[T any] struct {
	// Create is asked about an object that appeared (listed or created).
	Create func(obj *T) bool
	// Update is asked about an object that changed from old to new.
	Update func(old, new *T) bool
	// Delete is asked about an object that is gone.
	Delete func(obj *T) bool
}

func (p Predicate[T]) create(obj *T) bool      { return p.Create == nil || p.Create(obj) }
func (p Predicate[T]) update(old, new *T) bool { return p.Update == nil || p.Update(old, new) }
func (p Predicate[T]) delete(obj *T) bool      { return p.Delete == nil || p.Delete(obj) }

// GenerationChanged lets through updates that change metadata.generation,
// which the server bumps when an object's spec changes (not its status or
// metadata), and every create and delete. Kinds whose generation the server
// does not maintain (ConfigMaps, Secrets) never pass an update.
func GenerationChanged[T any, PT client.ObjectPtr[T]]() Predicate[T] {
	return Predicate[T]{Update: func(old, new *T) bool {
		return PT(old).GetGeneration() != PT(new).GetGeneration()
	}}
}

// LabelsChanged lets through updates that change the object's labels, and
// every create and delete.
func LabelsChanged[T any, PT client.ObjectPtr[T]]() Predicate[T] {
	return Predicate[T]{Update: func(old, new *T) bool {
		return !maps.Equal(PT(old).GetLabels(), PT(new).GetLabels())
	}}
}

// AnnotationsChanged lets through updates that change the object's
// annotations, and every create and delete.
func AnnotationsChanged[T any, PT client.ObjectPtr[T]]() Predicate[T] {
	return Predicate[T]{Update: func(old, new *T) bool {
		return !maps.Equal(PT(old).GetAnnotations(), PT(new).GetAnnotations())
	}}
}

// all is the conjunction of a source's predicates.
type all[T any] []Predicate[T]

func (ps all[T]) create(obj *T) bool {
	for _, p := range ps {
		if !p.create(obj) {
			return false
		}
	}
	return true
}

func (ps all[T]) update(old, new *T) bool {
	for _, p := range ps {
		if !p.update(old, new) {
			return false
		}
	}
	return true
}

func (ps all[T]) delete(obj *T) bool {
	for _, p := range ps {
		if !p.delete(obj) {
			return false
		}
	}
	return true
}
