package storage

import (
	"fmt"
	"strconv"
)

// # Durable writes
//
// A durable store (OpenBolt) is a Memory with a journal under it: memory
// serves every read and watch, the journal makes every write durable before
// it is published. A write is committed to memory under the write lock (it
// takes the next revision, its version and event are recorded but not yet
// visible: readers read at the published revision), handed to the journal in
// revision order, and the writer waits, without any lock, until the journal
// has made it durable and published its revision. The journal commits
// whatever writes queued while it was committing the previous ones in one
// transaction with one fsync (group commit), so concurrent writers share
// fsyncs.
//
// A write that decides on the state of a key (the object an update builds
// on, the conflict a create reports) first waits until that state is
// durable, so no answer depends on a write a crash could take back.
//
// If the journal fails (an I/O error), the writes not yet durable are never
// published and fail with the journal's error, and so does every later
// write; reads go on at the last published revision.

// journal is what a durable store writes through.
type journal interface {
	// append queues rec; it is called with the store's write lock held, in
	// revision order. The journal calls Memory.publish once rec is durable,
	// or Memory.fail if it cannot be made so.
	append(rec journalRecord)
	// compact records that history up to rev is compacted (called with the
	// write lock held, after every write up to rev was published).
	compact(rev uint64)
	// close makes what was appended durable (publishing it) and closes the
	// journal.
	close() error
}

// journalRecord is one write: the object written at rev (data, encoded by
// the store's Codec), or the deletion of key.
type journalRecord struct {
	rev     uint64
	key     string
	deleted bool
	data    []byte
	at      int64 // the event's timestamp, for compaction by age after a restart
}

// Codec encodes the objects of a durable store for its file and decodes
// them when the store is opened again. The key is the object's storage key;
// a Codec may choose the encoding by it or by the object's type. The
// resourceVersion in the encoded form is not meaningful: the store sets it
// from the write's revision when it decodes.
type Codec interface {
	Encode(key string, obj Object) ([]byte, error)
	Decode(key string, data []byte) (Object, error)
}

// encode encodes obj for the journal (nil without a journal).
func (m *Memory) encode(key string, obj Object) ([]byte, error) {
	if m.journal == nil {
		return nil, nil
	}
	data, err := m.codec.Encode(key, obj)
	if err != nil {
		return nil, &Error{Code: CodeInvalidObject, Key: key, Message: "cannot encode the object for storage", Err: err}
	}
	return data, nil
}

// awaitDurable waits until rev is published (durable) or the journal failed.
func (m *Memory) awaitDurable(rev uint64) error {
	for {
		g := m.pubGen.Load()
		if m.rev.Load() >= rev {
			return nil
		}
		if f := m.failed.Load(); f != nil {
			return *f
		}
		<-*g
	}
}

// publish makes the revisions up to rev, now durable, visible to readers
// and watchers and acknowledges their writers. The journal calls it in
// revision order.
func (m *Memory) publish(rev uint64) {
	m.rev.Store(rev)
	ch := make(chan struct{})
	close(*m.pubGen.Swap(&ch))
	m.notify()
}

// fail records that the journal cannot make writes durable: the writes
// waiting for it and every later write fail with err.
func (m *Memory) fail(err error) {
	err = fmt.Errorf("storage: the data file failed, writes are refused until the store is opened again: %w", err)
	m.failed.CompareAndSwap(nil, &err)
	ch := make(chan struct{})
	close(*m.pubGen.Swap(&ch))
}

// restoredObject is a key's state at the compacted revision, as a journal
// stored it.
type restoredObject struct {
	key string
	rev uint64
	obj Object
}

// restore loads a store that has no goroutines and no journal yet: the
// state at revision compacted (base, keys in any order), then the writes
// after it, in revision order, replayed as they were made so that history,
// events and watch replays are what they were. It fails on records that do
// not follow each other or delete what does not exist.
func (m *Memory) restore(compacted uint64, base []restoredObject, records []journalRecord, decode func(journalRecord) (Object, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range base {
		if b.rev > compacted {
			return fmt.Errorf("object %s at revision %d is past the compacted revision %d", b.key, b.rev, compacted)
		}
		e := newEntry(b.key, b.rev, b.obj)
		m.keys[b.key] = e
		m.index.ReplaceOrInsert(item{key: b.key, e: e})
	}
	m.compacted, m.next = compacted, compacted
	m.compactedRev.Store(compacted)
	m.rev.Store(compacted)
	m.log.Store(&logView{first: (compacted + 1) >> chunkShift, chunks: []*logChunk{new(logChunk)}})
	for _, rec := range records {
		if rec.rev != m.next+1 {
			return fmt.Errorf("record of revision %d follows revision %d", rec.rev, m.next)
		}
		e := m.keys[rec.key]
		prev := e.live()
		var obj Object
		if rec.deleted {
			if prev == nil {
				return fmt.Errorf("revision %d deletes %s, which does not exist", rec.rev, rec.key)
			}
			obj = m.copy(prev)
			if obj == nil || isNilObject(obj) || sameObject(obj, prev) {
				return fmt.Errorf("cannot copy an object of type %T: set MemoryConfig.Copy", prev)
			}
		} else {
			var err error
			if obj, err = decode(rec); err != nil {
				return fmt.Errorf("revision %d (%s): %w", rec.rev, rec.key, err)
			}
		}
		m.commitLocked(rec.key, e, obj, prev, rec.deleted, rec.at)
		m.rev.Store(rec.rev)
	}
	return nil
}

// setRevision stamps obj, just decoded, with the revision it was written at.
func setRevision(obj Object, rev uint64) Object {
	obj.SetResourceVersion(strconv.FormatUint(rev, 10))
	return obj
}
