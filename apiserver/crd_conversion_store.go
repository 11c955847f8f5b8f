package apiserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	metav1 "github.com/kapi-dev/kapi/api/meta/v1"
	"github.com/kapi-dev/kapi/apiserver/registry"
	"github.com/kapi-dev/kapi/apiserver/storage"
)

// storageOf is the storage res's objects are read and written through:
// the server's, seen through res.Convert when res has one (a custom
// resource converted by a webhook, crd_conversion.go).
func (s *Server) storageOf(res *registry.Resource) storage.Interface {
	if res.Convert == nil {
		return s.store
	}
	return &convertingStore{Interface: s.store, res: res}
}

// convertingStore is the storage of one served version of a custom
// resource whose objects are converted by Resource.Convert: objects come
// out in res.Version and go in in res.StorageVersion.
type convertingStore struct {
	storage.Interface
	res *registry.Resource
}

// served converts a stored object (nil stays nil) to the version served;
// a failure is kube-apiserver's answer for an object it cannot decode.
func (c *convertingStore) served(ctx context.Context, o storage.Object) (storage.Object, error) {
	if o == nil {
		return nil, nil
	}
	out, err := c.res.Convert(ctx, o, c.res.Version)
	if err != nil {
		return nil, &statusError{st: metav1.NewInternalError(fmt.Errorf(
			"StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%s: %w",
			storageKey(c.res, o.GetNamespace(), o.GetName()), o.GetResourceVersion(), err)), err: err}
	}
	return out, nil
}

// stored converts an object written to the storage version; a failure is
// the converter's error, a 500 without a reason.
func (c *convertingStore) stored(ctx context.Context, o storage.Object) (storage.Object, error) {
	version := c.res.StorageVersion
	if version == "" {
		return o, nil
	}
	out, err := c.res.Convert(ctx, o, version)
	if err != nil {
		return nil, &statusError{st: &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Message: err.Error(), Code: http.StatusInternalServerError}, err: err}
	}
	return out, nil
}

func (c *convertingStore) Get(ctx context.Context, key string, opts storage.ReadOptions) (storage.Object, error) {
	o, err := c.Interface.Get(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return c.served(ctx, o)
}

// List converts the items; a predicate (selectors) sees them converted, as
// kube-apiserver filters the objects of the version read.
func (c *convertingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (*storage.ListResult, error) {
	converted := map[storage.Object]storage.Object{}
	var failed error
	if p := opts.Predicate; p != nil {
		opts.Predicate = func(o storage.Object) bool {
			v, err := c.served(ctx, o)
			if err != nil {
				failed = cmp.Or(failed, err)
				return false
			}
			converted[o] = v
			return p(v)
		}
	}
	res, err := c.Interface.List(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	out := *res
	out.Items = make([]storage.Object, len(res.Items))
	for i, o := range res.Items {
		if v, ok := converted[o]; ok {
			out.Items[i] = v
		} else if out.Items[i], err = c.served(ctx, o); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

func (c *convertingStore) Create(ctx context.Context, key string, obj storage.Object) (storage.Object, error) {
	in, err := c.stored(ctx, obj)
	if err != nil {
		return nil, err
	}
	out, err := c.Interface.Create(ctx, key, in)
	if err != nil {
		return nil, err
	}
	return c.served(ctx, out)
}

func (c *convertingStore) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *storage.Preconditions,
	tryUpdate func(storage.Object) (storage.Object, error)) (storage.Object, error) {
	out, err := c.Interface.GuaranteedUpdate(ctx, key, allowCreate, pre, func(cur storage.Object) (storage.Object, error) {
		view, err := c.served(ctx, cur)
		if err != nil {
			return nil, err
		}
		next, err := tryUpdate(view)
		if err != nil || next == nil {
			return next, err
		}
		if cur != nil && next == view { // unchanged: a no-op for the storage too
			return cur, nil
		}
		return c.stored(ctx, next)
	})
	if err != nil {
		return nil, err
	}
	return c.served(ctx, out)
}

func (c *convertingStore) Delete(ctx context.Context, key string, pre *storage.Preconditions, validate func(storage.Object) error) (storage.Object, error) {
	var check func(storage.Object) error
	if validate != nil {
		check = func(cur storage.Object) error {
			view, err := c.served(ctx, cur)
			if err != nil {
				return err
			}
			return validate(view)
		}
	}
	out, err := c.Interface.Delete(ctx, key, pre, check)
	if err != nil {
		return nil, err
	}
	return c.served(ctx, out)
}

// Watch converts the events; a predicate (selectors) sees the objects
// converted (an object that cannot be converted passes it, so that the
// failure ends the watch).
func (c *convertingStore) Watch(ctx context.Context, prefix string, opts storage.WatchOptions) (storage.Watcher, error) {
	if p := opts.Predicate; p != nil {
		opts.Predicate = func(o storage.Object) bool {
			v, err := c.served(ctx, o)
			return err != nil || p(v)
		}
	}
	w, err := c.Interface.Watch(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	cw := &convertedWatch{inner: w, out: make(chan storage.Event), stop: make(chan struct{})}
	go cw.run(ctx, c)
	return cw, nil
}

// convertedWatch converts the events of a watch. Its goroutine ends when
// the inner watch's channel closes (Stop, the watch's context, the store
// closing), when Stop is called, or after a conversion fails (a Failed
// event carrying the Status).
type convertedWatch struct {
	inner storage.Watcher
	out   chan storage.Event
	stop  chan struct{}
	once  sync.Once
}

func (w *convertedWatch) run(ctx context.Context, c *convertingStore) {
	defer close(w.out)
	in := w.inner.ResultChan()
	for {
		var ev storage.Event
		select {
		case e, ok := <-in:
			if !ok {
				return
			}
			ev = e
		case <-w.stop:
			return
		}
		if ev.Type != storage.Bookmark && ev.Type != storage.Failed {
			obj, err := c.served(ctx, ev.Object)
			var prev storage.Object
			if err == nil {
				prev, err = c.served(ctx, ev.PrevObject)
			}
			if err != nil {
				ev = storage.Event{Type: storage.Failed, Err: err}
			} else {
				ev.Object, ev.PrevObject = obj, prev
			}
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
		if ev.Type == storage.Failed {
			w.inner.Stop()
			return
		}
	}
}

func (w *convertedWatch) ResultChan() <-chan storage.Event { return w.out }

func (w *convertedWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.inner.Stop()
}

// watchFailureStatus is the Status an ERROR event ending a watch carries
// for err, nil when the stream just ends.
func watchFailureStatus(err error) *metav1.Status {
	if errors.Is(err, storage.ErrExpired) {
		return metav1.NewWatchExpired()
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.st
	}
	return nil
}
