package storage

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
)

// shifted is an Etcd store seen with its revisions lowered by base, for
// the tests written for a store whose first write is revision 1: a new
// etcd cluster is at revision 1 before any write (base 1). Every revision
// that goes in (read options, preconditions, watch starts, compaction) is
// raised by base and every one that comes out (resourceVersions, events,
// list and error revisions) lowered; continue tokens and error messages
// pass unchanged.
type shifted struct {
	*Etcd
	base uint64
}

func (s *shifted) down(obj Object) Object {
	if obj == nil {
		return nil
	}
	if v, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err == nil && v >= s.base {
		obj.SetResourceVersion(strconv.FormatUint(v-s.base, 10))
	}
	return obj
}

func (s *shifted) up(obj Object) {
	if obj == nil {
		return
	}
	if v, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64); err == nil {
		obj.SetResourceVersion(strconv.FormatUint(v+s.base, 10))
	}
}

// revisionMessage are the messages that quote revisions (precondition
// conflicts, too large resource versions), whose numbers are lowered too.
var revisionMessage = regexp.MustCompile(`^(the ResourceVersion in the precondition|Too large resource version)`)

var number = regexp.MustCompile(`[0-9]+`)

func (s *shifted) err(err error) error {
	var se *Error
	if !errors.As(err, &se) {
		return err
	}
	c := *se
	if c.ResourceVersion >= s.base {
		c.ResourceVersion -= s.base
	}
	if revisionMessage.MatchString(c.Message) {
		c.Message = number.ReplaceAllStringFunc(c.Message, func(n string) string {
			v, _ := strconv.ParseUint(n, 10, 64)
			return strconv.FormatUint(v-min(v, s.base), 10)
		})
	}
	return &c
}

func (s *shifted) read(o ReadOptions) ReadOptions {
	if o.ResourceVersion > 0 {
		o.ResourceVersion += s.base
	}
	return o
}

func (s *shifted) pre(p *Preconditions) *Preconditions {
	if p == nil || p.ResourceVersion == nil {
		return p
	}
	c := *p
	if v, err := strconv.ParseUint(*p.ResourceVersion, 10, 64); err == nil {
		r := strconv.FormatUint(v+s.base, 10)
		c.ResourceVersion = &r
	}
	return &c
}

// predicate runs pred on objects seen lowered.
func (s *shifted) predicate(pred func(Object) bool) func(Object) bool {
	if pred == nil {
		return nil
	}
	return func(o Object) bool {
		s.down(o)
		defer s.up(o)
		return pred(o)
	}
}

func (s *shifted) Revision() uint64 { return s.Etcd.Revision() - s.base }

func (s *shifted) Compact(rev uint64) { s.Etcd.Compact(rev + s.base) }

func (s *shifted) Create(ctx context.Context, key string, obj Object) (Object, error) {
	out, err := s.Etcd.Create(ctx, key, obj)
	return s.down(out), s.err(err)
}

func (s *shifted) Get(ctx context.Context, key string, opts ReadOptions) (Object, error) {
	out, err := s.Etcd.Get(ctx, key, s.read(opts))
	return s.down(out), s.err(err)
}

func (s *shifted) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *Preconditions,
	tryUpdate func(current Object) (Object, error)) (Object, error) {
	out, err := s.Etcd.GuaranteedUpdate(ctx, key, allowCreate, s.pre(pre), func(cur Object) (Object, error) {
		c := s.down(cur)
		obj, err := tryUpdate(c)
		if err == nil && obj != nil && !isNilObject(obj) && !sameObject(obj, c) {
			s.up(obj)
		}
		s.up(c) // back as the store read it: it compares obj with it
		return obj, err
	})
	return s.down(out), s.err(err)
}

func (s *shifted) Delete(ctx context.Context, key string, pre *Preconditions, validate func(current Object) error) (Object, error) {
	out, err := s.Etcd.Delete(ctx, key, s.pre(pre), func(cur Object) error {
		if validate == nil {
			return nil
		}
		c := s.down(cur)
		defer s.up(c)
		return validate(c)
	})
	return s.down(out), s.err(err)
}

func (s *shifted) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	opts.ReadOptions = s.read(opts.ReadOptions)
	opts.Predicate = s.predicate(opts.Predicate)
	res, err := s.Etcd.List(ctx, prefix, opts)
	if err != nil {
		return nil, s.err(err)
	}
	for _, o := range res.Items {
		s.down(o)
	}
	res.Revision -= s.base
	return res, nil
}

func (s *shifted) Watch(ctx context.Context, prefix string, opts WatchOptions) (Watcher, error) {
	if opts.ResourceVersion > 0 {
		opts.ResourceVersion += s.base
	}
	opts.Predicate = s.predicate(opts.Predicate)
	w, err := s.Etcd.Watch(ctx, prefix, opts)
	if err != nil {
		return nil, s.err(err)
	}
	sw := &shiftedWatcher{w: w, out: make(chan Event), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		defer close(sw.out)
		for ev := range w.ResultChan() {
			s.down(ev.Object)
			s.down(ev.PrevObject)
			if ev.Revision >= s.base {
				ev.Revision -= s.base
			}
			ev.Err = s.err(ev.Err)
			select {
			case sw.out <- ev:
			case <-sw.stop:
				return
			}
		}
	}()
	return sw, nil
}

type shiftedWatcher struct {
	w    Watcher
	out  chan Event
	stop chan struct{}
	once sync.Once
	done chan struct{}
}

func (w *shiftedWatcher) ResultChan() <-chan Event { return w.out }

func (w *shiftedWatcher) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.w.Stop()
	<-w.done
}
