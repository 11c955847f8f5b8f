package storage

// version is one state of a key: the object written at rev, or a tombstone
// (obj nil) for a deletion.
type version struct {
	rev uint64
	obj Object
}

// entry is a key's history inside the window, oldest first and never empty
// while the entry is indexed. After compaction to revision C it holds at most
// one version at or below C (the state at C) and never a tombstone at or
// below C.
type entry struct {
	key      string
	versions []version
	// first backs versions for the common single-version key, so a Create
	// costs one allocation.
	first [1]version
}

// item is what the ordered index holds: the key inline, so comparisons touch
// no other memory, and the entry it names.
type item struct {
	key string
	e   *entry
}

func itemLess(a, b item) bool { return a.key < b.key }

func newEntry(key string, rev uint64, obj Object) *entry {
	e := &entry{key: key}
	e.first[0] = version{rev: rev, obj: obj}
	e.versions = e.first[:1:1]
	return e
}

// last returns the newest version.
func (e *entry) last() version { return e.versions[len(e.versions)-1] }

// lastRev returns the revision of the newest version, 0 for a nil entry.
func (e *entry) lastRev() uint64 {
	if e == nil {
		return 0
	}
	return e.last().rev
}

// live returns the current object, nil if the key is deleted or e is nil.
func (e *entry) live() Object {
	if e == nil {
		return nil
	}
	return e.last().obj
}

// at returns the object as of rev: the newest version at or below rev, nil if
// there is none or it is a tombstone.
func (e *entry) at(rev uint64) Object {
	vs := e.versions
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].rev <= rev {
			return vs[i].obj
		}
	}
	return nil
}

// atVersion is at, also returning the revision of the version found.
func (e *entry) atVersion(rev uint64) (version, bool) {
	vs := e.versions
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].rev <= rev {
			return vs[i], vs[i].obj != nil
		}
	}
	return version{}, false
}

// compact drops the versions no read at or above revision c can see: everything
// older than the newest version at or below c, and that one too if it is a
// tombstone. It reports whether the entry is now empty.
func (e *entry) compact(c uint64) (empty bool) {
	vs := e.versions
	i := len(vs) - 1
	for i >= 0 && vs[i].rev > c {
		i--
	}
	if i < 0 {
		return false
	}
	drop := i
	if vs[i].obj == nil {
		drop = i + 1
	}
	if drop == 0 {
		return false
	}
	n := copy(vs, vs[drop:])
	clear(vs[n:])
	e.versions = vs[:n]
	return n == 0
}
