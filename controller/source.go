package controller

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/client"
	"github.com/kapi-dev/kapi/informer"
)

// source is a watched kind: it registers a handler that enqueues requests
// on its informer, and unregisters it.
type source struct {
	register func(enqueue func(Request)) (unregister func(), sync informer.Syncer, err error)
}

// watch makes the source of an informer whose notifications map to
// requests through toRequests, filtered by predicates.
func watch[O any](inf informer.Informer[O], toRequests func(*O) []Request, preds []Predicate[O], resync bool) source {
	ps := all[O](preds)
	return source{register: func(enqueue func(Request)) (func(), informer.Syncer, error) {
		add := func(obj *O) {
			for _, r := range toRequests(obj) {
				enqueue(r)
			}
		}
		h := informer.HandlerFuncs[O]{
			AddFunc: func(obj *O, _ bool) {
				if ps.create(obj) {
					add(obj)
				}
			},
			UpdateFunc: func(old, new *O) {
				if !ps.update(old, new) {
					return
				}
				// The old state's requests too (an owner or mapping may have
				// changed), each once: enqueued twice, a request a worker took
				// in between would be reconciled twice.
				reqs := toRequests(new)
				for _, r := range toRequests(old) {
					if !slices.Contains(reqs, r) {
						reqs = append(reqs, r)
					}
				}
				for _, r := range reqs {
					enqueue(r)
				}
			},
			DeleteFunc: func(obj *O, _ bool) {
				if ps.delete(obj) {
					add(obj)
				}
			},
		}
		if resync {
			h.ResyncFunc = add
		}
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return nil, nil, fmt.Errorf("controller: watching %s: %w", inf.Name(), err)
		}
		return func() {
			_ = inf.RemoveEventHandler(reg)
			<-reg.Done()
		}, reg, nil
	}}
}

// requestFor is the request to reconcile obj itself.
func requestFor[T any, PT client.ObjectPtr[T]](obj *T) []Request {
	return []Request{{Namespace: PT(obj).GetNamespace(), Name: PT(obj).GetName()}}
}

// Owns makes ctl reconcile the controlling owner of objects of type O: when
// one is created, changes (for an update, the owner before and after) or is
// deleted, and predicates let the notification through, the owner named by
// its ownerReference with controller: true is enqueued if that owner is of
// ctl's primary kind (same API group and kind as the scheme of the factory's
// client gives for T; the version is not compared, as an owner may be
// referred to by any version of its group). A namespaced owner is in the
// object's namespace; a cluster-scoped one has none. Objects without such a
// controller reference enqueue nothing.
//
// Call Owns before Run, or while it runs (the informer for O is then
// started with Run's context); once Run has returned it has no effect.
// It panics if T is not in the client's scheme: owner references could not
// be matched.
func Owns[O any, PO client.ObjectPtr[O], T any](ctl *Controller[T], predicates ...Predicate[O]) {
	k := ctl.kind
	if k.Kind == "" {
		panic(fmt.Sprintf("controller: Owns: the primary type of %s is not in the client's scheme", ctl.name))
	}
	owner := func(obj *O) []Request {
		for _, ref := range PO(obj).GetOwnerReferences() {
			if ref.Controller == nil || !*ref.Controller {
				continue
			}
			group, _, ok := strings.Cut(ref.APIVersion, "/")
			if !ok {
				group = "" // "v1": the core group
			}
			if group != k.Group || ref.Kind != k.Kind {
				return nil
			}
			if !k.Namespaced {
				return []Request{{Name: ref.Name}}
			}
			return []Request{{Namespace: PO(obj).GetNamespace(), Name: ref.Name}}
		}
		return nil
	}
	ctl.addSource(watch(informer.For[O, PO](ctl.factory), owner, predicates, false))
}

// Watches makes ctl reconcile the requests that toRequests maps objects of
// type O to: when one is created, changes (for an update, the requests of
// the old and the new state) or is deleted, and predicates let the
// notification through. toRequests gets the informer's shared object: it
// must not modify it.
//
// Call Watches before Run, or while it runs (the informer for O is then
// started with Run's context); once Run has returned it has no effect.
func Watches[O any, PO client.ObjectPtr[O], T any](ctl *Controller[T], toRequests func(*O) []Request, predicates ...Predicate[O]) {
	ctl.addSource(watch(informer.For[O, PO](ctl.factory), toRequests, predicates, false))
}
