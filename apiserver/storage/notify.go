package storage

import (
	"strings"
	"sync/atomic"
)

// Waking watchers. Writers never touch watchers: after a write they kick the
// notifier goroutine (a non-blocking send that coalesces with pending kicks).
// The notifier reads the new events from the log once and wakes only the
// groups of watchers whose prefix they fall under, by closing the group's
// generation channel and installing a fresh one; it also closes the store's
// global generation channel, which readers waiting for a revision select on.
//
// A watcher loads its group's channel before reading the published revision,
// and the notifier reads the published revision before the set of groups, so
// a write is either seen by the watcher's scan or wakes it.

// linearGroups is how many groups the notifier matches one by one; with more
// it looks each event's "/"-bounded prefixes up in a map.
const linearGroups = 8

// watchGroup gathers the watchers of one prefix.
type watchGroup struct {
	prefix   string
	gen      atomic.Pointer[chan struct{}]
	watchers int    // guarded by Memory.groupsMu
	marked   uint64 // the notifier's round that last marked it; notifier only
}

// groupIndex is an immutable snapshot of the groups for the notifier.
type groupIndex struct {
	all []*watchGroup
	// slash holds the groups whose prefix ends in "/", by prefix; other the
	// rest (checked one by one when the map is used).
	slash map[string]*watchGroup
	other []*watchGroup
}

// joinGroup adds a watcher to the group of prefix, creating it if needed.
func (m *Memory) joinGroup(prefix string) *watchGroup {
	m.groupsMu.Lock()
	defer m.groupsMu.Unlock()
	g := m.groups[prefix]
	if g == nil {
		g = &watchGroup{prefix: prefix}
		ch := make(chan struct{})
		g.gen.Store(&ch)
		m.groups[prefix] = g
		m.publishGroupsLocked()
	}
	g.watchers++
	return g
}

// leaveGroup removes a watcher from g, dropping g when it was the last.
func (m *Memory) leaveGroup(g *watchGroup) {
	m.groupsMu.Lock()
	defer m.groupsMu.Unlock()
	if g.watchers--; g.watchers == 0 {
		delete(m.groups, g.prefix)
		m.publishGroupsLocked()
	}
}

func (m *Memory) publishGroupsLocked() {
	idx := &groupIndex{slash: make(map[string]*watchGroup)}
	for p, g := range m.groups {
		idx.all = append(idx.all, g)
		if strings.HasSuffix(p, "/") {
			idx.slash[p] = g
		} else {
			idx.other = append(idx.other, g)
		}
	}
	m.groupIdx.Store(idx)
}

// notify wakes watchers and waiters after a write, without blocking.
func (m *Memory) notify() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// notifyLoop runs until Close, waking the groups of the events written since
// its previous round; the store starts at revision from.
func (m *Memory) notifyLoop(from uint64) {
	defer m.wg.Done()
	var (
		pos    = from // the events up to pos have been notified
		round  uint64
		marked []*watchGroup
	)
	mark := func(g *watchGroup) {
		if g.marked != round {
			g.marked = round
			marked = append(marked, g)
		}
	}
	for {
		select {
		case <-m.kick:
		case <-m.done:
			return
		}
		cur := m.rev.Load()
		idx := m.groupIdx.Load() // after the revision: see the package comment above
		v := m.log.Load()
		round++
		marked = marked[:0]
		for r := pos + 1; r <= cur && len(marked) < len(idx.all); r++ {
			ev := v.event(r)
			if ev == nil { // compacted already: let every watcher find out
				for _, g := range idx.all {
					mark(g)
				}
				break
			}
			if len(idx.all) <= linearGroups {
				for _, g := range idx.all {
					if strings.HasPrefix(ev.key, g.prefix) {
						mark(g)
					}
				}
				continue
			}
			for i := 0; i < len(ev.key); i++ {
				if ev.key[i] == '/' {
					if g := idx.slash[ev.key[:i+1]]; g != nil {
						mark(g)
					}
				}
			}
			for _, g := range idx.other {
				if strings.HasPrefix(ev.key, g.prefix) {
					mark(g)
				}
			}
		}
		pos = cur
		for i, g := range marked {
			ch := make(chan struct{})
			close(*g.gen.Swap(&ch))
			marked[i] = nil
		}
		ch := make(chan struct{})
		close(*m.gen.Swap(&ch))
	}
}
