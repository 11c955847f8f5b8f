package apiserver

import (
	"context"
	"time"

	"github.com/kapi-dev/kapi/apiserver/storage"
)

// followStore runs the loop of a controller the server owns: in a goroutine
// stopped by Close, it watches the store under prefix from revision rev and
// calls handle for each event. When a watch cannot start (its revision was
// compacted, or the store fails), it calls resync to see to the current
// state, waits retry so as not to spin on a failing store, and watches again
// from the revision it had before resync began, so that no change is missed.
// A store still at revision 0 has no revision to watch after (0 means
// "now" to a watch, which would miss what is written before the goroutine
// watches): the first watch then starts with the objects stored, as Added
// events, and handle must take them as such.
func (s *Server) followStore(prefix string, rev uint64, retry time.Duration, resync func(context.Context), handle func(context.Context, storage.Event)) {
	ctx := s.ctx
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for ctx.Err() == nil {
			w, err := s.store.Watch(ctx, prefix, storage.WatchOptions{ResourceVersion: rev, SendInitialEvents: rev == 0})
			if err != nil {
				rev = s.store.Revision()
				resync(ctx)
				select {
				case <-ctx.Done():
				case <-time.After(retry):
				}
				continue
			}
			rev = drainWatch(ctx, w, rev, handle)
			w.Stop()
		}
	}()
}

// drainWatch calls handle for each event of w until w ends or ctx is done,
// and returns the last revision seen.
func drainWatch(ctx context.Context, w storage.Watcher, rev uint64, handle func(context.Context, storage.Event)) uint64 {
	for {
		select {
		case <-ctx.Done():
			return rev
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == storage.Failed {
				return rev
			}
			rev = max(rev, ev.Revision)
			handle(ctx, ev)
		}
	}
}
