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

// Converting returns inner seen through c: a key under c.Prefix maps to
// the key under c.StoragePrefix, and the objects read or written under it
// are converted on the way in and out (watch events and the objects
// predicates see included). Every other key is inner's, unconverted: a
// watch or list of "/" sees the objects as stored. Resource versions,
// continue tokens and errors are inner's; Close closes inner.
func Converting(inner Interface, c Conversion) Interface {
	return &converting{inner: inner, c: c}
}

type converting struct {
	inner Interface
	c     Conversion
}

// key maps k to the stored key, and reports whether k is the converted
// resource's.
func (v *converting) key(k string) (string, bool) {
	if rest, ok := strings.CutPrefix(k, v.c.Prefix); ok {
		return v.c.StoragePrefix + rest, true
	}
	return k, false
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
	k, ok := v.key(key)
	if !ok {
		return v.inner.Create(ctx, key, obj)
	}
	out, err := v.inner.Create(ctx, k, v.c.ToStorage(obj))
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) Get(ctx context.Context, key string, opts ReadOptions) (Object, error) {
	k, ok := v.key(key)
	if !ok {
		return v.inner.Get(ctx, key, opts)
	}
	out, err := v.inner.Get(ctx, k, opts)
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *Preconditions,
	tryUpdate func(current Object) (Object, error)) (Object, error) {
	k, ok := v.key(key)
	if !ok {
		return v.inner.GuaranteedUpdate(ctx, key, allowCreate, pre, tryUpdate)
	}
	out, err := v.inner.GuaranteedUpdate(ctx, k, allowCreate, pre, func(cur Object) (Object, error) {
		if cur == nil { // allowCreate on an empty key
			next, err := tryUpdate(nil)
			if err != nil || next == nil {
				return next, err
			}
			return v.c.ToStorage(next), nil
		}
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
	k, ok := v.key(key)
	if !ok {
		return v.inner.Delete(ctx, key, pre, validate)
	}
	var check func(Object) error
	if validate != nil {
		check = func(cur Object) error { return validate(v.from(cur)) }
	}
	out, err := v.inner.Delete(ctx, k, pre, check)
	if err != nil {
		return nil, err
	}
	return v.from(out), nil
}

func (v *converting) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	k, ok := v.key(prefix)
	if !ok {
		return v.inner.List(ctx, prefix, opts)
	}
	opts.Predicate = v.predicate(opts.Predicate)
	res, err := v.inner.List(ctx, k, opts)
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
	k, ok := v.key(prefix)
	if !ok {
		return v.inner.Watch(ctx, prefix, opts)
	}
	opts.Predicate = v.predicate(opts.Predicate)
	w, err := v.inner.Watch(ctx, k, opts)
	if err != nil {
		return nil, err
	}
	cw := &convertingWatcher{inner: w, out: make(chan Event), stop: make(chan struct{})}
	go cw.run(v)
	return cw, nil
}

func (v *converting) Revision() uint64 { return v.inner.Revision() }

func (v *converting) Close() error { return v.inner.Close() }

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
