package storage

import (
	"context"
	"strings"
	"sync"
)

// Conversion describes a resource whose objects are stored as another
// resource's, as kube-apiserver stores events.k8s.io/v1 Events as core/v1
// Events and autoscaling/v1 HorizontalPodAutoscalers as v2 ones: both
// resources read and write the same objects, each in its own shape.
type Conversion struct {
	// Prefix is the key prefix of the resource's own keys
	// ("/events.k8s.io/events/"), StoragePrefix the prefix its objects
	// are stored under ("/core/events/").
	Prefix, StoragePrefix string
	// ToStorage converts an object of the resource to the stored shape and
	// FromStorage back. Both return new objects and never modify their
	// argument (stored objects are shared and read-only).
	ToStorage, FromStorage func(Object) Object
}

// Converting returns a view of inner through c: keys under c.Prefix map to
// keys under c.StoragePrefix, and objects are converted on the way in and
// out (watch events and the objects predicates see included).
// Resource versions, continue tokens and errors are inner's. Close does not
// close inner, which its owner closes.
func Converting(inner Interface, c Conversion) Interface {
	return &converting{inner: inner, c: c}
}

type converting struct {
	inner Interface
	c     Conversion
}

func (v *converting) key(k string) string {
	if rest, ok := strings.CutPrefix(k, v.c.Prefix); ok {
		return v.c.StoragePrefix + rest
	}
	return k
}

func (v *converting) from(o Object) Object {
	if o == nil {
		return nil
	}
	return v.c.FromStorage(o)
}

func (v *converting) predicate(p func(Object) bool) func(Object) bool {
	if p == nil {
		return nil
	}
	return func(o Object) bool { return p(v.from(o)) }
}

func (v *converting) Create(ctx context.Context, key string, obj Object) (Object, error) {
	out, err := v.inner.Create(ctx, v.key(key), v.c.ToStorage(obj))
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) Get(ctx context.Context, key string, opts ReadOptions) (Object, error) {
	out, err := v.inner.Get(ctx, v.key(key), opts)
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *Preconditions,
	tryUpdate func(current Object) (Object, error)) (Object, error) {
	out, err := v.inner.GuaranteedUpdate(ctx, v.key(key), allowCreate, pre, func(cur Object) (Object, error) {
		view := v.from(cur)
		next, err := tryUpdate(view)
		if err != nil || next == nil {
			return next, err
		}
		if next == view { // unchanged: a no-op for inner too
			return cur, nil
		}
		return v.c.ToStorage(next), nil
	})
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) Delete(ctx context.Context, key string, pre *Preconditions, validate func(current Object) error) (Object, error) {
	var check func(Object) error
	if validate != nil {
		check = func(cur Object) error { return validate(v.from(cur)) }
	}
	out, err := v.inner.Delete(ctx, v.key(key), pre, check)
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	opts.Predicate = v.predicate(opts.Predicate)
	res, err := v.inner.List(ctx, v.key(prefix), opts)
	if err != nil {
		return nil, err
	}
	out := *res
	out.Items = make([]Object, len(res.Items))
	for i, o := range res.Items {
		out.Items[i] = v.from(o)
	}
	return &out, nil
}

func (v *converting) Watch(ctx context.Context, prefix string, opts WatchOptions) (Watcher, error) {
	opts.Predicate = v.predicate(opts.Predicate)
	w, err := v.inner.Watch(ctx, v.key(prefix), opts)
	if err != nil {
		return nil, err
	}
	cw := &convertingWatcher{inner: w, out: make(chan Event), stop: make(chan struct{})}
	go cw.run(v)
	return cw, nil
}

func (v *converting) Revision() uint64 { return v.inner.Revision() }

func (v *converting) Close() error { return nil }

// convertingWatcher converts the events of a watch of the stored resource.
// Its goroutine ends when the inner watch's channel closes (Stop, the
// inner watch's context, or the store closing) or when Stop is called.
type convertingWatcher struct {
	inner Watcher
	out   chan Event
	stop  chan struct{}
	once  sync.Once
}

func (w *convertingWatcher) run(v *converting) {
	defer close(w.out)
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			ev.Object, ev.PrevObject = v.from(ev.Object), v.from(ev.PrevObject)
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			}
		case <-w.stop:
			return
		}
	}
}

func (w *convertingWatcher) ResultChan() <-chan Event { return w.out }

func (w *convertingWatcher) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.inner.Stop()
}
