package storage

import (
	"slices"
	"time"
)

// The event log holds one event per revision (revisions have no gaps: every
// write takes the next one). It is stored in fixed-size chunks addressed by
// revision; a chunk's slots are written once, under the write lock, before
// the revision that covers them is published, and never modified after, so
// watchers read them without a lock: load the published revision, then the
// view, then any slot at or below that revision. Compaction publishes a view
// without the chunks it fully dropped; a reader still holding an older view
// keeps reading valid, immutable events.

const (
	chunkShift = 9
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1

	// compactBatch bounds how many events one pass of the background
	// compactor drops per hold of the write lock.
	compactBatch = 4096
)

// logEvent is the change made at one revision.
type logEvent struct {
	key string
	// obj is the new state, or for a deletion the last state stamped with
	// the deletion's revision.
	obj Object
	// prev is the state before the change, nil for a creation.
	prev    Object
	deleted bool
	at      int64 // Unix nanoseconds from MemoryConfig.Now, for compaction by age
}

type logChunk [chunkLen]logEvent

// logView is an immutable list of chunks; chunks[i] holds revisions
// (first+i)<<chunkShift up to the next chunk.
type logView struct {
	first  uint64
	chunks []*logChunk
}

// event returns the event of rev, nil if its chunk was dropped. rev must not
// exceed the revision published when the view was loaded.
func (v *logView) event(rev uint64) *logEvent {
	ci := rev >> chunkShift
	if ci < v.first || ci-v.first >= uint64(len(v.chunks)) {
		return nil
	}
	return &v.chunks[ci-v.first][rev&chunkMask]
}

// appendEventLocked stores ev as the event of rev, adding a chunk if needed.
func (m *Memory) appendEventLocked(rev uint64, ev logEvent) {
	v := m.log.Load()
	ci := rev >> chunkShift
	if ci-v.first == uint64(len(v.chunks)) {
		v = &logView{first: v.first, chunks: append(slices.Clip(v.chunks), new(logChunk))}
		m.log.Store(v)
	}
	v.chunks[ci-v.first][rev&chunkMask] = ev
}

// Compact drops the history before rev (clamped to the current revision),
// keeping the state at rev, as etcd's compaction does: afterwards Exact
// reads, continue tokens and watches from a revision below rev fail with
// ErrExpired; at rev they work. It is a no-op if rev is not above
// CompactedRevision. The background compactor calls the same logic for
// events older than HistoryWindow; tests call Compact directly.
func (m *Memory) Compact(rev uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.compactLocked(min(rev, m.rev.Load()))
}

// compactLocked drops the events up to c and the key versions no read at c or
// later can see. m.mu must be held for writing and c must not exceed the revision
// being written.
func (m *Memory) compactLocked(c uint64) {
	if c <= m.compacted {
		return
	}
	v := m.log.Load()
	for r := m.compacted + 1; r <= c; r++ {
		ev := v.event(r)
		if ev == nil {
			continue
		}
		if e := m.keys[ev.key]; e != nil && e.compact(c) {
			delete(m.keys, ev.key)
			m.index.Delete(item{key: ev.key})
		}
	}
	m.compacted = c
	m.compactedRev.Store(c)
	if m.journal != nil {
		m.journal.compact(c)
	}
	// Drop the chunks every slot of which is at or below c.
	if keep := (c + 1) >> chunkShift; keep > v.first {
		m.log.Store(&logView{first: keep, chunks: slices.Clone(v.chunks[keep-v.first:])})
	}
}

// compactExpired compacts the events older than HistoryWindow by the clock,
// in batches so writers are not held up long. It reports whether it dropped
// anything.
func (m *Memory) compactExpired() bool {
	if m.cfg.HistoryWindow <= 0 {
		return false
	}
	cutoff := m.now().Add(-m.cfg.HistoryWindow).UnixNano()
	dropped := false
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return dropped
		}
		v, cur := m.log.Load(), m.rev.Load()
		c := m.compacted
		for c < cur && c-m.compacted < compactBatch {
			ev := v.event(c + 1)
			if ev != nil && ev.at > cutoff {
				break
			}
			c++
		}
		more := c-m.compacted == compactBatch
		if c > m.compacted {
			m.compactLocked(c)
			dropped = true
		}
		m.mu.Unlock()
		if !more {
			return dropped
		}
	}
}

// compactLoop runs compactExpired every CompactInterval until Close.
func (m *Memory) compactLoop() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.CompactInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			m.compactExpired()
			if m.cfg.afterCompact != nil {
				m.cfg.afterCompact()
			}
		case <-m.done:
			return
		}
	}
}
