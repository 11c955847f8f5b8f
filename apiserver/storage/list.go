package storage

import (
	"context"
	"strings"
)

// List returns the objects under prefix, sorted by key, as opts asks.
//
// Every page of a paged list is read at the revision of the first page, so
// the pages together are exactly the list at that revision however many
// writes happen in between (until that revision is compacted: then the error
// is ErrExpired with a Continue token that resumes at the latest revision).
// A token is only valid for the prefix and the store it came from.
//
// With a Predicate, objects it rejects do not count toward Limit: the scan
// goes on until Limit objects match or the prefix ends, and a Continue token
// is returned whenever objects (matching or not) follow the last one scanned.
// Without a Predicate, RemainingItemCount is the exact number of objects on
// the pages that follow.
//
// Items are the stored objects themselves (read-only, shared). The
// Predicate runs under the store's read lock: it must be fast and must not
// call the store.
func (m *Memory) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	limit := max(int(opts.Limit), 0)
	start := prefix
	var (
		rev        uint64
		exact      bool
		knownCount *int64
		err        error
	)
	if opts.Continue != "" {
		if opts.ResourceVersion != 0 {
			return nil, &Error{Code: CodeInvalidContinue, Message: "specifying resource version is not allowed when using continue"}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, err := m.decodeContinue(prefix, opts.Continue)
		if err != nil {
			return nil, err
		}
		start = prefix + t.Start
		if t.Rev != 0 {
			rev, exact, knownCount = t.Rev, true, t.Count
		}
	} else if rev, exact, err = m.resolveRead(ctx, opts.ReadOptions); err != nil {
		return nil, err
	}

	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return nil, ErrClosed
	}
	if !exact {
		rev = m.rev.Load()
	} else if rev < m.compacted {
		compacted := m.compacted
		m.mu.RUnlock()
		e := expiredError(rev, compacted)
		if opts.Continue != "" {
			e.Message = "the continue token's resource version is compacted; continue at the latest revision with the token of this error (an inconsistent list)"
			e.Continue = m.encodeContinue(prefix, 0, start, nil)
		}
		return nil, e
	}
	res := m.listLocked(prefix, start, rev, limit, opts.Predicate, knownCount)
	m.mu.RUnlock()
	return res, nil
}

// listLocked scans the index from start under prefix at rev. m.mu must be
// held for reading.
func (m *Memory) listLocked(prefix, start string, rev uint64, limit int, pred func(Object) bool, knownCount *int64) *ListResult {
	var hint int
	switch {
	case limit > 0:
		hint = min(m.index.Len(), limit)
	case pred == nil:
		// Counting first costs less than growing the slice (and the garbage
		// growing leaves).
		hint = int(m.countLocked(prefix, start, rev, -1))
	default:
		hint = 64
	}
	items := make([]Object, 0, hint)
	var lastKey string
	full := false
	m.index.AscendGreaterOrEqual(item{key: start}, func(it item) bool {
		if !strings.HasPrefix(it.key, prefix) {
			return false
		}
		obj := it.e.at(rev)
		if obj == nil || (pred != nil && !pred(obj)) {
			return true
		}
		items = append(items, obj)
		if len(items) == limit {
			lastKey, full = it.key, true
			return false
		}
		return true
	})
	res := &ListResult{Items: items, Revision: rev}
	if !full {
		return res
	}
	next := lastKey + "\x00"
	if pred != nil {
		if m.countLocked(prefix, next, rev, 1) > 0 {
			res.Continue = m.encodeContinue(prefix, rev, next, nil)
		}
		return res
	}
	var remaining int64
	if knownCount != nil {
		remaining = *knownCount - int64(len(items))
	} else {
		remaining = m.countLocked(prefix, next, rev, -1)
	}
	if remaining > 0 {
		n := remaining
		res.RemainingItemCount = &n
		res.Continue = m.encodeContinue(prefix, rev, next, &remaining)
	}
	return res
}

// countLocked counts the objects at rev under prefix from start on, stopping
// at stopAt if it is positive.
func (m *Memory) countLocked(prefix, start string, rev uint64, stopAt int64) int64 {
	var n int64
	m.index.AscendGreaterOrEqual(item{key: start}, func(it item) bool {
		if !strings.HasPrefix(it.key, prefix) {
			return false
		}
		if it.e.at(rev) != nil {
			n++
		}
		return n != stopAt
	})
	return n
}
