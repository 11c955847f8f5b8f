package informer

// ResourceEventHandler receives the notifications of an [Informer]
// about objects of type T. Each registered handler is called from a
// goroutine of its own, one call at a time, in the order the informer saw
// the changes; see "Delivery" in the package documentation.
//
// Objects are shared with the informer's cache and with every other
// handler: treat them as read-only, and DeepCopy one before modifying it.
type ResourceEventHandler[T any] interface {
	// OnAdd is called for an object that appeared: listed at start-up
	// (isInitialList true), created, or found by a relist after the watch
	// broke (isInitialList false). A handler added to an informer that
	// already holds objects first gets an OnAdd with isInitialList true for
	// each of them.
	OnAdd(obj *T, isInitialList bool)
	// OnUpdate is called when an object changed: newObj has a different
	// resourceVersion than oldObj, the state the handler saw last, and the
	// same uid (a re-created object is a delete and an add instead).
	OnUpdate(oldObj, newObj *T)
	// OnDelete is called for an object that is gone. When the informer saw
	// the deletion (a watch DELETED event), obj is the object's final state
	// and finalStateUnknown is false. When the deletion was inferred from a
	// relist after the watch broke (the object was missing from the new
	// list), obj is the last state the cache knew, which may be stale, and
	// finalStateUnknown is true; this is client-go's
	// DeletedFinalStateUnknown tombstone.
	OnDelete(obj *T, finalStateUnknown bool)
}

// ResyncHandler is implemented by handlers that want periodic resyncs. When
// the informer has a resync period (Config.ResyncPeriod, or the factory's
// FactoryConfig.ResyncPeriod), a handler implementing it gets OnResync for every object in
// the cache once per period, in line with its other notifications.
//
// A resync is not a change and is never delivered as OnUpdate: it is a
// reminder of the current state, for handlers that reconcile against the
// outside world (a controller that re-checks objects whose effects may
// have drifted).
type ResyncHandler[T any] interface {
	OnResync(obj *T)
}

// resyncWanter lets a handler that has an OnResync method say that it does
// not want resyncs after all (HandlerFuncs without ResyncFunc), so that the
// informer does not queue notifications it would drop.
type resyncWanter interface {
	wantsResync() bool
}

// resyncHandlerOf returns h as a ResyncHandler if it wants resyncs.
func resyncHandlerOf[T any](h ResourceEventHandler[T]) ResyncHandler[T] {
	r, ok := h.(ResyncHandler[T])
	if !ok {
		return nil
	}
	if w, ok := h.(resyncWanter); ok && !w.wantsResync() {
		return nil
	}
	return r
}

// HandlerFuncs is a [ResourceEventHandler] (and a [ResyncHandler]) made of
// functions; a nil function ignores its notifications, and a nil ResyncFunc
// means no resyncs are queued for the handler at all.
//
//	reg, err := pods.AddEventHandler(informer.HandlerFuncs[corev1.Pod]{
//		AddFunc: func(p *corev1.Pod, _ bool) { queue.Add(key(p)) },
//		UpdateFunc: func(_, p *corev1.Pod) { queue.Add(key(p)) },
//		DeleteFunc: func(p *corev1.Pod, _ bool) { queue.Add(key(p)) },
//	})
type HandlerFuncs[T any] struct {
	// AddFunc is called by OnAdd.
	AddFunc func(obj *T, isInitialList bool)
	// UpdateFunc is called by OnUpdate.
	UpdateFunc func(oldObj, newObj *T)
	// DeleteFunc is called by OnDelete.
	DeleteFunc func(obj *T, finalStateUnknown bool)
	// ResyncFunc is called by OnResync; if nil, the handler gets no
	// resyncs.
	ResyncFunc func(obj *T)
}

// OnAdd calls AddFunc, if set.
func (f HandlerFuncs[T]) OnAdd(obj *T, isInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInitialList)
	}
}

// OnUpdate calls UpdateFunc, if set.
func (f HandlerFuncs[T]) OnUpdate(oldObj, newObj *T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc, if set.
func (f HandlerFuncs[T]) OnDelete(obj *T, finalStateUnknown bool) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj, finalStateUnknown)
	}
}

// OnResync calls ResyncFunc, if set.
func (f HandlerFuncs[T]) OnResync(obj *T) {
	if f.ResyncFunc != nil {
		f.ResyncFunc(obj)
	}
}

func (f HandlerFuncs[T]) wantsResync() bool { return f.ResyncFunc != nil }

// FilteringHandler passes on to Handler only the notifications about
// objects that Filter accepts, and turns transitions into adds and
// deletes, so that Handler sees the filtered set as if it were a
// collection of its own:
//
//   - OnAdd, OnDelete and OnResync are passed on if Filter accepts the
//     object;
//   - OnUpdate is passed on if Filter accepts both the old and the new
//     object; if it accepts only the new one, the object entered the set
//     and Handler gets OnAdd(new, false); if only the old one, the object
//     left the set and Handler gets OnDelete(old, false), with the last
//     state that passed the filter.
//
// Filter must be a pure function of the object (the same object always
// gives the same answer), or the transitions are wrong; it must not modify
// the object. A nil Filter accepts everything.
type FilteringHandler[T any] struct {
	// Filter says whether an object belongs to the set Handler sees.
	Filter func(obj *T) bool
	// Handler gets the filtered notifications. It gets resyncs if it
	// implements ResyncHandler (and, for HandlerFuncs, has a ResyncFunc).
	Handler ResourceEventHandler[T]
}

func (f FilteringHandler[T]) accepts(obj *T) bool { return f.Filter == nil || f.Filter(obj) }

// OnAdd passes the notification on if Filter accepts obj.
func (f FilteringHandler[T]) OnAdd(obj *T, isInitialList bool) {
	if f.accepts(obj) {
		f.Handler.OnAdd(obj, isInitialList)
	}
}

// OnUpdate passes on an update, an add or a delete, as the type describes.
func (f FilteringHandler[T]) OnUpdate(oldObj, newObj *T) {
	was, is := f.accepts(oldObj), f.accepts(newObj)
	switch {
	case was && is:
		f.Handler.OnUpdate(oldObj, newObj)
	case is:
		f.Handler.OnAdd(newObj, false)
	case was:
		f.Handler.OnDelete(oldObj, false)
	}
}

// OnDelete passes the notification on if Filter accepts obj.
func (f FilteringHandler[T]) OnDelete(obj *T, finalStateUnknown bool) {
	if f.accepts(obj) {
		f.Handler.OnDelete(obj, finalStateUnknown)
	}
}

// OnResync passes the notification on if Handler wants resyncs and Filter
// accepts obj.
func (f FilteringHandler[T]) OnResync(obj *T) {
	if r := resyncHandlerOf(f.Handler); r != nil && f.accepts(obj) {
		r.OnResync(obj)
	}
}

func (f FilteringHandler[T]) wantsResync() bool { return resyncHandlerOf(f.Handler) != nil }
