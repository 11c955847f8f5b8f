package storage

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/btree"
)

// Defaults of MemoryConfig. Each is the value used when the field is zero.
const (
	// DefaultHistoryWindow is how long events stay replayable: five minutes,
	// the compaction interval kube-apiserver asks of etcd, so watch resumption
	// and continue tokens behave as on a real cluster.
	DefaultHistoryWindow = 5 * time.Minute
	// DefaultMaxEvents caps the event log so a write burst cannot grow memory
	// without bound inside one history window.
	DefaultMaxEvents = 100_000
	// DefaultTooLargeWait is how long a read for a future revision waits for
	// writes to catch up: the 3s kube-apiserver's watch cache blocks for.
	DefaultTooLargeWait = 3 * time.Second
	// DefaultWatchBuffer is how many undelivered events a watcher may hold
	// before it is ended as too slow; enough to absorb bursts, small enough
	// that hundreds of watchers stay cheap.
	DefaultWatchBuffer = 1000
)

// ErrClosed is returned by every Memory method called after Close.
var ErrClosed = errors.New("storage: store is closed")

// ObjectCopier is implemented by objects that can deep-copy themselves as an
// Object. Memory uses it (unless MemoryConfig.Copy is set) to build the last
// state a Delete returns.
type ObjectCopier interface {
	DeepCopyObject() Object
}

// MemoryConfig configures a Memory store. The zero value is usable: every
// field has a documented default.
type MemoryConfig struct {
	// HistoryWindow is how long past revisions stay readable (Exact reads,
	// continue tokens, watches resuming from a revision). Default
	// DefaultHistoryWindow; negative disables compaction by age.
	HistoryWindow time.Duration
	// MaxEvents caps the number of retained events (one per revision); the
	// oldest are compacted as new ones arrive. Default DefaultMaxEvents;
	// negative means no cap.
	MaxEvents int
	// CompactInterval is how often the background compactor drops events
	// older than HistoryWindow. Default HistoryWindow/10 (at least 10ms);
	// negative disables the background compactor (Compact still works).
	CompactInterval time.Duration
	// TooLargeWait bounds how long a read at a future revision (NotOlderThan,
	// Exact, or a watch with initial events) waits for writes to catch up
	// before failing with ErrTooLargeResourceVersion. Default
	// DefaultTooLargeWait; negative fails at once.
	TooLargeWait time.Duration
	// WatchBuffer is how many undelivered events a watcher may hold; one
	// that falls further behind is ended with a Failed event wrapping
	// ErrTooSlow. Default DefaultWatchBuffer.
	WatchBuffer int
	// Now is the clock that timestamps events for compaction by age.
	// Default time.Now; tests inject a fake clock.
	Now func() time.Time
	// Copy deep-copies a stored object. Delete uses it to return the last
	// state stamped with the deletion's revision without touching the shared
	// stored object. Default: the object's DeepCopyObject method (see
	// ObjectCopier) or, failing that, its DeepCopy method when it takes no
	// argument and returns an Object (as every kapi API type's does); a
	// Delete of an object with neither fails with CodeInvalidObject.
	Copy func(Object) Object

	// afterCompact, if set, is called by the background compactor after each
	// pass (tests use it to synchronise without sleeping).
	afterCompact func()
}

// Memory is an in-process Interface: an MVCC store holding, for every key,
// its versions inside the history window, plus a log of every event of that
// window from which watches are served.
//
// All methods are safe for concurrent use. Writes are serialised by one lock
// and never wait for watchers; reads of the latest or of a past revision
// share a read lock; watchers read the event log without locks.
type Memory struct {
	cfg  MemoryConfig
	now  func() time.Time
	copy func(Object) Object

	// mu guards index, keys, compacted, closed, and writes to the event log.
	mu        sync.RWMutex
	keys      map[string]*entry
	index     *btree.BTreeG[item]
	compacted uint64
	closed    bool

	rev          atomic.Uint64 // current revision, published after each write (after it is durable, with a journal)
	next         uint64        // the last revision assigned to a write; guarded by mu
	compactedRev atomic.Uint64 // mirror of compacted for lock-free readers
	log          atomic.Pointer[logView]
	gen          atomic.Pointer[chan struct{}] // closed (and replaced) after the revision advances

	// Watchers of one prefix share a group the notifier wakes only when a
	// write under that prefix happens (see notify.go).
	groupsMu sync.Mutex
	groups   map[string]*watchGroup
	groupIdx atomic.Pointer[groupIndex]

	kick    chan struct{} // writers → notifier, capacity 1, coalescing
	done    chan struct{} // closed by Close
	wg      sync.WaitGroup
	macKey  [32]byte
	closeMu sync.Mutex
	copiers sync.Map // reflect.Type → func(Object) Object, nil if the type cannot be copied

	// journal, when set (OpenBolt), makes writes durable: see durable.go.
	journal journal
	pubGen  atomic.Pointer[chan struct{}] // closed (and replaced) when the journal publishes revisions
	failed  atomic.Pointer[error]         // the journal's failure; every write fails after it
	codec   Codec                         // encodes objects for the journal
}

var _ Interface = (*Memory)(nil)

// NewMemory returns an empty store at revision 0 and starts its background
// goroutines (a notifier that wakes watchers, and the compactor unless
// disabled); Close stops them.
func NewMemory(cfg MemoryConfig) *Memory {
	m := newMemory(cfg)
	m.start()
	return m
}

// newMemory returns an empty store with its defaults applied and no
// goroutine started (start starts them), so that OpenBolt can load it first.
func newMemory(cfg MemoryConfig) *Memory {
	if cfg.HistoryWindow == 0 {
		cfg.HistoryWindow = DefaultHistoryWindow
	}
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	if cfg.CompactInterval == 0 {
		cfg.CompactInterval = max(cfg.HistoryWindow/10, 10*time.Millisecond)
	}
	if cfg.TooLargeWait == 0 {
		cfg.TooLargeWait = DefaultTooLargeWait
	}
	if cfg.WatchBuffer <= 0 {
		cfg.WatchBuffer = DefaultWatchBuffer
	}
	m := &Memory{
		cfg:   cfg,
		now:   cfg.Now,
		copy:  cfg.Copy,
		keys:  make(map[string]*entry),
		index: btree.NewG(32, itemLess),
		kick:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.copy == nil {
		m.copy = m.defaultCopy
	}
	if _, err := rand.Read(m.macKey[:]); err != nil {
		panic(fmt.Sprintf("storage: reading random key: %v", err))
	}
	m.log.Store(&logView{chunks: []*logChunk{new(logChunk)}})
	g := make(chan struct{})
	m.gen.Store(&g)
	pg := make(chan struct{})
	m.pubGen.Store(&pg)
	m.groups = make(map[string]*watchGroup)
	m.groupIdx.Store(&groupIndex{})
	return m
}

// start starts the background goroutines: the notifier that wakes
// watchers and, unless disabled, the compactor.
func (m *Memory) start() {
	m.wg.Add(1)
	go m.notifyLoop(m.rev.Load())
	if m.cfg.CompactInterval > 0 && m.cfg.HistoryWindow > 0 {
		m.wg.Add(1)
		go m.compactLoop()
	}
}

// Revision returns the current revision (0 if nothing was ever written).
func (m *Memory) Revision() uint64 { return m.rev.Load() }

// CompactedRevision returns the revision history was compacted to (0 if
// never): the events up to it are dropped, the state at it is kept (as etcd
// keeps its compaction revision readable). Exact reads, continue tokens and
// watches need a revision at or above it.
func (m *Memory) CompactedRevision() uint64 { return m.compactedRev.Load() }

// Close stops the background goroutines and ends every watch (their channels
// are closed), then waits for all of them to exit. Every method called after
// Close fails with ErrClosed. Close is idempotent.
func (m *Memory) Close() error {
	m.closeMu.Lock()
	defer m.closeMu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.done)
	m.mu.Unlock()
	m.wg.Wait()
	if m.journal != nil {
		return m.journal.close()
	}
	return nil
}

func (m *Memory) isClosed() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// Create stores obj under key at a new revision and sets obj's
// resourceVersion to it. It fails with ErrAlreadyExists if key holds an
// object.
func (m *Memory) Create(ctx context.Context, key string, obj Object) (Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if obj == nil || isNilObject(obj) {
		return nil, &Error{Code: CodeInvalidObject, Key: key, Message: "object is nil"}
	}
	data, err := m.encode(key, obj)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if err := m.writableLocked(); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	e := m.keys[key]
	if e != nil && e.live() != nil {
		rev := e.last().rev
		m.mu.Unlock()
		// The object that is in the way must be durable before a client
		// is told about it.
		if err := m.awaitDurable(rev); err != nil {
			return nil, err
		}
		return nil, &Error{Code: CodeAlreadyExists, Key: key, ResourceVersion: rev}
	}
	if err := m.commitAndUnlock(key, e, obj, nil, false, data); err != nil {
		return nil, err
	}
	return obj, nil
}

// Get returns the object under key at the revision opts selects. It fails with
// ErrNotFound if there is none at that revision, ErrExpired if an Exact
// revision is below CompactedRevision, and ErrTooLargeResourceVersion if a
// future revision did not arrive within TooLargeWait.
func (m *Memory) Get(ctx context.Context, key string, opts ReadOptions) (Object, error) {
	rev, exact, err := m.resolveRead(ctx, opts)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	if !exact {
		rev = m.rev.Load()
	} else if rev < m.compacted {
		c := m.compacted
		m.mu.RUnlock()
		return nil, expiredError(rev, c)
	}
	var obj Object
	if e := m.keys[key]; e != nil {
		obj = e.at(rev)
	}
	m.mu.RUnlock()
	if obj == nil {
		return nil, &Error{Code: CodeNotFound, Key: key, ResourceVersion: rev}
	}
	return obj, nil
}

// GuaranteedUpdate implements Interface. tryUpdate runs without any store
// lock held, so it may call the store; it runs again (with the then current
// object) each time a concurrent write to key wins the race, and never sees
// the same stale object twice. It must return either current unchanged (a
// no-op) or a new object that is not shared with anything else the store holds.
func (m *Memory) GuaranteedUpdate(ctx context.Context, key string, allowCreate bool, pre *Preconditions,
	tryUpdate func(current Object) (Object, error)) (Object, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur, seen, err := m.current(key)
		if err != nil {
			return nil, err
		}
		obj, noop, err := applyUpdate(key, allowCreate, pre, cur, m.rev.Load(), seen, tryUpdate)
		if err != nil || noop {
			return obj, err
		}
		data, err := m.encode(key, obj)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		if err := m.writableLocked(); err != nil {
			m.mu.Unlock()
			return nil, err
		}
		e := m.keys[key]
		if e.lastRev() != seen {
			m.mu.Unlock()
			continue // lost the race: retry with the fresh object
		}
		if err := m.commitAndUnlock(key, e, obj, cur, false, data); err != nil {
			return nil, err
		}
		return obj, nil
	}
}

// Delete implements Interface. validate runs without any store lock held and
// runs again if a concurrent write to key wins the race. The returned object
// is a copy (see MemoryConfig.Copy) of the last state with the deletion's
// revision as resourceVersion; the Deleted watch event carries the same copy.
func (m *Memory) Delete(ctx context.Context, key string, pre *Preconditions, validate func(current Object) error) (Object, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur, seen, err := m.current(key)
		if err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, &Error{Code: CodeNotFound, Key: key, ResourceVersion: m.rev.Load()}
		}
		if err := checkPreconditions(key, pre, cur); err != nil {
			return nil, err
		}
		if validate != nil {
			if err := validate(cur); err != nil {
				return nil, err
			}
		}
		last := m.copy(cur)
		if last == nil || isNilObject(last) || sameObject(last, cur) {
			return nil, &Error{Code: CodeInvalidObject, Key: key,
				Message: fmt.Sprintf("cannot copy an object of type %T: set MemoryConfig.Copy", cur)}
		}
		m.mu.Lock()
		if err := m.writableLocked(); err != nil {
			m.mu.Unlock()
			return nil, err
		}
		e := m.keys[key]
		if e.lastRev() != seen {
			m.mu.Unlock()
			continue
		}
		if err := m.commitAndUnlock(key, e, last, cur, true, nil); err != nil {
			return nil, err
		}
		return last, nil
	}
}

// applyUpdate is one try of a GuaranteedUpdate on cur (nil if the key is
// empty): the checks, then tryUpdate. It returns the object to store, or
// cur with noop set when tryUpdate returned it unchanged, or the error that
// ends the update. rev is the revision a NotFound error carries, seen the
// one of cur's key a conflict carries.
func applyUpdate(key string, allowCreate bool, pre *Preconditions, cur Object, rev, seen uint64,
	tryUpdate func(current Object) (Object, error)) (obj Object, noop bool, err error) {
	if cur == nil && !allowCreate {
		return nil, false, &Error{Code: CodeNotFound, Key: key, ResourceVersion: rev}
	}
	if err := checkPreconditions(key, pre, cur); err != nil {
		return nil, false, err
	}
	if obj, err = tryUpdate(cur); err != nil {
		return nil, false, err
	}
	if obj == nil || isNilObject(obj) {
		return nil, false, &Error{Code: CodeInvalidObject, Key: key, Message: "update returned no object"}
	}
	if cur != nil && sameObject(obj, cur) {
		return cur, true, nil
	}
	if rv := obj.GetResourceVersion(); rv != "" && (cur == nil || rv != cur.GetResourceVersion()) {
		return nil, false, &Error{Code: CodeConflict, Key: key, ResourceVersion: seen,
			Message: "the object has been modified; please apply your changes to the latest version and try again"}
	}
	return obj, false, nil
}

// current returns the live object under key (nil if none) and the revision of
// the key's newest version (0 if the key has no history), which a write
// compares to detect a concurrent change. With a journal, it waits until
// that version is durable: a write never decides on a state a crash could
// take back.
func (m *Memory) current(key string) (Object, uint64, error) {
	for {
		m.mu.RLock()
		if m.closed {
			m.mu.RUnlock()
			return nil, 0, ErrClosed
		}
		e := m.keys[key]
		obj, seen := e.live(), e.lastRev()
		m.mu.RUnlock()
		if seen <= m.rev.Load() {
			return obj, seen, nil
		}
		if err := m.awaitDurable(seen); err != nil {
			return nil, 0, err
		}
	}
}

// writableLocked reports why the store takes no write, if it does not:
// it is closed, or its journal failed. m.mu must be held.
func (m *Memory) writableLocked() error {
	if m.closed {
		return ErrClosed
	}
	if f := m.failed.Load(); f != nil {
		return *f
	}
	return nil
}

// commitAndUnlock commits a write (see commitLocked), releases m.mu and,
// with a journal, waits until the write is durable: only then is it
// published to readers and watchers and acknowledged to the caller.
func (m *Memory) commitAndUnlock(key string, e *entry, obj, prev Object, deleted bool, data []byte) error {
	at := m.now().UnixNano()
	rev := m.commitLocked(key, e, obj, prev, deleted, at)
	if m.journal == nil {
		m.rev.Store(rev)
		m.mu.Unlock()
		m.notify()
		return nil
	}
	m.journal.append(journalRecord{rev: rev, key: key, deleted: deleted, data: data, at: at})
	m.mu.Unlock()
	return m.awaitDurable(rev)
}

// commitLocked records a write at the next revision and returns it: obj
// becomes the newest version of key (a tombstone if deleted, in which case
// obj is the last state the event carries), the event is appended to the
// log (timestamped at, Unix nanoseconds) and history over the count cap is
// compacted. The caller publishes the revision. m.mu must be held for
// writing; e is the key's entry or nil.
func (m *Memory) commitLocked(key string, e *entry, obj, prev Object, deleted bool, at int64) uint64 {
	m.next++
	rev := m.next
	obj.SetResourceVersion(strconv.FormatUint(rev, 10))
	stored := obj
	if deleted {
		stored = nil
	}
	if e == nil {
		e = newEntry(key, rev, stored)
		m.keys[key] = e
		m.index.ReplaceOrInsert(item{key: key, e: e})
	} else {
		e.versions = append(e.versions, version{rev: rev, obj: stored})
	}
	m.appendEventLocked(rev, logEvent{key: key, obj: obj, prev: prev, deleted: deleted, at: at})
	if m.cfg.MaxEvents > 0 && rev-m.compacted > uint64(m.cfg.MaxEvents) {
		// Never past the published revision (with a journal, the writes
		// not yet durable are not).
		m.compactLocked(min(rev-uint64(m.cfg.MaxEvents), m.rev.Load()))
	}
	return rev
}

// waitForRevision blocks until the store reaches rev, for at most
// TooLargeWait; it fails with ErrTooLargeResourceVersion (carrying the current
// revision) after that.
func (m *Memory) waitForRevision(ctx context.Context, rev uint64) error {
	if m.rev.Load() >= rev {
		return nil
	}
	if m.cfg.TooLargeWait > 0 {
		timer := time.NewTimer(m.cfg.TooLargeWait)
		defer timer.Stop()
	wait:
		for {
			g := m.gen.Load()
			if m.rev.Load() >= rev {
				return nil
			}
			select {
			case <-*g:
			case <-timer.C:
				break wait
			case <-ctx.Done():
				return ctx.Err()
			case <-m.done:
				return ErrClosed
			}
		}
	}
	cur := m.rev.Load()
	if cur >= rev {
		return nil
	}
	return &Error{Code: CodeTooLargeResourceVersion, ResourceVersion: cur,
		Message: fmt.Sprintf("Too large resource version: %d, current: %d", rev, cur)}
}

// resolveRead applies opts: it returns the revision to read at and whether it
// is exact (then the caller must check it against the compacted revision
// under the lock), or 0 and false for the latest state, waiting first if opts
// names a revision the store has not reached.
func (m *Memory) resolveRead(ctx context.Context, opts ReadOptions) (uint64, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	if m.isClosed() {
		return 0, false, ErrClosed
	}
	switch opts.Match {
	case Latest, Any:
		return 0, false, nil
	case NotOlderThan:
		return 0, false, m.waitForRevision(ctx, opts.ResourceVersion)
	case Exact:
		return opts.ResourceVersion, true, m.waitForRevision(ctx, opts.ResourceVersion)
	default:
		return 0, false, &Error{Code: CodeInvalidObject, Message: fmt.Sprintf("unknown ReadMatch %d", opts.Match)}
	}
}

func expiredError(rev, compacted uint64) *Error {
	return &Error{Code: CodeExpired, ResourceVersion: rev,
		Message: fmt.Sprintf("resource version %d is too old (history starts at %d)", rev, compacted)}
}

// checkPreconditions reports ErrConflict if pre does not hold on cur (nil
// when the key is empty, which matches no UID or resourceVersion).
func checkPreconditions(key string, pre *Preconditions, cur Object) error {
	if pre == nil {
		return nil
	}
	var uid, rv string
	var rev uint64
	if cur != nil {
		uid, rv = string(cur.GetUID()), cur.GetResourceVersion()
		rev, _ = strconv.ParseUint(rv, 10, 64)
	}
	if pre.UID != nil && string(*pre.UID) != uid {
		return &Error{Code: CodeConflict, Key: key, ResourceVersion: rev, Message: fmt.Sprintf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			*pre.UID, uid)}
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != rv {
		return &Error{Code: CodeConflict, Key: key, ResourceVersion: rev, Message: fmt.Sprintf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			*pre.ResourceVersion, rv)}
	}
	return nil
}

// sameObject reports whether a and b are the same object (pointer equality
// for pointer kinds), without panicking on uncomparable dynamic types.
func sameObject(a, b Object) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// isNilObject reports whether obj is an interface holding a nil pointer.
func isNilObject(obj Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// defaultCopy copies obj with its DeepCopyObject method or, failing that, its
// DeepCopy method (found by reflection once per type and store). It returns
// nil when obj has neither.
func (m *Memory) defaultCopy(obj Object) Object {
	if c, ok := obj.(ObjectCopier); ok {
		return c.DeepCopyObject()
	}
	t := reflect.TypeOf(obj)
	f, ok := m.copiers.Load(t)
	if !ok {
		f, _ = m.copiers.LoadOrStore(t, deepCopyMethod(t))
	}
	if fn := f.(func(Object) Object); fn != nil {
		return fn(obj)
	}
	return nil
}

func deepCopyMethod(t reflect.Type) func(Object) Object {
	meth, ok := t.MethodByName("DeepCopy")
	// The result must be of the object's own type: a struct embedding
	// ObjectMeta without a DeepCopy of its own has ObjectMeta's promoted,
	// which would copy the metadata only.
	if !ok || meth.Type.NumIn() != 1 || meth.Type.NumOut() != 1 || meth.Type.Out(0) != t {
		return (func(Object) Object)(nil)
	}
	return func(obj Object) Object {
		out := meth.Func.Call([]reflect.Value{reflect.ValueOf(obj)})[0]
		if (out.Kind() == reflect.Pointer || out.Kind() == reflect.Interface) && out.IsNil() {
			return nil
		}
		return out.Interface().(Object)
	}
}
